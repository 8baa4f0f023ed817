"""The README and the pages of ``docs/`` work as written, on a fresh clone.

Every fenced block is read: scenario, tool set and config blocks load; every Python block runs
(a script, or a test module under pytest); every command of every shell block runs in a copy of
the repository, in order, and exits as documented. A command is not run only when it needs what a
test cannot have (a key, the network, a model build, a server that runs until Ctrl-C, minutes of
benchmarking), and then the page says so after the block: "not run by the docs test", and why.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

import harness
from harness.registry import CHECKS
from harness.runner import RunConfig
from tests.helpers.cli import REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
NOT_RUN = "not run by the docs test"
"""What a page says after a shell block holding a command this test does not run (then why)."""
COPIED = ("scenarios", "cassettes", "examples", "tests/data/bfcl", "pyproject.toml")
"""What the documented commands read from the repository (pyproject.toml: pytest's settings, so
that a bare ``pytest --harness-targets`` collects the scenario folder as in a clone)."""
OFFLINE = {"run", "validate", "list", "report", "audit", "baseline", "compare", "verify", "merge"}
OFFLINE |= {"import", "capabilities", "init", "history"}
VERDICTS = {"verify": {0, 6, 7}}
"""Commands whose documented exit codes carry a verdict, not a failure of the command."""
FENCE = re.compile(r"^```(\w+)\n(.*?)^```$", flags=re.S | re.M)
STOP = re.compile(r"^#|^```sh$", flags=re.M)


@dataclass(frozen=True)
class Block:
    """A fenced block of a page, with the page's text after it up to the next heading or shell
    block (where a page says why a command is not run)."""

    page: Path
    line: int
    lang: str
    text: str
    after: str

    def __str__(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def read_blocks(page: Path) -> list[Block]:
    text = page.read_text()
    found = []
    for match in FENCE.finditer(text):
        rest = text[match.end() :]
        stop = STOP.search(rest)
        line = text.count("\n", 0, match.start()) + 1
        after = rest[: stop.start() if stop else len(rest)]
        found.append(Block(page, line, match[1], match[2], after))
    return found


BLOCKS = [block for page in PAGES for block in read_blocks(page)]


def blocks(language: str) -> list[Block]:
    return [block for block in BLOCKS if block.lang == language]


def yaml_blocks(key: str) -> list[Block]:
    return [b for b in blocks("yaml") if key in (yaml.safe_load(b.text) or {})]


def commands(block: Block) -> list[list[str]]:
    """Each command of a shell block, in order (``a && b`` is two; comments dropped)."""
    found = []
    for line in block.text.splitlines():
        for part in line.split("&&"):
            words = shlex.split(part.split(" #")[0])
            if words:
                found.append(words)
    return found


def offline(args: list[str], live: bool, targets: list[str]) -> bool:
    """Whether a command needs no key and no network: it replays, or it calls only the simulator
    (every target ``sim-*``, served on 127.0.0.1)."""
    modes = [args[i + 1] for i, arg in enumerate(args[:-1]) if arg in ("--mode", "--harness-mode")]
    live = live or "--live" in args or any(mode != "replay" for mode in modes)
    return not live or (bool(targets) and all(target.startswith("sim-") for target in targets))


def runnable(words: list[str]) -> list[str] | None:
    """The argv to run for a documented command, or None when it needs a key, the network, a
    model, a build or a server that never ends: offline ``harness`` commands, and pytest with the
    harness's plugin."""
    program, args = Path(words[0]).name, words[1:]
    if program == "harness" and args and args[0] in OFFLINE | {"record"}:
        targets = [args[i + 1] for i, arg in enumerate(args[:-1]) if arg in ("-t", "--target")]
        if offline(args, args[0] == "record", targets):
            return [sys.executable, "-m", "harness", *args]
    if program == "python" and args[:2] == ["-m", "pytest"] and any(a.startswith("--harness-") for a in args):
        values = [args[i + 1] for i, arg in enumerate(args[:-1]) if arg == "--harness-targets"]
        if offline(args, False, [name for value in values for name in value.split(",")]):
            return [sys.executable, *args]
    return None


