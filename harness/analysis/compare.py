"""Compare two sets of results, and the committed baseline file CI compares a run against.

A result set is read from a results file (``results.jsonl``), a folder holding one
(``reports/``, ``reports/runs/<id>/``) or a baseline file. Either way it becomes one
:class:`Entry` per target x scenario: the worst outcome over its repeats, its score (the share of
its tested repeats that succeeded, as the headline counts them: see :mod:`harness.checks.scoring`), how
many runs were tested and succeeded, in how many runs each check failed, and the findings that
counted (check id + detail). Comparing two sets therefore gives the same answer whether a side
was read from the results file or from the baseline written from it.

:func:`compare` lists, per target, every change: a scenario or check that now fails
(``new failure``) or no longer does (``fixed``), a check that passed and now warns (``new
warning``), a score that moved, findings that appeared or went away, runs newly in ``error``
(and errors that went away). What counts as a **regression** (what ``harness run --baseline``
gates on, exit code 5): a scenario or check that passed and now fails, a check that passed and
now warns, a run newly in error, and a scenario's or target's score dropping by more
than ``tolerance`` points. A target's score is compared over the scenarios both sides scored (a
run in error has no score), so a run of a few scenarios can be held against a baseline of the
whole suite, and a new error is not also counted as a score change.

**Noise.** Every score change says whether it is outside the noise of the runs behind it: the
95 % interval of the change (Newcombe's, from each side's Wilson interval, see
:func:`harness.checks.scoring.difference`) holds no zero. When runs repeat (``--repeat k``: at least two
tested runs on both sides of every scenario compared), a change within the noise is listed but
does not gate: a scenario's or target's score drop, a check failing in more runs, and the
scenario's new failure all gate only outside it. With single runs (a replay, which is
deterministic) every change beyond the tolerance gates, and the noise is only shown.

The baseline file (:func:`write_baseline`, ``harness baseline``) is one JSON document with one
entry per line, sorted by target and scenario, keys in a fixed order, nothing that changes from
one run to the next (no time, no version, no latency): a re-recorded cassette shows in review as
the lines of the scenarios whose verdict changed::

    {"schema": "harness.baseline/2", "entries": [
    {"target": "local-gemma3-270m", "scenario": "time.single.tokyo", "category": "single", ...
    {"target": "sim-openai", "scenario": "weather.single.paris", "category": "single", ...
    ]}

each entry being ``{"target", "scenario", "category", "outcome", "score", "runs", "succeeded",
"failed": {check id: runs}, "warned": {check id: runs}, "findings": [[check id, detail], ...],
"cause"}`` (``cause``: why an ``error`` run could not be tested, else null). A version 1 baseline
held the older partial-credit scores and is refused with the command that writes it again.

Example::

    from harness.analysis.compare import compare, load

    comparison = compare(load("harness-baseline.json"), load("reports/results.jsonl"), tolerance=2)
    print("\\n".join(comparison.lines()))
    if comparison.regressions:
        raise SystemExit(5)
"""

from __future__ import annotations

import json
import os
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import msgspec

from harness.checks.scoring import Figure, difference, mean_score, record_score
from harness.errors import ConfigError
from harness.records import Outcome, RunRecord
from harness.results import RecordLog, open_results

BASELINE_SCHEMA = "harness.baseline/2"
"""The format version of a baseline file; another one is refused with this name."""
DEFAULT_BASELINE = "harness-baseline.json"
"""Where ``harness baseline`` writes by default (beside ``harness.toml``, to be committed)."""
DETAIL_LIMIT = 300
"""Longest finding detail kept (longer ones are cut, the same way on both sides of a comparison)."""
MAX_BASELINE_BYTES = 256 << 20
"""The largest baseline file read (one short line per target x scenario: a few megabytes)."""

Kind = Literal[
    "new error", "error gone", "new failure", "new warning", "fixed", "score", "new finding", "gone finding"
]
KINDS: tuple[Kind, ...] = (
    "new error",
    "error gone",
    "new failure",
    "new warning",
    "fixed",
    "score",
    "new finding",
    "gone finding",
)
"""The kinds of change, in the order a scenario's changes are listed."""
_COUNTED = (
    "new error",
    "error gone",
    "new failure",
    "new warning",
    "fixed",
    "score drop",
    "score rise",
    "new finding",
    "gone finding",
)
"""The order of the counts in a target's summary line."""
_WORST: dict[str, int] = {"pass": 0, "fail": 1, "error": 2}


