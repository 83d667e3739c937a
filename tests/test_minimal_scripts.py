"""Every script the checker, ``fuzz`` and ``diff`` report is 1-minimal: leaving out any one step loses the difference."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from brokerspec.check.domains import get_domain
from brokerspec.check.lockstep import Divergence
from brokerspec.check.minimal import is_one_minimal, lockstep_replay, one_minimal
from brokerspec.conform.diff import Pair, diff, make_side
from brokerspec.conform.fuzz import fuzz
from brokerspec.conform.sut import InProcessSut, subject_factory
from brokerspec.spec import get_profile


def divergence_of(commands: Sequence[Any]) -> Divergence:
    return Divergence(len(commands), commands[-1], "x", "differs", (), tuple(commands))


def needs_three_then_seven(commands: Sequence[Any]) -> Divergence | None:
    """A difference shows at the first 7 that follows a 3."""
    seen_three = False
    for number, command in enumerate(commands, start=1):
        seen_three = seen_three or command == 3
        if seen_three and command == 7:
            return divergence_of(list(commands[:number]))
    return None


def test_one_minimal_keeps_only_the_steps_the_difference_needs() -> None:
    found = divergence_of([1, 3, 5, 3, 9, 7])
    cut = one_minimal(found, needs_three_then_seven)
    assert list(cut.commands) == [3, 7]
    assert is_one_minimal(cut, needs_three_then_seven) and not is_one_minimal(found, needs_three_then_seven)


def paired(commands: Sequence[Any]) -> Divergence | None:
    """A difference shows at a 9 when the script holds both a 1 and a 2 or neither (a shifted pick)."""
    if 9 in commands and (1 in commands) == (2 in commands):
        return divergence_of(list(commands[:list(commands).index(9) + 1]))
    return None


def test_two_steps_that_can_only_go_together_are_cut_together() -> None:
    found = divergence_of([1, 5, 2, 9])
    assert is_one_minimal(divergence_of([1, 2, 9]), paired)  # one at a time, neither 1 nor 2 can go
    assert list(one_minimal(found, paired).commands) == [9]


def test_steps_after_the_diverging_one_are_dropped_and_a_capped_search_stops() -> None:
    found = Divergence(2, 7, "x", "differs", (), (3, 7, 1, 1))
    assert list(one_minimal(found, needs_three_then_seven).commands) == [3, 7]
    calls: list[int] = []

    def counting(commands: Sequence[Any]) -> Divergence | None:
        calls.append(1)
        return needs_three_then_seven(commands)

    one_minimal(divergence_of([1, 1, 1, 3, 7]), counting, max_replays=2)
    assert len(calls) == 2


@pytest.mark.parametrize(("domain", "bug", "profile"), [
    ("addressing", "first-match-instead-of-ambiguous", "seed"),
    ("duplicates", "rollback-leaves-ids-behind", "artemis-latest"),
    ("balancing", "off-forwards-anycast-remotely", "artemis-latest"),
    ("topologies", "loop-check-missing", "artemis-latest"),
])
def test_fuzz_reports_a_one_minimal_script_in_every_domain(domain: str, bug: str, profile: str,
                                                           tmp_path: Path) -> None:
    sut = InProcessSut(f"planted:{bug}")
    chosen = get_profile(profile)
    report = fuzz(sut, chosen, (domain,), 30.0, tmp_path, run_seed=2, strict=True)
    assert report.divergences, f"{bug} was not found"
    divergence = report.divergences[0].divergence
    assert divergence is not None
    replay = lockstep_replay(chosen, {"sut": subject_factory(sut, domain)}, get_domain(domain))
    assert replay(divergence.commands) is not None, "the reported script shows the difference"
    assert is_one_minimal(divergence, replay)


def test_diff_reports_a_one_minimal_script(tmp_path: Path) -> None:
    seed, latest = get_profile("seed"), get_profile("artemis-latest")
    source = make_side("seed", seed, Path("."), tmp_path)
    target = make_side("artemis-latest", seed, Path("."), tmp_path)
    results = diff(source, target, ("duplicates",), 20.0, tmp_path, run_seed=1)
    divergence = results[0].divergence
    assert divergence is not None

    def pair(profile: Any) -> Pair:
        return Pair(source.sut, target.sut, "duplicates", seed, latest)

    replay = lockstep_replay(seed, {"difference": pair}, get_domain("duplicates"))
    assert replay(divergence.commands) is not None and is_one_minimal(divergence, replay)
