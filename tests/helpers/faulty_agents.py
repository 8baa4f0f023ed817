"""The example openai-SDK agent (examples/openai_agent) with a bug a new user's agent had: it
sends every tool result back to the model as ``""``."""

from __future__ import annotations

import dataclasses
from typing import Any

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
