"""Real third-party MCP servers from PyPI (mcp-server-git, mcp-server-time) through MCPManager.

The same path as the fixture server: spawn over stdio, list tools, call through the
registry tools ``as_tools`` builds. Skipped when the packages are not installed
(``pip install mcp-server-git mcp-server-time``).
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.model import ToolCall
from harness.tools.mcp.manager import MCPCallError, MCPManager, MCPServerSpec
from harness.tools.run_tools import RunTools

pytestmark = pytest.mark.mcp_live

COMMIT_MESSAGE = "Add the fixture greeting"


def _require(module: str, package: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{package} is not installed (pip install {package})")


@pytest.fixture(scope="module")
def repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not on PATH")
    repo = tmp_path_factory.mktemp("repo")
    (repo / "hello.txt").write_text("hello\n")
    identity = ["-c", "user.name=Harness Test", "-c", "user.email=harness@example.invalid"]
    commit = [*identity, "commit", "-q", "-m", COMMIT_MESSAGE]
    for args in (["init", "-q", "-b", "main"], ["add", "hello.txt"], commit):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    (repo / "untracked.txt").write_text("new\n")
    return repo


@pytest.fixture(scope="module")
def manager(repository: Path) -> Iterator[MCPManager]:
    _require("mcp_server_git", "mcp-server-git")
    _require("mcp_server_time", "mcp-server-time")
    git_args = ["-m", "mcp_server_git", "--repository", str(repository)]
    time_args = ["-m", "mcp_server_time", "--local-timezone", "UTC"]
    specs = [
        MCPServerSpec("git", sys.executable, git_args, timeout_s=20),
        MCPServerSpec("time", sys.executable, time_args, timeout_s=20),
    ]
    with MCPManager(specs) as started:
        yield started


def test_tools_are_listed(manager: MCPManager) -> None:
    assert manager.issues == []
    names = {(tool.server, tool.name) for tool in manager.tools()}
    assert {("git", "git_status"), ("git", "git_log"), ("time", "get_current_time")} <= names
    git_log = next(tool for tool in manager.tools() if tool.name == "git_log")
    assert "repo_path" in git_log.input_schema["properties"]


def test_git_and_time_through_the_registry(manager: MCPManager, repository: Path) -> None:
    registry = RunTools()
    for tool in manager.as_tools(manager.namer("openai")):
        registry.add(tool)
    log = registry.execute(ToolCall("mcp__git__git_log", {"repo_path": str(repository)}, id="1"), turn=0)
    assert log.source == "mcp:git" and not log.result.is_error, log.result.content
    assert COMMIT_MESSAGE in log.result.content
    status_call = ToolCall("mcp__git__git_status", {"repo_path": str(repository)}, id="2")
    status = registry.execute(status_call, turn=0)
    assert "untracked.txt" in status.result.content
    now = registry.execute(ToolCall("mcp__time__get_current_time", {"timezone": "UTC"}, id="3"), turn=0)
    assert now.source == "mcp:time" and not now.result.is_error, now.result.content
    assert '"timezone": "UTC"' in now.result.content


def test_structured_time_result_and_error_shapes(manager: MCPManager) -> None:
    now = manager.call("time", "get_current_time", {"timezone": "UTC"})
    assert isinstance(now.structured, dict) and now.structured["timezone"] == "UTC"
    bad_zone = manager.call("time", "get_current_time", {"timezone": "Mars/Olympus_Mons"})
    assert bad_zone.is_error
    # mcp-server-git answers an unknown tool with JSON-RPC -32602, a protocol error: recorded, not fatal.
    with pytest.raises(MCPCallError, match="protocol error -32602") as unknown:
        manager.call("git", "git_teleport", {})
    assert unknown.value.issue is not None and unknown.value.issue.kind == "protocol_error"
    assert manager.alive("git")
