"""CrossHair on load balancing: the choice contracts hold, the three layers choose alike, planted bugs are found.

Every solver run has an explicit budget (``--per_condition_timeout``). The
pure piece is the choice of a binding within a routing-name group
(``getNextBinding``, F3), given as three members packed into small integers
(four flag bits each) so the solver can range over every flag combination,
group size, position and load-balancing type. An exhaustive walk of the
same inputs backs it up (``test_choice_exhaustive.py``).
"""

from __future__ import annotations

import pytest

from brokerspec.planted.balancing_bugs import PLANTED
from brokerspec.planted.registry import PlantedBug
from depth import CAUGHT_FAST, fast_sample, scaled
from solver import assert_diff_found, crosshair

pytestmark = pytest.mark.crosshair

SPEC = "brokerspec.spec.balancing.choice.choose_from_bits"
LAYERS = {
    "reference": "brokerspec.reference.balancing.bindings.choose_from_bits",
    "impl": "brokerspec.impl.balancing.choice.choose_from_bits",
}


def test_spec_choice_contracts_hold() -> None:
    result = crosshair("check", "brokerspec.spec.balancing.choice", budget=scaled(5, 30))
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_layers_choose_like_the_spec(layer: str) -> None:
    result = crosshair("diffbehavior", SPEC, LAYERS[layer], budget=scaled(10, 60))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "No differences found" in result.stdout


FINDABLE = [b for b in PLANTED if b.crosshair is not None]
HUNTS = fast_sample(FINDABLE, {"position-advanced-on-skip"}, lambda b: b.name, why=CAUGHT_FAST)
"""All three are twins of the same choice function: one hunt (about 20 s, the budget) stays fast, the other two
run deep; the catalogue kills all three in the fast tier."""


@pytest.mark.parametrize("bug", HUNTS)
def test_crosshair_finds_planted_bug(bug: PlantedBug) -> None:
    assert bug.crosshair is not None
    correct, planted = bug.crosshair
    report = assert_diff_found(bug.name, correct, planted, budget=scaled(20, 60),
                               extra=("--max_uninteresting_iterations=1000000",))
    print(f"\n{bug.name}:\n{report}")


def test_bugs_crosshair_cannot_reach_say_why() -> None:
    unreachable = [b for b in PLANTED if b.crosshair is None]
    assert all(b.why_not_crosshair for b in unreachable)
    assert FINDABLE, "at least the choice-function bugs are within CrossHair's reach"
