"""Property tests: whatever a user's file holds, loading it succeeds or raises the harness's own
error (YamlError, ScenarioError, ConfigError: a UserError), never a traceback of something else.

Each property runs a fixed budget of examples, derandomized so CI sees the same ones every run.
"""

from __future__ import annotations

import contextlib
import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import yamlio
from harness.errors import ConfigError, UserError
from harness.scenarios import load_file
from harness.targets_file import TARGET_KEYS, load_config

BUDGET = settings(
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

YAML_ALPHABET = [*"[]{}:-,&*!|>'\"#?%@`~<=.\\ \t\n\r", "ab", "1", "x", "\ufeff", "\x85", "é", "\x00"]
TOML_ALPHABET = [*"[]{}=.,\"'#\n \t-_+:", "targets", "profiles", "x", "1", "true", "inf", "nan", "é"]


def yamlish(max_size: int = 300) -> st.SearchStrategy[str]:
    """Text made mostly of YAML's indicators, so the parser gets past its first character."""
    return st.lists(st.sampled_from(YAML_ALPHABET), max_size=max_size).map("".join)


def tomlish(max_size: int = 200) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(TOML_ALPHABET), max_size=max_size).map("".join)


# PyYAML's own emitter writes NEL and the Unicode line separators so that they read back as
# spaces, with or without this harness: left out of the data that round-trips.
plain_text = st.text(
    st.characters(exclude_categories=["Cs"], exclude_characters="\x85\u2028\u2029"), max_size=20
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | plain_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(plain_text, inner, max_size=4),
    max_leaves=30,
)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("properties")


# -- yamlio ------------------------------------------------------------------------------------------


@BUDGET
@given(st.text(max_size=500) | yamlish())
def test_loads_of_any_text_is_data_or_a_yaml_error(text: str) -> None:
    with contextlib.suppress(yamlio.YamlError):
        yamlio.loads(text)


@BUDGET
@given(st.binary(max_size=500) | yamlish().map(lambda text: text.encode("utf-8", "surrogatepass")))
def test_load_of_any_bytes_is_data_or_a_yaml_error(folder: Path, data: bytes) -> None:
    path = folder / "any.yaml"
    path.write_bytes(data)
    with contextlib.suppress(yamlio.YamlError):
        yamlio.load(path)
    with contextlib.suppress(yamlio.YamlError):
        yamlio.loads(data)


@BUDGET
@given(json_values, st.sampled_from([None, True, False]))
def test_what_pyyaml_dumps_loads_back_unchanged(value: Any, flow: bool | None) -> None:
    text = yaml.safe_dump(value, default_flow_style=flow, allow_unicode=True)
    data, _ = yamlio.loads(text)
    assert data == value or (isinstance(value, float) and math.isnan(value))


# -- scenario files ------------------------------------------------------------------------------------

scenario_like = st.fixed_dictionaries(
    {"id": st.text(max_size=10) | st.integers(), "category": st.sampled_from(["single", "x", ""])},
    optional={
        "messages": st.lists(
            st.fixed_dictionaries(
                {"role": st.sampled_from(["user", "assistant", "tool", "x"])},
                optional={"content": json_values},
            ),
            max_size=3,
        )
        | json_values,
        "tools": st.lists(st.sampled_from(["get_weather", "nope"]) | json_values, max_size=3),
        "expect": json_values
        | st.fixed_dictionaries(
            {}, optional={"calls": st.lists(json_values, max_size=2), "final": json_values}
        ),
        "tool_choice": json_values,
        "faults": json_values,
        "max_turns": json_values,
        "mcp_servers": json_values,
    },
)


BUNDLED = sorted((Path(__file__).resolve().parents[2] / "scenarios").rglob("*.yaml"))
SCENARIOS = [
    yaml.safe_load(path.read_text(encoding="utf-8")) for path in BUNDLED if "toolsets" not in path.parts
]


