"""Text protocols (prompted mode), the PromptedAdapter, and leak detection for native mode."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.errors import UnknownNameError
from harness.model import Message, ToolCall, ToolChoice, ToolResult, ToolSpec, WireResponse
from harness.providers import RequestOptions, formats
from harness.providers.openai import OpenAIChatAdapter
from harness.providers.prompted import PromptedAdapter, prompted
from harness.providers.text_protocols import (
    TextParse,
    detect_leaks,
    estimate_tokens,
    get_protocol,
    native_tools_size,
    protocols,
)

PROTOCOLS = ["json", "xml", "xml-name-attr", "hermes"]

STRING = {"type": "string"}
INTEGER = {"type": "integer"}

# name -> (arguments, properties of the tool's schema)
CASES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "simple": ({"city": "Paris"}, {"city": STRING}),
    "multiline": (
        {"path": "notes.txt", "content": "first line\nsecond line\n\n    indented\nlast"},
        {"path": STRING, "content": STRING},
    ),
    "markdown": ({"content": '# Title\n\n```python\nprint("hi")\n```\n'}, {"content": STRING}),
    "xml_special": (
        {"expr": "a < b && c > d", "snippet": "x]]>y <![CDATA[z]]> </tool_call> &amp;"},
        {"expr": STRING, "snippet": STRING},
    ),
    "several": (
        {"path": "a.txt", "count": 3, "ratio": 0.5, "force": True, "note": None, "code": "007"},
        {
            "path": STRING,
            "count": INTEGER,
            "ratio": {"type": "number"},
            "force": {"type": "boolean"},
            "note": {"type": ["string", "null"]},
            "code": STRING,
        },
    ),
    "nested": (
        {"options": {"mode": "fast", "limits": {"max": 10, "min": 1}}},
        {
            "options": {
                "type": "object",
                "properties": {
                    "mode": STRING,
                    "limits": {"type": "object", "properties": {"max": INTEGER, "min": INTEGER}},
                },
            }
        },
    ),
    "arrays": (
        {
            "tags": ["a", "b"],
            "ids": [1, 2, 3],
            "one": ["solo"],
            "empty": [],
            "items": [{"name": "x", "qty": 1}, {"name": "y", "qty": 2}],
        },
        {
            "tags": {"type": "array", "items": STRING},
            "ids": {"type": "array", "items": INTEGER},
            "items": {
                "type": "array",
                "items": {"type": "object", "properties": {"name": STRING, "qty": INTEGER}},
            },
            "one": {"type": "array", "items": STRING},
            "empty": {"type": "array", "items": STRING},
        },
    ),
    "unicode": ({"text": "Café naïve — 日本語 🎉👍🏽", "city": "Zürich"}, {"text": STRING, "city": STRING}),
}


def tool_for(case: str) -> ToolSpec:
    return ToolSpec("act", f"Edge case {case}.", {"type": "object", "properties": CASES[case][1]})


# Model-style text for every protocol and case: (reply, prose expected to remain).
HANDWRITTEN: dict[str, dict[str, tuple[str, str | None]]] = {
    "json": {
        "simple": (
            'I will look it up.\n\n```json\n{\n  "tool_calls": [\n'
            '    {"name": "act", "arguments": {"city": "Paris"}}\n  ]\n}\n```',
            "I will look it up.",
        ),
        "multiline": (
            r'{"tool_calls": [{"name": "act", "arguments": {"path": "notes.txt", '
            r'"content": "first line\nsecond line\n\n    indented\nlast"}}]}',
            None,
        ),
        "markdown": (
            'Writing the file.\n```json\n{"tool_calls": [{"name": "act", "arguments": '
            r'{"content": "# Title\n\n```python\nprint(\"hi\")\n```\n"}}]}'
            "\n```",
            "Writing the file.",
        ),
        "xml_special": (
            r'{"tool_calls":[{"name":"act","arguments":{"expr":"a < b && c > d",'
            r'"snippet":"x]]>y <![CDATA[z]]> </tool_call> &amp;"}}]}',
            None,
        ),
        "several": (
            '{\n  "tool_calls": [\n    {\n      "name": "act",\n      "arguments": {\n'
            '        "path": "a.txt",\n        "count": 3,\n        "ratio": 0.5,\n'
            '        "force": true,\n        "note": null,\n        "code": "007"\n      }\n'
            "    }\n  ]\n}\nDone.",
            "Done.",
        ),
        "nested": (
            '{"tool_calls": [{"name": "act", "arguments": {"options": {"mode": "fast", '
            '"limits": {"max": 10, "min": 1}}}}]}',
            None,
        ),
        "arrays": (
            '{"tool_calls": [{"name": "act", "arguments": {"tags": ["a", "b"], "ids": [1, 2, 3], '
            '"items": [{"name": "x", "qty": 1}, {"name": "y", "qty": 2}], "one": ["solo"], '
            '"empty": []}}]}',
            None,
        ),
        "unicode": (
            r'{"tool_calls": [{"name": "act", "arguments": '
            r'{"text": "Caf\u00e9 naïve — 日本語 🎉👍🏽", "city": "Z\u00fcrich"}}]}',
            None,
        ),
    },
    "hermes": {
        "simple": ('<tool_call>\n{"name": "act", "arguments": {"city": "Paris"}}\n</tool_call>', None),
        "multiline": (
            'Saving.\n<tool_call>\n{"name": "act", "arguments": {"path": "notes.txt", '
            r'"content": "first line\nsecond line\n\n    indented\nlast"}}'
            "\n</tool_call>",
            "Saving.",
        ),
        "markdown": (
            '<tool_call>\n{"name": "act", "arguments": '
            r'{"content": "# Title\n\n```python\nprint(\"hi\")\n```\n"}}'
            "\n</tool_call>",
            None,
        ),
        "xml_special": (
            '<tool_call>\n{"name": "act", "arguments": {"expr": "a < b && c > d", '
            '"snippet": "x]]>y <![CDATA[z]]> </tool_call> &amp;"}}\n</tool_call>',
            None,
        ),
        "several": (
            '<tool_call>\n{\n  "name": "act",\n  "arguments": {"path": "a.txt", "count": 3, '
            '"ratio": 0.5, "force": true, "note": null, "code": "007"}\n}\n</tool_call>',
            None,
        ),
        "nested": (
            '<tool_call>{"name":"act","arguments":{"options":{"mode":"fast",'
            '"limits":{"max":10,"min":1}}}}</tool_call>',
            None,
        ),
        "arrays": (
            '<tool_call>\n{"name": "act", "arguments": {"tags": ["a", "b"], "ids": [1, 2, 3], '
            '"items": [{"name": "x", "qty": 1}, {"name": "y", "qty": 2}], "one": ["solo"], '
            '"empty": []}}\n</tool_call>',
            None,
        ),
        "unicode": (
            '<tool_call>\n{"name": "act", "arguments": {"text": "Café naïve — 日本語 🎉👍🏽", '
            r'"city": "Z\u00fcrich"}}'
            "\n</tool_call>",
            None,
        ),
    },
    "xml-name-attr": {
        "simple": ('Sure.\n<tool_call name="act">{"city": "Paris"}</tool_call>', "Sure."),
        "multiline": (
            '<tool_call name="act">\n{"path": "notes.txt", '
            r'"content": "first line\nsecond line\n\n    indented\nlast"}'
            "\n</tool_call>",
            None,
        ),
        "markdown": (
            "<tool_call name='act'>"
            r'{"content": "# Title\n\n```python\nprint(\"hi\")\n```\n"}</tool_call>',
            None,
        ),
        "xml_special": (
            '<tool_call name="act">{"expr": "a < b && c > d", '
            '"snippet": "x]]>y <![CDATA[z]]> </tool_call> &amp;"}</tool_call>',
            None,
        ),
        "several": (
            '<tool_call name="act">\n{\n  "path": "a.txt",\n  "count": 3,\n  "ratio": 0.5,\n'
            '  "force": true,\n  "note": null,\n  "code": "007"\n}\n</tool_call>',
            None,
        ),
        "nested": (
            '<tool_call name="act">{"options": {"mode": "fast", '
            '"limits": {"max": 10, "min": 1}}}</tool_call>',
            None,
        ),
        "arrays": (
            '<tool_call name="act">{"tags": ["a", "b"], "ids": [1, 2, 3], '
            '"items": [{"name": "x", "qty": 1}, {"name": "y", "qty": 2}], "one": ["solo"], '
            '"empty": []}</tool_call>',
            None,
        ),
        "unicode": (
            '<tool_call name="act">{"text": "Café naïve — 日本語 🎉👍🏽", "city": "Zürich"}</tool_call>',
            None,
        ),
    },
    "xml": {
        "simple": (
            "Let me check.\n<tool_call>\n  <tool_name>act</tool_name>\n  <arguments>\n"
            "    <city>Paris</city>\n  </arguments>\n</tool_call>",
            "Let me check.",
        ),
        "multiline": (
            "<tool_call>\n<tool_name>act</tool_name>\n<arguments>\n<path>notes.txt</path>\n"
            "<content><![CDATA[first line\nsecond line\n\n    indented\nlast]]></content>\n"
            "</arguments>\n</tool_call>",
            None,
        ),
        "markdown": (
            "<tool_call><tool_name>act</tool_name><arguments>\n<content>\n<![CDATA[# Title\n\n"
            '```python\nprint("hi")\n```\n]]>\n</content>\n</arguments></tool_call>',
            None,
        ),
        "xml_special": (
            "<tool_call>\n<tool_name>act</tool_name>\n<arguments>\n"
            "<expr>a &lt; b &amp;&amp; c &gt; d</expr>\n"
            "<snippet><![CDATA[x]]]]><![CDATA[>y <![CDATA[z]]]]><![CDATA[> </tool_call> &amp;]]>"
            "</snippet>\n</arguments>\n</tool_call>",
            None,
        ),
        "several": (
            "<tool_call>\n<tool_name>act</tool_name>\n<arguments>\n<path>a.txt</path>\n"
            "<count>3</count>\n<ratio>0.5</ratio>\n<force>true</force>\n<note>null</note>\n"
            "<code>007</code>\n</arguments>\n</tool_call>",
            None,
        ),
        "nested": (
            "<tool_call>\n  <tool_name>act</tool_name>\n  <arguments>\n    <options>\n"
            "      <mode>fast</mode>\n      <limits><max>10</max><min>1</min></limits>\n"
            "    </options>\n  </arguments>\n</tool_call>",
            None,
        ),
        "arrays": (
            "<tool_call>\n<tool_name>act</tool_name>\n<arguments>\n<tags>a</tags>\n<tags>b</tags>\n"
            "<ids>1</ids>\n<ids>2</ids>\n<ids>3</ids>\n<items><name>x</name><qty>1</qty></items>\n"
            "<items><name>y</name><qty>2</qty></items>\n<one><![CDATA[solo]]></one>\n"
            "<empty>[]</empty>\n</arguments>\n</tool_call>",
            None,
        ),
        "unicode": (
            "<tool_call><tool_name>act</tool_name><arguments>"
            "<text>Café naïve — 日本語 🎉👍🏽</text><city><![CDATA[Zürich]]></city>"
            "</arguments></tool_call>",
            None,
        ),
    },
}


def errors(result: TextParse) -> list[str]:
    return [f.check_id for f in result.findings if f.severity == "error"]


def test_registry_lists_the_four_protocols() -> None:
    assert protocols() == sorted(PROTOCOLS)
    assert [get_protocol(name).name for name in PROTOCOLS] == PROTOCOLS


def test_unknown_protocol_lists_the_known_ones() -> None:
    with pytest.raises(UnknownNameError) as info:
        get_protocol("yaml")
    assert info.value.known == sorted(PROTOCOLS)
    with pytest.raises(UnknownNameError, match="hermes, json, xml, xml-name-attr"):
        prompted(OpenAIChatAdapter(), "yaml")


def test_every_edge_case_has_a_handwritten_reply_per_protocol() -> None:
    assert {p: set(cases) for p, cases in HANDWRITTEN.items()} == {p: set(CASES) for p in PROTOCOLS}


@pytest.mark.parametrize("with_schema", [True, False], ids=["schema", "no-schema"])
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_render_then_parse_round_trips(protocol: str, case: str, with_schema: bool) -> None:
    arguments = CASES[case][0]
    text = get_protocol(protocol).render_calls([ToolCall("act", arguments, id="c1")])
    result = get_protocol(protocol).parse(text, [tool_for(case)] if with_schema else [])
    assert [c.name for c in result.calls] == ["act"]
    call = result.calls[0]
    assert call.arguments == arguments
    assert call.parse_error is None
    assert isinstance(call.raw_arguments, str) and call.raw_arguments in text
    if protocol != "xml":
        assert json.loads(call.raw_arguments) == arguments
    assert result.text is None
    assert result.findings == []


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_parses_handwritten_replies(protocol: str, case: str) -> None:
    text, prose = HANDWRITTEN[protocol][case]
    result = get_protocol(protocol).parse(text, [tool_for(case)])
    assert [(c.name, c.arguments) for c in result.calls] == [("act", CASES[case][0])]
    assert result.text == prose
    assert result.findings == []
    raw = result.calls[0].raw_arguments
    assert isinstance(raw, str) and raw in text


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_ids_are_synthesized_deterministically_and_marked(protocol: str) -> None:
    calls = [ToolCall("a", {"x": 1}), ToolCall("b", {}), ToolCall("a", {"x": 1})]
    text = get_protocol(protocol).render_calls(calls)
    first, second = get_protocol(protocol).parse(text), get_protocol(protocol).parse(text)
    assert [c.id for c in first.calls] == [c.id for c in second.calls]
    assert len({c.id for c in first.calls}) == 3
    assert [c.index for c in first.calls] == [0, 1, 2]
    for call in first.calls:
        assert call.wire_id is None and call.id_synthesized
        assert call.id is not None and call.id.isalnum() and len(call.id) == 9
        assert call.extra == {"text_protocol": protocol}


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_several_calls_with_prose_around_them(protocol: str) -> None:
    p = get_protocol(protocol)
    calls = [ToolCall("get_weather", {"city": "Paris"}), ToolCall("get_time", {"zone": "CET"})]
    result = p.parse(f"I need two things.\n{p.render_calls(calls)}\nThen I will answer.")
    assert [(c.name, c.arguments) for c in result.calls] == [(c.name, c.arguments) for c in calls]
    assert result.text == "I need two things.\n\nThen I will answer."


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_reply_without_calls_is_all_prose(protocol: str) -> None:
    result = get_protocol(protocol).parse("  The answer is 42 (see {the docs}).\n")
    assert result == TextParse([], "The answer is 42 (see {the docs}).", [])
    assert get_protocol(protocol).parse("") == TextParse([], None, [])


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_fence_holding_only_calls_is_removed_but_other_fences_stay(protocol: str) -> None:
    p = get_protocol(protocol)
    code = "```python\nprint(1)\n```"
    text = f"{code}\nNow the call:\n```\n{p.render_call(ToolCall('f', {'a': '```x```'}))}\n```\nBye."
    result = p.parse(text)
    assert [c.arguments for c in result.calls] == [{"a": "```x```"}]
    assert result.text == f"{code}\nNow the call:\n\nBye."


UNPARSEABLE = [
    ("json", '{"tool_calls": [{"name": "f", "arguments": {"a": 1}]}', None),
    ("json", '{"tool_calls": [{"arguments": {"a": 1}}]}', None),
    ("json", '{"tool_calls": {"name": "f"}}', None),
    ("hermes", '<tool_call>\n{"name": "f", "arguments": {"a": }\n</tool_call>', "f"),
    ("hermes", "<tool_call>\n<function=f><parameter=a>1</parameter></function>\n</tool_call>", None),
    ("xml-name-attr", '<tool_call name="f">{"a": 1,}</tool_call>', "f"),
    ("xml-name-attr", '<tool_call>{"a": 1}</tool_call>', None),
    ("xml", "<tool_call><tool_name>f</tool_name><arguments><a>1</a>", "f"),
    ("xml", '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>', None),
    ("xml", "<tool_call><tool_name>f</tool_name><arguments>a=1</arguments></tool_call>", "f"),
]


@pytest.mark.parametrize(("protocol", "text", "name"), UNPARSEABLE)
def test_unparseable_markup_is_an_error_with_the_snippet(protocol: str, text: str, name: str | None) -> None:
    result = get_protocol(protocol).parse(f"Calling.\n{text}")
    finding = next(f for f in result.findings if f.check_id == "wire.text_call_unparseable")
    assert finding.severity == "error" and not finding.passed
    assert finding.evidence is not None and finding.evidence["snippet"].strip() in text
    assert len(finding.evidence["snippet"]) <= 200
    if name is None:  # nothing to salvage: no call, and the markup stays visible in the prose
        assert result.calls == []
        assert result.text is not None and text.strip() in result.text
    else:  # the name is known: a call with a parse error, like invalid JSON arguments on the wire
        assert [(c.name, c.arguments) for c in result.calls] == [(name, None)]
        assert result.calls[0].parse_error
        assert result.text == "Calling."


def test_truncated_json_body_without_closing_tag_still_gives_the_call() -> None:
    for protocol in ("hermes", "xml-name-attr"):
        text = get_protocol(protocol).render_call(ToolCall("f", {"a": 1})).removesuffix("</tool_call>")
        result = get_protocol(protocol).parse(text)
        assert [c.arguments for c in result.calls] == [{"a": 1}]
        assert [f.check_id for f in result.findings] == ["wire.text_call_unclosed"]


def test_arguments_as_a_json_string_are_decoded_with_a_finding() -> None:
    result = get_protocol("json").parse(r'{"tool_calls": [{"name": "f", "arguments": "{\"a\": 1}"}]}')
    assert result.calls[0].arguments == {"a": 1}
    assert result.calls[0].raw_arguments == r'"{\"a\": 1}"'
    assert [f.check_id for f in result.findings] == ["wire.arguments_string_not_object"]


def test_parameters_key_and_missing_arguments_are_noted() -> None:
    result = get_protocol("hermes").parse(
        '<tool_call>{"name": "f", "parameters": {"a": 1}}</tool_call><tool_call>{"name": "g"}</tool_call>'
    )
    assert [(c.name, c.arguments) for c in result.calls] == [("f", {"a": 1}), ("g", {})]
    assert [f.check_id for f in result.findings] == [
        "wire.text_call_parameters_key",
        "wire.arguments_missing",
    ]


def test_another_syntax_in_the_reply_is_reported() -> None:
    result = get_protocol("json").parse('Sure.\n<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>')
    assert result.calls == []
    assert [(f.check_id, f.severity) for f in result.findings] == [
        ("wire.text_call_foreign_syntax", "warning")
    ]


# -- xml specifics --------------------------------------------------------------


def xml_call(arguments: str) -> str:
    return f"<tool_call><tool_name>f</tool_name><arguments>{arguments}</arguments></tool_call>"


def test_xml_plain_text_is_typed_by_the_schema() -> None:
    text = xml_call("<code>007</code><zip>12345</zip><flag>true</flag><n>5</n><x>1.5</x><z>null</z>")
    schema = {
        "type": "object",
        "properties": {
            "code": STRING,
            "zip": STRING,
            "flag": STRING,
            "n": INTEGER,
            "x": {"type": "number"},
            "z": {"type": "null"},
        },
    }
    typed = get_protocol("xml").parse(text, [ToolSpec("f", "", schema)])
    assert typed.calls[0].arguments == {
        "code": "007",
        "zip": "12345",
        "flag": "true",
        "n": 5,
        "x": 1.5,
        "z": None,
    }
    guessed = get_protocol("xml").parse(text, [])
    assert guessed.calls[0].arguments == {
        "code": "007",
        "zip": 12345,
        "flag": True,
        "n": 5,
        "x": 1.5,
        "z": None,
    }


def test_xml_integer_schema_reads_leading_zeros_and_array_schema_wraps_one_item() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": INTEGER,
            "tags": {"type": "array", "items": STRING},
            "nums": {"type": "array", "items": INTEGER},
        },
    }
    text = xml_call("<n>007</n><tags>1</tags><nums>2</nums>")
    result = get_protocol("xml").parse(text, [ToolSpec("f", "", schema)])
    assert result.calls[0].arguments == {"n": 7, "tags": ["1"], "nums": [2]}


def test_xml_string_with_markup_but_no_cdata_is_taken_verbatim_when_the_schema_says_string() -> None:
    schema = {"type": "object", "properties": {"html": STRING}}
    text = xml_call("<html><p>Hello <b>world</p> &amp; more</html>")
    result = get_protocol("xml").parse(text, [ToolSpec("f", "", schema)])
    assert result.calls[0].arguments == {"html": "<p>Hello <b>world</p> &amp; more"}
    assert result.findings == []


def test_xml_tolerates_stray_angle_brackets_comments_and_whitespace_around_cdata() -> None:
    text = xml_call("<!-- note --><cond>if a < b then</cond>\n<s>\n  <![CDATA[ keep  ]]>\n</s>")
    result = get_protocol("xml").parse(text)
    assert result.calls[0].arguments == {"cond": "if a < b then", "s": " keep  "}


def test_xml_cdata_is_split_around_the_end_marker() -> None:
    rendered = get_protocol("xml").render_call(ToolCall("f", {"s": "a]]>b"}))
    assert "<s><![CDATA[a]]]]><![CDATA[>b]]></s>" in rendered


def test_xml_arguments_holding_json_are_accepted_with_a_warning() -> None:
    result = get_protocol("xml").parse(xml_call('{"a": [1, 2]}'))
    assert result.calls[0].arguments == {"a": [1, 2]}
    assert [(f.check_id, f.severity) for f in result.findings] == [
        ("wire.text_call_arguments_as_json", "warning")
    ]


def test_xml_tool_without_arguments() -> None:
    p = get_protocol("xml")
    for text in (
        p.render_call(ToolCall("f", {})),
        xml_call(""),
        "<tool_call><tool_name>f</tool_name><arguments/></tool_call>",
    ):
        assert [(c.name, c.arguments) for c in p.parse(text).calls] == [("f", {})]


def test_xml_close_tag_inside_cdata_does_not_end_the_call() -> None:
    text = xml_call("<s><![CDATA[</arguments></tool_call>]]></s>") + "\nAfter."
    result = get_protocol("xml").parse(text)
    assert result.calls[0].arguments == {"s": "</arguments></tool_call>"}
    assert result.text == "After."


# -- prompts and results --------------------------------------------------------

WEATHER = ToolSpec(
    "get_weather",
    "Current weather for a city.",
    {"type": "object", "properties": {"city": STRING, "days": INTEGER}, "required": ["city"]},
)
SEARCH = ToolSpec("search", "Search the web.", {"type": "object", "properties": {"q": STRING}})


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_system_prompt_describes_tools_and_syntax_deterministically(protocol: str) -> None:
    p = get_protocol(protocol)
    prompt = p.system_prompt([WEATHER, SEARCH])
    schema = {"required": ["city"], "properties": {"days": INTEGER, "city": STRING}, "type": "object"}
    reordered = ToolSpec("get_weather", "Current weather for a city.", schema)
    assert prompt == p.system_prompt([reordered, SEARCH])
    for needle in (
        "## get_weather",
        "Current weather for a city.",
        "## search",
        "Search the web.",
        json.dumps(WEATHER.parameters, sort_keys=True),
        "several tools in one reply",
        "user message",
    ):
        assert needle in prompt
    assert prompt.index("## get_weather") < prompt.index("## search")
    example = p.parse(prompt.split("it is not one of your tools):\n\n", 1)[1]).calls
    assert example[0].name == "example_tool"
    assert example[0].arguments == {
        "path": "notes.md",
        "text": "First line\nSecond line",
        "count": 2,
        "tags": ["todo", "home"],
        "options": {"overwrite": True},
    }
    assert p.system_prompt([]) == ""


@pytest.mark.parametrize(
    ("choice", "sentence"),
    [
        (ToolChoice("none"), "do not call any tool"),
        (ToolChoice("required"), "you must call at least one tool"),
        (ToolChoice("named", "search"), "you must call the tool search"),
    ],
)
def test_system_prompt_states_the_tool_choice(choice: ToolChoice, sentence: str) -> None:
    p = get_protocol("xml")
    assert sentence in p.system_prompt([WEATHER], choice)
    assert sentence not in p.system_prompt([WEATHER], ToolChoice("auto"))


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_results_are_one_message_naming_each_call_and_marking_errors(protocol: str) -> None:
    text = get_protocol(protocol).render_results(
        [
            ToolResult("h11111111", "get_weather", "sunny ]]> <b> & 日本"),
            ToolResult("h22222222", "search", "timeout", is_error=True),
        ]
    )
    for needle in ("h11111111", "get_weather", "h22222222", "search", '"error"'):
        assert needle in text
    if protocol == "json":
        data = json.loads(text)["tool_results"]
        assert data[0]["content"] == "sunny ]]> <b> & 日本" and data[1]["status"] == "error"
    elif protocol == "hermes":
        assert text.count("<tool_response>") == 2
    else:
        assert "<![CDATA[sunny ]]]]><![CDATA[> <b> & 日本]]>" in text


# -- PromptedAdapter ------------------------------------------------------------

OPTIONS = RequestOptions(model="m")


def chat_body(content: str | None, tool_calls: list[dict[str, Any]] | None = None) -> str:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return json.dumps(
        {
            "id": "x",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        }
    )


def test_prompted_adapter_routes_as_the_inner_format_and_is_not_registered() -> None:
    adapter = prompted(OpenAIChatAdapter(), "hermes")
    assert isinstance(adapter, PromptedAdapter)
    assert adapter.inner.format == "openai-chat" and adapter.format == "prompted"
    assert adapter.mode == "prompted-hermes"
    assert "prompted" not in formats()
    assert adapter.auth_headers("k") == {"Authorization": "Bearer k"}


def test_build_request_sends_no_native_tools_and_puts_the_prompt_first() -> None:
    adapter = prompted(OpenAIChatAdapter(), "xml")
    request = adapter.build_request(
        [Message("user", "Weather in Paris?")], [WEATHER], ToolChoice("required"), OPTIONS
    )
    assert "tools" not in request.body and "tool_choice" not in request.body
    system, user = request.body["messages"]
    assert system == {
        "role": "system",
        "content": get_protocol("xml").system_prompt([WEATHER], ToolChoice("required")),
    }
    assert user == {"role": "user", "content": "Weather in Paris?"}
    finding = next(f for f in request.findings if f.check_id == "wire.prompted_mode")
    assert finding.severity == "info" and "'xml'" in finding.detail
    assert finding.evidence is not None
    assert finding.evidence["characters"] == len(
        get_protocol("xml").system_prompt([WEATHER], ToolChoice("required"))
    )
    assert finding.evidence["native"] == native_tools_size([WEATHER])


def test_build_request_replays_calls_as_text_and_groups_results_into_one_user_message() -> None:
    adapter = prompted(OpenAIChatAdapter(), "hermes")
    calls = [ToolCall("get_weather", {"city": "Paris"}, id="h1"), ToolCall("search", {"q": "x"}, id="h2")]
    messages = [
        Message("system", "You are terse."),
        Message("user", "Go."),
        Message("assistant", "Looking.", calls),
        Message("tool", "sunny", tool_result=ToolResult("h1", "get_weather", "sunny")),
        Message("tool", "oops", tool_result=ToolResult("h2", "search", "oops", is_error=True)),
        Message("assistant", "Done."),
        Message("user", "Thanks."),
    ]
    body = adapter.build_request(messages, [WEATHER, SEARCH], ToolChoice("auto"), OPTIONS).body
    protocol = get_protocol("hermes")
    assert body["messages"] == [
        {"role": "system", "content": "You are terse.\n\n" + protocol.system_prompt([WEATHER, SEARCH])},
        {"role": "user", "content": "Go."},
        {"role": "assistant", "content": "Looking.\n\n" + protocol.render_calls(calls)},
        {
            "role": "user",
            "content": protocol.render_results([m.tool_result for m in messages[3:5] if m.tool_result]),
        },
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": "Thanks."},
    ]


def test_parse_takes_the_calls_out_of_the_text() -> None:
    adapter = prompted(OpenAIChatAdapter(), "xml")
    reply = "Checking.\n" + xml_call("<city>Paris</city><days>2</days>").replace(">f<", ">get_weather<")
    turn = adapter.parse(WireResponse(200, chat_body(reply)), stream=False, tools=[WEATHER])
    assert turn.error is None
    assert [(c.name, c.arguments, c.wire_id) for c in turn.tool_calls] == [
        ("get_weather", {"city": "Paris", "days": 2}, None)
    ]
    assert turn.text == "Checking."
    assert turn.finish_reason == "stop"
    assert turn.as_message().tool_calls == turn.tool_calls


def test_parse_a_stream_the_same_way() -> None:
    adapter = prompted(OpenAIChatAdapter(), "json")
    pieces = ['{"tool_calls": [{"name": "search", ', '"arguments": {"q": "x"}}]}']
    chunks = [{"choices": [{"index": 0, "delta": {"content": piece}}]} for piece in pieces]
    body = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks) + "data: [DONE]\n\n"
    turn = adapter.parse(WireResponse(200, body, {"content-type": "text/event-stream"}), stream=True)
    assert [(c.name, c.arguments) for c in turn.tool_calls] == [("search", {"q": "x"})]
    assert turn.text is None


def test_parse_leaves_provider_errors_alone_and_adds_protocol_findings() -> None:
    adapter = prompted(OpenAIChatAdapter(), "hermes")
    error = adapter.parse(WireResponse(400, '{"error": {"message": "bad", "code": "x"}}'), stream=False)
    assert error.error is not None and error.tool_calls == [] and error.findings == []
    body = chat_body('<tool_call>{"name": "f", </tool_call>')
    broken = adapter.parse(WireResponse(200, body), stream=False)
    assert [f.check_id for f in broken.findings] == ["wire.text_call_unparseable"]


def test_native_calls_in_prompted_mode_are_kept_and_noted() -> None:
    adapter = prompted(OpenAIChatAdapter(), "hermes")
    native = [{"id": "call_1", "type": "function", "function": {"name": "search", "arguments": '{"q": "a"}'}}]
    reply = '<tool_call>{"name": "search", "arguments": {"q": "b"}}</tool_call>'
    turn = adapter.parse(WireResponse(200, chat_body(reply, native)), stream=False)
    assert [(c.arguments, c.wire_id, c.index) for c in turn.tool_calls] == [
        ({"q": "a"}, "call_1", 0),
        ({"q": "b"}, None, 1),
    ]
    assert "wire.native_tool_calls_in_prompted_mode" in [f.check_id for f in turn.findings]


def test_prompt_size_against_native_declarations() -> None:
    adapter = prompted(OpenAIChatAdapter(), "json")
    prompt = get_protocol("json").system_prompt([WEATHER, SEARCH])
    size = adapter.prompt_size(prompt)
    assert size == {"protocol": "json", "characters": len(prompt), "estimated_tokens": -(-len(prompt) // 4)}
    native = json.dumps(OpenAIChatAdapter().map_tools([WEATHER, SEARCH]))
    assert native_tools_size([WEATHER, SEARCH]) == {
        "characters": len(native),
        "estimated_tokens": estimate_tokens(len(native)),
    }
    assert native_tools_size([]) == {"characters": 0, "estimated_tokens": 0}
    assert [estimate_tokens(n) for n in (0, 1, 4, 5)] == [0, 1, 1, 2]


def test_native_size_is_the_dumped_declarations_whatever_the_tools() -> None:
    """The size is counted a declaration at a time (cached by tool): the sum must stay the length
    of ``json.dumps`` of the whole list, escapes, empty schemas and key order included."""
    unicode = ToolSpec(
        "météo", "Le temps à Zürich — 日本", {"type": "object", "properties": {"é": {"type": "string"}}}
    )
    bare = ToolSpec("ping", "", {})
    unordered = ToolSpec(
        "b", "x", {"required": ["z"], "properties": {"z": {"type": "number"}}, "type": "object"}
    )
    for tools in ([unicode], [bare], [unicode, bare, unordered, WEATHER], [bare, bare]):
        native = json.dumps(OpenAIChatAdapter().map_tools(tools))
        assert native_tools_size(tools)["characters"] == len(native)


def test_a_specs_schema_text_is_canonical_and_kept() -> None:
    first = ToolSpec("t", "", {"b": 1, "a": "é"})
    assert first.schema_text == '{"a": "é", "b": 1}'
    assert first.schema_text is first.schema_text  # made once
    assert ToolSpec("t", "", {"a": "é", "b": 1}).schema_text == first.schema_text
    assert first == ToolSpec("t", "", {"b": 1, "a": "é"})  # not a field: equality unchanged


# -- leak detection (native mode) ---------------------------------------------------

LEAKS = [
    ("hermes", '<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>', "tool_call"),
    ("xml protocol", xml_call("<a>1</a>"), "tool_call"),
    ("name attr", '<tool_call name="f">{"a": 1}</tool_call>', "tool_call"),
    (
        "qwen3-coder",
        "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>",
        "tool_call",
    ),
    ("qwen3-coder bare", "<function=f>\n<parameter=a>\n1\n</parameter>\n</function>", "function="),
    ("llama custom", '<function=get_weather>{"city": "SF"}</function>', "function="),
    ("mistral", '[TOOL_CALLS][{"name": "f", "arguments": {"a": 1}}]', "TOOL_CALLS"),
    ("ministral", '[TOOL_CALLS]f[ARGS]{"a": 1}', "TOOL_CALLS"),
    ("python tag", '<|python_tag|>{"name": "f", "parameters": {"a": 1}}', "python_tag"),
    (
        "function_calls",
        '<function_calls>\n<invoke name="f">\n<parameter name="a">1</parameter>\n</invoke>\n'
        "</function_calls>",
        "function_calls",
    ),
    ("invoke", '<invoke name="f"><parameter name="a">1</parameter></invoke>', "function_calls"),
    ("functiongemma", "<start_function_call>call:f{a:<escape>1<escape>}<end_function_call>", "functiongemma"),
    ("json protocol", '```json\n{"tool_calls": [{"name": "f", "arguments": {}}]}\n```', "tool_calls_json"),
    ("bare json", 'I will call {"name": "f", "arguments": {"a": 1}} now.', "name_arguments_json"),
    ("llama json", '{"name": "f", "parameters": {"a": 1}}', "name_arguments_json"),
    (
        "openai shape",
        '{"type": "function", "function": {"name": "f", "arguments": "{}"}}',
        "name_arguments_json",
    ),
]


@pytest.mark.parametrize(("text", "marker"), [(t, m) for _, t, m in LEAKS], ids=[i for i, _, _ in LEAKS])
def test_detects_calls_written_into_content(text: str, marker: str) -> None:
    reply = f"Let me help.\n\n{text}\n\nAnything else?"
    leaks = detect_leaks(reply)
    assert [leak.marker for leak in leaks] == [marker]
    assert leaks[0].snippet and reply[leaks[0].start :].startswith(leaks[0].snippet)
    assert leaks[0].snippet.strip() in text


def test_several_leaks_in_order_with_short_snippets() -> None:
    long_call = '<tool_call>{"name": "f", "arguments": {"a": "' + "x" * 500 + '"}}</tool_call>'
    leaks = detect_leaks(f'{long_call}\nthen [TOOL_CALLS][{{"name": "g", "arguments": {{}}}}]')
    assert [leak.marker for leak in leaks] == ["tool_call", "TOOL_CALLS"]
    assert len(leaks[0].snippet) == 200 and leaks[0].snippet.startswith("<tool_call>")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_every_protocol_rendering_is_a_leak(protocol: str) -> None:
    text = get_protocol(protocol).render_calls([ToolCall("f", {"a": 1})])
    assert len(detect_leaks(text)) == 1


def test_pythonic_calls_only_with_known_tool_names() -> None:
    text = "Calling [get_weather(city='SF'), get_time(zone=\"CET\")] now."
    assert detect_leaks(text) == []
    leaks = detect_leaks(text, {"get_weather", "get_time"})
    assert [(leak.marker, leak.snippet) for leak in leaks] == [
        ("pythonic", "[get_weather(city='SF'), get_time(zone=\"CET\")]")
    ]
    assert detect_leaks("See [print(x)] and [get_weather](https://example.com).", ["get_weather"]) == []


NOT_LEAKS = [
    "The weather in Paris is sunny, 21 °C.",
    "I would call the tool_call function, but the name and arguments are unclear.",
    "```python\ndef f(x):\n    return {'name': x, 'arguments': []}\n```",
    '```json\n{"city": "Paris", "temp": 21}\n```',
    '{"name": "Alice", "age": 30}',
    '{"name": "get_weather", "description": "Weather.", "parameters": {"type": "object", "properties": {}}}',
    "Use a list like [1, 2, 3] or call f(x=1) directly.",
    "<div><b>bold</b> and <function>not a call</function></div>",
    "The dict {name: arguments} is not JSON; neither is {'name': 'f', 'arguments': {}}.",
    "Set `tool_calls` in the response and use <tool_calls> tags carefully.",
    "",
]


@pytest.mark.parametrize("text", NOT_LEAKS)
def test_ordinary_content_is_not_a_leak(text: str) -> None:
    assert detect_leaks(text, ["get_weather"]) == []
    assert detect_leaks(None) == []
