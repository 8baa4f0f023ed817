"""Agreement of the harness with BFCL's own AST checker, on the BFCL sample and mutations.

Every entry of ``tests/data/bfcl`` is imported with ``harness.importers.bfcl.import_file``; for each,
model outputs are made from its possible answer: right (first acceptable values; also with
every optional argument left out) and broken in each way BFCL's checker has a rule for
(per argument: a wrong value, a wrong type, an int for a float, a float for an int, string
case, spaces and punctuation, a tab inside a string, the argument left out; per call: an
undeclared extra argument, a declared one the answer does not list, another function; per
turn: parallel calls swapped, a call missing, a call repeated, no call; irrelevance: a call
made). Each output is graded twice: by the harness (``harness.importers.bfcl.grade``: its own
expectation checks over the imported scenario) and by BFCL's ``ast_checker`` (and its
relevance rule for the irrelevance categories), run unchanged from the ``bfcl-eval``
package in a separate Python (``--bfcl-python``; its dependencies are far too heavy for the
project's venv). Prints the cases, the agreements and their share, per mutation kind, then
every disagreement with BFCL's error, the harness's problems and the explanation; exits 1
when a disagreement has no explanation in :data:`EXPLAINED`::

    python benchmarks/bfcl_agreement.py [--bfcl-python /tmp/bfclvenv/bin/python] [--show 20]

BFCL's Python, once (``bfcl-eval`` without its model-serving dependencies: torch, vllm and
sentence-transformers are not needed by the checker)::

    python3 -m venv /tmp/bfclvenv
    /tmp/bfclvenv/bin/pip install --no-deps bfcl-eval==2026.3.23
    /tmp/bfclvenv/bin/pip install anthropic cohere==5.18.0 openai google-genai mistralai==1.7.0 \\
        boto3 qwen-agent writer-sdk numpy==1.26.4 soundfile datamodel_code_generator filelock==3.20.0 \\
        tenacity overrides tree_sitter==0.21.3 tree-sitter-java==0.21.0 tree-sitter-javascript==0.21.4
"""

from __future__ import annotations

import argparse
import collections
import copy
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.importers.bfcl import CATEGORIES, grade, import_file, scenario_id
from harness.scenarios import Scenario, load

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data" / "bfcl"
BFCL_MODEL = "gorilla-openfunctions-v2"
"""A model BFCL knows whose names it compares as they are (``underscore_to_dot`` false)."""

Call = dict[str, dict[str, Any]]  # BFCL's shape of one call: {name: arguments}

EXPLAINED: dict[str, str] = {
    "overlapping_answers": (
        "BFCL pairs parallel calls with possible answers greedily: each answer, in the answer's "
        "order, takes the first unused call it accepts, so when one answer accepts two of the calls "
        "the order of the calls decides the verdict. The harness's expect.calls check finds a "
        "maximum matching (harness.checks.expectations.assign), so a right set of calls passes in "
        "any order. No entry of the sample has answers that overlap this way."
    )
}
"""Mutation kind -> why the harness and BFCL disagree on it."""

