"""What changes for an agent that switches wires: the same model on the same endpoint, in several
wire formats, side by side.

Users move agents between wire formats (Chat Completions to the Responses API, to Anthropic
Messages, Bedrock Converse, Gemini Interactions...) and ask what changes. A **migration group**
is a set of targets that ran and that

- share the model, the endpoint (:attr:`harness.targets.Target.endpoint`: the base URL without
  credentials or query, ``sim``, ``local:<model>``), the stream setting and the mode (native, a
  prompted protocol, an agent), in at least two wire formats; or
- are linked by ``migrates_from``: a target naming the target in the wire format it replaces
  joins that target's group whatever its model and endpoint (the way to compare a target with a
  deviating simulator, another gateway or another door of the same vendor).

A target with ``hosted_mcp`` (the provider runs the scenarios' MCP servers through its own
connector) may name, by ``migrates_from``, the target of the same wire that runs them in the
harness's loop: the group then shows hosted MCP beside the harness's own MCP loop.

Both rules join: a target's group is everything linked to it either way. A ``sim~<deviation>``
is another endpoint than ``sim``, so it joins only by ``migrates_from``.

For each group: per target the headline (task success with its interval) and compliance, which
pairs of targets the figures tell apart (Newcombe's interval of the difference holds no 0:
:func:`harness.checks.scoring.difference`; none, and the figures cannot tell the wires apart),
and every scenario whose outcome or checks differ between them. Each difference names the check,
its status on each target and, where it is not a pass, who caused it (:func:`cause_of`) and the
first finding that shows it. A check that passed on one target and did not apply on another
(``n/a``: no call to judge, a field the wire does not have) is not a difference by itself: it
is listed only when some target warned or failed it.

Example::

    migrations = Migrations()
    for record in records:
        migrations.add(record)
    for group in migrations.groups(scores.summary()):
        print([row.format for row in group.targets], len(group.differences))
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from math import gcd
from typing import TypeVar

import msgspec

from harness.checks.scoring import ENDPOINT_CHECKS, Compliance, Summary, TargetSummary, difference
from harness.model import Finding
from harness.records import HOSTED_MODE, CheckResult, RunRecord, TargetInfo

T = TypeVar("T")
DETAIL_LIMIT = 300
"""Characters of a finding's detail a difference keeps (the whole finding is in the run)."""

ENDPOINT_SIDE = frozenset({*ENDPOINT_CHECKS, "protocol.wire", "protocol.call_ids", "protocol.hosted_mcp"})
"""Checks whose failure is charged to the endpoint: what it did to the run (tools not delivered,
an error, a turn cut short, its template showing through) and how it speaks the wire (framing,
argument encoding, finish reasons, call ids), and what its hosted MCP connector did."""

OTHER_CAUSES = {"protocol.agent_conduct": "agent", "protocol.mcp_servers": "mcp server"}
"""Checks that judge neither the model nor the endpoint: the user's agent, the MCP servers."""


def cause_of(check_id: str, status: str, finding: Finding | None) -> str:
    """Who caused a check's status that is not a pass: ``endpoint`` (:data:`ENDPOINT_SIDE`; a
    ``tool_choice`` warning, given where the endpoint does not honour the choice; a check not
    reached because the endpoint failed the run first), ``agent`` or ``mcp server``
    (:data:`OTHER_CAUSES`), else ``model`` (the expectations, a broken call, a call in the text,
    a forced ``tool_choice`` ignored where the endpoint honours it)."""
    if finding is not None and finding.evidence and finding.evidence.get("not_reached"):
        return "endpoint"
    if check_id in ENDPOINT_SIDE or (check_id == "protocol.tool_choice" and status == "warn"):
        return "endpoint"
    return OTHER_CAUSES.get(check_id, "model")


class Verdict(msgspec.Struct, omit_defaults=True):
    """What one target showed: a status (a check's ``pass``, ``warn``, ``fail`` or ``n/a``; an
    outcome's ``pass``, ``fail`` or ``error``; ``fail 1/3, pass 2/3`` when repeats disagree), who
    caused it when it is no pass (:func:`cause_of`; for an ``error``, the error's cause: the
    ``transport``, the ``endpoint``, the ``config``, a ``cassette``, the ``harness``), and the
    first finding (or error) that shows it; ``findings`` the ids of the failed findings where
    they are not the check's own (the wire deviations ``protocol.wire`` found)."""

    status: str
    cause: str | None = None
    detail: str | None = None
    findings: list[str] = msgspec.field(default_factory=list)  # failed finding ids, the check's own aside


