"""The BFCL import and the ``bfcl`` matcher, held to BFCL's own verdicts without bfcl-eval.

Each row of :data:`CASES` is a model turn for one entry of ``tests/data/bfcl`` with the
verdict BFCL's AST checker gives it (``bfcl_eval`` 2026.3.23, read from its checker and
confirmed by running it: ``benchmarks/bfcl_agreement.py`` does the same over every entry).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.errors import ScenarioError
from harness.importers.bfcl import (
    CANNED_RESULT,
    Entry,
    grade,
    import_file,
    read_entries,
    refusal,
    scenario_id,
    to_json_schema,
)
from harness.matchers import args_match, bfcl_normalize, check_matcher, example, match
from harness.scenarios import Scenario, load
from tests.helpers.cli import REPO

DATA = REPO / "tests" / "data" / "bfcl"
Calls = list[tuple[str, dict[str, Any]]]

TRIANGLE = "calculate_triangle_area"
RIGHT_TRIANGLE = {"base": 10, "height": 5, "unit": "units"}
FIELD = "calculate_magnetic_field"
VOLTAGE = "calculate_voltage_difference"
SPOTIFY = [
    ("spotify.play", {"artist": "Taylor Swift", "duration": 20}),
    ("spotify.play", {"artist": "Maroon 5", "duration": 15}),
]
HOUSES = "realestate.find_properties"
HOUSE = {"location": "San Diego", "propertyType": "villa", "bedrooms": 3}
BUDGET = {"min": 300000.0, "max": 400000.0}

CASES: list[tuple[str, str, Calls, bool]] = [
    # simple: one call, first function
    ("simple_python_0", "right", [(TRIANGLE, RIGHT_TRIANGLE)], True),
    ("simple_python_0", "optional argument left out", [(TRIANGLE, {"base": 10, "height": 5})], True),
    ("simple_python_0", "wrong value", [(TRIANGLE, {**RIGHT_TRIANGLE, "base": 11})], False),
    ("simple_python_0", "missing required argument", [(TRIANGLE, {"height": 5})], False),
    ("simple_python_0", "extra undeclared argument", [(TRIANGLE, {**RIGHT_TRIANGLE, "color": "red"})], False),
    (
        "simple_python_0",
        "wrong type: string for integer",
        [(TRIANGLE, {**RIGHT_TRIANGLE, "base": "10"})],
        False,
    ),
    ("simple_python_0", "float for integer", [(TRIANGLE, {**RIGHT_TRIANGLE, "base": 10.0})], False),
    ("simple_python_0", "bool for integer", [(TRIANGLE, {**RIGHT_TRIANGLE, "base": True})], False),
    ("simple_python_0", "string case and spaces", [(TRIANGLE, {**RIGHT_TRIANGLE, "unit": "  UNITS "})], True),
    (
        "simple_python_0",
        "string punctuation ,./-_*^",
        [(TRIANGLE, {**RIGHT_TRIANGLE, "unit": "u-n_i.t,s*^/"})],
        True,
    ),
    ("simple_python_0", "tab inside a string", [(TRIANGLE, {**RIGHT_TRIANGLE, "unit": "uni\tts"})], False),
    ("simple_python_0", "'' for an optional string", [(TRIANGLE, {**RIGHT_TRIANGLE, "unit": ""})], True),
    ("simple_python_0", "the call twice", [(TRIANGLE, RIGHT_TRIANGLE), (TRIANGLE, RIGHT_TRIANGLE)], False),
    ("simple_python_0", "no call", [], False),
    ("simple_python_1", "dotted name", [("math.factorial", {"number": 5})], True),
    ("simple_python_1", "dotted name, underscored", [("math_factorial", {"number": 5})], False),
    (
        "simple_python_13",
        "array of float",
        [("calculate_area_under_curve", {"function": "x**2", "interval": [1.0, 3.0]})],
        True,
    ),
    (
        "simple_python_13",
        "ints in an array of float",
        [("calculate_area_under_curve", {"function": "x**2", "interval": [1, 3]})],
        False,
    ),
    (
        "simple_python_17",
        "required although '' is listed: left out",
        [("get_prime_factors", {"number": 450})],
        False,
    ),
    (
        "simple_python_17",
        "required although '' is listed: given",
        [("get_prime_factors", {"number": 450, "formatted": True})],
        True,
    ),
    # parallel: any order, all in one turn
    ("parallel_0", "right", SPOTIFY, True),
    ("parallel_0", "parallel order swapped", SPOTIFY[::-1], True),
    ("parallel_0", "a call missing", SPOTIFY[:1], False),
    ("parallel_0", "a call repeated", [*SPOTIFY, SPOTIFY[0]], False),
    (
        "parallel_0",
        "values crossed between the calls",
        [
            ("spotify.play", {"artist": "Taylor Swift", "duration": 15}),
            ("spotify.play", {"artist": "Maroon 5", "duration": 20}),
        ],
        False,
    ),
    (
        "parallel_multiple_12",
        "right",
        [(FIELD, {"current": 4.0, "distance": 2.0}), (VOLTAGE, {"electric_field": 5.0, "distance": 3.0})],
        True,
    ),
    (
        "parallel_multiple_12",
        "int for float",
        [
            (FIELD, {"current": 4, "distance": 2}),
            (VOLTAGE, {"electric_field": 5, "distance": 3, "charge": 0}),
        ],
        True,
    ),
    (
        "parallel_multiple_12",
        "answered but undeclared argument given",
        [
            (FIELD, {"current": 4.0, "distance": 2.0}),
            (VOLTAGE, {"electric_field": 5.0, "distance": 3.0, "permeability": 0.1}),
        ],
        False,
    ),
    (
        "parallel_multiple_12",
        "swapped",
        [(VOLTAGE, {"electric_field": 5.0, "distance": 3.0}), (FIELD, {"current": 4.0, "distance": 2.0})],
        True,
    ),
    # multiple: the right function among several; dicts key by key
    ("multiple_8", "right", [(HOUSES, {**HOUSE, "budget": BUDGET})], True),
    (
        "multiple_8",
        "another listed string, restyled",
        [(HOUSES, {**HOUSE, "location": "san diego ca", "budget": BUDGET})],
        True,
    ),
    (
        "multiple_8",
        "ints inside a dict (compared with ==)",
        [(HOUSES, {**HOUSE, "budget": {"min": 300000, "max": 400000}})],
        True,
    ),
    (
        "multiple_8",
        "wrong value inside a dict",
        [(HOUSES, {**HOUSE, "budget": {"min": 1.0, "max": 400000.0}})],
        False,
    ),
    (
        "multiple_8",
        "extra key inside a dict",
        [(HOUSES, {**HOUSE, "budget": {**BUDGET, "currency": "USD"}})],
        False,
    ),
    ("multiple_8", "key missing inside a dict", [(HOUSES, {**HOUSE, "budget": {"min": 300000.0}})], False),
    ("multiple_8", "another function", [("property_valuation.get", {**HOUSE, "age": 1})], False),
    (
        "live_multiple_1-0-1",
        "strings inside a dict normalised",
        [
            (
                "ChaDri.change_drink",
                {"drink_id": "1234", "new_preferences": {"sweetness_level": "NONE", "temperature": " Hot"}},
            )
        ],
        True,
    ),
    (
        "multiple_10",
        "array of strings, another listed order, restyled",
        [
            (
                "database.modify_columns",
                {
                    "db_name": "employees",
                    "table": "personal_data",
                    "operation": "delete",
                    "columns": ["SSN", "E-mail"],
                },
            )
        ],
        True,
    ),
    # irrelevance: no call is right
    ("irrelevance_0", "no call", [], True),
    ("irrelevance_0", "a call", [("determine_body_mass_index", {"weight": 70, "height": 1.75})], False),
]


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Scenario]:
    """The sample categories the cases use, imported into a scratch folder."""
    out = tmp_path_factory.mktemp("bfcl")
    for category in (
        "simple_python",
        "parallel",
        "parallel_multiple",
        "multiple",
        "live_multiple",
        "irrelevance",
    ):
        answers = DATA / "possible_answer" / f"{category}.jsonl"
        import_file(DATA / f"{category}.jsonl", answers if answers.exists() else None, out)
    return {s.id: s for s in load([out])}


@pytest.mark.parametrize(
    ("bfcl_id", "label", "calls", "valid"), CASES, ids=[f"{c[0]}: {c[1]}" for c in CASES]
)
def test_the_harness_grades_as_bfcl_does(
    imported: dict[str, Scenario], bfcl_id: str, label: str, calls: Calls, valid: bool
) -> None:
    result = grade(imported[scenario_id(bfcl_id)], calls)
    assert result.passed is valid, result.problems


def test_the_cases_cover_every_mutation_kind_of_the_brief() -> None:
    labels = " ".join(label for _, label, _, _ in CASES)
    for kind in (
        "right",
        "wrong value",
        "missing required",
        "extra",
        "wrong type",
        "int for float",
        "string case",
        "spaces",
        "order swapped",
    ):
        assert kind in labels


# -- the matcher on its own ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "normalised"),
    [
        ("April 1, 2024", "april12024"),
        ("San_Diego-CA./*^", "sandiegoca"),
        ("it's", 'it"s'),
        ("New\tYork", "new\tyork"),
        ("", ""),
    ],
)
def test_strings_are_normalised_as_bfcl_does(text: str, normalised: str) -> None:
    assert bfcl_normalize(text) == normalised


def test_an_argument_listing_blank_may_be_left_out_unless_required() -> None:
    optional = {"bfcl": {"values": ["celsius", ""], "type": "string"}}
    required = {"bfcl": {"values": ["celsius", ""], "type": "string", "required": True}}
    assert args_match({"city": "Paris", "unit": optional}, {"city": "Paris"}) == []
    assert args_match({"unit": required}, {}) == ["$.unit: missing (expected " + repr(required) + ")"]
    assert args_match({"unit": optional}, {"unit": "fahrenheit"}, exact=True) != []


def test_a_variable_answer_is_compared_as_it_is() -> None:
    """BFCL reads an answer whose type differs from the parameter's as a variable name: a value
    of the answer's type is then compared without normalisation."""
    variable = {"bfcl": {"values": ["x_value"], "type": "integer"}}
    assert match(variable, "x_value") == []
    assert match(variable, "X VALUE") != []
    assert match(variable, 3) != []  # the right type, but plain `in` against ["x_value"] fails
    assert match({"bfcl": {"values": [3], "type": "integer"}}, 3) == []


