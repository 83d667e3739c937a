"""The invariants every reachable topology state keeps.

Introduction
------------
A state the operations produce is *settled*: its demand is exactly what
:func:`~.demand.compute_demand` derives, every queue registration is on
its broker's dispatch list once, and no waiting message could move. The
checker runs :func:`invariant_violations` after every step; a non-empty
list names each broken fact.
"""

from __future__ import annotations

from .demand import compute_demand
from .model import TopologyState, get_bridge_map, get_parent, is_topic
from .routing import get_eligible


def invariant_violations(state: TopologyState) -> list[str]:
    """What is wrong with ``state``; empty for every state the operations produce."""
    problems: list[str] = []
    for (source, target), connector in state.connectors.items():
        if (source, target) != (connector.source, connector.target):
            problems.append(f"connector {connector.source}->{connector.target} is filed under {source}->{target}")
        if source not in state.brokers or target not in state.brokers:
            problems.append(f"connector {source}->{target} names an unknown broker")
    for broker in state.brokers:
        seen = {broker}
        ancestor = get_parent(state, broker)
        while ancestor is not None:
            if ancestor in seen:
                problems.append(f"tree parents of {broker} form a cycle")
                break
            seen.add(ancestor)
            ancestor = get_parent(state, ancestor)
    if state.demand != compute_demand(state):
        problems.append("demand is not what the topology and consumers derive")
    expected_lists: dict[tuple[str, str], set[str]] = {}
    for reg in state.demand:
        if not is_topic(reg.destination):
            expected_lists.setdefault((reg.broker, reg.destination), set()).add(reg.key)
    for where, keys in expected_lists.items():
        listed = state.dispatch.get(where, ())
        if sorted(listed) != sorted(keys):
            problems.append(f"dispatch list of {where[1]} on {where[0]} is {listed}, registrations are {sorted(keys)}")
    for where in state.dispatch:
        if where not in expected_lists:
            problems.append(f"dispatch list of {where[1]} on {where[0]} has no registrations")
    bridges = get_bridge_map(state)
    ids: list[int] = []
    for broker, held in state.waiting.items():
        if not held:
            problems.append(f"broker {broker} keeps an empty waiting list")
        for message in held:
            ids.append(message.id)
            if message.id >= state.next_message:
                problems.append(f"message {message.id} waits on {broker} but was never sent")
            if is_topic(message.destination):
                problems.append(f"topic message {message.id} waits on {broker}")
            elif get_eligible(state, broker, message, bridges):
                problems.append(f"message {message.id} waits on {broker} although a registration may take it")
    if len(ids) != len(set(ids)):
        problems.append("a message waits in two places")
    return problems
