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

import os

from hypothesis import settings

# The run history (harness.history) is off in the tests unless a test names one: runs of the API
# and the plugin would otherwise all write ./reports/history.sqlite. Subprocesses inherit it.
os.environ.setdefault("HARNESS_HISTORY", "off")

SHARED = {"derandomize": True, "database": None, "deadline": None}
settings.register_profile("unit", max_examples=20, **SHARED)
settings.register_profile("thorough", max_examples=200, **SHARED)
settings.load_profile("unit")  # ``--hypothesis-profile`` loads another after this
