"""One run configuration: ``harness.run`` takes a RunConfig, and the command line and the pytest
plugin build theirs from their options through one function (:func:`harness.runner.run_config`).
Every field of RunConfig is an option of both shells, or :data:`harness.runner.NOT_OPTIONS` says
why it is not; the shells' defaults are RunConfig's."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import click
import pytest

import harness
from harness.cli.run import record as record_command
from harness.cli.run import run as run_command
from harness.errors import ConfigError
from harness.pytest_plugin import run_options
from harness.runner import NOT_OPTIONS, RunConfig, Shard, run_config
from tests.helpers.cli import REPO

pytest_plugins = ["pytester"]

FIELDS = [f.name for f in fields(RunConfig)]


def cli_options(command: click.Command, *args: str) -> dict[str, object]:
    """The options ``command`` parses from ``args``, by name (what the command is called with)."""
    return dict(command.make_context(command.name or "", list(args)).params)


def test_no_field_is_left_out_without_a_reason_and_none_unknown() -> None:
    for shell, left_out in NOT_OPTIONS.items():
        assert set(left_out) <= set(FIELDS), (shell, sorted(set(left_out) - set(FIELDS)))
        assert all(reason.strip() for reason in left_out.values()), shell


def test_every_field_is_an_option_of_harness_run_or_said_why_not() -> None:
    options = cli_options(run_command)
    for name in FIELDS:
        assert (name in options) != (name in NOT_OPTIONS["cli"]), name
    record = cli_options(record_command)  # `harness record` fixes the mode; rechunk is replay's
    assert {n for n in FIELDS if n in options and n not in record} == {"mode", "rechunk"}


def test_every_field_is_an_option_of_the_pytest_plugin_or_said_why_not(pytestconfig: pytest.Config) -> None:
    for name in FIELDS:
        try:
            pytestconfig.getoption(f"harness_{name}")
        except ValueError:
            assert name in NOT_OPTIONS["pytest"], f"--harness-{name.replace('_', '-')} is missing"
        else:
            assert name not in NOT_OPTIONS["pytest"], f"--harness-{name.replace('_', '-')} exists"


def test_the_shells_defaults_are_run_config_s(pytestconfig: pytest.Config) -> None:
    assert run_config(cli_options(run_command)) == RunConfig()
    assert run_config(cli_options(record_command)) == RunConfig()
    assert run_config(run_options(pytestconfig)) == RunConfig()


def test_each_option_of_harness_run_sets_its_field() -> None:
    given = {
        "mode": ("--mode", "record"),
        "cassettes": ("--cassettes", "elsewhere"),
        "repeats": ("--repeat", "3"),
        "concurrency": ("--concurrency", "2"),
        "record_mode": ("--record-mode", "once"),
        "live_mcp": ("--live-mcp",),
        "processes": ("--processes", "4"),
        "rechunk": ("--rechunk", "5"),
        "shard": ("--shard", "2/3"),
    }
    assert sorted(given) == sorted(set(FIELDS) - set(NOT_OPTIONS["cli"]))  # a new option is tried here
    args = [arg for option in given.values() for arg in option]
    assert run_config(cli_options(run_command, *args)) == RunConfig(
        mode="record",
        cassettes=Path("elsewhere"),
        repeats=3,
        concurrency=2,
        record_mode="once",
        live_mcp=True,
        processes=4,
        rechunk=5,
        shard=Shard(2, 3),
    )
    with pytest.raises(ConfigError, match="expected K/N"):
        run_config(cli_options(run_command, "--shard", "3/2"))


def test_each_option_of_the_plugin_sets_its_field(pytester: pytest.Pytester) -> None:
    config = pytester.parseconfig(
        "--harness-mode",
        "live",
        "--harness-cassettes",
        "c",
        "--harness-record-mode",
        "once",
        "--harness-live-mcp",
    )
    assert sorted(run_options(config)) == sorted(set(FIELDS) - set(NOT_OPTIONS["pytest"]))
    expected = RunConfig(mode="live", cassettes=Path("c"), record_mode="once", live_mcp=True)
    assert run_config(run_options(config)) == expected


def test_run_config_takes_what_a_shell_gives_and_leaves_the_rest() -> None:
    base = RunConfig(mode="live", repeats=2)
    built = run_config({"cassettes": "c", "results": "r.jsonl", "skip": [("t", "s", 0)], "out": "x"}, base)
    assert built == RunConfig(
        mode="live", repeats=2, cassettes=Path("c"), results=Path("r.jsonl"), skip=frozenset({("t", "s", 0)})
    )
    assert run_config({"mode": None, "shard": None}, base) == base  # None: left as it is


def test_harness_run_takes_a_run_config_and_its_old_keywords_with_a_warning(tmp_path: Path) -> None:
    (paris,) = harness.load_scenarios(REPO / "scenarios", select=["weather.single.paris"])
    config = RunConfig(cassettes=REPO / "cassettes", results=tmp_path / "new.jsonl")
    new = harness.run([paris], ["sim-openai"], config)
    with pytest.warns(DeprecationWarning, match=r"pass a RunConfig"):
        old = harness.run(
            [paris], ["sim-openai"], cassettes=str(REPO / "cassettes"), results=tmp_path / "old.jsonl"
        )
    assert old.results == tmp_path / "old.jsonl" and new.results == tmp_path / "new.jsonl"
    assert [r.checks for r in old.records] == [r.checks for r in new.records]
    assert new.scores == old.scores == {"sim-openai": 100.0}
    with pytest.raises(TypeError, match=r"\['mdoe'\]"):
        harness.run([paris], ["sim-openai"], mdoe="live")


def test_a_negative_scenario_does_not_apply_to_a_prompted_target(tmp_path: Path) -> None:
    """A prompted target sends tools and history as text: nothing there for an endpoint to refuse."""
    from harness.runner.plan import applies
    from harness.scenarios import load
    from harness.targets import Target

    suite = {s.id: s for s in load([Path(__file__).resolve().parents[2] / "scenarios"])}
    negative = suite["negative.result_without_call"]
    native = Target.build("n", format="openai-chat", model="m", base_url="sim")
    prompted = Target.build("p", format="openai-chat", model="m", base_url="sim", protocol="hermes")
    assert applies(native, negative) and not applies(prompted, negative)
    assert applies(prompted, suite["weather.single.paris"])
