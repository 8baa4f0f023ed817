"""toolcall harness: provider conformance tests for LLM tool calling, as a library.

The curated public API (everything else is reachable through its module). Names
are imported on first use, so ``import harness`` stays cheap::

    import harness

    suite = harness.load_scenarios("scenarios", select=["weather.*"])
    result = harness.run(suite, ["sim-openai", "sim-anthropic"], harness.RunConfig(mode="replay"))
    for record in result.failed:
        print(record.target.name, record.scenario, record.score)
    result.write_reports("reports")
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from harness._version import __version__ as __version__

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

__all__ = sorted([*_EXPORTS, "__version__"])
"""The public names: the table's, and the version (the table is the one list to edit)."""


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'harness' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # what the table imports lazily, for type checkers; ``name as name`` marks each
    # import a re-export (``__all__`` is computed, and strict mypy reads only a literal one).
    # tests/unit/test_public_api.py holds this block to the table.
    from harness.agent.external import AgentEndpoint as AgentEndpoint
    from harness.agent.external import AgentTask as AgentTask
    from harness.agent.external import AgentTool as AgentTool
    from harness.api import RunResult as RunResult
    from harness.api import load_scenarios as load_scenarios
    from harness.api import read_results as read_results
    from harness.api import run as run
    from harness.api import run_targets as run_targets
    from harness.api import select_targets as select_targets
    from harness.api import write_reports as write_reports
    from harness.errors import CassetteDriftError as CassetteDriftError
    from harness.errors import CassetteError as CassetteError
    from harness.errors import CassetteMissingError as CassetteMissingError
    from harness.errors import ConfigError as ConfigError
    from harness.errors import HarnessError as HarnessError
    from harness.errors import ScenarioError as ScenarioError
    from harness.errors import TransportError as TransportError
    from harness.errors import UnknownNameError as UnknownNameError
    from harness.errors import UserError as UserError
    from harness.model import Finding as Finding
    from harness.model import Message as Message
    from harness.model import ParsedTurn as ParsedTurn
    from harness.model import ProviderError as ProviderError
    from harness.model import ToolCall as ToolCall
    from harness.model import ToolChoice as ToolChoice
    from harness.model import ToolResult as ToolResult
    from harness.model import ToolSpec as ToolSpec
    from harness.model import Transcript as Transcript
    from harness.model import Usage as Usage
    from harness.providers.profiles import Profile as Profile
    from harness.records import CheckResult as CheckResult
    from harness.records import RunRecord as RunRecord
    from harness.records import TargetInfo as TargetInfo
    from harness.results import RecordLog as RecordLog
    from harness.runner import RunConfig as RunConfig
    from harness.scenarios import Scenario as Scenario
    from harness.targets import Target as Target
    from harness.targets_file import load_config as load_config
    from harness.targets_file import load_targets as load_targets
    from harness.tools.declared import DeclaredTool as DeclaredTool
    from harness.tools.run_tools import ToolFailure as ToolFailure
    from harness.tools.toolsets import ToolSet as ToolSet
    from harness.tools.toolsets import load_toolset as load_toolset