CONSTRUCTED: dict[str, Any] = {
    "id": "parallel_900000",
    "question": [[{"role": "user", "content": "What's the weather in Paris and in Tokyo?"}]],
    "function": [
        {
            "name": "weather.get",
            "description": "Current weather in a city.",
            "parameters": {"type": "dict", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        }
    ],
    "ground_truth": [{"weather.get": {"city": ["Paris", "Tokyo"]}}, {"weather.get": {"city": ["Paris"]}}],
}
"""An entry made here, not BFCL data: its first answer accepts both calls, its second only one,
which is the one case where BFCL's greedy pairing and the harness's matching differ."""

DRIVER = r"""
import json, sys
from bfcl_eval.constants.enums import Language
from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker
from bfcl_eval.utils import is_empty_output, is_function_calling_format_output

verdicts = []
for case in json.load(sys.stdin):
    try:
        output = case["output"]
        if "irrelevance" in case["category"]:
            decoded_call = is_function_calling_format_output(output) and not is_empty_output(output)
            error = "a call was decoded" if decoded_call else ""
            verdicts.append({"valid": not decoded_call, "error": error})
            continue
        if not is_function_calling_format_output(output):
            verdicts.append({"valid": False, "error": "not in function-calling format"})
            continue
        result = ast_checker(
            case["functions"], output, case["answer"], Language.PYTHON, case["category"], case["model"]
        )
        verdicts.append({"valid": bool(result["valid"]), "error": json.dumps(result.get("error"))[:400]})
    except Exception as exc:
        verdicts.append({"valid": None, "error": f"BFCL's checker raised {type(exc).__name__}: {exc}"})
json.dump(verdicts, sys.stdout)
"""


@dataclass(frozen=True)
class Case:
    """One model output for one BFCL entry."""

    bfcl_id: str
    category: str
    kind: str
    output: list[Call]
    detail: str = ""


@dataclass(frozen=True)
class Entry:
    """A BFCL entry with its answer and the scenario the harness imported from it."""

    bfcl_id: str
    category: str
    functions: list[dict[str, Any]]
    answer: list[Call]
    scenario: Scenario


# -- the sample -----------------------------------------------------------------------------


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def entries(data: Path, scratch: Path) -> list[Entry]:
    """Every entry of the sample with its imported scenario."""
    found = []
    for questions in sorted(data.glob("*.jsonl")):
        answers_path = data / "possible_answer" / questions.name
        answers = answers_path if answers_path.is_file() else None
        result = import_file(questions, answers, scratch)
        scenarios = {s.id: s for s in load([result.out])}
        answered = {a["id"]: a["ground_truth"] for a in read_jsonl(answers)} if answers else {}
        for item in read_jsonl(questions):
            found.append(
                Entry(
                    item["id"],
                    result.category,
                    item["function"],
                    answered.get(item["id"], []),
                    scenarios[scenario_id(item["id"])],
                )
            )
    return found


# -- right outputs ----------------------------------------------------------------------------


def first(values: list[Any]) -> tuple[bool, Any]:
    """(there is an acceptable value other than "", the first such value)."""
    for value in values:
        if value != "":
            return True, value
    return False, None


def resolved(value: Any) -> Any:
    """A listed value made concrete: a dict of lists of acceptable values takes the first of each."""
    if isinstance(value, dict):
        return {k: first(v)[1] for k, v in value.items() if isinstance(v, list) and first(v)[0]}
    if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        return [resolved(item) for item in value]
    return value


def right_call(entry: Entry, call: Call, *, minimal: bool = False) -> Call:
    """The call with the first acceptable value of each declared argument (``minimal``: every
    argument that may be left out is left out). An answered argument the function does not
    declare is left out: BFCL refuses it when given."""
    ((name, answer),) = call.items()
    declared = function(entry, name)["parameters"].get("properties", {})
    args = {}
    for param, values in answer.items():
        has, value = first(values)
        if has and param in declared and not (minimal and "" in values):
            args[param] = resolved(value)
    return {name: args}


def function(entry: Entry, name: str) -> dict[str, Any]:
    simple = "simple" in entry.category
    return entry.functions[0] if simple else next(f for f in entry.functions if f["name"] == name)


# -- mutations ----------------------------------------------------------------------------------


def wrong_value(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 7919
    if isinstance(value, float):
        return value + 0.5
    if isinstance(value, str):
        return "Nowhere Else"
    if isinstance(value, list):
        return [*value, value[0]] if value else ["zzz"]
    if isinstance(value, dict):
        return {**value, "zzz_key": 1}
    return "zzz"


def wrong_type(value: Any) -> Any:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return 12345
    if isinstance(value, list):
        return ",".join(map(str, value))
    if isinstance(value, dict):
        return json.dumps(value)
    return 0


def restyled(text: str) -> str:
    """Case, spaces and BFCL's stripped punctuation changed: BFCL counts it the same."""
    return " " + text.upper().replace(" ", " _ ") + " ."


def value_mutations(value: Any, values: list[Any], kind: str) -> Iterator[tuple[str, Any]]:
    """(kind, new value) for one argument whose first acceptable value is ``value``."""
    yield "wrong_value", wrong_value(value)
    yield "wrong_type", wrong_type(value)
    if kind == "float" and isinstance(value, float) and value.is_integer():
        yield "int_for_float", int(value)
    if kind == "integer" and isinstance(value, int) and not isinstance(value, bool):
        yield "float_for_int", float(value)
    if isinstance(value, str) and value.strip():
        yield "string_case_space", restyled(value)
        yield "string_tab", value.replace(" ", "\t") if " " in value else value + "\t"
    if isinstance(value, list) and value and all(isinstance(item, str) for item in value):
        yield "string_case_space", [restyled(item) for item in value]
    if isinstance(value, dict) and any(isinstance(item, str) and item.strip() for item in value.values()):
        yield "string_case_space", restyled_strings(value)
    if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        yield "string_case_space", [restyled_strings(item) for item in value]


def restyled_strings(value: dict[str, Any]) -> dict[str, Any]:
    """A dict with its string values restyled (BFCL normalises strings inside dicts too)."""
    return {k: restyled(v) if isinstance(v, str) and v.strip() else v for k, v in value.items()}


def argument_cases(entry: Entry, index: int, right: list[Call]) -> Iterator[tuple[str, list[Call], str]]:
    """Each argument of call ``index`` changed, then left out."""
    ((name, answer),) = entry.answer[index].items()
    doc = function(entry, name)["parameters"]
    required = doc.get("required", [])
    for param, values in answer.items():
        if param not in doc.get("properties", {}):
            continue  # undeclared: BFCL refuses it whatever its value (the extra_argument kind)
        has, value = first(values)
        param_type = doc["properties"][param].get("type", "")
        if has:
            for kind, new in value_mutations(resolved(value), values, param_type):
                yield kind, replaced(right, index, param, new), f"{name}.{param} = {new!r}"
        if param in next(iter(right[index].values())):
            kind = (
                "missing_required"
                if param in required
                else "omit_optional"
                if "" in values
                else "missing_listed"
            )
            yield kind, replaced(right, index, param, None, drop=True), f"{name} without {param}"


def replaced(calls: list[Call], index: int, param: str, value: Any, *, drop: bool = False) -> list[Call]:
    out = copy.deepcopy(calls)
    ((_, args),) = out[index].items()
    if drop:
        args.pop(param, None)
    else:
        args[param] = value
    return out


def call_cases(entry: Entry, right: list[Call]) -> Iterator[tuple[str, list[Call], str]]:
    """Whole-call and whole-turn mutations."""
    ((name, args),) = right[0].items()
    yield "extra_argument", [{name: {**args, "zzz_unexpected": "x"}}, *right[1:]], "undeclared argument"
    doc = function(entry, name)["parameters"].get("properties", {})
    unlisted = [p for p in doc if p not in entry.answer[0][next(iter(entry.answer[0]))]]
    if unlisted:
        extra = example_of(doc[unlisted[0]])
        yield "extra_declared_argument", [{name: {**args, unlisted[0]: extra}}, *right[1:]], unlisted[0]
    others = [f["name"] for f in entry.functions if f["name"] != name]
    if others:
        yield "other_function", [{others[0]: args}, *right[1:]], others[0]
    if len(right) > 1:
        yield "parallel_swapped", list(reversed(right)), "calls reversed"
        yield "missing_call", right[:-1], "last call left out"
    yield "extra_call", [*right, right[0]], "first call repeated"
    yield "no_call", [], "no call"


def example_of(schema: dict[str, Any]) -> Any:
    """A value of a BFCL parameter type (for an extra argument)."""
    return {"integer": 1, "float": 1.5, "boolean": True, "array": [], "tuple": [], "dict": {}}.get(
        schema.get("type", ""), "x"
    )


def cases(entry: Entry) -> Iterator[Case]:
    """Every case of one entry."""
    if "irrelevance" in entry.category:
        yield Case(entry.bfcl_id, entry.category, "right_no_call", [])
        doc = entry.functions[0]
        props = doc["parameters"].get("properties", {})
        args = {p: example_of(props[p]) for p in doc["parameters"].get("required", []) if p in props}
        yield Case(entry.bfcl_id, entry.category, "irrelevant_call", [{doc["name"]: args}])
        return
    right = [right_call(entry, call) for call in entry.answer]
    yield Case(entry.bfcl_id, entry.category, "right", right)
    minimal = [right_call(entry, call, minimal=True) for call in entry.answer]
    if minimal != right:
        yield Case(entry.bfcl_id, entry.category, "right_optional_omitted", minimal)
    for index in range(len(right)):
        for kind, output, detail in argument_cases(entry, index, right):
            yield Case(entry.bfcl_id, entry.category, kind, output, detail)
    for kind, output, detail in call_cases(entry, right):
        yield Case(entry.bfcl_id, entry.category, kind, output, detail)


# -- grading ------------------------------------------------------------------------------------


def constructed(scratch: Path) -> tuple[Entry, list[Case]]:
    """The constructed entry (imported like the sample) and its outputs in both orders."""
    folder = scratch / "constructed"
    (folder / "possible_answer").mkdir(parents=True)
    question = {k: CONSTRUCTED[k] for k in ("id", "question", "function")}
    (folder / "parallel.jsonl").write_text(json.dumps(question) + "\n")
    answer = {"id": CONSTRUCTED["id"], "ground_truth": CONSTRUCTED["ground_truth"]}
    (folder / "possible_answer" / "parallel.jsonl").write_text(json.dumps(answer) + "\n")
    (entry,) = entries(folder, scratch / "constructed-out")
    paris, tokyo = {"weather.get": {"city": "Paris"}}, {"weather.get": {"city": "Tokyo"}}
    outputs = [[paris, tokyo], [tokyo, paris]]
    return entry, [
        Case(entry.bfcl_id, entry.category, "overlapping_answers", o, "constructed") for o in outputs
    ]


def bfcl_verdicts(python: str, items: list[tuple[Entry, Case]]) -> list[dict[str, Any]]:
    """BFCL's verdict on each case, from its unchanged checker in its own Python."""
    payload = [
        {
            "category": entry.category,
            "functions": entry.functions,
            "answer": entry.answer,
            "output": case.output,
            "model": BFCL_MODEL,
        }
        for entry, case in items
    ]
    done = subprocess.run(
        [python, "-c", DRIVER], input=json.dumps(payload), capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"BFCL's checker failed to run ({python}):\n{done.stderr[-3000:]}")
    verdicts: list[dict[str, Any]] = json.loads(done.stdout)
    return verdicts


def harness_verdict(entry: Entry, case: Case) -> tuple[bool, str]:
    calls = [(name, json.loads(json.dumps(args))) for call in case.output for name, args in call.items()]
    result = grade(entry.scenario, calls)
    return result.passed, "; ".join(result.problems)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--bfcl-python",
        default=os.environ.get("BFCL_PYTHON", "/tmp/bfclvenv/bin/python"),
        help="a Python with bfcl-eval installed (env BFCL_PYTHON)",
    )
    parser.add_argument("--data", type=Path, default=DATA, help="BFCL sample folder")
    parser.add_argument("--show", type=int, default=50, help="disagreements to print in full")
    options = parser.parse_args()
    if not Path(options.bfcl_python).exists():
        print(
            f"no Python at {options.bfcl_python}; make one as this script's docstring says", file=sys.stderr
        )
        return 2
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bfcl-agreement-") as scratch:
        items = [(entry, case) for entry in entries(options.data, Path(scratch)) for case in cases(entry)]
        made, made_cases = constructed(Path(scratch))
    theirs = bfcl_verdicts(options.bfcl_python, items)
    print("== the BFCL sample and its mutations ==")
    status = report(items, theirs, options.show, time.perf_counter() - started)
    extra = [(made, case) for case in made_cases]
    print("\n== constructed (not BFCL data): the one known difference ==")
    return max(status, report(extra, bfcl_verdicts(options.bfcl_python, extra), options.show, 0.0))


def report(items: list[tuple[Entry, Case]], theirs: list[dict[str, Any]], show: int, elapsed: float) -> int:
    """Print the agreement figure, per kind and per category, and every disagreement."""
    by_kind: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0])
    by_category: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0])
    disagreements = []
    for (entry, case), verdict in zip(items, theirs, strict=True):
        ours, problems = harness_verdict(entry, case)
        agree = verdict["valid"] is ours
        for row in (by_kind[case.kind], by_category[entry.category]):
            row[0] += 1
            row[1] += agree
            row[2] += bool(verdict["valid"])
        if not agree:
            disagreements.append((entry, case, verdict, ours, problems))
    total = len(items)
    agreed = total - len(disagreements)
    print(f"BFCL agreement: {total} cases, {agreed} agreements, {100 * agreed / total:.2f} %")
    print(
        f"({len({e.bfcl_id for e, _ in items})} entries of {len(by_category)} categories; {elapsed:.1f} s)\n"
    )
    print(f"{'mutation kind':<26}{'cases':>7}{'agree':>7}{'BFCL valid':>12}")
    for kind, (n, ok, valid) in sorted(by_kind.items()):
        print(f"{kind:<26}{n:>7}{ok:>7}{valid:>12}")
    print(f"\n{'category':<26}{'cases':>7}{'agree':>7}{'BFCL valid':>12}")
    for category, (n, ok, valid) in sorted(by_category.items(), key=lambda kv: list(CATEGORIES).index(kv[0])):
        print(f"{category:<26}{n:>7}{ok:>7}{valid:>12}")
    unexplained = 0
    print(f"\n{len(disagreements)} disagreement(s)")
    for index, (_, case, verdict, ours, problems) in enumerate(disagreements):
        why = EXPLAINED.get(case.kind)
        unexplained += why is None
        if index < show:
            print(f"- {case.bfcl_id} [{case.kind}] {case.detail}: BFCL {verdict['valid']}, harness {ours}")
            print(f"    output: {json.dumps(case.output)[:300]}")
            print(f"    BFCL: {verdict['error'][:300]}")
            print(f"    harness: {problems[:300] or 'no problem'}")
            print(f"    why: {why or 'UNEXPLAINED'}")
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
