"""Live runs against the committed cassettes: where the calls differ, name the server builds that
made each, so the difference reads as drift of the server build, not as a harness failure."""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any

from harness.records import RunRecord


class ServerBuildDrift(UserWarning):
    """A live run made other calls than the committed recording of the same scenario."""


def calls(record: RunRecord) -> list[tuple[int, str, Any]]:
    return [(turn, call.name, call.arguments) for turn, call in record.transcript.calls]


def build(facts: dict[str, Any]) -> str:
    sha = str(facts.get("model_sha256") or "?")[:12]
    return f"{facts.get('server', '?')} {facts.get('version', '?')}, model sha256 {sha}"


def server_drift(live: Iterable[RunRecord], recorded: Iterable[RunRecord]) -> list[str]:
    """One line per run whose calls differ from its recording, naming both builds; each is also
    emitted as a :class:`ServerBuildDrift` warning (pytest lists them without failing)."""
    by_key = {r.key: r for r in recorded}
    lines = []
    for run in live:
        old = by_key.get(run.key)
        if old is None or calls(old) == calls(run):
            continue
        was, now = build(old.transcript.endpoint), build(run.transcript.endpoint)
        same = " (the same build: the server is not deterministic here)" if was == now else ""
        line = (
            f"{run.target.name} {run.scenario}: calls {calls(run)} live, {calls(old)} recorded; "
            f"server build recorded: {was}; live: {now}{same}"
        )
        warnings.warn(ServerBuildDrift(line), stacklevel=2)
        lines.append(line)
    return lines
