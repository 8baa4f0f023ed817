from pathlib import Path

import pytest

from harness.errors import ScenarioError
from harness.scenarios import check, load, load_file, max_id_length, select

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
    assert "2 error(s) in 1 file(s)" in str(info.value)
    assert [(e.pointer, e.line) for e in info.value.problems] == [("/category", 2), ("/tools", 3)]


def test_unknown_key_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as info:
        load_file(write(tmp_path, VALID + "surprise: 1\n"))
    assert "unknown key 'surprise'" in str(info.value)
    assert (info.value.line, info.value.pointer) == (10, "/surprise")  # the key itself


def test_bad_regex_points_at_the_call(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as info:
        load_file(write(tmp_path, VALID.replace("{city: Paris}", "{city: {regex: '('}}")))
    assert info.value.pointer == "/expect/calls/0/args/city" and info.value.line == 9


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
    with pytest.raises(ScenarioError, match=r"unknown tool 'get_wether'.*did you mean 'get_weather'") as info:
        load_file(write(tmp_path, VALID.replace("tools: [get_weather]", "tools: [memory, get_wether]")))
    # the unknown tool alone: the expected call to the tool it misspells is its consequence
    assert [(e.pointer, e.line) for e in info.value.problems] == [("/tools/1", 3)]
    faulty = VALID + "faults:\n  - {tool: memory, error: boom}\n"
    with pytest.raises(ScenarioError, match="fault on 'memory', which the scenario does not offer") as info:
        load_file(write(tmp_path, faulty))
    assert info.value.pointer == "/faults/0/tool"


INLINE = """\
id: demo.orders
category: single
tools:
  - name: lookup_order
    description: Find an order by id.
    parameters:
      type: object
      properties:
        order_id: {type: string}
        include: {type: array, items: {type: string}}
      required: [order_id]
      additionalProperties: false
    cases:
      - when: {order_id: A-1}
        result: {status: shipped}
    default: {error: no such order}
messages:
  - {role: user, content: "Where is order A-1?"}
expect:
  calls:
    - name: lookup_order
      args: {order_id: A-1}
"""


def test_inline_declared_tools_load(tmp_path: Path) -> None:
    (scenario,) = load_file(write(tmp_path, INLINE))
    assert scenario.tool_names == ["lookup_order"]
    assert scenario.tools[0].instantiate({}).execute({"order_id": "A-1"}) == {"status": "shipped"}


@pytest.mark.parametrize(
    ("change", "message", "pointer", "line"),
    [
        (
            ("name: lookup_order\n      args", "name: find_order\n      args"),
            "expected call to 'find_order', which the scenario does not offer; offered: lookup_order",
            "/expect/calls/0/name",
            21,
        ),
        (
            ("expect:", "tool_choice: {name: track_parcel}\nexpect:"),
            "tool_choice names 'track_parcel', which the scenario does not offer",
            "/tool_choice/name",
            19,
        ),
        (
            ("expect:", "faults:\n  - {tool: refund, error: boom}\nexpect:"),
            "fault on 'refund', which the scenario does not offer",
            "/faults/0/tool",
            20,
        ),
        (
            ("expect:\n", "expect:\n  confirm_before: [lookup_order, refund_order]\n"),
            "confirm_before names 'refund_order', which the scenario does not offer",
            "/expect/confirm_before/1",
            20,
        ),
        (
            ("args: {order_id: A-1}", "args: {order_id: {regexp: '^A'}}"),
            "unknown matcher 'regexp'; did you mean 'regex'?",
            "/expect/calls/0/args/order_id",
            22,
        ),
        (
            ("args: {order_id: A-1}", "args: {order_id: {value: A-1}}"),
            "a literal object where the tool's schema expects string",
            "/expect/calls/0/args/order_id",
            22,
        ),
        (
            ("args: {order_id: A-1}", "args: {orderid: A-1}"),
            "expected argument 'orderid' is not a parameter of 'lookup_order' "
            "(parameters: order_id, include); did you mean 'order_id'?",
            "/expect/calls/0/args/orderid",
            22,
        ),
        (
            ("    default: {error: no such order}\n", "    default: {error: no such order}\n    result: 1\n"),
            "needs exactly one of result, error, cases, sequence, function",
            "/tools/0",
            4,
        ),
        (
            ("required: [order_id]", "required: order_id"),
            "parameters is not a valid JSON Schema",
            "/tools/0/parameters/required",
            11,
        ),
    ],
)
def test_each_mistake_is_caught_with_file_and_line(
    tmp_path: Path, change: tuple[str, str], message: str, pointer: str, line: int
) -> None:
    text = INLINE.replace(*change)
    assert text != INLINE
    path = write(tmp_path, text)
    with pytest.raises(ScenarioError) as error:
        load_file(path)
    (problem,) = error.value.problems
    assert message in problem.message and (problem.pointer, problem.line) == (pointer, line)
    assert problem.path == str(path)


def test_a_literal_object_is_written_with_exact(tmp_path: Path) -> None:
    text = INLINE.replace("args: {order_id: A-1}", "args: {order_id: A-1, include: {exact: [a]}}")
    assert load_file(write(tmp_path, text))


def test_every_bad_file_of_a_folder_is_reported(tmp_path: Path) -> None:
    write(tmp_path, INLINE, "good.yaml")
    write(tmp_path, INLINE.replace("demo.orders", "demo.b").replace("A-1}\n", "{regexp: x}}\n"), "b.yaml")
    write(tmp_path, VALID.replace("demo.one", "demo.c").replace("role: user", "role: robot"), "c.yaml")
    (tmp_path / "toolsets").mkdir()  # tool sets are not scenarios
    (tmp_path / "toolsets" / "t.yaml").write_text(
        "toolset: t\ntools: [{name: x, parameters: {type: object}, result: 1}]\n"
    )
    with pytest.raises(ScenarioError) as error:
        load([tmp_path])
    assert sorted(Path(p.path).name for p in error.value.problems) == ["b.yaml", "c.yaml"]


def test_a_tool_set_offers_its_tools(tmp_path: Path) -> None:
    (tmp_path / "toolsets").mkdir()
    (tmp_path / "toolsets" / "orders.yaml").write_text(
        "toolset: orders\ntools:\n"
        "  - name: lookup_order\n"
        "    parameters: {type: object, properties: {order_id: {type: string}}}\n"
        "    result: ok\n"
        "  - {name: cancel_order, parameters: {type: object}, error: not allowed}\n"
    )
    text = INLINE.replace(
        INLINE[INLINE.index("tools:") : INLINE.index("messages:")], "tools:\n  - {toolset: orders}\n"
    )
    (scenario,) = load_file(write(tmp_path, text))
    assert scenario.tool_names == ["lookup_order", "cancel_order"]
    wrong = text.replace("{toolset: orders}", "{toolset: orders, tools: [refund]}")
    with pytest.raises(ScenarioError, match=r"tool set 'orders' .* has no tool 'refund'"):
        load_file(write(tmp_path, wrong, "w.yaml"))
    unknown = text.replace("{toolset: orders}", "{toolset: billingz}")
    with pytest.raises(
        ScenarioError, match=r"unknown tool set 'billingz'.*known: cities, memory, orders, todo"
    ):
        load_file(write(tmp_path, unknown, "u.yaml"))


FOLLOW_UP = (
    VALID
    + """\
follow_ups:
  - content: "And Lyon?"
    expect:
      calls:
        - name: get_weather
          args: {city: Lyon}
"""
)


def test_follow_ups_load_with_their_own_expectation(tmp_path: Path) -> None:
    (scenario,) = load_file(write(tmp_path, FOLLOW_UP))
    (follow_up,) = scenario.follow_ups
    assert follow_up.content == "And Lyon?"
    later = scenario.phase(1)
    assert [m.content for m in later.messages] == ["Weather in Paris?", "And Lyon?"]
    assert later.expect.calls and later.expect.calls[0].args == {"city": "Lyon"}


@pytest.mark.parametrize(
    ("change", "message", "pointer", "line"),
    [
        (
            (
                "name: get_weather\n          args: {city: Lyon}",
                "name: get_time\n          args: {city: Lyon}",
            ),
            "expected call to 'get_time', which the scenario does not offer",
            "/follow_ups/0/expect/calls/0/name",
            14,
        ),
        (
            ("args: {city: Lyon}", "args: {city: {regexp: Ly}}"),
            "unknown matcher 'regexp'; did you mean 'regex'?",
            "/follow_ups/0/expect/calls/0/args/city",
            15,
        ),
        (
            ('- content: "And Lyon?"\n    expect:', "- expect:"),
            "'content' is a required property",
            "/follow_ups/0",
            11,
        ),
    ],
)
def test_a_follow_up_mistake_points_at_the_follow_up(
    tmp_path: Path, change: tuple[str, str], message: str, pointer: str, line: int
) -> None:
    text = FOLLOW_UP.replace(*change)
    assert text != FOLLOW_UP
    with pytest.raises(ScenarioError) as error:
        load_file(write(tmp_path, text))
    (problem,) = error.value.problems
    assert message in problem.message and (problem.pointer, problem.line) == (pointer, line)


BATCH = """\
id: demo.batch
category: batch
tools: [get_weather]
messages:
  - {role: user, content: "Weather in Paris and Lyon?"}
expect:
  calls:
    - {name: get_weather, args: {city: Paris}}
    - {name: get_weather, args: {city: Lyon}}
  order: any
  batch: per_item
limits: {max_turns: 3}
"""


@pytest.mark.parametrize(
    ("change", "message", "pointer"),
    [
        (
            ("limits: {max_turns: 3}", "limits: {max_turns: 2}"),
            "needs limits.max_turns of at least 3",
            "/expect/batch",
        ),
        (
            ("    - {name: get_weather, args: {city: Lyon}}\n", ""),
            "at least 2; this one expects 1",
            "/expect/batch",
        ),
        (("  batch: per_item", "  batch: per_item\n  parallel: true"), "drop 'parallel'", "/expect/parallel"),
        (("batch: per_item", "batch: sometimes"), "'sometimes' is not one of", "/expect/batch"),
    ],
)
def test_a_batch_states_a_mode_it_can_finish(
    tmp_path: Path, change: tuple[str, str], message: str, pointer: str
) -> None:
    assert load_file(write(tmp_path, BATCH))[0].expect.batch == "per_item"
    with pytest.raises(ScenarioError) as error:
        load_file(write(tmp_path, BATCH.replace(*change)))
    (problem,) = error.value.problems
    assert message in problem.message and problem.pointer == pointer


# -- one pass: every error of every file, each once ---------------------------------------


def problems_of(error: ScenarioError) -> list[tuple[str | None, int | None, str]]:
    return [(p.pointer, p.line, p.message) for p in error.problems]


def test_a_schema_error_hides_none_of_the_file_s_other_errors(tmp_path: Path) -> None:
    text = (
        INLINE.replace("category: single", "category: singel\ndescripton: typo")
        .replace("args: {order_id: A-1}", "args: {order_id: 1001, orderid: x, include: {regexp: a}}")
        .replace("messages:", "  - get_wether\nmessages:")
    )
    with pytest.raises(ScenarioError) as error:
        load_file(write(tmp_path, text))
    found = problems_of(error.value)
    assert [(pointer, line) for pointer, line, _ in found] == [
        ("/category", 2),
        ("/descripton", 3),
        ("/tools/1", 18),
        ("/expect/calls/0/args/include", 24),
        ("/expect/calls/0/args/orderid", 24),
        ("/expect/calls/0/args/order_id", 24),
    ]
    messages = [message for _, _, message in found]
    assert messages[0].endswith("; did you mean 'single'?")
    assert messages[1].startswith("unknown key 'descripton'; known keys here: id, category, description")
    assert messages[1].endswith("; did you mean 'description'?")
    assert "did you mean 'get_weather'?" in messages[2]
    assert "unknown matcher 'regexp'; did you mean 'regex'?" in messages[3]
    assert "did you mean 'order_id'?" in messages[4]
    assert messages[5].startswith("1001 is not of type 'string'") and "no valid call can match" in messages[5]


def test_a_part_the_schema_refuses_does_not_cascade(tmp_path: Path) -> None:
    """An expected call without a name, a tool entry of the wrong type, a max_turns out of
    range: each is reported once, and what it leaves unknown is not reported again."""
    text = (
        BATCH.replace("limits: {max_turns: 3}", "limits: {max_turns: 500}")
        .replace("tools: [get_weather]", "tools: [get_weather, 7]")
        .replace(
            "    - {name: get_weather, args: {city: Lyon}}\n",
            "    - {args: {city: Lyon}}\n    - {name: get_time}\n",
        )
    )
    with pytest.raises(ScenarioError) as error:
        load_file(write(tmp_path, text))
    assert [(pointer, line) for pointer, line, _ in problems_of(error.value)] == [
        ("/tools/1", 3),
        ("/expect/calls/1", 9),
        ("/limits/max_turns", 13),
    ]  # not: get_time "not offered" (tool 1 may offer it), nor the batch's max_turns


def write_billing(folder: Path, function: str) -> Path:
    (folder / "toolsets").mkdir(parents=True, exist_ok=True)
    path = folder / "toolsets" / "billing.yaml"
    path.write_text(
        "toolset: billing\n"
        "tools:\n"
        "  - name: refund\n"
        "    parameters: {type: object, properties: {amount: {type: number}}}\n"
        f"    function: {function}\n"
        "  - {name: balance, parameters: {type: object}, result: 10}\n"
    )
    return path


REFUND = """\
id: billing.refund.{n}
category: single
tools: [{{toolset: billing}}]
messages:
  - {{role: user, content: "Refund 3 euros"}}
expect:
  calls:
    - {{name: refund, args: {{amount: 3}}}}
"""


def test_a_broken_tool_set_is_one_error_however_many_scenarios_use_it(tmp_path: Path) -> None:
    toolset = write_billing(tmp_path, "no_such_module.x:refund")
    for n in range(15):
        write(tmp_path, REFUND.format(n=n), f"s{n}.yaml")
    scenarios, errors = check([tmp_path])
    assert scenarios == []
    (error,) = errors  # not 15 copies, and no "refund is not offered" cascades
    assert (error.path, error.line, error.pointer) == (str(toolset), 5, "/tools/0/function")
    assert "cannot import 'no_such_module.x'" in error.message


def test_a_duplicate_id_names_both_places(tmp_path: Path) -> None:
    write(tmp_path, VALID, "a.yaml")
    write(
        tmp_path,
        "- " + VALID.replace("\n", "\n  ").rstrip() + "\n- " + VALID.replace("\n", "\n  ").rstrip() + "\n",
        "b.yaml",
    )
    scenarios, errors = check([tmp_path])
    assert [s.id for s in scenarios] == ["demo.one"]
    assert [(Path(e.path).name, e.line, e.pointer) for e in errors] == [
        ("b.yaml", 1, "/0/id"),
        ("b.yaml", 10, "/1/id"),
    ]
    assert all(
        f"duplicate scenario id 'demo.one': first at {tmp_path / 'a.yaml'}:1" in e.message for e in errors
    )


def test_close_names_are_suggested(tmp_path: Path) -> None:
    (tmp_path / "toolsets").mkdir()
    (tmp_path / "toolsets" / "orders.yaml").write_text(
        "toolset: orders\ntools: [{name: lookup_order, parameters: {type: object}, result: ok}]\n"
    )
    toolset = INLINE.replace("messages:", "  - {toolset: orderz}\nmessages:")
    call = INLINE.replace("demo.orders", "demo.b").replace(
        "name: lookup_order\n      args", "name: lookup_ordr\n      args"
    )
    _, errors = check([write(tmp_path, toolset, "a.yaml"), write(tmp_path, call, "b.yaml")])
    assert [e.message.split("; ")[0] for e in errors] == [
        "unknown tool set 'orderz': no toolsets/orderz.yaml beside this file or in a folder above it, and no "
        "bundled one",
        "expected call to 'lookup_ordr', which the scenario does not offer",
    ]
    assert [e.message.split("; ")[-1] for e in errors] == [
        "did you mean 'orders'?",
        "did you mean 'lookup_order'?",
    ]


@pytest.mark.parametrize(
    ("change", "pointer", "message"),
    [
        (("tool_choice: auto", "tool_choice: requird"), "/tool_choice", "did you mean 'required'?"),
        (("tool_choice: auto", "tool_choice: {nam: x}"), "/tool_choice/nam", "'name'? (it is required)"),
        (("role: user", "role: usr"), "/messages/0/role", "did you mean 'user'?"),
        (("role: user", "rol: user"), "/messages/0/rol", "did you mean 'role'? (it is required)"),
        (("  calls:", "  call:"), "/expect/call", "did you mean 'calls'?"),
    ],
)
def test_a_misspelt_value_or_key_gets_the_closest_name(
    tmp_path: Path, change: tuple[str, str], pointer: str, message: str
) -> None:
    text = VALID.replace("messages:", "tool_choice: auto\nmessages:").replace(*change)
    with pytest.raises(ScenarioError) as error:
        load_file(write(tmp_path, text))
    (problem,) = error.value.problems
    assert problem.pointer == pointer and problem.message.endswith(message), problem


def test_an_id_too_long_to_name_a_cassette_is_refused(tmp_path: Path) -> None:
    assert load_file(write(tmp_path, VALID.replace("demo.one", "a" * max_id_length())))
    with pytest.raises(ScenarioError) as error:
        load_file(write(tmp_path, VALID.replace("demo.one", "a" * 255)))
    (problem,) = error.value.problems
    assert (problem.pointer, problem.line) == ("/id", 1)
    assert problem.message.startswith(f"too long: 255 characters, at most {max_id_length()} (")
    assert "255 bytes" in problem.message


@pytest.mark.parametrize(
    ("parameters", "pointer", "message"),
    [
        (
            "{type: object, properties: {a: {$ref: '#/$defs/nope'}}}",
            "/properties/a/$ref",
            "points to nothing",
        ),
        (
            "{type: object, properties: {a: {$ref: '#/$defs/x'}},"
            " $defs: {x: {$ref: '#/$defs/y'}, y: {$ref: '#/$defs/x'}}}",
            "/$defs/x/$ref",
            "references loop without end",
        ),
        (
            "{type: object, properties: {a: {$ref: 'file:///etc/passwd'}}}",
            "/properties/a/$ref",
            "never fetches",
        ),
        (
            "{type: object, properties: {a: {$ref: 'https://example.com/s.json'}}}",
            "/properties/a/$ref",
            "never fetches",
        ),
    ],
)
def test_a_ref_validation_could_not_follow_is_refused(
    tmp_path: Path, parameters: str, pointer: str, message: str
) -> None:
    text = INLINE.replace(
        INLINE[INLINE.index("    parameters:") : INLINE.index("    cases:")],
        f"    parameters: {parameters}\n",
    )
    with pytest.raises(ScenarioError) as error:
        load_file(write(tmp_path, text))
    (problem,) = error.value.problems
    assert (problem.pointer, problem.line) == ("/tools/0/parameters" + pointer, 6)
    assert message in problem.message


def test_a_recursive_schema_through_properties_is_fine(tmp_path: Path) -> None:
    node = "{type: object, properties: {kids: {type: array, items: {$ref: '#/$defs/node'}}}}"
    tree = f"{{type: object, properties: {{node: {{$ref: '#/$defs/node'}}}}, $defs: {{node: {node}}}}}"
    text = INLINE.replace(
        INLINE[INLINE.index("    parameters:") : INLINE.index("    cases:")], f"    parameters: {tree}\n"
    )
    text = text.replace("when: {order_id: A-1}", "when: {node: {any: true}}")
    assert load_file(write(tmp_path, text.replace("args: {order_id: A-1}", "args: {node: {kids: []}}")))


def test_a_second_key_is_refused_with_both_lines(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as error:
        load_file(write(tmp_path, VALID + "id: demo.renamed\n"))
    (problem,) = error.value.problems
    assert (problem.pointer, problem.line) == ("/id", 10)
    assert problem.message.startswith("duplicate key 'id': first at line 1, again at line 10")


@pytest.mark.parametrize(
    ("args", "refused"),
    [
        ("{order_id: 1001}", "1001 is not of type 'string'"),
        ("{order_id: {exact: 1001}}", "1001 is not of type 'string'"),
        ("{order_id: A-1, include: [a, 2]}", "2 is not of type 'string'"),
        ("{order_id: {contains: '10'}}", None),
        ("{order_id: A-1, include: [{contains: a}, 2]}", None),  # a matcher inside: not a literal
    ],
)
def test_each_expected_literal_is_checked_against_the_tool_s_schema(
    tmp_path: Path, args: str, refused: str | None
) -> None:
    text = INLINE.replace("args: {order_id: A-1}", f"args: {args}")
    if refused is None:
        assert load_file(write(tmp_path, text))
        return
    with pytest.raises(ScenarioError) as error:
        load_file(write(tmp_path, text))
    (problem,) = error.value.problems
    assert problem.message.startswith(refused) and problem.line == 22


def test_a_scenario_the_schema_accepted_is_not_validated_again_and_an_error_always_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The schema's verdict on an unchanged scenario is kept (the next command builds no
    validator for it); a scenario with a schema error is validated, and its error shown, every
    time, and an edit is a new scenario to validate."""
    from harness import scenarios

    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "cache"))
    path = write(tmp_path, VALID)
    load_file(path)
    built = scenarios.bundled_validator

    def refused(name: str, definition: str | None = None) -> object:
        raise AssertionError("validated again")

    monkeypatch.setattr(scenarios, "bundled_validator", refused)
    assert load_file(path)[0].id == "demo.one"
    monkeypatch.setattr(scenarios, "bundled_validator", built)
    bad = write(tmp_path, VALID.replace("category: single", "category: single\ncolour: red"), "bad.yaml")
    for _ in range(2):
        with pytest.raises(ScenarioError, match="colour"):
            load_file(bad)
    monkeypatch.setattr(scenarios, "bundled_validator", refused)
    edited = write(tmp_path, VALID.replace("Paris", "Lisbon"), "edited.yaml")
    with pytest.raises(AssertionError, match="validated again"):
        load_file(edited)
