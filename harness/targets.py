"""Targets and profiles: what to test, and the endpoint it is reached through.

A :class:`~harness.providers.profiles.Profile` is the one description of an
endpoint: wire format, base URL, key variable, path, headers and quirks. A
:class:`Target` is a profile plus a model plus how to drive it (stream,
prompted protocol, temperature...). Bundled targets live in
``harness/targets.toml``; users add or override targets *and profiles* in
``./harness.toml``::

    [profiles.my-gateway]               # a new OpenAI-compatible gateway: no code change
    format = "openai-chat"
    base_url = "https://llm.example.com"
    api_key_env = "GATEWAY_KEY"
    headers = {x-team = "search"}

    [targets.gateway-small]
    profile = "my-gateway"
    model = "small-1"

A target whose ``format`` contradicts its profile's is refused when loaded.
Keys are read from the environment variable a target or profile names, never
from a file.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from importlib import resources
from pathlib import Path
from typing import Any

from harness.errors import ConfigError, UnknownNameError
from harness.providers import Adapter, Profile, Quirk, adapter_class
from harness.providers.profiles import default_profile, get_profile
from harness.records import TargetInfo

SIM = "sim"
LOCAL_PREFIX = "local:"


@dataclass(frozen=True)
class Target:
    """One thing to test: a profile (the endpoint), a model, and how to drive it.

    ``base_url`` overrides the profile's; ``sim`` / ``sim~<deviation>`` is the
    reference simulator and ``local:<model>`` a model server the harness runs
    itself (both started by :mod:`harness.endpoints`). ``simulated`` is true for
    every target that does not reach a real model. ``agent`` names the user's own
    agent (``package.module:run`` or ``path/agent.py:run``, relative to ``origin``,
    the file that declared the target) to put under test instead of the harness's
    loop (:mod:`harness.agent.external`).

    Example::

        target = harness.Target.build("my-groq", profile="groq", model="llama-3.3-70b-versatile")
        result = harness.run("scenarios", [target], mode="live")
    """

    name: str
    profile: Profile
    model: str
    base_url: str = ""
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
    agent: str | None = None
    origin: str = ""

    @classmethod
    def build(
        cls,
        name: str,
        *,
        model: str,
        format: str | None = None,
        profile: str | Profile | None = None,
        profiles: Mapping[str, Profile] | None = None,
        **options: Any,
    ) -> Target:
        """A target from names: ``profile`` (a name looked up in ``profiles``, then the bundled
        ones) or, without one, the default profile of ``format``. A ``format`` that contradicts
        the profile's is a :class:`ConfigError` naming the target and both formats."""
        if isinstance(profile, str):
            profile = (profiles or {}).get(profile) or get_profile(profile)
        if profile is None:
            if format is None:
                raise ConfigError(f"target {name!r} needs 'format' or 'profile'")
            adapter_class(format)  # an unknown format lists the known ones
            profile = default_profile(format)
        elif format is not None and format != profile.format:
            raise ConfigError(
                f"target {name!r}: format {format!r} contradicts profile {profile.name!r}, "
                f"whose format is {profile.format!r}"
            )
        return cls(name=name, profile=profile, model=model, **options)

    @property
    def format(self) -> str:
        """The wire format: always the profile's."""
        return self.profile.format

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

    def resolved_base_url(self) -> str:
        """The configured URL, or the profile's default for a real provider."""
        return self.base_url or self.profile.base_url

    def api_key_variable(self) -> str | None:
        return self.api_key_env or (None if self.simulated or self.local_model else self.profile.api_key_env)

    def adapter(self) -> Adapter:
        adapter = adapter_class(self.format)(self.profile)
        if self.protocol:
            from harness.providers.prompted import prompted

            return prompted(adapter, self.protocol)
        return adapter

    @property
    def mode_label(self) -> str:
        return f"prompted:{self.protocol}" if self.protocol else ("agent" if self.agent else "native")

    def info(self) -> TargetInfo:
        """What reports show about the target."""
        return TargetInfo(
            name=self.name,
            format=self.format,
            model=self.model,
            simulated=self.simulated,
            stream=self.stream,
            mode=self.mode_label,
            profile=self.profile.name,
            description=self.description,
        )


TARGET_KEYS = frozenset({"format", "profile"} | {f.name for f in fields(Target)} - {"name", "origin"})
PROFILE_KEYS = frozenset({"extends"} | {f.name for f in fields(Profile)} - {"name"})


