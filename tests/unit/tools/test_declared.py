"""Declared tools and tool sets: what a call returns, per-run state, and errors with their line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.errors import ScenarioError
from harness.tools.declared import DeclarationError, declare, resolve_function
from harness.tools.run_tools import ToolFailure
from harness.tools.toolsets import bundled_tools, find_toolset, load_toolset, read_toolset

OBJECT = {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}


def tool(**behaviour: Any) -> Any:
    return declare(
        {"name": "lookup_order", "description": "Find an order.", "parameters": OBJECT, **behaviour}
    )


def test_a_canned_result_is_the_answer_to_every_call() -> None:
    order = tool(result={"status": "shipped"}).instantiate({})
    assert order.execute({"id": "A-1"}) == {"status": "shipped"}
    assert order.execute({}) == {"status": "shipped"}  # arguments against the schema: answered as declared
    assert tool(result="plain text").instantiate({}).execute({"id": "x"}) == "plain text"


def test_an_error_fails_every_call() -> None:
    with pytest.raises(ToolFailure, match="warehouse offline"):
        tool(error="warehouse offline").instantiate({}).execute({"id": "A-1"})


def test_cases_are_chosen_by_the_arguments_with_matchers() -> None:
    order = tool(
        cases=[
            {"when": {"id": "A-1"}, "result": {"status": "shipped"}},
            {"when": {"id": {"regex": "^B-"}}, "error": "order on hold"},
        ],
        default={"result": {"status": "unknown"}},
    ).instantiate({})
    assert order.execute({"id": "A-1"}) == {"status": "shipped"}
    with pytest.raises(ToolFailure, match="order on hold"):
        order.execute({"id": "B-7"})
    assert order.execute({"id": "Z"}) == {"status": "unknown"}
    without_default = tool(cases=[{"when": {"id": "A-1"}, "result": 1}]).instantiate({})
    with pytest.raises(ToolFailure, match="no answer declared"):
        without_default.execute({"id": "other"})


def test_a_sequence_answers_each_call_in_turn_and_repeats_the_last() -> None:
    flaky = tool(sequence=[{"error": "timeout"}, {"result": "ok"}])
    first_run = flaky.instantiate({})
    with pytest.raises(ToolFailure, match="timeout"):
        first_run.execute({"id": "1"})
    assert [first_run.execute({"id": "1"}) for _ in range(2)] == ["ok", "ok"]
    with pytest.raises(ToolFailure):  # a fresh run starts the sequence again
        flaky.instantiate({}).execute({"id": "1"})
    assert first_run.serial == "sequence:lookup_order"  # calls in order, so a replay sees the same answers


def counter(arguments: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    state["n"] = state.get("n", 0) + 1
    return {"call": state["n"], "id": arguments["id"]}


def test_a_python_function_gets_the_arguments_and_a_state_for_the_run() -> None:
    declared = tool(function=f"{__name__}:counter")
    state: dict[str, Any] = {}
    run = declared.instantiate(state)
    assert [run.execute({"id": "a"}), run.execute({"id": "b"})] == [
        {"call": 1, "id": "a"},
        {"call": 2, "id": "b"},
    ]
    assert declared.instantiate({}).execute({"id": "c"}) == {"call": 1, "id": "c"}


def test_a_function_in_a_file_is_found_relative_to_the_declaring_file(tmp_path: Path) -> None:
    (tmp_path / "tools.py").write_text("def echo(arguments, state):\n    return arguments\n")
    fn = resolve_function("./tools.py:echo", tmp_path / "set.yaml")
    assert fn({"a": 1}, {}) == {"a": 1}


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        ("no_such_module_xyz:f", "cannot import 'no_such_module_xyz'"),
        (f"{__name__}:missing", "has no callable 'missing'"),
        (f"{__name__}:one_argument", "must accept (arguments, state)"),
    ],
)
def test_a_bad_function_is_a_clear_error(reference: str, message: str) -> None:
    with pytest.raises(DeclarationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        tool(function=reference)


def one_argument(arguments: dict[str, Any]) -> None:
    return None


@pytest.mark.parametrize(
    ("declaration", "message"),
    [
        ({"result": 1, "error": "x"}, "needs exactly one of result, error, cases, sequence, function"),
        ({}, "it has none of them"),
        ({"result": 1, "default": {"result": 2}}, "'default' goes with 'cases'"),
    ],
)
def test_a_declaration_must_say_what_a_call_returns(declaration: dict[str, Any], message: str) -> None:
    with pytest.raises(DeclarationError, match=message):
        tool(**declaration)


def test_parameters_must_be_an_object_schema() -> None:
    with pytest.raises(DeclarationError, match="not a valid JSON Schema"):
        declare(
            {"name": "t", "parameters": {"type": "object", "properties": {"a": {"type": 5}}}, "result": 1}
        )
    with pytest.raises(DeclarationError, match="must be an object schema"):
        declare({"name": "t", "parameters": {"type": "string"}, "result": 1})


def test_the_builtin_tools_are_bundled_tool_sets() -> None:
    assert set(bundled_tools()) == {"memory", "todo", "get_weather", "get_time", "convert_temperature"}
    assert bundled_tools()["memory"].toolset == "memory"


def test_a_tool_set_is_found_beside_or_above_the_scenario(tmp_path: Path) -> None:
    (tmp_path / "toolsets").mkdir()
    (tmp_path / "toolsets" / "orders.yaml").write_text(
        "toolset: orders\ntools:\n  - {name: lookup_order, parameters: {type: object}, result: ok}\n"
    )
    (tmp_path / "deep" / "er").mkdir(parents=True)
    found = find_toolset("orders", tmp_path / "deep" / "er" / "s.yaml")
    assert found is not None and found.toolset.names == ["lookup_order"] and not found.errors
    assert find_toolset("nothing-here", tmp_path / "s.yaml") is None
    assert find_toolset("memory", tmp_path / "s.yaml") is not None  # bundled


def test_every_error_of_a_tool_set_file_has_its_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "toolset: bad\n"
        "tools:\n"
        "  - name: a\n"
        "    parameters: {type: object}\n"
        "    colour: red\n"
        "  - name: b\n"
        "    parameters: 7\n"
        "    result: x\n"
    )
    with pytest.raises(ScenarioError) as error:
        load_toolset(path)
    assert [(p.line, p.pointer) for p in error.value.problems] == [
        (5, "/tools/0/colour"),  # the unknown key itself
        (7, "/tools/1/parameters"),
    ]


def test_one_bad_tool_of_a_tool_set_hides_none_of_the_others(tmp_path: Path) -> None:
    """A bad regex in a case, a $ref that points nowhere and a function file that does not
    import, in three tools of one file: all three, each at its line, in one reading."""
    (tmp_path / "broken.py").write_text("raise SystemExit(7)\n")
    path = tmp_path / "set.yaml"
    path.write_text(
        "toolset: set\n"
        "tools:\n"
        "  - name: a\n"
        "    parameters: {type: object}\n"
        "    cases: [{when: {q: {regex: '('}}, result: 1}]\n"
        "  - name: b\n"
        "    parameters: {type: object, properties: {x: {$ref: '#/$defs/none'}}}\n"
        "    result: 2\n"
        "  - {name: c, parameters: {type: object}, function: 'broken.py:run'}\n"
        "  - {name: d, parameters: {type: object}, result: 4}\n"
    )
    reading = read_toolset(path)
    assert [(e.line, e.pointer) for e in reading.errors] == [
        (5, "/tools/0/cases/0/when"),
        (7, "/tools/1/parameters/properties/x/$ref"),
        (9, "/tools/2/function"),
    ]
    assert "invalid regex '('" in reading.errors[0].message
    assert "raised SystemExit: 7" in reading.errors[2].message
    assert reading.toolset.names == ["d"] and reading.broken == {"a", "b", "c"} and reading.names_known


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def run(arguments, state:\n    return 1\n", "syntax error at {file}:1: '(' was never closed"),
        ("raise SystemExit(7)\n", "importing 'bad.py' raised SystemExit: 7"),
        ("raise RuntimeError('no database')\n", "importing 'bad.py' raised RuntimeError: no database"),
    ],
)
def test_a_function_file_that_cannot_be_imported_is_bad_input(
    tmp_path: Path, source: str, expected: str
) -> None:
    """Not a traceback, not the harness exiting 7: the tool set file, the function and why."""
    (tmp_path / "bad.py").write_text(source)
    path = tmp_path / "set.yaml"
    path.write_text(
        "toolset: set\ntools:\n  - {name: a, parameters: {type: object}, function: 'bad.py:run'}\n"
    )
    with pytest.raises(ScenarioError) as error:
        load_toolset(path)
    (problem,) = error.value.problems
    assert (problem.path, problem.line, problem.pointer) == (str(path), 3, "/tools/0/function")
    assert problem.message.startswith("function 'bad.py:run': ")
    assert expected.format(file=tmp_path / "bad.py") in problem.message
