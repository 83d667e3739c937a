"""Every input of the packed binding choice, walked exhaustively: three layers agree, each planted choice differs.

The domain of ``choose_from_bits`` is small enough to enumerate: sixteen
flag combinations for each of three members, group sizes 1-3, positions
0-4 and four load-balancing types, 245,760 inputs in all. The walk is the
complete form of what CrossHair searches symbolically, and it reaches the
planted mistake CrossHair misses.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import pytest

from brokerspec.impl.balancing.choice import choose_from_bits as impl_choice
from brokerspec.planted import balancing_bugs
from brokerspec.reference.balancing.bindings import choose_from_bits as reference_choice
from brokerspec.spec.balancing import LbType, choose_from_bits

Choice = Callable[[int, int, int, int, int, LbType], tuple[int, int]]


def inputs() -> Iterator[tuple[int, int, int, int, int, LbType]]:
    for m0, m1, m2 in itertools.product(range(16), repeat=3):
        for size in (1, 2, 3):
            if (size < 3 and m2) or (size < 2 and m1):
                continue  # members past the size are not read: one representative is enough
            for position in range(5):
                for lb_type in LbType:
                    yield m0, m1, m2, size, position, lb_type


def test_reference_and_impl_choose_like_the_spec_on_every_input() -> None:
    checked = 0
    for args in inputs():
        expected = choose_from_bits(*args)
        assert reference_choice(*args) == expected, args
        assert impl_choice(*args) == expected, args
        checked += 1
    assert checked == 16 ** 3 * 5 * 4 + 16 ** 2 * 5 * 4 + 16 * 5 * 4


PLANTED_CHOICES: dict[str, Choice] = {
    "position-advanced-on-skip": balancing_bugs.choose_from_bits_position_advanced_on_skip,
    "strict-prefers-consumers": balancing_bugs.choose_from_bits_strict_prefers_consumers,
    "position-not-reset-when-out-of-range": balancing_bugs.choose_from_bits_position_not_reset,
    "on-demand-falls-back-to-first-local": balancing_bugs.choose_from_bits_fallback_to_first_local,
}


@pytest.mark.parametrize("name", sorted(PLANTED_CHOICES))
def test_each_planted_choice_differs_somewhere(name: str) -> None:
    planted = PLANTED_CHOICES[name]
    first = next((args for args in inputs() if planted(*args) != choose_from_bits(*args)), None)
    assert first is not None, f"{name} chooses like the spec on every input"
    print(f"\n{name}: first differing input {first}: spec {choose_from_bits(*first)}, planted {planted(*first)}")


def test_out_of_domain_input_is_refused_alike() -> None:
    for choice in (choose_from_bits, reference_choice, impl_choice):
        with pytest.raises(ValueError, match="size 1-3"):
            choice(0, 0, 0, 0, 0, LbType.OFF)
