"""Reference and fast implementation in lockstep with the topology spec, plus the fast broker's own checks."""

from __future__ import annotations

import pytest

from brokerspec.check.domains import TOPOLOGIES
from brokerspec.check.runner import run_machine
from brokerspec.impl.topologies import FastTopologyBroker
from brokerspec.spec import InvariantBroken, get_profile
from brokerspec.spec.topologies import (
    Send,
    Subscribe,
    TopologyCommand,
    Unsubscribe,
    apply,
    compute_demand,
    invariant_violations,
    retail_commands,
    run,
)
from depth import scaled
from topology_cases import QUEUE, TOPIC, four_tree, small_tree

PROFILE = get_profile("artemis-latest")


def test_reference_and_impl_agree_with_spec() -> None:
    divergence = run_machine(PROFILE, TOPOLOGIES.layers, max_examples=scaled(120, 2000), run_seed=2026,
                             domain=TOPOLOGIES)
    assert divergence is None, divergence.explain()


def run_fast(commands: list[TopologyCommand]) -> FastTopologyBroker:
    broker = FastTopologyBroker(PROFILE)
    for command in commands:
        broker.execute(command)
    return broker


@pytest.mark.parametrize("commands", [
    four_tree(2) + [Subscribe("a", "b3", QUEUE), Subscribe("b", "b3", QUEUE), Unsubscribe("a")],
    four_tree(3) + [Subscribe("a", "b3", TOPIC), Subscribe("b", "b4", TOPIC), Unsubscribe("b")],
    small_tree() + [Subscribe("a", "s1", QUEUE), Subscribe("b", "r1", QUEUE), Unsubscribe("b")],
], ids=["shared-conduit", "topic-suppression", "tree-branch"])
def test_fast_broker_matches_the_spec_where_it_must_rebuild(commands: list[TopologyCommand]) -> None:
    """Removals that share a conduit subscription, and topics (suppressed by default), take the rebuild path."""
    broker = run_fast(commands)
    state, _ = run(commands)
    assert broker.snapshot() == state
    broker.check_valid()


def test_fast_broker_on_the_seed_scale_matches_the_spec_demand() -> None:
    commands = retail_commands(3, 40, "network", 2) + [Subscribe("c", "r2-s7", QUEUE)]
    broker = run_fast(commands)
    snapshot = broker.snapshot()
    assert snapshot.demand == compute_demand(snapshot)
    assert sum(reg.network for reg in snapshot.demand) == 41, "region, HQ and 39 sibling stores"
    outcome = broker.execute(Send("hq", QUEUE))
    state, expected = apply(snapshot, Send("hq", QUEUE))
    assert outcome == expected
    assert invariant_violations(state) == []


def test_check_valid_names_a_broken_index() -> None:
    broker = run_fast(four_tree(2) + [Subscribe("c", "b3", QUEUE)])
    broker._dispatch[("b2", QUEUE)].append("ghost")
    with pytest.raises(InvariantBroken, match="dispatch list of queue://TEST.Q on b2"):
        broker.check_valid()
    broker = run_fast(small_tree())
    broker.parents["s1"] = "r2"
    with pytest.raises(InvariantBroken, match="parents"):
        broker.check_valid()