class CheckDifference(msgspec.Struct):
    """A check whose verdict differs between the targets of a group: target -> verdict."""

    check: str
    targets: dict[str, Verdict]


class ScenarioDifference(msgspec.Struct):
    """A scenario whose outcome or checks differ between the targets of a group (only the targets
    that ran it appear)."""

    scenario: str
    category: str
    outcome: dict[str, Verdict]
    checks: list[CheckDifference]


class WireRow(msgspec.Struct):
    """One target of a group: its wire and how it is served, its headline with its interval and its
    compliance, as the Scores table shows them."""

    target: str
    format: str
    model: str
    endpoint: str | None
    stream: bool
    mode: str
    score: float | None
    interval: list[float] | None
    compliance: Compliance | None
    tested: int
    errors: int

    @property
    def wire(self) -> str:
        """The wire as the report names it: the format, and ``(hosted MCP)`` when the provider ran the
        MCP servers."""
        return self.format + (" (hosted MCP)" if self.mode.endswith(HOSTED_MODE) else "")


class Separation(msgspec.Struct):
    """Two targets whose success the figures tell apart: ``change`` is ``second - first`` in points,
    ``interval`` its 95 % interval (Newcombe's), which holds no 0."""

    first: str
    second: str
    change: float
    interval: list[float]


class Change(msgspec.Struct):
    """One verdict that is no pass, seen on one target in the scenarios that differ: ``check`` (or
    ``outcome``), the target, its status, who caused it and the failed finding ids, in how many
    scenarios, and the first detail."""

    check: str
    target: str
    status: str
    cause: str
    findings: list[str]
    scenarios: int
    example: str | None


class MigrationGroup(msgspec.Struct):
    """The same agent on several wires, side by side. ``model``, ``endpoint``, ``stream`` and
    ``mode`` are the group's when every target shares them (``None`` where targets linked by
    ``migrates_from`` differ); ``declared`` when a ``migrates_from`` links some of them.
    ``apart`` lists the pairs the success figures tell apart (empty: they cannot tell the wires
    apart); ``compared`` counts the scenarios at least two of the targets ran; ``differences``
    lists those whose outcome or checks differ, and ``changes`` what they show, counted: each
    verdict that is no pass, by target, most scenarios first."""

    model: str | None
    endpoint: str | None
    stream: bool | None
    mode: str | None
    simulated: bool
    declared: bool
    targets: list[WireRow]
    apart: list[Separation]
    compared: int
    differences: Sequence[ScenarioDifference]
    changes: list[Change]


Keep = Callable[[Iterable[ScenarioDifference]], Sequence[ScenarioDifference]]
"""How a migration group keeps its differences: a list, or a spool on disk."""


@dataclass
class _Seen:
    """One check of one target on one scenario, over its repeats: how often each (status, failed
    finding ids) was seen, and the first verdict against it. Never changed once made: it is
    shared by every (target, scenario) that saw the same (see :class:`_Shared`)."""

    seen: Counter[tuple[str, tuple[str, ...]]] = field(default_factory=Counter)
    why: tuple[str, str | None] | None = None  # (cause, detail) of the first status that is no pass


@dataclass
class _Scenario:
    """What one target showed on one scenario: never changed once made, shared like a
    :class:`_Seen`."""

    category: str
    outcome: _Seen
    checks: dict[str, _Seen]


_Why = tuple[str, str | None] | None
_Status = tuple[str, tuple[str, ...]]


