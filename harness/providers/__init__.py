"""Wire-format adapters, looked up by name (see :mod:`harness.providers.base`)."""

from __future__ import annotations

import importlib

from harness.providers.base import Adapter, Profile, Quirk, RequestOptions, adapter_class, formats, register

_MODULES = ("openai", "mistral", "ollama", "anthropic", "gemini")


def load_all() -> None:
    """Import every adapter module so that each registers its format."""
    for name in _MODULES:
        try:
            importlib.import_module(f"harness.providers.{name}")
        except ModuleNotFoundError as exc:  # a format still to come
            if exc.name != f"harness.providers.{name}":
                raise


__all__ = [
    "Adapter",
    "Profile",
    "Quirk",
    "RequestOptions",
    "adapter_class",
    "formats",
    "load_all",
    "register",
]