@dataclass(frozen=True)
class Entry:
    """One target x scenario as compared (one line of a baseline file).

    ``outcome`` is the worst over the repeats (``error`` before ``fail`` before ``pass``),
    ``score`` the share of the tested repeats that succeeded, 0-100 (``None`` when none was
    tested), ``runs`` and ``succeeded`` how many repeats were tested and succeeded, ``failed``
    in how many tested repeats each failing check failed, ``warned`` in how many each check that
    failed in none warned, ``findings`` the failed findings that counted (check id, detail;
    findings of what the run never reached are left out), ``cause`` why the harness could not
    test when the outcome is ``error``.
    """

    target: str
    scenario: str
    category: str
    outcome: Outcome
    score: float | None
    runs: int = 0
    succeeded: int = 0
    failed: dict[str, int] = field(default_factory=dict)
    warned: dict[str, int] = field(default_factory=dict)
    findings: tuple[tuple[str, str], ...] = ()
    cause: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.target, self.scenario)


@dataclass(frozen=True)
class ResultSet:
    """The entries of one side of a comparison, by (target, scenario), and where they came from."""

    source: str
    entries: dict[tuple[str, str], Entry]

    def targets(self) -> list[str]:
        return sorted({target for target, _ in self.entries})

    def of(self, target: str) -> dict[str, Entry]:
        """The entries of one target, by scenario id."""
        return {s: e for (t, s), e in self.entries.items() if t == target}


@dataclass(frozen=True)
class Change:
    """One difference between the base and the new results of a target x scenario (x check).

    ``regression`` is true for what gates: a scenario or check newly failing, a check newly
    warning, a run newly in error, a score drop beyond the tolerance (with repeated runs: only
    outside the noise). ``noise`` is the 95 % interval of a score change, in points, where one
    was computed."""

    kind: Kind
    scenario: str
    text: str
    check: str | None = None
    before: Any = None
    after: Any = None
    regression: bool = False
    noise: tuple[float, float] | None = None

    def line(self) -> str:
        """``  ! new failure  weather.single.paris expect.final: fails now`` (``!``: a regression)."""
        mark = "!" if self.regression else " "
        return f"  {mark} {self.kind:<12} {self.subject()}: {self.text}"

    def subject(self) -> str:
        """What changed: the scenario, and the check when the change is a check's."""
        return f"{self.scenario} {self.check}" if self.check else self.scenario


@dataclass(frozen=True)
class TargetComparison:
    """One target compared: its score before and after (over the scenarios both sides scored),
    whether that drop is a regression, every change, and the scenarios only one side ran."""

    target: str
    before: float | None
    after: float | None
    regression: bool
    changes: tuple[Change, ...] = ()
    only_in_base: tuple[str, ...] = ()
    only_in_new: tuple[str, ...] = ()
    noise: tuple[float, float] | None = None
    repeated: bool = False

    def counts(self) -> dict[str, int]:
        """How many changes of each kind (score changes split into drops and rises), no zeros."""
        counts: dict[str, int] = defaultdict(int)
        for change in self.changes:
            if change.kind == "score":
                counts["score drop" if change.after < change.before else "score rise"] += 1
            else:
                counts[change.kind] += 1
        return dict(counts)

    def summary(self, tolerance: float) -> str:
        """``sim-openai: score 100 -> 95.83 (-4.17); 1 new failure, 1 new error``."""
        text = f"{self.target}: score {_number(self.before)} -> {_number(self.after)}"
        if self.before is not None and self.after is not None and self.before != self.after:
            text += f" ({_signed(self.after - self.before)}, {_noise(self.noise)}"
            text += f"; a regression beyond {_number(tolerance)} point(s))" if self.regression else ")"
        counts = self.counts()
        parts = [_plural(counts[kind], kind) for kind in _COUNTED if kind in counts]
        for side, scenarios in (("base", self.only_in_base), ("new", self.only_in_new)):
            if scenarios:
                parts.append(f"{len(scenarios)} scenario(s) only in {side}, not compared")
        return text + "; " + (", ".join(parts) if parts else "no change")