class _Shared:
    """Each :class:`_Seen` and :class:`_Scenario` made once (hash-consing): a (target, scenario)
    holds a reference to what it showed, and the many that showed the same (every check passed,
    the same finding on every repeat) share it. What migrations keep then grows with the
    distinct things runs showed, not with the targets times scenarios times checks that ran
    (about 14 KB a target and scenario when each kept its own)."""

    def __init__(self) -> None:
        # made objects are kept here, so the ids in the keys stay theirs
        self.seen: dict[tuple[int, _Status, _Why], _Seen] = {}
        self.scenarios: dict[tuple[object, ...], int] = {}  # -> its number in ``made``
        self.made: list[_Scenario | None] = [None]  # each _Scenario by number (0: none)
        self.numbers: dict[str, int] = {}  # each scenario id, numbered (a :class:`_Ran` index)

    def after(self, before: _Seen | None, status: _Status, why: _Why) -> _Seen:
        """``before`` (``None``: nothing seen yet) having seen ``status`` once more; ``why`` is the
        verdict against it when ``before`` has none yet (``None``: none)."""
        key = (id(before), status, why)
        found = self.seen.get(key)
        if found is None:
            counts = Counter(before.seen) if before is not None else Counter()
            counts[status] += 1
            kept = before.why if before is not None and before.why is not None else why
            found = self.seen[key] = _Seen(counts, kept)
        return found

    def scenario(self, category: str, outcome: _Seen, checks: dict[str, _Seen]) -> int:
        """The number of the :class:`_Scenario` that showed these (made once)."""
        key = (category, id(outcome), *(part for item in checks.items() for part in (item[0], id(item[1]))))
        found = self.scenarios.get(key)
        if found is None:
            found = self.scenarios[key] = len(self.made)
            self.made.append(_Scenario(category, outcome, checks))
        return found


class _Ran(Mapping[str, _Scenario]):
    """What one target showed on each scenario it ran (scenario id -> :class:`_Scenario`), in
    four bytes a scenario: the number of the shared :class:`_Scenario`, by the scenario's number
    (a dict of each target's scenarios took about 37 bytes a scenario)."""

    def __init__(self, shared: _Shared) -> None:
        self._shared = shared
        self._made = array("I")  # by scenario number: what it showed (0: not run)

    def _at(self, scenario: str) -> int:
        number = self._shared.numbers.get(scenario)
        return self._made[number] if number is not None and number < len(self._made) else 0

    def __getitem__(self, scenario: str) -> _Scenario:
        made = self._shared.made[self._at(scenario)]
        if made is None:
            raise KeyError(scenario)
        return made

    def put(self, scenario: str, made: int) -> None:
        """Note that the target showed ``made`` (a :meth:`_Shared.scenario` number) on ``scenario``."""
        number = self._shared.numbers.setdefault(scenario, len(self._shared.numbers))
        if number >= len(self._made):
            self._made.frombytes(bytes(self._made.itemsize * (number + 1 - len(self._made))))
        self._made[number] = made

    def __iter__(self) -> Iterator[str]:
        made = self._made
        return (s for s, n in self._shared.numbers.items() if n < len(made) and made[n])

    def __len__(self) -> int:
        return sum(1 for n in self._made if n)


def _detail(finding: Finding, check_id: str) -> str:
    text = finding.detail if finding.check_id in ("", check_id) else f"{finding.check_id}: {finding.detail}"
    return text if len(text) <= DETAIL_LIMIT else text[: DETAIL_LIMIT - 1] + "…"


def _against(check: CheckResult) -> Finding | None:
    """The first finding that gives the check its status (a failed error, then a failed warning,
    then any failed one: a check not reached shows why)."""
    failed = [f for f in check.findings if not f.passed]
    for severity in ("error", "warning"):
        found = next((f for f in failed if f.severity == severity), None)
        if found is not None:
            return found
    return failed[0] if failed else None


