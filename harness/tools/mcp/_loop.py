"""A private asyncio loop in a daemon thread, driven from synchronous code.

The harness is synchronous and multi-threaded; the MCP SDK is async. One loop per
:class:`~harness.tools.mcp.manager.MCPManager` keeps the two apart: callers block on
:meth:`LoopThread.run`, which also cancels the coroutine when the caller gives up
(timeout, KeyboardInterrupt, the run's stop event) so nothing keeps running behind its back.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections.abc import Coroutine
from typing import Any, TypeVar

from harness.errors import ServerError

T = TypeVar("T")

DRAIN_S = 8.0
"""How long tasks still pending at stop may take to finish their cancellation."""
STOP_POLL_S = 0.1
"""How often a wait looks at the stop event (an interrupted run ends its MCP calls this soon)."""


class Interrupted(ServerError):
    """The run was interrupted (its stop event set) while waiting on the loop."""


class LoopThread:
    """An event loop running forever in a daemon thread until :meth:`stop`."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float, stop: threading.Event | None = None) -> T:
        """Run ``coro`` on the loop and wait; on timeout, on ``stop`` being set (raising
        :class:`Interrupted`) or on an interrupt, cancel it and raise."""
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        deadline = time.monotonic() + timeout
        try:
            while not future.done():
                if stop is not None and stop.is_set():
                    raise Interrupted("MCP manager: the run was interrupted")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ServerError(f"MCP manager: no answer within {timeout:.1f}s")
                concurrent.futures.wait([future], min(left, STOP_POLL_S) if stop is not None else left)
            return future.result()
        except BaseException:
            future.cancel()
            raise

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the loop, cancel what is left on it, close it (idempotent)."""
        if self._thread.is_alive():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout)

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            pending = asyncio.all_tasks(self.loop)
            for task in pending:
                task.cancel()
            if pending:
                self.loop.run_until_complete(asyncio.wait(pending, timeout=DRAIN_S))
            self.loop.close()
