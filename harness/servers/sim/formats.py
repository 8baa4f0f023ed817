"""Every wire format the simulator serves, by name (the URL prefix of its endpoint).

They are the registered wire formats whose adapter names its simulator side
(``Adapter.simulator``, a ``"module:attribute"`` path to a :class:`SimFormat` in a
``harness/servers/sim/wire*.py`` module), so a new format is served once its adapter is
registered: this table is never edited.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping

from harness.registry import ADAPTERS, load_path
from harness.servers.sim.wire import SimFormat


class _Formats(Mapping[str, SimFormat]):
    """Format name -> :class:`SimFormat`, in registration order, read from the adapters."""

    def __getitem__(self, name: str) -> SimFormat:
        return _table(ADAPTERS.version)[name]

    def __iter__(self) -> Iterator[str]:
        return iter(_table(ADAPTERS.version))

    def __len__(self) -> int:
        return len(_table(ADAPTERS.version))


@functools.lru_cache(maxsize=1)
def _table(version: int) -> dict[str, SimFormat]:
    """The simulator side of every adapter registered at ``version`` that names one."""
    found: dict[str, SimFormat] = {}
    for name, adapter in ADAPTERS.items():
        if adapter.simulator:
            found[name] = load_path(adapter.simulator)
    return found


FORMATS: Mapping[str, SimFormat] = _Formats()
