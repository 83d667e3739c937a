"""Shared helpers for the load-balancing tests: running scripts through the spec, and a command strategy."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

from brokerspec.spec import get_profile
from brokerspec.spec.addressing import RoutingType
from brokerspec.spec.balancing import (
    Ack,
    Receive,
    AddNode,
    Attach,
    BalancingCommand,
    BalancingOutcome,
    BalancingState,
    Close,
    Configure,
    CreateQueue,
    DeleteQueue,
    Delivered,
    Done,
    LbType,
    Pause,
    Resume,
    Send,
    Sent,
    SetLink,
    Tick,
    apply,
    initial_state,
    invariant_violations,
)

ANY, MULTI = RoutingType.ANYCAST, RoutingType.MULTICAST


def run(commands: Sequence[BalancingCommand], profile: str = "artemis-latest") -> tuple[BalancingState,
                                                                                       list[BalancingOutcome]]:
    state = initial_state(get_profile(profile))
    outcomes = []
    for command in commands:
        state, outcome = apply(state, command)
        assert invariant_violations(state) == [], (command, invariant_violations(state))
        outcomes.append(outcome)
    return state, outcomes


def landings(outcome: BalancingOutcome) -> list[tuple[str, str, str | None]]:
    assert isinstance(outcome, (Sent, Done))
    return [(e.node, e.queue, e.consumer) for e in outcome.events if isinstance(e, Delivered)]


def cluster(nodes: int, lb_type: LbType, delay: int = -1, address: str = "a1") -> list[BalancingCommand]:
    """``nodes`` nodes, each with an ANYCAST queue named like ``address``."""
    commands: list[BalancingCommand] = [AddNode(f"n{i}") for i in range(2, nodes + 1)]
    commands.append(Configure(address, lb_type, delay))
    commands += [CreateQueue(f"n{i}", address, address, ANY) for i in range(1, nodes + 1)]
    return commands


commands = st.one_of(
    st.builds(AddNode, st.sampled_from(["n2", "n3"])),
    st.builds(CreateQueue, st.sampled_from(["n1", "n2", "n3"]), st.sampled_from(["a1", "a2"]),
              st.sampled_from(["a1", "q1"]), st.sampled_from([ANY, MULTI]), st.sampled_from([None, "red"])),
    st.builds(DeleteQueue, st.sampled_from(["n1", "n2"]), st.sampled_from(["a1", "q1"])),
    st.builds(Attach, st.sampled_from(["c1", "c2"]), st.sampled_from(["n1", "n2", "n3"]),
              st.sampled_from(["a1", "q1"]), st.sampled_from([None, "red", "blue"]), st.none(), st.booleans(),
              st.booleans()),
    st.builds(Close, st.sampled_from(["c1", "c2"])),
    st.builds(Receive, st.sampled_from(["c1", "c2"])),
    st.builds(Ack, st.sampled_from(["c1", "c2"]), st.sampled_from([None, 1, 2, 3])),
    st.builds(Pause, st.sampled_from(["c1", "c2"])),
    st.builds(Resume, st.sampled_from(["c1", "c2"])),
    st.builds(Send, st.sampled_from(["n1", "n2", "n3"]), st.sampled_from(["a1", "a2"]),
              st.sampled_from([None, ANY, MULTI]), st.sampled_from([None, "red", "blue"]), st.booleans(),
              st.sampled_from([None, "a1", "q1"])),
    st.builds(Configure, st.sampled_from(["a1", "a2"]), st.sampled_from(list(LbType)), st.sampled_from([-2, -1, 0, 1])),
    st.builds(SetLink, st.sampled_from(["n1", "n2"]), st.sampled_from(["n1", "n2", "n3"]), st.booleans()),
    st.builds(Tick, st.integers(0, 2)),
)
