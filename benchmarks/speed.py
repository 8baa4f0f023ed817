"""Speed and scale: every goal of the speed issue, each printed beside an anchor measured in the
same run (ratios hold from one machine to another; absolute times do not).

    python benchmarks/speed.py [--runs 500,5000] [--live-runs 200] [--only help,replay,...]

Parts (``--only`` picks some):

- ``help``: ``harness --help``, wall, beside ``python -c pass`` (goal: under 0.2 s).
- ``command``: ``harness run`` end to end as a user runs it (a fresh process, the default suite,
  every report, the run folder published), beside vcrpy's replay measured in the same sitting:
  CPU per interaction (goal: at most 0.4x vcrpy), wall (goal: under 3 s on an idle machine), the
  bytes written per run over every output (goal: at most 8 KB), whether
  ``harness report results.jsonl`` rebuilds the same reports, and where the time goes (start-up,
  pipeline, report building, each writer, publishing), from one more run of the command in a
  process that times its steps from outside.
- ``replay``: the default suite replayed in one process and through the forked workers, each
  round in a fresh process as ``harness run`` starts (libraries imported, caches in memory cold,
  the parse cache on disk warm): CPU per interaction (goal: at most 1 ms, and at most 0.5x the
  anchor), beside vcrpy's own replay of a small cassette through httpx (vcrpy's public
  ``use_cassette``, in this process); the time for 1,000 scenario-runs (goal: under 5 s).
- ``cassette``: one synthetic cassette of 5, 50 and 500 interactions replayed through the
  harness's cassette transport: CPU per interaction (goal: flat).
- ``runs``: ``--runs`` replayed runs (sim-openai's cassettes, repeated), each count in a fresh
  process: CPU per run and peak memory (goal: flat).
- ``scale`` (not in the default parts: minutes): ``harness run`` over a synthetic suite of
  ``--scale`` runs (10,000,100,000 by default: the bundled scenarios on as many aliases of the
  simulated targets as it takes, in a temporary harness.toml, their cassettes linked), every
  report: peak memory (goal: within 10 % from the smallest count to the largest) and CPU per run
  (goal: within 10 %).
- ``live``: 2-turn runs against a scripted uvicorn endpoint in its own process, 100 ms latency, 50
  and 500 concurrent (``--live-concurrency``): efficiency (ideal wall / wall; goal: at least 0.6
  at 50, 0.7 at 500) and CPU per exchange beside a bare shared ``httpx.Client`` sending as many
  requests from as many threads (goal: at most 1.5x); the medians of ``--live-rounds``
  interleaved rounds (one round moves by a third from the next). :mod:`live_pace` runs it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from live_pace import line  # beside this file: speed.py runs as a script

REPO = Path(__file__).resolve().parents[1]
# the commands are timed as a user's machine runs them, with the bytecode cache Python keeps by
# default: an environment that turns it off would time compiling the harness's source at each start
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
PARTS = ("help", "command", "replay", "cassette", "runs", "live")


def best_wall(command: list[str], rounds: int = 5) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, cwd=REPO)
        times.append(time.perf_counter() - started)
    return min(times)


def help_time() -> None:
    print("harness --help")
    bare = best_wall([sys.executable, "-c", "pass"])
    helped = best_wall([sys.executable, "-m", "harness", "--help"])
    line(
        "--help under 0.2 s", f"{helped * 1000:.0f} ms", f"python -c pass: {bare * 1000:.0f} ms", helped < 0.2
    )


def vcrpy_anchor(rounds: int = 300) -> float:
    """CPU ms per request of vcrpy's own replay of a small cassette, through an httpx client."""
    import httpx
    import vcr
    import yaml

    path = REPO / "cassettes" / "sim-openai" / "weather.single.paris.yaml"
    interactions = yaml.load(path.read_text(), Loader=yaml.CSafeLoader)["interactions"]
    recorder = vcr.VCR(record_mode="none", match_on=["method", "path", "body"])
    client = httpx.Client()  # one client, as the harness has one transport per endpoint

    def replayed() -> int:
        with recorder.use_cassette(str(path)):
            for interaction in interactions:
                request = interaction["request"]
                client.request(request["method"], request["uri"], content=request["body"].encode()).read()
        return len(interactions)

    replayed()  # warm: what vcrpy imports and builds on its first use is not a replay's cost
    started, count = time.process_time(), 0
    for _ in range(rounds):
        count += replayed()
    return (time.process_time() - started) * 1000 / count


