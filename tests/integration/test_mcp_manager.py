"""MCPManager against the bundled fixture server, plus the schema and result helpers.

Server processes are real (``python -m harness.servers.mcp_fixture.server``); "no orphan"
checks look at /proc. Timeouts are short so every test stays within a few seconds.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.errors import ConfigError, UnknownNameError
from harness.model import ToolCall
from harness.servers.mcp_fixture import SERVER_NAME, fixture_command, fixture_spec
from harness.servers.mcp_fixture.cases import LONG_NAME, TOO_LONG_NAME
from harness.servers.mcp_fixture.server import INDEX
from harness.tools.mcp.manager import (
    MCPCallError,
    MCPCallResult,
    MCPIssue,
    MCPManager,
    MCPServerSpec,
    normalize_schema,
    schema_issues,
)
from harness.tools.run_tools import RunTools
from tests.helpers.processes import still_running

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")


def gone(pids: list[int]) -> bool:
    """True once none of ``pids`` runs (exited, unreaped processes count as gone), woken by
    each exit rather than polling."""
    return still_running(pids) == []


@pytest.fixture(scope="module")
def manager() -> Iterator[MCPManager]:
    """One fixture server shared by the tests that do not break it."""
    with MCPManager([fixture_spec(timeout_s=10)]) as shared:
        yield shared


# -- a healthy server ------------------------------------------------------------------


def test_lists_the_fixture_tools(manager: MCPManager) -> None:
    tools = {tool.name: tool for tool in manager.tools()}
    assert set(tools) == {
        "find_symbol",
        "read_file",
        "list_files",
        "search.files",
        "flaky",
        *("file_info", "file_stats", "file_stats_nonconformant", "file_info_nonconformant"),
        *("read_lines", "read_lines_nonconformant", "delete_file", LONG_NAME, TOO_LONG_NAME),
        *("reindex", "reindex_nonconformant"),
    }
    assert tools["file_info"].output_schema is not None and tools["file_stats"].output_schema is None
    assert tools["delete_file"].annotations == {
        "title": "Delete file",
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    assert all(tool.server == SERVER_NAME for tool in tools.values())
    assert tools["read_file"].input_schema["required"] == ["path"]
    assert manager.issues == []
    assert manager.alive(SERVER_NAME)
    start_ms = manager.start_ms(SERVER_NAME)
    assert start_ms is not None and start_ms < 5000


def test_find_symbol_then_read_file(manager: MCPManager) -> None:
    found = manager.call(SERVER_NAME, "find_symbol", {"name": "distance_to"})
    assert found.structured == {"path": "src/geometry.py", "line": 14, "kind": "method"}
    assert not found.is_error and '"line": 14' in found.text
    lines = {"path": "src/geometry.py", "start_line": 14, "end_line": 15}
    text = manager.call(SERVER_NAME, "read_file", lines)
    assert text == MCPCallResult(
        '    def distance_to(self, other: "Point") -> float:\n'
        "        return math.hypot(self.x - other.x, self.y - other.y)"
    )


def test_other_fixture_tools(manager: MCPManager) -> None:
    assert manager.call(SERVER_NAME, "list_files").text == "README.md\nsrc/geometry.py\nsrc/inventory.py"
    hits = manager.call(SERVER_NAME, "search.files", {"query": "MAX_ITEMS"}).text.splitlines()
    assert hits == [
        "src/inventory.py:5: MAX_ITEMS = 100",
        "src/inventory.py:15:     return Item(item.sku, min(MAX_ITEMS, item.quantity + amount))",
    ]
    assert manager.call(SERVER_NAME, "flaky", {"mode": "ok"}).text == "ok"


def test_error_results_are_values(manager: MCPManager) -> None:
    unknown_symbol = manager.call(SERVER_NAME, "find_symbol", {"name": "Nope"})
    assert unknown_symbol.is_error and "unknown symbol 'Nope'" in unknown_symbol.text
    unknown_path = manager.call(SERVER_NAME, "read_file", {"path": "src/missing.py"})
    assert unknown_path.is_error and "unknown path" in unknown_path.text
    flaky = manager.call(SERVER_NAME, "flaky", {"mode": "error"})
    assert flaky.is_error and "flaky: error requested" in flaky.text
    unknown_tool = manager.call(SERVER_NAME, "no_such_tool", {})  # MCPServer answers with isError
    assert unknown_tool.is_error and "no_such_tool" in unknown_tool.text
    assert manager.alive(SERVER_NAME) and manager.issues == []


def test_unknown_server_is_a_name_error(manager: MCPManager) -> None:
    with pytest.raises(UnknownNameError, match="unknown MCP server 'nope'; known: codeindex"):
        manager.call("nope", "find_symbol", {"name": "Point"})


def test_concurrent_calls_from_threads(manager: MCPManager) -> None:
    names = sorted(INDEX)
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda n: manager.call(SERVER_NAME, "find_symbol", {"name": n}), names))
    assert [r.structured for r in results] == [dict(INDEX[n]) for n in names]


def test_as_tools_through_the_registry(manager: MCPManager) -> None:
    registry = RunTools()
    for tool in manager.as_tools(manager.namer("openai")):
        registry.add(tool)
    assert {
        "mcp__codeindex__find_symbol",
        "mcp__codeindex__flaky",
        "mcp__codeindex__list_files",
        "mcp__codeindex__read_file",
        "mcp__codeindex__search_files",
        "mcp__codeindex__count_definitions_in_one_file_of_the_co_7accb400",  # 128 characters, cut to 64
    } <= set(registry.names())
    spec = registry.get("mcp__codeindex__search_files").spec
    assert spec.parameters["type"] == "object" and "query" in spec.parameters["properties"]
    ok = registry.execute(ToolCall("mcp__codeindex__search_files", {"query": "TOLERANCE"}, id="c1"), turn=0)
    assert ok.source == "mcp:codeindex" and not ok.result.is_error
    assert ok.result.content == "src/geometry.py:5: TOLERANCE = 1e-9"
    failed = registry.execute(ToolCall("mcp__codeindex__flaky", {"mode": "error"}, id="c2"), turn=0)
    assert failed.result.is_error and "flaky: error requested" in failed.result.content


def test_gemini_naming_keeps_the_dot(manager: MCPManager) -> None:
    names = {tool.spec.name for tool in manager.as_tools(manager.namer("gemini"))}
    assert "mcp__codeindex__search.files" in names


def test_importing_the_manager_does_not_import_mcp() -> None:
    code = "import sys, harness.tools.mcp.manager, harness.servers.mcp_fixture; print('mcp' in sys.modules)"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_structured_results_protocol_errors_and_progress_reach_the_registry() -> None:
    """What the SDK's client would refuse (a result against its outputSchema) comes through for the
    harness to judge; a protocol error keeps its code; progress notifications are counted."""
    with MCPManager([fixture_spec(timeout_s=10)]) as manager:
        registry = RunTools()
        for tool in manager.as_tools(manager.namer("openai")):
            registry.add(tool)
        broken = registry.execute(
            ToolCall("mcp__codeindex__file_info_nonconformant", {"path": "README.md"}), 0
        )
        assert not broken.result.is_error and broken.mcp is not None
        assert (broken.mcp.structured, broken.mcp.content) == (True, {"path": "README.md", "lines": "3"})
        bad = {"path": "README.md", "start_line": 30, "end_line": 35}
        refused = registry.execute(ToolCall("mcp__codeindex__read_lines_nonconformant", bad), 0)
        assert refused.result.is_error and refused.mcp is not None and refused.mcp.error_code == -32602
        answered = registry.execute(ToolCall("mcp__codeindex__read_lines", bad), 0)
        assert answered.mcp is not None and answered.mcp.is_error and answered.mcp.error_code is None
        slow = registry.execute(ToolCall("mcp__codeindex__reindex", {"steps": 2}), 0)
        assert slow.mcp is not None and slow.mcp.progress == 2
    assert [(i.kind, i.tool) for i in manager.issues] == [("protocol_error", "read_lines_nonconformant")]


# -- failures ---------------------------------------------------------------------------


def test_crash_mid_run_is_an_issue_and_later_calls_fail_fast() -> None:
    manager = MCPManager([fixture_spec(timeout_s=60)])
    manager.start()
    try:
        pids = manager.pids(SERVER_NAME)
        assert len(pids) == 1
        with pytest.raises(MCPCallError, match="crashed") as crash:
            manager.call(SERVER_NAME, "flaky", {"mode": "crash"})
        issue = crash.value.issue
        assert issue is not None and issue.kind == "crashed" and issue.server == SERVER_NAME
        assert "flaky: crash requested, exiting with status 3" in issue.stderr_tail
        assert not manager.alive(SERVER_NAME)
        started = time.perf_counter()
        with pytest.raises(MCPCallError, match="'codeindex' is not running"):
            manager.call(SERVER_NAME, "find_symbol", {"name": "Point"})
        assert time.perf_counter() - started < 30  # failed fast: no wait for the 60 s timeout
        tools = {tool.spec.name: tool for tool in manager.as_tools()}
        registry = RunTools()
        registry.add(tools["mcp__codeindex__find_symbol"])
        result = registry.execute(ToolCall("mcp__codeindex__find_symbol", {"name": "Point"}), turn=1).result
        assert result.is_error and "is not running (crashed" in result.content
    finally:
        manager.close()
    assert gone(pids) and manager.pids(SERVER_NAME) == []
    assert [i.kind for i in manager.issues] == ["crashed"]
    finding = manager.issues[0].to_finding()
    assert finding.check_id == "mcp.crashed" and not finding.passed
    assert finding.evidence is not None and "crash requested" in finding.evidence["stderr_tail"]


def test_server_killed_from_outside_is_noticed_before_the_call() -> None:
    with MCPManager([fixture_spec(timeout_s=5)]) as manager:
        [pid] = manager.pids(SERVER_NAME)
        os.kill(pid, signal.SIGKILL)
        assert gone([pid])
        with pytest.raises(MCPCallError, match="crashed") as crash:
            manager.call(SERVER_NAME, "list_files")
        assert crash.value.issue is not None and crash.value.issue.kind == "crashed"
    assert manager.pids(SERVER_NAME) == []


def test_hung_call_times_out_and_the_server_is_stopped() -> None:
    with MCPManager([fixture_spec(timeout_s=5)]) as manager:
        pids = manager.pids(SERVER_NAME)
        started = time.perf_counter()
        with pytest.raises(MCPCallError, match=r"timed out after 0\.5s") as hang:
            manager.call(SERVER_NAME, "flaky", {"mode": "hang"}, timeout_s=0.5)
        assert time.perf_counter() - started < 30  # the call's own timeout, not the server's
        issue = hang.value.issue
        assert issue is not None and issue.kind == "timeout" and issue.tool == "flaky"
        assert "flaky: hang requested" in issue.stderr_tail
        assert gone(pids)
        with pytest.raises(MCPCallError, match="not running"):
            manager.call(SERVER_NAME, "list_files")
    assert [i.kind for i in manager.issues] == ["timeout"]


def test_missing_command_is_an_issue_not_an_exception() -> None:
    specs = [MCPServerSpec("ghost", "/nonexistent/mcp-server"), fixture_spec(timeout_s=5)]
    with MCPManager(specs) as manager:
        [issue] = manager.issues
        assert issue.kind == "start_failed" and issue.server == "ghost"
        assert "FileNotFoundError" in issue.detail
        assert {tool.server for tool in manager.tools()} == {SERVER_NAME}  # the run goes on
        assert manager.call(SERVER_NAME, "flaky").text == "ok"
        with pytest.raises(MCPCallError, match="'ghost' is not running"):
            manager.call("ghost", "anything")


def test_server_exiting_at_start_reports_its_stderr() -> None:
    code = "import sys; sys.stderr.write('boom: bad config\\n'); sys.exit(2)"
    with MCPManager([MCPServerSpec("boom", sys.executable, ["-c", code], timeout_s=5)]) as manager:
        [issue] = manager.issues
        assert issue.kind == "start_failed" and issue.stderr_tail == "boom: bad config"


def test_server_that_never_answers_times_out_at_start() -> None:
    spec = MCPServerSpec("sleepy", sys.executable, ["-c", "import time; time.sleep(300)"], timeout_s=0.5)
    started = time.perf_counter()
    with MCPManager([spec]) as manager:
        assert [(i.kind, i.detail) for i in manager.issues] == [("timeout", "did not start within 0.5s")]
        assert manager.pids("sleepy") == []
    assert time.perf_counter() - started < 60  # stopped at its start timeout, not after its sleep


def test_keyboard_interrupt_leaves_no_process() -> None:
    with pytest.raises(KeyboardInterrupt), MCPManager([fixture_spec(timeout_s=5)]) as manager:
        pids = manager.pids(SERVER_NAME)
        raise KeyboardInterrupt
    assert pids and gone(pids)


def test_sigint_during_a_blocked_call_leaves_no_process() -> None:
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("SIGINT is delivered to the main thread only")
    # a shell starting a job in the background makes it ignore SIGINT, and Python then keeps it
    # ignored: give this test Python's own handler whatever the test process inherited
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        # to the main thread itself: a process-directed signal may land on another thread, and then
        # the main thread's wait is not interrupted until it times out
        main = threading.main_thread().ident
        assert main is not None
        timer = threading.Timer(0.3, signal.pthread_kill, (main, signal.SIGINT))
        with pytest.raises(KeyboardInterrupt), MCPManager([fixture_spec(timeout_s=5)]) as manager:
            pids = manager.pids(SERVER_NAME)
            timer.start()
            manager.call(SERVER_NAME, "flaky", {"mode": "hang"}, timeout_s=5)
        timer.join()
    finally:
        signal.signal(signal.SIGINT, previous)
    assert pids and gone(pids)


def test_the_stop_event_ends_a_hung_call_at_once_and_close_leaves_no_process() -> None:
    """An interrupted run (its stop event set) does not wait out the server's timeout_s."""
    stop = threading.Event()
    manager = MCPManager([fixture_spec(timeout_s=117)], stop=stop)
    manager.start()
    pids = manager.pids(SERVER_NAME)
    timer = threading.Timer(0.5, stop.set)
    timer.start()
    begun = time.perf_counter()
    with pytest.raises(MCPCallError) as caught:  # the registry turns it into a failed tool result
        manager.call(SERVER_NAME, "flaky", {"mode": "hang"})
    assert "interrupted" in str(caught.value)
    assert time.perf_counter() - begun < 10  # not the server's 117 s
    manager.close()
    assert pids and gone(pids)
    assert manager.issues == []  # the server did nothing wrong: the run was interrupted


