"""BFCL (Berkeley Function Calling Leaderboard) data as harness scenarios.

``harness import bfcl QUESTIONS.json [--answers POSSIBLE_ANSWER.json] --out DIR`` turns
one BFCL category file (JSON lines: ``id``, ``question``, ``function``) and its possible
answers (``id``, ``ground_truth``) into one scenario file per entry,
``DIR/<category>/<id>.yaml``, with the functions declared inline. What maps to what:

* the entry id is kept in the scenario id, ``bfcl.<id>`` (lower-cased; any character
  other than letters, digits, ``.``, ``_`` and ``-`` becomes ``_``), and verbatim in the
  description; the category becomes the harness's (:data:`CATEGORIES`);
* the first (only) turn of ``question`` becomes ``messages``;
* each function becomes a declared tool under its own name (dots kept: ``math.factorial``),
  its parameters converted from BFCL's pseudo JSON Schema by :func:`to_json_schema`, and a
  canned result (:data:`CANNED_RESULT`: BFCL grades the calls, not what follows them);
* each call of the ground truth becomes an expected call whose arguments are ``bfcl``
  matchers (:func:`harness.matchers.bfcl_problems`: BFCL's possible-answer semantics),
  ``args_exact: true`` (BFCL refuses a parameter its answer does not list), in any order
  for the ``parallel`` categories, all in one turn when there are several; irrelevance
  entries expect no call.

:func:`grade` says what the harness's own expectation checks make of one model turn's
calls for an imported scenario: ``benchmarks/bfcl_agreement.py`` holds it to BFCL's
checker. Categories that need more than a possible answer (multi-turn, executable, Java
and JavaScript, relevance, memory, web search, format sensitivity) are refused with the
reason (:data:`NOT_IMPORTED`).
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import yamlio
from harness.errors import ScenarioError
from harness.matchers import BFCL_TYPES

if TYPE_CHECKING:
    from harness.scenarios import Scenario

CATEGORIES: dict[str, str] = {
    "simple": "single",
    "simple_python": "single",
    "live_simple": "single",
    "multiple": "single",
    "live_multiple": "single",
    "parallel": "parallel",
    "live_parallel": "parallel",
    "parallel_multiple": "parallel",
    "live_parallel_multiple": "parallel",
    "irrelevance": "irrelevance",
    "live_irrelevance": "irrelevance",
}
"""The BFCL categories imported, and the harness category each becomes (``multiple``: one
call, the right one of several functions, is a ``single`` task)."""

NOT_IMPORTED: dict[str, str] = {
    "multi_turn": "graded by running the model's calls against BFCL's stateful Python back-ends "
    "(file system, trading, travel ...) and comparing their state and results turn by turn, not "
    "by possible answers; a faithful import would need those back-ends as tools and BFCL's "
    "multi-turn checker",
    "simple_java": "Java values are strings in Java syntax, converted by BFCL's Java type converter; "
    "the bfcl matcher implements the Python categories only",
    "simple_javascript": "JavaScript values are strings in JS syntax, converted by BFCL's JS type "
    "converter; the bfcl matcher implements the Python categories only",
    "live_relevance": "passes when the model makes any call at all: there is no possible answer to "
    "match, and a harness expectation cannot say 'some call'",
    "memory": "needs BFCL's memory back-ends and pre-requisite conversations",
    "web_search": "needs a live search back-end; graded on the final answer",
    "format_sensitivity": "measures prompt formats of BFCL's own prompting, not a tool-call answer",
    "exec": "graded by executing the calls (REST and Python), not by possible answers",
    "rest": "graded by executing real REST calls",
    "sql": "graded by executing SQL",
    "java": "Java values: see simple_java",
    "javascript": "JavaScript values: see simple_javascript",
}
"""BFCL categories (by prefix) that are not imported, and why."""

PARALLEL = frozenset(c for c in CATEGORIES if "parallel" in c)
"""Categories BFCL grades with its order-free parallel checker."""

SIMPLE = frozenset(c for c in CATEGORIES if "simple" in c)
"""Categories BFCL grades against the entry's first function, whatever the answer names."""

