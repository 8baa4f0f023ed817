"""The curated public API: pinned, documented with an example each, and cheap to import."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import harness

PUBLIC = [
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


def test_public_api_is_pinned() -> None:
    assert harness.__all__ == PUBLIC
    assert sorted(dir(harness)) == sorted(PUBLIC)


def test_every_public_name_has_a_docstring_with_an_example() -> None:
    missing = []
    for name in PUBLIC:
        value = getattr(harness, name)
        if name == "__version__":
            assert isinstance(value, str)
            continue
        doc = inspect.getdoc(value) or ""
        if "Example" not in doc:
            missing.append(name)
    assert missing == [], f"public names without a docstring example: {missing}"


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        harness.nothing_here  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        assert "nothing_here" in str(exc)
    else:
        raise AssertionError("no AttributeError")


def test_the_type_checking_block_re_exports_exactly_the_table() -> None:
    """``__all__`` is computed from ``_EXPORTS``, so strict mypy learns the public names from the
    ``TYPE_CHECKING`` block alone: it must import each name of the table from the table's module,
    as itself (an explicit re-export), and nothing else."""
    tree = ast.parse(Path(harness.__file__).read_text(encoding="utf-8"))
    (block,) = [
        node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    ]
    imported = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom), ast.unparse(node)
        for alias in node.names:
            assert alias.asname == alias.name, f"{alias.name} is not re-exported as itself"
            imported[alias.name] = node.module
    assert imported == harness._EXPORTS