def test_nulls_are_listed_values_like_any_other() -> None:
    assert match({"bfcl": {"values": [None, ""], "type": "string"}}, None) == []
    assert match({"bfcl": {"values": [None, ""], "type": "string"}}, "None") != []


def test_a_bad_operand_is_a_validation_problem() -> None:
    assert check_matcher({"bfcl": {"values": [1]}}) == ["bfcl needs 'type'"]
    assert "unknown type 'number'" in check_matcher({"bfcl": {"values": [1], "type": "number"}})[0]
    assert (
        "unknown key 'value'" in check_matcher({"bfcl": {"value": [1], "values": [1], "type": "integer"}})[0]
    )
    assert (
        check_matcher({"bfcl": {"values": [1], "type": "integer", "items": "dict", "required": False}}) == []
    )


def test_the_example_is_an_accepted_value_and_leaves_out_what_must_be_left_out() -> None:
    """The simulator plays the example of each expected call: it must satisfy the matcher."""
    args = {
        "unit": {"bfcl": {"values": ["", "units"], "type": "string"}},
        "legacy": {"bfcl": {"values": [""], "type": "integer"}},
        "budget": {"bfcl": {"values": [{"min": [300000], "max": ["", 5.0]}], "type": "dict"}},
        "items": {"bfcl": {"values": [[{"a": ["x", ""]}]], "type": "array", "items": "dict"}},
    }
    made = example(args)
    assert made == {"unit": "units", "budget": {"min": 300000, "max": 5.0}, "items": [{"a": "x"}]}
    assert args_match(args, made, exact=True) == []