@dataclass(frozen=True)
class Comparison:
    """Base vs new: each target compared, the targets only one side has, and the tolerance the
    regressions were judged with.

    Example::

        comparison = compare(load("harness-baseline.json"), load("reports/results.jsonl"))
        for line in comparison.regressions:
            print(line)
    """

    base: str
    new: str
    tolerance: float
    targets: tuple[TargetComparison, ...]
    only_in_base: tuple[str, ...] = ()
    only_in_new: tuple[str, ...] = ()

    @property
    def regressions(self) -> list[str]:
        """Each regression as one line naming its target (empty: the gate passes)."""
        found = []
        for target in self.targets:
            if target.regression:
                found.append(
                    f"{target.target}: score {_number(target.before)} -> {_number(target.after)} "
                    f"({_signed((target.after or 0) - (target.before or 0))})"
                )
            found += [
                f"{target.target} {c.subject()}: {c.kind}: {c.text}" for c in target.changes if c.regression
            ]
        return found

    def lines(self) -> list[str]:
        """The comparison as text: a summary line per target, then its changes, then the totals."""
        lines: list[str] = []
        for target in self.targets:
            lines.append(target.summary(self.tolerance))
            lines += [change.line() for change in target.changes]
        for side, names in (("base", self.only_in_base), ("new", self.only_in_new)):
            if names:
                lines.append(f"{len(names)} target(s) only in {side}, not compared: {', '.join(names)}")
        lines.append(self.total())
        return lines

    def total(self) -> str:
        """The last line: how many regressions and fixes, with the tolerance used."""
        regressions = len(self.regressions)
        fixed = sum(1 for t in self.targets for c in t.changes if c.kind in ("fixed", "error gone"))
        tolerance = f"tolerance {_number(self.tolerance)} point(s)"
        verdict = f"{regressions} regression(s)" if regressions else "no regression"
        return f"{verdict}, {fixed} fix(es) in {len(self.targets)} target(s) compared ({tolerance})"

    def to_json(self) -> dict[str, Any]:
        """Everything :meth:`lines` says, as JSON data (``harness compare --json``)."""
        data = asdict(self)
        data["regressions"] = self.regressions
        for target, item in zip(self.targets, data["targets"], strict=True):
            item["counts"] = target.counts()
        return data


# -- building entries --------------------------------------------------------------------------


def entries(records: Iterable[RunRecord]) -> dict[tuple[str, str], Entry]:
    """One :class:`Entry` per target x scenario of ``records`` (repeats folded together)."""
    grouped: dict[tuple[str, str], list[RunRecord]] = defaultdict(list)
    for record in records:
        grouped[(record.target.name, record.scenario)].append(record)
    return {key: _entry(runs) for key, runs in sorted(grouped.items())}


def _entry(runs: Sequence[RunRecord]) -> Entry:
    worst = max(runs, key=lambda r: _WORST[r.outcome])
    tested = [r for r in runs if r.outcome != "error"]
    failed = Counter(c.id for r in tested for c in r.checks if c.status == "fail")
    warned = Counter(c.id for r in tested for c in r.checks if c.status == "warn" and c.id not in failed)
    findings = {
        (f.check_id, _clip(f.detail))
        for r in tested
        for f in r.findings()
        if not f.passed and not (f.evidence and f.evidence.get("not_reached"))
    }
    scores = [record_score(r) for r in tested]
    return Entry(
        target=runs[0].target.name,
        scenario=runs[0].scenario,
        category=runs[0].category,
        outcome=worst.outcome,
        score=mean_score(scores),
        runs=len(tested),
        succeeded=sum(1 for score in scores if score),
        failed={check: failed[check] for check in sorted(failed)},
        warned={check: warned[check] for check in sorted(warned)},
        findings=tuple(sorted(findings)),
        cause=worst.error.cause if worst.outcome == "error" and worst.error else None,
    )


def _clip(detail: str) -> str:
    """A detail on one line, cut at :data:`DETAIL_LIMIT` (a baseline line stays readable)."""
    text = " ".join(detail.split())
    return text if len(text) <= DETAIL_LIMIT else text[: DETAIL_LIMIT - 3] + "..."


