"""The fast topology broker's private invariants: every index against what it indexes.

Introduction
------------
:meth:`FastTopologyBroker.check_valid` calls :func:`find_problems`, which
lists in words every way the broker's redundant structures disagree:

* the broker list and the broker set;
* connectors against links (each connector's bridges, nothing else),
  parents, roles, children and the per-broker design;
* the demand table: each registration filed under its own (broker,
  destination) and key, a conduit one's fields equal to what its members
  give, and the whole table equal to what the spec derives from the same
  topology and consumers;
* dispatch lists: exactly the keys of each queue's registrations, once;
* waiting messages: issued, queue messages, not takeable where they wait.

This module reads the broker's private fields; it belongs to the broker.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brokerspec.spec.topologies import TreeConnector, compute_demand, is_topic

if TYPE_CHECKING:
    from .broker import FastTopologyBroker


def find_problems(broker: FastTopologyBroker) -> list[str]:
    """Every private invariant ``broker`` breaks (empty when it is sound)."""
    return [*_topology_problems(broker), *_demand_problems(broker), *_message_problems(broker)]


def _topology_problems(broker: FastTopologyBroker) -> list[str]:
    found: list[str] = []
    if set(broker._brokers) != broker._known or len(broker._brokers) != len(broker._known):
        found.append(f"broker list {broker._brokers} and broker set {sorted(broker._known)} differ")
    expected_links: set[tuple[str, str]] = set()
    parents: dict[str, str] = {}
    for key, connector in broker._connectors.items():
        if key != (connector.source, connector.target):
            found.append(f"connector {connector.source}->{connector.target} is filed under {key}")
        expected_links.add(key)
        if isinstance(connector, TreeConnector):
            expected_links.add((key[1], key[0]))
            parents[connector.source] = connector.target
            if broker.roles.get(connector.source) is not connector.role:
                found.append(f"role of {connector.source} is {broker.roles.get(connector.source)}, "
                             f"its connector says {connector.role}")
        elif connector.duplex:
            expected_links.add((key[1], key[0]))
    if set(broker._links) != expected_links:
        found.append(f"links {sorted(broker._links)} are not the connectors' bridges {sorted(expected_links)}")
    if broker.parents != parents:
        found.append(f"parents {broker.parents} are not the tree connectors' {parents}")
    for parent, children in broker._children.items():
        for child in children:
            if parents.get(child) != parent:
                found.append(f"{child} is filed as a child of {parent}")
    into: dict[str, list[tuple[str, str]]] = {}
    for pair in sorted(broker._links):
        into.setdefault(pair[1], []).append(pair)
    filed = {remote: [(link.local, link.remote) for link in links] for remote, links in broker._table.into.items()}
    if filed != into:
        found.append(f"bridges by remote broker {filed} are not the links in order {into}")
    suppressing = {topic for topic in (False, True) for link in broker._links.values()
                   if (link.config.suppress_duplicate_topics if topic else link.config.suppress_duplicate_queues)}
    if broker._table.suppressing != suppressing:
        found.append(f"suppressing kinds {broker._table.suppressing} are not the links' {suppressing}")
    return found


def _demand_problems(broker: FastTopologyBroker) -> list[str]:
    found: list[str] = []
    for place, table in broker._table.regs.items():
        if not table:
            found.append(f"empty registration table kept for {place}")
        for key, reg in table.items():
            if (reg.broker, reg.destination) != place or reg.key != key:
                found.append(f"registration {reg.key} of {reg.destination} on {reg.broker} is filed under {place}/{key}")
            if reg.network and reg.members:
                origins: set[str] = set()
                for _, _, _, member_origins in reg.members.values():
                    origins |= member_origins
                if frozenset(origins) != reg.origins:
                    found.append(f"registration {key} on {reg.broker} stands for {sorted(reg.origins)}, "
                                 f"its members for {sorted(origins)}")
        if not is_topic(place[1]):
            listed = broker._dispatch.get(place, [])
            if sorted(listed) != sorted(table):
                found.append(f"dispatch list of {place[1]} on {place[0]} is {listed}, registrations {sorted(table)}")
    for place in broker._dispatch:
        if place not in broker._table.regs:
            found.append(f"dispatch list kept for {place} with no registrations")
    state = broker.snapshot()
    if state.demand != compute_demand(state):
        found.append("the demand table is not what the spec derives from the topology and consumers")
    return found


def _message_problems(broker: FastTopologyBroker) -> list[str]:
    found: list[str] = []
    for name, held in broker._waiting.items():
        if not held:
            found.append(f"empty waiting list kept for {name}")
        for message in held:
            if message.id >= broker._next_message:
                found.append(f"message {message.id} waits on {name} but was never sent")
            if is_topic(message.destination):
                found.append(f"topic message {message.id} waits on {name}")
            elif broker._eligible(name, message):
                found.append(f"message {message.id} waits on {name} although a registration may take it")
    return found
