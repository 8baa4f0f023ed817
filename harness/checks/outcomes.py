"""Outcome classes: a run passed, failed (the model's or provider's behaviour broke a check), or
could not be tested at all (``error``), which is never scored.

A fault that stops the harness from testing is not a finding about the model: no
response at all, an endpoint still unavailable after the retries (a status the transport
retries, :data:`~harness.transport.send.RETRY_STATUSES`), a refused key (401, 403, 407),
the simulator asked for what it does not do. A provider that answers, even wrongly (a 500
with a body, an error inside a 200), is a finding and the run is scored.
"""

from __future__ import annotations

from harness.model import Transcript
from harness.records import CheckResult, Outcome, RunError
from harness.transport.send import RETRY_STATUSES

REFUSED = frozenset({401, 403, 407})


def untestable(transcript: Transcript, *, simulated: bool) -> RunError | None:
    """Why the run could not test the target, when the way it ended says so."""
    if not transcript.exchanges:
        return None
    last = transcript.exchanges[-1]
    error = last.parsed.error
    if error is None:
        return None
    tries = f" after {len(last.attempts)} attempts" if len(last.attempts) > 1 else ""
    if last.response is None:
        return RunError("TransportError", f"turn {last.turn}{tries}: {error.message}", cause="transport")
    status = last.response.status  # the HTTP status: an error inside a 200 is the provider's answer
    if status in RETRY_STATUSES:  # still unavailable after the retries
        return RunError(
            "EndpointUnavailable",
            f"turn {last.turn}: HTTP {status}{tries}: {error.message or '(no message)'}",
            cause="endpoint",
        )
    if status in REFUSED:
        return RunError(
            "AuthenticationError",
            f"turn {last.turn}: HTTP {status}: {error.message or '(no message)'}; check the key",
            cause="config",
        )
    if simulated and error.message.startswith("sim: "):
        return RunError("SimulatorError", error.message, cause="harness")
    return None


def outcome_of(error: RunError | None, checks: list[CheckResult]) -> Outcome:
    if error is not None:
        return "error"
    return "fail" if any(c.status == "fail" for c in checks) else "pass"
