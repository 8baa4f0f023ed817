"""Fixture repositories for MCP scenarios, made fresh for each run and identical every time.

Fixed author, committer and dates make the commit hashes the same on every
machine, so a live run of a git scenario sees exactly what was recorded.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from harness.errors import ConfigError

IDENTITY = {
    "GIT_AUTHOR_NAME": "Fixture Author",
    "GIT_AUTHOR_EMAIL": "fixture@example.invalid",
    "GIT_COMMITTER_NAME": "Fixture Author",
    "GIT_COMMITTER_EMAIL": "fixture@example.invalid",
}
COMMITS = (
    ("2026-01-05T10:00:00+00:00", {"README.md": "# Inventory service\n"}, "Initial commit"),
    ("2026-01-06T11:30:00+00:00", {"inventory.py": "MAX_ITEMS = 100\n"}, "Add inventory limits"),
    ("2026-01-07T09:15:00+00:00", {"inventory.py": "MAX_ITEMS = 250\n"}, "Raise MAX_ITEMS to 250"),
)


def git_repo(path: Path) -> Path:
    """A small git repository with three commits (the last: 'Raise MAX_ITEMS to 250')."""
    path.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **IDENTITY, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}

    def git(*args: str, date: str | None = None) -> None:
        extra = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date} if date else {}
        subprocess.run(["git", *args], cwd=path, env={**env, **extra}, check=True, capture_output=True)

    try:
        git("init", "-q", "-b", "main")
        for date, files, message in COMMITS:
            for name, text in files.items():
                (path / name).write_text(text)
            git("add", "-A")
            git("commit", "-q", "-m", message, date=date)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise ConfigError(f"could not create the git fixture repository in {path}: {exc}") from exc
    return path


FIXTURES = {"git-repo": git_repo}
