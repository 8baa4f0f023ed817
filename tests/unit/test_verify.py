"""Vendor verification figures and verdicts over hand-made requests (no I/O)."""

import random

from harness.analysis.verify import (
    Request,
    VerifyConfig,
    bootstrap,
    figures,
    headline,
    judge,
    pair,
    request_key,
)
from harness.analysis.wire_requests import conversation_key

FAST = VerifyConfig(samples=300)


def req(key: str, called: bool = False, calls: tuple[tuple[str, str], ...] = (), **kw: object) -> Request:
    return Request(key, f"t/{key}/0", 0, kw.pop("answered", True), called, calls, **kw)  # type: ignore[arg-type]


CALL = (("get_weather", '{"city": "Paris"}'),)
REFERENCE = [req(f"q{i}", called=i % 2 == 0, calls=CALL if i % 2 == 0 else ()) for i in range(40)]


def test_the_pairing_key_ignores_the_model_and_streaming_only() -> None:
    body = {"model": "a", "messages": [{"role": "user", "content": "hi"}], "stream": False}
    same = {
        "model": "b",
        "messages": [{"role": "user", "content": "hi"}],
        "stream": True,
        "stream_options": {},
    }
    assert request_key(body) == request_key(same)
    assert request_key(body) != request_key({**body, "tools": []})


def test_only_requests_made_on_both_sides_are_paired() -> None:
    endpoint = [req("q0", True, CALL), req("other")]
    assert [(r.key, e.key) for r, e in pair(REFERENCE, endpoint)] == [("q0", "q0")]


def test_the_reference_against_itself_passes() -> None:
    found = judge("self", [REFERENCE], REFERENCE, FAST)
    assert found.verdict == "pass" and found.figures["trigger"]["f1"] == 1.0
    assert found.figures["pairs"] == 40 and found.figures["argument_agreement"] == 1.0


def test_each_fault_lands_in_its_bucket() -> None:
    endpoint = list(REFERENCE)
    endpoint[0] = req("q0", True, (("get_weather", "{broken"),), invalid_json=True)
    endpoint[2] = req("q2", True, (("get_wether", '{"city": "Paris"}'),), unknown_tool=True)
    endpoint[4] = req("q4", True, (("get_weather", '{"city": 3}'),), schema_mismatch=True)
    endpoint[6] = req("q6")  # no call where the reference calls
    endpoint[8] = req("q8", answered=False)  # the endpoint failed the request
    found = figures(pair(REFERENCE, endpoint))
    errors = found["tool_call_errors"]
    assert (errors["invalid_json"], errors["unknown_tool"], errors["schema_mismatch"]) == (1, 1, 1)
    assert errors["requests_with_calls"] == 18 and errors["requests_with_errors"] == 3
    assert found["trigger"] == {
        "tp": 18,
        "fp": 0,
        "fn": 1,
        "tn": 20,
        "precision": 1.0,
        "recall": 18 / 19,
        "f1": 36 / 37,
    }
    assert found["answered"] == 39 / 40 and found["argument_agreement"] == 15 / 18


def test_an_endpoint_that_never_calls_fails_and_noise_never_fails() -> None:
    silent = [req(r.key) for r in REFERENCE]
    assert judge("silent", [REFERENCE], silent, FAST).verdict == "fail"
    noisy = [req(r.key, r.called, r.calls) for r in REFERENCE]
    noisy[0] = req("q0")  # the reference itself misses a call now and then
    repeats = [REFERENCE, noisy, list(REFERENCE)]
    assert judge("self", repeats, noisy, FAST).verdict != "fail"
    assert judge("self", repeats, REFERENCE, FAST).verdict == "pass"


PARIS = '{"city": "Paris"}'


def conversation(fmt: str, call_id: str, choice: str = "auto") -> str:
    """The conversation key of a request ``fmt``'s adapter builds for one tool round trip."""
    from harness.model import Message, ToolCall, ToolChoice, ToolResult, ToolSpec
    from harness.providers import RequestOptions, adapter_class

    tool = ToolSpec("get_weather", "Weather", {"type": "object", "properties": {"city": {"type": "string"}}})
    messages = [
        Message("system", "Be brief."),
        Message("user", "Weather in Paris?"),
        Message("assistant", None, [ToolCall("get_weather", {"city": "Paris"}, PARIS, call_id)]),
        Message("tool", tool_result=ToolResult(call_id, "get_weather", "18C")),
    ]
    adapter = adapter_class(fmt)()
    request = adapter.build_request(messages, [tool], ToolChoice(choice), RequestOptions("m"))  # type: ignore[arg-type]
    view = adapter.read_request(request.body, request.path)
    return conversation_key(view)


def test_the_conversation_key_is_the_same_in_every_wire_format_and_ignores_ids() -> None:
    from harness.providers import formats

    keys = {fmt: conversation(fmt, "call_abc123") for fmt in formats()}
    assert len(set(keys.values())) == 1, keys
    assert conversation("bedrock-converse", "tooluse_Zx9") == keys["openai-chat"]
    assert conversation("openai-chat", "call_abc123", "required") != keys["openai-chat"]


def test_across_formats_requests_pair_by_conversation_and_unreadable_ones_never() -> None:
    reference = [req("body-a", conversation="c1"), req("body-b", conversation=None)]
    endpoint = [req("body-x", conversation="c1"), req("body-b", conversation=None)]
    assert [(r.key, e.key) for r, e in pair(reference, endpoint, across=True)] == [("body-a", "body-x")]
    assert [(r.key, e.key) for r, e in pair(reference, endpoint)] == [("body-b", "body-b")]
    assert judge("other-wire", [reference], endpoint, FAST, across=True).paired_by == "conversation"


def test_the_bootstrap_gives_the_headline_of_every_figure_of_each_resample() -> None:
    """The bootstrap sums per-pair counts instead of building every figure of each resample: its
    figures are those of :func:`figures` on the same seeded draw, every fault bucket and side
    that did not answer included."""
    endpoint = list(REFERENCE)
    endpoint[0] = req("q0", True, (("get_weather", "{broken"),), invalid_json=True)
    endpoint[1] = req("q1", True, CALL)  # a call where the reference answered
    endpoint[2] = req("q2", True, (("get_weather", '{"city": "Rome"}'),))
    endpoint[4] = req("q4", True, (("get_weather", '{"city": 3}'),), schema_mismatch=True)
    endpoint[6] = req("q6")
    endpoint[8] = req("q8", answered=False)
    reference = list(REFERENCE)
    reference[10] = req("q10", answered=False)
    pairs = pair(reference, endpoint)
    rng = random.Random(7)
    expected = [headline(figures([pairs[rng.randrange(len(pairs))] for _ in pairs])) for _ in range(200)]
    assert bootstrap(pairs, samples=200, seed=7) == expected
    assert len({tuple(d.values()) for d in expected}) > 20  # the resamples differ, in every figure
    assert all(None not in d.values() for d in expected)
    nobody = [(req("a", answered=False), req("a", answered=False))]
    assert bootstrap(nobody, samples=3, seed=1) == [headline(figures(nobody))] * 3