# -- the import --------------------------------------------------------------------------


def entry(data: dict[str, Any]) -> Entry:
    return Entry("cat.jsonl", 7, {"id": "simple_python_9", **data})


def test_bfcl_types_become_json_schema() -> None:
    schema = {
        "type": "dict",
        "properties": {
            "ratio": {"type": "float", "optional": True, "default": 0.5},
            "point": {"type": "tuple", "items": {"type": "float"}},
            "blob": {"type": "any", "description": "anything"},
            "nested": {"type": "dict", "properties": {"optional": {"type": "boolean"}}},
            "rows": {"type": "array", "items": {"type": "dict", "properties": {"n": {"type": "integer"}}}},
        },
        "required": ["ratio"],
    }
    assert to_json_schema(schema, entry({})) == {
        "type": "object",
        "properties": {
            "ratio": {"type": "number", "default": 0.5},
            "point": {"type": "array", "items": {"type": "number"}},
            "blob": {"type": "string", "description": "anything"},
            "nested": {"type": "object", "properties": {"optional": {"type": "boolean"}}},
            "rows": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "integer"}}}},
        },
        "required": ["ratio"],
    }


def test_an_unknown_type_names_file_line_and_field() -> None:
    with pytest.raises(ScenarioError) as error:
        to_json_schema(
            {"type": "dict", "properties": {"x": {"type": "number"}}}, entry({}), "function", 0, "parameters"
        )
    assert error.value.path == "cat.jsonl" and error.value.line == 7
    assert error.value.pointer == "/function/0/parameters/properties/x/type"
    assert "unknown BFCL type 'number'" in str(error.value) and "simple_python_9" in str(error.value)


@pytest.mark.parametrize(
    ("bfcl_id", "expected"),
    [
        ("simple_python_0", "bfcl.simple_python_0"),
        ("live_multiple_27-7-0", "bfcl.live_multiple_27-7-0"),
        ("Odd id/2", "bfcl.odd_id_2"),
    ],
)
def test_scenario_ids_keep_the_bfcl_id_safe_for_file_names(bfcl_id: str, expected: str) -> None:
    assert scenario_id(bfcl_id) == expected