def test_descendant_outliving_the_server_is_killed_as_an_orphan(tmp_path: Path) -> None:
    """A wrapper that leaves a detached child behind: the token sweep finds and kills it."""
    command, args, env = fixture_command()
    script = f"setsid sleep 30 & exec {command} {' '.join(args)}"
    with MCPManager([MCPServerSpec("wrapped", "/bin/sh", ["-c", script], env, timeout_s=5)]) as manager:
        pids = manager.pids("wrapped")
        assert len(pids) == 2  # the server and the detached sleep
        assert manager.call("wrapped", "flaky").text == "ok"
    assert gone(pids) and manager.pids("wrapped") == []
    [orphan] = manager.issues
    assert orphan.kind == "orphan" and "outlived shutdown" in orphan.detail


def test_spec_validation_and_lifecycle_errors() -> None:
    with pytest.raises(ConfigError):
        MCPManager([MCPServerSpec("a", "x"), MCPServerSpec("a", "y")])
    manager = MCPManager([MCPServerSpec("a", "x")])
    with pytest.raises(MCPCallError, match="is new"):
        manager.call("a", "t")
    manager.close()
    manager.close()  # idempotent


# -- helpers without a server -----------------------------------------------------------


def test_render_result_describes_non_text_parts() -> None:
    from harness.tools.mcp.types import render_result

    result = SimpleNamespace(
        content=[
            SimpleNamespace(type="text", text="hello"),
            SimpleNamespace(type="image", data="AAAA", mime_type="image/png"),
            SimpleNamespace(type="resource", resource=SimpleNamespace(uri="file:///a.txt", text="body")),
            SimpleNamespace(type="resource_link", uri="file:///b", name="b"),
        ],
        structured_content=None,
        is_error=False,
    )
    assert render_result(result).text == (
        "hello\n[image image/png, ~3 bytes]\n[resource file:///a.txt]\nbody\n[resource link file:///b b]"
    )
    empty = render_result(SimpleNamespace(content=[], structured_content={"b": 1, "a": 2}, is_error=True))
    assert empty == MCPCallResult(
        '{"a": 2, "b": 1}', True, {"b": 1, "a": 2}, has_structured=True, serialized=False
    )  # the text the model gets is the harness's own JSON: the server sent none
    both = SimpleNamespace(
        content=[SimpleNamespace(type="text", text='{"a":2,"b":1}')], structured_content={"a": 2, "b": 1}
    )
    assert render_result(both).serialized


