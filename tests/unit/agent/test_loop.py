"""The agent loop over a mock transport: real adapters, scripted HTTP answers."""

import json
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx

from harness.agent.loop import LoopConfig, run_loop, turn_choice
from harness.model import Message, ToolChoice, ToolSpec, Transcript
from harness.providers import RequestOptions, adapter_class
from harness.tools.run_tools import RunTools, Tool
from harness.transport.limits import RateLimiter
from harness.transport.send import RetryPolicy, Transport

SPEC = ToolSpec("lookup", "Look a key up.", {"type": "object", "properties": {"key": {"type": "string"}}})


def completion(
    calls: list[tuple[str, dict[str, Any]]] | None = None, text: str | None = None
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [
            {"id": f"call_{i}_{n}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for i, (n, a) in enumerate(calls)
        ]
    return {
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2},
    }


def drive(
    answers: list[Any],
    execute: Callable[[dict[str, Any]], Any] = lambda a: {"value": a.get("key")},
    max_turns: int = 5,
    choice: ToolChoice = ToolChoice("auto"),  # noqa: B008  (frozen, immutable)
    follow_ups: tuple[str, ...] = (),
) -> tuple[Transcript, list[dict[str, Any]]]:
    seen: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        answer = answers[len(seen) - 1]
        if isinstance(answer, httpx.Response):
            return answer
        return httpx.Response(200, json=answer)

    transport = Transport(
        "http://test", client_transport=httpx.MockTransport(handler), retry=RetryPolicy(attempts=1)
    )
    registry = RunTools()
    registry.add(Tool(SPEC, execute))
    transcript = Transcript("t", "s")
    run_loop(
        transcript,
        adapter_class("openai-chat")(),
        transport.send,
        registry,
        [Message("user", "go")],
        LoopConfig(max_turns, choice, RequestOptions("m"), follow_ups),
    )
    return transcript, seen


def test_calls_results_and_final_answer() -> None:
    transcript, seen = drive([completion([("lookup", {"key": "a"})]), completion(text="a is 1")])
    assert transcript.stop_reason == "final" and transcript.final_text == "a is 1"
    assert [e.result.content for e in transcript.executions] == ['{"value": "a"}']
    second = seen[1]["messages"]
    assert second[-2]["tool_calls"][0]["id"] == "call_0_lookup"
    assert second[-1] == {"role": "tool", "tool_call_id": "call_0_lookup", "content": '{"value": "a"}'}
    assert transcript.usage().input_tokens == 20


def test_parallel_calls_run_concurrently_and_results_keep_call_order() -> None:
    barrier = threading.Barrier(2, timeout=5)

    def slow(args: dict[str, Any]) -> str:
        barrier.wait()  # both calls must be running at once to pass
        time.sleep(0.05 if args["key"] == "a" else 0)
        return args["key"]

    _, seen = drive(
        [completion([("lookup", {"key": "a"}), ("lookup", {"key": "b"})]), completion(text="done")],
        execute=slow,
    )
    tool_messages = [m for m in seen[1]["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tool_messages] == ["a", "b"]
    assert [m["tool_call_id"] for m in tool_messages] == ["call_0_lookup", "call_1_lookup"]


def test_repeated_identical_successful_call_stops_the_loop() -> None:
    same = completion([("lookup", {"key": "a"})])
    transcript, seen = drive([same, same, same])
    assert transcript.stop_reason == "loop" and len(seen) == 2
    assert any(f.check_id == "loop.repeated_call" for f in transcript.findings)


def test_retry_after_a_failed_call_is_not_a_loop() -> None:
    attempts = []

    def flaky(args: dict[str, Any]) -> str:
        attempts.append(args)
        if len(attempts) == 1:
            raise RuntimeError("try again")
        return "ok"

    same = completion([("lookup", {"key": "a"})])
    transcript, _ = drive([same, same, completion(text="ok")], execute=flaky)
    assert transcript.stop_reason == "final" and len(attempts) == 2
    assert transcript.executions[0].result.is_error


def test_max_turns() -> None:
    transcript, seen = drive([completion([("lookup", {"key": str(i)})]) for i in range(3)], max_turns=3)
    assert transcript.stop_reason == "max_turns" and len(seen) == 3 and transcript.final_text is None


def test_provider_error_stops_the_run_and_is_kept() -> None:
    error = httpx.Response(500, json={"error": {"message": "", "type": "internal_server_error"}})
    transcript, _ = drive([error])
    assert transcript.stop_reason == "provider_error"
    assert transcript.exchanges[0].parsed.error is not None
    assert transcript.exchanges[0].response and transcript.exchanges[0].response.status == 500


def test_transport_error_is_a_finding_not_a_crash() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    transport = Transport(
        "http://test", client_transport=httpx.MockTransport(refuse), retry=RetryPolicy(attempts=1)
    )
    transcript = Transcript("t", "s")
    run_loop(
        transcript,
        adapter_class("openai-chat")(),
        transport.send,
        RunTools(),
        [Message("user", "go")],
        LoopConfig(2, ToolChoice(), RequestOptions("m")),
    )
    assert transcript.stop_reason == "transport_error"
    error = transcript.exchanges[0].parsed.error
    assert error is not None and "refused" in error.message


def test_forced_choice_applies_to_the_first_turn_only() -> None:
    _, seen = drive(
        [completion([("lookup", {"key": "a"})]), completion(text="x")], choice=ToolChoice("required")
    )
    assert [body["tool_choice"] for body in seen] == ["required", "auto"]
    assert turn_choice(ToolChoice("none"), 3) == ToolChoice("none")


def test_rate_limit_is_retried_and_noted() -> None:
    sleeps: list[float] = []
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        if len(calls) == 1:
            return httpx.Response(429, headers={"retry-after": "2"}, json={"error": {"message": "slow down"}})
        return httpx.Response(200, json=completion(text="hi"))

    transport = Transport("http://test", client_transport=httpx.MockTransport(handler), sleep=sleeps.append)
    sent = transport.send(
        adapter_class("openai-chat")().build_request(
            [Message("user", "x")], [], ToolChoice(), RequestOptions("m")
        )
    )
    assert sent.response.status == 200 and sleeps == [2.0]
    assert [f.check_id for f in sent.findings] == ["transport.retried"]


def test_calls_sharing_state_run_in_call_order_others_concurrently() -> None:
    from harness.agent.loop import execute
    from harness.model import ToolCall
    from harness.tools.toolsets import bundled_tool as builtin_tool

    registry = RunTools()
    registry.add(builtin_tool("memory"))
    calls = [ToolCall("memory", {"operation": "add", "content": f"fact {i}"}, id=str(i)) for i in range(6)]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        for _ in range(20):  # the ids follow call order every time
            registry.tools["memory"] = builtin_tool("memory")
            results = [e.result.content for e in execute(pool, registry, calls, 0)]
            assert results == [f'{{"id": {i + 1}, "stored": "fact {i}"}}' for i in range(6)]


def test_follow_ups_continue_the_conversation_with_the_whole_history() -> None:
    transcript, seen = drive(
        [
            completion([("lookup", {"key": "a"})]),
            completion(text="a is 1"),
            completion([("lookup", {"key": "b"})]),
            completion(text="b is 2"),
            completion(text="a was 1"),
        ],
        max_turns=2,
        follow_ups=("and b?", "and a again?"),
    )
    assert transcript.phases == [0, 2, 4] and transcript.stop_reason == "final"
    third = seen[2]["messages"]
    assert [m["role"] for m in third] == ["user", "assistant", "tool", "assistant", "user"]
    assert third[1]["tool_calls"][0]["function"]["name"] == "lookup" and third[-1]["content"] == "and b?"
    assert [e.turn for e in transcript.executions] == [0, 2]
    assert transcript.phase(1).exchanges[0].turn == 2 and transcript.phase(2).final_text == "a was 1"


def test_a_phase_that_does_not_end_in_an_answer_stops_the_follow_ups() -> None:
    transcript, seen = drive(
        [completion([("lookup", {"key": "a"})]), completion([("lookup", {"key": "b"})])],
        max_turns=2,
        follow_ups=("and b?",),
    )
    assert transcript.stop_reason == "max_turns" and transcript.phases == [0] and len(seen) == 2
    assert transcript.phase(1) is None


class FakeClock:
    """Time that passes only when the transport sleeps."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_requests_per_minute_are_kept_to_after_a_one_second_burst() -> None:
    clock = FakeClock()
    sent_at: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent_at.append(clock.now)
        return httpx.Response(200, json=completion(text="hi"))

    limiter = RateLimiter(requests_per_minute=120, clock=clock)  # 2 a second
    transport = Transport(
        "http://test", client_transport=httpx.MockTransport(handler), sleep=clock.sleep, limiter=limiter
    )
    wire = adapter_class("openai-chat")().build_request(
        [Message("user", "x")], [], ToolChoice(), RequestOptions("m")
    )
    for _ in range(6):
        transport.send(wire)
    assert [round(t - 100.0, 3) for t in sent_at] == [0.0, 0.0, 0.5, 1.0, 1.5, 2.0]
    half = limiter.share(2)  # a forked worker's share of the budget
    assert (half.rpm, half.tpm) == (60, None)


def test_tokens_per_minute_are_charged_from_reported_usage_and_waited_out() -> None:
    clock = FakeClock()
    sent_at: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent_at.append(clock.now)
        answer = completion([("lookup", {"key": "a"})]) if len(sent_at) == 1 else completion(text="done")
        answer["usage"] = {"prompt_tokens": 900, "completion_tokens": 100}  # 1,000 a response
        return httpx.Response(200, json=answer)

    limiter = RateLimiter(tokens_per_minute=6000, clock=clock)  # 100 a second, a second's burst
    transport = Transport(
        "http://test", client_transport=httpx.MockTransport(handler), sleep=clock.sleep, limiter=limiter
    )
    registry = RunTools()
    registry.add(Tool(SPEC, lambda a: {"value": a.get("key")}))
    settings = LoopConfig(5, ToolChoice("auto"), RequestOptions("m"), on_usage=limiter.charge)
    transcript = Transcript("t", "s")
    run_loop(
        transcript,
        adapter_class("openai-chat")(),
        transport.send,
        registry,
        [Message("user", "go")],
        settings,
    )
    assert transcript.stop_reason == "final"
    # the first response leaves the budget 900 tokens in debt: 9 s at 100 tokens a second
    assert [round(t - 100.0, 3) for t in sent_at] == [0.0, 9.0]
