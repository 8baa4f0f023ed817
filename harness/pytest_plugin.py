"""The harness as a pytest plugin: scenario files as test items, one per target x scenario.

Installed with the package (a ``pytest11`` entry point) and dormant until asked:
``pytest --harness-targets sim-openai,sim-anthropic`` collects the scenario files
under ``--harness-scenarios`` (default ``scenarios``; without the option, a YAML file elsewhere
is collected only when it looks like a scenario: top-level ``id`` and ``category``; cassettes,
``docker-compose.yml`` or ``mkdocs.yml`` never are) as items with node ids like
``scenarios/single/weather_paris.yaml::weather.single.paris[sim-openai]``, each
marked with its category and its target so ``-m parallel`` and ``-k sim-openai``
select as one expects. A failing item shows the failed checks, their findings and
the wire evidence, not a traceback: an ``AssertionError`` (Allure: failed) whose message is
that text; a run the harness could not test (drift, no response) is an error of the test
(Allure: broken) with its cause. With allure-pytest active
(``--alluredir``), each item carries its category, scenario and target as Allure
labels and attaches the request and response bodies, the transcript and the
findings, and so do the tests using the ``harness`` fixture. Works under pytest-xdist (each
worker opens its own endpoints).

The ``harness`` fixture runs scenarios from tests users write in Python::

    def test_refunds_on_my_gateway(harness):
        record = harness.run("orders.sequential.refund", "my-gateway-small")
        assert record.passed, harness.explain(record)
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # the harness itself is imported only when the plugin is asked for
    from harness.records import RunRecord
    from harness.scenarios import Scenario
    from harness.targets import Target

MODES = ("replay", "record", "live")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("harness", "tool-calling conformance scenarios (toolcall harness)")
    group.addoption(
        "--harness-targets",
        action="append",
        default=[],
        help="Targets to run the scenario files against (names or globs, comma-separated or repeated); "
        "without it the plugin collects nothing.",
    )
    group.addoption(
        "--harness-mode", choices=MODES, default="replay", help="replay (default), record or live."
    )
    group.addoption(
        "--harness-record-mode",
        choices=("once", "new_episodes", "all"),
        default="all",
        help="vcrpy record mode with --harness-mode record.",
    )
    group.addoption("--harness-min-score", type=float, default=None, help="An item fails below this score.")
    group.addoption(
        "--harness-scenarios",
        action="append",
        default=[],
        help="Scenario folders or files (comma-separated or repeated; default: scenarios). Only the "
        "scenario files under them are collected; without the option, YAML files elsewhere are collected "
        "only when they look like scenarios.",
    )
    group.addoption("--harness-cassettes", default="cassettes", help="Cassette folder (default: cassettes).")
    group.addoption(
        "--harness-live-mcp",
        action="store_true",
        help="Start the scenarios' MCP servers even in replay (their results must match the recording).",
    )
    group.addoption(
        "--harness-config", default=None, help="Targets file (default ./harness.toml if present)."
    )
    group.addoption(
        "--harness-history",
        default=None,
        help="Keep the session's runs in this history, an SQLite file or a postgresql:// URL (default: "
        "$HARNESS_HISTORY, else harness.toml's [history] url, else reports/history.sqlite); one run per "
        "session (under xdist too: the workers' runs are kept by the controller).",
    )
    group.addoption("--harness-no-history", action="store_true", help="Keep no history of the session.")


def run_options(config: pytest.Config) -> dict[str, Any]:
    """The plugin's options that are :class:`~harness.runner.RunConfig` fields, by field
    (``--harness-record-mode`` is ``record_mode``); the fields the plugin leaves out are in
    :data:`harness.runner.NOT_OPTIONS`."""
    from dataclasses import fields

    from harness.runner import NOT_OPTIONS, RunConfig

    left_out = NOT_OPTIONS["pytest"]
    return {
        f.name: config.getoption(f"harness_{f.name}") for f in fields(RunConfig) if f.name not in left_out
    }


def _targets(config: pytest.Config) -> list[str]:
    return [
        name.strip()
        for value in config.getoption("harness_targets")
        for name in value.split(",")
        if name.strip()
    ]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "harness: a toolcall harness scenario run against a target")
    config.stash[HISTORY] = []
    if hasattr(config, "workerinput"):  # an xdist worker
        config.stash[PENDING] = []
    elif config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_WorkersRuns(config), "harness-workers-runs")
    if not _targets(config):
        return
    from harness.targets import pick
    from harness.targets_file import load_targets

    known = load_targets(config.getoption("harness_config"))
    chosen = pick(known, _targets(config))
    config.stash[SESSION] = HarnessSession(config, chosen)
    for target in chosen:
        config.addinivalue_line("markers", f"{target.name}: scenario runs against the {target.name} target")
    from harness.scenarios import scenario_schema

    for category in scenario_schema()["properties"]["category"]["enum"]:
        config.addinivalue_line("markers", f"{category}: scenarios of the {category} category")
    if config.args_source == pytest.Config.ArgsSource.TESTPATHS:  # plain `pytest --harness-targets ...`
        config.args = [str(root) for root in config.stash[SESSION].roots]


class HarnessSession:
    """The run settings and open endpoints of one pytest session (one per xdist worker)."""

    def __init__(self, config: pytest.Config, targets: list[Target]):
        from harness.runner import run_config

        self.targets = targets
        self.run_config = run_config(run_options(config))
        self.min_score: float | None = config.getoption("harness_min_score")
        here = config.invocation_params.dir
        named = [
            n.strip()
            for value in config.getoption("harness_scenarios")
            for n in value.split(",")
            if n.strip()
        ]
        self.narrowed = bool(named)  # --harness-scenarios given: nothing outside it is collected
        self.roots = [(here / name).resolve() for name in named or ["scenarios"]]
        self.cassettes = (here / self.run_config.cassettes).resolve()
        self.scenarios: dict[str, Scenario] = {}
        self._endpoints: dict[str, Any] | None = None
        self._stack = contextlib.ExitStack()

    def endpoint(self, target: Target) -> Any:
        """The target's endpoint, opened on first use for every target at once (the simulator is
        started with every collected scenario)."""
        if self._endpoints is None:
            from harness.servers.endpoints import open_endpoints

            suite = list(self.scenarios.values())
            self._endpoints = self._stack.enter_context(
                open_endpoints(self.targets, suite, self.run_config.mode)
            )
        return self._endpoints[target.name]

    def collects(self, path: Path) -> bool:
        """Whether a YAML file is a scenario file to collect: under a scenario folder (never a
        tool set's), or, when ``--harness-scenarios`` did not narrow, one that looks like a
        scenario anywhere but in the cassettes."""
        path = path.resolve()
        for root in self.roots:
            if path == root or root in path.parents:
                return "toolsets" not in path.relative_to(root).parts
        return not self.narrowed and self.cassettes not in path.parents and looks_like_scenario(path)

    def run(self, scenario: Scenario, target: Target) -> RunRecord:
        from harness.runner import run_one

        self.scenarios.setdefault(scenario.id, scenario)
        return run_one(target, scenario, 0, self.endpoint(target), self.run_config)

    def close(self) -> None:
        self._stack.close()


SESSION = pytest.StashKey[HarnessSession]()
HISTORY = pytest.StashKey[list[Any]]()
"""The session's runs, for the history: a :class:`harness.history.facts.Collector` once a run ends."""
PENDING = pytest.StashKey[list[str]]()
"""In an xdist worker: the results lines of the runs ended since the last test report, sent with
it to the controller, which keeps the session's one run in the history."""


def keep(config: pytest.Config, record: RunRecord) -> None:
    """Note a finished run for the session's history (nothing when it is off); an xdist worker
    passes it to the controller with its test's report."""
    if config.getoption("harness_no_history"):
        return
    pending = config.stash.get(PENDING, None)
    if pending is not None:
        from harness.records import record_line

        pending.append(record_line(record).decode())
        return
    kept = config.stash.get(HISTORY, None)
    if kept is None:
        return
    if not kept:
        from harness.history.facts import Collector

        kept.append(Collector())
    kept[0].add(record)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """In an xdist worker, the runs ended during a test phase ride on its report
    (``harness_history``: a report's attributes reach the controller)."""
    report = yield
    pending = item.config.stash.get(PENDING, None)
    if pending:
        report.harness_history = list(pending)
        pending.clear()
    return report


class _WorkersRuns:
    """In the xdist controller: each worker's runs, read off its test reports, kept as the
    session's (:func:`keep`)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        lines = getattr(report, "harness_history", None)
        if lines:
            from harness.records import decode_record

            for line in lines:
                keep(self.config, decode_record(line.encode()))


def pytest_unconfigure(config: pytest.Config) -> None:
    session = config.stash.get(SESSION, None)
    if session is not None:
        session.close()
    kept = config.stash.get(HISTORY, None)
    if kept:  # the session's runs, one run of the history (``harness.api.remember``'s path)
        from harness._version import __version__
        from harness.history import DEFAULT, remember, where
        from harness.targets_file import load_config

        configured = load_config(config.getoption("harness_config")).history
        history = where(config.getoption("harness_history"), default=configured or DEFAULT)
        if history is not None and "://" not in history:
            history = str(config.invocation_params.dir / history)
        remember(kept[0].facts("pytest", __version__), history)


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Collector | None:
    session = parent.config.stash.get(SESSION, None)
    if session is None or file_path.suffix not in (".yaml", ".yml") or not session.collects(file_path):
        return None
    return ScenarioFile.from_parent(parent, path=file_path)


_TOP_LEVEL = re.compile(r"^(?:- )?(id|category)[ \t]*:", re.MULTILINE)
SNIFF_BYTES = 64 * 1024


def looks_like_scenario(path: Path) -> bool:
    """A YAML file whose first :data:`SNIFF_BYTES` hold the top-level keys every scenario has,
    ``id`` and ``category`` (of a mapping, or of the first item of a list)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(SNIFF_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return False
    return {"id", "category"} <= {match.group(1) for match in _TOP_LEVEL.finditer(head)}


class ScenarioFile(pytest.File):
    """A scenario file: one item per scenario in it and per chosen target."""

    def collect(self) -> Iterator[pytest.Item]:
        from harness.analysis.gate import xfail_reason
        from harness.runner.plan import applies
        from harness.scenarios import load_file

        session = self.config.stash[SESSION]
        for scenario in load_file(self.path):
            session.scenarios[scenario.id] = scenario
            for target in session.targets:
                item = ScenarioItem.from_parent(
                    self, name=f"{scenario.id}[{target.name}]", scenario=scenario, target=target
                )
                item.add_marker("harness")
                item.add_marker(scenario.category)
                item.add_marker(target.name)
                expected = xfail_reason(target.xfail, scenario.id)
                if expected is not None:  # the target's xfail, as `harness run`'s gate reads it
                    item.add_marker(pytest.mark.xfail(reason=expected, strict=target.xfail_strict))
                if not applies(target, scenario):
                    reason = f"{target.name} sends tools and history as text: no tool structure to refuse"
                    item.add_marker(pytest.mark.skip(reason=reason))
                yield item


class HarnessFailure(AssertionError):
    """A scenario run that failed its checks or the score floor: a failure of the test (Allure:
    failed), its message the failed checks with their findings and wire evidence."""

    def __init__(self, record: RunRecord, why: str):
        super().__init__(explain(record, why))
        self.record = record


class HarnessRunError(Exception):
    """A scenario run the harness could not test (a drifted or missing cassette, no response): an
    error of the test (Allure: broken), its message the cause."""

    def __init__(self, record: RunRecord, why: str):
        super().__init__(explain(record, why))
        self.record = record


class ScenarioItem(pytest.Item):
    """One scenario against one target."""

    def __init__(self, *, scenario: Scenario, target: Target, **kwargs: Any):
        super().__init__(**kwargs)
        self.scenario, self.target = scenario, target

    def runtest(self) -> None:
        session = self.config.stash[SESSION]
        record = session.run(self.scenario, self.target)
        keep(self.config, record)
        self.user_properties.append(("score", record.score))
        _allure(self.config, record)
        if record.error is not None:
            raise HarnessRunError(record, f"could not be tested: {record.error.kind} ({record.error.cause})")
        if not record.passed:
            failed = [c.id for c in record.checks if c.status == "fail"]
            raise HarnessFailure(record, f"failed checks: {', '.join(failed)}")
        if session.min_score is not None and (record.score or 0) < session.min_score:
            raise HarnessFailure(
                record, f"score {record.score} below --harness-min-score {session.min_score}"
            )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, HarnessFailure | HarnessRunError):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        # a line (the file's first): pytest's report of a skipped item needs one
        return self.path, 0, f"{self.scenario.id} on {self.target.name}"


def explain(record: RunRecord, headline: str = "") -> str:
    """A failed run in words: the failed checks with their findings and the wire evidence of the
    turns they point at (or the run's error, with the drift diff). Control characters and lone
    surrogates a provider sent are written as escapes: pytest prints this to the terminal."""
    lines = [
        f"{record.scenario} on {record.target.name}: score {record.score}"
        + (f" ({headline})" if headline else "")
    ]
    if record.error is not None:
        lines += [f"  {record.error.kind}: {record.error.message}"]
    turns: set[int] = set()
    for check in record.checks:
        if check.status not in ("fail", "warn"):
            continue
        lines.append(f"  {check.id}: {check.status}")
        for finding in check.findings:
            if finding.passed:
                continue
            turn = f" (turn {finding.turn_index})" if finding.turn_index is not None else ""
            lines.append(f"    - [{finding.severity}]{turn} {finding.detail}")
            if finding.evidence and isinstance(finding.evidence.get("traceback"), str):
                lines += [f"      {line}" for line in finding.evidence["traceback"].rstrip().splitlines()]
            if finding.turn_index is not None and finding.severity != "info":
                turns.add(finding.turn_index)
    for exchange in record.transcript.exchanges:
        if exchange.turn in turns:
            body = json.dumps(exchange.request.body, ensure_ascii=False)[:1500]
            response = exchange.response.body[:1500] if exchange.response else "(no response)"
            status = exchange.response.status if exchange.response else "-"
            lines += [
                f"  turn {exchange.turn}: {exchange.request.method} {exchange.request.url} -> {status}",
                f"    request:  {body}",
                f"    response: {response}",
            ]
    from harness.reports.safe import visible

    return visible("\n".join(lines))


def _allure(config: pytest.Config, record: RunRecord, *, item: bool = True) -> None:
    """Allure attachments of a run for the running test (when allure-pytest is active): the
    request and response bodies, the transcript and the findings. A scenario item also gets its
    labels; a test using the ``harness`` fixture may run several scenarios, so there each
    attachment's name starts with the run's ``scenario[target]``."""
    if not config.pluginmanager.hasplugin("allure_pytest") or not config.getoption("allure_report_dir", None):
        return
    import allure

    from harness.records import encode, to_builtins

    if item:
        allure.dynamic.label("category", record.category)
        allure.dynamic.label("target", record.target.name)
        allure.dynamic.feature(record.category)
        allure.dynamic.story(record.scenario)
        allure.dynamic.tag(record.target.name, record.category, record.target.mode)
        allure.dynamic.parameter("target", record.target.name)
    prefix = "" if item else f"{record.scenario}[{record.target.name}] "
    for exchange in record.transcript.exchanges:
        allure.attach(
            json.dumps(exchange.request.body, indent=2, ensure_ascii=False),
            name=f"{prefix}turn {exchange.turn} request",
            attachment_type=allure.attachment_type.JSON,
        )
        if exchange.response is not None:
            allure.attach(
                exchange.response.body,
                name=f"{prefix}turn {exchange.turn} response (HTTP {exchange.response.status})",
                attachment_type=allure.attachment_type.TEXT,
            )
    allure.attach(
        encode(record.transcript).decode(),
        name=f"{prefix}transcript",
        attachment_type=allure.attachment_type.JSON,
    )
    findings = [to_builtins(f) for f in record.findings() if not f.passed]
    allure.attach(
        json.dumps(findings, indent=2, ensure_ascii=False),
        name=f"{prefix}findings",
        attachment_type=allure.attachment_type.JSON,
    )


class HarnessFixture:
    """What the ``harness`` fixture gives a test: run a scenario against a target, explain a record."""

    def __init__(self, config: pytest.Config):
        self._config = config
        self._session: HarnessSession | None = config.stash.get(SESSION, None)

    def run(
        self,
        scenario: str | Scenario,
        target: str | Target,
        *,
        mode: str | None = None,
        scenarios: str | Path = "scenarios",
        cassettes: str | Path | None = None,
    ) -> RunRecord:
        """Run one scenario (an id under ``scenarios``, or a loaded one) against one target (a name
        or a :class:`Target`); the mode and cassettes (and the rest of the run's configuration)
        default to the ``--harness-*`` options."""
        from harness import api
        from harness.runner import run_config
        from harness.targets import pick
        from harness.targets_file import load_targets

        if isinstance(scenario, str):
            found = [s for s in api.load_scenarios(scenarios) if s.id == scenario]
            if not found:
                raise LookupError(f"no scenario {scenario!r} under {scenarios}")
            scenario = found[0]
        if isinstance(target, str):
            (target,) = pick(load_targets(self._config.getoption("harness_config")), [target])
        options = run_config(run_options(self._config))
        settings = run_config({"mode": mode, "cassettes": cassettes}, options)
        result = api.run([scenario], [target], settings, history=False)  # the session's run keeps it
        (record,) = result.records
        keep(self._config, record)
        _allure(self._config, record, item=False)
        return record

    @staticmethod
    def explain(record: RunRecord) -> str:
        """The failed checks, findings and wire evidence of a record, for an assertion message."""
        return explain(record)


@pytest.fixture
def harness(pytestconfig: pytest.Config) -> HarnessFixture:
    """Run toolcall-harness scenarios from a Python test and assert on the records."""
    return HarnessFixture(pytestconfig)