def replay_goals(per: float, anchor: float) -> None:
    """The two replay goals for ``per`` ms of CPU an interaction, beside vcrpy's ``anchor``."""
    line("CPU per interaction at most 1 ms", f"{per:.2f} ms", "", per <= 1.0)
    line(
        "at most 0.5x vcrpy's small-cassette replay",
        f"{per / anchor:.2f}x",
        f"vcrpy: {anchor:.2f} ms per request",
        per / anchor <= 0.5,
    )


STEPS_CHILD = """
import json, sys
import harness.reports, harness.results
from harness import api
import importlib
run_command = importlib.import_module("harness.cli.run")
sys.path.insert(0, "benchmarks")  # the command runs from the repository
from live_pace import cpu_now as cpu  # this process and its forked workers

steps = {}
marks = []  # the CPU when the first timed step started: what start-up took

def timed(name, fn):
    def wrapper(*args, **kwargs):
        started = cpu()
        marks.append(started)
        try:
            return fn(*args, **kwargs)
        finally:
            steps[name] = steps.get(name, 0.0) + cpu() - started
    return wrapper

api.run = timed("pipeline (the runs, results written)", api.run)
run_command.build_report = timed("report building", run_command.build_report)
writer = harness.reports.writer
harness.reports.writer = lambda name: timed(f"writing {name}", writer(name))
harness.results.RunFolder.finish = timed("publishing to the out folder", harness.results.RunFolder.finish)
sys.argv = ["harness", "run", "--out", sys.argv[1]]
try:
    from harness.cli import main
    main()
except SystemExit:
    pass
total = cpu()
steps = {"start-up (imports, scenarios, targets)": marks[0], **steps}
steps["other (table, gate)"] = total - sum(steps.values())
sys.stderr.write("STEPS " + json.dumps({"total": total, "steps": steps}) + "\\n")
"""
"""``harness run`` in this process with each of its steps timed (CPU of the process and its forked
workers): the command as it runs, its functions wrapped from outside."""


def run_command(out: Path) -> tuple[float, float]:
    """``harness run --out out`` in a fresh process: its CPU (with its workers) and wall seconds."""
    before, wall = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run([sys.executable, "-m", "harness", "run", "--out", str(out)], capture_output=True, cwd=REPO)
    after, wall = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter() - wall
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, wall


def written(out: Path) -> dict[str, int]:
    """The bytes of each output of a run under ``out`` (a file published twice, linked, once)."""
    seen, sizes = set(), {}
    for path in sorted(out.rglob("*")):
        stat = path.stat()
        if path.is_file() and path.name != "run.lock" and (stat.st_dev, stat.st_ino) not in seen:
            seen.add((stat.st_dev, stat.st_ino))
            name = path.parent.name + "/" if path.parent.name.endswith("-files") else path.name
            sizes[name] = sizes.get(name, 0) + stat.st_size
    return sizes