def _table(source: str, section: str, name: str, raw: Any, known: frozenset[str]) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: [{section}.{name}] must be a table")
    unknown = set(raw) - known
    if unknown:
        raise ConfigError(
            f"{source}: [{section}.{name}] has unknown keys {sorted(unknown)}; known: {sorted(known)}"
        )
    return raw


def _profiles_from(data: dict[str, Any], source: str) -> dict[str, Profile]:
    """``[profiles.<name>]`` tables; ``extends = "<profile>"`` starts from another profile."""
    found: dict[str, Profile] = {}
    for name, raw in (data.get("profiles") or {}).items():
        try:
            found[name] = _profile(source, name, raw, found)
        except (UnknownNameError, TypeError) as exc:
            raise ConfigError(f"{source}: [profiles.{name}]: {exc}") from exc
    return found


def _profile(source: str, name: str, raw: Any, found: dict[str, Profile]) -> Profile:
    """One ``[profiles.<name>]`` table as a :class:`Profile`."""
    values = dict(_table(source, "profiles", name, raw, PROFILE_KEYS))
    base_name = values.pop("extends", None)
    if "tool_choice" in values:
        values["tool_choice"] = frozenset(values["tool_choice"])
    if "quirks" in values:
        values["quirks"] = tuple(Quirk(**q) for q in values["quirks"])
    if base_name is not None:
        base = found.get(base_name) or get_profile(base_name)
        if "format" in values and values["format"] != base.format:
            raise ConfigError(
                f"{source}: [profiles.{name}] format {values['format']!r} contradicts the profile it "
                f"extends, {base_name!r} ({base.format!r})"
            )
        return dataclasses.replace(base, name=name, **values)
    if "format" not in values:
        raise ConfigError(f"{source}: [profiles.{name}] needs 'format' (or 'extends')")
    adapter_class(values["format"])
    return Profile(name=name, **values)


def _targets_from(data: dict[str, Any], source: str, profiles: Mapping[str, Profile]) -> dict[str, Target]:
    targets = {}
    for name, raw in (data.get("targets") or {}).items():
        values = dict(_table(source, "targets", name, raw, TARGET_KEYS))
        if "model" not in values:
            raise ConfigError(f"{source}: [targets.{name}] needs 'model'")
        if "format" not in values and "profile" not in values:
            raise ConfigError(f"{source}: [targets.{name}] needs 'format' (or a 'profile')")
        try:
            targets[name] = Target.build(name, profiles=profiles, origin=source, **values)
        except UnknownNameError as exc:
            raise ConfigError(f"{source}: [targets.{name}]: {exc}") from exc
        except ConfigError as exc:
            raise ConfigError(f"{source}: {exc}") from exc
    return targets


@dataclass(frozen=True)
class Config:
    """Targets and the profiles declared beside them (the bundled profiles are not listed)."""

    targets: dict[str, Target]
    profiles: dict[str, Profile]


def _read(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from exc


def load_config(config: str | Path | None = None) -> Config:
    """Bundled targets, overridden and extended by ``harness.toml`` (or ``config``), with the
    profiles that file declares.

    Example::

        config = harness.load_config("harness.toml")
        print(sorted(config.profiles), sorted(config.targets))
    """
    bundled = tomllib.loads(resources.files("harness").joinpath("targets.toml").read_text())
    targets = _targets_from(bundled, "harness/targets.toml", {})
    path = Path(config) if config else Path("harness.toml")
    profiles: dict[str, Profile] = {}
    if path.is_file():
        user = _read(path)
        profiles = _profiles_from(user, str(path))
        targets.update(_targets_from(user, str(path), profiles))
    elif config:
        raise ConfigError(f"{path}: no such file")
    return Config(targets, profiles)


def load_targets(config: str | Path | None = None) -> dict[str, Target]:
    """Bundled targets, overridden and extended by ``harness.toml`` (or ``config``).

    Example::

        targets = harness.load_targets()  # bundled, plus ./harness.toml
        print(sorted(targets))
    """
    return load_config(config).targets


def pick(targets: dict[str, Target], names: list[str]) -> list[Target]:
    """Targets by name (glob patterns allowed), in the order given."""
    chosen: list[Target] = []
    for name in names:
        matches = [t for n, t in sorted(targets.items()) if fnmatch.fnmatch(n, name)]
        if not matches:
            raise UnknownNameError("target", name, targets)
        chosen.extend(t for t in matches if t not in chosen)
    return chosen
