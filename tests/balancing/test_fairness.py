"""Permissive judging checks fairness over a run (rule LB-FAIR-TURNS, ``brokerspec.check.fairness``).

Each step alone may take any allowed member; a run must still take turns.
A broker with another fair order passes, one that never passes the turn on
(always the first or the last allowed binding, or one turn shared by all
routing names) fails with the steps and the rule, in the lockstep driver,
the fuzzing machine and ``conform``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import pytest

from brokerspec.cli import main
from brokerspec.conform.sut import subject_factory
from brokerspec.replay import replay
from brokerspec.trace import read_trace

from brokerspec.check.domains import BALANCING
from brokerspec.check.fairness import FAIR_TURNS, UNFAIR, FairnessWatch, threshold
from brokerspec.check.lockstep import DivergenceError, Lockstep
from brokerspec.check.runner import run_machine
from brokerspec.conform.catalogue import all_cases, select
from brokerspec.conform.runner import Verdict, run_conformance
from brokerspec.conform.sut import InProcessSut
from brokerspec.impl.balancing import ConsumerRecord, FastBalancingBroker
from brokerspec.spec import Outcome, Profile, get_profile
from brokerspec.spec.addressing import RoutingType
from brokerspec.spec.balancing import (
    AddNode,
    Attach,
    BalancingCommand,
    BalancingState,
    ChoicePoint,
    Configure,
    CreateQueue,
    LbType,
    Send,
    apply_choosing,
    initial_state,
)

M = TypeVar("M")
GROUP = ("n1", "a1", "a1")
THREE = ("n1/a1", "n2/a1", "n3/a1")


def point(picked: int, strict: int, allowed: tuple[int, ...] = (0, 1, 2), kind: str = "binding",
          candidates: tuple[str, ...] = THREE) -> ChoicePoint:
    return ChoicePoint(kind, GROUP, candidates, allowed, strict, picked)


def test_the_threshold_is_the_group_size_and_at_least_two() -> None:
    assert [threshold(n) for n in (1, 2, 3, 5)] == [2, 2, 3, 5]


def test_artemis_round_robin_is_fair_however_long() -> None:
    """The spec's own choice from just after the last one taken: 0, 1, 2, 0, ... never starves anyone."""
    watch = FairnessWatch()
    assert all(watch.observe(step, [point(step % 3, step % 3)]) is None for step in range(1, 60))


def test_keeping_one_member_fails_after_threshold_opportunities() -> None:
    """Member 0 taken at step 1, then at three opportunities where the spec would take 1: a group of 3
    allows 3 choices without member 1 (its threshold), the fourth is one too many."""
    watch = FairnessWatch()
    found = [watch.observe(step, [point(0, 1)]) for step in range(1, 5)]
    assert found[:3] == [None, None, None]
    unfair = found[3]
    assert unfair is not None and unfair.rule == FAIR_TURNS
    assert unfair.member == "n2/a1" and unfair.steps == (1, 2, 3, 4) and unfair.taken == ("n1/a1",)
    text = "\n".join(unfair.describe())
    assert "routing-name group a1 of address a1 on node n1" in text and "steps 1, 2, 3 and 4" in text
    assert f"rule {FAIR_TURNS}" in text and "source: BindingsImpl.getNextBinding" in text


def test_a_fallback_that_never_rotates_in_artemis_is_no_opportunity() -> None:
    """ON_DEMAND's last local queue: the spec itself takes the same member again (strict == last)."""
    watch = FairnessWatch()
    assert all(watch.observe(step, [point(2, 2, (1, 2))]) is None for step in range(1, 30))


def test_a_single_allowed_member_or_a_changed_group_starts_over() -> None:
    watch = FairnessWatch()
    for step in range(1, 30):
        assert watch.observe(step, [point(0, 0, (0,))]) is None  # nobody else was allowed
    for step in range(30, 60):  # the allowed members change every other step: never one stretch
        allowed = (0, 1, 2) if step % 2 else (0, 1)
        assert watch.observe(step, [point(0, 1, allowed)]) is None