def test_categories_that_need_more_than_possible_answers_are_refused_with_why() -> None:
    assert refusal("live_simple") is None
    assert "stateful Python back-ends" in str(refusal("multi_turn_base"))
    assert "Java" in str(refusal("simple_java"))
    assert "any call at all" in str(refusal("live_relevance"))
    assert "unknown BFCL category" in str(refusal("something_else"))


def test_an_imported_scenario_reads_as_bfcl_says(imported: dict[str, Scenario]) -> None:
    factorial = imported["bfcl.simple_python_1"]
    assert factorial.category == "single" and factorial.tool_names == ["math.factorial"]
    assert factorial.tools[0].answer is not None and factorial.tools[0].answer.result == CANNED_RESULT
    (call,) = factorial.expect.calls or ()
    assert (call.name, call.args, call.args_exact) == (
        "math.factorial",
        {"number": {"bfcl": {"values": [5], "type": "integer"}}},
        True,
    )
    pair = imported["bfcl.parallel_0"].expect
    assert (pair.order, pair.parallel, len(pair.calls or ())) == ("any", True, 2)
    assert imported["bfcl.irrelevance_0"].expect.calls == ()
    assert imported["bfcl.parallel_multiple_12"].expect.calls is not None
    assert (
        "permeability" not in imported["bfcl.parallel_multiple_12"].expect.calls[1].args
    )  # undeclared, may be left out


def test_an_entry_bfcl_could_never_pass_is_skipped_and_named(tmp_path: Path) -> None:
    question = json.loads((DATA / "simple_python.jsonl").read_text().splitlines()[0])
    (tmp_path / "q.jsonl").write_text(json.dumps(question) + "\n")
    answer = {"id": question["id"], "ground_truth": [{"calculate_triangle_area": {"height": [5]}}]}
    (tmp_path / "a.jsonl").write_text(json.dumps(answer) + "\n")
    result = import_file(tmp_path / "q.jsonl", tmp_path / "a.jsonl", tmp_path / "out")
    assert result.written == []
    assert result.skipped == [
        (
            "simple_python_0",
            "BFCL could never pass it: 'base' is required by the function but absent from its "
            "possible answer",
        )
    ]


def test_bad_input_is_every_error_with_its_line_and_nothing_is_written(tmp_path: Path) -> None:
    lines = (DATA / "simple_python.jsonl").read_text().splitlines()[:3]
    broken = json.loads(lines[1])
    broken["function"][0]["parameters"]["properties"]["number"]["type"] = "int"
    (tmp_path / "q.jsonl").write_text("\n".join([lines[0], json.dumps(broken), "{not json"]) + "\n")
    with pytest.raises(ScenarioError) as error:
        read_entries(tmp_path / "q.jsonl")
    assert [(p.line, p.message.split(":")[0]) for p in error.value.problems] == [(3, "not JSON")]
    (tmp_path / "q.jsonl").write_text("\n".join([lines[0], json.dumps(broken)]) + "\n")
    with pytest.raises(ScenarioError) as error:
        import_file(tmp_path / "q.jsonl", DATA / "possible_answer" / "simple_python.jsonl", tmp_path / "out")
    (problem,) = error.value.problems
    assert (problem.line, problem.pointer) == (2, "/function/0/parameters/properties/number/type")
    assert not (tmp_path / "out").exists()


def test_a_file_of_another_category_is_refused(tmp_path: Path) -> None:
    (tmp_path / "m.jsonl").write_text(
        json.dumps({"id": "multi_turn_base_0", "question": [], "function": []}) + "\n"
    )
    with pytest.raises(ScenarioError, match=r"multi_turn_base.*not imported"):
        import_file(tmp_path / "m.jsonl", None, tmp_path / "out")


def test_answers_are_needed_where_bfcl_has_them(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="needs --answers"):
        import_file(DATA / "live_simple.jsonl", None, tmp_path / "out")


def test_a_json_array_file_imports_too_and_errors_point_into_it(tmp_path: Path) -> None:
    items = [json.loads(line) for line in (DATA / "irrelevance.jsonl").read_text().splitlines()[:2]]
    (tmp_path / "irrelevance.json").write_text(json.dumps(items, indent=1))
    result = import_file(tmp_path / "irrelevance.json", None, tmp_path / "out")
    assert [p.name for p in result.written] == ["irrelevance_0.yaml", "irrelevance_1.yaml"]
    items[1]["function"][0]["parameters"]["type"] = "object"
    (tmp_path / "irrelevance.json").write_text(json.dumps(items, indent=1))
    with pytest.raises(ScenarioError) as error:
        import_file(tmp_path / "irrelevance.json", None, tmp_path / "out2")
    assert error.value.pointer == "/1/function/0/parameters"
