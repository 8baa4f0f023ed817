"""The list of kills a process leaving at once runs (harness.children)."""

from __future__ import annotations

from harness import children


def test_every_kill_runs_newest_first_even_after_one_fails() -> None:
    ran: list[str] = []

    def failing() -> None:
        ran.append("failing")
        raise ProcessLookupError

    keys = [children.track(lambda: ran.append("first")), children.track(failing)]
    keys.append(children.track(lambda: ran.append("last")))
    try:
        children.kill_all()
    finally:
        for key in keys:
            children.untrack(key)
    assert ran == ["last", "failing", "first"]


def test_an_untracked_kill_does_not_run() -> None:
    ran: list[str] = []
    key = children.track(lambda: ran.append("stopped in order already"))
    children.untrack(key)
    children.untrack(key)  # twice is harmless
    children.kill_all()
    assert ran == []
