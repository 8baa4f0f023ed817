"""toolcall harness: provider conformance tests for LLM tool calling, as a library.

The curated public API (everything else is reachable through its module). Names
are imported on first use, so ``import harness`` stays cheap::

    import harness

    suite = harness.load_scenarios("scenarios", select=["weather.*"])
    result = harness.run(suite, ["sim-openai", "sim-anthropic"], mode="replay")
    for record in result.failed:
        print(record.target.name, record.scenario, record.score)
    result.write_reports("reports")
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from harness._version import __version__

_EXPORTS: dict[str, str] = {
    # running
    "load_scenarios": "harness.api",
    "load_targets": "harness.targets_file",
    "load_config": "harness.targets_file",
    "select_targets": "harness.api",
    "run": "harness.api",
    "run_targets": "harness.api",
    "RunResult": "harness.api",
    "RunConfig": "harness.runner",
    "read_results": "harness.api",
    "write_reports": "harness.api",
    # what is run
    "Scenario": "harness.scenarios",
    "Target": "harness.targets",
    "Profile": "harness.providers.profiles",
    "ToolSet": "harness.tools.toolsets",
    "DeclaredTool": "harness.tools.declared",
    "ToolFailure": "harness.tools.run_tools",
    "AgentTask": "harness.agent.external",
    "AgentTool": "harness.agent.external",
    "AgentEndpoint": "harness.agent.external",
    "load_toolset": "harness.tools.toolsets",
    # what a run gives
    "RunRecord": "harness.records",
    "RecordLog": "harness.results",
    "CheckResult": "harness.records",
    "TargetInfo": "harness.records",
    "Finding": "harness.model",
    "Transcript": "harness.model",
    "Message": "harness.model",
    "ParsedTurn": "harness.model",
    "ProviderError": "harness.model",
    "ToolCall": "harness.model",
    "ToolChoice": "harness.model",
    "ToolResult": "harness.model",
    "ToolSpec": "harness.model",
    "Usage": "harness.model",
    # errors
    "HarnessError": "harness.errors",
    "UserError": "harness.errors",
    "ScenarioError": "harness.errors",
    "ConfigError": "harness.errors",
    "UnknownNameError": "harness.errors",
    "CassetteError": "harness.errors",
    "CassetteMissingError": "harness.errors",
    "CassetteDriftError": "harness.errors",
    "TransportError": "harness.errors",
}

__all__ = [
    "AgentEndpoint",
    "AgentTask",
    "AgentTool",
    "CassetteDriftError",
    "CassetteError",
    "CassetteMissingError",
    "CheckResult",
    "ConfigError",
    "DeclaredTool",
    "Finding",
    "HarnessError",
    "Message",
    "ParsedTurn",
    "Profile",
    "ProviderError",
    "RecordLog",
    "RunConfig",
    "RunRecord",
    "RunResult",
    "Scenario",
    "ScenarioError",
    "Target",
    "TargetInfo",
    "ToolCall",
    "ToolChoice",
    "ToolFailure",
    "ToolResult",
    "ToolSet",
    "ToolSpec",
    "Transcript",
    "TransportError",
    "UnknownNameError",
    "Usage",
    "UserError",
    "__version__",
    "load_config",
    "load_scenarios",
    "load_targets",
    "load_toolset",
    "read_results",
    "run",
    "run_targets",
    "select_targets",
    "write_reports",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'harness' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:
    from harness.agent.external import AgentEndpoint, AgentTask, AgentTool
    from harness.api import (
        RunResult,
        load_scenarios,
        read_results,
        run,
        run_targets,
        select_targets,
        write_reports,
    )
    from harness.errors import (
        CassetteDriftError,
        CassetteError,
        CassetteMissingError,
        ConfigError,
        HarnessError,
        ScenarioError,
        TransportError,
        UnknownNameError,
        UserError,
    )
    from harness.model import (
        Finding,
        Message,
        ParsedTurn,
        ProviderError,
        ToolCall,
        ToolChoice,
        ToolResult,
        ToolSpec,
        Transcript,
        Usage,
    )
    from harness.providers.profiles import Profile
    from harness.records import CheckResult, RunRecord, TargetInfo
    from harness.results import RecordLog
    from harness.runner import RunConfig
    from harness.scenarios import Scenario
    from harness.targets import Target
    from harness.targets_file import load_config, load_targets
    from harness.tools.declared import DeclaredTool
    from harness.tools.run_tools import ToolFailure
    from harness.tools.toolsets import ToolSet, load_toolset
