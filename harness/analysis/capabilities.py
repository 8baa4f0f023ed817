"""A capability grid measured from the runs themselves: what each target was seen to do.

A static table of what providers claim goes stale and says nothing about the
endpoint in front of you (a gateway, a local server, a profile). This grid is
computed from run records only: each cell names the runs that decided it, so a
reader can open the transcript behind every "yes" and "no".

Two rules keep it honest. A run the harness could not test (outcome
``error``) decides nothing. And the model is never charged for the endpoint:
a run whose tools never reached the model (``protocol.tools_delivered``
failed) says so instead of counting as a model that made no call, and an HTTP
error or an empty stream is reported as what the endpoint did.

Each cell is ``{"value": "yes" | "no" | "partial" | "untested", "detail": str,
"runs": ["<target>/<scenario>/<repeat>", ...]}``.
"""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from harness.model import Exchange, ParsedTurn
from harness.records import CheckResult, RunRecord, TargetInfo

Value = Literal["yes", "no", "partial", "untested"]
Rule = Literal["every", "any"]
"""How a column's runs become one value: ``every`` run must show it for ``yes`` (some give
``partial``); for ``any``, one run showing it is proof enough (a schema the endpoint accepted)."""

NOT_DELIVERED = "tools not delivered by the endpoint"


@dataclass(frozen=True)
class Column:
    """One capability: its id in report.json, the label people read, its group, and how its
    runs combine."""

    id: str
    label: str
    group: str
    rule: Rule = "every"


@dataclass(frozen=True)
class Seen:
    """What one run showed about one capability: ``ok`` or not, and why not (the endpoint's
    answer or the model's behaviour, in a few words)."""

    run: str
    ok: bool
    why: str = ""


SCHEMA_FEATURES = {
    "nested_objects": "nested objects",
    "object_arrays": "arrays of objects",
    "enum": "enums",
    "ref": "$ref",
    "format": "format",
    "optional": "optional fields",
    "nullable": "nullable fields",
}
"""JSON Schema features looked for in the tool schemas a run's first request carried (recorded
at run time in ``RunRecord.offered``), and how the grid names them."""

CHOICE_MODES = ("auto", "required", "none", "named")

COLUMNS: tuple[Column, ...] = (
    Column("native_calls", "native calls", "calls"),
    Column("parallel_calls", "parallel calls", "calls"),
    Column("streamed_calls", "streamed calls", "calls"),
    Column("mcp_tools", "MCP tools", "calls"),
    *(Column(f"tool_choice_{mode}", f"tool_choice {mode}", "tool_choice") for mode in CHOICE_MODES),
    *(Column(f"schema_{key}", f"schema: {label}", "schema", "any") for key, label in SCHEMA_FEATURES.items()),
)
"""Every column, in the order the grid shows them."""


class _Cell:
    """One cell as runs are added: the runs that decided it and why those that did not show it
    did not (each run's id kept once, whatever the number of cells naming it)."""

    def __init__(self) -> None:
        self.runs: list[str] = []
        self.good: list[str] = []
        self.bad: Counter[str] = Counter()

    def add(self, seen: Seen, run: str) -> None:
        """Add what a run showed (``run``: its id, as the target's grid keeps it once)."""
        self.runs.append(run)
        if seen.ok:
            self.good.append(run)
        else:
            self.bad[seen.why] += 1

    def result(self, rule: Rule, never: str) -> dict[str, Any]:
        """Under ``every``, ``yes`` when every run showed it, ``partial`` when some did, ``no``
        when none did; under ``any``, ``yes`` as soon as one did (its runs are those that did)."""
        seen, good, bad = len(self.runs), len(self.good), sum(self.bad.values())
        if not seen:
            return untested(never)
        if rule == "any" and good:
            detail = f"accepted in {good} of {_runs(seen)}" if bad else f"accepted in {_runs(good)}"
            return cell("yes", detail, self.good)
        if not bad:
            return cell("yes", f"{good} of {_runs(seen)}", self.runs)
        if not good:
            return cell("no", _reasons(self.bad), self.runs)
        return cell("partial", f"{good} of {_runs(seen)}; {_reasons(self.bad)}", self.runs)


