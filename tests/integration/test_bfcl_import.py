"""``harness import bfcl`` end to end: every sample file of ``tests/data/bfcl`` imported by the
real command, the output validated by ``harness validate``; bad input refused with its file,
line and field; and imported scenarios with dotted tool names (``math.factorial``) recorded
against the simulator in three wire formats and replayed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.api import run
from harness.runner import RunConfig
from harness.scenarios import load
from harness.targets_file import load_targets
from tests.helpers.cli import REPO, harness

DATA = REPO / "tests" / "data" / "bfcl"
SAMPLE = sorted(DATA.glob("*.jsonl"))


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """Every sample file imported with the command; its summary line per category."""
    out = tmp_path_factory.mktemp("bfcl-scenarios")
    said = {}
    for questions in SAMPLE:
        answers = DATA / "possible_answer" / questions.name
        extra = ["--answers", str(answers)] if answers.exists() else []
        done = harness("import", "bfcl", questions, *extra, "--out", out)
        assert done.returncode == 0, done.stderr
        said[questions.stem] = done.stdout.strip()
    return out, said


def test_every_sample_file_imports_and_every_written_scenario_is_valid(
    imported: tuple[Path, dict[str, str]],
) -> None:
    out, said = imported
    entries = {path.stem: len(path.read_text().splitlines()) for path in SAMPLE}
    for category, count in entries.items():
        assert said[category] == f"imported {count} BFCL {category} entries into {out / category}"
        assert len(list((out / category).glob("*.yaml"))) == count
    done = harness("validate", out)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{sum(entries.values())} scenario(s) valid"


def test_the_entry_id_is_in_the_scenario_id_and_the_file_name(imported: tuple[Path, dict[str, str]]) -> None:
    out, _ = imported
    text = (out / "live_multiple" / "live_multiple_27-7-0.yaml").read_text()
    assert "id: bfcl.live_multiple_27-7-0\n" in text
    assert "# BFCL entry live_multiple_27-7-0 (Berkeley Function Calling Leaderboard, Apache-2.0)" in text


def test_notes_say_what_to_know_before_running(tmp_path: Path) -> None:
    done = harness("import", "bfcl", DATA / "irrelevance.jsonl", "--out", tmp_path)
    assert done.returncode == 0, done.stderr
    assert "tool name(s) contain '.'" in done.stderr
    assert "bfcl.irrelevance_23 and bfcl.irrelevance_24 open with the same user messages" in done.stderr


def test_bad_input_exits_2_naming_file_line_and_field(tmp_path: Path) -> None:
    lines = (DATA / "simple_python.jsonl").read_text().splitlines()
    lines[4] = lines[4].replace('"type": "integer"', '"type": "int"', 1)
    bad = tmp_path / "simple_python.jsonl"
    bad.write_text("\n".join(lines[:6]) + "\n")
    done = harness(
        "import",
        "bfcl",
        bad,
        "--answers",
        DATA / "possible_answer" / "simple_python.jsonl",
        "--out",
        tmp_path / "out",
    )
    assert done.returncode == 2
    assert re.search(
        r"simple_python\.jsonl:5: BFCL entry simple_python_4: unknown BFCL type 'int'.*"
        r" at /function/0/parameters/properties/\w+/type",
        done.stderr,
    ), done.stderr
    assert not (tmp_path / "out").exists()


def test_a_category_without_answers_needs_them(tmp_path: Path) -> None:
    done = harness("import", "bfcl", DATA / "parallel.jsonl", "--out", tmp_path)
    assert done.returncode == 2 and "needs --answers" in done.stderr


SIMULATED = [
    "bfcl.simple_python_1",
    "bfcl.parallel_0",
    "bfcl.multiple_8",
    "bfcl.live_multiple_1-0-1",
    "bfcl.irrelevance_0",
]


def test_dotted_names_record_and_replay_against_the_simulator(
    imported: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """The simulator plays each imported scenario's expected calls (the bfcl matcher's example);
    recorded, then replayed, every run scores 100 with its expected calls matched. OpenAI's and
    Anthropic's naming rules refuse '.': the tool is offered there as ``math_factorial`` and the
    call mapped back (a ``wire.tool_name_mapped`` note); Gemini gets the dotted name itself."""
    out, _ = imported
    scenarios = [s for s in load([out]) if s.id in SIMULATED]
    assert len(scenarios) == len(SIMULATED)
    known = load_targets()
    targets = [known[name] for name in ("sim-openai", "sim-anthropic", "sim-gemini")]
    for mode in ("record", "replay"):
        result = run(scenarios, targets, RunConfig(mode=mode, cassettes=tmp_path / "cassettes"))  # type: ignore[arg-type]
        assert not result.errors, mode
        assert result.scores == {"sim-anthropic": 100, "sim-gemini": 100, "sim-openai": 100}, mode
    factorial = {r.target.name: r for r in result.records if r.scenario == "bfcl.simple_python_1"}
    for name, record in factorial.items():
        ((_, call),) = record.transcript.calls
        offered = "math.factorial" if name == "sim-gemini" else "math_factorial"
        assert (call.name, call.arguments) == (offered, {"number": 5})
        assert record.transcript.logical(call.name) == "math.factorial"
        assert next(c for c in record.checks if c.id == "expect.calls").status == "pass"
        mapped = [f.detail for f in record.findings() if f.check_id == "wire.tool_name_mapped"]
        assert bool(mapped) == (name != "sim-gemini")
        assert not any(f.check_id == "wire.tool_declaration" for f in record.findings())
    pair = next(
        r for r in result.records if r.scenario == "bfcl.parallel_0" and r.target.name == "sim-openai"
    )
    assert [pair.transcript.logical(c.name) for _, c in pair.transcript.calls] == [
        "spotify.play",
        "spotify.play",
    ]
    assert next(c for c in pair.checks if c.id == "expect.parallel").status == "pass"
