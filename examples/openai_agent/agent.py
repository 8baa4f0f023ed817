"""An agent written on the official ``openai`` SDK: the loop most teams ship first.

The harness calls :func:`run` with a :class:`harness.AgentTask`; the
agent talks to ``task.endpoint`` with the SDK and runs the tools the model calls
through ``task.tool(name)``, streaming when the target asks for it (``stream = true``:
the deltas are put together by :func:`assemble`, the code a network's chunk boundaries test).
``DROP_FIRST_TOOL_RESULT`` breaks it on purpose (the
first tool result is never sent back), to show the checks catching it.
"""

from __future__ import annotations

import json
from typing import Any

import openai

from harness import AgentTask, ToolFailure

DROP_FIRST_TOOL_RESULT = False


def run(task: AgentTask) -> str | None:
    """Drive the conversation until the model answers without a tool call."""
    client = openai.OpenAI(
        base_url=task.endpoint.openai_base_url, api_key=task.endpoint.api_key, max_retries=0
    )
    messages: list[dict[str, Any]] = [dict(m) for m in task.messages]
    choice: Any = task.tool_choice
    if isinstance(choice, dict):
        choice = {"type": "function", "function": {"name": choice["name"]}}
    dropped = False
    for turn in range(task.max_turns):
        request: dict[str, Any] = {
            "model": task.endpoint.model,
            "messages": messages,
            "tools": task.openai_tools(),
            "tool_choice": choice if turn == 0 else "auto",
        }
        if task.endpoint.stream:
            message = assemble(client.chat.completions.create(**request, stream=True))
        else:
            reply = client.chat.completions.create(**request)
            message = reply.choices[0].message.model_dump(exclude_none=True)
        if not message.get("tool_calls"):
            return message.get("content")
        messages.append(message)
        for call in message["tool_calls"]:
            try:
                content = task.tool(call["function"]["name"])(call["function"]["arguments"])
            except ToolFailure as failure:
                content = f"error: {failure}"
            if DROP_FIRST_TOOL_RESULT and not dropped:
                dropped = True
                continue
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})
    return None


def assemble(chunks: Any) -> dict[str, Any]:
    """The assistant message a streamed completion adds up to: the text deltas joined, and each
    tool call's id, name and argument fragments gathered by its ``index``."""
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    for chunk in chunks:
        for choice in chunk.choices:
            if choice.delta.content:
                text.append(choice.delta.content)
            for delta in choice.delta.tool_calls or []:
                call = calls.setdefault(
                    delta.index, {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
                )
                call["id"] = call["id"] or delta.id or ""
                if delta.function is not None:
                    call["function"]["name"] = call["function"]["name"] or delta.function.name or ""
                    call["function"]["arguments"] += delta.function.arguments or ""
    message: dict[str, Any] = {"role": "assistant"}
    if text:
        message["content"] = "".join(text)
    if calls:
        message["tool_calls"] = [calls[index] for index in sorted(calls)]
    return message


def run_dropping_a_result(task: AgentTask) -> str | None:
    """The same agent with a bug: it forgets to send the first tool result back."""
    global DROP_FIRST_TOOL_RESULT
    DROP_FIRST_TOOL_RESULT = True
    try:
        return run(task)
    finally:
        DROP_FIRST_TOOL_RESULT = False


def tool_calls_json(message: Any) -> str:
    """The calls of a reply as JSON, for debugging."""
    return json.dumps([c.model_dump() for c in message.tool_calls or []])