def whole_command(rounds: int = 3) -> None:
    print("harness run, end to end (a fresh process each round, every report; the medians of 3 rounds)")
    anchor = vcrpy_anchor()
    with tempfile.TemporaryDirectory() as tmp:
        run_command(Path(tmp) / "warm")  # the parse cache of the cassettes, on disk as a user's is
        figures = [run_command(Path(tmp) / f"r{i}") for i in range(rounds)]
        out = Path(tmp) / "r0"
        report = json.loads((out / "report.json").read_text(encoding="utf-8"))
        runs, interactions = len(report["runs"]), sum(run["turns"] for run in report["runs"])
        cpu, wall = statistics.median(c for c, _ in figures), statistics.median(w for _, w in figures)
        per = cpu * 1000 / interactions
        print(f"  {runs} runs, {interactions} interactions: {cpu:.2f} s CPU, {wall:.2f} s wall")
        line(
            "CPU per interaction at most 0.4x vcrpy",
            f"{per / anchor:.2f}x ({per:.2f} ms)",
            f"vcrpy: {anchor:.2f} ms per request",
            per / anchor <= 0.4,
        )
        line(
            "wall under 3 s (on an idle machine)", f"{wall:.2f} s", f"load {os.getloadavg()[0]:.1f}", wall < 3
        )
        sizes = written(out)
        total = sum(sizes.values())
        shown = ", ".join(
            f"{name} {size / 1e6:.1f} MB" for name, size in sorted(sizes.items(), key=lambda i: -i[1])
        )
        line(
            "at most 8 KB written per run", f"{total / runs / 1024:.1f} KB", shown[:60], total / runs <= 8192
        )
        print(f"    every output: {shown}")
        rebuilt = Path(tmp) / "rebuilt"
        subprocess.run(
            [sys.executable, "-m", "harness", "report", str(out / "results.jsonl"), "--out", str(rebuilt)],
            check=True,
            capture_output=True,
            cwd=REPO,
        )
        names = ("report.json", "report.md", "junit.xml")
        same = all(_without_date(rebuilt / n) == _without_date(out / n) for n in names)
        line(
            "harness report rebuilds the same reports",
            "same" if same else "DIFFERENT",
            ", ".join(names),
            same,
        )
        steps_out = subprocess.run(
            [sys.executable, "-c", STEPS_CHILD, str(Path(tmp) / "steps")],
            capture_output=True,
            text=True,
            cwd=REPO,
        ).stderr
    found = json.loads(next(x for x in steps_out.splitlines() if x.startswith("STEPS "))[6:])
    print(f"  where the CPU goes (one more run, its steps timed: {found['total']:.2f} s CPU in all)")
    for name, seconds in found["steps"].items():
        print(f"    {name:<44} {seconds:6.2f} s  {seconds / found['total']:4.0%}")
    # what the goal would leave if start-up and every report cost nothing: the runs alone
    alone = found["steps"]["pipeline (the runs, results written)"] * 1000 / interactions
    print(f"    the runs alone: {alone:.2f} ms an interaction, {alone / anchor:.2f}x vcrpy (a floor)")


def _without_date(path: Path) -> bytes:
    """A report's bytes without the time it was generated (the one thing a rebuild changes)."""
    import re

    return re.sub(rb'"generated_at": "[^"]*"|generated [0-9T:+-]+', b"", path.read_bytes())


REPLAY_CHILD = """
import importlib, json, sys, tempfile, time
from pathlib import Path
from harness import scenarios
from harness.api import run_targets
from harness.runner import RunConfig
from harness.runner.workers import WARM_IMPORTS
from harness.targets_file import load_targets

# imported before the clock starts, as the anchor's vcrpy is: forked workers inherit deepdiff, which
# `harness run` leaves to the worker that shows a diff (`--only command` times that, import included)
for name in ("deepdiff", *WARM_IMPORTS):
    importlib.import_module(name)
repo, processes = Path(sys.argv[1]), int(sys.argv[2])
suite = scenarios.load([repo / "scenarios"])
targets = [t for name, t in sorted(load_targets().items()) if (repo / "cassettes" / name).is_dir()]

sys.path.insert(0, str(repo / "benchmarks"))
from live_pace import cpu_now as cpu  # this process and its forked workers

with tempfile.TemporaryDirectory() as tmp:
    config = RunConfig(cassettes=repo / "cassettes", results=Path(tmp) / "r.jsonl", processes=processes)
    started, wall = cpu(), time.perf_counter()
    records = run_targets(targets, suite, config)
    used, wall = cpu() - started, time.perf_counter() - wall
    interactions = sum(len(r.transcript.exchanges) for r in records)
print(json.dumps({"runs": len(records), "interactions": interactions, "cpu": used, "wall": wall}))
"""


def replay_child(processes: int) -> dict[str, Any]:
    """One replay of the default suite in a fresh process, as ``harness run`` starts one."""
    command = [sys.executable, "-c", REPLAY_CHILD, str(REPO), str(processes)]
    out = subprocess.run(command, check=True, capture_output=True, text=True, cwd=REPO)
    found: dict[str, Any] = json.loads(out.stdout.splitlines()[-1])
    return found


def replay(rounds: int = 3) -> None:
    import harness.api  # noqa: F401  the anchor beside what the rounds import (a larger heap, rarer full collections)

    print("replay of the default suite (each round in a fresh process; the medians of 3 rounds)")
    anchor = vcrpy_anchor()
    replay_child(1)  # warm: the parse cache of the cassettes, kept on disk as harness run keeps it
    for label, processes in (("one process", 1), ("forked workers", 0)):
        found = [replay_child(processes) for _ in range(rounds)]
        runs, interactions = found[0]["runs"], found[0]["interactions"]
        cpu, wall = statistics.median(f["cpu"] for f in found), statistics.median(f["wall"] for f in found)
        print(f"  {label}: {runs} runs, {interactions} interactions, {cpu:.2f} s CPU, {wall:.2f} s wall")
        replay_goals(cpu * 1000 / interactions, anchor)
        thousand = wall * 1000 / runs
        line("1,000 scenario-runs under 5 s", f"{thousand:.2f} s", f"({runs} in {wall:.2f} s)", thousand < 5)
    replay_only(anchor)


