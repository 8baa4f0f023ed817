"""The README works as written: its scenario, tool set and config blocks load, its Python runs,
and every offline ``harness`` command in its shell blocks succeeds (in a copy of the repository)."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.api import run
from harness.scenarios import load_file
from harness.targets import Target
from harness.targets_file import load_config
from harness.tools.toolsets import load_toolset
from tests.helpers.cli import REPO

README = (REPO / "README.md").read_text()
BLOCKS = re.findall(r"^```(\w+)\n(.*?)^```", README, flags=re.S | re.M)
OFFLINE = {"run", "validate", "list", "report", "audit", "baseline", "compare", "verify", "merge"}
VERDICTS = {"verify": {0, 6, 7}}
"""Commands whose documented exit codes carry a verdict, not a failure of the command."""


def blocks(language: str) -> list[str]:
    return [text for lang, text in BLOCKS if lang == language]


def yaml_blocks(key: str) -> list[str]:
    return [text for text in blocks("yaml") if key in (yaml.safe_load(text) or {})]


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The parts of the repository the README's commands read, in a scratch folder."""
    root = tmp_path_factory.mktemp("readme")
    for name in ("scenarios", "cassettes", "examples"):
        shutil.copytree(REPO / name, root / name)
    return root


def test_the_readme_has_the_blocks_this_test_reads() -> None:
    assert len(yaml_blocks("category")) >= 2 and yaml_blocks("toolset") and blocks("python")


@pytest.mark.parametrize("text", yaml_blocks("category"))
def test_every_scenario_block_validates_as_written(tmp_path: Path, text: str) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    assert load_file(path)


def test_the_declared_tools_scenario_runs_against_the_simulator(tmp_path: Path) -> None:
    """The inline-tools example is not only valid: recorded against the simulator and replayed, it
    scores 100 (its sequence tool fails once, then answers)."""
    (text,) = [t for t in yaml_blocks("category") if "name: lookup_order" in t]
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    scenario = load_file(path)
    sim = Target.build("sim-openai", format="openai-chat", model="sim-conformant", base_url="sim")
    for mode in ("record", "replay"):
        (record,) = run(scenario, [sim], mode=mode, cassettes=tmp_path / "c").records  # type: ignore[arg-type]
        assert record.score == 100 and record.error is None, [c for c in record.checks if c.status != "pass"]
    assert [e.result.is_error for e in record.transcript.executions] == [False, True]


def test_the_tool_set_block_loads(tmp_path: Path) -> None:
    (text,) = yaml_blocks("toolset")
    (tmp_path / "billing.yaml").write_text(text)
    (tmp_path / "billing.py").write_text("def record_payment(arguments, state):\n    return {'ok': True}\n")
    toolset = load_toolset(tmp_path / "billing.yaml")
    assert toolset.names == ["create_invoice", "record_payment"]


def test_every_config_block_loads(tmp_path: Path) -> None:
    targets: set[str] = set()
    for index, text in enumerate(blocks("toml")):
        (tmp_path / f"{index}.toml").write_text(text)
        config = load_config(tmp_path / f"{index}.toml")
        targets |= set(config.targets)
    assert {"my-groq", "gateway-small", "my-agent"} <= targets


def test_the_python_examples_run(copy: Path) -> None:
    """Scripts run (in a copy of the repository); blocks that only define test functions compile."""
    for text in blocks("python"):
        if not text.startswith("import"):
            compile(text, "README.md", "exec")
            continue
        out = subprocess.run(
            [sys.executable, "-c", text], cwd=copy, capture_output=True, text=True, timeout=300
        )
        assert out.returncode == 0, out.stderr
        assert "sim-openai" in out.stdout


def offline_commands() -> list[list[str]]:
    """The ``harness`` commands of the shell blocks that need no network, key or model."""
    found = []
    for text in blocks("sh"):
        for line in text.splitlines():
            for part in line.split("&&"):
                words = shlex.split(part.split(" #")[0])
                if not words or Path(words[0]).name != "harness":
                    continue
                args = words[1:]
                if args and args[0] in OFFLINE and "--live" not in args and "--mode" not in args:
                    found.append(args)
    return found


def test_the_readme_names_offline_commands() -> None:
    assert ["run"] in offline_commands()


@pytest.mark.parametrize("args", offline_commands(), ids=" ".join)
def test_every_offline_command_succeeds(copy: Path, args: list[str]) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "harness", *args], cwd=copy, capture_output=True, text=True, timeout=300
    )
    assert out.returncode in VERDICTS.get(args[0], {0}), out.stderr[-2000:]
    if args[0] == "verify":
        assert "| endpoint |" in out.stdout and "**fail**" in out.stdout  # the two servers, as documented
