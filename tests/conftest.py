"""Hypothesis budgets, one per tier. Property tests give no ``max_examples`` of their own: the
profile sizes them. ``unit`` (the default) runs a few examples of each, so the unit tier stays
fast; ``thorough`` runs each at full strength, and the integration tier runs every property of
the unit tier under it (``tests/integration/test_properties_thorough.py``). Choose one with
``pytest --hypothesis-profile=thorough``. Both are derandomized (CI sees the same examples on
every run), keep no example database and have no deadline (a loaded machine is no failure).

Registered here, before any test module is imported: a ``settings`` object takes the profile
that is active when it is built.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import settings

# The run history (harness.history) is off in the tests unless a test names one: runs of the API
# and the plugin would otherwise all write ./reports/history.sqlite. Subprocesses inherit it.
os.environ.setdefault("HARNESS_HISTORY", "off")


def _session_cache() -> None:
    """The parse cache is the test session's own, removed when it ends (subprocesses and xdist's
    workers inherit it): every temporary cassette a test writes is a new entry, and a session
    left about 100,000 of them in the user's ~/.cache. llama-server is found where
    ``harness local build`` built it."""
    if "HARNESS_CACHE" in os.environ:
        return
    from harness.cache import cache_root

    built = cache_root() / "llama-server"
    session = Path(tempfile.mkdtemp(prefix="harness-test-cache-"))
    if built.is_dir():
        (session / "llama-server").symlink_to(built, target_is_directory=True)
    os.environ["HARNESS_CACHE"] = str(session)
    atexit.register(shutil.rmtree, session, True)


_session_cache()

SHARED = {"derandomize": True, "database": None, "deadline": None}
settings.register_profile("unit", max_examples=20, **SHARED)
settings.register_profile("thorough", max_examples=200, **SHARED)
settings.load_profile("unit")  # ``--hypothesis-profile`` loads another after this