def copy_of_repository(root: Path) -> Path:
    """The parts of the repository the documented commands read, in a scratch folder."""
    for name in COPIED:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, root / name)
        else:
            shutil.copy2(REPO / name, root / name)
    return root


def run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``argv`` run as a user runs it: with the run history on (tests/conftest.py turns it off)."""
    env = {k: v for k, v in os.environ.items() if k != "HARNESS_HISTORY"}
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600, env=env)


def test_the_pages_have_the_blocks_this_test_reads() -> None:
    assert len(yaml_blocks("category")) >= 2 and yaml_blocks("toolset") and blocks("python")
    assert [b for b in blocks("sh") if any(runnable(c) for c in commands(b))]
    assert len(PAGES) >= 15


@pytest.mark.parametrize("block", blocks("sh"), ids=str)
def test_a_shell_block_not_run_says_why(block: Block) -> None:
    """A block holding a command this test does not run says so after it; a block whose every
    command runs does not claim otherwise."""
    skipped = [" ".join(words) for words in commands(block) if runnable(words) is None]
    says = NOT_RUN in block.after.lower()
    assert says == bool(skipped), (
        f"{block}: commands not run: {skipped}; say after the block that they are {NOT_RUN}, and why"
        if skipped
        else f"{block}: every command runs, but the page says it is {NOT_RUN}"
    )


RUN_BLOCKS = [b for b in blocks("sh") if any(runnable(c) for c in commands(b))]


@pytest.mark.parametrize("block", RUN_BLOCKS, ids=str)
def test_every_command_runs_as_written(tmp_path: Path, block: Block) -> None:
    """The block's commands run in order in a fresh copy of the repository (a later command may
    read what an earlier one wrote, as on a user's machine)."""
    root = copy_of_repository(tmp_path)
    for words in commands(block):
        argv = runnable(words)
        if argv is None:
            continue
        out = run(argv, root)
        expected = VERDICTS.get(words[1], {0}) if Path(words[0]).name == "harness" else {0}
        assert out.returncode in expected, (
            f"{block}: {' '.join(words)}\n{out.stdout[-2000:]}{out.stderr[-2000:]}"
        )
        if words[1:2] == ["verify"]:
            assert "| endpoint |" in out.stdout and "**fail**" in out.stdout  # the two servers, as documented


@pytest.mark.parametrize("block", blocks("python"), ids=str)
def test_every_python_block_runs(tmp_path: Path, block: Block) -> None:
    """A script runs in a copy of the repository; a block of test functions passes under pytest
    there (with the harness's plugin, as installed)."""
    root = copy_of_repository(tmp_path)
    if block.text.startswith("import"):
        out = run([sys.executable, "-c", block.text], root)
        assert out.returncode == 0, out.stderr
        assert "sim-openai" in out.stdout
    else:
        assert block.text.startswith("def test_"), f"{block}: neither a script nor test functions"
        (root / "test_docs_example.py").write_text(block.text)
        out = run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_docs_example.py"], root
        )
        assert out.returncode == 0, out.stdout[-3000:]


@pytest.mark.parametrize("block", yaml_blocks("category"), ids=str)
def test_every_scenario_block_validates_as_written(tmp_path: Path, block: Block) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_text(block.text)
    assert harness.load_scenarios(path)