class _TargetGrid:
    """One target's cells as its runs are added."""

    def __init__(self) -> None:
        self.first: tuple[tuple[str, str, int], TargetInfo] | None = None  # the first tested run's
        self.cells = {column.id: _Cell() for column in COLUMNS}
        self.ids: dict[str, str] = {}  # each run's id, once (not interned: forgotten with the target)

    def add(self, record: RunRecord) -> None:
        if record.outcome == "error":  # the harness could not test it: it decides nothing
            return
        if _applies(record, "expect.refused"):  # a request meant to be refused shows no capability
            return
        if self.first is None or record.key < self.first[0]:
            self.first = (record.key, record.target)
        schemas: dict[str, Seen] | None = None
        for column in COLUMNS:  # what applies is decided by the target's first tested run, in result()
            if column.group == "schema":  # one pass over the run's schemas serves every feature
                schemas = schema_seen(record) if schemas is None else schemas
                found = schemas.get(column.id.removeprefix("schema_"))
                shown = [found] if found else []
            else:
                shown = OBSERVERS[column.id](record)
            for seen in shown:
                self.cells[column.id].add(seen, self.ids.setdefault(seen.run, seen.run))

    def result(self) -> dict[str, dict[str, Any]]:
        if self.first is None:
            return {c.id: untested("every run was an error: nothing could be tested") for c in COLUMNS}
        info = self.first[1]
        cells: dict[str, dict[str, Any]] = {}
        for column in COLUMNS:
            reason = _not_applicable(column, info.mode, info.stream)
            cells[column.id] = (
                untested(reason)
                if reason
                else self.cells[column.id].result(column.rule, _never_tested(column))
            )
        return cells


class Grid:
    """The capability grid, built as runs are added one at a time (what it keeps of a run is its
    id, once, in the cells it decided).

    Example::

        grid = Grid()
        for record in harness.read_results("reports/results.jsonl"):
            grid.add(record)
        cells = grid.result()["targets"]["sim-openai"]
    """

    def __init__(self) -> None:
        self.targets: dict[str, _TargetGrid] = {}

    def add(self, record: RunRecord, under: str | None = None) -> None:
        """Add one run to its target's cells, or to those of ``under`` (several targets of one
        model measured together, as :mod:`harness.analysis.capability_map` does)."""
        name = under or record.target.name
        grid = self.targets.get(name)
        if grid is None:  # built once: a target's grid is a cell and a Counter per column
            grid = self.targets[name] = _TargetGrid()
        grid.add(record)

    def take(self, name: str) -> dict[str, dict[str, Any]]:
        """The cells of target ``name``, its runs all added (``{column id: cell}``); the grid
        forgets it (a report over records read a target at a time keeps one target's cells)."""
        return self.targets.pop(name).result()

    def result(self) -> dict[str, Any]:
        """``{"columns": [...], "targets": {name: {column id: cell}}}``, targets sorted by name,
        columns in :data:`COLUMNS` order (deterministic, so a replay gives the same report.json)."""
        return {
            "columns": columns(),
            "targets": {name: self.targets[name].result() for name in sorted(self.targets)},
        }


def columns() -> list[dict[str, str]]:
    """The grid's columns, in order: ``{"id", "label", "group"}`` each."""
    return [{"id": c.id, "label": c.label, "group": c.group} for c in COLUMNS]


def capabilities(records: Iterable[RunRecord]) -> dict[str, Any]:
    """The grid of every target in ``records`` (see :class:`Grid`)."""
    grid = Grid()
    for record in records:
        grid.add(record)
    return grid.result()


def _not_applicable(column: Column, mode: str, stream: bool) -> str | None:
    """Why a column cannot be measured on a target at all (prompted mode sends no native tools
    or schemas; a target that does not stream cannot stream calls)."""
    prompted = mode.startswith("prompted")
    if prompted and column.id == "native_calls":
        return f"prompted mode ({mode.split(':', 1)[-1]}): calls written as text, no native tools sent"
    if prompted and column.group == "schema":
        return "prompted mode: the schemas are sent as text, never as tool declarations"
    if column.id == "streamed_calls" and not stream:
        return "not a streaming target"
    return None


def _never_tested(column: Column) -> str:
    if column.group == "schema":
        return "never offered in a tool schema"
    return "no run tested it"


def untested(detail: str) -> dict[str, Any]:
    return {"value": "untested", "detail": detail, "runs": []}