CANNED_RESULT: dict[str, Any] = {"status": "ok"}
"""What every imported tool answers: BFCL has no tool results; it grades the calls alone."""

MAX_TURNS = 2
"""One turn for the calls and one for the answer after them (BFCL grades the first only)."""

SCHEMA_TYPES: dict[str, str] = {
    "dict": "object",
    "float": "number",
    "tuple": "array",
    "any": "string",
    "string": "string",
    "integer": "integer",
    "boolean": "boolean",
    "array": "array",
}
"""BFCL's function-doc types as JSON Schema types. ``any`` becomes ``string`` as in BFCL's own
conversion for providers (``GORILLA_TO_OPENAPI``): its checker accepts only a string there."""

_UNSAFE = re.compile(r"[^a-z0-9_.-]")


@dataclass(frozen=True)
class Entry:
    """One line of a BFCL file: where it is, and what it holds."""

    path: str
    line: int  # 0 in a JSON array file, where ``index`` places the entry instead
    data: dict[str, Any]
    index: int | None = None

    def error(self, message: str, *where: str | int) -> ScenarioError:
        """An error naming this entry's file, line and the field (a JSON pointer in the line)."""
        at = [*([] if self.index is None else [self.index]), *where]
        pointer = yamlio.pointer(at) if at else None
        bfcl_id = self.data.get("id", "?")
        return ScenarioError(self.path, f"BFCL entry {bfcl_id}: {message}", line=self.line, pointer=pointer)


