"""How every command takes SIGINT, SIGTERM and SIGHUP: the first stops what it started in order, a
second exits at once, killing first what the harness started (:mod:`harness.children`)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any

from harness import children

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Signals:
    """The command's handling of :data:`STOP_SIGNALS`: the first calls ``on_first`` (by default
    it raises ``KeyboardInterrupt``, as Ctrl-C does, so every ``with`` block stops what it
    started); a second kills what the harness started and exits 130 at once."""

    def __init__(self) -> None:
        self.on_first: Callable[[int], None] = self.raise_interrupt
        self.seen = False

    @staticmethod
    def raise_interrupt(signum: int) -> None:
        raise KeyboardInterrupt

    def handle(self, signum: int, frame: Any) -> None:
        if self.seen:
            children.exit_now(130)
        self.seen = True
        self.on_first(signum)

    @contextlib.contextmanager
    def first(self, action: Callable[[int], None]) -> Iterator[None]:
        """``action`` is what a first signal does during the block."""
        before, self.on_first = self.on_first, action
        try:
            yield
        finally:
            self.on_first = before

    @contextlib.contextmanager
    def installed(self) -> Iterator[Signals]:
        """Handle the signals for the block (from the main thread only, where Python runs
        handlers), leaving ignored the ones the process was started ignoring."""
        self.on_first, self.seen = self.raise_interrupt, False
        previous = {}
        if threading.current_thread() is threading.main_thread():
            for sig in STOP_SIGNALS:
                if signal.getsignal(sig) != signal.SIG_IGN:
                    previous[sig] = signal.signal(sig, self.handle)
        try:
            yield self
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


signals = Signals()
"""The running command's signal handling (``harness run`` sets its own first action)."""