def cell(value: Value, detail: str, runs: list[str]) -> dict[str, Any]:
    return {"value": value, "detail": detail, "runs": sorted(set(runs))}


def _runs(count: int) -> str:
    return f"{count} run" if count == 1 else f"{count} runs"


def _reasons(counts: Counter[str]) -> str:
    """Why runs did not show a capability, most frequent first: "refused (HTTP 500)" alone
    when it is the only reason and the only run, else each with its count."""
    if sum(counts.values()) == 1:
        return next(iter(counts))
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return "; ".join(f"{why} in {_runs(n)}" for why, n in ordered)


# -- what a run shows ------------------------------------------------------------------------

Observer = Callable[[RunRecord], list[Seen]]


def run_id(record: RunRecord) -> str:
    """``<target>/<scenario>/<repeat>``: how cells name runs (the HTML report's anchors too)."""
    return f"{record.target.name}/{record.scenario}/{record.repeat}"


def _check(record: RunRecord, check_id: str) -> CheckResult | None:
    return next((c for c in record.checks if c.id == check_id), None)


def _failed(record: RunRecord, check_id: str) -> bool:
    found = _check(record, check_id)
    return found is not None and found.status == "fail"


def _applies(record: RunRecord, check_id: str) -> bool:
    """The check had something to say about this run (a verdict, or what it could not reach)."""
    found = _check(record, check_id)
    return found is not None and bool(found.findings)


def _calls(record: RunRecord) -> int:
    """The calls the model made: those the harness ran, and those the provider's MCP connector ran
    for it (hosted MCP)."""
    return sum(_turn_calls(e.parsed) for e in record.transcript.exchanges)


def _turn_calls(turn: ParsedTurn) -> int:
    return len(turn.tool_calls) + sum(1 for h in turn.hosted if h.kind == "call")


def endpoint_answer(turn: ParsedTurn, exchange: Exchange) -> str | None:
    """What the endpoint did instead of answering, in a few words: "refused (HTTP 500)",
    "empty body" (an HTTP 200 stream with nothing in it), or an error inside a 200."""
    error = turn.error
    if error is None:
        return None
    if error.code == "empty_stream" or any(f.check_id == "wire.empty_stream" for f in turn.findings):
        return "empty body"
    status = exchange.response.status if exchange.response is not None else error.status
    if status >= 400:
        return f"refused (HTTP {status})"
    return f"error in an HTTP {status} body ({error.code or 'no code'})"


def _first_error(record: RunRecord) -> str | None:
    """The first endpoint error of a run, before any call was made."""
    for exchange in record.transcript.exchanges:
        answer = endpoint_answer(exchange.parsed, exchange)
        if answer:
            return answer
        if exchange.parsed.tool_calls:
            return None
    return None


def _no_call_reason(record: RunRecord) -> str:
    """Why a run made no call: the endpoint (tools dropped, an error) before the model."""
    if _failed(record, "protocol.tools_delivered"):
        return NOT_DELIVERED
    error = _first_error(record)
    if error:
        return error
    if _failed(record, "protocol.native_delivery"):
        return "call written into the text"
    return "no call"


def made_calls(record: RunRecord) -> list[Seen]:
    """A run where a call was expected (or made): did a call arrive, parsed from the tool-call
    fields (native mode) or the text (prompted mode), whole or streamed as the target asks?"""
    if not record.transcript.tools or not (_applies(record, "expect.calls") or _calls(record)):
        return []
    if _failed(record, "protocol.tools_delivered"):
        return [Seen(run_id(record), False, NOT_DELIVERED)]
    if _calls(record):
        return [Seen(run_id(record), True)]
    return [Seen(run_id(record), False, _no_call_reason(record))]


def parallel_calls(record: RunRecord) -> list[Seen]:
    """A run of a parallel scenario: did one model turn make two calls or more?"""
    if record.category != "parallel" and not _applies(record, "expect.parallel"):
        return []
    if _failed(record, "protocol.tools_delivered"):
        return [Seen(run_id(record), False, NOT_DELIVERED)]
    if any(_turn_calls(e.parsed) >= 2 for e in record.transcript.exchanges):
        return [Seen(run_id(record), True)]
    if _calls(record):
        return [Seen(run_id(record), False, "one call per turn")]
    return [Seen(run_id(record), False, _no_call_reason(record))]


