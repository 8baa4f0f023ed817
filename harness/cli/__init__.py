"""The ``harness`` command: a thin shell over the library (parse options, call, print).

Exit codes (:data:`harness.analysis.gate.EXIT_CODES`): 0 success; 1 the gate failed (a
score below ``--min-score`` or a target's ``min_score``, failed runs with ``--strict``,
a strict ``xpass``); 2 bad input (scenario, tool set, config, baseline, option); 3 a
cassette is missing, unreadable or incomplete, or the requests drifted from it; 4 runs
the harness could not test (no response, an endpoint unavailable after retries, a
refused key); 5 a regression against ``--baseline``; 8 the disk is full; 130 interrupted.

Signals: the first Ctrl-C, SIGTERM (CI runners, ``timeout``) or SIGHUP stops what the
command started in order (``harness run`` starts no new run and writes the reports of the
runs that finished); a second one exits at once, killing first every process the harness
started (:mod:`harness.children`). A signal the harness was started ignoring (``nohup``, a
background job) stays ignored.
"""

from __future__ import annotations

import contextlib
import gc
import sys
import warnings
from collections.abc import Iterator
from typing import Any

import click

from harness.cli import commands, history_commands, results_commands, run
from harness.cli.console import console, escape
from harness.cli.signals import signals
from harness.errors import CutLineWarning, DiskFullError, HistoryWarning, UserError


class HarnessGroup(click.Group):
    """Turns the harness's user errors into a one-line message and exit code 2, a full disk into
    one and exit code 8, shows each results line left out (cut short) and a history not written
    as a warning, and handles the stop signals for every command (:class:`Signals`)."""

    def invoke(self, ctx: click.Context) -> Any:
        left_out: list[str] = []
        with warnings.catch_warnings(), signals.installed(), _fewer_collections():
            warnings.simplefilter("always", CutLineWarning)
            shown = warnings.showwarning

            def show(message: Any, category: type[Warning], *where: Any, **more: Any) -> None:
                if issubclass(category, HistoryWarning):
                    return _say("yellow", "warning", str(message))
                if not issubclass(category, CutLineWarning):
                    return shown(message, category, *where, **more)
                left_out.append(str(message))
                _say("yellow", "warning", str(message))

            warnings.showwarning = show
            try:
                return super().invoke(ctx)
            except UserError as exc:
                _say("red", "error", str(exc))
                sys.exit(exc.exit_code)
            except OSError as exc:
                if not DiskFullError.is_full(exc):
                    raise
                if not isinstance(exc, DiskFullError):
                    exc = DiskFullError(exc.filename or "a file", "what was written before it is kept")
                command = ctx.invoked_subcommand
                resume = f"; once there is room, `harness {command} --resume` (same --out) continues the run"
                _say("red", "error", str(exc) + (resume if command in ("run", "record") else ""))
                sys.exit(exc.exit_code)
            finally:
                if left_out:
                    count = len(left_out)
                    _say("yellow", "warning", f"{count} results line(s) cut short were left out (above)")


GC_THRESHOLD = (50_000, 20, 10)
"""The cycle collector's thresholds while a command runs (Python's are 700, 10, 10): a replay
allocates millions of short-lived objects (decoded records, their findings), freed by reference
counting, and a young collection every 700 of them only walks the live ones; fewer collections
save 7 % of ``harness run``'s CPU (its forked workers inherit them) for 2 MB more at its peak."""


@contextlib.contextmanager
def _fewer_collections() -> Iterator[None]:
    """:data:`GC_THRESHOLD` for the command, then the host's own again (a command invoked
    in-process, as tests do, leaves the collector as it found it)."""
    before = gc.get_threshold()
    gc.set_threshold(*GC_THRESHOLD)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def _say(colour: str, what: str, message: str) -> None:
    """A one-line error or warning on stderr, secrets redacted."""
    from harness import secrets

    text = escape(secrets.redact(message))
    console(stderr=True).print(f"[{colour}]{what}:[/{colour}] {text}", markup=True, soft_wrap=True)


@click.group(cls=HarnessGroup)
@click.version_option(package_name="toolcall-harness")
def main() -> None:
    """Provider conformance tests for LLM tool calling."""


for _command in (*run.COMMANDS, *results_commands.COMMANDS, *commands.COMMANDS, *history_commands.COMMANDS):
    main.add_command(_command)


if __name__ == "__main__":
    main()
