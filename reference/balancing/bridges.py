"""Cluster bridges: how a message crosses to another node, and the duplicate IDs that keep it from crossing twice.

Introduction
------------
A :class:`Bridge` is the ``ClusterConnectionBridge`` from one node to a
peer. It is up or down (``connected``, what a remote binding answers to
``isConnected()``, LB-DISCONNECTED), and it carries every message the node
routes to the peer's queues: a send routed to a remote binding (at the send,
or at the commit of a transacted one, :mod:`.sessions`) and a
redistributor's copy. One message for several queues of the peer crosses
once, naming each queue by its ID (``RemoteQueueBindingImpl.route`` adds the
IDs to the message, ``_AMQ_ROUTE_TO``).

Before it sends, the bridge sets the duplicate ID ``_AMQ_BRIDGE_DUP``: the
sending node and the message's own ID (``BridgeImpl.beforeForwardingNoCopy``,
``getDuplicateBytes``). The peer's post office checks it in its cache
``BRIDGE.<address>`` (a :class:`DuplicateIDCache`, ``PostOfficeImpl.checkBridgeDuplicateID``):
one it holds already is dropped without a word, a new one is recorded, the
oldest evicted past :data:`ID_CACHE_SIZE`. A redistributed copy has an ID of
its own, so a message going back and forth is new on every hop
(``MessageRedistributionTest.testBackAndForth``; ARTEMIS-4312). A node
forgets an address's cache when the address loses its last binding, a
matching wildcard queue's counting too (``PostOfficeImpl.removeBinding`` ->
``deleteDuplicateCache``).

The bridge keeps the last message it forwarded (``last_forwarded``, the
reference it has no confirmation of). :meth:`Bridge.resend` is what it does
after it reconnects: it sends that message again, with the same duplicate
ID, so the peer drops it (rule LB-BRIDGE-DUP); a queue deleted since has
gone with its share, and a bridge that is down sends nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from brokerspec.spec.balancing import Forward

from .messages import CoreMessage

if TYPE_CHECKING:
    from .cluster import ClusterConnection

ID_CACHE_SIZE = 20000
"""``id-cache-size`` (``ActiveMQDefaultConfiguration.DEFAULT_ID_CACHE_SIZE``), the bridge caches' size too."""

BridgeID = tuple[str, int]
"""``_AMQ_BRIDGE_DUP``: the sending node and the forwarded message's ID."""


class DuplicateIDCache:
    """``DuplicateIDCacheImpl`` of one address on one node (``BRIDGE.<address>``): the IDs, oldest first."""

    def __init__(self) -> None:
        self.ids: list[BridgeID] = []

    def contains(self, duplicate_id: BridgeID) -> bool:
        return duplicate_id in self.ids

    def add_to_cache(self, duplicate_id: BridgeID) -> None:
        """Record an ID; past the cache's size the oldest goes."""
        self.ids.append(duplicate_id)
        del self.ids[:-ID_CACHE_SIZE]


@dataclass(frozen=True)
class Forwarded:
    """A message the bridge sent: its duplicate ID and the peer's queues, by (name, ID), it was routed to."""

    bridge_id: BridgeID
    message: CoreMessage
    destinations: tuple[tuple[str, int], ...]


class Bridge:
    """``ClusterConnectionBridge`` from ``node`` to ``peer``: up (``connected``) or down, and what it forwarded last."""

    def __init__(self, node: str, peer: str, cluster: ClusterConnection) -> None:
        self.node = node
        self.peer = peer
        self.cluster = cluster
        self.connected = True
        self.last_forwarded: Forwarded | None = None

    def forward(self, message: CoreMessage, destinations: list[tuple[str, int]]) -> None:
        """``BridgeImpl.handle``: send ``message`` for the peer's ``destinations`` (name, ID) with its duplicate ID.

        It crosses whether the bridge is up or not: the spec lands at once what Artemis would keep in the
        store-and-forward queue until the bridge is back (LB-DISCONNECTED).
        """
        self.last_forwarded = Forwarded((self.node, message.message_id), message, tuple(destinations))
        self.deliver(self.last_forwarded)

    def resend(self) -> None:
        """The bridge reconnected and sends again what it had no confirmation of (``BridgeImpl``, LB-BRIDGE-DUP):
        nothing when it is down, has forwarded nothing, or every queue it was for is gone."""
        forwarded = self.last_forwarded
        if forwarded is None or not self.connected or not self.live_destinations(forwarded):
            return
        self.deliver(forwarded)

    def deliver(self, forwarded: Forwarded) -> None:
        """The peer takes it in: ``checkBridgeDuplicateID``, then each queue of those IDs routes it."""
        self.cluster.nodes[self.peer].post_office.route_from_bridge(forwarded.message, forwarded.bridge_id,
                                                                    forwarded.destinations)

    def live_destinations(self, forwarded: Forwarded) -> list[tuple[str, str]]:
        """(peer, queue) of each queue it was for that still exists (the same ID under the name)."""
        post_office = self.cluster.nodes[self.peer].post_office
        keys = []
        for name, queue_id in forwarded.destinations:
            queue = post_office.get_local_queue(name)
            if queue is not None and queue.id == queue_id:
                keys.append((self.peer, name))
        return keys

    def to_spec(self) -> Forward | None:
        """What it forwarded last, as the spec writes it."""
        forwarded = self.last_forwarded
        if forwarded is None:
            return None
        return Forward(forwarded.bridge_id, forwarded.message.to_spec(), tuple(self.live_destinations(forwarded)))