def mcp_tools(record: RunRecord) -> list[Seen]:
    """A run with MCP servers: was a call to an MCP tool made and answered by its server (by
    the harness's MCP loop, or by the provider's own connector under hosted MCP)?"""
    if record.category != "mcp" and not _applies(record, "protocol.mcp_servers"):
        return []
    if _failed(record, "protocol.tools_delivered"):
        return [Seen(run_id(record), False, NOT_DELIVERED)]
    if any(x.source.startswith("mcp:") for x in record.transcript.executions):
        return [Seen(run_id(record), True)]
    if any(call.error is None for _, call in record.transcript.hosted_calls):  # the provider's connector
        return [Seen(run_id(record), True)]
    if _failed(record, "protocol.mcp_servers"):
        return [Seen(run_id(record), False, "MCP server failed")]
    if _calls(record):
        return [Seen(run_id(record), False, "no call to an MCP tool")]
    return [Seen(run_id(record), False, _no_call_reason(record))]


# -- tool_choice -------------------------------------------------------------------------------


def requested_choice(record: RunRecord) -> tuple[tuple[str, str | None], bool]:
    """The scenario's ``tool_choice`` for the first turn, and whether it went on the wire (the
    first request carried one, as recorded in ``record.offered``, where the wire format has the
    field; prompted mode and Ollama have none). A record without the fact (written before it was
    recorded) is taken as sent: the grid then judges what the model did."""
    mode, _, name = record.tool_choice.partition(":")
    offered = record.offered
    sent = record.target.mode == "native" and (offered is None or offered.tool_choice is not None)
    on_wire = mode == "auto" or sent
    return (mode, name or None), on_wire


def tool_choice(record: RunRecord) -> Iterator[tuple[str, Seen]]:
    """``(mode, what the first turn showed)``: was the run's tool_choice honoured?"""
    if not record.transcript.tools or not record.transcript.exchanges:
        return
    (mode, name), on_wire = requested_choice(record)
    first = record.transcript.exchanges[0]
    run = run_id(record)
    if _failed(record, "protocol.tools_delivered"):
        yield mode, Seen(run, False, NOT_DELIVERED)
        return
    answer = endpoint_answer(first.parsed, first)
    if answer:
        yield mode, Seen(run, False, answer)
        return
    if mode != "auto" and not on_wire and record.target.mode == "native":
        yield mode, Seen(run, False, "cannot be sent: the wire format has no tool_choice field")
        return
    yield mode, _honoured(run, mode, name, [c.name for c in first.parsed.tool_calls])


def _honoured(run: str, mode: str, name: str | None, called: list[str]) -> Seen:
    if mode == "required" and not called:
        return Seen(run, False, "no call")
    if mode == "none" and called:
        return Seen(run, False, "called a tool")
    if mode == "named" and (not called or any(c != name for c in called)):
        return Seen(run, False, f"called {', '.join(called)}" if called else "no call")
    return Seen(run, True)


def _choice_observer(mode: str) -> Observer:
    def observe(record: RunRecord) -> list[Seen]:
        return [seen for found, seen in tool_choice(record) if found == mode]

    observe.__doc__ = f"A run whose first turn asked for tool_choice {mode}: was it honoured?"
    return observe


# -- JSON Schema features ------------------------------------------------------------------------


def schema_seen(record: RunRecord) -> dict[str, Seen]:
    """Per feature the first request's tool schemas used (``record.offered``): did the endpoint
    accept the request (an HTTP status below 400)?"""
    if not record.transcript.exchanges or record.offered is None:
        return {}
    first = record.transcript.exchanges[0]
    status = first.response.status if first.response is not None else None
    if status is None:
        return {}
    seen = Seen(run_id(record), status < 400, f"rejected (HTTP {status})")
    return {feature: seen for feature in sorted(record.offered.schema_features)}


def _schema_observer(feature: str) -> Observer:
    def observe(record: RunRecord) -> list[Seen]:
        found = schema_seen(record).get(feature)
        return [found] if found else []

    observe.__doc__ = f"A run whose tool schemas used {SCHEMA_FEATURES[feature]}: was it accepted?"
    return observe


