"""The library calls behind the ``harness`` command (and the pytest plugin): load, run, report.

The command line only parses options, calls these and prints.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from harness.endpoints import open_endpoints
from harness.errors import ConfigError
from harness.recording import Mode
from harness.records import RunRecord
from harness.runner import OnResult, RunConfig
from harness.runner import run as run_with_endpoints
from harness.scenarios import Scenario
from harness.targets import Target, pick


def select_targets(
    known: dict[str, Target], names: Sequence[str], mode: Mode, cassettes: Path
) -> list[Target]:
    """The targets named (globs allowed), or by default: in replay every target with
    recordings, when recording the simulated ones; a live run must name its targets."""
    if names:
        return pick(known, list(names))
    if mode == "replay":
        chosen = [t for name, t in sorted(known.items()) if (cassettes / name).is_dir()]
        if not chosen:
            raise ConfigError(f"no recorded target under {cassettes}/; name targets with --target")
        return chosen
    if mode == "record":
        return [t for _, t in sorted(known.items()) if t.simulated]
    raise ConfigError("a live run needs at least one --target")


def run(
    targets: Sequence[Target],
    scenarios: Sequence[Scenario],
    config: RunConfig | None = None,
    on_result: OnResult | None = None,
) -> list[RunRecord]:
    """Run ``scenarios`` against ``targets``: opens their endpoints (starting the simulator or a
    local model server when a live or record run needs one), runs, and always stops them."""
    config = config or RunConfig()
    with open_endpoints(targets, scenarios, config.mode) as endpoints:
        return run_with_endpoints(targets, scenarios, config, endpoints, on_result)
