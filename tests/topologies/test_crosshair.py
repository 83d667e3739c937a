"""CrossHair on the pure topology rules: contracts hold, spec and impl agree, planted rule bugs are found.

Every solver run has an explicit budget (``--per_condition_timeout``). The
pure pieces are the path and TTL rules: consumerTTL, the loop check,
priorities, conduit eligibility, messageTTL and forwarding, and the queue
choice with its rotation.
"""

from __future__ import annotations

import pytest

from brokerspec.planted.registry import PlantedBug
from brokerspec.planted.topologies_bugs import PLANTED
from depth import CAUGHT_FAST, fast_sample, scaled
from solver import assert_diff_found, crosshair

pytestmark = pytest.mark.crosshair

CONTRACTS = [
    "brokerspec.spec.topologies.demand.is_within_consumer_ttl", "brokerspec.spec.topologies.demand.is_loop",
    "brokerspec.spec.topologies.demand.compute_priority", "brokerspec.spec.topologies.demand.can_conduit",
    "brokerspec.spec.topologies.routing.is_within_message_ttl", "brokerspec.spec.topologies.routing.is_forwardable",
    "brokerspec.spec.topologies.routing.rotate",
]
HERE = "brokerspec.planted.topologies_bugs."


def test_spec_rule_contracts_hold() -> None:
    result = crosshair("check", *CONTRACTS, budget=scaled(3, 30))
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("rule", ["consumer_ttl", "message_ttl"])
def test_impl_rules_behave_like_the_spec(rule: str) -> None:
    result = crosshair("diffbehavior", f"{HERE}spec_{rule}", f"{HERE}correct_{rule}", budget=scaled(5, 60))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "No differences found" in result.stdout


FINDABLE = [b for b in PLANTED if b.crosshair is not None]
HUNTS = fast_sample(FINDABLE, {"loop-check-missing"}, lambda b: b.name, why=CAUGHT_FAST)
"""One hunt stays fast, the other two run deep; the catalogue kills all three in the fast tier."""


@pytest.mark.parametrize("bug", HUNTS)
def test_crosshair_finds_planted_bug(bug: PlantedBug) -> None:
    assert bug.crosshair is not None
    correct, planted = bug.crosshair
    report = assert_diff_found(bug.name, correct, planted, budget=scaled(10, 60),
                               extra=("--max_uninteresting_iterations=1000000",))
    print(f"\n{bug.name}:\n{report}")


def test_bugs_crosshair_cannot_reach_say_why() -> None:
    unreachable = [b for b in PLANTED if b.crosshair is None]
    assert all(b.why_not_crosshair for b in unreachable)
    assert len(FINDABLE) == 3
