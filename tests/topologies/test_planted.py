"""Every planted topology bug is caught by the lockstep machine, explained, and reproducible from its trace."""

from __future__ import annotations

from pathlib import Path

import pytest

from brokerspec.check.domains import TOPOLOGIES
from brokerspec.check.lockstep import Divergence
from brokerspec.check.runner import run_machine, write_divergence
from brokerspec.impl.topologies import FastTopologyBroker
from brokerspec.planted.registry import PlantedBug
from brokerspec.planted.topologies_bugs import PLANTED
from brokerspec.replay import replay
from brokerspec.spec import get_profile
from brokerspec.trace import read_trace
from depth import CAUGHT_FAST, fast_sample, scaled

PROFILE = get_profile("artemis-latest")
SEEDS = range(7, 11)


def hunt(bug: PlantedBug) -> Divergence | None:
    """The first divergence of ``bug`` over the fixed seeds, or None."""
    for run_seed in SEEDS:
        found = run_machine(PROFILE, {"planted": bug.broker}, max_examples=scaled(200, 1500), run_seed=run_seed,
                            domain=TOPOLOGIES)
        if found is not None:
            return found
    return None


def test_there_are_six_distinct_mistakes() -> None:
    assert len({bug.name for bug in PLANTED}) == len({bug.broker for bug in PLANTED}) == 6


HUNTS = fast_sample(PLANTED, {bug.name for bug in PLANTED} - {"message-ttl-ignored"}, lambda b: b.name,
                    why=CAUGHT_FAST)
"""Five hunts stay fast; message-ttl-ignored (31 s of an idle fast run) is hunted in the deep tier."""


@pytest.mark.parametrize("bug", HUNTS)
def test_state_machine_catches_planted_bug(bug: PlantedBug, tmp_path: Path) -> None:
    divergence = hunt(bug)
    assert divergence is not None, f"{bug.name} went unnoticed"
    assert divergence.layer == "planted" and divergence.domain == "topologies"
    explanation = divergence.explain()
    assert len(divergence.commands) <= 20, explanation
    assert "script:" in explanation and "<-- here" in explanation
    trace = read_trace(write_divergence(tmp_path, PROFILE, divergence))
    assert trace.domain == "topologies"
    report = replay(trace, {"planted": bug.broker, "impl": FastTopologyBroker})
    first = report.first_difference
    assert first is not None and first.number == divergence.step
    assert first.layers["impl"].agrees_with(first.spec), "the real impl agrees with the spec where the bug parts"
    print(f"\n{bug.name}:\n{explanation}")
