"""How hard the tests work: a fast tier for every run, a deep tier on demand.

``BROKERSPEC_DEEP=1`` (set by ``make test-deep``) raises example counts and
solver budgets, and runs the tests marked deep-only. Every solver run has an
explicit budget either way.

A family of like tests (one planted bug each, say) can keep a sample in the
fast tier and leave the rest to the deep tier with :func:`fast_sample`; the
rest stay collected in both tiers, skipped in the fast one with the reason,
so ``pytest -ra`` lists them and nothing drops out of sight.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable
from typing import TypeVar

import pytest
from _pytest.mark.structures import MarkDecorator, ParameterSet

DEEP = os.environ.get("BROKERSPEC_DEEP", "") == "1"

DEEP_REASON = "deep tier: BROKERSPEC_DEEP=1 (make test-deep)"

DEEP_ONLY: tuple[MarkDecorator, ...] = (pytest.mark.deep, pytest.mark.skipif(not DEEP, reason=DEEP_REASON))
"""Marks of a test that only the deep tier runs: ``deep`` (``pytest -m deep`` selects them) and a skip outside it."""

CAUGHT_FAST = "the catalogue kills every planted bug (tests/conform/test_mutation.py)"
"""Why a planted-bug hunt may leave the fast tier: ``test_every_planted_bug_is_killed_by_the_catalogue_alone``
runs each of them against the conformance catalogue there, and fails if one survives."""

T = TypeVar("T")


def scaled(fast: int, deep: int) -> int:
    """``fast`` normally, ``deep`` in the deep tier."""
    return deep if DEEP else fast


def deep_only(why: str) -> tuple[MarkDecorator, ...]:
    """:data:`DEEP_ONLY` with the reason the fast tier can spare the test (what else catches the same thing there)."""
    return pytest.mark.deep, pytest.mark.skipif(not DEEP, reason=f"{DEEP_REASON}; fast tier: {why}")


def fast_sample(cases: Iterable[T], fast: Collection[str], id_of: Callable[[T], str], *,
                why: str) -> list[ParameterSet]:
    """``cases`` as parameters: those whose id is in ``fast`` run in both tiers, the others only in the deep tier.

    ``why`` says what still catches, in the fast tier, what the others would (it becomes their skip reason). A
    tuple case is spread over the test's arguments. A name in ``fast`` that is not a case's id is an error, not
    a silent move of the whole family to the deep tier.
    """
    listed = list(cases)
    ids = [id_of(case) for case in listed]
    unknown = sorted(set(fast) - set(ids))
    if unknown:
        raise ValueError(f"fast sample names no case: {', '.join(unknown)} (the cases are {', '.join(ids)})")
    if not set(fast):
        raise ValueError("a fast sample needs at least one case: the fast tier must still show the check works")
    marks = deep_only(why)
    return [pytest.param(*(case if isinstance(case, tuple) else (case,)), id=name,
                         marks=() if name in fast else marks)
            for case, name in zip(listed, ids)]