def replay_only(anchor: float) -> None:
    """Every recorded request of the bundled cassettes sent again through the harness's cassette
    transport (load, match, play back through httpx): the replay without the agent loop, checks,
    scoring and results."""
    import httpx
    import yaml

    from harness.transport.cassette import CassetteTransport

    paths = sorted(p for p in (REPO / "cassettes").rglob("*.yaml") if not p.name.endswith(".mcp.yaml"))
    requests = []
    for path in paths:
        data = yaml.load(path.read_text(), Loader=yaml.CSafeLoader)
        requests.append(
            (
                path,
                [
                    (i["request"]["method"], i["request"]["uri"], i["request"]["body"])
                    for i in data["interactions"]
                ],
            )
        )
    started, count = time.process_time(), 0
    for path, interactions in requests:
        transport = CassetteTransport(path, mode="replay", target="t", scenario_id=path.stem)
        with httpx.Client(transport=transport) as client:
            for method, uri, body in interactions:
                client.request(method, uri, content=body.encode() if isinstance(body, str) else body).read()
                count += 1
    per = (time.process_time() - started) * 1000 / count
    print(f"  the replay alone: {len(paths)} cassettes, {count} interactions")
    replay_goals(per, anchor)


def synthetic_cassette(folder: Path, size: int) -> tuple[Path, list[bytes]]:
    """A cassette of ``size`` interactions, recorded through the harness's own transport."""
    import httpx

    from harness.transport.cassette import CassetteTransport

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, json={"choices": [{"message": {"content": "ok"}}], "echo": len(request.content)}
        )

    path = folder / f"c{size}.yaml"
    bodies = [
        json.dumps({"messages": [{"role": "user", "content": f"question {i}"}]}).encode() for i in range(size)
    ]
    transport = CassetteTransport(
        path, mode="record", target="t", scenario_id="s", inner=httpx.MockTransport(answer)
    )
    with httpx.Client(transport=transport, base_url="http://bench.invalid") as client:
        for body in bodies:
            client.post("/v1/chat/completions", content=body).read()
    transport.save()
    return path, bodies