def target_score(items: Iterable[Entry]) -> float | None:
    """A target's score from its entries: the mean over categories of the mean over scenarios
    (what the report shows for the same scenarios)."""
    by_category: dict[str, list[float | None]] = defaultdict(list)
    for entry in items:
        by_category[entry.category].append(entry.score)
    return mean_score(mean_score(scores) for _, scores in sorted(by_category.items()))


def _figure(items: Iterable[Entry]) -> tuple[float, float]:
    """A target's headline share and effective runs over ``items`` (see :class:`Figure`)."""
    groups: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for entry in items:
        groups[entry.category].append((entry.succeeded, entry.runs))
    figure = Figure(groups)
    return figure.share() or 0.0, figure.effective_runs() if figure.groups else 0.0


# -- reading and writing -----------------------------------------------------------------------


def from_records(records: Iterable[RunRecord], source: str = "this run") -> ResultSet:
    """A result set from run records in memory."""
    return ResultSet(source, entries(records))


def load(path: str | Path) -> ResultSet:
    """A result set from a results file, a folder holding ``results.jsonl`` (``reports/``,
    ``reports/runs/<id>/``) or a baseline file; anything else is a :class:`ConfigError`
    naming the path and what was expected."""
    path = Path(path)
    if path.is_dir():
        results = path / "results.jsonl"
        if not results.is_file():
            raise ConfigError(f"{path}: no results.jsonl in this folder (expected a run folder)")
        path = results
    if not path.exists():
        raise ConfigError(f"{path}: no such file (expected results.jsonl, a run folder or a baseline file)")
    with open_results(path) as handle:  # a FIFO or a device is refused here
        head = handle.read(200)
    if b'"' + BASELINE_SCHEMA.split("/")[0].encode() in head:
        return ResultSet(str(path), read_baseline(path))
    return ResultSet(str(path), entries(RecordLog.open(path)))


def render_baseline(items: Iterable[Entry]) -> str:
    """The baseline file's text: one entry per line, sorted, keys in a fixed order."""
    body = ",\n".join(
        json.dumps(asdict(entry), ensure_ascii=False) for entry in sorted(items, key=lambda e: e.key)
    )
    return f'{{"schema": "{BASELINE_SCHEMA}", "entries": [\n{body}\n]}}\n'


def write_baseline(records: Iterable[RunRecord], out: str | Path) -> list[Entry]:
    """Write the baseline file of ``records`` to ``out``; returns its entries."""
    items = list(entries(records).values())
    Path(out).write_text(render_baseline(items), encoding="utf-8")
    return items


class _Baseline(msgspec.Struct):
    schema: str
    entries: list[Any]


def read_baseline(path: str | Path) -> dict[tuple[str, str], Entry]:
    """The entries of a baseline file; a bad file is a :class:`ConfigError` naming the file, the
    line of the bad entry, its field and what was expected."""
    with open_results(path) as handle:
        if os.fstat(handle.fileno()).st_size > MAX_BASELINE_BYTES:
            raise ConfigError(f"{path}: larger than a baseline file ({MAX_BASELINE_BYTES >> 20} MiB at most)")
        raw = handle.read(MAX_BASELINE_BYTES + 1)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ConfigError(
            f"{path}:{line}: not a baseline file ({BASELINE_SCHEMA} JSON): byte 0x{raw[exc.start]:02x} "
            "is not UTF-8"
        ) from None
    try:
        document = msgspec.json.decode(text, type=_Baseline)
    except msgspec.DecodeError as exc:
        raise ConfigError(f"{path}: not a baseline file ({BASELINE_SCHEMA} JSON): {exc}") from None
    except RecursionError:
        raise ConfigError(
            f"{path}: not a baseline file ({BASELINE_SCHEMA} JSON): nested too deep to read"
        ) from None
    if document.schema != BASELINE_SCHEMA:
        older = (
            " (its scores are the older partial credit, not task success)"
            if document.schema.endswith("/1")
            else ""
        )
        raise ConfigError(
            f"{path}:1: baseline format {document.schema!r}{older}; this harness reads {BASELINE_SCHEMA!r}: "
            f"write it again with `harness baseline <results.jsonl> --out {path}` from the run it was "
            "made from (older results files are read) or from a new run"
        )
    found: dict[tuple[str, str], Entry] = {}
    for index, item in enumerate(document.entries):
        try:
            entry = msgspec.convert(item, Entry)
        except msgspec.ValidationError as exc:
            where = f"{path}:{_line_of(text, index, item)}"
            field_ = str(exc).rsplit("at `$.", 1)[-1].rstrip("`") if "at `$." in str(exc) else ""
            reason = str(exc).split(" - at ")[0]
            raise ConfigError(
                f"{where}: entries[{index}]{'.' + field_ if field_ else ''}: {reason} "
                "(an entry holds target, scenario, category, outcome pass|fail|error, score, runs, "
                "succeeded, failed, warned, findings, cause)"
            ) from None
        if entry.key in found:
            where = f"{path}:{_line_of(text, index, item)}"
            raise ConfigError(f"{where}: entries[{index}]: {entry.target} {entry.scenario} is listed twice")
        found[entry.key] = entry
    return found


