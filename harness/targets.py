"""Targets: what to test, and the endpoint it is reached through.

A :class:`~harness.providers.profiles.Profile` is the one description of an
endpoint: wire format, base URL, key variable, path, headers and quirks. A
:class:`Target` is a profile plus a model plus how to drive it (stream,
prompted protocol, temperature...). Bundled targets live in
``harness/targets.toml``; users add or override targets *and profiles* in
``./harness.toml``, read by :mod:`harness.targets_file`. Target and profile names become file
names (``cassettes/<target>/``), so they may hold only letters, digits, ``.``, ``_`` and ``-``
(:data:`NAME_PATTERN`).
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.errors import ConfigError, UnknownNameError
from harness.providers import Adapter, Profile, adapter_class
from harness.providers.profiles import default_profile, get_profile
from harness.records import HOSTED_MODE, TargetInfo

SIM = "sim"
LOCAL_PREFIX = "local:"
NAME_PATTERN = re.compile(r"^(?!\.)(?!.*\.\.)[A-Za-z0-9._-]{1,128}$")
"""Names of targets and profiles: they become file and folder names, so no path separator,
no leading dot, no ``..`` (the schema's ``$defs/name`` says the same)."""
NAME_RULE = (
    "names become file and folder names, so they may hold only letters, digits, '.', '_' and '-', "
    "may not start with a dot and may not contain '..' (at most 128 characters)"
)


@dataclass(frozen=True)
class Target:
    """One thing to test: a profile (the endpoint), a model, and how to drive it.

    ``base_url`` overrides the profile's; ``sim`` / ``sim~<deviation>`` is the
    reference simulator and ``local:<model>`` a model server the harness runs
    itself (both started by :mod:`harness.servers.endpoints`). ``simulated`` is true for
    every target that does not reach a real model. ``agent`` names the user's own
    agent (``package.module:run`` or ``path/agent.py:run``, relative to ``origin``,
    the file that declared the target) to put under test instead of the harness's
    loop (:mod:`harness.agent.external`).

    ``headers`` are sent with every request (a gateway's routing or tenant
    headers): the profile's, with the target's own merged over them (names
    compared without case), so ``headers`` is always the whole set. Their values
    are treated as secrets: masked in transcripts, cassettes and reports, like the key.

    What the gate expects of it (``harness run``, :func:`harness.analysis.gate.gate`): ``min_score``
    overrides ``--min-score`` for this target; ``xfail`` maps scenario ids (or glob patterns)
    to the reason they are expected to fail: such a run that fails is ``xfail`` and does not
    fail the gate, one that passes is ``xpass`` and fails it unless ``xfail_strict`` is false
    (strict by default, like pytest's ``xfail_strict``).

    Example::

        target = harness.Target.build("my-groq", profile="groq", model="llama-3.3-70b-versatile")
        result = harness.run("scenarios", [target], harness.RunConfig(mode="live"))
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
    connect_timeout_s: float = 10.0
    request_timeout_s: float | None = None
    run_timeout_s: float | None = None
    retries: int = 2
    retry_max_wait_s: float = 30.0
    concurrency: int = 4
    requests_per_minute: float | None = None  # the provider's limits, kept to in live and record runs
    tokens_per_minute: float | None = None
    request_options: dict[str, Any] = field(default_factory=dict)
    agent: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    min_score: float | None = None
    xfail: dict[str, str] = field(default_factory=dict)
    xfail_strict: bool = True
    reference: str | None = None  # the target serving the same model as the reference (verify)
    migrates_from: str | None = None  # the same agent on another wire (the report's migration section)
    hosted_mcp: dict[str, Any] | None = None  # the scenarios' MCP servers handed to the provider's connector
    mcp_protocol_version: str | None = None  # the MCP revision for scenarios' servers that pin none
    origin: str = ""

    def __post_init__(self) -> None:
        own = {name.lower() for name in self.headers}
        inherited = {k: v for k, v in self.profile.headers.items() if k.lower() not in own}
        object.__setattr__(self, "headers", inherited | dict(self.headers))

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
        the profile's is a :class:`ConfigError` naming the target and both formats, and so is a
        name that is not safe as a file name (:data:`NAME_PATTERN`)."""
        check_name("target", name)
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

    @property
    def endpoint(self) -> str:
        """Where the target is served, as reports compare and show it: the resolved base URL
        without credentials, query or trailing ``/`` (``https://api.openai.com``), or ``sim``,
        ``sim~<deviation>``, ``local:<model>``. Targets with the same model, endpoint, stream and
        mode in different wire formats are one migration group (:mod:`harness.analysis.migration`)."""
        return endpoint_of(self.resolved_base_url())

    def api_key_variable(self) -> str | None:
        """The environment variable holding the key, or ``None`` when the endpoint needs none: the
        simulator, a managed local model, or a target pointing a profile at a loopback ``base_url``
        (a server on this machine) without naming a variable itself."""
        if self.api_key_env:
            return self.api_key_env
        if self.simulated or self.local_model or (self.base_url and _loopback(self.base_url)):
            return None
        return self.profile.api_key_env

    def adapter(self) -> Adapter:
        """The target's adapter: one for all its runs (adapters are pure: each parse folds into an
        accumulator of its own)."""
        return self._adapter

    @functools.cached_property
    def _adapter(self) -> Adapter:
        adapter = adapter_class(self.format)(self.profile)
        if self.protocol:
            from harness.providers.prompted import prompted

            return prompted(adapter, self.protocol)
        return adapter

    @property
    def mode_label(self) -> str:
        """``native``, ``prompted:<protocol>`` or ``agent``; ``+hosted-mcp`` when the provider runs
        the MCP servers (``hosted_mcp``)."""
        mode = f"prompted:{self.protocol}" if self.protocol else ("agent" if self.agent else "native")
        return mode + HOSTED_MODE if self.hosted_mcp is not None else mode

    def info(self) -> TargetInfo:
        """What reports show about the target (one value for all its runs' records)."""
        return self._info

    @functools.cached_property
    def _info(self) -> TargetInfo:
        return TargetInfo(
            name=self.name,
            format=self.format,
            model=self.model,
            simulated=self.simulated,
            stream=self.stream,
            mode=self.mode_label,
            profile=self.profile.name,
            description=self.description,
            reference=self.reference,
            endpoint=self.endpoint,
            migrates_from=self.migrates_from,
        )


def endpoint_of(base_url: str) -> str:
    """A base URL as :attr:`Target.endpoint` shows it: scheme and host lower-cased, no
    ``user:pass@`` (a secret), no query or fragment, no trailing ``/``; anything that is not an
    http(s) URL (``sim``, ``local:...``) as it is."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(base_url)
        host, port = parts.hostname, parts.port
    except ValueError:
        return base_url
    if parts.scheme not in ("http", "https") or not host:
        return base_url
    host = f"[{host}]" if ":" in host else host
    netloc = f"{host}:{port}" if port is not None else host
    return f"{parts.scheme}://{netloc}{parts.path.rstrip('/')}"


def check_name(kind: str, name: str) -> None:
    """Refuse a target or profile name that is not safe as a file name: it would put a cassette
    outside the cassette folder (``[targets."/abs/path"]`` once did)."""
    if not NAME_PATTERN.match(name):
        raise ConfigError(f"{kind} name {name!r} is not allowed: {NAME_RULE}")


def _loopback(url: str) -> bool:
    from urllib.parse import urlsplit

    try:
        host = urlsplit(url).hostname
    except ValueError:
        return False
    return host in ("localhost", "127.0.0.1", "::1") or bool(host and host.startswith("127."))


def pick(targets: dict[str, Target], names: list[str]) -> list[Target]:
    """Targets by name (glob patterns allowed), in the order given."""
    chosen: list[Target] = []
    for name in names:
        matches = [t for n, t in sorted(targets.items()) if fnmatch.fnmatch(n, name)]
        if not matches:
            raise UnknownNameError("target", name, targets)
        chosen.extend(t for t in matches if t not in chosen)
    return chosen