def cassette() -> None:
    import httpx

    from harness.transport.cassette import CassetteTransport

    print("one cassette, growing")
    figures = {}
    with tempfile.TemporaryDirectory() as tmp:
        for size in (5, 50, 500):
            path, bodies = synthetic_cassette(Path(tmp), size)
            rounds = max(1, 2000 // size)
            started = time.process_time()
            for _ in range(rounds):
                transport = CassetteTransport(path, mode="replay", target="t", scenario_id="s")
                with httpx.Client(transport=transport, base_url="http://bench.invalid") as client:
                    for body in bodies:
                        client.post("/v1/chat/completions", content=body).read()
            figures[size] = (time.process_time() - started) * 1000 / (rounds * size)
    shown = ", ".join(f"{size}: {ms:.3f} ms" for size, ms in figures.items())
    ratio = figures[500] / figures[5]
    line("flat from 5 to 500 interactions", f"500/5 = {ratio:.2f}x", shown, ratio <= 1.5)


RUNS_CHILD = """
import json, sys, time
from pathlib import Path
from harness import scenarios
from harness.api import run_targets
from harness.reports import write_reports
from harness.runner import RunConfig
from harness.targets_file import load_targets
cassettes, repeats, results = Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
suite = scenarios.load([Path(sys.argv[4])])

def peak():  # VmHWM, not ru_maxrss: Linux carries ru_maxrss over an exec from the process that forked it
    status = Path("/proc/self/status").read_text().splitlines()
    return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))

started, wall = time.process_time(), time.perf_counter()
config = RunConfig(cassettes=cassettes, results=results, repeats=repeats, processes=1)
records = run_targets([load_targets()["sim-openai"]], suite, config)
cpu, wall, ran = time.process_time() - started, time.perf_counter() - wall, peak()
started = time.process_time()
write_reports(records, results.parent / "out")  # every report, as harness run writes them
reports = time.process_time() - started
print(json.dumps({"runs": len(records), "cpu": cpu, "wall": wall, "rss_kb": ran, "reports_cpu": reports,
                  "reports_rss_kb": peak()}))
"""


def runs(counts: list[int]) -> None:
    from harness.tools.mcp.session import recording_path
    from harness.transport.cassette import cassette_path

    print("many runs (sim-openai's recordings, repeated; one process)")
    source = REPO / "cassettes" / "sim-openai"
    per_repeat = len(list(source.glob("*.yaml"))) - len(list(source.glob("*.mcp.yaml")))
    figures = {}
    with tempfile.TemporaryDirectory() as tmp:
        for count in counts:
            repeats = max(1, round(count / per_repeat))
            folder = Path(tmp) / f"c{count}"
            for repeat in range(repeats):
                for file in source.glob("*.yaml"):
                    scenario = file.name.removesuffix(".yaml").removesuffix(".mcp")
                    target = cassette_path(folder, "sim-openai", scenario, repeat)
                    if file.name.endswith(".mcp.yaml"):
                        target = recording_path(target)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    os.link(file, target)
            out = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    RUNS_CHILD,
                    str(folder),
                    str(repeats),
                    str(Path(tmp) / f"r{count}.jsonl"),
                    str(REPO / "scenarios"),
                ],
                check=True,
                capture_output=True,
                text=True,
                cwd=REPO,
            )
            figures[count] = json.loads(out.stdout.splitlines()[-1])
            shutil.rmtree(folder)
    for found in figures.values():
        print(
            f"  {found['runs']} runs: {found['cpu'] * 1000 / found['runs']:.2f} ms CPU per run, "
            f"{found['wall']:.1f} s wall, peak {found['rss_kb'] / 1024:.0f} MB; then every report: "
            f"{found['reports_cpu'] * 1000 / found['runs']:.2f} ms CPU per run, "
            f"peak {found['reports_rss_kb'] / 1024:.0f} MB"
        )
    low, high = figures[counts[0]], figures[counts[-1]]
    cost = (high["cpu"] / high["runs"]) / (low["cpu"] / low["runs"])
    line(f"CPU per run flat, {low['runs']} -> {high['runs']} runs", f"{cost:.2f}x", "", cost <= 1.2)
    for label, key in (("the run", "rss_kb"), ("the run and its reports", "reports_rss_kb")):
        grow = (high[key] - low[key]) / (high["runs"] - low["runs"])
        line(
            f"memory flat in the number of runs: {label}",
            f"+{grow:.1f} KB per run",
            f"peak {low[key] / 1024:.0f} -> {high[key] / 1024:.0f} MB",
            grow < 1.0,
        )


SCALE_CHILD = """
import json, resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True)
used = resource.getrusage(resource.RUSAGE_CHILDREN)  # the command and every worker it forked
if done.returncode not in (0, 1):  # 1: a run failed (a simulated deviation); anything else is broken
    sys.exit(done.stderr.decode()[-2000:])
print(json.dumps({"code": done.returncode, "cpu": used.ru_utime + used.ru_stime, "peak_kb": used.ru_maxrss}))
"""
"""A command run from a fresh process, so that its peak memory (the largest of its processes) and
CPU are its own."""


