"""A live run with no limit configured finds the pace of a provider limited to N requests a minute
(the simulator's ``requests-per-minute:<N>`` fault): every run completes, at 80 % of N or more."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx

from harness.api import load_scenarios, run
from harness.runner import RunConfig
from harness.servers.sim.server import SimServer
from harness.targets import Target
from tests.helpers.cli import REPO, harness

PARIS = load_scenarios(REPO / "scenarios", select=["weather.single.paris"])  # two requests a run
PER_MINUTE = 1200  # 20 a second
RUNS = 80  # 160 requests: about 8 s at the limit


def test_a_live_run_keeps_to_a_limit_it_was_not_told() -> None:
    """The pace is measured from the first run's end to the last's (the harness's start-up is not
    the provider's pace), less the simulator's first burst (its bucket starts full); the
    simulator itself holds the limit (429 above it)."""
    target = Target.build(
        "paced",
        format="openai-chat",
        model="sim-conformant",
        base_url=f"sim~requests-per-minute:{PER_MINUTE}",
        concurrency=64,  # far more in flight than the limit allows
    )
    ended: list[float] = []
    config = RunConfig(mode="live", repeats=RUNS, concurrency=1000)
    result = run(PARIS, [target], config, on_result=lambda record: ended.append(time.monotonic()))
    assert len(result.records) == RUNS
    assert {r.outcome for r in result.records} == {"pass"}, [r.error for r in result.records if r.error]
    assert sum(len(r.transcript.exchanges) for r in result.records) == 2 * RUNS
    refused = sum(
        1 for r in result.records for e in r.transcript.exchanges for a in e.attempts or [] if a.status == 429
    )
    burst = PER_MINUTE / 60
    window = ended[-1] - ended[0]
    pace = (2 * (RUNS - 1) - burst) * 60 / window
    assert pace >= 0.8 * PER_MINUTE, f"{pace:.0f} a minute over {window:.1f} s ({refused} refused)"
    assert result.paces["paced"]["backoffs"] >= 1


def test_the_command_shows_and_keeps_the_pace(tmp_path: Path) -> None:
    """``harness run`` takes --concurrency past 64, says what the provider's limit made of the pace,
    and keeps it in the run's run.json."""
    config = tmp_path / "harness.toml"
    config.write_text(
        '[targets.paced]\nformat = "openai-chat"\nmodel = "sim-conformant"\n'
        'base_url = "sim~requests-per-minute:120"\nconcurrency = 8\n'
    )
    args = ["--config", config, "--out", tmp_path / "o", "-s", "weather.single.paris"]
    done = harness("run", "--live", "-t", "paced", "--repeat", "3", "--concurrency", "1000", *args)
    assert done.returncode == 0, done.stderr
    assert "paced: paced to its provider's limit:" in done.stderr
    (folder,) = (tmp_path / "o" / "runs").iterdir()
    pace = json.loads((folder / "run.json").read_text())["paces"]["paced"]
    assert pace["backoffs"] >= 1 and pace["lowest_per_minute"] > 0


def test_the_simulator_s_budget_refuses_above_its_limit_with_retry_after() -> None:
    with SimServer(PARIS) as sim:
        url = f"http://127.0.0.1:{sim.port}/openai-chat~requests-per-minute:60/v1/chat/completions"
        body = {
            "model": "sim-conformant",
            "messages": [{"role": m.role, "content": m.content} for m in PARIS[0].messages],
        }
        first = httpx.post(url, json=body)
        second = httpx.post(url, json=body)  # one a second, a burst of one: refused
        bad = httpx.post(url.replace(":60/", ":lots/"), json=body)
    assert first.status_code == 200
    assert first.headers["x-ratelimit-limit-requests"] == "1"
    assert first.headers["x-ratelimit-remaining-requests"] == "0"
    assert second.status_code == 429
    assert second.headers["retry-after"] == "1"
    assert bad.status_code == 404 and "requests-per-minute:<requests a minute>" in bad.text
