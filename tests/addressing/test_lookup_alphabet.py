"""Exhaustively, over the sample alphabet: reference and impl agree; each lookup-reachable planted bug differs.

The pure entry points ``lookup_two`` take a few enum-valued names (the
alphabet CrossHair explores). The whole input space is small enough to walk
completely, which settles in seconds what the solver needs a budget for.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import pytest

from brokerspec.impl.addressing import lookup_two as impl_lookup
from brokerspec.reference.addressing import lookup_two as reference_lookup
from brokerspec.spec.addressing import LookupOutcome
from brokerspec.spec.addressing.samples import SampleAddress, SampleName, SampleQueue
from brokerspec.planted import addressing_bugs as bugs

Inputs = tuple[SampleAddress, SampleQueue, SampleAddress, SampleQueue, SampleName, SampleName, bool, bool]


def every_input() -> Iterator[Inputs]:
    yield from itertools.product(SampleAddress, SampleQueue, SampleAddress, SampleQueue, SampleName, SampleName,
                                 (False, True), (False, True))


def first_difference(left: Callable[..., LookupOutcome], right: Callable[..., LookupOutcome]) -> Inputs | None:
    return next((args for args in every_input() if left(*args) != right(*args)), None)


def test_reference_and_impl_agree_on_the_whole_alphabet() -> None:
    assert sum(1 for _ in every_input()) == 4 * 2 * 4 * 2 * 12 * 12 * 2 * 2
    assert first_difference(reference_lookup, impl_lookup) is None


@pytest.mark.parametrize("planted", [
    bugs.lookup_two_count_kept, bugs.lookup_two_first_match, bugs.lookup_two_fqqn_ignored, bugs.lookup_two_twin,
    bugs.lookup_two_stale, bugs.lookup_two_colon,
], ids=lambda f: f.__doc__ or "")
def test_each_planted_lookup_bug_differs_somewhere(planted: Callable[..., LookupOutcome]) -> None:
    assert first_difference(impl_lookup, planted) is not None