def toml_value(value: Any) -> str:
    """``value`` (as tomllib reads it) written back as TOML."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(value)  # strings, numbers and booleans are written alike


def scale(counts: list[int]) -> None:
    """``harness run`` over synthetic suites of about ``counts`` runs: the bundled scenarios on
    aliases of the simulated targets (a temporary harness.toml, each alias's cassettes a link to
    its target's), every report written."""
    import tomllib

    bundled = tomllib.loads((REPO / "harness" / "targets.toml").read_text(encoding="utf-8"))["targets"]
    sims = {n: t for n, t in bundled.items() if n.startswith("sim-") and (REPO / "cassettes" / n).is_dir()}
    scenarios = len(list((REPO / "scenarios").rglob("*.yaml")))
    print(f"scale: harness run over synthetic suites ({len(sims)} simulated targets, aliased; every report)")
    figures = {}
    with tempfile.TemporaryDirectory() as tmp:
        for count in counts:
            copies = max(1, round(count / (len(sims) * scenarios)))
            folder = Path(tmp) / f"s{count}"
            (folder / "cassettes").mkdir(parents=True)
            toml = []
            for copy in range(copies):
                for name, fields in sims.items():
                    alias = f"{name}-copy{copy}"
                    (folder / "cassettes" / alias).symlink_to(REPO / "cassettes" / name)
                    toml.append(f'[targets."{alias}"]')
                    toml += [f"{json.dumps(key)} = {toml_value(value)}" for key, value in fields.items()]
            (folder / "harness.toml").write_text("\n".join(toml) + "\n", encoding="utf-8")
            command = [sys.executable, "-m", "harness", "run", "--config", str(folder / "harness.toml")]
            command += [
                "--cassettes",
                str(folder / "cassettes"),
                "--out",
                str(folder / "out"),
                "-t",
                "*-copy*",
            ]
            wall = time.perf_counter()
            out = subprocess.run(
                [sys.executable, "-c", SCALE_CHILD, *command], capture_output=True, text=True, cwd=REPO
            )
            if out.returncode:
                raise SystemExit(f"harness run failed: {out.stderr}")
            wall = time.perf_counter() - wall
            found = json.loads(out.stdout.splitlines()[-1])
            with (folder / "out" / "results.jsonl").open("rb") as results:
                runs = sum(1 for _ in results)
            figures[count] = {**found, "runs": runs, "wall": wall}
            print(
                f"  {runs} runs: {found['cpu'] * 1000 / runs:.2f} ms CPU per run, {wall:.0f} s wall, "
                f"peak {found['peak_kb'] / 1024:.0f} MB (exit {found['code']})"
            )
            shutil.rmtree(folder)
    low, high = figures[counts[0]], figures[counts[-1]]
    cost = (high["cpu"] / high["runs"]) / (low["cpu"] / low["runs"])
    line(  # cheaper at scale (start-up and the fixed report work spread over more runs) is met
        f"CPU per run at most 10 % more, {low['runs']} -> {high['runs']}",
        f"{cost:.2f}x",
        "cheaper at scale" if cost < 0.9 else "",
        cost <= 1.1,
    )
    grow = high["peak_kb"] / low["peak_kb"]
    line(
        "memory within 10 %",
        f"{grow:.2f}x",
        f"peak {low['peak_kb'] / 1024:.0f} -> {high['peak_kb'] / 1024:.0f} MB",
        grow <= 1.1,
    )


def live(count: int, rounds: int, concurrencies: list[int]) -> None:
    """The live part, at each concurrency (:mod:`live_pace`): at least 4 batches of runs each."""
    from live_pace import live as live_at

    for concurrency in concurrencies:
        live_at(max(count, 4 * concurrency), rounds, concurrency)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", default="500,5000", help="Run counts for the scale part (comma-separated).")
    parser.add_argument("--scale", default="10000,100000", help="Run counts for the scale part.")
    parser.add_argument("--live-runs", type=int, default=200)
    parser.add_argument("--live-rounds", type=int, default=5, help="Live rounds; the medians are shown.")
    parser.add_argument("--live-concurrency", default="50,500", help="Live concurrencies (comma-separated).")
    parser.add_argument("--only", default=",".join(PARTS), help="Parts (also: scale, not run by default).")
    args = parser.parse_args()
    chosen = args.only.split(",")
    if chosen != ["live"]:
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores")
    if "help" in chosen:
        help_time()
    if "command" in chosen:
        whole_command()
    if "replay" in chosen:
        replay()
    if "cassette" in chosen:
        cassette()
    if "runs" in chosen:
        runs([int(n) for n in args.runs.split(",")])
    if "scale" in chosen:
        scale([int(n) for n in args.scale.split(",")])
    if chosen == ["live"]:
        live(args.live_runs, args.live_rounds, [int(n) for n in args.live_concurrency.split(",")])
    elif "live" in chosen:  # in a fresh process, as `harness run` starts: a worker forked from a
        # process grown by the other parts would pay for copying its memory
        sys.stdout.flush()
        command = [sys.executable, __file__, "--only", "live", "--live-runs", str(args.live_runs)]
        command += ["--live-rounds", str(args.live_rounds), "--live-concurrency", args.live_concurrency]
        subprocess.run(command, check=True, cwd=REPO)


if __name__ == "__main__":
    main()
