"""Every way an endpoint fails, on loopback (the simulator's fault deviations), classified right:
outcome, finding, attempts and exit code; Ctrl-C and --resume; secrets never reach disk."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.api import RunResult, load_scenarios, run
from harness.records import RunRecord
from harness.runner import RunConfig
from harness.targets import Target
from tests.helpers.cli import REPO, harness

PARIS = load_scenarios(REPO / "scenarios", select=["weather.single.paris"])
FAST = {"timeout_s": 1.0, "request_timeout_s": 3.0, "retries": 2, "retry_max_wait_s": 0.2}


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def target(fault: str, **options: Any) -> Target:
    base = f"http://127.0.0.1:{closed_port()}" if fault == "refused" else f"sim~{fault}"
    return Target.build(
        f"f-{fault}", format="openai-chat", model="sim-conformant", base_url=base, **FAST, **options
    )


def one(fault: str, **options: Any) -> tuple[RunRecord, RunResult]:
    result = run(PARIS, [target(fault, **options)], RunConfig(mode="live"))
    (record,) = result.records
    return record, result


def ids(record: RunRecord) -> set[str]:
    return {f.check_id for f in record.findings() if not f.passed}


# fault -> (outcome, error cause or the finding that must be there, attempts of the first turn, exit code)
MATRIX: dict[str, tuple[str, str, int, int]] = {
    "retry-after-seconds": ("pass", "transport.retried", 2, 0),
    "retry-after-date": ("pass", "transport.retried", 2, 0),
    "server-error": ("fail", "protocol.provider_error", 1, 0),
    "unavailable": ("error", "endpoint", 3, 4),
    "slow": ("error", "transport", 3, 4),
    "drip": ("error", "transport", 1, 4),
    "reset": ("error", "transport", 3, 4),
    "refused": ("error", "transport", 3, 4),
    "truncated": ("error", "transport", 3, 4),
    "invalid-json": ("fail", "wire.body_not_json", 1, 0),
    "html-error": ("fail", "protocol.provider_error", 1, 0),
    "empty-200": ("fail", "wire.empty_body", 1, 0),
}


@pytest.mark.parametrize("fault", sorted(MATRIX))
def test_fault_matrix(fault: str) -> None:
    outcome, why, attempts, code = MATRIX[fault]
    record, result = one(fault)
    assert record.outcome == outcome, (record.error, ids(record))
    first = record.transcript.exchanges[0]
    assert len(first.attempts or [None]) == attempts, first.attempts
    if outcome == "error":
        assert record.error is not None and record.error.cause == why and record.score is None
    else:
        assert why in ids(record) or (why == "transport.retried" and record.score == 100), ids(record)
        assert record.score is not None
    assert result.gate()[0] == code


def test_an_empty_stream_is_the_providers_fault() -> None:
    record, _ = one("empty-stream", stream=True)
    assert record.outcome == "fail" and "wire.empty_stream" in ids(record)


def test_a_drip_is_cut_at_the_total_deadline() -> None:
    record, _ = one("drip")
    assert record.error is not None and "within the 3 s deadline" in record.error.message


def test_the_cli_exits_with_the_code_of_the_outcome(tmp_path: Path) -> None:
    config = tmp_path / "harness.toml"
    config.write_text(
        "[targets.down]\n"
        'format = "openai-chat"\nmodel = "sim-conformant"\nbase_url = "sim~unavailable"\n'
        "retries = 1\nretry_max_wait_s = 0.1\n"
    )
    out = harness(
        "run",
        "--live",
        "-t",
        "down",
        "-s",
        "weather.single.paris",
        "--config",
        config,
        "--out",
        tmp_path / "o",
    )
    assert out.returncode == 4, out.stderr
    assert "could not be tested" in out.stderr and "error" in out.stderr


def start(args: list[str], cwd: Path = REPO) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "harness", *args]
    return subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_ctrl_c_stops_new_work_cuts_requests_in_flight_and_writes_what_finished(tmp_path: Path) -> None:
    config = tmp_path / "harness.toml"
    config.write_text(
        '[targets.stuck]\nformat = "openai-chat"\nmodel = "sim-conformant"\nbase_url = "sim~slow"\n'
        "timeout_s = 120.0\n"
    )
    args = [
        "run",
        "--live",
        "-t",
        "sim-openai",
        "-t",
        "stuck",
        "--config",
        str(config),
        "--out",
        str(tmp_path / "o"),
    ]
    process = start([*args, "-s", "weather.single.paris", "-s", "time.single.tokyo", "--concurrency", "2"])
    assert process.stderr is not None
    lines = []
    for line in process.stderr:  # blocks until the harness says a run finished: an event, not a sleep
        lines.append(line)
        if "sim-openai" in line and line.startswith(("pass", "fail")):
            break
    process.send_signal(signal.SIGINT)
    code = process.wait(timeout=60)  # the stuck request is cut, not left to its 30 s
    rest = process.stderr.read()
    assert code == 130, "".join(lines) + rest
    assert "interrupted" in rest and "--resume" in rest
    (folder,) = (tmp_path / "o" / "runs").iterdir()
    manifest = json.loads((folder / "run.json").read_text())
    assert manifest["status"] == "interrupted"
    report = json.loads((folder / "report.json").read_text())
    assert report["runs"] and all(r["target"] == "sim-openai" for r in report["runs"])
    assert not (tmp_path / "o" / "report.json").exists()  # nothing published for an unfinished run


@pytest.mark.parametrize(
    ("left", "done"),
    [
        ("two lines", 2),  # killed after two runs
        ("two lines and a third cut short", 2),  # killed while writing the third: it runs again
        ("three lines, the last without its line end", 3),  # a whole run: kept, not run again
    ],
)
def test_resume_continues_a_run_without_redoing_what_finished(tmp_path: Path, left: str, done: int) -> None:
    out = tmp_path / "o"
    first = harness("run", "-t", "sim-openai", "-s", "weather.*", "--out", out)
    assert first.returncode == 0
    (folder,) = (out / "runs").iterdir()
    lines = (folder / "results.jsonl").read_text().splitlines()
    written = {
        "two lines": "\n".join(lines[:2]) + "\n",
        "two lines and a third cut short": "\n".join(lines[:2]) + "\n" + lines[2][:300],
        "three lines, the last without its line end": "\n".join(lines[:3]),
    }[left]
    (folder / "results.jsonl").write_text(written)
    manifest = json.loads((folder / "run.json").read_text())
    (folder / "run.json").write_text(json.dumps({**manifest, "status": "running"}))
    resumed = harness("run", "--resume", "--out", out)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{done} done, {4 - done} to go" in resumed.stderr
    results = (out / "results.jsonl").read_text().splitlines()
    assert len(results) == 4 and results[:done] == lines[:done]
    assert json.loads((folder / "run.json").read_text())["status"] == "complete"


SECRET_KEY = "sk-live-TOPSECRET-4242"
SECRET_PASSWORD = "pa55-HIDDEN-word"
SECRET_HEADER = "team-token-INVISIBLE-77"
SECRET_ENV = "mcp-SECRET-value-99"


def test_secrets_never_reach_any_written_byte(tmp_path: Path) -> None:
    """Fake secrets in every place the issue names: the key (echoed by the server in a 401 body
    and header), a credential query parameter, userinfo in the base URL, a custom header, an MCP
    server's secret environment value printed on stderr. Every written file is searched."""
    from tests.helpers.echo_server import EchoServer

    with EchoServer() as echo:
        config = tmp_path / "harness.toml"
        config.write_text(
            "[targets.leaky]\n"
            'format = "openai-chat"\nmodel = "m"\napi_key_env = "LEAKY_KEY"\nretries = 0\n'
            f'base_url = "http://user:{SECRET_PASSWORD}@127.0.0.1:{echo.port}/v1?sig={SECRET_KEY}&code=abc12345"\n'
            f'headers = {{x-team-token = "{SECRET_HEADER}"}}\n'
        )
        scenario = tmp_path / "s" / "leak.yaml"
        scenario.parent.mkdir()
        scenario.write_text(
            "id: leak.mcp\ncategory: mcp\n"
            "mcp_servers:\n"
            "  leaky:\n"
            "    command: '{python}'\n"
            "    args: ['-c', 'import os,sys; sys.stderr.write(os.environ[\"LEAK\"]); sys.exit(3)']\n"
            "    secret_env: [LEAK]\n"
            "    timeout_s: 5\n"
            "tools: [get_weather, {mcp: leaky}]\n"
            "messages: [{role: user, content: hello}]\n"
            "expect: {}\n"
        )
        out = harness(
            "record",
            "-t",
            "leaky",
            "--scenarios",
            tmp_path / "s",
            "--config",
            config,
            "--cassettes",
            tmp_path / "c",
            "--out",
            tmp_path / "o",
            env={"LEAKY_KEY": SECRET_KEY, "LEAK": SECRET_ENV},
        )
    assert out.returncode in (0, 1, 4), out.stderr
    inputs = {config, scenario}
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p not in inputs]
    assert {"results.jsonl", "report.json", "report.md", "junit.xml", "leak.mcp.yaml"} <= {
        p.name for p in written
    }
    for path in written:
        data = path.read_bytes()
        for secret in (SECRET_KEY, SECRET_PASSWORD, SECRET_HEADER, SECRET_ENV):
            assert secret.encode() not in data, f"{secret} leaked into {path}"
    assert SECRET_KEY not in out.stdout + out.stderr
