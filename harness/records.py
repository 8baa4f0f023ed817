"""Typed records of a run and their codec: each record serialised once, read back typed.

A :class:`RunRecord` is everything one run of one scenario against one target
produced: the transcript (every exchange with its wire request and response),
the check results, the score, and the figures reports show. ``results.jsonl``
holds one record per line, written as each run ends by :func:`record_line`; its JSON
Schema ships in the package (``schemas/results.schema.json``, generated from
these types) and every line carries the format version in ``schema``.

Reports are built from records alone: whatever a report shows is computed
during the run and stored here.

Encoding and decoding use msgspec: it encodes these dataclasses directly
(no intermediate dicts) and validates every field when reading a file back. Results files (reading
them in bounded memory, :class:`~harness.results.RecordLog`, merging, run folders) are
:mod:`harness.results`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from harness import secrets
from harness.model import Finding, Transcript, Usage

RESULT_SCHEMA = "harness.result/3"
"""The format version of a results line written now. Version 3 changed what a run's ``score``
means (100 when the run succeeded, 0 when not: see :mod:`harness.checks.scoring`)."""
READABLE = frozenset({RESULT_SCHEMA, "harness.result/2"})
"""The results formats this harness reads. A version 2 line has the same fields; its ``score`` was
the old partial credit, so everything that scores reads a run's success from its checks
(:func:`harness.checks.scoring.record_score`), never from ``score``, and a version 2 file gives the same
reports as a version 3 one. Older or newer files are refused with their version named."""

Status = Literal["pass", "warn", "fail", "n/a"]
Kind = Literal["protocol", "expectation"]
Outcome = Literal["pass", "fail", "error"]
"""``pass``: no check failed. ``fail``: the model's or the provider's behaviour broke a check.
``error``: the harness could not test (no response, the endpoint unavailable after retries, a
refused key, a missing or unreadable cassette, a fault of the harness); never scored."""
Cause = Literal["transport", "endpoint", "config", "cassette", "harness"]


HOSTED_MODE = "+hosted-mcp"
"""What a target's mode ends with when the provider runs the scenarios' MCP servers (``hosted_mcp``)."""


@dataclass(frozen=True)
class TargetInfo:
    """What reports show about the target a run used.

    Example::

        print(record.target.name, record.target.model, record.target.simulated)
    """

    name: str
    format: str
    model: str
    simulated: bool
    stream: bool
    mode: str
    profile: str
    description: str = ""
    reference: str | None = None  # the target this one is verified against (harness verify)
    endpoint: str | None = None  # where it is served (Target.endpoint); None: written before it was kept
    migrates_from: str | None = None  # the target on another wire this one is compared with


@dataclass(frozen=True)
class RunError:
    """Why the harness could not test: its ``cause`` (the ``transport`` gave no response, the
    ``endpoint`` stayed unavailable after retries, the ``config`` is wrong (a refused key), a
    ``cassette`` is missing, drifted, incomplete or unreadable, or the ``harness`` failed),
    what kind of error, and the message."""

    kind: str
    message: str
    traceback: str | None = None
    cause: Cause = "harness"

    def summary(self) -> dict[str, str]:
        """Kind, cause and message, as reports show them (the traceback stays in the results file)."""
        return {"kind": self.kind, "cause": self.cause, "message": self.message}


def status_of(findings: Iterable[Finding]) -> Status:
    """``fail`` for a failed error, ``warn`` for a failed warning, ``pass``, or ``n/a`` (no finding,
    or only findings of what the run never reached: shown, not scored)."""
    found = False
    failed: set[str] = set()
    for finding in findings:
        if finding.evidence and finding.evidence.get("not_reached"):
            continue
        found = True
        if not finding.passed:
            failed.add(finding.severity)
    if not found:
        return "n/a"
    if "error" in failed:
        return "fail"
    if "warning" in failed:
        return "warn"
    return "pass"


@dataclass(frozen=True)
class CheckResult:
    """One check's verdict on one run: its findings and the status they give.

    Example::

        failing = [c.id for c in record.checks if c.status == "fail"]
    """

    id: str
    kind: Kind
    weight: float
    status: Status
    findings: tuple[Finding, ...] = ()

    @classmethod
    def of(cls, check_id: str, kind: Kind, weight: float, findings: Iterable[Finding]) -> CheckResult:
        """The result of ``findings``, each listed once: a finding found twice (same id, verdict,
        detail and turn, from two phases or two sources of one run) is one finding."""
        seen: set[tuple[str, str, bool, str, int | None]] = set()
        found = []
        for finding in findings:
            key = (finding.check_id, finding.severity, finding.passed, finding.detail, finding.turn_index)
            if key not in seen:
                seen.add(key)
                found.append(finding)
        return cls(check_id, kind, weight, status_of(found), tuple(found))


@dataclass(frozen=True)
class PromptSize:
    """What the tool definitions cost in the first request: the text protocol's system prompt
    (prompted mode) or the JSON tool declarations (native); tokens estimated."""

    characters: int
    estimated_tokens: int


@dataclass(frozen=True)
class Offered:
    """What the run's first request offered the model, as it went on the wire, in neutral terms
    (read back from the request by the format's adapter when the run ends, so nothing after the
    run parses a wire body): the ``tool_choice`` it carried (``auto``, ``required``, ``none`` or
    ``named:<tool>``; ``None`` when it carried none: a format without the field, prompted mode)
    and the JSON Schema features its tool schemas use (``enum``, ``ref``, ``nullable``...).

    Example::

        if record.offered is not None:
            print(record.offered.tool_choice, record.offered.schema_features)
    """

    tool_choice: str | None
    schema_features: tuple[str, ...]


@dataclass(frozen=True)
class RunRecord:
    """One run of one scenario against one target, scored.

    Example::

        for record in harness.read_results("reports/results.jsonl"):
            print(record.target.name, record.scenario, record.score, record.passed)
    """

    target: TargetInfo
    scenario: str
    category: str
    repeat: int
    mode: str
    score: float | None
    passed: bool
    error: RunError | None
    checks: tuple[CheckResult, ...]
    usage: Usage
    transcript: Transcript
    tool_prompt: PromptSize | None = None
    outcome: Outcome = "pass"
    tool_choice: str = "auto"  # the scenario's: auto, required, none or named:<tool>
    offered: Offered | None = None  # None: no request was sent, or written before it was recorded
    schema: str = RESULT_SCHEMA

    @property
    def key(self) -> tuple[str, str, int]:
        """(target, scenario, repeat): what identifies a run in a results file."""
        return (self.target.name, self.scenario, self.repeat)

    def findings(self) -> Iterator[Finding]:
        """Every finding of every check, in check order."""
        for check in self.checks:
            yield from check.findings


_encoder = msgspec.json.Encoder()
DECODER = msgspec.json.Decoder(RunRecord)
"""Reads one results line as a :class:`RunRecord`, every field checked."""


def record_line(record: RunRecord) -> bytes:
    """``record`` as a results file line (without its newline), secrets redacted: the one place
    records are serialised.

    A string that is not valid Unicode (a lone surrogate a provider sent as ``"\\ud83d"``) must
    not lose the run: such characters are written as U+FFFD (the adapters note them as findings)."""
    try:
        line = _encoder.encode(record)
    except UnicodeEncodeError:
        line = _encoder.encode(_valid_unicode(msgspec.to_builtins(record)))
    return secrets.redact_bytes(line)


def decode_record(line: bytes) -> RunRecord:
    """A record from one results file line."""
    return DECODER.decode(line)


def _valid_unicode(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, dict):
        return {_valid_unicode(k): _valid_unicode(v) for k, v in value.items()}
    if isinstance(value, list | tuple):  # to_builtins keeps a record's tuples (its checks, their findings)
        return [_valid_unicode(v) for v in value]
    return value


def encode(value: Any) -> bytes:
    """Any record type as compact JSON."""
    return _encoder.encode(value)


def to_builtins(value: Any) -> Any:
    """Any record type as plain JSON data (dicts, lists, scalars), for reports that embed it."""
    return msgspec.to_builtins(value)


def json_schema() -> dict[str, Any]:
    """The JSON Schema of one results line, generated from :class:`RunRecord`."""
    schema: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(msgspec.json.schema(RunRecord)))
    for definition in schema["$defs"].values():  # the types' docstrings, without their code examples
        if "description" in definition:
            definition["description"] = definition["description"].split("Example::")[0].strip()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = f"toolcall harness results line ({RESULT_SCHEMA})"
    return schema