def _line_of(text: str, index: int, raw: Any) -> int:
    """The line of entry ``index``: in a file as written (one entry per line) the line after the
    header, checked by its target and scenario; else the first line that names both."""
    lines = text.splitlines()
    names = [str(raw.get(k)) for k in ("target", "scenario")] if isinstance(raw, dict) else []
    if index + 1 < len(lines) and all(n in lines[index + 1] for n in names):
        return index + 2
    return next((n for n, line in enumerate(lines, 1) if names and all(x in line for x in names)), 1)


# -- comparing ---------------------------------------------------------------------------------


def compare(base: ResultSet, new: ResultSet, tolerance: float = 0.0) -> Comparison:
    """Every change from ``base`` to ``new``, per target; score drops of at most ``tolerance``
    points are listed but are not regressions."""
    base_targets, new_targets = set(base.targets()), set(new.targets())
    compared = tuple(
        _compare_target(name, base.of(name), new.of(name), tolerance)
        for name in sorted(base_targets & new_targets)
    )
    return Comparison(
        base=base.source,
        new=new.source,
        tolerance=tolerance,
        targets=compared,
        only_in_base=tuple(sorted(base_targets - new_targets)),
        only_in_new=tuple(sorted(new_targets - base_targets)),
    )


def _compare_target(
    name: str, base: dict[str, Entry], new: dict[str, Entry], tolerance: float
) -> TargetComparison:
    shared = sorted(set(base) & set(new))
    changes = [c for scenario in shared for c in _compare_entry(base[scenario], new[scenario], tolerance)]
    scored = [s for s in shared if base[s].score is not None and new[s].score is not None]
    before = target_score(base[s] for s in scored)
    after = target_score(new[s] for s in scored)
    repeated = bool(scored) and all(_repeated(base[s], new[s]) for s in scored)
    noise = _points(difference(_figure(base[s] for s in scored), _figure(new[s] for s in scored)))
    return TargetComparison(
        target=name,
        before=before,
        after=after,
        regression=_dropped(before, after, tolerance) and (not repeated or _outside(noise)),
        changes=tuple(
            sorted(changes, key=lambda c: (c.scenario, KINDS.index(c.kind), c.check or "", c.text))
        ),
        only_in_base=tuple(sorted(set(base) - set(new))),
        only_in_new=tuple(sorted(set(new) - set(base))),
        noise=noise,
        repeated=repeated,
    )


def _dropped(before: float | None, after: float | None, tolerance: float) -> bool:
    return before is not None and after is not None and before - after > tolerance + 1e-9


def _repeated(base: Entry, new: Entry) -> bool:
    """Both sides rest on repeated runs of the scenario: a change can be told from noise."""
    return base.runs >= 2 and new.runs >= 2


def _points(interval: tuple[float, float] | None) -> tuple[float, float] | None:
    return None if interval is None else (round(100 * interval[0], 1), round(100 * interval[1], 1))


def _outside(noise: tuple[float, float] | None) -> bool:
    """The change's 95 % interval holds no zero."""
    return noise is not None and (noise[1] < 0 or noise[0] > 0)


def _noise(noise: tuple[float, float] | None) -> str:
    if noise is None:
        return "no interval"
    where = "outside" if _outside(noise) else "within"
    return f"{where} the noise: {_signed(noise[0])} to {_signed(noise[1])} at 95 %"


