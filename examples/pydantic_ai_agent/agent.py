"""An agent written on ``pydantic-ai``: the harness's tools become pydantic-ai tools.

pydantic-ai runs its own loop (async, with the OpenAI SDK underneath); the
harness only gives it the endpoint, the messages and the tools, then grades what
it sent and received on the wire.
"""

from __future__ import annotations

from typing import Any

from pydantic_ai import Agent, Tool
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from harness import AgentTask, AgentTool, ToolFailure


def _tool(tool: AgentTool) -> Tool[Any]:
    def call(**arguments: Any) -> str:
        try:
            return tool(arguments)
        except ToolFailure as failure:
            return f"error: {failure}"

    return Tool.from_schema(call, name=tool.name, description=tool.description, json_schema=tool.parameters)


def run(task: AgentTask) -> str | None:
    """Run the scenario's conversation with a pydantic-ai agent."""
    model = OpenAIChatModel(
        task.endpoint.model,
        provider=OpenAIProvider(base_url=task.endpoint.openai_base_url, api_key=task.endpoint.api_key),
    )
    system = "\n\n".join(m["content"] for m in task.messages if m["role"] == "system")
    turns = [m for m in task.messages if m["role"] != "system"]
    history: list[ModelMessage] = []
    for message in turns[:-1]:
        if message["role"] == "user":
            history.append(ModelRequest(parts=[UserPromptPart(message["content"])]))
        else:
            history.append(ModelResponse(parts=[TextPart(message["content"])]))
    agent = Agent(model, instructions=system or None, tools=[_tool(t) for t in task.tools], retries=0)
    result = agent.run_sync(turns[-1]["content"], message_history=history or None)
    return str(result.output)