@dataclass
class ImportResult:
    """What an import wrote, what it skipped and why, and what a user should know."""

    category: str
    out: Path
    written: list[Path] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def read_entries(path: Path) -> list[Entry]:
    """The entries of a BFCL file: JSON lines (BFCL's ``.json`` files), or one JSON array."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(str(path), f"cannot read: {exc}") from None
    if text.lstrip().startswith("["):
        return _array_entries(path, text)
    entries, errors = [], []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.append(ScenarioError(str(path), f"not JSON: {exc.msg} (column {exc.colno})", line=number))
            continue
        if not isinstance(data, dict) or not isinstance(data.get("id"), str):
            errors.append(
                ScenarioError(str(path), "a BFCL entry is an object with a string 'id'", line=number)
            )
            continue
        entries.append(Entry(str(path), number, data))
    if errors:
        raise ScenarioError.many(errors)
    return entries


def _array_entries(path: Path, text: str) -> list[Entry]:
    try:
        items = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScenarioError(str(path), f"not JSON: {exc.msg}", line=exc.lineno) from None
    bad = [
        i for i, item in enumerate(items) if not isinstance(item, dict) or not isinstance(item.get("id"), str)
    ]
    if bad:
        raise ScenarioError(str(path), "a BFCL entry is an object with a string 'id'", pointer=f"/{bad[0]}")
    return [Entry(str(path), 0, item, index) for index, item in enumerate(items)]


def category_of(bfcl_id: str) -> str:
    """The BFCL category an entry id names: ``simple_python_3`` -> ``simple_python``,
    ``live_multiple_27-7-0`` -> ``live_multiple`` (the id is ``<category>_<index>``)."""
    return bfcl_id.rsplit("_", 1)[0]


def scenario_id(bfcl_id: str) -> str:
    """The scenario id for a BFCL id: ``bfcl.`` and the id, safe in a cassette file name."""
    return "bfcl." + _UNSAFE.sub("_", bfcl_id.lower())


def refusal(category: str) -> str | None:
    """Why ``category`` is not imported (None when it is)."""
    if category in CATEGORIES:
        return None
    for prefix, reason in NOT_IMPORTED.items():
        if category.startswith(prefix) or category.startswith(f"live_{prefix}"):
            return f"BFCL category {category!r} is not imported: {reason}"
    return f"unknown BFCL category {category!r}; imported: {', '.join(CATEGORIES)}"


# -- BFCL's function docs as JSON Schema ------------------------------------------------


def to_json_schema(schema: Any, entry: Entry, *where: str | int) -> dict[str, Any]:
    """A BFCL parameter schema as JSON Schema (draft 2020-12).

    ``type`` is mapped by :data:`SCHEMA_TYPES` (``dict`` -> ``object``, ``float`` ->
    ``number``, ``tuple`` -> ``array``, ``any`` -> ``string``); ``properties`` and ``items``
    are converted in turn; BFCL's ``optional: true`` is dropped (JSON Schema says it with
    ``required``, which is kept, and BFCL's checker reads only ``required``); every other
    keyword (``description``, ``enum``, ``default``, ``format`` ...) is kept as it is.
    """
    if not isinstance(schema, dict):
        raise entry.error(f"a parameter schema must be an object, got {schema!r}", *where)
    converted: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type":
            converted["type"] = _schema_type(value, entry, *where, "type")
        elif key == "properties" and isinstance(value, dict):
            converted["properties"] = {
                name: to_json_schema(item, entry, *where, "properties", name) for name, item in value.items()
            }
        elif key == "items" and isinstance(value, dict):
            converted["items"] = to_json_schema(value, entry, *where, "items")
        elif key == "optional" and isinstance(value, bool):
            continue
        else:
            converted[key] = value
    return converted


def _schema_type(value: Any, entry: Entry, *where: str | int) -> str:
    if not isinstance(value, str) or value not in SCHEMA_TYPES:
        raise entry.error(f"unknown BFCL type {value!r}; BFCL's types: {', '.join(SCHEMA_TYPES)}", *where)
    return SCHEMA_TYPES[value]


def declare_tool(function: Any, entry: Entry, index: int) -> dict[str, Any]:
    """One BFCL function as a declared tool (name, description, JSON Schema, canned result)."""
    where = ("function", index)
    if not isinstance(function, dict) or not isinstance(function.get("name"), str) or not function["name"]:
        raise entry.error("a function needs a non-empty string 'name'", *where)
    parameters = function.get("parameters")
    if not isinstance(parameters, dict) or parameters.get("type") != "dict":
        raise entry.error("a function's parameters must be a BFCL 'dict' schema", *where, "parameters")
    return {
        "name": function["name"],
        "description": str(function.get("description", "")),
        "parameters": to_json_schema(parameters, entry, *where, "parameters"),
        "result": CANNED_RESULT,
    }


# -- possible answers as expected calls ---------------------------------------------------


class Unpassable(Exception):
    """A possible answer BFCL itself could never accept: the entry is skipped, with why."""


def expected_call(
    call: Any, functions: list[Any], entry: Entry, index: int, *, simple: bool
) -> dict[str, Any]:
    """One call of a ground truth as an expected call with ``bfcl`` matchers.

    In the simple categories BFCL checks the call against the entry's first function whatever
    name the answer gives (``simple_function_checker(func_description[0], ...)``); elsewhere
    against the function the answer names."""
    where = ("ground_truth", index)
    if not isinstance(call, dict) or len(call) != 1:
        raise entry.error("a ground-truth call is an object with one key, the function's name", *where)
    ((name, answer),) = call.items()
    if not isinstance(answer, dict) or not all(isinstance(v, list) for v in answer.values()):
        raise entry.error(
            "a ground-truth call maps each parameter to a list of acceptable values", *where, name
        )
    function = functions[0] if simple else next((f for f in functions if f.get("name") == name), None)
    if function is None:
        raise entry.error(f"the ground truth calls {name!r}, which the entry does not offer", *where)
    parameters = function["parameters"]
    return {
        "name": function["name"],
        "args": _matchers(answer, parameters, entry, (*where, name)),
        "args_exact": True,
    }


def _matchers(
    answer: dict[str, list[Any]], parameters: dict[str, Any], entry: Entry, where: tuple[str | int, ...]
) -> dict[str, Any]:
    """A ``bfcl`` matcher per answered parameter the function declares. An answered parameter
    it does not declare is left out when ``""`` allows that (BFCL refuses it if given, as
    ``args_exact`` does); a required one the answer leaves out makes the entry unpassable."""
    properties: dict[str, Any] = parameters.get("properties") or {}
    required = [name for name in parameters.get("required") or [] if isinstance(name, str)]
    for name in required:
        if name not in answer:
            raise Unpassable(f"{name!r} is required by the function but absent from its possible answer")
        if name not in properties:
            raise Unpassable(f"{name!r} is required by the function but not one of its parameters")
    matchers: dict[str, Any] = {}
    for name, values in answer.items():
        if name not in properties:
            if "" in values:
                continue
            raise Unpassable(f"the answer requires {name!r}, which the function does not declare")
        matchers[name] = {"bfcl": _operand(values, properties[name], name in required, entry, (*where, name))}
    return matchers


def _operand(
    values: list[Any], schema: Any, required: bool, entry: Entry, where: tuple[str | int, ...]
) -> dict[str, Any]:
    kind = schema.get("type") if isinstance(schema, dict) else None
    if kind not in BFCL_TYPES:
        raise entry.error(
            f"the answered parameter has BFCL type {kind!r}, which BFCL's checker cannot check", *where
        )
    operand: dict[str, Any] = {"values": values, "type": kind}
    items = schema.get("items")
    if kind in ("array", "tuple") and isinstance(items, dict) and "type" in items:
        if items["type"] not in BFCL_TYPES:
            raise entry.error(f"array items of BFCL type {items['type']!r}, which BFCL cannot check", *where)
        operand["items"] = items["type"]
    if required and "" in values:
        operand["required"] = True
    return operand


# -- one entry as a scenario ----------------------------------------------------------------


def messages(entry: Entry) -> list[dict[str, str]]:
    """The entry's one turn as scenario messages (multi-turn entries are not imported)."""
    question = entry.data.get("question")
    if not isinstance(question, list) or len(question) != 1 or not isinstance(question[0], list):
        raise entry.error("'question' must hold exactly one turn (a list of messages)", "question")
    found = []
    for index, message in enumerate(question[0]):
        role = message.get("role") if isinstance(message, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if role not in ("system", "user", "assistant") or not isinstance(content, str) or not content:
            raise entry.error(
                "a message needs a role (system, user, assistant) and text", "question", 0, index
            )
        found.append({"role": role, "content": content})
    return found


def scenario(entry: Entry, category: str, answer: Entry | None) -> dict[str, Any]:
    """The scenario for one entry (and its possible answer, for the categories that have one)."""
    functions = entry.data.get("function")
    if not isinstance(functions, list) or not functions:
        raise entry.error("'function' must be a non-empty list", "function")
    tools = [declare_tool(function, entry, index) for index, function in enumerate(functions)]
    names = [tool["name"] for tool in tools]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise entry.error(f"the functions {twice} are declared twice", "function")
    bfcl_id = entry.data["id"]
    data: dict[str, Any] = {
        "id": scenario_id(bfcl_id),
        "category": CATEGORIES[category],
        "description": f"BFCL {bfcl_id} ({category})",
        "tags": ["bfcl", category],
        "tools": tools,
        "messages": messages(entry),
        "expect": _expect(entry, category, answer),
        "limits": {"max_turns": MAX_TURNS},
    }
    return data


def _expect(entry: Entry, category: str, answer: Entry | None) -> dict[str, Any]:
    if CATEGORIES[category] == "irrelevance":
        return {"calls": []}
    if answer is None:
        raise entry.error(f"no possible answer for this entry (category {category} needs --answers)")
    truth = answer.data.get("ground_truth")
    if not isinstance(truth, list) or not truth:
        raise answer.error("'ground_truth' must be a non-empty list of calls", "ground_truth")
    if category not in PARALLEL and len(truth) != 1:
        raise answer.error(f"a {category} entry has exactly one ground-truth call", "ground_truth")
    functions = entry.data["function"]
    calls = [
        expected_call(call, functions, answer, index, simple=category in SIMPLE)
        for index, call in enumerate(truth)
    ]
    expect: dict[str, Any] = {"calls": calls}
    if category in PARALLEL:
        expect["order"] = "any"
    if len(calls) > 1:
        expect["parallel"] = True
    return expect


# -- files -------------------------------------------------------------------------------------


def _answers(path: Path | None) -> dict[str, Entry]:
    """The possible answers by entry id (answers to entries not imported are simply unused:
    a subset of a category's questions may be imported with the category's whole answer file)."""
    if path is None:
        return {}
    return {entry.data["id"]: entry for entry in read_entries(path)}


def _category(entries: list[Entry]) -> str:
    categories = {category_of(entry.data["id"]) for entry in entries}
    if len(categories) != 1:
        first = {category_of(e.data["id"]): e for e in entries}
        shown = ", ".join(f"{c} (line {first[c].line})" for c in sorted(categories))
        raise ScenarioError(entries[0].path, f"one BFCL file holds one category; this one mixes {shown}")
    (category,) = categories
    why = refusal(category)
    if why is not None:
        raise ScenarioError(entries[0].path, why, line=entries[0].line)
    return category


def import_file(questions: Path, answers: Path | None, out: Path) -> ImportResult:
    """Import one BFCL category file into ``out/<category>/``: every entry that converts is
    written (and loaded back, to prove it valid); an entry BFCL could never pass is skipped
    and named; bad input raises :class:`ScenarioError` naming file, line and field, and then
    nothing is written."""
    entries = read_entries(questions)
    if not entries:
        raise ScenarioError(str(questions), "no BFCL entries in this file")
    category = _category(entries)
    answered = _answers(answers)
    result = ImportResult(category, out / category)
    built: list[tuple[Entry, dict[str, Any]]] = []
    errors: list[ScenarioError] = []
    for entry in entries:
        try:
            built.append((entry, scenario(entry, category, answered.get(entry.data["id"]))))
        except Unpassable as exc:
            result.skipped.append((entry.data["id"], f"BFCL could never pass it: {exc}"))
        except ScenarioError as exc:
            errors.append(exc)
    _check_ids(built, errors)
    if errors:
        raise ScenarioError.many(errors)
    with tempfile.TemporaryDirectory(prefix="bfcl-import-") as scratch:
        files = [(entry, data, write_scenario(entry, data, Path(scratch))) for entry, data in built]
        errors = [problem for entry, data, path in files for problem in _invalid(entry, data, path)]
        if errors:
            raise ScenarioError.many(errors)
        result.out.mkdir(parents=True, exist_ok=True)
        for _, _, path in files:
            result.written.append(Path(shutil.copyfile(path, result.out / path.name)))
    result.notes += list(_notes(built))
    return result


def _check_ids(built: list[tuple[Entry, dict[str, Any]]], errors: list[ScenarioError]) -> None:
    seen: dict[str, Entry] = {}
    for entry, data in built:
        other = seen.setdefault(data["id"], entry)
        if other is not entry:
            errors.append(
                entry.error(f"its scenario id {data['id']!r} is also that of line {other.line}", "id")
            )


def write_scenario(entry: Entry, data: dict[str, Any], folder: Path) -> Path:
    """Write one scenario file into ``folder`` (YAML, with a header naming its source)."""
    import yaml

    path = folder / f"{data['id'].removeprefix('bfcl.')}.yaml"
    where = f"{Path(entry.path).name} line {entry.line}" if entry.line else Path(entry.path).name
    header = (
        f"# BFCL entry {entry.data['id']} (Berkeley Function Calling Leaderboard, Apache-2.0),\n"
        f"# from {where}, written by `harness import bfcl`.\n"
        "# The expected calls use the `bfcl` matcher: BFCL's possible answers.\n"
    )
    body = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100, default_flow_style=None)
    path.write_text(header + body, encoding="utf-8")
    return path