def test_issue_to_finding() -> None:
    finding = MCPIssue("git", "protocol_error", "'x': JSON-RPC error -32602", "trace", "x").to_finding(3)
    assert (finding.check_id, finding.severity, finding.passed, finding.turn_index) == (
        "mcp.protocol_error",
        "warning",
        False,
        3,
    )
    assert finding.evidence == {"server": "git", "tool": "x", "stderr_tail": "trace"}


def test_fixture_schemas_are_clean_but_for_the_titles_gemini_misreads(manager: MCPManager) -> None:
    """The MCP SDK gives every schema (and property) a ``title``, which Gemini can take for a
    function name: the only portability note on the fixture's tools."""
    for tool in manager.tools():
        schema = normalize_schema(tool.input_schema)
        assert schema_issues(schema, "openai") == [] and schema_issues(schema, "anthropic") == []
    flaky = next(t for t in manager.tools() if t.name == "flaky")
    issues = schema_issues(flaky.input_schema, "gemini")
    assert issues and all("keyword 'title'" in issue for issue in issues), issues


def test_crash_while_idle_is_reported_at_close() -> None:
    manager = MCPManager([fixture_spec(timeout_s=5)])
    manager.start()
    [pid] = manager.pids(SERVER_NAME)
    os.kill(pid, signal.SIGKILL)
    assert gone([pid])
    manager.close()
    assert [(i.kind, i.detail) for i in manager.issues] == [("crashed", f"process {pid} exited while idle")]


