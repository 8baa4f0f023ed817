"""Wire formats and endpoints: one pure adapter per wire format, many endpoint profiles over them.

Adapters and profiles are looked up by name in :mod:`harness.registry`.
"""

from __future__ import annotations

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


__all__ = ["Adapter", "Profile", "Quirk", "RequestOptions", "adapter_class", "formats"]
