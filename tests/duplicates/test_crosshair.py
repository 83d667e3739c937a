"""CrossHair on duplicate detection: the spec's contracts hold, spec and impl caches agree, planted bugs are found.

Every solver run has an explicit budget (``--per_condition_timeout``). The
pure parts are the ID encoding, the ring (through closed three-ID samples),
the reload and the moment an ID becomes visible.
"""

from __future__ import annotations

import pytest

from depth import CAUGHT_FAST, fast_sample, scaled
from brokerspec.planted.duplicates_bugs import PLANTED
from brokerspec.planted.registry import PlantedBug
from solver import crosshair

pytestmark = pytest.mark.crosshair

SPEC = "brokerspec.spec.duplicates"
IMPL = "brokerspec.impl.duplicates.samples"


def test_spec_contracts_hold() -> None:
    modules = [f"{SPEC}.{m}" for m in ("ids", "visibility", "lifecycle", "samples")]
    result = crosshair("check", *modules, budget=scaled(4, 30))
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("function", ["run_ring_steps", "reload_survivors"])
def test_spec_and_impl_caches_behave_alike(function: str) -> None:
    result = crosshair("diffbehavior", f"{SPEC}.samples.{function}", f"{IMPL}.{function}", budget=scaled(8, 60))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "No differences found" in result.stdout


FINDABLE = [b for b in PLANTED if b.crosshair is not None]
HUNTS = fast_sample(FINDABLE, {"id-added-at-send-not-at-commit", "newest-evicted-instead-of-oldest"},
                    lambda b: b.name, why=CAUGHT_FAST)
"""The fast tier keeps one hunt of each kind (a contract that fails, a planted twin that answers differently);
the other two diffs (about 25 s each, the budget) run deep: the catalogue kills those bugs in the fast tier."""


@pytest.mark.parametrize("bug", HUNTS)
def test_crosshair_finds_planted_bug(bug: PlantedBug) -> None:
    assert bug.crosshair is not None
    first, planted = bug.crosshair
    if first == "check":
        result = crosshair("check", planted, budget=scaled(10, 60))
        assert result.returncode == 1, f"{bug.name}: contract held\n{result.stdout}{result.stderr}"
        assert "false when calling" in result.stdout or "error" in result.stdout.lower()
    else:
        result = crosshair("diffbehavior", first, planted, budget=scaled(25, 150))
        assert result.returncode == 1, f"{bug.name}: no counterexample\n{result.stdout}{result.stderr}"
        assert "Given:" in result.stdout and "returns" in result.stdout
    print(f"\n{bug.name}:\n{result.stdout}")


def test_bugs_crosshair_cannot_reach_say_why() -> None:
    unreachable = [b for b in PLANTED if b.crosshair is None]
    assert unreachable and all(b.why_not_crosshair for b in unreachable)
