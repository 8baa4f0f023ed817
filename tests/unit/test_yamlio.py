"""Reading YAML is bounded and never a traceback: size, nesting and alias expansion are limited,
and every encoding problem is a YamlError that names it. Each test runs with libyaml's C parser
and with the pure one (the fallback)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from harness import yamlio
from harness.errors import ScenarioError
from harness.scenarios import load_file
from harness.yamlio import MAX_DEPTH, MAX_FILE_BYTES, MAX_NODES, YamlError

LOADERS = [yaml.SafeLoader] + ([yaml.CSafeLoader] if hasattr(yaml, "CSafeLoader") else [])


@pytest.fixture(autouse=True, params=LOADERS, ids=lambda loader: loader.__name__)
def loader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[type]:
    monkeypatch.setattr(yamlio, "SafeLoader", request.param)
    yield request.param


def billion_laughs(levels: int = 9) -> str:
    """The classic alias bomb: each level lists the previous one nine times (9^9 strings)."""
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, levels):
        lines.append(f"l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def refused(text: str | bytes) -> YamlError:
    with pytest.raises(YamlError) as error:
        yamlio.loads(text)
    return error.value


# -- the public API, unchanged ------------------------------------------------------------------


def test_data_node_tree_lines_and_pointers(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("id: x\nexpect:\n  calls:\n    - name: get_weather\n      args: {city: Paris}\n")
    data, node = yamlio.load(path)
    assert data == {"id": "x", "expect": {"calls": [{"name": "get_weather", "args": {"city": "Paris"}}]}}
    assert yamlio.line_of(node, ["expect", "calls", 0, "args", "city"]) == 5
    assert yamlio.line_of(node, ["expect", "calls", 7]) == 4  # the nearest existing parent: the list
    assert yamlio.line_of(node, ["expect", "calls", -1]) == 4
    assert yamlio.pointer(["expect", "calls", 0, "a/b~c"]) == "/expect/calls/0/a~1b~0c"
    assert yamlio.loads("") == (None, None)
    assert yamlio.loads("# only a comment\n")[0] is None


def test_anchors_aliases_and_merge_keys_still_work() -> None:
    data, _ = yamlio.loads("base: &b {x: 1, y: [1, 2]}\nuse: *b\nmerged:\n  <<: *b\n  z: 3\n")
    assert data["use"] is data["base"]
    assert data["merged"] == {"x": 1, "y": [1, 2], "z": 3}


def test_yaml_errors_name_their_line() -> None:
    assert refused("a: 1\nb: [1, 2\n").line is not None
    error = refused("a: 1\n---\nb: 2\n")
    assert "single document" in str(error) and error.line == 2
    assert "undefined alias *nope" in str(refused("a: 1\nb: *nope\n"))
    error = refused("a: &x 1\nb: &x 2\n")
    assert "duplicate anchor &x" in str(error) and error.line == 2


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("when: 2024-13-45\n", "cannot read '2024-13-45' as !!timestamp: month must be in 1..12"),
        ("flag: !!bool maybe\n", "cannot read 'maybe' as !!bool"),
        ("at: !!timestamp soon\n", "cannot read 'soon' as !!timestamp"),
        ("n: " + "9" * 5000 + "\n", "as !!int: Exceeds the limit"),
        ("f: !!float lots\n", "cannot read 'lots' as !!float"),
    ],
)
def test_values_pyyaml_cannot_build_are_yaml_errors_with_their_line(text: str, words: str) -> None:
    error = refused("ok: 1\n" + text)
    assert words in str(error) and error.line == 2


# -- limits -----------------------------------------------------------------------------------------


def test_an_alias_bomb_is_refused_while_composing() -> None:
    error = refused(billion_laughs())
    assert f"more than {MAX_NODES:,} values once aliases are expanded" in str(error)
    assert "yamlio.MAX_NODES" in str(error) and "alias(es)" in str(error)
    assert error.line is not None


def test_a_small_alias_expansion_within_the_limit_loads() -> None:
    data, _ = yamlio.loads(billion_laughs(levels=3))  # 9 * 9 * 9 = 729 strings
    assert len(data["l2"]) == 9 and data["l2"][0] is data["l1"]


def test_a_recursive_alias_is_refused() -> None:
    assert "recursive alias" in str(refused("a: &a [1, *a]\n"))
    assert "recursive alias" in str(refused("a: &a {b: {c: *a}}\n"))


def test_too_many_nodes_without_aliases_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yamlio, "MAX_NODES", 1000)  # the limit is read when a document is composed
    assert "more than 1,000 values" in str(refused("[" + "1," * 1000 + "1]"))
    data, _ = yamlio.loads("[" + "1," * 998 + "1]")  # the list and its 999 items: the limit
    assert len(data) == 999


def test_a_file_over_the_size_limit_is_refused_before_parsing(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_bytes(b"a: " + b"x" * MAX_FILE_BYTES + b"\n")
    with pytest.raises(YamlError, match=r"too large: more than 5,242,880 bytes .*yamlio\.MAX_FILE_BYTES"):
        yamlio.load(big)
    assert "too large" in str(refused("a" * (MAX_FILE_BYTES + 1)))


def test_the_size_limit_is_a_module_constant(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("a: 123456789\n")
    monkeypatch.setattr(yamlio, "MAX_FILE_BYTES", 10)
    with pytest.raises(YamlError, match="more than 10 bytes"):
        yamlio.load(path)


@pytest.mark.parametrize(
    "text",
    [
        "[" * 5000 + "]" * 5000,
        "{a: " * 5000 + "1" + "}" * 5000,
        "- " * 5000 + "x\n",
        "".join(" " * level + "k:\n" for level in range(1000)) + " " * 1000 + "v\n",
        "[" * 1_000_000,  # crashed libyaml's recursive composer (a segmentation fault)
    ],
    ids=["flow-lists", "flow-maps", "block-lists", "block-maps", "a-million-brackets"],
)
def test_deep_nesting_is_a_yaml_error_not_a_crash(text: str) -> None:
    error = refused(text)
    assert f"more than {MAX_DEPTH} levels" in str(error) and "yamlio.MAX_DEPTH" in str(error)


def test_nesting_up_to_the_limit_loads_and_line_of_walks_it() -> None:
    data, node = yamlio.loads("[" * MAX_DEPTH + "]" * MAX_DEPTH)
    depth = 0
    while data:
        data, depth = data[0], depth + 1
    assert depth == MAX_DEPTH - 1
    assert yamlio.line_of(node, [0] * (MAX_DEPTH - 1)) == 1
    assert "levels" in str(refused("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)))


def test_depth_counts_through_aliases() -> None:
    half = MAX_DEPTH // 2 + 5
    text = "a: &deep " + "[" * half + "]" * half + "\nb: " + "[" * half + "*deep" + "]" * half + "\n"
    assert "once alias *deep is expanded" in str(refused(text))


# -- encodings --------------------------------------------------------------------------------------


def test_utf8_with_a_byte_order_mark_loads(tmp_path: Path) -> None:
    path = tmp_path / "bom.yaml"
    path.write_bytes(b"\xef\xbb\xbfid: caf\xc3\xa9\nn: 1\n")
    data, node = yamlio.load(path)
    assert data == {"id": "café", "n": 1} and yamlio.line_of(node, ["n"]) == 2
    assert yamlio.loads("\ufeffa: 1\n")[0] == {"a": 1}


@pytest.mark.parametrize(
    ("encoding", "words"),
    [
        ("utf-16", "UTF-16 (little-endian) (it starts with a byte order mark)"),
        ("utf-16-le", "looks like UTF-16"),
        ("utf-16-be", "looks like UTF-16"),
        ("utf-32", "UTF-32"),
        ("utf-32-be", "looks like UTF-32"),
    ],
)
def test_utf16_and_utf32_are_refused_by_name(tmp_path: Path, encoding: str, words: str) -> None:
    path = tmp_path / "wide.yaml"
    text = "id: weather.single.paris\ncategory: single\n"
    path.write_bytes(text.encode(encoding))
    with pytest.raises(YamlError) as error:
        yamlio.load(path)
    assert words in str(error.value) and "re-save the file as UTF-8" in str(error.value)


def test_latin1_names_the_byte_offset_and_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes("id: x\ndescription: café au lait\n".encode("latin-1"))
    with pytest.raises(YamlError) as error:
        yamlio.load(path)
    message = str(error.value)
    assert "byte 0xE9 at byte offset 22 (line 2)" in message and "Latin-1" in message
    assert "re-save the file as UTF-8" in message and error.value.line == 2


def test_invalid_utf8_of_another_kind_is_named_too() -> None:
    error = refused(b"a: \xc3\x28\n")  # a lead byte without its continuation
    assert "not UTF-8: byte 0xC3 at byte offset 3" in str(error)


@pytest.mark.parametrize(
    "data",
    [bytes(range(256)), b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", b"a: 1\n\x00\x00\x00\x07b: 2\n"],
    ids=["all-bytes", "png", "nul-in-text"],
)
def test_binary_files_are_refused(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "binary.yaml"
    path.write_bytes(data)
    with pytest.raises(YamlError, match=r"not a text file: a NUL byte at byte offset \d+"):
        yamlio.load(path)


def test_control_characters_and_surrogates_name_their_line_and_column() -> None:
    error = refused("a: 1\nb: x\x07y\n")
    assert "a control character (U+0007) at line 2, column 5" in str(error) and error.line == 2
    assert "NUL character at line 1, column 4" in str(refused("a: \x00"))
    assert "unpaired surrogate (U+D800)" in str(refused("a: \ud800\n"))


def test_a_missing_file_and_a_folder_are_yaml_errors(tmp_path: Path) -> None:
    with pytest.raises(YamlError, match="no such file"):
        yamlio.load(tmp_path / "missing.yaml")
    with pytest.raises(YamlError, match="is a folder"):
        yamlio.load(tmp_path)


def test_scenario_files_get_the_same_errors_with_their_path(tmp_path: Path) -> None:
    latin1 = tmp_path / "latin1.yaml"
    latin1.write_bytes("id: x\ndescription: café\n".encode("latin-1"))
    with pytest.raises(ScenarioError) as error:
        load_file(latin1)
    assert error.value.path == str(latin1) and error.value.line == 2 and "not UTF-8" in error.value.message
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(billion_laughs())
    with pytest.raises(ScenarioError, match="alias bombs"):
        load_file(bomb)


# -- duplicate keys -----------------------------------------------------------------------------


def test_a_key_given_twice_is_refused_with_both_lines() -> None:
    error = refused("id: a\ncategory: single\nid: b\n")
    assert (error.line, error.pointer) == (3, "/id")
    assert str(error).startswith("duplicate key 'id': first at line 1, again at line 3")


def test_every_duplicate_key_of_a_document_is_listed() -> None:
    text = "a:\n  - {k: 1, 'k': 2}\n  - b: 1\n    c: 2\n    b: 3\nd: 1\nd: 2\n"
    assert [(e.line, e.pointer) for e in refused(text).problems] == [(2, "/a/0/k"), (5, "/a/1/b"), (7, "/d")]


def test_keys_that_differ_in_type_or_come_from_a_merge_are_not_duplicates() -> None:
    assert yamlio.loads("1: a\n'1': b\n")[0] == {1: "a", "1": "b"}
    assert yamlio.loads("base: &b {x: 1}\nm:\n  <<: *b\n  x: 2\n")[0]["m"] == {"x": 2}
