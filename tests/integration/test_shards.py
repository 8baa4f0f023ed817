"""Sharding across CI jobs: `harness run --shard K/N` runs a stable share of the (target,
scenario) pairs and `harness merge` puts the shards back together into the report one unsharded
run writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.runner import Shard
from tests.helpers.cli import harness

SELECTION = ["-t", "sim-*", "-t", "local-gemma3-270m", "-s", "single", "-s", "parallel", "-s", "error"]


def report(folder: Path) -> dict[str, object]:
    built = json.loads((folder / "report.json").read_text())
    built.pop("generated_at")
    return built


def keys(folder: Path) -> set[tuple[str, str, int]]:
    lines = (folder / "results.jsonl").read_text().splitlines()
    return {(r["target"]["name"], r["scenario"], r["repeat"]) for r in map(json.loads, lines)}


def history(path: Path) -> list[dict[str, Any]]:
    listed = harness("history", "--db", path, "--json")
    assert listed.returncode == 0, listed.stderr
    runs: list[dict[str, Any]] = json.loads(listed.stdout)
    return runs


def test_three_shards_merged_make_the_unsharded_report(tmp_path: Path) -> None:
    """The merged run is one run in the history, with the unsharded run's figures, rebuilt by
    `harness history import` as it was written; the shards are not kept there."""
    kept = tmp_path / "history.sqlite"
    whole = harness("run", *SELECTION, "--out", tmp_path / "whole", "--history", kept)
    assert whole.returncode == 0, whole.stderr
    shards = [tmp_path / f"shard-{k}" for k in (1, 2, 3)]
    for k, folder in enumerate(shards, 1):
        ran = harness("run", *SELECTION, "--shard", f"{k}/3", "--out", folder, "--history", kept)
        assert ran.returncode == 0, ran.stderr
        assert f"shard {k}/3: {len(keys(folder))} of them" in ran.stderr
    assert len(history(kept)) == 1  # the shards are parts of a run
    parts = [keys(folder) for folder in shards]
    assert all(parts) and sum(map(len, parts)) == len(set().union(*parts))  # each has some, none shared
    assert set().union(*parts) == keys(tmp_path / "whole")
    merged = harness("merge", *shards, "--out", tmp_path / "merged", "--history", kept)
    assert merged.returncode == 0, merged.stderr
    assert report(tmp_path / "merged") == report(tmp_path / "whole")
    assert keys(tmp_path / "merged") == keys(tmp_path / "whole")
    (folder,) = (tmp_path / "merged" / "runs").iterdir()
    manifest = json.loads((folder / "run.json").read_text())
    assert manifest["status"] == "complete" and manifest["mode"] == "replay"
    assert len(manifest["merged_from"]) == 3 and manifest["started"] <= folder.name[:16]
    runs = history(kept)
    assert [r["run_id"] for r in runs][-1] == folder.name and len(runs) == 2

    def figures(db: Path) -> list[Any]:
        shown = harness("history", "--db", db, "--target", "sim-openai", "--json")
        assert shown.returncode == 0, shown.stderr
        runs: list[Any] = json.loads(shown.stdout)["runs"]
        return [{k: v for k, v in r.items() if k not in ("run_id", "started")} for r in runs]

    first, second = figures(kept)
    assert first == second  # the merged run's figures are the unsharded run's
    rebuilt = tmp_path / "rebuilt.sqlite"
    sharded = [folder / "runs" for folder in shards]
    imported = harness("history", "import", *sharded, tmp_path / "merged" / "runs", "--db", rebuilt)
    assert imported.returncode == 0, imported.stderr
    assert "of a run; its `harness merge` run is kept" in imported.stdout + imported.stderr
    assert [r["run_id"] for r in history(rebuilt)] == [folder.name]
    part = harness("merge", *shards[:2], "--out", tmp_path / "part", "--history", tmp_path / "part.sqlite")
    assert part.returncode == 0, part.stderr
    assert "not kept in the history: the shards 1/3, 2/3 are not every shard of one run" in part.stderr
    assert not (tmp_path / "part.sqlite").exists()
    resumed = harness("run", "--out", tmp_path / "merged", "--resume", folder.name)
    assert resumed.returncode == 2 and "a merged run, not one to resume" in resumed.stderr

    into_shard = harness("merge", *shards, "--out", shards[0])  # the first shard's own results file
    assert into_shard.returncode == 0, into_shard.stderr
    assert report(shards[0]) == report(tmp_path / "whole") and keys(shards[0]) == keys(tmp_path / "whole")

    twice = harness("merge", shards[0], shards[0], "--out", tmp_path / "bad")
    assert twice.returncode != 0 and "these are not shards of one run" in twice.stderr


def test_a_pair_keeps_its_shard_whatever_else_is_run() -> None:
    shard = Shard.parse("2/5")
    assert str(shard) == "2/5"
    held = {(t, s) for t in ("a", "b") for s in ("x", "y", "z") if shard.holds(t, s)}
    assert held == {(t, s) for t in ("a", "b", "c") for s in ("x", "y", "z", "w") if shard.holds(t, s)} & {
        (t, s) for t in ("a", "b") for s in ("x", "y", "z")
    }
    counts = [
        sum(Shard(k, 4).holds(f"t{i}", f"s{j}") for i in range(20) for j in range(50)) for k in range(1, 5)
    ]
    assert sum(counts) == 1000 and min(counts) > 200  # every pair in exactly one shard, spread evenly


def test_a_bad_shard_is_refused_before_anything_runs(tmp_path: Path) -> None:
    for bad in ("0/3", "4/3", "two/3"):
        out = harness("run", "-t", "sim-openai", "--shard", bad, "--out", tmp_path / "o")
        assert out.returncode != 0 and "expected K/N with 1 <= K <= N" in out.stderr, out.stderr
        assert not (tmp_path / "o").exists()
