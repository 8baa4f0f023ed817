import pytest

from harness.matchers import args_match, check_matcher, example, match, regex_example


@pytest.mark.parametrize(
    ("expected", "actual"),
    [
        ("Paris", "Paris"),
        (3, 3.0),
        ({"contains": "sky is blue"}, "Remember: The Sky is Blue."),
        ({"contains": "a"}, ["b", "a"]),
        ({"contains_any": ["x", "blue"]}, "blue"),
        ({"contains_all": ["18", "24"]}, "18 and 24"),
        ({"not_contains": "rain"}, "sunny"),
        ({"regex": "^\\d{4}$"}, "4312"),
        ({"type": "integer"}, 7),
        ({"type": ["string", "null"]}, None),
        ({"any_of": [{"type": "integer"}, {"regex": "^one$"}]}, "one"),
        ({"subset": {"a": 1}}, {"a": 1, "b": 2}),
        ({"exact": {"type": "x"}}, {"type": "x"}),
        ({"any": True}, {"whatever": 1}),
        ({"a": {"b": [1, {"contains": "z"}]}}, {"a": {"b": [1, "xyz"]}}),
    ],
)
def test_matches(expected: object, actual: object) -> None:
    assert match(expected, actual) == []


@pytest.mark.parametrize(
    ("expected", "actual", "reason"),
    [
        ("Paris", "paris", "expected 'Paris'"),
        (True, 1, "expected True"),
        ({"type": "integer"}, True, "expected type integer"),
        ({"type": "integer"}, 1.5, "expected type integer"),
        ({"regex": "^x"}, "yx", "expected to match"),
        ({"contains": "sky"}, 5, "expected to contain"),
        ({"a": 1}, {"a": 1, "b": 2}, "unexpected key 'b'"),
        ([1, 2], [1], "expected a list of 2"),
        ({"exact": 1}, 1.0, "expected exactly 1"),
    ],
)
def test_mismatches_explain_themselves(expected: object, actual: object, reason: str) -> None:
    problems = match(expected, actual)
    assert problems and reason in problems[0]


def test_top_level_args_are_a_subset_unless_exact() -> None:
    assert args_match({"city": "Paris"}, {"city": "Paris", "unit": "c"}) == []
    assert args_match({"city": "Paris"}, {"city": "Paris", "unit": "c"}, exact=True) == [
        "$: unexpected key 'unit'"
    ]
    assert args_match({"city": "Paris"}, {}) == ["$.city: missing (expected 'Paris')"]
    assert args_match({"city": "Paris"}, None) == ["$: arguments could not be parsed"]


@pytest.mark.parametrize(
    "expected",
    [
        {"operation": "add", "content": {"contains": "sky is blue"}},
        {"city": {"regex": "(?i)^paris"}},
        {"n": {"type": "integer"}, "tags": {"any_of": [{"type": "array"}, "x"]}},
        {"code": {"regex": "^[A-Z]{3}-\\d{2,4}$"}},
        {"when": {"regex": "(mon|tue)day"}},
        {"final": {"contains_all": ["18", "24"]}},
    ],
)
def test_examples_match_their_matchers(expected: object) -> None:
    assert match(expected, example(expected)) == []


def test_regex_example_refuses_what_it_cannot_build() -> None:
    assert regex_example("^ab+c$") == "abc"
    with pytest.raises(ValueError):
        regex_example("(?=x)y")


def test_check_matcher_finds_bad_matchers() -> None:
    assert check_matcher({"a": {"regex": "("}})[0].startswith("invalid regex")
    assert "unknown type 'str'" in check_matcher({"type": "str"})[0]
    assert check_matcher({"any_of": "x"}) == ["any_of takes a list"]
    assert check_matcher({"a": {"contains": "x"}}) == []


def test_a_regex_that_backtracks_is_stopped_and_said_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's input returns at once; a pattern that does backtrack without end is stopped
    after REGEX_TIMEOUT_S and reported as a mismatch naming the reason, never a hang."""
    import time

    from harness import matchers

    started = time.perf_counter()
    assert match({"regex": "^(a+)+$"}, "a" * 34 + "!") == [
        "$: expected to match /^(a+)+$/, got 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!'"
    ]
    assert time.perf_counter() - started < 0.5
    monkeypatch.setattr(matchers, "REGEX_TIMEOUT_S", 0.05)
    started = time.perf_counter()
    (problem,) = match({"regex": "^(a|a)+$"}, "a" * 60 + "!")
    assert time.perf_counter() - started < 0.5
    assert problem.startswith("$: matching /^(a|a)+$/ was stopped after 0.05 s (the pattern backtracks")
    assert problem.endswith("so it does not match: '" + "a" * 60 + "!'")


def test_a_regex_operand_must_be_a_pattern() -> None:
    assert check_matcher({"regex": 5}) == ["regex takes a string (a Python regex), got 5"]
    assert check_matcher({"regex": "\\p{L}"})[0].startswith("invalid regex '\\\\p{L}'")  # Python's re syntax
