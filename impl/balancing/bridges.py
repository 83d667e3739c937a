"""The fast broker's cluster bridges: each crossing checked by its bridge duplicate ID, the last one kept for a resend.

Introduction
------------
:class:`ClusterBridges` is a part of :class:`~.broker.FastBalancingBroker`
(a base class, as :class:`~.sessions.TransactedSessions` is). A message
crosses to another node when a send (or a transaction's commit) is routed to
a remote binding and when a redistributor moves a waiting message's copy.
The bridge sets the duplicate ID ``_AMQ_BRIDGE_DUP``: the sending node and
the forwarded message's own ID (``BridgeImpl.beforeForwardingNoCopy``,
``getDuplicateBytes``). The receiving node checks it in its cache
``BRIDGE.<address>`` (``PostOfficeImpl.checkBridgeDuplicateID``): one it
holds is dropped without a word, a new one recorded, the oldest evicted past
the spec's ``BRIDGE_ID_CACHE_SIZE``. A message routed to several queues of
one node crosses once; a redistributed copy has an ID of its own, so a
message going back and forth is new on every hop
(``MessageRedistributionTest.testBackAndForth``, ARTEMIS-4312; rule
LB-BRIDGE-DUP).

Each cache is a dict used as an ordered set (membership in one lookup, the
oldest first for eviction). Each bridge keeps its last crossing, which a
``Resend`` (``BridgeImpl`` sending again what it had no confirmation of
after a reconnection, ``BridgeReconnectTest``) sends again: its target drops
it by the ID. A node forgets an address's IDs when the cluster has no queue
of that address left and no wildcard queue binding it
(``PostOfficeImpl.removeBinding`` -> ``deleteDuplicateCache``), and a
deleted queue leaves the kept crossings.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from brokerspec.spec import FrozenMap
from brokerspec.spec.balancing import Event, Forward, Refusal, Refused, Resend
from brokerspec.spec.balancing.bridges import BRIDGE_ID_CACHE_SIZE

from .records import FORWARD, MESSAGE, Group, QueueRecord, Waiting

BridgeId = tuple[str, int]
"""(sending node, forwarded message ID): ``_AMQ_BRIDGE_DUP``."""

UNKNOWN_NODE = Refused(Refusal.UNKNOWN_NODE)
BAD_VALUE = Refused(Refusal.BAD_VALUE)


Crossing = tuple[Waiting, tuple[QueueRecord, ...]]
"""What a bridge forwarded last: the message (its bridge ID is the bridge's node and its ID) and the queues of the
target it went to, in key order. A plain tuple: one is made at every crossing."""


class ClusterBridges:
    """The bridge caches and last crossings; the broker provides the nodes, links and landing."""

    _bridge_ids: dict[tuple[str, str], dict[BridgeId, None]]
    _forwarded: dict[tuple[str, str], Crossing]
    _groups: dict[str, dict[str, dict[str, Group]]]
    _down: set[tuple[str, str]]
    _land: Callable[[QueueRecord, Waiting, list[Event]], None]
    _routed_to: Callable[[QueueRecord, Waiting, list[Event]], bool]
    """The broker's own (declared here only, so no code of this class stands in for them)."""

    def _land_from(self, node: str, message: Waiting, queues: Sequence[QueueRecord], events: list[Event],
                   routed: bool = True) -> bool:
        """Land ``message``, routed on ``node``, in ``queues`` (key order): a local one at once, each other node's
        over the bridge, once per node; whether one took it. A local queue that drops it does not take it
        unless not ``routed`` (a transaction's message passed that test at the send); a remote binding always
        does, its node deciding (``RemoteQueueBindingImpl.route``)."""
        taken = False
        crossing: list[QueueRecord] = []  # the queues of the node the message crosses to next
        for queue in queues:
            if crossing and queue.node != crossing[0].node:  # one node's queues are together in key order  # equivalent mutants (NumberReplacer, NotEq_Gt): the queues gathered are all of one node, and in key order a queue of another node sorts after them
                self._cross(node, message, tuple(crossing), events)
                crossing = []
            if queue.node != node:
                crossing.append(queue)
                taken = True
            elif routed:
                taken = self._routed_to(queue, message, events) or taken
            else:
                self._land(queue, message, events)
        if crossing:
            self._cross(node, message, tuple(crossing), events)
        return taken

    def _cross(self, source: str, message: Waiting, queues: tuple[QueueRecord, ...], events: list[Event]) -> None:
        """``message`` crosses from ``source`` to the node of ``queues`` and is routed to each of them there,
        unless that node holds its bridge ID (LB-BRIDGE-DUP); the bridge keeps it for a resend."""
        target = queues[0].node  # equivalent mutants (NumberReplacer): the queues of a crossing are all on one node, so the last one's node is the first one's
        self._forwarded[(source, target)] = (message, queues)
        if self._admit(target, message.address, (source, message.id)):
            for queue in queues:
                self._routed_to(queue, message, events)

    def _admit(self, node: str, address: str, bridge_id: BridgeId) -> bool:
        """Check ``bridge_id`` in ``node``'s cache of ``address``: False for a duplicate, else record it (the
        oldest evicted past ``BRIDGE_ID_CACHE_SIZE``; ``DuplicateIDCacheImpl.addToCache``)."""
        cache = self._bridge_ids.get((node, address))
        if cache is None:
            cache = self._bridge_ids[(node, address)] = {}
        elif bridge_id in cache:
            return False
        cache[bridge_id] = None
        if len(cache) > BRIDGE_ID_CACHE_SIZE:
            del cache[next(iter(cache))]
        return True

    def _forget_address(self, address: str) -> None:
        """The cluster has no binding of ``address`` left: every node drops its bridge IDs of it."""
        for key in [key for key in self._bridge_ids if key[1] == address]:
            del self._bridge_ids[key]

    def _drop_crossings(self, queue: QueueRecord) -> None:
        """``queue`` is deleted: a later resend of a crossing that reached it does not reach it."""
        for link, (message, queues) in self._forwarded.items():
            if queue in queues:
                self._forwarded[link] = (message, tuple(q for q in queues if q is not queue))

    def _resend(self, command: Resend, events: list[Event]) -> Refused | None:
        """The bridge from ``node`` to ``peer`` sends its last crossing again, which the peer drops by its ID
        (``BridgeImpl`` after a reconnection; LB-BRIDGE-DUP). Nothing when it forwarded nothing or is down."""
        node, peer = command.node, command.peer
        if node not in self._groups or peer not in self._groups:
            return UNKNOWN_NODE
        if node == peer:
            return BAD_VALUE
        crossing = self._forwarded.get((node, peer))
        if crossing is None or (node, peer) in self._down:
            return None
        message, queues = crossing
        if queues and self._admit(peer, message.address, (node, message.id)):
            for queue in queues:
                self._routed_to(queue, message, events)
        return None

    # -- observation ---------------------------------------------------------------------------------

    def _bridge_id_states(self) -> FrozenMap[tuple[str, str], tuple[BridgeId, ...]]:
        """The caches as the spec's, oldest ID first."""
        return FrozenMap({key: tuple(cache) for key, cache in self._bridge_ids.items()})

    def _forwarded_states(self) -> FrozenMap[tuple[str, str], Forward]:
        """The last crossings as the spec's."""
        return FrozenMap({(source, target): FORWARD.new((source, message.id), MESSAGE.new(*message),
                                                         tuple([q.key for q in queues]))
                          for (source, target), (message, queues) in self._forwarded.items()})