class Migrations:
    """The migration groups of a set of runs, built one record at a time (see the module)."""

    def __init__(self) -> None:
        self.infos: dict[str, TargetInfo] = {}
        self.shared = _Shared()
        self.runs: dict[str, _Ran] = {}  # target -> scenario -> what it showed

    def add(self, record: RunRecord) -> None:
        name = record.target.name
        self.infos.setdefault(name, record.target)
        runs = self.runs.get(name)
        if runs is None:
            runs = self.runs[name] = _Ran(self.shared)
        before = runs.get(record.scenario)
        outcome = before.outcome if before is not None else None
        why = None
        if record.outcome != "pass" and (outcome is None or outcome.why is None):
            why = self._outcome_why(record)
        outcome = self.shared.after(outcome, (record.outcome, ()), why)
        checks = dict(before.checks) if before is not None else {}
        for check in record.checks:
            seen = checks.get(check.id)
            if not check.findings:  # most checks of most runs: no ids, and no finding against it
                checks[check.id] = self.shared.after(seen, (check.status, ()), None)
                continue
            ids = tuple(sorted({f.check_id for f in check.findings if not f.passed and f.severity != "info"}))
            why = None
            if check.status != "pass" and (seen is None or seen.why is None):
                against = _against(check)
                if against is not None:
                    why = (cause_of(check.id, check.status, against), _detail(against, check.id))
            checks[check.id] = self.shared.after(seen, (check.status, ids), why)
        category = before.category if before is not None else record.category
        runs.put(record.scenario, self.shared.scenario(category, outcome, checks))

    @staticmethod
    def _outcome_why(record: RunRecord) -> tuple[str, str | None]:
        """Who caused a run's outcome that is no pass: its error's cause and message, or the causes
        of its failed checks."""
        if record.error is not None:
            return record.error.cause, record.error.message[:DETAIL_LIMIT]
        causes = [cause_of(c.id, c.status, _against(c)) for c in record.checks if c.status == "fail"]
        return " and ".join(dict.fromkeys(causes)) or "model", None

    def components(self) -> list[list[str]]:
        """The targets that ran, in groups (see the module), each group sorted by name: those
        with at least two wire formats, or a wire format both with and without hosted MCP."""
        parent = {name: name for name in self.infos}

        def root(name: str) -> str:
            while parent[name] != name:
                parent[name] = parent[parent[name]]
                name = parent[name]
            return name

        def join(a: str, b: str) -> None:
            parent[root(a)] = root(b)

        first: dict[tuple[str, str, bool, str], str] = {}
        for name, info in sorted(self.infos.items()):
            if info.endpoint is not None:
                join(name, first.setdefault((info.model, info.endpoint, info.stream, info.mode), name))
            if info.migrates_from in self.infos:
                join(name, info.migrates_from)
        members: dict[str, list[str]] = {}
        for name in sorted(self.infos):
            members.setdefault(root(name), []).append(name)
        return [names for names in members.values() if len({self._wire(n) for n in names}) > 1]

    def _wire(self, name: str) -> tuple[str, bool]:
        """What a migration changes: the wire format, or who runs the MCP servers (a target whose
        provider runs them, ``hosted_mcp``, beside the same wire running them in the harness's loop)."""
        info = self.infos[name]
        return info.format, info.mode.endswith(HOSTED_MODE)

    def groups(self, summary: Summary, keep: Keep = list) -> list[MigrationGroup]:
        """Every migration group, in order of its first target's name; each group's differences
        kept by ``keep`` as they are found (a report to be written spools them: a group of many
        targets holds a verdict per target for each scenario that differs)."""
        return [self._group(names, summary, keep) for names in sorted(self.components())]

    def _group(self, names: list[str], summary: Summary, keep: Keep) -> MigrationGroup:
        infos = [self.infos[n] for n in names]
        sources = {i.migrates_from for i in infos}
        names = sorted(names, key=lambda n: (n not in sources, self.infos[n].format, n))
        rows, figures = [], []
        for name in names:  # one target's summary at a time: a report to be written spools them
            target = summary.targets[name]
            rows.append(_row(self.infos[name], target))
            figures.append((name, target.score, target.effective_runs))

        differences = keep(self._differences(names))
        return MigrationGroup(
            model=_common(i.model for i in infos),
            endpoint=_common(i.endpoint for i in infos),
            stream=_common(i.stream for i in infos),
            mode=_common(i.mode for i in infos),
            simulated=all(i.simulated for i in infos),
            declared=bool(sources & set(names)),
            targets=rows,
            apart=_apart(figures),
            compared=self._compared(names),
            differences=differences,
            changes=_changes(differences),
        )

    def _compared(self, names: list[str]) -> int:
        """How many scenarios at least two of the targets ran."""
        ran = Counter(scenario for name in names for scenario in self.runs[name])
        return sum(1 for count in ran.values() if count > 1)

    def _differences(self, names: list[str]) -> Iterator[ScenarioDifference]:
        """Each scenario whose outcome or checks differ between the targets that ran it, by
        category, as it is found."""
        scenarios: dict[str, str] = {}
        for name in names:
            scenarios.update({s: seen.category for s, seen in self.runs[name].items()})
        for scenario, category in sorted(scenarios.items(), key=lambda item: (item[1], item[0])):
            ran = {n: self.runs[n][scenario] for n in names if scenario in self.runs[n]}
            if len(ran) < 2:
                continue
            outcome = {n: s.outcome for n, s in ran.items()}
            checks = []
            for check in dict.fromkeys(c for s in ran.values() for c in s.checks):
                seen = {n: s.checks.get(check) or _Seen(Counter({("n/a", ()): 1})) for n, s in ran.items()}
                statuses = {status for s in seen.values() for status, _ in s.seen}
                if _differ(seen.values()) and statuses & {"warn", "fail"}:
                    checks.append(CheckDifference(check, {n: _verdict(s, check) for n, s in seen.items()}))
            if checks or _differ(outcome.values()):
                verdicts = {n: _verdict(s) for n, s in outcome.items()}
                yield ScenarioDifference(scenario, category, verdicts, checks)


