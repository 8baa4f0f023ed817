"""The harness's exceptions, in one tree.

Provider deviations are never exceptions: they are findings. Exceptions are
for bad user input and for faults of the harness or of the wire itself::

    HarnessError
    ├── UserError                  bad input; the CLI exits with code 2
    │   ├── ScenarioError          a scenario file is invalid (path, line, JSON pointer)
    │   ├── ConfigError            a target or option is invalid
    │   └── UnknownNameError       a registry lookup failed; lists the known names
    ├── CassetteError              replay cannot go on without a live call
    │   ├── CassetteMissingError   no cassette for (target, scenario)
    │   └── CassetteDriftError     the request no longer matches the recording (with a diff)
    ├── TransportError             the request never got an HTTP response (timeout, refused)
    └── ServerError                a local server (simulator, model, MCP) failed to start or stop

Foreign exceptions are translated at the boundary with ``raise ... from``.
"""

from __future__ import annotations

from collections.abc import Iterable


class HarnessError(Exception):
    """Base of every exception the harness raises on purpose."""


class UserError(HarnessError):
    """Bad input from the user: the message says which file, line and field."""

    exit_code = 2


class ScenarioError(UserError):
    """A scenario file is invalid."""

    def __init__(self, path: str, message: str, *, line: int | None = None, pointer: str | None = None):
        self.path, self.line, self.pointer = path, line, pointer
        where = path + (f":{line}" if line else "")
        field = f" at {pointer}" if pointer is not None else ""
        super().__init__(f"{where}: {message}{field}")


class ConfigError(UserError):
    """A target definition or a command-line option is invalid."""


class UnknownNameError(UserError, KeyError):
    """A name was looked up in a registry that does not have it."""

    def __init__(self, kind: str, name: str, known: Iterable[str]):
        self.kind, self.name = kind, name
        self.known = sorted(known)
        super().__init__(f"unknown {kind} {name!r}; known: {', '.join(self.known) or '(none)'}")

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class CassetteError(HarnessError):
    """Replay cannot continue without a live call; never silently goes live."""

    exit_code = 3


class CassetteMissingError(CassetteError):
    """No cassette was recorded for this target and scenario."""

    def __init__(self, path: str, target: str, scenario: str):
        self.path = path
        super().__init__(
            f"no cassette for scenario {scenario!r} on target {target!r} at {path}; "
            f"record it with: harness record --target {target} --scenario {scenario}"
        )


class CassetteDriftError(CassetteError):
    """The harness sent a request the cassette does not hold: the adapter stack drifted."""

    def __init__(self, path: str, scenario: str, detail: str):
        self.path, self.detail = path, detail
        super().__init__(
            f"request drift in scenario {scenario!r}: the request does not match {path}\n{detail}"
        )


class TransportError(HarnessError):
    """The request did not get a usable HTTP response at all. ``request`` is the request as
    the transcript keeps it (a :class:`~harness.model.SentRequest`, secrets masked), filled in
    by the transport."""

    request: object | None = None


class ServerError(HarnessError):
    """A local server the harness manages failed."""
