"""An agent written on the official ``openai`` SDK: the loop most teams ship first.

The harness calls :func:`run` with a :class:`harness.AgentTask`; the
agent talks to ``task.endpoint`` with the SDK and runs the tools the model calls
through ``task.tool(name)``. ``DROP_FIRST_TOOL_RESULT`` breaks it on purpose (the
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
        reply = client.chat.completions.create(
            model=task.endpoint.model,
            messages=messages,  # type: ignore[arg-type]
            tools=task.openai_tools(),  # type: ignore[arg-type]
            tool_choice=choice if turn == 0 else "auto",
        )
        message = reply.choices[0].message
        if not message.tool_calls:
            return message.content
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            try:
                content = task.tool(call.function.name)(call.function.arguments)
            except ToolFailure as failure:
                content = f"error: {failure}"
            if DROP_FIRST_TOOL_RESULT and not dropped:
                dropped = True
                continue
            messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
    return None


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
