"""Reference and fast implementation in lockstep with the load-balancing spec, strictly and permissively.

A broker that makes *other* allowed choices (the last allowed binding,
consumer and target instead of Artemis's round robin) shows the two modes
apart: strict mode catches it, permissive mode accepts it.
"""

from __future__ import annotations

import pytest

from brokerspec.check.domains import BALANCING
from brokerspec.check.lockstep import DivergenceError, Lockstep
from brokerspec.check.runner import run_machine
from brokerspec.spec import PROFILES, Outcome, Profile, get_profile
from brokerspec.spec.addressing import RoutingType
from brokerspec.spec.balancing import (
    AddNode,
    Attach,
    BalancingCommand,
    BalancingState,
    Configure,
    CreateQueue,
    LbType,
    Send,
    apply_choosing,
    initial_state,
)
from depth import scaled

VARIANTS = (
    (("balancing.fqqn_send", "LOCAL"), ("balancing.unrouted_status", "OK")),
    (("balancing.off_forwards_multicast", "true"), ("balancing.fqqn_redistribution_group", "true")),
)
CHECKED: list[Profile] = [get_profile(n) for n in PROFILES] + [get_profile("artemis-2.11", v) for v in VARIANTS]


@pytest.mark.parametrize("profile", CHECKED, ids=lambda p: p.label)
def test_reference_and_impl_agree_with_spec(profile: Profile) -> None:
    divergence = run_machine(profile, BALANCING.layers, max_examples=scaled(60, 1500), run_seed=2026,
                             domain=BALANCING)
    assert divergence is None, divergence.explain()


@pytest.mark.parametrize("profile", [get_profile("artemis-latest")], ids=lambda p: p.label)
def test_reference_and_impl_pass_in_permissive_mode_too(profile: Profile) -> None:
    divergence = run_machine(profile, BALANCING.layers, max_examples=scaled(30, 500), run_seed=7,
                             domain=BALANCING, permissive=True)
    assert divergence is None, divergence.explain()


class LastChoice:
    def pick(self, allowed: tuple[int, ...], strict: int) -> int:
        return allowed[-1]


class OtherTieBreakingBroker:
    """A correct broker with its own tie-breaking: the spec, always taking the last allowed choice."""

    def __init__(self, profile: Profile) -> None:
        self.state: BalancingState = initial_state(profile)

    def execute(self, command: BalancingCommand) -> Outcome:
        self.state, outcome = apply_choosing(self.state, command, LastChoice())
        return outcome

    def snapshot(self) -> BalancingState:
        return self.state


SPREAD = [AddNode("n2"), AddNode("n3"), Configure("a1", LbType.ON_DEMAND, 0),
          *[CreateQueue(n, "a1", "a1", RoutingType.ANYCAST) for n in ("n1", "n2", "n3")],
          Attach("c1", "n1", "a1"), Attach("c2", "n2", "a1"), Attach("c3", "n3", "a1"),
          *[Send("n1", "a1") for _ in range(6)]]


def test_a_tie_breaking_difference_is_caught_strictly_and_accepted_permissively() -> None:
    profile = get_profile("artemis-latest")
    strict = Lockstep(profile, {"other": OtherTieBreakingBroker}, BALANCING)
    with pytest.raises(DivergenceError) as caught:
        for command in SPREAD:
            strict.step(command)
    assert caught.value.divergence.what == "the outcomes differ"
    assert caught.value.divergence.step == len(SPREAD) - 5  # the first send already picks differently
    permissive = Lockstep(profile, {"other": OtherTieBreakingBroker}, BALANCING, permissive=True)
    for command in SPREAD:
        permissive.step(command)
    assert permissive.followed["other"] != permissive.state  # it went its own way, and that was allowed


def test_the_permissive_machine_accepts_other_tie_breaking_and_the_strict_one_does_not() -> None:
    profile = get_profile("artemis-latest")
    layers = {"other": OtherTieBreakingBroker}
    assert run_machine(profile, layers, max_examples=scaled(40, 400), run_seed=3, domain=BALANCING,
                       permissive=True) is None
    found = run_machine(profile, layers, max_examples=scaled(200, 400), run_seed=3, domain=BALANCING)
    assert found is not None and found.layer == "other" and found.what == "the outcomes differ"


def test_only_balancing_has_a_permissive_mode() -> None:
    from brokerspec.check.domains import DUPLICATES

    with pytest.raises(ValueError, match="no permissive mode"):
        Lockstep(get_profile("seed"), {}, DUPLICATES, permissive=True)
