"""Targets: a wire format + an endpoint profile + a model + how to drive it.

Bundled targets live in ``harness/targets.toml``; users add or override them in
``./harness.toml`` (same keys, under ``[targets.<name>]``). Keys are read from
the environment variable the target names, never from a file.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields
from importlib import resources
from pathlib import Path
from typing import Any

from harness.errors import ConfigError, UnknownNameError
from harness.providers import Adapter, Profile, adapter_class
from harness.providers.compat import default_profile, get_profile

SIM = "sim"
LOCAL_PREFIX = "local:"


@dataclass(frozen=True)
class Target:
    """One thing to test. ``simulated`` is true for every target that does not reach a real model."""

    name: str
    format: str
    model: str
    base_url: str = ""
    profile: str | None = None
    api_key_env: str | None = None
    stream: bool = False
    protocol: str | None = None
    description: str = ""
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    timeout_s: float = 120.0
    concurrency: int = 4
    request_options: dict[str, Any] = field(default_factory=dict)

    @property
    def simulated(self) -> bool:
        return self.base_url == SIM or self.base_url.startswith(SIM + "~")

    @property
    def sim_route(self) -> str:
        """``<format>`` or ``<format>~<deviation>``: the simulator's prefix for this target."""
        return self.format + self.base_url[len(SIM) :] if self.simulated else self.format

    @property
    def local_model(self) -> str | None:
        """The managed local model's name for ``local:<name>`` targets."""
        return self.base_url[len(LOCAL_PREFIX) :] if self.base_url.startswith(LOCAL_PREFIX) else None

    @property
    def mode_label(self) -> str:
        return f"prompted:{self.protocol}" if self.protocol else "native"

    def endpoint_profile(self) -> Profile:
        return get_profile(self.profile) if self.profile else default_profile(self.format)

    def resolved_base_url(self) -> str:
        """The configured URL, or the profile's default for a real provider."""
        return self.base_url or self.endpoint_profile().base_url

    def api_key_variable(self) -> str | None:
        return self.api_key_env or (
            None if self.simulated or self.local_model else self.endpoint_profile().api_key_env
        )

    def adapter(self) -> Adapter:
        adapter = adapter_class(self.format)(self.endpoint_profile())
        if self.protocol:
            from harness.providers.prompted import prompted

            return prompted(adapter, self.protocol)
        return adapter

    def info(self) -> dict[str, Any]:
        """What reports show about the target."""
        return {
            "name": self.name,
            "format": self.format,
            "model": self.model,
            "simulated": self.simulated,
            "stream": self.stream,
            "mode": self.mode_label,
            "profile": self.endpoint_profile().name,
            "description": self.description,
        }


_KEYS = {f.name for f in fields(Target)} - {"name"}


def _targets_from(data: dict[str, Any], source: str) -> dict[str, Target]:
    targets = {}
    for name, raw in (data.get("targets") or {}).items():
        if not isinstance(raw, dict):
            raise ConfigError(f"{source}: [targets.{name}] must be a table")
        unknown = set(raw) - _KEYS
        if unknown:
            raise ConfigError(
                f"{source}: [targets.{name}] has unknown keys {sorted(unknown)}; known: {sorted(_KEYS)}"
            )
        for required in ("format", "model"):
            if required not in raw:
                raise ConfigError(f"{source}: [targets.{name}] needs {required!r}")
        targets[name] = Target(name=name, **raw)
    return targets


def load_targets(config: str | Path | None = None) -> dict[str, Target]:
    """Bundled targets, overridden and extended by ``harness.toml`` (or ``config``)."""
    bundled = tomllib.loads(resources.files("harness").joinpath("targets.toml").read_text())
    targets = _targets_from(bundled, "harness/targets.toml")
    path = Path(config) if config else Path("harness.toml")
    if path.is_file():
        try:
            user = tomllib.loads(path.read_text())
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: {exc}") from exc
        targets.update(_targets_from(user, str(path)))
    elif config:
        raise ConfigError(f"{path}: no such file")
    return targets


def pick(targets: dict[str, Target], names: list[str]) -> list[Target]:
    """Targets by name (glob patterns allowed), in the order given."""
    import fnmatch

    chosen: list[Target] = []
    for name in names:
        matches = [t for n, t in sorted(targets.items()) if fnmatch.fnmatch(n, name)]
        if not matches:
            raise UnknownNameError("target", name, targets)
        chosen.extend(t for t in matches if t not in chosen)
    return chosen
