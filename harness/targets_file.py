"""``harness.toml``: the targets and profiles a user declares, read and checked in one pass.

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
    headers = {x-route = "canary"}      # merged over the profile's headers

The whole file is validated against ``harness/schemas/config.schema.json``
(JSON Schema 2020-12) before anything is built: every key of every table, its
type and its range (``stream`` a boolean, ``timeout_s > 0``, ``temperature``
0..2, ``base_url`` an http(s) URL with a port from 1 to 65535, or ``sim`` /
``sim~<deviation>`` (a deviation or endpoint fault the simulator has, ``name:<parameter>``
for a parametrised one) / ``local:<model>``...). Every error is listed, each as
``harness.toml:LINE: [targets.x] key: message`` (:class:`ConfigFileError`);
tomllib gives no line numbers, so :class:`harness.tomllines.TomlLines` finds them in the text.
Target and profile names become file names (``cassettes/<target>/``), so they
may hold only letters, digits, ``.``, ``_`` and ``-`` (:data:`NAME_PATTERN`). A
target whose ``format`` contradicts its profile's is refused too. Keys are read
from the environment variable a target or profile names, never from a file;
header values are treated as secrets (masked wherever requests are recorded).

A table holding only the gate's keys (``min_score``, ``xfail``, ``xfail_strict``) sets them on
the bundled target of that name instead of declaring a new one::

    [targets.local-gemma3-270m]
    min_score = 60
    xfail = {"weather.parallel.two_cities" = "Gemma 3 270M makes no parallel calls"}
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import re
import tomllib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from harness import yamlio
from harness.errors import ConfigError, UnknownNameError
from harness.providers import Profile, Quirk, adapter_class, formats
from harness.providers.profiles import get_profile
from harness.registry import load_path
from harness.targets import SIM, Target
from harness.tomllines import TomlLines, Where, too_deep
from harness.validation import bundled_schema, bundled_schema_bytes, did_you_mean, judged

TARGET_KEYS = frozenset({"format", "profile"} | {f.name for f in fields(Target)} - {"name", "origin"})
PROFILE_KEYS = frozenset({"extends"} | {f.name for f in fields(Profile)} - {"name"})


@dataclass(frozen=True)
class TargetsConfig:
    """Targets and the profiles declared beside them (the bundled profiles are not listed)."""

    targets: dict[str, Target]
    profiles: dict[str, Profile]
    history: str | None = None  # [history] url: a path (made relative to the file's folder) or a URL
    keep_runs: int | None = None  # [history] keep_runs: run folders kept under OUT/runs/ (0: all)


# -- errors with their place ----------------------------------------------------------------


@dataclass(frozen=True)
class ConfigProblem:
    """One error in a configuration file: the file, its line, the key path (``("targets",
    "x", "stream")``) and what is wrong."""

    source: str
    line: int | None
    where: Where
    message: str

    @property
    def table(self) -> str:
        """``[targets.x]``, or ``""`` for a top-level key or the whole file."""
        if len(self.where) < 2:
            return ""
        return f"[{self.where[0]}.{_toml_key(self.where[1])}]"

    @property
    def key(self) -> str:
        """The key inside the table, dotted (``headers.x-team``, ``quirks[0].id``); the key
        itself when it is top-level; ``""`` for a whole table."""
        rest = self.where[2:] if len(self.where) >= 2 else self.where
        text = ""
        for part in rest:
            text += f"[{part}]" if isinstance(part, int) else ("." if text else "") + _toml_key(part)
        return text

    def __str__(self) -> str:
        where = self.source + (f":{self.line}" if self.line else "")
        if self.table:
            return f"{where}: {self.table}{' ' + self.key if self.key else ''}: {self.message}"
        return f"{where}: {self.key}: {self.message}" if self.key else f"{where}: {self.message}"


class ConfigFileError(ConfigError):
    """A configuration file with errors: ``problems`` lists each (file, line, key, message),
    in the order of the file.

    Example::

        try:
            harness.load_config("harness.toml")
        except ConfigFileError as error:
            for problem in error.problems:
                print(problem.line, problem.table, problem.key, problem.message)
    """

    def __init__(self, problems: Sequence[ConfigProblem]):
        self.problems = sorted(problems, key=lambda p: (p.source, p.line or 0))
        if len(self.problems) == 1:
            super().__init__(str(self.problems[0]))
        else:
            lines = "\n".join(f"  {p}" for p in self.problems)
            super().__init__(f"{len(self.problems)} errors in {self.problems[0].source}:\n{lines}")


def _toml_key(name: str | int) -> str:
    """A key as it would be written in TOML: bare if it can be, quoted otherwise."""
    name = str(name)
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else json.dumps(name)


# -- the schema -------------------------------------------------------------------------------


def config_schema() -> dict[str, Any]:
    """``schemas/config.schema.json`` as shipped (its enums list the bundled wire formats and
    text protocols; :func:`_validator` puts the registered ones in)."""
    return bundled_schema("config")


@cache
def _validator(formats: tuple[str, ...], protocols: tuple[str, ...]) -> Any:
    """A validator of the schema with the wire formats and protocols registered now (code may
    register more than the shipped schema lists)."""
    import jsonschema

    schema = copy.deepcopy(config_schema())
    schema["$defs"]["format"]["enum"] = list(formats)
    schema["$defs"]["protocol"]["enum"] = list(protocols)
    return jsonschema.Draft202012Validator(schema)


_TYPE_WORDS = {
    "boolean": "a boolean (true or false)",
    "number": "a number",
    "integer": "an integer",
    "string": "a string",
    "object": "a table",
    "array": "an array",
}
_BOUNDS = (("exclusiveMinimum", ">"), ("minimum", ">="), ("maximum", "<="), ("exclusiveMaximum", "<"))
_MAX_NESTING = 32
"""Deepest nesting of TOML values (request_options may nest); deeper would only make the
validator recurse."""


def _schema_problems(data: dict[str, Any]) -> Iterator[tuple[Where, str]]:
    """Each schema error of ``data`` as (key path, message in the user's words)."""
    from harness.providers import formats
    from harness.providers.text_protocols import protocols

    names = (tuple(formats()), tuple(protocols()))

    def judge() -> list[Any]:
        return list(_validator(*names).iter_errors(data))

    for error in judged("config-schema", bundled_schema_bytes("config") + repr(names).encode(), data, judge):
        yield from _explain(error)


def _explain(error: Any) -> Iterator[tuple[Where, str]]:
    """One jsonschema error in the user's words, at the key it is about (an unknown or a
    missing key is its own key, not its table)."""
    path: Where = tuple(error.absolute_path)
    schema: dict[str, Any] = error.schema if isinstance(error.schema, dict) else {}
    value, kind = error.instance, error.validator
    if "propertyNames" in error.schema_path:
        yield (*path, value), f"name {value!r} is not allowed: {schema.get('x-message', error.message)}"
    elif kind == "additionalProperties":
        known = sorted(schema.get("properties", {}))
        for key in sorted(set(value) - set(known)):
            if path:
                yield (*path, key), f"unknown key; known: {', '.join(known)}"
            else:
                tables = "[targets.<name>] and [profiles.<name>] tables and [history]"
                yield (key,), f"unknown key: the file holds {tables}"
    elif kind == "required":
        for key in error.validator_value:
            if key not in value:
                yield (*path, key), "required, but missing"
    elif "x-message" in schema:
        alternatives = [r for choice in error.validator_value for r in choice.get("required", [])]
        yield (*path, *alternatives[:1]), schema["x-message"]
    elif kind in ("type", "pattern", "enum"):
        expected: str | None = schema.get("x-expected")
        if expected is None and kind == "type":
            types = (
                error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
            )
            words = [_TYPE_WORDS.get(str(t), str(t)) for t in types]
            expected = " or ".join(words) if len(words) < 3 else f"{', '.join(words[:-1])} or {words[-1]}"
            if path in (("targets",), ("profiles",)):
                expected += f" of {path[0]} ([{path[0]}.<name>] tables)"
        choices = f"; known: {', '.join(map(str, error.validator_value))}" if kind == "enum" else ""
        yield path, (f"expected {expected}, got {value!r}{choices}" if expected else error.message)
    elif kind in dict(_BOUNDS):
        bounds = " and ".join(f"{sign} {schema[word]}" for word, sign in _BOUNDS if word in schema)
        yield path, f"{value!r} is out of range: must be {bounds}"
    elif kind == "minLength" and error.validator_value == 1:
        yield path, "must not be empty"
    elif kind == "uniqueItems":
        yield path, f"{value!r} repeats a value"
    else:
        yield path, error.message


SIMULATOR_NAMES = ("harness.servers.sim.deviations:DEVIATIONS", "harness.servers.sim.faults:FAULTS")
"""Where the simulator lists its deviations and its endpoint faults (``sim~<name>``): read from
it, imported only when a configuration names one (paths as strings: the simulator is a layer
above)."""


def _url_problems(data: dict[str, Any]) -> Iterator[tuple[Where, str]]:
    """What the schema's pattern cannot say about a ``base_url``: a port past 65535 (or 0), and
    a ``sim~<name>`` the simulator does not have, found here rather than when a run starts."""
    for section in ("targets", "profiles"):
        tables = data.get(section)
        for name, table in tables.items() if isinstance(tables, dict) else ():
            url = table.get("base_url") if isinstance(table, dict) else None
            if isinstance(url, str):
                problem = (
                    _sim_problem(url[len(SIM) + 1 :]) if url.startswith(SIM + "~") else _port_problem(url)
                )
                if problem:
                    yield (section, name, "base_url"), problem


_PORT = re.compile(r"^https?://(?:[^/?#@]*@)?(?:\[[^\]]*\]|[^/?#:\[]*):(\d+)")


def _port_problem(url: str) -> str | None:
    found = _PORT.match(url)
    if found and not 1 <= int(found.group(1)) <= 65535:
        return f"port {found.group(1)} is out of range: a port is 1 to 65535"
    return None


def _sim_problem(deviation: str) -> str | None:
    """Why ``sim~<deviation>`` names nothing the simulator has (``name:<parameter>`` names
    ``name``), or None."""
    deviations, faults = (
        sorted({entry.partition(":")[0] for entry in load_path(path)}) for path in SIMULATOR_NAMES
    )
    name = deviation.partition(":")[0]
    if name in deviations or name in faults:
        return None
    return (
        f"unknown simulator deviation {name!r}; deviations: {', '.join(deviations)}; endpoint faults: "
        f"{', '.join(faults)}{did_you_mean(name, [*deviations, *faults])}"
    )


def _shape_problems(data: Any) -> Iterator[tuple[Where, str]]:
    """What JSON Schema cannot say about TOML data: ``nan`` (no range refuses it), and nesting
    so deep that validating it would recurse without end."""
    stack: list[tuple[Where, Any]] = [((), data)]
    while stack:
        path, value = stack.pop()
        if len(path) > _MAX_NESTING:
            yield path, f"nested more than {_MAX_NESTING} levels deep"
        elif isinstance(value, float) and math.isnan(value):
            yield path, "nan is not a usable number"
        elif isinstance(value, dict):
            stack.extend(((*path, k), v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend(((*path, i), v) for i, v in enumerate(value))


# -- reading a configuration --------------------------------------------------------------------


class _File:
    """One configuration file being read: its text, where its keys are, the problems found."""

    def __init__(self, source: str, text: str):
        self.source, self.text = source, text
        self.problems: list[ConfigProblem] = []
        self._lines: TomlLines | None = None

    def problem(self, where: Sequence[str | int], message: str) -> None:
        if self._lines is None:
            self._lines = TomlLines(self.text)
        line = self._lines.line(where)
        self.problems.append(ConfigProblem(self.source, line, tuple(where), message))

    def broken(self, section: str) -> set[str]:
        """Names of the tables of ``section`` with a problem."""
        return {str(p.where[1]) for p in self.problems if len(p.where) >= 2 and p.where[0] == section}


def _parse(source: str, text: str) -> tuple[_File, dict[str, Any]]:
    """The TOML data of ``text``, checked against the schema (problems noted in the file)."""
    file = _File(source, text)
    deep = too_deep(text, _MAX_NESTING)
    if deep is not None:  # tomllib would recurse until Python stops it, and name no line
        message = f"arrays or inline tables nested more than {_MAX_NESTING} levels deep"
        raise ConfigFileError([ConfigProblem(source, deep, (), message)])
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        message = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", str(exc))
        line = int(found.group(1)) if found else None
        raise ConfigFileError([ConfigProblem(source, line, (), f"not valid TOML: {message}")]) from None
    except RecursionError:
        raise ConfigFileError(
            [ConfigProblem(source, None, (), "not valid TOML here: arrays or tables nested too deeply")]
        ) from None
    for where, message in _shape_problems(data):
        file.problem(where, message)
    if any(len(p.where) > _MAX_NESTING for p in file.problems):
        raise ConfigFileError(file.problems)
    for where, message in _schema_problems(data):
        file.problem(where, message)
    refused = {p.where for p in file.problems}
    for where, message in _url_problems(data):
        if where not in refused:
            file.problem(where, message)
    return file, data


def _build_profiles(file: _File, data: dict[str, Any]) -> dict[str, Profile]:
    """``[profiles.<name>]`` as :class:`Profile` objects, the valid ones only. ``extends`` may
    name a bundled profile or one declared anywhere in the file (a cycle is an error)."""
    raw: dict[str, dict[str, Any]] = data.get("profiles", {})
    built: dict[str, Profile] = {}
    failed = file.broken("profiles")

    def build(name: str, chain: tuple[str, ...]) -> Profile | None:
        if name in built or name in failed:
            return built.get(name)
        values = dict(raw[name])
        base_name = values.pop("extends", None)
        if "tool_choice" in values:
            values["tool_choice"] = frozenset(values["tool_choice"])
        if "quirks" in values:
            values["quirks"] = tuple(Quirk(**q) for q in values["quirks"])
        profile: Profile | None = None
        if base_name is None:
            try:
                profile = Profile(name=name, **values)
            except TypeError as exc:  # the schema should have said so
                file.problem(("profiles", name), str(exc))
        else:
            base = _base_profile(file, (*chain, name), base_name, raw, build)
            if base is not None and "format" in values and values["format"] != base.format:
                file.problem(
                    ("profiles", name, "format"),
                    f"{values['format']!r} contradicts the profile it extends, {base_name!r} "
                    f"({base.format!r})",
                )
            elif base is not None:
                profile = dataclasses.replace(base, name=name, **values)
        if profile is None:
            failed.add(name)
        else:
            built[name] = profile
        return profile

    for name in raw:
        build(name, ())
    return {name: built[name] for name in raw if name in built}


def _base_profile(
    file: _File,
    chain: tuple[str, ...],
    base_name: str,
    raw: Mapping[str, Any],
    build: Callable[[str, tuple[str, ...]], Profile | None],
) -> Profile | None:
    """The profile ``chain[-1]`` extends: declared in the file (built first) or bundled."""
    where = ("profiles", chain[-1], "extends")
    if base_name in raw:
        if base_name in chain:
            file.problem(where, f"profiles extend each other in a cycle: {' -> '.join((*chain, base_name))}")
            return None
        base = build(base_name, chain)
        if base is None:
            file.problem(where, f"the profile it extends, {base_name!r}, has errors")
        return base
    try:
        return get_profile(base_name)
    except UnknownNameError as exc:
        file.problem(where, str(exc))
        return None


GATE_KEYS = frozenset({"min_score", "xfail", "xfail_strict"})
"""Keys a ``[targets.<name>]`` table may hold alone to set the gate of a bundled target."""


def _build_targets(
    file: _File, data: dict[str, Any], profiles: Mapping[str, Profile], base: Mapping[str, Target]
) -> dict[str, Target]:
    """``[targets.<name>]`` as :class:`Target` objects, the valid ones only. A table of gate keys
    only (:data:`GATE_KEYS`) changes the gate of the ``base`` target of that name, so a bundled
    target gets ``xfail`` without being declared again."""
    targets: dict[str, Target] = {}
    broken, failed_profiles = file.broken("targets"), file.broken("profiles")
    for name, raw in data.get("targets", {}).items():
        if name in broken:
            continue
        values = dict(raw)
        if values and set(values) <= GATE_KEYS:
            if name in base:
                targets[name] = dataclasses.replace(base[name], **values)
            else:
                file.problem(
                    ("targets", name),
                    f"no bundled target {name!r} to add {', '.join(sorted(values))} to: a new target "
                    "needs 'model' and 'format' or 'profile'",
                )
            continue
        fmt, profile_name = values.pop("format", None), values.pop("profile", None)
        profile: Profile | None = None
        if profile_name is not None:
            if profile_name in failed_profiles:
                file.problem(("targets", name, "profile"), f"profile {profile_name!r} has errors")
                continue
            try:
                profile = profiles.get(profile_name) or get_profile(profile_name)
            except UnknownNameError as exc:
                file.problem(("targets", name, "profile"), str(exc))
                continue
            if fmt is not None and fmt != profile.format:
                file.problem(
                    ("targets", name, "format"),
                    f"format {fmt!r} of target {name!r} contradicts profile {profile_name!r}, whose "
                    f"format is {profile.format!r}",
                )
                continue
        try:
            targets[name] = Target.build(name, format=fmt, profile=profile, origin=file.source, **values)
        except (ConfigError, UnknownNameError, TypeError) as exc:  # the schema should have said so
            file.problem(("targets", name), str(exc))
    every = {**base, **targets}
    for name, target in targets.items():
        if target.reference is not None and target.reference not in every:
            known = ", ".join(sorted(every))
            file.problem(
                ("targets", name, "reference"),
                f"no target {target.reference!r} to verify against; targets: {known}",
            )
        if target.hosted_mcp is not None and not target.adapter().hosted_mcp:
            file.problem(
                ("targets", name, "hosted_mcp"),
                f"wire format {target.format!r} has no hosted MCP connector; formats that have one: "
                f"{', '.join(hosted_formats())}",
            )
        if target.migrates_from is not None:
            problem = _migration_problem(target, every)
            if problem:
                file.problem(("targets", name, "migrates_from"), problem)
    return targets


def hosted_formats() -> list[str]:
    """The wire formats whose provider runs MCP servers itself (a target's ``hosted_mcp``)."""
    return [f for f in formats() if adapter_class(f).hosted_mcp]


def _migration_problem(target: Target, every: Mapping[str, Target]) -> str | None:
    """Why ``target.migrates_from`` cannot name the target its migration is compared with: none
    of that name, itself, or one in the same wire format (a migration changes the wire, or hands
    the MCP servers to the provider: ``hosted_mcp``)."""
    source = every.get(target.migrates_from or "")
    if source is None:
        return f"no target {target.migrates_from!r} to migrate from; targets: {', '.join(sorted(every))}"
    if source.name == target.name:
        return "a target cannot migrate from itself: name the target in the wire format it replaces"
    if source.format == target.format and (source.hosted_mcp is None) == (target.hosted_mcp is None):
        return (
            f"target {source.name!r} speaks the same wire format ({target.format}): name a target in "
            "the wire format this one replaces (or, for a hosted_mcp target, the target of the same "
            "wire running MCP in the harness's loop)"
        )
    return None


def read_config(source: str, text: str, base: Mapping[str, Target] | None = None) -> TargetsConfig:
    """The targets and profiles of a configuration ``text`` (``source`` names it in errors),
    added to the ``base`` targets (overriding them by name). Every problem of the text is
    listed in one :class:`ConfigFileError`.

    Example::

        config = read_config("inline", '[targets.x]\\nformat = "openai-chat"\\nmodel = "m"\\n')
        assert config.targets["x"].format == "openai-chat"
    """
    file, data = _parse(source, text)
    if file.problems and not all(isinstance(data.get(s, {}), dict) for s in ("targets", "profiles")):
        raise ConfigFileError(file.problems)
    profiles = _build_profiles(file, data)
    targets = dict(base or {})
    targets.update(_build_targets(file, data, profiles, base or {}))
    if file.problems:
        raise ConfigFileError(file.problems)
    table = data.get("history")
    keep = table.get("keep_runs") if isinstance(table, dict) else None
    return TargetsConfig(targets, profiles, _history(source, table), keep)


def _history(source: str, table: Any) -> str | None:
    """The ``[history] url`` of a configuration file (validated by its schema): a relative path is
    taken from the file's folder, as the file is read from anywhere."""
    url = table.get("url") if isinstance(table, dict) else None
    if not isinstance(url, str):
        return None
    if "://" in url or Path(url).is_absolute() or url.strip().lower() == "off":
        return url
    return str(Path(source).parent / url)


def bundled_targets() -> dict[str, Target]:
    """The targets shipped with the harness (``harness/targets.toml``), without any harness.toml."""
    text = resources.files("harness").joinpath("targets.toml").read_text(encoding="utf-8")
    return read_config("harness/targets.toml", text).targets


def load_config(config: str | Path | None = None) -> TargetsConfig:
    """Bundled targets, overridden and extended by ``harness.toml`` (or ``config``), with the
    profiles that file declares. The file is validated whole against
    ``schemas/config.schema.json``: a :class:`ConfigFileError` lists every problem, each with
    its line and key.

    Example::

        config = harness.load_config("harness.toml")
        print(sorted(config.profiles), sorted(config.targets))
    """
    targets = bundled_targets()
    path = Path(config) if config else Path("harness.toml")
    if not config and not path.is_file():
        return TargetsConfig(targets, {})
    try:
        text = yamlio.read_text(path)
    except yamlio.YamlError as exc:
        raise ConfigFileError([ConfigProblem(str(path), exc.line, (), str(exc))]) from None
    return read_config(str(path), text, targets)


def load_targets(config: str | Path | None = None) -> dict[str, Target]:
    """Bundled targets, overridden and extended by ``harness.toml`` (or ``config``).

    Example::

        targets = harness.load_targets()  # bundled, plus ./harness.toml
        print(sorted(targets))
    """
    return load_config(config).targets


def target_error(target: Target, key: str, message: str) -> ConfigError:
    """An error about one key of a target found after loading (its ``agent`` cannot be imported),
    at the key's line in the file that declared the target: ``harness.toml:12: [targets.x]
    agent: ...``."""
    if not target.origin:  # built in code
        return ConfigError(f"target {target.name!r}: {key}: {message}")
    where = ("targets", target.name, key)
    try:
        line = TomlLines(yamlio.read_text(target.origin)).line(where)
    except yamlio.YamlError:  # the file changed since: its name and the key still say where
        line = None
    return ConfigFileError([ConfigProblem(target.origin, line, where, message)])
