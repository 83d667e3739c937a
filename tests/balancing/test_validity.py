"""The private invariants: the fast broker's ``check_valid`` and the spec's ``invariant_violations`` name what broke.

Each case corrupts one index of a small, valid cluster (as a bug in the
fast broker would) or one part of a spec state, and checks that the report
names it; the uncorrupted start reports nothing, so every case can fail.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from brokerspec.impl.balancing import FastBalancingBroker
from brokerspec.spec import InvariantBroken, get_profile
from brokerspec.spec.addressing import RoutingType
from brokerspec.spec.balancing import (
    AddNode,
    Attach,
    BalancingCommand,
    BalancingState,
    Close,
    Configure,
    CreateQueue,
    LbType,
    Message,
    Send,
    SetLink,
    apply,
    initial_state,
    invariant_violations,
)

ANY, MULTI = RoutingType.ANYCAST, RoutingType.MULTICAST
SCRIPT: list[BalancingCommand] = [AddNode("n2"), Configure("a1", LbType.ON_DEMAND, 5), CreateQueue("n1", "a1", "a1", ANY),
          CreateQueue("n2", "a1", "a1", ANY), CreateQueue("n1", "a1", "q1", MULTI, "red"),
          Attach("c1", "n1", "a1", "red"), Attach("c2", "n2", "a1", "green"), Send("n1", "a1", color="blue"),
          Send("n1", "a1", color="red"), SetLink("n1", "n2", False), Close("c1"),
          Attach("c3", "n2", "a1", manual_ack=True), Send("n2", "a1")]
"""Ends with consumer c3 on n2 holding message 3, unacknowledged."""


def built() -> FastBalancingBroker:
    broker = FastBalancingBroker(get_profile("artemis-latest"))
    for command in SCRIPT:
        broker.execute(command)
    broker.check_valid()
    assert [m.id for m in broker._consumers["c3"].held] == [3]
    return broker


def first_group(broker: FastBalancingBroker) -> object:
    return next(iter(broker._groups["n1"]["a1"].values()))


CORRUPTIONS: dict[str, tuple[Callable[[FastBalancingBroker], object], str]] = {
    "serial": (lambda b: setattr(b, "_next_serial", 0), "serial not yet issued"),
    "node": (lambda b: setattr(b._queues[("n1", "a1")], "node", "n9"), "unknown node n9"),
    "bindings": (lambda b: b._queues[("n1", "a1")].bindings.pop("n2"), "not on every node"),
    "address index": (lambda b: b._by_address["a1"].reverse(), "address index"),
    "groups": (lambda b: b._groups["n2"].pop("a1"), r"node n2 has groups for \[\]"),
    "position": (lambda b: setattr(first_group(b), "position", -1), "position -1"),
    "local flag": (lambda b: setattr(first_group(b).members[0], "local", False), "local=False"),  # type: ignore[attr-defined]
    "connected flag": (lambda b: setattr(first_group(b).members[1], "connected", True), "connected=True"),  # type: ignore[attr-defined]
    "filter counts": (lambda b: setattr(b._queues[("n1", "a1")], "unfiltered", 3), "counts 3 unfiltered"),
    "consumer position": (lambda b: setattr(b._queues[("n1", "a1")], "consumer_position", -2),
                          "consumer position -2"),
    "message numbers": (lambda b: setattr(b, "_next_message", 1), "never issued"),
    "message twice": (lambda b: b._queues[("n1", "a1")].pending.append(b._queues[("n1", "a1")].pending[0]),
                      "waits twice"),
    "redistributors": (lambda b: b._redistributors.clear(), "redistributor"),
    "settings": (lambda b: b._lb_types["n1"].__setitem__("zz", LbType.OFF), "configured are"),
    "node settings": (lambda b: b._lb_types.__setitem__("n9", {}), "fast settings are kept for the nodes"),
    "links": (lambda b: b._down.add(("n1", "n1")), "is a loop"),
    "held, acknowledged on arrival": (lambda b: setattr(b._consumers["c3"], "manual_ack", False),
                                      "acknowledges each message as it takes it"),
    "held twice": (lambda b: b._consumers["c3"].held.append(b._consumers["c3"].held[0]), "a message twice"),
    "held and waiting": (lambda b: b._queues[("n2", "a1")].pending.append(b._consumers["c3"].held[0]),
                         "one waiting in queue a1 on n2"),
    "held, never issued": (lambda b: setattr(b, "_next_message", 3), "holds a message never issued"),
}


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_check_valid_names_the_corrupted_index(name: str) -> None:
    broker = built()
    corrupt, expected = CORRUPTIONS[name]
    corrupt(broker)
    with pytest.raises(InvariantBroken, match=expected):
        broker.check_valid()


def spec_state() -> BalancingState:
    state = initial_state(get_profile("artemis-latest"))
    for command in SCRIPT:
        state, _ = apply(state, command)
    assert invariant_violations(state) == []
    return state


def with_queue(state: BalancingState, key: tuple[str, str], **changes: object) -> BalancingState:
    queue = dataclasses.replace(state.queues[key], **changes)  # type: ignore[arg-type]
    return dataclasses.replace(state, queues=state.queues.set(key, queue))


SPEC_CORRUPTIONS: dict[str, tuple[Callable[[BalancingState], BalancingState], str]] = {
    "serials": (lambda s: with_queue(s, ("n2", "a1"), serial=1), "share a creation serial"),
    "filing": (lambda s: dataclasses.replace(s, queues=s.queues.set(("n1", "zz"), s.queues[("n1", "a1")])),
               "is filed under"),
    "node": (lambda s: dataclasses.replace(s, nodes=("n1",)), "unknown node n2"),
    "serial": (lambda s: dataclasses.replace(s, next_serial=1), "serial not yet issued"),
    "message": (lambda s: dataclasses.replace(s, next_message=1), "never issued"),
    "twice": (lambda s: with_queue(s, ("n1", "a1"), pending=(Message(1, "a1"), Message(1, "a1"))), "waits twice"),
    "taker": (lambda s: with_queue(s, ("n2", "a1"), pending=(Message(1, "a1", color="green"),)),
              "started consumer that matches"),
    "consumer list": (lambda s: with_queue(s, ("n1", "a1"), consumers=("c2",)), "that is not its own"),
    "consumer owner": (lambda s: with_queue(s, ("n2", "a1"), consumers=()), "is not listed by queue"),
    "position": (lambda s: dataclasses.replace(s, positions=s.positions.set(("n1", "zz", "zz"), 0)),
                 "empty group"),
    "consumer position": (lambda s: dataclasses.replace(
        s, consumer_positions=s.consumer_positions.set(("n9", "zz"), 0)), "missing queue"),
    "link": (lambda s: dataclasses.replace(s, down_links=frozenset({("n1", "n9")})), "unknown node"),
    "held, acknowledged on arrival": (lambda s: dataclasses.replace(s, consumers=s.consumers.set(
        "c3", dataclasses.replace(s.consumers["c3"], manual_ack=False))), "acknowledges each as it takes it"),
    "held and waiting": (lambda s: with_queue(s, ("n2", "a1"), pending=s.consumers["c3"].held),
                         "holds a message twice, or one that also waits"),
}


@pytest.mark.parametrize("name", sorted(SPEC_CORRUPTIONS))
def test_spec_invariants_name_what_is_wrong(name: str) -> None:
    corrupt, expected = SPEC_CORRUPTIONS[name]
    problems = invariant_violations(corrupt(spec_state()))
    assert any(expected in problem for problem in problems), problems


def test_a_valid_empty_cluster_has_no_problems() -> None:
    assert invariant_violations(initial_state(get_profile("seed"))) == []