def _invalid(entry: Entry, built: dict[str, Any], path: Path) -> list[ScenarioError]:
    """Why a written scenario is not usable, each problem named at the BFCL entry: it must read
    back as exactly the data built (no YAML surprise in a value: ``5.0`` stays a float, ``"5"``
    a string) and load as a valid scenario (its JSON Schemas included)."""
    from harness.scenarios import load_file

    data, _ = yamlio.load(path)
    if json.dumps(data, sort_keys=True, default=repr) != json.dumps(built, sort_keys=True, default=repr):
        return [entry.error("its scenario does not read back from YAML as it was built")]
    try:
        load_file(path)
    except ScenarioError as exc:
        return [
            entry.error(f"its scenario is invalid: {p.message} (at {p.pointer or '/'})") for p in exc.problems
        ]
    return []


def _notes(built: list[tuple[Entry, dict[str, Any]]]) -> Iterator[str]:
    """What a user of the imported scenarios should know before running them."""
    dotted = sorted({t["name"] for _, data in built for t in data["tools"] if "." in t["name"]})
    if dotted:
        yield (
            f"{len(dotted)} tool name(s) contain '.' ({', '.join(dotted[:3])}"
            f"{' ...' if len(dotted) > 3 else ''}): "
            "kept as BFCL names them; OpenAI's and Anthropic's rules refuse '.', reported per target as "
            "wire.tool_declaration"
        )
    openings: dict[str, list[str]] = {}
    for _, data in built:
        text = "\n".join(m["content"].strip() for m in data["messages"] if m["role"] == "user")
        openings.setdefault(text, []).append(data["id"])
    for ids in openings.values():
        if len(ids) > 1:
            yield (
                f"{' and '.join(ids)} open with the same user messages: the simulator (sim-* targets) cannot "
                "tell them apart, so run them against it separately (-s)"
            )