def test_close_during_a_call_stops_it_without_a_crash_issue() -> None:
    manager = MCPManager([fixture_spec(timeout_s=5)])
    manager.start()
    pids = manager.pids(SERVER_NAME)
    errors: list[BaseException] = []

    def hang() -> None:
        try:
            manager.call(SERVER_NAME, "flaky", {"mode": "hang"}, timeout_s=120)
        except BaseException as exc:
            errors.append(exc)

    worker = threading.Thread(target=hang)
    worker.start()
    time.sleep(0.3)
    started = time.perf_counter()
    manager.close()
    worker.join(120)
    assert time.perf_counter() - started < 60  # the call was cut short, not left to its 120 s timeout
    assert len(errors) == 1 and isinstance(errors[0], MCPCallError), errors
    assert "not running (stopped)" in str(errors[0])
    assert manager.issues == [] and gone(pids)


def test_fixture_index() -> None:
    assert INDEX["Point"] == {"path": "src/geometry.py", "line": 8, "kind": "class"}
    assert INDEX["TOLERANCE"] == {"path": "src/geometry.py", "line": 5, "kind": "constant"}
    assert INDEX["restock"] == {"path": "src/inventory.py", "line": 14, "kind": "function"}
    assert INDEX["__init__"]["kind"] == "method"
