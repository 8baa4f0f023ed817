from pathlib import Path

import pytest

from harness.errors import ScenarioError
from harness.scenarios import load, load_file, select

VALID = """\
id: demo.one
category: single
tools: [get_weather]
messages:
  - {role: user, content: "Weather in Paris?"}
expect:
  calls:
    - name: get_weather
      args: {city: Paris}
"""


def write(tmp_path: Path, text: str, name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_valid_file_loads(tmp_path: Path) -> None:
    (scenario,) = load_file(write(tmp_path, VALID))
    assert scenario.id == "demo.one"
    assert scenario.expect.calls and scenario.expect.calls[0].args == {"city": "Paris"}
    assert scenario.tool_choice.mode == "auto"
    assert not scenario.expects_no_call


def test_bad_field_names_path_line_and_pointer(tmp_path: Path) -> None:
    path = write(tmp_path, VALID.replace("role: user", "role: robot"))
    with pytest.raises(ScenarioError) as info:
        load_file(path)
    error = info.value
    assert error.path == str(path)
    assert error.line == 5
    assert error.pointer == "/messages/0/role"
    assert f"{path}:5" in str(error) and "'robot' is not one of" in str(error)


def test_every_error_of_a_file_is_listed(tmp_path: Path) -> None:
    text = VALID.replace("category: single", "category: nope").replace("tools: [get_weather]", "tools: 3")
    with pytest.raises(ScenarioError) as info:
        load_file(write(tmp_path, text))
    assert "other errors" in str(info.value)
    assert "/tools" in str(info.value) and "/category" in str(info.value)


def test_unknown_key_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as info:
        load_file(write(tmp_path, VALID + "surprise: 1\n"))
    assert "surprise" in str(info.value) and info.value.line == 1


def test_bad_regex_points_at_the_call(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as info:
        load_file(write(tmp_path, VALID.replace("{city: Paris}", "{city: {regex: '('}}")))
    assert info.value.pointer == "/expect/calls/0/args" and info.value.line == 9


def test_invalid_yaml_has_a_line(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as info:
        load_file(write(tmp_path, "id: [unclosed\n"))
    assert info.value.line is not None and "invalid YAML" in str(info.value)


def test_duplicate_ids_are_refused(tmp_path: Path) -> None:
    write(tmp_path, VALID, "a.yaml")
    write(tmp_path, VALID, "b.yaml")
    with pytest.raises(ScenarioError, match=r"duplicate scenario id 'demo\.one'"):
        load([tmp_path])


def test_undeclared_mcp_server_is_refused(tmp_path: Path) -> None:
    text = VALID.replace("tools: [get_weather]", "tools: [{mcp: git}]")
    with pytest.raises(ScenarioError, match="MCP server 'git' is not declared") as info:
        load_file(write(tmp_path, text))
    assert info.value.pointer == "/tools/0/mcp"


def test_no_call_forms(tmp_path: Path) -> None:
    text = VALID.replace(
        """  calls:
    - name: get_weather
      args: {city: Paris}
""",
        "  calls: []\n",
    )
    (scenario,) = load_file(write(tmp_path, text))
    assert scenario.expects_no_call


def test_bundled_suite_is_valid_and_selectable() -> None:
    suite = load([Path(__file__).resolve().parents[2] / "scenarios"])
    assert len(suite) >= 12
    assert {"single", "sequential", "parallel", "error", "irrelevance"} <= {s.category for s in suite}
    assert [s.id for s in select(suite, ["parallel"])] == [s.id for s in suite if s.category == "parallel"]
    assert [s.id for s in select(suite, ["weather.*"])] == [
        s.id for s in suite if s.id.startswith("weather.")
    ]


def test_unknown_tools_and_faults_are_refused_at_load(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="unknown built-in tool 'get_wether'") as info:
        load_file(write(tmp_path, VALID.replace("tools: [get_weather]", "tools: [memory, get_wether]")))
    assert info.value.pointer == "/tools/1" and info.value.line == 3
    faulty = VALID + "faults:\n  - {tool: memory, error: boom}\n"
    with pytest.raises(ScenarioError, match="fault on 'memory', which the scenario does not offer") as info:
        load_file(write(tmp_path, faulty))
    assert info.value.pointer == "/faults/0/tool"
