"""Wire formats and endpoints: one pure adapter per wire format, many endpoint profiles over them.

Adapters and profiles are looked up by name in :mod:`harness.registry`.
"""

from __future__ import annotations

import functools

from harness.providers.adapter import Adapter, RequestOptions
from harness.providers.profiles import Profile, Quirk


def adapter_class(fmt: str) -> type[Adapter]:
    """The adapter class of wire format ``fmt`` (imported on first use)."""
    from harness.registry import ADAPTERS

    cls: type[Adapter] = ADAPTERS.get(fmt)
    return cls


def formats() -> list[str]:
    """Every wire format's name, sorted."""
    from harness.registry import ADAPTERS

    return sorted(ADAPTERS.names())


def truncation_reasons() -> frozenset[str]:
    """The finish reasons that mean a turn was cut at the token limit, in any registered format
    (each adapter names its own: ``Adapter.truncation_reasons``)."""
    from harness.registry import ADAPTERS

    return _truncation_reasons(ADAPTERS.version)


@functools.lru_cache(maxsize=1)
def _truncation_reasons(version: int) -> frozenset[str]:
    from harness.registry import ADAPTERS

    return frozenset().union(*(adapter.truncation_reasons for _, adapter in ADAPTERS.items()))


__all__ = ["Adapter", "Profile", "Quirk", "RequestOptions", "adapter_class", "formats", "truncation_reasons"]
