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
    assert "2 error(s) in 1 file(s)" in str(info.value)
    assert [(e.pointer, e.line) for e in info.value.problems] == [("/category", 2), ("/tools", 3)]


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
    with pytest.raises(ScenarioError, match=r"unknown tool 'get_wether'.*did you mean 'get_weather'") as info:
        load_file(write(tmp_path, VALID.replace("tools: [get_weather]", "tools: [memory, get_wether]")))
    # the unknown tool, then the expected call to a tool no longer offered
    expected = [("/tools/1", 3), ("/expect/calls/0/name", 8)]
    assert [(e.pointer, e.line) for e in info.value.problems] == expected
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