def test_the_declared_tools_scenario_runs_against_the_simulator(tmp_path: Path) -> None:
    """The inline-tools example is not only valid: recorded against the simulator and replayed, it
    scores 100 (its sequence tool fails once, then answers)."""
    (block,) = [b for b in yaml_blocks("category") if "name: lookup_order" in b.text]
    (tmp_path / "scenario.yaml").write_text(block.text)
    scenarios = harness.load_scenarios(tmp_path / "scenario.yaml")
    sim = harness.Target.build("sim-openai", format="openai-chat", model="sim-conformant", base_url="sim")
    for mode in ("record", "replay"):
        (record,) = harness.run(scenarios, [sim], RunConfig(mode=mode, cassettes=tmp_path / "c")).records  # type: ignore[arg-type]
        assert record.score == 100 and record.error is None, [c for c in record.checks if c.status != "pass"]
    assert [e.result.is_error for e in record.transcript.executions] == [False, True]


def test_the_tool_set_block_loads(tmp_path: Path) -> None:
    (block,) = yaml_blocks("toolset")
    (tmp_path / "billing.yaml").write_text(block.text)
    (tmp_path / "billing.py").write_text("def record_payment(arguments, state):\n    return {'ok': True}\n")
    toolset = harness.load_toolset(tmp_path / "billing.yaml")
    assert toolset.names == ["create_invoice", "record_payment"]


def test_every_yaml_and_json_block_parses() -> None:
    for block in blocks("yaml"):
        assert yaml.safe_load(block.text) is not None, block
    for block in blocks("json"):
        assert json.loads(block.text), block


def test_every_config_block_loads(tmp_path: Path) -> None:
    targets: set[str] = set()
    for index, block in enumerate(blocks("toml")):
        (tmp_path / f"{index}.toml").write_text(block.text)
        targets |= set(harness.load_config(tmp_path / f"{index}.toml").targets)
    assert {"my-groq", "gateway-small", "my-agent"} <= targets


def test_the_checks_page_names_every_check() -> None:
    page = (REPO / "docs" / "checks.md").read_text()
    assert [name for name in CHECKS.names() if f"`{name}`" not in page] == []


def test_the_readme_stays_short() -> None:
    assert len((REPO / "README.md").read_text().splitlines()) <= 200


def slug(heading: str) -> str:
    """The anchor Python-Markdown's toc extension (mkdocs) gives a heading."""
    text = re.sub(r"[^\w\s-]", "", heading).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


@pytest.mark.parametrize("page", ["README.md", "CONTRIBUTING.md"])
def test_the_links_of_the_top_level_pages_resolve(page: str) -> None:
    """mkdocs checks the links between docs pages; these two are read on the forge, outside it."""
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", (REPO / page).read_text()):
        if re.match(r"[a-z]+://", target):
            continue
        path, _, anchor = target.partition("#")
        if not (REPO / path).exists():
            broken.append(target)
        elif anchor:
            headings = re.findall(r"^#+ (.+)$", (REPO / path).read_text(), flags=re.M)
            if anchor not in {slug(h) for h in headings}:
                broken.append(target)
    assert broken == []


DOCUMENTS = [*PAGES, REPO / "CONTRIBUTING.md"]
FILE_NAME = re.compile(r"`((?:harness|tests|benchmarks|examples|scenarios)/[^`\s<>*]*)`")
DOTTED = re.compile(r"`(harness(?:\.\w+)+)(?![\w/])")


def resolves(dotted: str) -> bool:
    """Whether ``harness.a.b.c`` is a module, or an attribute of the longest module it starts with."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for name in parts[cut:]:
                value = getattr(value, name)
        except AttributeError:
            return False
        return True
    return False


@pytest.mark.parametrize("page", DOCUMENTS, ids=lambda page: page.name)
def test_the_files_and_modules_a_page_names_exist(page: Path) -> None:
    """A path in the repository (``harness/servers/sim/``, ``examples/agent.py:run``) exists, and a
    dotted name (``harness.agent.rechunk.sweep``) imports, so that moving a module shows here."""
    text = page.read_text()
    missing = [name for name in FILE_NAME.findall(text) if not (REPO / name.partition(":")[0]).exists()]
    missing += [name for name in DOTTED.findall(text) if not name.endswith(".toml") and not resolves(name)]
    assert missing == []
