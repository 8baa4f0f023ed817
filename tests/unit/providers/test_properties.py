"""Property-based tests of every adapter's parsers, with a fixed budget (deterministic in CI).

For every wire format, natively and in prompted mode, ``parse`` of any response (any status,
any JSON value or text as the body, shaped like the format or not, whole or streamed in any
framing, cut anywhere) and ``read_request`` of any JSON object never raise, never reach the
last-resort guard (whose finding carries ``evidence["guard"]``), and hand out only strings
that encode as UTF-8, with the value types the neutral model promises. Examples are
derandomized and bounded: these tests take a few seconds.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.mutations import strings
from harness.agent.rechunk import assembled, cut
from harness.model import Finding, ParsedTurn, WireResponse
from harness.providers import adapter_class, formats
from harness.providers.adapter import Adapter, RequestView, reached_guard
from harness.providers.prompted import prompted
from tests.helpers import eventstream

FORMATS = tuple(formats())  # every registered format
PROTOCOLS = (None, "json", "xml", "xml-name-attr", "hermes")
BUDGET = settings(
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# -- values -------------------------------------------------------------------------------------------

# Text with everything a decoder can hand out: lone surrogates included (JSON escapes decode to them).
TEXT = st.text(st.characters(exclude_categories=()), max_size=12) | st.sampled_from(
    ["", "get_weather", "\ud83d", "a\udc80b", "{", '{"city": "Paris"}', "[DONE]", "<tool_call>"]
)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | TEXT
)
JSON = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(TEXT, children, max_size=4),
    max_leaves=12,
)


def like(typed: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """The field's own type most of the time, any JSON value otherwise (a wrong type)."""
    return st.one_of(typed, typed, typed, JSON)


