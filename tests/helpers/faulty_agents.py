"""Agents with the bugs new users' agents had, each caught against the simulator: the example
openai-SDK agent (examples/openai_agent) sending every tool result back as ``""``, or never sending
the scenario's ``tool_choice``; and an agent passing the scenario's ``tool_choice`` into the
request in the scenario's shape."""

from __future__ import annotations

import dataclasses
from typing import Any

import openai

from examples.openai_agent import agent as example
from harness import AgentTask, AgentTool


@dataclasses.dataclass
class _Blanking(AgentTool):
    """A tool that runs as declared, but whose result the agent then loses."""

    def __call__(self, arguments: dict[str, Any] | str | None = None) -> str:
        super().__call__(arguments)
        return ""


def run_blanking_results(task: AgentTask) -> str | None:
    """The example agent, every tool result sent back to the model as an empty string."""
    tools = [_Blanking(**{f.name: getattr(t, f.name) for f in dataclasses.fields(t)}) for t in task.tools]
    return example.run(dataclasses.replace(task, tools=tools))


def run_ignoring_tool_choice(task: AgentTask) -> str | None:
    """The example agent, the scenario's ``tool_choice`` never sent (``auto`` on every request)."""
    return example.run(dataclasses.replace(task, tool_choice="auto"))


def run_raw_tool_choice(task: AgentTask) -> str | None:
    """An agent on the openai SDK that passes the scenario's ``tool_choice`` into the request as
    the scenario writes it (``{"name": "get_time"}``), where Chat Completions wants
    ``{"type": "function", "function": {"name": ...}}``."""
    client = openai.OpenAI(
        base_url=task.endpoint.openai_base_url, api_key=task.endpoint.api_key, max_retries=0
    )
    messages: list[Any] = [dict(m) for m in task.messages]
    for turn in range(task.max_turns):
        reply = client.chat.completions.create(
            model=task.endpoint.model,
            messages=messages,
            tools=task.openai_tools(),  # type: ignore[arg-type]
            tool_choice=task.tool_choice if turn == 0 else "auto",  # type: ignore[arg-type]
        )
        message = reply.choices[0].message
        if not message.tool_calls:
            return message.content
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            content = task.tool(call.function.name)(call.function.arguments)  # type: ignore[union-attr]
            messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
    return None


def run_dropping_reasoning(task: AgentTask) -> str | None:
    """An agent on the openai SDK that rebuilds each assistant message from its content and calls
    alone, dropping the ``reasoning_content`` a thinking model (DeepSeek, Kimi) needs back."""
    client = openai.OpenAI(
        base_url=task.endpoint.openai_base_url, api_key=task.endpoint.api_key, max_retries=0
    )
    messages: list[Any] = [dict(m) for m in task.messages]
    for _ in range(task.max_turns):
        reply = client.chat.completions.create(
            model=task.endpoint.model,
            messages=messages,
            tools=task.openai_tools(),  # type: ignore[arg-type]
        )
        message = reply.choices[0].message
        if not message.tool_calls:
            return message.content
        calls = [c.model_dump(exclude_none=True) for c in message.tool_calls]
        messages.append({"role": "assistant", "content": message.content, "tool_calls": calls})
        for call in message.tool_calls:
            content = task.tool(call.function.name)(call.function.arguments)  # type: ignore[union-attr]
            messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
    return None