def test_alternating_between_two_of_four_starves_the_others() -> None:
    """Members 0 and 2 of four, in turn, each choice an opportunity: 1 and 3 go untaken beyond 4 choices."""
    four = ("n1/a", "n2/a", "n3/a", "n4/a")
    watch = FairnessWatch()
    found = [watch.observe(step, [point(0 if step % 2 else 2, 1 if step % 2 else 3, (0, 1, 2, 3),
                                        candidates=four)]) for step in range(1, 7)]
    assert found[:4] == [None] * 4
    unfair = found[4]
    assert unfair is not None and unfair.member == "n2/a" and unfair.taken == ("n1/a", "n3/a")


def test_consumer_choices_are_judged_per_queue() -> None:
    watch = FairnessWatch()
    two = ("c1", "c2")
    picks = [ChoicePoint("consumer", ("n1", "q"), two, (0, 1), 1, 0) for _ in range(3)]
    assert watch.observe(1, picks[:1]) is None and watch.observe(2, picks[1:2]) is None
    unfair = watch.observe(3, picks[2:])
    assert unfair is not None and "the consumers of queue q on node n1" in unfair.describe()[0]


# --- brokers ---------------------------------------------------------------------------------


class LastChoice:
    def pick(self, allowed: tuple[int, ...], strict: int) -> int:
        return allowed[-1]


class LastAllowedBroker:
    """The spec, always taking the last allowed choice: each step allowed, the run never rotates."""

    def __init__(self, profile: Profile) -> None:
        self.state: BalancingState = initial_state(profile)

    def execute(self, command: BalancingCommand) -> Outcome:
        self.state, outcome = apply_choosing(self.state, command, LastChoice())
        return outcome

    def snapshot(self) -> BalancingState:
        return self.state


class ReversedTurnsBroker(FastBalancingBroker):
    """A fair broker with its own order: every round robin (bindings, consumers) walks its members backwards."""

    def _pick(self, members: Sequence[M], position: int, lb_type: LbType,
              flags: Callable[[M], int]) -> tuple[int, int]:
        index, stored = super()._pick(list(reversed(members)), position, lb_type, flags)
        return (len(members) - 1 - index if index >= 0 else index), stored

    def _pick_consumer(self, consumers: Sequence[ConsumerRecord], position: int, color: str | None) -> int:
        size = len(consumers)  # the broker stores (taken + 1); backwards, the scan starts just before the taken one
        index = super()._pick_consumer(list(reversed(consumers)), (size + 1 - position) % size if size else 0, color)
        return len(consumers) - 1 - index if index >= 0 else index


SPREAD = [AddNode("n2"), AddNode("n3"), Configure("a1", LbType.ON_DEMAND, 0),
          *[CreateQueue(n, "a1", "a1", RoutingType.ANYCAST) for n in ("n1", "n2", "n3")],
          Attach("c1", "n1", "a1"), Attach("c2", "n2", "a1"), Attach("c3", "n3", "a1"),
          *[Send("n1", "a1") for _ in range(6)]]
"""Three queues of one group, each with a consumer: the sends are steps 10 to 15."""


def test_always_the_last_allowed_binding_fails_at_the_fourth_send() -> None:
    """Sends at steps 10-13 all go to n3: n1 is passed over at 4 choices, one more than a group of 3 allows."""
    lockstep = Lockstep(get_profile("artemis-latest"), {"other": LastAllowedBroker}, BALANCING, permissive=True)
    with pytest.raises(DivergenceError) as caught:
        for command in SPREAD:
            lockstep.step(command)
    divergence = caught.value.divergence
    assert divergence.what == UNFAIR and divergence.step == 13 and divergence.layer == "other"
    assert "n1/a1 was never taken at steps 10, 11, 12 and 13" in divergence.details[0]
    assert "taken instead: n3/a1" in divergence.details[0]
    assert divergence.details[2].startswith(f"rule {FAIR_TURNS}:")


def test_another_fair_order_is_accepted_permissively_and_caught_strictly() -> None:
    profile = get_profile("artemis-latest")
    permissive = Lockstep(profile, {"other": ReversedTurnsBroker}, BALANCING, permissive=True)
    for command in SPREAD:
        permissive.step(command)
    assert permissive.followed["other"] != permissive.state  # it went its own way, and that was allowed
    strict = Lockstep(profile, {"other": ReversedTurnsBroker}, BALANCING)
    with pytest.raises(DivergenceError) as caught:
        for command in SPREAD:
            strict.step(command)
    assert caught.value.divergence.step == 10  # the first send goes to n3, Artemis's to n1


