"""The measured capability grid in shapes other tools read: LiteLLM's model map, and the full
grid as JSON, each dated and tiered.

Agents gate tool use on LiteLLM's hand-written flags (``supports_function_calling``,
``supports_parallel_function_calling``, ``supports_tool_choice`` in its
``model_prices_and_context_window.json``), and those are often wrong. :func:`litellm_map`
writes the flags the runs measured under the keys LiteLLM defines, one entry per
``<litellm provider>/<model>`` (the name a LiteLLM user calls), so ``litellm.register_model``
takes it as it is. Nothing is invented under LiteLLM's names: the harness's own facts (the
date, its version, the targets, the runs behind each flag and the tier) go in an ``x-harness``
block under the entry's ``metadata``, the free-form object LiteLLM's map already has (its
schema allows no other key: ``additionalProperties: false`` in LiteLLM's
tests/test_litellm/test_utils.py, https://github.com/BerriAI/litellm).

How a flag is decided from its cell of the grid (:mod:`harness.analysis.capabilities`):
``yes`` or ``partial`` (at least one run showed it) is ``true``, ``no`` (runs tested it and
none showed it) is ``false``, ``untested`` leaves the key out, so LiteLLM's own value stands.
``supports_tool_choice`` takes the worst of the forcing modes (``required``, ``none``, a named
tool): a mode the endpoint refuses or ignores in every run makes it ``false``.

The tier of an entry: ``verified`` when every run behind it was live or recorded, ``replayed``
when some came from cassettes, ``untested`` when no flag could be measured.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from harness._version import __version__
from harness.analysis.capabilities import Grid
from harness.errors import ConfigError
from harness.providers.litellm_names import litellm_mode, litellm_provider
from harness.records import RunRecord
from harness.results import run_manifest

Tier = Literal["verified", "replayed", "untested"]

FLAGS: dict[str, tuple[str, ...]] = {
    "supports_function_calling": ("native_calls",),
    "supports_parallel_function_calling": ("parallel_calls",),
    "supports_tool_choice": ("tool_choice_required", "tool_choice_named"),
}
"""LiteLLM's flag -> the grid's columns it is decided by (LiteLLM's model map, and
``litellm.supports_function_calling`` / ``supports_parallel_function_calling`` /
``litellm.utils.supports_tool_choice``, which read it)."""
SHOWN: dict[str, tuple[str, ...]] = {"supports_tool_choice": ("tool_choice_none",)}
"""Columns a flag's evidence shows without being decided by them. ``supports_tool_choice`` says
whether the ``tool_choice`` parameter may be sent (LiteLLM drops it where the flag is false), and
what it is sent for is forcing a call; a wire with no "none" (Bedrock Converse) still takes it,
so "none" is shown beside and cannot turn the flag off."""

WORST = ("no", "partial", "yes")
"""Cell values from worst to best (``untested`` decides nothing)."""


@dataclass(frozen=True)
class Provenance:
    """Where the measurement comes from: when the run started, the harness version that ran it,
    its run id (``reports/runs/<id>``) when known, and the results file read."""

    date: str
    harness_version: str
    run: str | None
    results: str

    def to_json(self) -> dict[str, Any]:
        return {"date": self.date, "harness_version": self.harness_version, "run": self.run}


def provenance(results: Path) -> Provenance:
    """The provenance of a results file: its run folder's ``run.json`` (beside it, or that of the
    run folder under ``runs/`` holding the same results), the version in the ``report.json``
    beside it; else the file's time and this harness's version."""
    manifest = run_manifest(results)
    report = _read_json(results.parent / "report.json")
    version = str(report.get("harness_version", __version__)) if report else __version__
    if manifest.get("started"):
        started = datetime.strptime(str(manifest["started"]), "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    else:
        started = datetime.fromtimestamp(results.stat().st_mtime, UTC)
    run = manifest.get("run_id")
    return Provenance(_iso(started), version, str(run) if run else None, str(results))


def _read_json(path: Path) -> dict[str, Any]:
    """A JSON object file's content; ``{}`` when there is none or it cannot be read (then the
    provenance falls back to what the results file itself says)."""
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, OSError):
        return {}
    return found if isinstance(found, dict) else {}


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def model_key(record: RunRecord) -> str | None:
    """The LiteLLM model name a run measured (``<provider>/<model>``), or ``None`` for a run in
    prompted mode: its calls were written as text, which says nothing of native tool calling."""
    target = record.target
    if target.mode != "native":
        return None
    return f"{litellm_provider(target.profile, target.format)}/{target.model}"


@dataclass
class _Model:
    """What is known of one LiteLLM model as runs are added."""

    provider: str
    formats: set[str] = field(default_factory=set)
    targets: set[str] = field(default_factory=set)
    modes: set[str] = field(default_factory=set)
    simulated: bool = False


def litellm_map(
    records: Iterable[RunRecord], source: Provenance, *, simulated: bool = False
) -> dict[str, dict[str, Any]]:
    """The measured flags of every model in ``records`` as a LiteLLM model map (see the module):
    ``{"<provider>/<model>": {"litellm_provider", "mode", "supports_...", "metadata":
    {"x-harness": {...}}}}``, keys sorted. Targets that LiteLLM would call by the same name (one
    model on two endpoints of one provider) are measured together: their runs make one entry,
    and ``x-harness.targets`` names them all.

    Simulated targets are left out unless ``simulated``: the simulator is no model. Even then a
    simulated target never shares an entry with a real one (a :class:`ConfigError` names both)."""
    grid = Grid()
    models: dict[str, _Model] = {}
    for record in records:
        key = model_key(record)
        target = record.target
        if key is None or (target.simulated and not simulated):
            continue
        model = models.setdefault(key, _Model(key.split("/", 1)[0], simulated=target.simulated))
        if model.simulated != target.simulated:
            both = ", ".join(sorted({*model.targets, target.name}))
            raise ConfigError(
                f"simulated and real targets would share {key} in the LiteLLM map ({both}): "
                "choose with --target"
            )
        model.formats.add(target.format)
        model.targets.add(target.name)
        if record.outcome != "error":  # as in the grid: a run the harness could not test decides nothing
            model.modes.add(record.mode)
        grid.add(record, under=key)
    cells = grid.result()["targets"]
    return {key: _entry(models[key], cells[key], source) for key in sorted(models)}


def _entry(model: _Model, cells: dict[str, dict[str, Any]], source: Provenance) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "litellm_provider": model.provider,
        "mode": litellm_mode(model.formats),
    }
    evidence: dict[str, dict[str, Any]] = {}
    for flag, columns in FLAGS.items():
        found = _combined(columns, cells, SHOWN.get(flag, ()))
        evidence[flag] = found
        if found["value"] != "untested":
            entry[flag] = found["value"] != "no"
    entry["metadata"] = {
        "x-harness": {
            **source.to_json(),
            "tier": _tier(model.modes, any(flag in entry for flag in FLAGS)),
            "targets": sorted(model.targets),
            "simulated": model.simulated,
            "evidence": evidence,
        }
    }
    return entry


def _combined(
    columns: tuple[str, ...], cells: dict[str, dict[str, Any]], shown: tuple[str, ...] = ()
) -> dict[str, Any]:
    """One flag's cell from its columns' cells: the worst tested value, with the runs of every
    tested column and the detail of each (named by its column when there are several), then the
    detail of each tested column in ``shown``, which decides nothing."""
    tested = {c: cells[c] for c in columns if cells[c]["value"] != "untested"}
    beside = {c: cells[c] for c in shown if cells[c]["value"] != "untested"}
    if not tested:
        return {"value": "untested", "detail": cells[columns[0]]["detail"], "runs": []}
    value = min((cell["value"] for cell in tested.values()), key=WORST.index)
    runs = sorted({run for cell in tested.values() for run in cell["runs"]})
    if len(columns) == 1 and not beside:
        return {"value": value, "detail": tested[columns[0]]["detail"], "runs": runs}
    details = [f"{column}: {cell['value']}, {cell['detail']}" for column, cell in tested.items()]
    details += [
        f"{column} (shown, not deciding): {cell['value']}, {cell['detail']}"
        for column, cell in beside.items()
    ]
    return {"value": value, "detail": "; ".join(details), "runs": runs}


def _tier(modes: set[str], measured: bool = True) -> Tier:
    """``verified`` when every tested run was live or recorded, ``replayed`` when some came from
    cassettes, ``untested`` when nothing was measured."""
    if not measured or not modes:
        return "untested"
    return "verified" if modes <= {"live", "record"} else "replayed"


def grid_json(records: Iterable[RunRecord], source: Provenance) -> dict[str, Any]:
    """The full grid (:func:`harness.analysis.capabilities.capabilities`) with an ``x-harness``
    block: the provenance and each target's tier."""
    grid = Grid()
    modes: dict[str, set[str]] = {}
    for record in records:
        seen = modes.setdefault(record.target.name, set())
        if record.outcome != "error":
            seen.add(record.mode)
        grid.add(record)
    tiers = {name: _tier(seen) for name, seen in sorted(modes.items())}
    return {"x-harness": {**source.to_json(), "tiers": tiers}, **grid.result()}