OBSERVERS: dict[str, Observer] = {
    "native_calls": made_calls,  # prompted targets are not applicable: see _not_applicable
    "parallel_calls": parallel_calls,
    "streamed_calls": made_calls,  # on streaming targets only
    "mcp_tools": mcp_tools,
    **{f"tool_choice_{mode}": _choice_observer(mode) for mode in CHOICE_MODES},
    **{f"schema_{feature}": _schema_observer(feature) for feature in SCHEMA_FEATURES},
}
"""Column id -> what one run showed about it."""


# -- plain text ----------------------------------------------------------------------------------

SHORT = {"yes": "yes", "no": "no", "partial": "part", "untested": "-"}
LABEL_WIDTH = max(len(c.label) for c in COLUMNS)
STACKED_PREFIX = 2 + LABEL_WIDTH + 2 + 9


def render_capabilities_text(grid: dict[str, Any], width: int = 80) -> str:
    """The grid as plain text for a terminal of ``width`` columns: one row per capability and
    one column per target when that fits (target names split at ``-`` over several header
    lines, shortened only while they stay distinct), else one block per target."""
    targets = list(grid["targets"])
    if not targets:
        return "No runs: no capabilities measured."
    table = _table(grid, targets, width)
    return table if table is not None else _stacked(grid, targets, width)


def _table(grid: dict[str, Any], targets: list[str], width: int) -> str | None:
    """The transposed table, or ``None`` when it cannot fit ``width``."""
    for size in (None, 8, 6, 4):
        headers = _headers(targets, size)
        if headers is None:
            continue
        widths = [max(4, *(len(line) for line in lines)) for lines in headers]
        if LABEL_WIDTH + sum(w + 2 for w in widths) > width:
            continue
        return "\n".join(_table_lines(grid, targets, headers, widths, width))
    return None


def _headers(targets: list[str], size: int | None) -> list[list[str]] | None:
    """Each target's header lines (its ``-`` separated parts, each cut to ``size``), or
    ``None`` when cutting makes two targets look the same."""
    headers = [[part[:size] if size else part for part in name.split("-")] for name in targets]
    if len({"-".join(lines) for lines in headers}) < len(targets):
        return None
    return headers


def _table_lines(
    grid: dict[str, Any], targets: list[str], headers: list[list[str]], widths: list[int], width: int
) -> list[str]:
    """Header lines, one row per capability, then why each ``no`` and ``partial`` cell is so."""
    depth = max(len(lines) for lines in headers)
    lines = []
    for row in range(depth):
        parts = [(h[row] if row < len(h) else "").ljust(w) for h, w in zip(headers, widths, strict=True)]
        lines.append(" " * LABEL_WIDTH + "  " + "  ".join(parts))
    for column in grid["columns"]:
        values = [SHORT[grid["targets"][t][column["id"]]["value"]] for t in targets]
        cells = [v.ljust(w) for v, w in zip(values, widths, strict=True)]
        lines.append(column["label"].ljust(LABEL_WIDTH) + "  " + "  ".join(cells))
    notes = [
        f"{name} · {column['label']}: {found['value']}, {found['detail']}"
        for name in targets
        for column in grid["columns"]
        if (found := grid["targets"][name][column["id"]])["value"] in ("no", "partial")
    ]
    lines += ["", "part = partial (some runs), - = untested." + (" Why not:" if notes else "")]
    for note in notes:
        lines += textwrap.wrap(note, width, subsequent_indent="    ")
    return [line.rstrip() for line in lines]


def _stacked(grid: dict[str, Any], targets: list[str], width: int) -> str:
    """One block per target: each capability with its value and why (the why on its own lines
    when the terminal is too narrow to hold it beside the value)."""
    lines: list[str] = []
    inline = width >= STACKED_PREFIX + 20
    for name in targets:
        lines.append(name)
        for column in grid["columns"]:
            found = grid["targets"][name][column["id"]]
            head = f"  {column['label'].ljust(LABEL_WIDTH)}  {found['value'].ljust(8)} "
            if inline:
                detail = textwrap.wrap(found["detail"], width - STACKED_PREFIX) or [""]
                lines.append(head + detail[0])
                lines += [" " * STACKED_PREFIX + line for line in detail[1:]]
            else:
                lines.append(head.rstrip())
                lines += textwrap.wrap(
                    found["detail"], width, initial_indent="    ", subsequent_indent="    "
                )
        lines.append("")
    return "\n".join(line.rstrip() for line in lines).rstrip()
