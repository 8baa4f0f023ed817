"""Mutated real bodies: every fault a specific finding, never an exception, never the generic guard.

A fixed-seed sample of the mutations ``benchmarks/mutations.py`` applies to every real
response body in ``tests/data/realworld/cases`` (a key dropped, a value of another JSON
type, truncation, 2,000-deep nesting, invalid UTF-8, lone surrogate escapes, SSE frames
split at random offsets, chunks duplicated or dropped, the stream flag flipped), parsed
by the case's adapter natively and in prompted mode. The benchmark runs the full set
(tens of thousands); this test a few thousand, in seconds.
"""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.mutations import (
    KINDS,
    Mutation,
    adapters_for,
    guard_hits,
    load_cases,
    mutations,
    not_utf8,
    run,
)

PER_KIND = 5  # mutations per kind and case: ~5,200 mutations, ~10,400 parses
CASES = load_cases()
# What a mutation of these kinds must be reported as, whatever else it causes.
EXPECTED = {
    "invalid_utf8": "wire.invalid_unicode",
    "lone_surrogate": "wire.invalid_unicode",
    "deep_nesting": "wire.body_too_deep",
}


def failures(mutation: Mutation, number: int) -> list[str]:
    """What is wrong with parsing one mutation, by every adapter it goes to."""
    found = []
    for adapter in adapters_for(mutation.wire_format, number):
        label = f"{mutation.kind} {mutation.detail[:100]} ({adapter.format})"
        outcome = run(mutation, adapter)
        if outcome.turn is None:
            found.append(f"exception {outcome.exception}: {label}")
            continue
        found += [f"generic guard {hit[:160]}: {label}" for hit in guard_hits(outcome.turn)]
        if not_utf8(outcome.turn):
            found.append(f"strings not UTF-8: {label}")
        expected = EXPECTED.get(mutation.kind)
        if expected and expected not in {f.check_id for f in outcome.turn.findings}:
            found.append(f"no {expected}: {label}")
    return found


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_mutated_real_bodies_give_findings_not_crashes(case: dict[str, Any]) -> None:
    found: list[str] = []
    kinds = set()
    for number, mutation in enumerate(mutations(case, PER_KIND)):
        kinds.add(mutation.kind)
        found += failures(mutation, number)
    assert not found, f"{len(found)} failure(s):\n" + "\n".join(found[:10])
    assert {"drop_key", "retype", "truncate", "deep_nesting", "invalid_utf8"} <= kinds


def test_the_sample_is_a_few_thousand_mutations_of_every_kind() -> None:
    sample = [m for case in CASES for m in mutations(case, PER_KIND)]
    assert 1500 <= len(sample) <= 45 * len(CASES)  # about 40 a case: the corpus sets the size
    assert {m.kind for m in sample} == set(KINDS)
    assert sample == [m for case in CASES for m in mutations(case, PER_KIND)], (
        "the sample must be deterministic"
    )
