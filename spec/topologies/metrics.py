"""Metrics that compare the two designs: advisories, subscriptions, spillage, stranded messages, hops.

Introduction
------------
Each metric is a pure function of a settled state (or of a step's events)
and is defined so that a person can count it on a diagram:

``advisories_sent``
    The consumer advisories that cross a bridge *and are acted on*: for
    every registration on a broker B and every bridge A=>B whose tests
    (consumerTTL, loop, filters; for a tree link the role rules) accept it.
    This is the demand propagation traffic; an advisory a non-duplex bridge
    receives and ignores is not counted.
``subscriptions``
    Demand subscriptions per broker (client consumers excluded): the
    forwarding consumers seed 002 says each cost a destination and
    possibly a thread.
``spillage``
    Demand subscriptions no producer can use: a subscription on Z for
    destination D standing for consumers C is *used* when, for some
    producer of D on Y and some consumer of C on X, Z lies on a shortest
    path from Y to X in the graph of connectors (for a tree, on the tree
    path). Every other subscription is spilled; with no producer of D, all
    of D's subscriptions are.
``stranded``
    Queue messages waiting on a broker because nothing there may take them.
``hops``
    For each delivered message, the number of bridges it crossed.

Sources: seed 002 (spillage, resource wastage) and ActiveMQ's consumerTTL
(``DemandForwardingBridgeSupport.serviceRemoteConsumerAdvisory``, AMQ-4607).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from ..frozen import FrozenMap
from .demand import is_loop, is_permitted, is_tree_forwarded, is_within_consumer_ttl
from .model import Bridge, Registration, TopologyState, get_bridges
from .outcomes import Delivered, Event


@dataclass(frozen=True)
class Metrics:
    """The metrics of one settled state (see the module introduction for each definition)."""

    advisories_sent: int
    subscriptions: FrozenMap[str, int]
    spilled: int
    stranded: int

    @property
    def subscriptions_total(self) -> int:
        """Demand subscriptions over all brokers."""
        return sum(self.subscriptions.values())


def count_advisories(state: TopologyState) -> int:
    """Advisories that cross a bridge and are accepted by its tests."""
    into: dict[str, list[Bridge]] = {}
    for bridge in get_bridges(state):
        into.setdefault(bridge.remote, []).append(bridge)
    total = 0
    for reg in state.demand:
        for bridge in into.get(reg.broker, ()):
            if bridge.tree:
                accepted = is_tree_forwarded(state, bridge, reg) and not is_loop(bridge.local, reg.path)
            else:
                accepted = (is_within_consumer_ttl(bridge.config, reg.path) and not is_loop(bridge.local, reg.path)
                            and is_permitted(bridge.config, reg.destination))
            total += accepted
    return total


def count_subscriptions(state: TopologyState) -> FrozenMap[str, int]:
    """Demand subscriptions per broker, for every broker (zero included)."""
    counts = {broker: 0 for broker in state.brokers}
    for reg in state.demand:
        if reg.network:
            counts[reg.broker] += 1
    return FrozenMap(counts)


def _distances(adjacency: dict[str, set[str]], start: str) -> dict[str, int]:
    distance = {start: 0}
    queue = deque([start])
    while queue:
        here = queue.popleft()
        for there in sorted(adjacency.get(here, ())):
            if there not in distance:
                distance[there] = distance[here] + 1
                queue.append(there)
    return distance


def get_spilled(state: TopologyState) -> tuple[Registration, ...]:
    """The demand subscriptions no producer can use (see ``spillage`` above), sorted like ``state.demand``."""
    adjacency: dict[str, set[str]] = {}
    for source, target in state.connectors:
        adjacency.setdefault(source, set()).add(target)
        adjacency.setdefault(target, set()).add(source)
    cache: dict[str, dict[str, int]] = {}

    def distance(a: str, b: str) -> int | None:
        if a not in cache:
            cache[a] = _distances(adjacency, a)
        return cache[a].get(b)

    spilled = []
    for reg in state.demand:
        if not reg.network:
            continue
        used = False
        for producer in state.producers.values():
            if producer.destination != reg.destination:
                continue
            for consumer_id in reg.origins:
                consumer = state.consumers[consumer_id]
                whole = distance(producer.broker, consumer.broker)
                first = distance(producer.broker, reg.broker)
                second = distance(reg.broker, consumer.broker)
                if whole is not None and first is not None and second is not None and first + second == whole:
                    used = True
        if not used:
            spilled.append(reg)
    return tuple(spilled)


def count_stranded(state: TopologyState) -> int:
    """Queue messages waiting on some broker."""
    return sum(len(held) for held in state.waiting.values())


def compute_metrics(state: TopologyState) -> Metrics:
    """All state metrics of a settled state."""
    return Metrics(count_advisories(state), count_subscriptions(state), len(get_spilled(state)),
                   count_stranded(state))


def get_hops(events: Iterable[Event]) -> tuple[int, ...]:
    """The bridges each delivered message (or topic copy) crossed, in event order."""
    return tuple(e.hops for e in events if isinstance(e, Delivered))