@st.composite
def mutated_scenario(draw: st.DrawFn) -> str:
    """A bundled scenario with one field, somewhere inside it, replaced by any value or removed."""
    data = copy.deepcopy(draw(st.sampled_from(SCENARIOS)))
    node: Any = data
    for _ in range(draw(st.integers(0, 4))):
        children = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
        inside = [value for _, value in children if isinstance(value, (dict, list)) and value]
        if not inside:
            break
        node = draw(st.sampled_from(inside))
    if isinstance(node, dict):
        key = draw(st.sampled_from(sorted(node, key=str)))
        if draw(st.booleans()):
            node[key] = draw(json_values)
        else:
            del node[key]
    else:
        node[draw(st.integers(0, len(node) - 1))] = draw(json_values)
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False)


@BUDGET
@given(
    st.text(max_size=300)
    | yamlish()
    | scenario_like.map(lambda s: yaml.safe_dump(s, allow_unicode=True))
    | mutated_scenario()
)
def test_a_scenario_file_of_any_text_loads_or_is_a_scenario_error(folder: Path, text: str) -> None:
    path = folder / "scenario.yaml"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    with contextlib.suppress(UserError):
        load_file(path)


# -- harness.toml ---------------------------------------------------------------------------------------


def toml_value(value: Any) -> str:
    """``value`` written as TOML (inline: arrays and inline tables)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return (
            "nan"
            if math.isnan(value)
            else ("inf" if value > 0 else "-inf")
            if math.isinf(value)
            else repr(value)
        )
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{toml_string(k)} = {toml_value(v)}" for k, v in value.items()) + "}"


def toml_string(text: str) -> str:
    """A TOML basic string: JSON's escapes, but characters beyond the BMP written as themselves."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


toml_scalars = st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats() | st.text(max_size=15)
toml_values = st.recursive(
    toml_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=10,
)
keys = st.sampled_from(sorted(TARGET_KEYS | {"extends", "tool_choice", "quirks", "path", "colour"}))
plausible = st.sampled_from(
    [
        *(
            "openai-chat",
            "groq",
            "sim",
            "sim~bad",
            "local:m",
            "m",
            "https://x.example/v1",
            "hermes",
            "pkg:run",
        ),
        *(0, 1, 0.5, 3, -1, True, False, ["auto"], {"x-team": "a"}, [{"id": "a", "detail": "b"}]),
    ]
)
tables = st.dictionaries(keys, plausible | toml_values, max_size=6) | st.dictionaries(
    keys, plausible, max_size=2
).map(lambda extra: {"model": "m", "format": "openai-chat", **extra})
names = (
    st.from_regex(r"[A-Za-z0-9_-]{1,8}", fullmatch=True)
    | st.sampled_from(["groq", "openai"])
    | st.text(max_size=8)
)


def toml_file(sections: list[tuple[str, str, dict[str, Any]]]) -> str:
    lines = []
    for section, name, table in sections:
        lines.append(f"[{section}.{toml_string(name)}]")
        lines += [f"{key} = {toml_value(value)}" for key, value in table.items()]
    return "\n".join(lines) + "\n"


config_like = st.lists(
    st.tuples(st.sampled_from(["targets", "profiles"]), names, tables),
    max_size=3,
    unique_by=lambda section: (section[0], section[1]),
).map(toml_file)


@BUDGET
@given(st.text(max_size=300) | tomlish() | config_like)
def test_a_config_of_any_text_loads_or_is_a_config_error(folder: Path, text: str) -> None:
    path = folder / "harness.toml"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    with contextlib.suppress(ConfigError):
        load_config(path)


@BUDGET
@given(config_like)
def test_every_config_error_names_its_line(folder: Path, text: str) -> None:
    path = folder / "harness.toml"
    path.write_text(text, encoding="utf-8")
    try:
        load_config(path)
    except ConfigError as error:
        problems = getattr(error, "problems", [])
        assert problems, str(error)
        assert all(problem.line is not None for problem in problems), str(error)