# -- grading one turn the harness's way -------------------------------------------------------

GRADING_CHECKS = ("expect.calls", "expect.extra_calls", "expect.parallel", "expect.no_call")
"""The expectation checks that decide, for one model turn, what BFCL's checker decides."""


@dataclass(frozen=True)
class Grade:
    """What the harness's expectation checks say about one model turn's calls."""

    passed: bool
    problems: tuple[str, ...] = ()


def grade(scenario: Scenario, calls: Sequence[tuple[str, dict[str, Any] | None]]) -> Grade:
    """Grade one model turn's calls (``(name, arguments)`` in the order the model made them)
    against an imported scenario, with the harness's own expectation checks: the calls of a
    run whose first turn made exactly these calls and whose second answered in text. This
    is what ``benchmarks/bfcl_agreement.py`` compares with BFCL's AST checker.

    Example::

        (scenario,) = harness.load_scenarios("bfcl/simple_python", select=["bfcl.simple_python_1"])
        grade(scenario, [("math.factorial", {"number": 5})]).passed  # True
    """
    from harness.checks import RunContext, get_check
    from harness.model import Exchange, ParsedTurn, SentRequest, ToolCall, Transcript, WireResponse

    transcript = Transcript("bfcl-grade", scenario.id, tools=[tool.spec for tool in scenario.tools])
    request = SentRequest("POST", "bfcl://grade", {}, {})
    made = [ToolCall(name, args, args, f"call_{i}", f"call_{i}", i) for i, (name, args) in enumerate(calls)]
    transcript.exchanges.append(Exchange(0, request, WireResponse(200, ""), ParsedTurn(tool_calls=made)))
    if made:
        transcript.exchanges.append(Exchange(1, request, WireResponse(200, ""), ParsedTurn(text="Done.")))
    context = RunContext(transcript, scenario)
    problems = tuple(
        f"{check_id}: {finding.detail}"
        for check_id in GRADING_CHECKS
        for finding in get_check(check_id).fn(context)
        if not finding.passed
    )
    return Grade(not problems, problems)
