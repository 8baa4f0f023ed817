"""Attribution: a truncated turn, a template leak, an echo of the prompt, and what the model never
reached after the endpoint failed (shown, not scored)."""

from __future__ import annotations

from pathlib import Path

from harness.checks import RunContext, run_checks
from harness.checks.attribution import CONTROL_TOKENS, echo_of_prompt
from harness.model import ParsedTurn, ProviderError
from harness.scoring import run_score
from tests.helpers.transcripts import call, scenario, transcript

PARIS = {
    "calls": [{"name": "get_weather", "args": {"city": "Paris"}}],
    "final": {"contains_any": ["18", "rain"]},
}
ASK = "What's the weather like in Paris right now?"


def results(context: RunContext) -> dict[str, tuple[str, list[str]]]:
    return {r.id: (r.status, [f.detail for f in r.findings if not f.passed]) for r in run_checks(context)}


def paris(tmp_path: Path) -> object:
    return scenario(tmp_path, expect=PARIS, messages=[{"role": "user", "content": ASK}])


def test_a_truncated_turn_is_a_finding_and_never_a_final_answer(tmp_path: Path) -> None:
    cut = ParsedTurn(text="It is 18 degrees and rain is", finish_reason="length")
    r = results(RunContext(transcript([call("get_weather", city="Paris")], cut), paris(tmp_path)))  # type: ignore[arg-type]
    assert (
        r["protocol.truncation"][0] == "fail" and "cut at the token limit" in r["protocol.truncation"][1][0]
    )
    assert r["expect.final"][0] == "fail" and "cut at the token limit" in r["expect.final"][1][0]
    for reason in ("max_tokens", "MAX_TOKENS"):
        other = results(RunContext(transcript(ParsedTurn(text="x", finish_reason=reason)), paris(tmp_path)))  # type: ignore[arg-type]
        assert other["protocol.truncation"][0] == "fail"


def test_chat_template_tokens_in_the_text_are_a_finding(tmp_path: Path) -> None:
    leaked = "It rains in Paris.<|im_end|>\n<|im_start|>user"
    r = results(RunContext(transcript([call("get_weather", city="Paris")], leaked), paris(tmp_path)))  # type: ignore[arg-type]
    assert r["protocol.template_leak"][0] == "fail"
    assert "<|im_end|> (ChatML)" in r["protocol.template_leak"][1][0]
    assert all(token for token, _ in CONTROL_TOKENS)


def test_an_echo_of_the_prompt_is_not_an_answer(tmp_path: Path) -> None:
    echo = f"{ASK}<|im_end|>\n<|im_start|>user\n{ASK} rain"
    r = results(RunContext(transcript([call("get_weather", city="Paris")], echo), paris(tmp_path)))  # type: ignore[arg-type]
    assert r["expect.final"][0] == "fail" and "only repeats the prompt" in r["expect.final"][1][0]
    assert echo_of_prompt("It is 18C with light rain in Paris, so take an umbrella.", [ASK]) is None
    assert echo_of_prompt(ASK, [ASK]) is not None


def test_after_the_endpoint_fails_the_models_checks_are_not_reached(tmp_path: Path) -> None:
    """An empty stream on the first turn: the model never got to call, so expect.calls and
    expect.final are shown as not reached and scored as nothing, while the provider's failure is."""
    failed = ParsedTurn(error=ProviderError(200, "HTTP 2xx with an empty stream body", "empty_stream"))
    t = transcript(failed, stop="provider_error")
    checks = run_checks(RunContext(t, paris(tmp_path)))  # type: ignore[arg-type]
    status = {c.id: c.status for c in checks}
    assert status["expect.calls"] == "n/a" and status["expect.final"] == "n/a"
    assert status["protocol.provider_error"] == "fail"
    detail = next(c for c in checks if c.id == "expect.calls").findings[0].detail
    assert detail.startswith("not reached: the endpoint failed turn 0")
    assert all(c.status != "fail" for c in checks if c.kind == "expectation")  # nothing charged to the model
    score = run_score(checks)
    assert score is not None and score < 100  # the provider's failure is


def test_a_final_turn_without_text_says_so(tmp_path: Path) -> None:
    r = results(RunContext(transcript([call("get_weather", city="Paris")], ""), paris(tmp_path)))  # type: ignore[arg-type]
    assert r["expect.final"][1] == ["no final answer: the last turn has no text"]