def _compare_entry(base: Entry, new: Entry, tolerance: float) -> Iterator[Change]:
    """The changes of one target x scenario. When either side is in error there is nothing to
    compare check by check: only the error's appearance or disappearance is listed."""
    scenario = base.scenario
    if base.outcome == "error" or new.outcome == "error":
        if base.outcome != new.outcome:
            was, now = _outcome(base), _outcome(new)
            if new.outcome == "error":
                yield Change("new error", scenario, f"{was} -> {now}", None, was, now, regression=True)
            else:
                yield Change("error gone", scenario, f"{was} -> {now}", None, was, now)
        return
    repeated = _repeated(base, new)
    changes: list[Change] = []
    for check in sorted(set(new.failed) | set(base.failed)):
        before, after = base.failed.get(check, 0), new.failed.get(check, 0)
        if before and not after:
            changes.append(Change("fixed", scenario, "no longer fails", check, "fail", "pass"))
        else:
            changes += _more_often("new failure", check, before, after, base, new)
    for check in sorted(set(new.warned) - set(base.failed)):  # passed before, warns now
        changes += _more_often("new warning", check, base.warned.get(check, 0), new.warned[check], base, new)
    if base.score is not None and new.score is not None and base.score != new.score:
        noise = _points(difference((base.score / 100, base.runs), (new.score / 100, new.runs)))
        change = _signed(new.score - base.score)
        text = f"{_number(base.score)} -> {_number(new.score)} ({change}, {_noise(noise)})"
        drop = _dropped(base.score, new.score, tolerance) and (not repeated or _outside(noise))
        changes.append(Change("score", scenario, text, None, base.score, new.score, drop, noise))
    if base.outcome != new.outcome:
        text = f"{base.outcome} -> {new.outcome}"
        kind: Kind = "new failure" if new.outcome == "fail" else "fixed"
        gates = kind == "new failure" and (not repeated or any(c.regression for c in changes))
        yield Change(kind, scenario, text, None, base.outcome, new.outcome, regression=gates)
    yield from changes
    for check, detail in sorted(set(new.findings) - set(base.findings)):
        yield Change("new finding", scenario, detail, check)
    for check, detail in sorted(set(base.findings) - set(new.findings)):
        yield Change("gone finding", scenario, detail, check)


def _more_often(kind: Kind, check: str, before: int, after: int, base: Entry, new: Entry) -> list[Change]:
    """A check failing (``new failure``) or warning (``new warning``) where it did not, in
    ``after`` runs of the new side against ``before`` of the base: newly, or with repeated runs in
    a larger share of them; it gates unless runs repeat and the change is within the noise."""
    repeated = _repeated(base, new)
    if not after or (before and not (repeated and after / new.runs > before / base.runs)):
        return []
    noise = _points(difference((before / base.runs, base.runs), (after / new.runs, new.runs)))
    verb, status = ("fails", "fail") if kind == "new failure" else ("warns", "warn")
    if before:
        text = f"{verb} in {after} of {new.runs} runs (was {before} of {base.runs}; {_noise(noise)})"
    else:
        text = f"{verb} now" + (f" in {after} of {new.runs} runs ({_noise(noise)})" if repeated else "")
    return [Change(kind, base.scenario, text, check, "pass", status, not repeated or _outside(noise), noise)]


def _outcome(entry: Entry) -> str:
    return f"error ({entry.cause})" if entry.outcome == "error" and entry.cause else entry.outcome


def _plural(count: int, kind: str) -> str:
    """``1 new failure``, ``2 new failures``, ``2 errors gone``, ``3 fixed``."""
    if count == 1 or kind == "fixed":
        return f"{count} {kind}"
    if kind == "error gone":
        return f"{count} errors gone"
    return f"{count} {kind}s"


def _number(value: float | None) -> str:
    return "-" if value is None else f"{round(value, 2):g}"


def _signed(value: float) -> str:
    return f"{round(value, 2):+g}"


__all__ = [
    "BASELINE_SCHEMA",
    "DEFAULT_BASELINE",
    "KINDS",
    "Change",
    "Comparison",
    "Entry",
    "ResultSet",
    "TargetComparison",
    "compare",
    "entries",
    "from_records",
    "load",
    "read_baseline",
    "render_baseline",
    "target_score",
    "write_baseline",
]
