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
    │   ├── CassetteCorruptError   the cassette cannot be read (file, line, what is wrong)
    │   ├── CassetteIncompleteError the recording stopped early (its fault is named)
    │   └── CassetteDriftError     the request no longer matches the recording (with a diff)
    ├── TransportError             the request never got an HTTP response (timeout, refused)
    ├── ServerError                a local server (simulator, model, MCP) failed to start or stop
    └── DiskFullError              no space left to write results (also an OSError); exit code 8

Foreign exceptions are translated at the boundary with ``raise ... from``. One warning goes on
without stopping: :class:`CutLineWarning`, a results file's last line cut short and left out.
Another: :class:`HistoryWarning`, the run history not written (the run's results are kept).
"""

from __future__ import annotations

import errno
from collections.abc import Iterable
from pathlib import Path
from typing import Any


class HarnessError(Exception):
    """Base of every exception the harness raises on purpose.

    Example::

        try:
            harness.run("scenarios", ["sim-openai"])
        except harness.HarnessError as error:
            print("the harness could not run:", error)
    """


class UserError(HarnessError):
    """Bad input from the user: the message says which file, line and field.

    Example::

        try:
            harness.load_scenarios("missing-folder")
        except harness.UserError as error:
            raise SystemExit(error.exit_code)  # 2
    """

    exit_code = 2


class ScenarioError(UserError):
    """A scenario or tool set file is invalid: its path, the line and JSON pointer of the bad
    field, and what was expected. :meth:`many` joins several (every error of a folder).

    Example::

        try:
            harness.load_scenarios("scenarios")
        except harness.ScenarioError as error:
            for problem in error.problems:
                print(problem.path, problem.line, problem.pointer, problem.message)
    """

    def __init__(self, path: str, message: str, *, line: int | None = None, pointer: str | None = None):
        self.path, self.line, self.pointer, self.message = path, line, pointer, message
        where = path + (f":{line}" if line else "")
        field = f" at {pointer}" if pointer is not None else ""
        super().__init__(f"{where}: {message}{field}")

    @property
    def problems(self) -> list[ScenarioError]:
        """Each single error (just this one, unless it joins several)."""
        return [self]

    @staticmethod
    def many(errors: Iterable[ScenarioError]) -> ScenarioError:
        """One error standing for several (or the only one)."""
        found = [p for error in errors for p in error.problems]
        return found[0] if len(found) == 1 else ScenarioErrors(found)


class ScenarioErrors(ScenarioError):
    """Several invalid files or fields, each listed on its own line."""

    def __init__(self, errors: list[ScenarioError]):
        self.errors = errors
        first = errors[0]
        self.path, self.line, self.pointer, self.message = (
            first.path,
            first.line,
            first.pointer,
            first.message,
        )
        files = len({e.path for e in errors})
        UserError.__init__(
            self, f"{len(errors)} error(s) in {files} file(s):\n" + "\n".join(f"  {e}" for e in errors)
        )

    @property
    def problems(self) -> list[ScenarioError]:
        return list(self.errors)


class ConfigError(UserError):
    """A target definition or a command-line option is invalid.

    Example::

        try:
            harness.load_targets("harness.toml")
        except harness.ConfigError as error:
            print(error)  # harness.toml: [targets.x] needs 'model'
    """


class UnknownNameError(UserError, KeyError):
    """A name was looked up in a registry that does not have it.

    Example::

        try:
            harness.run("scenarios", ["no-such-target"])
        except harness.UnknownNameError as error:
            print(error.known)  # the names that exist
    """

    def __init__(self, kind: str, name: str, known: Iterable[str]):
        self.kind, self.name = kind, name
        self.known = sorted(known)
        super().__init__(f"unknown {kind} {name!r}; known: {', '.join(self.known) or '(none)'}")

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class CassetteError(HarnessError):
    """Replay cannot continue without a live call; never silently goes live.

    Example::

        result = harness.run("scenarios", ["sim-openai"])
        cassette_errors = [r for r in result.errors if r.error and r.error.kind.startswith("Cassette")]
    """

    exit_code = 3


class CassetteMissingError(CassetteError):
    """No cassette was recorded for this target and scenario.

    Example::

        # a run without a recording ends with this error (kind "CassetteMissingError"):
        # record it with: harness record --target T --scenario S
    """

    def __init__(self, path: str, target: str, scenario: str):
        self.path = path
        super().__init__(
            f"no cassette for scenario {scenario!r} on target {target!r} at {path}; "
            f"record it with: harness record --target {target} --scenario {scenario}"
        )


class CassetteCorruptError(CassetteError):
    """A cassette that cannot be read: not YAML, or not the shape of a vcrpy cassette."""

    def __init__(self, path: str, detail: str, line: int | None = None):
        self.path, self.line = path, line
        where = path + (f":{line}" if line else "")
        super().__init__(f"{where}: the cassette cannot be read: {detail}; re-record it")


class CassetteIncompleteError(CassetteError):
    """The recording stopped before the run ended (a transport fault while recording), so the
    request that came next was never recorded: not drift."""

    def __init__(self, path: str, scenario: str, why: str):
        self.path = path
        super().__init__(
            f"incomplete recording of scenario {scenario!r} at {path}: {why}; the requests match the "
            "recording as far as it goes; re-record it"
        )


class CassetteDriftError(CassetteError):
    """The harness sent a request the cassette does not hold: the adapter stack drifted. With a
    ``lead`` (one line naming what changed), the message's first line is that line.

    Example::

        # kind "CassetteDriftError" in a replayed record: its message holds the diff of the
        # recorded and the new request body
        drifted = [r for r in result.errors if r.error and r.error.kind == "CassetteDriftError"]
    """

    def __init__(self, path: str, scenario: str, detail: str, *, lead: str | None = None):
        self.path, self.detail, self.lead = path, detail, lead
        if lead is None:
            text = f"the request does not match {path}\n{detail}"
        else:  # the first line names what changed; the rest, against what, in full
            text = f"{lead}\nthe request does not match {path}: {detail}"
        super().__init__(f"request drift in scenario {scenario!r}: {text}")


class TransportError(HarnessError):
    """The request did not get a usable HTTP response at all. ``request`` is the request as
    the transcript keeps it (a :class:`~harness.model.SentRequest`, secrets masked), filled in
    by the transport.

    Example::

        # no HTTP response at all (refused, reset, timed out): the run's last exchange has
        # response None and a parsed error with code "transport_error"
    """

    request: Any = None
    attempts: list[Any] = []
    findings: list[Any] = []


class ServerError(HarnessError):
    """A local server the harness manages failed."""


class DiskFullError(HarnessError, OSError):
    """No space left on the device (or the quota is spent) to write the file at ``path``: what
    was written before stays, and ``harness run --resume`` continues a run once there is room.
    It is an :class:`OSError` (``errno`` ``ENOSPC``) too; the CLI exits with code 8.

    Example::

        try:
            harness.run("scenarios", ["sim-openai"], harness.RunConfig(results=Path("reports/results.jsonl")))
        except harness.HarnessError as error:
            print(error)  # no space left on device writing reports/results.jsonl: ...
    """

    exit_code = 8

    def __init__(self, path: str | Path, detail: str = ""):
        self.path = str(path)
        message = f"no space left on device writing {path}" + (f": {detail}" if detail else "")
        super().__init__(errno.ENOSPC, message, self.path)

    def __str__(self) -> str:  # OSError would add its number and the file name
        return str(self.strerror)

    @staticmethod
    def is_full(exc: BaseException) -> bool:
        """Whether ``exc`` says the disk is full or the quota spent."""
        return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


class CutLineWarning(UserWarning):
    """A results file's last line is cut short (a run killed while writing it, a copy cut off):
    it is left out of what is read, so its run counts nowhere. The CLI shows it on stderr.

    Example::

        with warnings.catch_warnings():
            warnings.simplefilter("error", harness.errors.CutLineWarning)
            records = harness.RecordLog.open("reports/results.jsonl")  # refuse a cut file
    """


class HistoryWarning(UserWarning):
    """The run history could not be written (its database unreachable, locked, of a newer schema,
    a driver missing): the run's results files and exit code are as they would be without it, and
    ``harness history import`` adds the run later. The CLI shows it on stderr.

    Example::

        with warnings.catch_warnings():
            warnings.simplefilter("error", harness.errors.HistoryWarning)
            harness.run("scenarios", ["sim-openai"], history="reports/history.sqlite")
    """
