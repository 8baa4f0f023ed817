"""The real recorded traffic in tests/data/realworld: every file accounted for, and nothing outside.

Each file under ``cases/`` and ``raw/`` must be covered by a row of ``MANIFEST.tsv``
naming its source repository, path, commit and licence, and each source repository
must have its licence note in ``LICENSES/`` and a line in ``PROVENANCE.md``. The
project must not read or mention a directory outside the repository for this data.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.realworld import REALWORLD, all_cases

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = REALWORLD / "MANIFEST.tsv"
LICENCES = {"MIT", "Apache-2.0", "unknown"}
# Split so that this file does not contain what it forbids.
FORBIDDEN = ("../" + "shared", "HARNESS_" + "REALWORLD")
SEARCHED = (
    "harness",
    "tests",
    "benchmarks",
    "docs",
    "README.md",
    "CONTRIBUTING.md",
    "mkdocs.yml",
    "pyproject.toml",
    ".ci",
)


def manifest() -> list[dict[str, str]]:
    with MANIFEST.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def files_under(name: str) -> list[Path]:
    return sorted(p for p in (REALWORLD / name).rglob("*") if p.is_file())


def licence_note(repo: str) -> Path:
    return REALWORLD / "LICENSES" / (repo.replace("/", "__") + ".txt")


ROWS = manifest()
ROW_OF_CASE = {row["case_file"]: row for row in ROWS}


def test_the_data_lives_in_the_repository() -> None:
    assert REALWORLD == ROOT / "tests" / "data" / "realworld"
    assert len(files_under("cases")) >= 51 and len(files_under("raw")) >= 29
    assert (REALWORLD / "README.md").is_file() and (REALWORLD / "PROVENANCE.md").is_file()


@pytest.mark.parametrize("row", ROWS, ids=[row["case_file"] for row in ROWS])
def test_manifest_row_names_repo_path_commit_and_licence(row: dict[str, str]) -> None:
    assert re.fullmatch(r"[\w.-]+/[\w.-]+", row["repo"]), row["repo"]
    assert row["path"] and not row["path"].startswith("/"), row["path"]
    assert re.fullmatch(r"[0-9a-f]{40}", row["commit"]), row["commit"]
    assert row["license"] in LICENCES, row["license"]
    assert (REALWORLD / row["case_file"]).is_file(), f"the manifest names a missing file {row['case_file']}"


def test_manifest_has_one_row_per_case_file() -> None:
    assert len(ROW_OF_CASE) == len(ROWS), "a case file has more than one row"
    on_disk = {p.relative_to(REALWORLD).as_posix() for p in files_under("cases")}
    assert on_disk == set(ROW_OF_CASE), f"without a row: {on_disk - set(ROW_OF_CASE)}"


@pytest.mark.parametrize(
    "path", files_under("cases"), ids=lambda p: p.relative_to(REALWORLD / "cases").as_posix()
)
def test_case_source_matches_its_manifest_row(path: Path) -> None:
    case: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    row = ROW_OF_CASE[path.relative_to(REALWORLD).as_posix()]
    source = case["source"]
    assert (source["repo"], source["path"], source["commit"], source["license"]) == (
        row["repo"],
        row["path"],
        row["commit"],
        row["license"],
    )


def raw_names(row: dict[str, str]) -> set[str]:
    """The names a recording's byte-exact copy may have under raw/<dir>/: <repo name>__<file name>,
    or (corpus v2, where one repository has files of the same name in several test folders)
    <repo name>__<folder>__<file name>; the repository may go by the short name its cases use."""
    *_, folder, name = ["", *row["path"].split("/")]
    prefixes = {row["repo"].split("/")[1], Path(row["case_file"]).name.split("__")[0]}  # otel-contrib
    return {f"{p}__{name}" for p in prefixes} | {f"{p}__{folder}__{name}" for p in prefixes}


@pytest.mark.parametrize(
    "path", files_under("raw"), ids=lambda p: p.relative_to(REALWORLD / "raw").as_posix()
)
def test_raw_file_is_covered_by_a_manifest_row(path: Path) -> None:
    # raw/<dir>/<name>, or raw/<dir>/<name>/<slice> for a slice of a larger recording
    name = path.relative_to(REALWORLD / "raw").parts[1]
    rows = [row for row in ROWS if name in raw_names(row)]
    assert rows, f"no manifest row for raw file {path.relative_to(REALWORLD)}"
    assert len({(r["repo"], r["path"], r["commit"], r["license"]) for r in rows}) == 1


def test_every_recording_has_its_raw_copy() -> None:
    raw = {path.relative_to(REALWORLD / "raw").parts[1] for path in files_under("raw")}
    assert all(raw_names(row) & raw for row in ROWS), [
        row["case_file"] for row in ROWS if not raw_names(row) & raw
    ]


@pytest.mark.parametrize("repo", sorted({row["repo"] for row in ROWS}))
def test_every_source_repository_has_provenance_and_a_licence_note(repo: str) -> None:
    provenance = (REALWORLD / "PROVENANCE.md").read_text(encoding="utf-8")
    (licence,) = {row["license"] for row in ROWS if row["repo"] == repo}
    assert f"[{repo}](https://github.com/{repo}) | {licence} |" in provenance
    for row in ROWS:
        if row["repo"] == repo:
            assert f"| {repo} | `{row['path']}` | `{row['commit']}` | {licence} |" in provenance
    note = licence_note(repo).read_text(encoding="utf-8")
    assert f"https://github.com/{repo}" in note
    if licence == "MIT":
        assert "Licence: MIT" in note and "Permission is hereby granted, free of charge" in note
    elif licence == "Apache-2.0":
        assert "Apache License, Version 2.0" in note and "https://www.apache.org/licenses/LICENSE-2.0" in note
    else:
        assert "Licence: unknown" in note and "unknown" in provenance


def test_the_helpers_read_every_case() -> None:
    assert len(all_cases()) == len(ROWS)


def searched_files() -> list[Path]:
    found = []
    for name in SEARCHED:
        top = ROOT / name
        paths = [top] if top.is_file() else sorted(top.rglob("*")) if top.is_dir() else []
        found += [p for p in paths if p.is_file() and "__pycache__" not in p.parts]
    return found


def test_nothing_points_outside_the_repository_for_data() -> None:
    me = Path(__file__).resolve()
    files = [p for p in searched_files() if p.resolve() != me]
    assert any(p.name == "realworld.py" for p in files), "the search found too little"
    offenders = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        offenders += [f"{path.relative_to(ROOT)}: {word}" for word in FORBIDDEN if word in text]
    assert not offenders, "\n".join(offenders)