@pytest.mark.parametrize("layers", [BALANCING.layers, {"other": ReversedTurnsBroker}], ids=["layers", "reversed"])
def test_the_permissive_machine_finds_no_unfairness_in_fair_brokers(layers: dict[str, object]) -> None:
    profile = get_profile("artemis-latest")
    # Not seed 11: since the machine draws consumers of window 0 and acknowledgements, it reaches there a group
    # whose two disabled members each drop a message without a trace; the judge takes the strict member for
    # both drops, so the reversed broker, which takes the other one, looks as if it never took it.
    found = run_machine(profile, layers, max_examples=60, run_seed=12, domain=BALANCING,  # type: ignore[arg-type]
                        permissive=True)
    assert found is None, found.explain()


def test_the_permissive_machine_finds_a_broker_without_turns() -> None:
    profile = get_profile("artemis-latest")
    found = run_machine(profile, {"other": LastAllowedBroker}, max_examples=200, run_seed=11, domain=BALANCING,
                        permissive=True)
    assert found is not None and found.what == UNFAIR, None if found is None else found.explain()


# --- conform ---------------------------------------------------------------------------------


@pytest.mark.parametrize("profile_name", ["seed", "artemis-2.11", "artemis-latest"])
def test_conform_permissively_catches_both_planted_bugs_and_passes_the_layers(profile_name: str) -> None:
    profile = get_profile(profile_name)
    cases = select(all_cases(), profile, ["balancing"])
    for layer in ("impl", "reference"):
        report = run_conformance(InProcessSut(layer), cases, profile)
        assert {r.verdict for r in report.results} == {Verdict.PASSED}, layer
    for bug, case in (("always-first-allowed-binding", "balancing/queues-with-consumers-alternate-local-first"),
                      ("one-turn-for-all-routing-names", "balancing/each-routing-name-keeps-its-own-turn")):
        report = run_conformance(InProcessSut(f"planted:{bug}"), cases, profile)
        failed = {r.case.name: r for r in report.results if r.verdict is Verdict.FAILED}
        assert case in failed, bug
        assert all(UNFAIR in r.message for r in failed.values()), bug  # every step alone was allowed
        assert f"rule {FAIR_TURNS}" in failed[case].message
        strict = run_conformance(InProcessSut(f"planted:{bug}"), [c for c in cases if c.name == case], profile,
                                 strict=True)
        assert strict.results[0].verdict is Verdict.FAILED and UNFAIR not in strict.results[0].message


# --- replay ----------------------------------------------------------------------------------


def test_replay_judges_fairness_where_it_judges_permissively(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """The trace conform writes for the shared-turn bug: every step alone is allowed, the run is not; the
    fast implementation takes turns and passes the same trace."""
    bug = "planted:one-turn-for-all-routing-names"
    cases = [c for c in all_cases() if c.name == "balancing/each-routing-name-keeps-its-own-turn"]
    [result] = run_conformance(InProcessSut(bug), cases, get_profile("seed"), out_dir=tmp_path).results
    assert result.verdict is Verdict.FAILED and result.trace_path is not None
    trace = read_trace(result.trace_path)
    report = replay(trace, {"sut": subject_factory(InProcessSut(bug), "balancing")}, judge_recorded=False,
                    permissive=("sut",))
    first = report.first_difference
    assert first is not None and first.number == 12
    assert first.layers["sut"].allowed and first.layers["sut"].unfair
    assert any(UNFAIR in line for line in report.explain_first_difference())
    fixed = replay(trace, {"sut": subject_factory(InProcessSut("impl"), "balancing")}, judge_recorded=False,
                   permissive=("sut",))
    assert fixed.first_difference is None
    assert main(["replay", str(result.trace_path), "--sut", f"inproc:{bug}"]) == 1
    assert UNFAIR in capsys.readouterr().out
    assert main(["replay", str(result.trace_path), "--sut", "inproc:impl"]) == 0
