"""The same agent on the OpenAI Responses API (``client.responses.create``), whole and streamed.

Stateless, as most agents run it: every request sends the whole history as input items. Each
turn's output items (reasoning, message, ``function_call``) are replayed exactly as received,
followed by one ``function_call_output`` per call, linked by its ``call_id``. Streaming
(``stream = true``) takes each finished item from its ``response.output_item.done`` event and
the answer from the text deltas (:func:`collect`).
"""

from __future__ import annotations

from typing import Any

import openai

from harness import AgentTask, ToolFailure


def run(task: AgentTask) -> str | None:
    """Drive the conversation until the model answers without a function call."""
    client = openai.OpenAI(
        base_url=task.endpoint.openai_base_url, api_key=task.endpoint.api_key, max_retries=0
    )
    history: list[Any] = [dict(m) for m in task.messages]
    tools = [
        {
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
            "strict": False,  # the schema as declared: optional fields stay optional
        }
        for tool in task.tools
    ]
    choice: Any = task.tool_choice
    if isinstance(choice, dict):
        choice = {"type": "function", "name": choice["name"]}
    for turn in range(task.max_turns):
        request: dict[str, Any] = {
            "model": task.endpoint.model,
            "input": history,
            "tools": tools,
            "tool_choice": choice if turn == 0 else "auto",
        }
        if task.endpoint.stream:
            output, text = collect(client.responses.create(**request, stream=True))
        else:
            response = client.responses.create(**request)
            output, text = response.output, response.output_text
        calls = [item for item in output if item.type == "function_call"]
        if not calls:
            return text or None
        history += output  # the items as received; the SDK sends them back as they came
        for call in calls:
            try:
                content = task.tool(call.name)(call.arguments)
            except ToolFailure as failure:
                content = f"error: {failure}"
            history.append({"type": "function_call_output", "call_id": call.call_id, "output": content})
    return None


def collect(events: Any) -> tuple[list[Any], str]:
    """A streamed response's output items (each as its ``output_item.done`` event gives it, in
    ``output_index`` order) and its text (the ``output_text`` deltas joined)."""
    items: dict[int, Any] = {}
    text: list[str] = []
    for event in events:
        if event.type == "response.output_text.delta":
            text.append(event.delta)
        elif event.type == "response.output_item.done":
            items[event.output_index] = event.item
        elif event.type in ("response.failed", "response.incomplete"):
            raise RuntimeError(f"{event.type}: {event.response.error or event.response.incomplete_details}")
    return [items[index] for index in sorted(items)], "".join(text)
