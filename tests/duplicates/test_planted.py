"""Every planted duplicate-detection bug is caught by the lockstep machine, explained, and reproducible."""

from __future__ import annotations

from pathlib import Path

import pytest

from brokerspec.check.domains import DUPLICATES
from brokerspec.check.lockstep import SubjectFactory
from brokerspec.check.runner import run_machine, write_divergence
from brokerspec.impl.duplicates import FastDuplicatesBroker
from brokerspec.replay import replay
from brokerspec.spec import get_profile
from brokerspec.trace import read_trace
from depth import CAUGHT_FAST, fast_sample, scaled
from brokerspec.planted.duplicates_bugs import PLANTED
from brokerspec.planted.registry import PlantedBug

CASES = fast_sample([(bug, profile) for bug in PLANTED for profile in bug.profiles],
                    {f"{bug.name}[{bug.profiles[-1]}]" for bug in PLANTED}, lambda case: f"{case[0].name}[{case[1]}]",
                    why=f"the same bug under its newest profile; {CAUGHT_FAST}")
"""Every bug under its newest profile in the fast tier, under the older ones too in the deep tier."""


@pytest.mark.parametrize(("bug", "profile_name"), CASES)
def test_state_machine_catches_planted_bug(bug: PlantedBug, profile_name: str, tmp_path: Path) -> None:
    profile = get_profile(profile_name)
    layers: dict[str, SubjectFactory] = {"planted": bug.broker}
    divergence = run_machine(profile, layers, max_examples=scaled(300, 2000), run_seed=7, domain=DUPLICATES)
    assert divergence is not None, f"{bug.name} went unnoticed under {profile_name}"
    assert divergence.layer == "planted" and divergence.domain == "duplicates"
    explanation = divergence.explain()
    assert len(divergence.commands) <= 14, explanation
    assert "script:" in explanation and "<-- here" in explanation
    assert divergence.step == len(divergence.commands)
    trace = read_trace(write_divergence(tmp_path, profile, divergence))
    assert trace.domain == "duplicates"
    report = replay(trace, {"planted": bug.broker, "impl": FastDuplicatesBroker})
    first = report.first_difference
    assert first is not None and first.number == divergence.step
    assert first.layers["impl"].agrees_with(first.spec), "the real impl agrees with the spec where the bug parts"
    print(f"\n{bug.name} under {profile_name}:\n{explanation}")


def test_the_required_mistakes_are_all_planted() -> None:
    assert len(PLANTED) >= 8
    assert all(bug.broker is not FastDuplicatesBroker and issubclass(bug.broker, FastDuplicatesBroker)
               for bug in PLANTED)
    assert len({bug.name for bug in PLANTED}) == len(PLANTED)


@pytest.mark.parametrize("name", ["prepared-id-lost-at-restart", "prepared-id-visible-before-commit"])
def test_the_xa_mistakes_part_from_the_spec_at_a_prepare_or_a_restart(name: str) -> None:
    """Each XA bug shows at the step that breaks its rule: the prepare (IDs visible) or the restart (IDs lost)."""
    bug = next(bug for bug in PLANTED if bug.name == name)
    layers: dict[str, SubjectFactory] = {"planted": bug.broker}
    divergence = run_machine(get_profile("artemis-2.11"), layers, max_examples=scaled(300, 2000), run_seed=11,
                             domain=DUPLICATES)
    assert divergence is not None, f"{name} went unnoticed"
    breaking = {"prepare"} if "visible" in name else {"restart", "crash"}
    assert divergence.command.op in breaking, divergence.explain()
    assert any(command.op == "prepare" for command in divergence.commands), divergence.explain()
