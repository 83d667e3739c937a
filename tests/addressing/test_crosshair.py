"""CrossHair: the spec's contracts hold, reference and impl agree, and planted bugs are found.

Every solver run has an explicit budget (``--per_condition_timeout``), and a
run that finds a counterexample fails with it. The fast tier uses budgets a
few times longer than the measured time to find each planted bug; the deep
tier (``make test-deep``) multiplies them and adds the bugs that need more.
"""

from __future__ import annotations

import pytest

from depth import CAUGHT_FAST, DEEP, fast_sample, scaled
from brokerspec.planted.addressing_bugs import PLANTED
from brokerspec.planted.registry import PlantedBug
from solver import crosshair

pytestmark = pytest.mark.crosshair

IMPL = "brokerspec.impl.addressing"
REFERENCE = "brokerspec.reference.addressing"

# Planted bugs whose counterexample needs a create, a delete and a lookup to line up. CrossHair
# finds them (about 90 s of solver time each, measured), so they run only in the deep tier.
SLOW_TO_FIND = {"delete-removes-same-named-twin", "stale-cached-parse-after-delete"}




@pytest.mark.parametrize("module", ["brokerspec.spec.addressing.names"])
def test_spec_contracts_hold(module: str) -> None:
    result = crosshair("check", module, budget=scaled(3, 30))
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("function", ["split_fqqn", "lookup_two"])
def test_reference_and_impl_behave_alike(function: str) -> None:
    result = crosshair("diffbehavior", f"{REFERENCE}.{function}", f"{IMPL}.{function}", budget=scaled(8, 60))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "No differences found" in result.stdout


FINDABLE = [b for b in PLANTED if b.crosshair is not None and (DEEP or b.name not in SLOW_TO_FIND)]
HUNTS = fast_sample(FINDABLE, {"count-not-decremented-on-delete"}, lambda b: b.name, why=CAUGHT_FAST)
"""One hunt (about 25 s, the budget) shows CrossHair finds a planted addressing bug in the fast tier; the others
run deep: the catalogue kills each of them in the fast tier."""


@pytest.mark.parametrize("bug", HUNTS)
def test_crosshair_finds_planted_bug(bug: PlantedBug) -> None:
    assert bug.crosshair is not None
    correct, planted = bug.crosshair
    # CrossHair gives up after a run of uninteresting iterations, long before the budget: a CI run lost
    # fqqn-index-for-address-ending-in-colon that way after 539 iterations. The budget alone ends the search.
    result = crosshair("diffbehavior", correct, planted, "--max_uninteresting_iterations=100000",
                       budget=scaled(25, 150))
    assert result.returncode == 1, f"{bug.name}: no counterexample\n{result.stdout}{result.stderr}"
    assert "Given:" in result.stdout and "returns" in result.stdout
    print(f"\n{bug.name}:\n{result.stdout}")


def test_bugs_crosshair_cannot_reach_say_why() -> None:
    unreachable = [b for b in PLANTED if b.crosshair is None]
    assert unreachable, "the list of bugs outside CrossHair's reach is part of the documentation"
    assert all(b.why_not_crosshair for b in unreachable)