def _common(values: Iterable[T]) -> T | None:
    """The value every target has, or ``None``."""
    found = set(values)
    return found.pop() if len(found) == 1 else None


def _shares(seen: _Seen) -> frozenset[tuple[str, tuple[str, ...], int, int]]:
    """Each (status, finding ids) with its share of the runs, as a fraction in lowest terms."""
    total = sum(seen.seen.values())
    return frozenset(
        (status, ids, n // (common := gcd(n, total)), total // common)
        for (status, ids), n in seen.seen.items()
    )


def _differ(seen: Iterable[_Seen]) -> bool:
    """Whether the targets' runs showed different shares of (status, finding ids); the same
    counts (nearly every scenario's checks on nearly every target) show the same shares."""
    first, *others = seen
    if all(s.seen == first.seen for s in others):
        return False
    return len({_shares(s) for s in (first, *others)}) > 1


ORDER = {"error": 0, "fail": 1, "warn": 2, "n/a": 3, "pass": 4}


def _verdict(seen: _Seen, check: str = "") -> Verdict:
    """The verdict of a check or an outcome over the repeats: its status (each with its share when
    repeats disagree, worst first) and, unless every repeat passed, who caused it and why."""
    counts: Counter[str] = Counter()
    for (status, _), n in seen.seen.items():
        counts[status] += n
    total = sum(counts.values())
    ordered = sorted(counts, key=lambda s: ORDER.get(s, 5))
    status = ordered[0] if len(ordered) == 1 else ", ".join(f"{s} {counts[s]}/{total}" for s in ordered)
    if ordered == ["pass"] or seen.why is None:
        return Verdict(status)
    ids = sorted({i for _, found in seen.seen for i in found} - {check})
    return Verdict(status, *seen.why, findings=ids)


def _changes(differences: Iterable[ScenarioDifference]) -> list[Change]:
    """Every verdict that is no pass in ``differences``, counted by (check, target, status, cause,
    findings): the outcome first (where it differs), then most scenarios first."""
    found: dict[tuple[str, str, str, str, tuple[str, ...]], Change] = {}
    for scenario in differences:
        outcomes = {v.status for v in scenario.outcome.values()}
        verdicts = [("outcome", scenario.outcome)] if len(outcomes) > 1 else []
        for check, by_target in [*verdicts, *((c.check, c.targets) for c in scenario.checks)]:
            for target, verdict in by_target.items():
                if verdict.cause is None:
                    continue
                key = (check, target, verdict.status, verdict.cause, tuple(verdict.findings))
                change = found.setdefault(key, Change(*key[:4], verdict.findings, 0, verdict.detail))
                change.scenarios += 1
    return sorted(found.values(), key=lambda c: (c.check != "outcome", -c.scenarios, c.check, c.target))


def _row(info: TargetInfo, target: TargetSummary) -> WireRow:
    return WireRow(
        target=info.name,
        format=info.format,
        model=info.model,
        endpoint=info.endpoint,
        stream=info.stream,
        mode=info.mode,
        score=target.score,
        interval=target.interval,
        compliance=target.compliance,
        tested=target.tested,
        errors=target.errors,
    )


def _apart(figures: list[tuple[str, float | None, float]]) -> list[Separation]:
    """The pairs whose success the figures (each target's name, headline and effective number of
    runs) tell apart: the 95 % interval of the difference holds no 0 (each side's share at its
    effective number of runs, as ``harness compare`` judges noise)."""
    found = []
    for (first, a, a_runs), (second, b, b_runs) in combinations(figures, 2):
        if a is None or b is None:
            continue
        change = difference((a / 100, a_runs), (b / 100, b_runs))
        if change is not None and (change[0] > 0 or change[1] < 0):
            interval = [round(100 * change[0], 1), round(100 * change[1], 1)]
            found.append(Separation(first, second, round(b - a, 2), interval))
    return found
