"""``harness init``: a project to start from, for a user with an agent and no ``harness.toml``.

It writes a ``harness.toml`` with one target for the user's provider (a bundled profile) and its
twin on the reference simulator, a scenario folder with one scenario per main category over one
declared tool set, and a GitHub Actions workflow that replays the cassettes and gates on the
baseline; and it says the next three commands, which run offline against the simulator. It
never overwrites a file: when any it would write exists, it writes nothing and names them all.

Example::

    from harness.scaffold import plan, write
    files = plan("openai")
    write(files, Path("."))
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from harness._version import __version__
from harness.errors import ConfigError
from harness.providers.profiles import Profile, get_profile
from harness.registry import PROFILES
from harness.targets_file import bundled_targets

SCENARIOS = ("single", "parallel", "sequential", "multi_turn", "error", "irrelevance", "tool_choice")
"""The main categories, one scenario each (``scenarios/<category>.yaml``)."""

WORKFLOW = Path(".github/workflows/harness.yml")
TOOLSET = Path("scenarios/toolsets/orders.yaml")
PATHS = (Path("harness.toml"), TOOLSET, *(Path(f"scenarios/{c}.yaml") for c in SCENARIOS), WORKFLOW)
"""Every file ``harness init`` writes, relative to the project folder."""


@dataclass(frozen=True)
class Project:
    """What ``harness init`` writes (path relative to the project folder -> text), the names of
    its two targets, and the commands to run next."""

    files: dict[Path, str]
    target: str
    sim_target: str

    def next_commands(self) -> list[str]:
        """The next three commands: record against the simulator, replay, write the baseline."""
        return [
            f"harness record -t {self.sim_target}",
            "harness run",
            "harness baseline",
        ]


def profiles() -> list[str]:
    """The profiles ``harness init`` can start from (every registered one), sorted."""
    return sorted(PROFILES.names())


def default_model(profile: str) -> str | None:
    """The model of the first bundled target (by name) on ``profile`` that is not served on this
    machine (the simulator, a local model), if there is one."""
    known = bundled_targets()
    for name in sorted(known):
        target = known[name]
        if target.profile.name == profile and not (target.simulated or target.local_model):
            return target.model
    return None


def plan(profile_name: str, model: str) -> Project:
    """The files of a new project for ``profile_name`` (a registered profile) and ``model``."""
    if profile_name not in PROFILES.names():
        raise ConfigError(f"--profile: unknown profile {profile_name!r}; known: {', '.join(profiles())}")
    if not model.strip():
        raise ConfigError("--model: give the model to test, e.g. --model gpt-4o-mini")
    profile = get_profile(profile_name)
    target = f"my-{profile.name}"
    sim_target = f"sim-{target}"
    files = {Path("harness.toml"): _config(profile, model, target, sim_target)}
    template = resources.files("harness.scaffold") / "template"
    for path in PATHS[1:-1]:  # the tool set and the scenarios, as they are
        files[path] = (template / path.as_posix()).read_text(encoding="utf-8")
    workflow = (template / "workflow/harness.yml").read_text(encoding="utf-8")
    files[WORKFLOW] = workflow.replace("@VERSION@", __version__)
    return Project(files, target, sim_target)


def _config(profile: Profile, model: str, target: str, sim_target: str) -> str:
    key = (
        f"the key is read from ${profile.api_key_env}"
        if profile.api_key_env
        else "no key (a local server unless you set api_key_env)"
    )
    lines = [
        f"# Written by `harness init --profile {profile.name}`: your targets (docs/targets.md).",
        "",
        f"# {profile.description or profile.name}: {profile.format}; {key}.",
        f"# Record it once with the key set: harness record -t {target}",
        f"[targets.{target}]",
        f"profile = {json.dumps(profile.name)}",
        f"model = {json.dumps(model)}",
        "temperature = 0.0",
    ]
    if not profile.base_url:
        lines.append('base_url = "https://CHANGE-ME.example.com"  # this profile has no base URL of its own')
    lines += [
        "",
        f"# The same wire format ({profile.format}) served by the harness's reference simulator on",
        "# 127.0.0.1: no key, no network. Its scores show that the harness, your scenarios and CI",
        "# work, never how a model performs.",
        f"[targets.{sim_target}]",
        f"format = {json.dumps(profile.format)}",
        f"model = {json.dumps(model)}",
        'base_url = "sim"',
        "",
    ]
    return "\n".join(lines)


def refuse_existing(root: Path) -> None:
    """A :class:`ConfigError` naming each file ``harness init`` would write that is already under
    ``root`` (any kind of file, a dangling link too); nothing when there is none."""
    found = [root / path for path in PATHS if (root / path).exists() or (root / path).is_symlink()]
    if found:
        names = ", ".join(map(str, found))
        raise ConfigError(f"harness init writes nothing over existing files: {names}")


def write(project: Project, root: Path) -> list[Path]:
    """Write ``project`` under ``root``; nothing at all when any of its files exists
    (:func:`refuse_existing`). Returns the paths written."""
    refuse_existing(root)
    written = []
    for path, text in project.files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        with open(root / path, "x", encoding="utf-8") as handle:  # "x": never over a file made meanwhile
            handle.write(text)
        written.append(path)
    return written
