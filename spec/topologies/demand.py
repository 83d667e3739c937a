"""Demand propagation: which registrations every broker holds, as a pure function.

Introduction
------------
A client consumer is a registration on its broker. Every bridge A=>B sees
the registrations of B through B's consumer advisories and may turn each
into a *demand subscription* on A, which is itself a registration on A and
so visible to every bridge into A. That is the whole mechanism
(``DemandForwardingBridgeSupport.serviceRemoteConsumerAdvisory`` and
``addConsumerInfo`` in ActiveMQ 5.17.2); demand is its fixed point, and
:func:`compute_demand` computes it.

For one remote registration ``r`` on B and the bridge A=>B, in the order
``serviceRemoteConsumerAdvisory`` and ``addConsumerInfo`` apply them:

1. consumerTTL: skip when ``len(r.path) >= consumerTTL`` (unless -1);
2. loop check: skip when A is already on ``r.path``;
3. include/exclude filters: skip a destination the bridge does not permit;
4. the candidate has path ``r.path + [B]`` and stands for ``r``'s origins;
5. conduit: a conduit bridge merges the candidate into its existing
   conduit subscription for the destination, unless ``r`` is itself a
   network subscription for a queue (AMQ-6858's
   ``conduitNetworkQueueSubscriptions`` lifts that);
6. duplicate suppression (if the bridge enables it for the destination's
   kind): an existing network subscription on A standing for one of the
   same consumers wins unless the candidate's priority is strictly higher,
   in which case the existing one, and what it caused, is removed;
7. the new registration's priority is the remote one, or with
   ``decreaseNetworkConsumerPriority`` -5 for a path of one broker and
   -5-(n+1) for n brokers.

Tree links follow seed 002 instead of steps 1-3: an advisory goes up to the
parent always, with no TTL (rule 3); it goes down to a child only when it
started at this broker and this broker is a branch or the root (rules 4, 5),
or when it came from above; a branch never passes one child's advisory to
its other children (rule 3). Tree links conduit every subscription: a broker
holds one subscription per link and destination.

Where real brokers depend on timing the spec fixes an order, and documents
it (rule TOPO-NC-ORDER): client consumers are taken in the order they
arrived, and each one's advisories are handled breadth first (shorter paths
first, then by broker and key) before the next consumer's; a conduit
subscription takes its path and priority from its *lead* member, the first
to arrive: the member of the earliest consumer, and among one consumer's
members the shortest path, then the smallest key. ActiveMQ does the same:
``DemandForwardingBridgeSupport.addConsumerInfo`` merges a later remote
consumer into the existing conduit ``DemandSubscription``, whose local
``ConsumerInfo`` (broker path, priority) was built from the first. When a
suppressed subscription must give way, the computation starts again with
that subscription barred. Demand is therefore what a network settles into
when every consumer's advisories are replayed from scratch (as when the
bridges start), in the order the consumers present now arrived.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from .model import (
    Bridge,
    BridgeConfig,
    Consumer,
    Registration,
    Role,
    TopologyState,
    get_bridges,
    get_parent,
    get_role,
    is_topic,
)
from .parts import Connectors, connected_parts, reached_by

PRIORITY_BASE = -5
"""``NetworkBridgeConfiguration.consumerPriorityBase``, as ``doCreateDemandSubscription`` uses it."""


def matches_wildcard(pattern: str, destination: str) -> bool:
    """Whether an ActiveMQ destination wildcard matches ``destination``.

    Both are ``queue://`` or ``topic://`` names; the kinds must agree. In the
    name, ``*`` matches one dot-separated part and ``>`` every remaining part
    (ActiveMQ's ``DestinationFilter``).

    post: not (__return__ and (pattern.startswith("topic://") != destination.startswith("topic://")))
    """
    pattern_kind, _, pattern_name = pattern.partition("://")
    kind, _, name = destination.partition("://")
    if pattern_kind != kind:
        return False
    wanted = pattern_name.split(".")
    parts = name.split(".")
    for index, piece in enumerate(wanted):
        if piece == ">":
            return index < len(parts) or index == 0
        if index >= len(parts) or (piece != "*" and piece != parts[index]):
            return False
    return len(parts) == len(wanted)


def is_permitted(config: BridgeConfig, destination: str) -> bool:
    """Whether the bridge may carry demand for ``destination`` (``isPermissableDestination``).

    Excludes are checked first; an empty include list permits everything.
    """
    if any(matches_wildcard(p, destination) for p in config.exclude):
        return False
    return not config.include or any(matches_wildcard(p, destination) for p in config.include)


def is_within_consumer_ttl(config: BridgeConfig, path: tuple[str, ...]) -> bool:
    """Whether a registration with ``path`` may still become demand across this bridge (consumerTTL).

    pre: config.consumer_ttl == -1 or config.consumer_ttl >= 1
    post: __return__ == (config.consumer_ttl == -1 or len(path) < config.consumer_ttl)
    """
    return config.consumer_ttl == -1 or len(path) < config.consumer_ttl


def is_loop(local: str, path: tuple[str, ...]) -> bool:
    """Whether ``local`` already lies on ``path`` (the loop check: "already routed through this broker once").

    post: __return__ == (local in path)
    """
    return local in path


def compute_priority(config: BridgeConfig, path: tuple[str, ...], remote_priority: int) -> int:
    """The priority of a demand subscription whose brokerPath is ``path`` (``doCreateDemandSubscription``).

    post: (not config.decrease_priority) or __return__ <= PRIORITY_BASE
    post: (not config.decrease_priority) or len(path) > 1 or __return__ == PRIORITY_BASE
    """
    if not config.decrease_priority:
        return remote_priority
    if len(path) > 1:
        return PRIORITY_BASE - (len(path) + 1)
    return PRIORITY_BASE


def can_conduit(config: BridgeConfig, destination: str, remote_is_network: bool) -> bool:
    """Whether a registration may merge into (or found) a conduit subscription (``ConduitBridge.canConduit``).

    post: __return__ <= config.conduit
    """
    return config.conduit and (is_topic(destination) or not remote_is_network or config.conduit_network_queues)


def is_suppressing(config: BridgeConfig, destination: str) -> bool:
    """Whether duplicate suppression applies to ``destination`` on this bridge (``duplicateSuppressionIsRequired``)."""
    return config.suppress_duplicate_topics if is_topic(destination) else config.suppress_duplicate_queues


def is_tree_forwarded(state: TopologyState, bridge: Bridge, remote: Registration) -> bool:
    """Whether a tree link carries ``remote``'s advisory from ``bridge.remote`` to ``bridge.local`` (seed 002 rules 3-5).

    Up to the parent: always. Down to a child: when the registration started
    at the sending broker and that broker is a branch or the root, or when
    it came from the sending broker's own parent.
    """
    sender = bridge.remote
    if get_parent(state, sender) == bridge.local:
        return True
    if remote.via is None:
        return get_role(state, sender) is not Role.LEAF
    return remote.via == get_parent(state, sender)


Ident = tuple[str, str, str]
"""A registration's identity: (broker, destination, key)."""


@dataclass
class _Building:
    """A registration under construction; a conduit subscription collects members."""

    broker: str
    destination: str
    key: str
    via: str | None
    conduit: bool
    members: dict[str, tuple[int, tuple[str, ...], int, frozenset[str]]] = field(default_factory=dict)
    """Remote registration key -> (arrival rank of its consumer, candidate path, candidate priority, origins)."""
    frozen: Registration | None = None
    """What :meth:`freeze` last returned; :meth:`add` forgets it."""

    def add(self, key: str, member: tuple[int, tuple[str, ...], int, frozenset[str]]) -> None:
        """Merge one more remote registration into this (conduit) subscription."""
        self.members[key] = member
        self.frozen = None

    def freeze(self) -> Registration:
        """The registration as it stands: path and priority from the lead member, origins from all."""
        if self.frozen is None:
            if len(self.members) == 1:  # most are no conduit: their one member leads and has every origin
                [(_, path, priority, origins)] = self.members.values()
            else:
                lead = min(self.members, key=lambda k: (self.members[k][0], len(self.members[k][1]), k))
                _, path, priority, _ = self.members[lead]
                origins = frozenset().union(*(member[3] for member in self.members.values()))
            self.frozen = Registration(self.broker, self.destination, self.key, self.via, path, origins, priority,
                                       True, self.conduit)
        return self.frozen


def client_registration(consumer: Consumer) -> Registration:
    """The registration a client consumer is on its own broker: path empty, standing for itself."""
    return Registration(consumer.broker, consumer.destination, consumer.id, None, (), frozenset({consumer.id}),
                        consumer.priority)


def compute_demand(state: TopologyState) -> tuple[Registration, ...]:
    """Every registration of the settled network, sorted by (broker, destination, key).

    Destinations never meet: a registration is offered only to bridges, a
    demand subscription has its remote registration's destination, and a
    conduit merge, a duplicate suppression and a bar each concern one
    destination. So the demand is the union of each destination's, computed
    from the bridges and that destination's consumers in the order they
    arrived (rule TOPO-NC-ORDER ranks consumers only against others of their
    destination); a settled network is one whose connectors or one
    destination's consumers changed, so the others' demand is kept. Each
    destination's is computed over the connectors of the parts of the network
    its consumers are in (:mod:`.parts`), so a connector added or
    changed in another part keeps it too.
    """
    by_destination: dict[str, list[Consumer]] = {}
    for consumer in state.consumers.values():
        by_destination.setdefault(consumer.destination, []).append(consumer)
    if not by_destination:
        return ()
    parts = connected_parts(state.connectors)
    found = [destination_demand(reached_by(state.connectors, parts, consumers), tuple(consumers))
             for consumers in by_destination.values()]
    if len(found) == 1:  # one destination's registrations are sorted already
        return found[0]
    return tuple(sorted((r for registrations in found for r in registrations),
                        key=lambda r: (r.broker, r.destination, r.key)))


@functools.lru_cache(maxsize=1024)
def destination_demand(connectors: Connectors,
                       consumers: tuple[Consumer, ...]) -> tuple[Registration, ...]:
    """The registrations the ``consumers`` of one destination cause over ``connectors``, kept for the last 1,024.

    An audit replays many histories, and the same small networks recur
    across them: the replay benchmark's 500 histories of topologies reach
    538 distinct (connectors, consumers) pairs, which a cache of 256 missed
    887 times in 4,778 lookups and this one 538 (each entry is a few
    registrations; the connectors and consumers are shared with the states).

    One consumer at a time, in the order they arrived, breadth first from
    each; each level's new registrations are offered to every bridge into
    their broker. A
    suppression that must replace a settled subscription bars it and
    starts again (the barred set only grows, so this ends).
    """
    network = TopologyState(connectors=connectors)
    barred: set[Ident] = set()
    while True:
        result = _propagate(network, consumers, barred)
        if isinstance(result, tuple):
            return result
        barred.add(result.ident)


@dataclass(frozen=True)
class _Bar:
    """A pass ended because this settled registration loses to a stronger duplicate."""

    ident: Ident


def _propagate(state: TopologyState, consumers: tuple[Consumer, ...],
               barred: set[Ident]) -> tuple[Registration, ...] | _Bar:
    """One breadth-first pass over the advisories of ``consumers`` over the connectors of ``state``; the
    registrations, or the one to bar and start again without."""
    into: dict[str, list[Bridge]] = {}
    for bridge in get_bridges(state):
        into.setdefault(bridge.remote, []).append(bridge)
    building: dict[Ident, _Building] = {}
    settled: dict[Ident, Registration] = {}
    for rank, consumer in enumerate(consumers):
        frontier = [client_registration(consumer)]
        while frontier:
            for reg in frontier:
                settled[(reg.broker, reg.destination, reg.key)] = reg
            created: list[Ident] = []
            for remote in frontier:
                for bridge in into.get(remote.broker, ()):
                    offered = _offer(state, bridge, remote, building, settled, barred, rank)
                    if isinstance(offered, _Bar):
                        return offered
                    if offered is not None and offered not in created:
                        created.append(offered)
            frontier = [building[ident].freeze() for ident in created if ident in building]
    final = dict(settled)
    for ident, item in building.items():
        final[ident] = item.freeze()
    return tuple(final[ident] for ident in sorted(final))


def _offer(state: TopologyState, bridge: Bridge, remote: Registration, building: dict[Ident, _Building],
           settled: dict[Ident, Registration], barred: set[Ident], rank: int) -> Ident | _Bar | None:
    """Offer ``remote`` (on ``bridge.remote``) to ``bridge`` in the pass of the ``rank``-th consumer to arrive.

    The identity of a newly created registration, if any."""
    config = bridge.config
    if bridge.tree:
        if not is_tree_forwarded(state, bridge, remote) or is_loop(bridge.local, remote.path):
            return None
    elif (not is_within_consumer_ttl(config, remote.path) or is_loop(bridge.local, remote.path)
          or not is_permitted(config, remote.destination)):
        return None
    path = remote.path + (bridge.remote,)
    priority = compute_priority(config, path, remote.priority)
    member = (rank, path, priority, remote.origins)
    conduit = can_conduit(config, remote.destination, remote.network)
    prefix = f"{bridge.local}<{bridge.remote}:"
    key = prefix + ("*" if conduit else remote.key)
    ident = (bridge.local, remote.destination, key)
    if ident in barred:
        return None
    if conduit and ident in building:
        building[ident].add(remote.key, member)
        return None
    if is_suppressing(config, remote.destination):
        for other_ident, other in list(building.items()):
            if other.broker != bridge.local or other.destination != remote.destination:
                continue
            existing = other.freeze()
            if not existing.origins & remote.origins:
                continue
            if existing.priority >= priority:
                return None
            if other_ident in settled:
                return _Bar(other_ident)
            del building[other_ident]
    building[ident] = _Building(bridge.local, remote.destination, key, bridge.remote, conduit, {remote.key: member})
    return ident