def obj(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """An object whose every key may be absent, or (sometimes) any JSON value instead of it."""
    return like(st.fixed_dictionaries({}, optional=fields))


def arr(item: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return like(st.lists(item, max_size=3))


INT = like(st.integers(min_value=0, max_value=3))
COUNT = like(st.integers(min_value=0, max_value=10**6) | st.sampled_from(["12", "-3", "1.5", "x"]))
ARGUMENTS_TEXT = like(
    JSON.map(json.dumps) | st.sampled_from(['{"city": "Par', '{"a": "\\ud83d"}', "[" * 300])
)

OPENAI_CALL = obj(
    index=INT,
    id=like(TEXT),
    type=like(st.just("function")),
    function=obj(name=like(TEXT), arguments=ARGUMENTS_TEXT),
)
OPENAI_MESSAGE = obj(content=like(TEXT), tool_calls=arr(OPENAI_CALL), reasoning_content=like(TEXT))
OPENAI = obj(
    id=like(TEXT),
    choices=arr(obj(index=INT, message=OPENAI_MESSAGE, delta=OPENAI_MESSAGE, finish_reason=like(TEXT))),
    usage=obj(prompt_tokens=COUNT, completion_tokens=COUNT),
    x_groq=obj(usage=obj(prompt_tokens=COUNT)),
    error=like(st.none()),
)
OLLAMA = obj(
    message=obj(
        content=like(TEXT),
        thinking=like(TEXT),
        tool_calls=arr(obj(id=like(TEXT), function=obj(index=INT, name=like(TEXT), arguments=JSON))),
    ),
    done=like(st.booleans()),
    done_reason=like(TEXT),
    prompt_eval_count=COUNT,
    eval_count=COUNT,
)
BLOCK = obj(
    type=like(st.sampled_from(["text", "tool_use", "thinking", "redacted_thinking", "image"])),
    text=like(TEXT),
    thinking=like(TEXT),
    signature=like(TEXT),
    citations=like(st.lists(JSON, max_size=2)),
    id=like(TEXT),
    name=like(TEXT),
    input=JSON,
)
DELTA = obj(
    type=like(st.sampled_from(["text_delta", "input_json_delta", "thinking_delta", "signature_delta"])),
    text=like(TEXT),
    partial_json=ARGUMENTS_TEXT,
    thinking=like(TEXT),
    signature=like(TEXT),
    stop_reason=like(TEXT),
)
USAGE = obj(input_tokens=COUNT, output_tokens=COUNT)
ANTHROPIC_MESSAGE = obj(
    type=like(st.just("message")), content=arr(BLOCK), stop_reason=like(TEXT), usage=USAGE
)
ANTHROPIC_EVENT = obj(
    type=like(
        st.sampled_from(
            ["message_start", "content_block_start", "content_block_delta", "message_delta", "message_stop"]
        )
    ),
    message=ANTHROPIC_MESSAGE,
    index=INT,
    content_block=BLOCK,
    delta=DELTA,
    usage=USAGE,
)
PARTIAL_ARG = obj(
    jsonPath=like(st.sampled_from(["$.a", "$.a[1]", "$.b.c", "$[0]", "$.x[99999999]"])),
    stringValue=like(TEXT),
    numberValue=JSON,
    boolValue=JSON,
)
GEMINI = obj(
    candidates=arr(
        obj(
            index=INT,
            content=obj(
                role=like(st.just("model")),
                parts=arr(
                    obj(
                        text=like(TEXT),
                        thought=like(st.booleans()),
                        thoughtSignature=like(TEXT),
                        functionCall=obj(
                            name=like(TEXT),
                            id=like(TEXT),
                            args=JSON,
                            willContinue=like(st.booleans()),
                            partialArgs=arr(PARTIAL_ARG),
                        ),
                    )
                ),
            ),
            finishReason=like(st.sampled_from(["STOP", "MALFORMED_FUNCTION_CALL"]) | INT),
            finishMessage=like(TEXT),
        )
    ),
    usageMetadata=obj(promptTokenCount=COUNT, candidatesTokenCount=COUNT),
    promptFeedback=obj(blockReason=like(TEXT)),
)
COHERE_CALL = obj(
    id=like(TEXT), type=like(st.just("function")), function=obj(name=like(TEXT), arguments=ARGUMENTS_TEXT)
)
COHERE_CONTENT = obj(
    type=like(st.sampled_from(["text", "thinking", "image"])), text=like(TEXT), thinking=like(TEXT)
)
COHERE_MESSAGE = obj(
    role=like(st.just("assistant")),
    content=arr(COHERE_CONTENT) | COHERE_CONTENT,
    tool_plan=like(TEXT),
    tool_calls=arr(COHERE_CALL) | COHERE_CALL,
)
COHERE_USAGE = obj(tokens=USAGE, billed_units=USAGE)
COHERE_FINISH = like(st.sampled_from(["COMPLETE", "TOOL_CALL", "MAX_TOKENS", "ERROR"]))
COHERE = obj(id=like(TEXT), finish_reason=COHERE_FINISH, message=COHERE_MESSAGE, usage=COHERE_USAGE)
COHERE_EVENT = obj(
    type=like(
        st.sampled_from(
            [
                "message-start",
                "content-start",
                "content-delta",
                "tool-plan-delta",
                "tool-call-start",
                "tool-call-delta",
                "tool-call-end",
                "message-end",
            ]
        )
    ),
    index=INT,
    delta=obj(message=COHERE_MESSAGE, finish_reason=COHERE_FINISH, usage=COHERE_USAGE, error=like(TEXT)),
)
RESPONSES_PART = obj(
    type=like(st.sampled_from(["output_text", "refusal", "input_text", "input_image"])),
    text=like(TEXT),
    refusal=like(TEXT),
)
RESPONSES_ITEM = obj(
    type=like(
        st.sampled_from(["message", "function_call", "reasoning", "web_search_call", "shell_call", "program"])
    ),
    id=like(TEXT),
    call_id=like(TEXT),
    name=like(TEXT),
    arguments=ARGUMENTS_TEXT,
    role=like(st.just("assistant")),
    content=arr(RESPONSES_PART),
    summary=arr(obj(type=like(st.just("summary_text")), text=like(TEXT))),
    encrypted_content=like(TEXT),
)
RESPONSE = obj(
    id=like(TEXT),
    object=like(st.just("response")),
    status=like(st.sampled_from(["completed", "incomplete", "failed", "in_progress", "queued"])),
    incomplete_details=obj(reason=like(TEXT)),
    output=arr(RESPONSES_ITEM),
    usage=USAGE,
    error=like(st.none()) | obj(code=like(TEXT), message=like(TEXT)),
    tools=arr(
        obj(type=like(st.just("function")), name=like(TEXT), strict=like(st.booleans()), parameters=JSON)
    ),
)
RESPONSES_EVENT = obj(
    type=like(
        st.sampled_from(
            [
                "response.created",
                "response.output_item.added",
                "response.output_item.done",
                "response.function_call_arguments.delta",
                "response.function_call_arguments.done",
                "response.output_text.delta",
                "response.output_text.done",
                "response.content_part.done",
                "response.reasoning_summary_text.delta",
                "response.refusal.delta",
                "response.completed",
                "response.incomplete",
                "response.failed",
                "error",
            ]
        )
    ),
    sequence_number=INT,
    output_index=INT,
    content_index=INT,
    item_id=like(TEXT),
    item=RESPONSES_ITEM,
    delta=like(TEXT),
    arguments=ARGUMENTS_TEXT,
    text=like(TEXT),
    part=RESPONSES_PART,
    response=RESPONSE,
    error=obj(code=like(TEXT), message=like(TEXT), param=like(TEXT)),
    code=like(TEXT),
    message=like(TEXT),
)
STEP_TYPES = ["model_output", "function_call", "thought", "user_input", "function_result", "google_search"]
STEP = obj(
    type=like(st.sampled_from(STEP_TYPES)),
    id=like(TEXT),
    name=like(TEXT),
    arguments=JSON,
    signature=like(TEXT),
    content=arr(obj(type=like(st.sampled_from(["text", "image"])), text=like(TEXT))),
    summary=arr(obj(type=like(st.just("text")), text=like(TEXT))),
    error=obj(code=JSON, message=like(TEXT)),
)
INTERACTIONS_USAGE = obj(total_input_tokens=COUNT, total_output_tokens=COUNT)
INTERACTION = obj(
    id=like(TEXT),
    object=like(st.just("interaction")),
    status=like(st.sampled_from(["completed", "requires_action", "failed", "incomplete", "in_progress"])),
    steps=arr(STEP),
    usage=INTERACTIONS_USAGE,
    errors=arr(obj(code=like(TEXT), message=like(TEXT))),
)
INTERACTIONS_EVENT = obj(
    event_type=like(
        st.sampled_from(
            [
                "interaction.created",
                "interaction.status_update",
                "step.start",
                "step.delta",
                "step.stop",
                "interaction.completed",
                "error",
            ]
        )
    ),
    interaction=INTERACTION,
    index=INT,
    step=STEP,
    delta=obj(
        type=like(st.sampled_from(["text", "arguments_delta", "thought_signature", "thought_summary"])),
        text=like(TEXT),
        arguments=ARGUMENTS_TEXT,
        signature=like(TEXT),
        content=obj(type=like(st.just("text")), text=like(TEXT)),
    ),
    status=like(TEXT),
    usage=INTERACTIONS_USAGE,
    metadata=obj(total_usage=INTERACTIONS_USAGE),
    error=obj(code=like(TEXT), message=like(TEXT)),
)
TOOL_USE = obj(
    toolUseId=like(TEXT),
    name=like(TEXT),
    input=JSON,
    type=like(st.sampled_from(["tool_use", "server_tool_use"])),
)
CONVERSE_BLOCK = obj(
    text=like(TEXT),
    toolUse=TOOL_USE,
    toolResult=obj(toolUseId=like(TEXT), status=like(TEXT), content=JSON),
    reasoningContent=obj(
        reasoningText=obj(text=like(TEXT), signature=like(TEXT)), redactedContent=like(TEXT)
    ),
    image=JSON,
)
CONVERSE_USAGE = obj(inputTokens=COUNT, outputTokens=COUNT)
CONVERSE = obj(
    output=obj(message=obj(role=like(st.just("assistant")), content=arr(CONVERSE_BLOCK))),
    stopReason=like(st.sampled_from(["tool_use", "end_turn", "max_tokens"])),
    usage=CONVERSE_USAGE,
    message=like(TEXT),
)
CONVERSE_EVENTS = {
    "messageStart": obj(role=like(st.just("assistant"))),
    "contentBlockStart": obj(contentBlockIndex=INT, start=obj(toolUse=TOOL_USE, toolResult=JSON)),
    "contentBlockDelta": obj(
        contentBlockIndex=INT,
        delta=obj(
            text=like(TEXT),
            toolUse=obj(input=ARGUMENTS_TEXT),
            reasoningContent=obj(text=like(TEXT), signature=like(TEXT), redactedContent=like(TEXT)),
            toolResult=JSON,
        ),
        p=like(TEXT),
    ),
    "contentBlockStop": obj(contentBlockIndex=INT),
    "messageStop": obj(stopReason=like(TEXT)),
    "metadata": obj(usage=CONVERSE_USAGE),
    "modelStreamErrorException": obj(message=like(TEXT)),
}
CONVERSE_EVENT = st.sampled_from(sorted(CONVERSE_EVENTS)).flatmap(
    lambda name: CONVERSE_EVENTS[name].map(lambda payload: {name: payload})
)
"""A stream event as the AWS SDKs print it: ``{"<event name>": payload}``."""
SHAPES = {
    "openai-responses": RESPONSE,
    "openai-chat": OPENAI,
    "mistral-chat": OPENAI,
    "ollama-chat": OLLAMA,
    "anthropic-messages": ANTHROPIC_MESSAGE,
    "gemini-generate": GEMINI,
    "cohere-chat": COHERE,
    "bedrock-converse": CONVERSE,
    "gemini-interactions": INTERACTION,
}
CHUNKS = {
    **SHAPES,
    "anthropic-messages": ANTHROPIC_EVENT,
    "cohere-chat": COHERE_EVENT,
    "bedrock-converse": CONVERSE_EVENT,
    "openai-responses": RESPONSES_EVENT,
    "gemini-interactions": INTERACTIONS_EVENT,
}
STATUS = st.sampled_from([200, 200, 200, 201, 204, 400, 401, 404, 429, 500, 503])


def dumps(value: Any, ascii_only: bool) -> str:
    return json.dumps(value, ensure_ascii=ascii_only)


@st.composite
def stream_body(draw: st.DrawFn, fmt: str) -> str:
    """A stream of the format's chunks (or any values) in any framing, maybe cut or broken up."""
    chunks = draw(st.lists(CHUNKS[fmt] | JSON, max_size=5))
    ascii_only = draw(st.booleans())
    framing = draw(st.sampled_from(["sse", "sse-named", "ndjson", "json-array"]))
    if framing == "json-array":
        body = dumps(chunks, ascii_only)
    elif framing == "ndjson":
        body = "".join(dumps(c, ascii_only) + "\n" for c in chunks)
    else:
        frames = []
        for chunk in chunks:
            name = (chunk.get("type") or chunk.get("event_type")) if isinstance(chunk, dict) else None
            event = f"event: {name}\n" if framing == "sse-named" and isinstance(name, str) else ""
            frames.append(f"{event}data: {dumps(chunk, ascii_only)}\n\n")
        body = "".join(frames) + draw(st.sampled_from(["", "data: [DONE]\n\n", ": keep-alive\n\n"]))
    noise = draw(st.sampled_from(["none", "cut", "split", "garbage"]))
    if noise == "cut" and body:
        body = body[: draw(st.integers(0, len(body)))]
    elif noise == "split" and body:
        at = draw(st.integers(0, len(body)))
        body = body[:at] + draw(st.sampled_from(["\n\n", "\n", "\r\n", "\x85", "\u2028"])) + body[at:]
    elif noise == "garbage":
        body += draw(TEXT)
    return body


@st.composite
def whole_body(draw: st.DrawFn, fmt: str) -> str:
    """A whole body: the format's shape or any JSON value, maybe cut; or any text at all."""
    kind = draw(st.sampled_from(["shaped", "shaped", "json", "text"]))
    if kind == "text":
        return draw(TEXT)
    body = dumps(draw(SHAPES[fmt] if kind == "shaped" else JSON), draw(st.booleans()))
    if draw(st.integers(0, 4)) == 0:
        body = body[: draw(st.integers(0, len(body)))]
    return body


# -- what every result must be --------------------------------------------------------------------------


def assert_valid_unicode(value: Any) -> None:
    for text in strings(value):
        text.encode("utf-8")  # raises on a lone surrogate


def assert_findings(findings: Any) -> None:
    assert all(isinstance(f, Finding) and not f.passed for f in findings)
    assert not reached_guard(findings), [f.detail for f in findings if f.evidence and "guard" in f.evidence]


def assert_turn(turn: ParsedTurn) -> None:
    """A turn the harness can use and store: valid types, valid Unicode, no guard."""
    assert_findings(turn.findings)
    assert_valid_unicode(turn)
    assert turn.text is None or isinstance(turn.text, str)
    assert turn.reasoning is None or isinstance(turn.reasoning, str)
    assert turn.finish_reason is None or isinstance(turn.finish_reason, str)
    for call in turn.tool_calls:
        assert isinstance(call.name, str) and isinstance(call.id, str)
        assert call.wire_id is None or isinstance(call.wire_id, str)
        assert call.arguments is None or isinstance(call.arguments, dict)
    if turn.usage is not None:
        for count in (turn.usage.input_tokens, turn.usage.output_tokens):
            assert count is None or (type(count) is int and count >= 0)
    if turn.error is not None:
        assert isinstance(turn.error.message, str) and type(turn.error.status) is int
    json.dumps(dataclasses.asdict(turn), ensure_ascii=False).encode("utf-8")  # the results file can hold it


def assert_view(view: RequestView) -> None:
    assert_findings(view.findings)
    assert_valid_unicode(view)
    for message in view.messages:
        assert message.content is None or isinstance(message.content, str)
        for call in message.tool_calls:
            assert isinstance(call.name, str) and isinstance(call.id, str)
            assert call.arguments is None or isinstance(call.arguments, dict)
    assert all(isinstance(tool.name, str) and isinstance(tool.parameters, dict) for tool in view.tools)
    json.dumps(dataclasses.asdict(view), ensure_ascii=False).encode("utf-8")


def adapter(fmt: str, protocol: str | None) -> Adapter:
    native = adapter_class(fmt)()
    return native if protocol is None else prompted(native, protocol)


# -- the properties -------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
@BUDGET
@given(data=st.data())
def test_parse_never_raises_on_any_whole_body(fmt: str, data: st.DataObject) -> None:
    protocol = data.draw(st.sampled_from(PROTOCOLS))
    status = data.draw(STATUS)
    body = data.draw(whole_body(fmt))
    headers = data.draw(st.sampled_from([{}, {"content-type": "application/json"}]))
    assert_turn(adapter(fmt, protocol).parse(WireResponse(status, body, headers), stream=False))


@pytest.mark.parametrize("fmt", FORMATS)
@BUDGET
@given(data=st.data())
def test_parse_never_raises_on_any_stream(fmt: str, data: st.DataObject) -> None:
    protocol = data.draw(st.sampled_from(PROTOCOLS))
    status = data.draw(STATUS)
    body = data.draw(stream_body(fmt) | TEXT)
    headers = {"content-type": "text/event-stream"}
    assert_turn(adapter(fmt, protocol).parse(WireResponse(status, body, headers), stream=True))


@st.composite
def event_stream(draw: st.DrawFn) -> bytes:
    """Bedrock's binary stream: framed events (the SDK form's name and payload, or any JSON value),
    maybe an exception, maybe broken: a byte changed (a CRC that fails), cut short, bytes added."""
    data = b""
    anything = st.tuples(TEXT, JSON).map(lambda pair: {pair[0]: pair[1]})
    for printed in draw(st.lists(CONVERSE_EVENT | anything, max_size=6)):
        [(name, payload)] = printed.items()
        if name.endswith("Exception"):
            data += eventstream.exception(name, str(payload))
        else:
            kind = draw(st.sampled_from(["event", "event", "error", "x"]))
            data += eventstream.message(
                eventstream.string_header(":event-type", name)
                + eventstream.string_header(":message-type", kind),
                json.dumps(payload).encode("utf-8", errors="surrogatepass"),
            )
    damage = draw(st.sampled_from(["none", "none", "flip", "cut", "append"]))
    if damage == "flip" and data:
        at = draw(st.integers(0, len(data) - 1))
        data = data[:at] + bytes([data[at] ^ 0x41]) + data[at + 1 :]
    elif damage == "cut":
        data = data[: draw(st.integers(0, len(data)))]
    elif damage == "append":
        data += draw(st.binary(max_size=20))
    return data


@BUDGET
@given(data=st.data())
def test_parse_never_raises_on_any_event_stream(data: st.DataObject) -> None:
    """Whole or cut anywhere, an event stream gives the same valid turn."""
    body = data.draw(event_stream())
    protocol = data.draw(st.sampled_from(PROTOCOLS))
    headers = {"content-type": eventstream.EVENTSTREAM}
    response = WireResponse(data.draw(STATUS), eventstream.b64(body), headers)
    native = adapter("bedrock-converse", None)
    turn = adapter("bedrock-converse", protocol).parse(response, stream=data.draw(st.booleans()))
    assert_turn(turn)
    if response.status < 400:
        cuts = sorted(set(data.draw(st.lists(st.integers(0, len(body)), max_size=8))))
        pieces = native.parse_chunks(cut(body, cuts), response.status)
        assert assembled(pieces) == assembled(native.parse(response, stream=True))


CONVERSE_CONTENT = arr(
    obj(
        text=like(TEXT),
        toolUse=TOOL_USE,
        toolResult=obj(toolUseId=like(TEXT), content=arr(obj(text=like(TEXT), json=JSON)), status=like(TEXT)),
        reasoningContent=JSON,
    )
)
MESSAGE = obj(
    role=like(st.sampled_from(["system", "developer", "user", "assistant", "tool", "model", "function"])),
    content=like(
        TEXT
        | st.lists(
            obj(
                type=like(st.sampled_from(["text", "thinking", "document"])),
                text=like(TEXT),
                thinking=like(TEXT),
                document=obj(data=JSON),
            ),
            max_size=2,
        )
    )
    | CONVERSE_CONTENT,
    tool_calls=arr(OPENAI_CALL | obj(function=obj(name=like(TEXT), arguments=JSON))),
    tool_plan=like(TEXT),
    tool_call_id=like(TEXT),
    name=like(TEXT),
    tool_name=like(TEXT),
    parts=arr(
        obj(
            text=like(TEXT),
            functionCall=obj(name=like(TEXT), args=JSON, id=like(TEXT)),
            functionResponse=obj(name=like(TEXT), id=like(TEXT), response=JSON),
            thoughtSignature=like(TEXT),
        )
    ),
)
ANTHROPIC_CONTENT = arr(
    obj(
        type=like(st.sampled_from(["text", "tool_use", "tool_result", "thinking"])),
        text=like(TEXT),
        id=like(TEXT),
        name=like(TEXT),
        input=JSON,
        tool_use_id=like(TEXT),
        content=like(TEXT),
        is_error=like(st.booleans()),
    )
)
REQUEST = obj(
    model=like(TEXT),
    stream=like(st.booleans()),
    messages=arr(MESSAGE | obj(role=like(st.sampled_from(["user", "assistant"])), content=ANTHROPIC_CONTENT)),
    contents=arr(MESSAGE),
    system=like(TEXT) | ANTHROPIC_CONTENT,
    systemInstruction=obj(parts=arr(obj(text=like(TEXT)))),
    tools=arr(
        obj(
            type=like(st.just("function")),
            function=obj(name=like(TEXT), description=like(TEXT), parameters=JSON),
            name=like(TEXT),
            input_schema=JSON,
            functionDeclarations=arr(obj(name=like(TEXT), parameters=JSON, parametersJsonSchema=JSON)),
        )
    ),
    tool_choice=like(st.sampled_from(["auto", "required", "none", "any", "REQUIRED", "NONE"]))
    | obj(type=like(TEXT), name=like(TEXT)),
    toolConfig=obj(
        functionCallingConfig=obj(mode=like(TEXT), allowedFunctionNames=arr(TEXT)),
        tools=arr(obj(toolSpec=obj(name=like(TEXT), description=like(TEXT), inputSchema=obj(json=JSON)))),
        toolChoice=obj(auto=JSON, any=JSON, tool=obj(name=like(TEXT))),
    ),
    functions=arr(obj(name=like(TEXT), parameters=JSON)),
    function_call=JSON,
    max_tokens=INT,
    instructions=like(TEXT),
    previous_response_id=like(TEXT),
    input=like(TEXT)
    | arr(
        MESSAGE
        | RESPONSES_ITEM
        | obj(
            type=like(st.sampled_from(["function_call_output", "item_reference"])),
            call_id=like(TEXT),
            output=like(TEXT) | arr(RESPONSES_PART),
        )
        | STEP
        | obj(type=like(st.just("text")), text=like(TEXT))
    ),
    system_instruction=like(TEXT),
    generation_config=obj(
        tool_choice=like(st.sampled_from(["auto", "any", "none", "validated"]))
        | obj(allowed_tools=obj(mode=like(TEXT), tools=arr(TEXT)))
    ),
    previous_interaction_id=like(TEXT),
    store=like(st.booleans()),
)
PATHS = (
    st.sampled_from(
        [
            "",
            "/v1/chat/completions",
            "/v1beta/models/m:generateContent",
            "/v1beta/models/m:streamGenerateContent?alt=sse",
            "/model/m/converse",
            "/model/us.a.b-v1%3A0/converse-stream",
            "/v1beta/interactions",
        ]
    )
    | TEXT
)


@pytest.mark.parametrize("fmt", FORMATS)
@BUDGET
@given(data=st.data())
def test_read_request_never_raises_on_any_object(fmt: str, data: st.DataObject) -> None:
    protocol = data.draw(st.sampled_from(PROTOCOLS))
    body = data.draw(REQUEST | st.dictionaries(TEXT, JSON, max_size=5))
    if not isinstance(body, dict):
        body = {"messages": body}
    assert_view(adapter(fmt, protocol).read_request(body, data.draw(PATHS)))
