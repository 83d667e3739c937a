"""The state of a cluster: nodes, queues, consumers, messages, positions, settings.

Introduction
------------
A cluster is a set of nodes, each with its own post office. A queue lives on
one node; every other node holds a *remote binding* for it, learned the
moment the queue appears (notifications are instantaneous in the spec). So
the bindings of an address on a node are all queues of that address in the
cluster, in the order they were created; those on the node itself are
*local*, the others *remote* (LB-QUEUE-PER-NODE). The spec keeps one list and derives each
node's view from it, which cannot drift.

Bindings are grouped by *routing name* (LB-GROUPS): the address for an ANYCAST
queue, the queue's own name for a MULTICAST queue. Each node keeps one
round-robin position per address and routing name, forgotten when the group
empties (``CopyOnWriteBindings.removeBinding``). Each queue keeps one more
position for choosing among its consumers.

A message that reaches a queue goes to one of the queue's started consumers
whose filter matches it, and is consumed at once; a message no started
consumer matches waits in the queue (``pending``): either no consumer's
filter matches it (it is *unmatched*), or the ones that match are paused
(their session stopped, so they take nothing, though they still count as
matching consumers for routing). Only waiting messages can be
redistributed. Filters are tiny: a filter names one colour, and matches a
message of that colour.

Time is a logical clock advanced by ``tick``; a redistributor is the tick at
which it becomes active (RD-DELAY). No wall clock exists anywhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from ..addressing.names import RoutingType
from ..frozen import FrozenMap
from ..profiles import BalancingOptions, Profile
from .wildcards import binds


class LbType(Enum):
    """``MessageLoadBalancingType`` (seed 003; OFF_WITH_REDISTRIBUTION from 2.19.0, ARTEMIS-1925)."""

    OFF = "OFF"
    STRICT = "STRICT"
    ON_DEMAND = "ON_DEMAND"
    OFF_WITH_REDISTRIBUTION = "OFF_WITH_REDISTRIBUTION"


REDISTRIBUTING = frozenset({LbType.ON_DEMAND, LbType.OFF_WITH_REDISTRIBUTION})
"""The types whose ``allowRedistribute()`` is true (seed 003: ON_DEMAND; H: also OFF_WITH_REDISTRIBUTION)."""


@dataclass(frozen=True)
class Message:
    """A message as routing sees it.

    ``fqqn_queue`` is set when it was sent to ``address::fqqn_queue``;
    ``routing_type`` is the message's routing-type property (None: unset);
    ``color`` is what filters test; ``grouped`` says it carries a group ID.
    ``deliveries`` counts the deliveries of it in this queue that a rollback undid after they were acknowledged
    (the reference's delivery count, ``MessageReference.getDeliveryCount``; LB-TX-MAX-DELIVERY); a
    redistributed copy starts again at 0.
    """

    id: int
    address: str
    routing_type: RoutingType | None = None
    color: str | None = None
    grouped: bool = False
    fqqn_queue: str | None = None
    deliveries: int = 0


@dataclass(frozen=True)
class AddressBalancing:
    """The per-address settings: load-balancing type, redistribution delay in ticks, auto-creation of queues.

    Defaults: ON_DEMAND (the cluster connection default, LB-TYPES), -1, never
    redistribute (``redistribution-delay`` default, ``AddressSettings``), and
    ``auto-create-queues`` off: the domain's addresses make no queue of their
    own unless configured to (Artemis's own default is on; LB-AUTO-CREATE).
    """

    lb_type: LbType = LbType.ON_DEMAND
    redistribution_delay: int = -1
    auto_create_queues: bool = False


@dataclass(frozen=True)
class QueueState:
    """One queue on one node.

    ``serial`` is its place in creation order, which is its place in every
    node's bindings. ``consumers`` are consumer names in attach order.
    ``redistributor`` is the tick at which its redistributor is (or became)
    active, or None when it has none. ``unmatched`` is
    ``QueueImpl.hasUnMatchedPending``: set when a message that arrives (or is
    offered again) finds consumers that all refuse it by their filters while
    the queue has no redistributor, cleared when a redistributor is added or
    a local consumer attaches (``cancelRedistributor``). It is a flag, not a
    property of the waiting messages: pausing a consumer later does not
    clear it, and a message waiting for a paused consumer never sets it,
    since a stopped consumer answers BUSY before its filter is consulted
    (``ServerConsumerImpl.handle``; found against Artemis 2.40.0).
    ``enabled`` and ``purge_on_no_consumers`` are the queue attributes of those names (:attr:`drops`).
    """

    node: str
    name: str
    address: str
    routing_type: RoutingType
    filter: str | None
    serial: int
    consumers: tuple[str, ...] = ()
    pending: tuple[Message, ...] = ()
    redistributor: int | None = None
    unmatched: bool = False
    enabled: bool = True
    purge_on_no_consumers: bool = False
    configured_filter: str | None = None
    """The filter the queue was created with, which a queue query reports: an ``update_queue`` from 2.14.0
    takes the routing ``filter`` away but leaves the queue's configuration saying it (LB-UPDATE-FILTER)."""

    @property
    def drops(self) -> bool:
        """Whether a message routing chooses this queue for is dropped: it is disabled, or purges while it has
        no consumer (``QueueImpl.route``; rules LB-QUEUE-ENABLED, LB-PURGE-ON-NO-CONSUMERS)."""
        return not self.enabled or (self.purge_on_no_consumers and not self.consumers)

    @property
    def routing_name(self) -> str:
        """The group it balances in: its address when ANYCAST, its own name when MULTICAST (LB-GROUPS)."""
        return self.address if self.routing_type is RoutingType.ANYCAST else self.name


@dataclass(frozen=True)
class Consumer:
    """A consumer on a queue, with an optional filter (a colour); a paused one takes no messages.

    ``pull`` is a consumer with window 0 (``consumerWindowSize=0``): it takes a message only when it receives
    (LB-PULL). ``manual_ack`` is a consumer whose client acknowledges later: what it takes it ``held``s, in
    delivery order, until an acknowledgement or its close (LB-ACK, LB-CLOSE-RETURNS). ``transacted``: its
    session is transacted, so what it acknowledges waits in ``acked`` until the session commits or rolls back
    (LB-TX-ACK).
    """

    name: str
    node: str
    queue: str
    filter: str | None = None
    paused: bool = False
    pull: bool = False
    manual_ack: bool = False
    held: tuple[Message, ...] = ()
    transacted: bool = False
    acked: tuple[Message, ...] = ()


@dataclass(frozen=True)
class PendingSend:
    """A transacted send: ``message`` routed to ``queues`` (in landing order) when it was sent (LB-TX-SEND)."""

    message: Message
    queues: tuple[QueueKey, ...]


@dataclass(frozen=True)
class Session:
    """A transacted session on ``node``: a producer session, or a transacted consumer's (named like it), and the
    sends its open transaction holds."""

    node: str
    sends: tuple[PendingSend, ...] = ()
    rollback_only: bool = False
    """A failed acknowledgement marked the transaction rollback-only: its commit rolls it back (LB-TX-COMMIT)."""


@dataclass(frozen=True)
class Forward:
    """What a cluster bridge forwarded last: ``message`` with ``bridge_id`` (sending node, message ID) to
    ``queues`` on its target node (LB-BRIDGE-DUP)."""

    bridge_id: tuple[str, int]
    message: Message
    queues: tuple[QueueKey, ...]


MAX_DELIVERY_ATTEMPTS = 10
"""``max-delivery-attempts`` of every address (``AddressSettings.DEFAULT_MAX_DELIVERY_ATTEMPTS``): a message
whose delivery count reaches it when a rollback returns it is dropped, there being no dead-letter address
(``QueueImpl.checkRedelivery``; LB-TX-MAX-DELIVERY)."""


QueueKey = tuple[str, str]
"""(node, queue name): queue names repeat across nodes, not within one (LB-QUEUE-PER-NODE)."""
GroupKey = tuple[str, str, str]
"""(node, address, routing name): one round-robin position."""


@dataclass(frozen=True)
class BalancingState:
    """The whole cluster."""

    nodes: tuple[str, ...]
    options: BalancingOptions
    queues: FrozenMap[QueueKey, QueueState] = field(default_factory=FrozenMap)
    consumers: FrozenMap[str, Consumer] = field(default_factory=FrozenMap)
    positions: FrozenMap[GroupKey, int] = field(default_factory=FrozenMap)
    consumer_positions: FrozenMap[QueueKey, int] = field(default_factory=FrozenMap)
    settings: FrozenMap[str, AddressBalancing] = field(default_factory=FrozenMap)
    node_settings: FrozenMap[tuple[str, str], AddressBalancing] = field(default_factory=FrozenMap)
    """(node, address) -> the settings one node has of its own, before the cluster-wide ones (LB-TYPES)."""
    down_links: frozenset[tuple[str, str]] = frozenset()
    typed: frozenset[tuple[str, str]] = frozenset()
    """(node, address): the node's bindings of the address have taken the configured type from a remote
    binding (:func:`lb_type_on`, LB-TYPE-ADOPTED)."""
    prefixes: FrozenMap[str, RoutingType] = field(default_factory=FrozenMap)
    """The acceptor routing-type prefixes, the same on every node (LB-PREFIX)."""
    sessions: FrozenMap[str, Session] = field(default_factory=FrozenMap)
    """The transacted sessions by name: producer sessions and transacted consumers' (LB-TX-SEND, LB-TX-ACK)."""
    bridge_ids: FrozenMap[tuple[str, str], tuple[tuple[str, int], ...]] = field(default_factory=FrozenMap)
    """(node, address) -> the bridge duplicate IDs (sending node, message ID) the node took in for the address
    over the cluster bridge, oldest first: its cache ``BRIDGE.<address>`` (LB-BRIDGE-DUP)."""
    forwarded: FrozenMap[tuple[str, str], Forward] = field(default_factory=FrozenMap)
    """(node, peer) -> what the bridge from node to peer forwarded last, which a :class:`~.commands.Resend`
    sends again."""
    clock: int = 0
    next_message: int = 1
    next_serial: int = 1


FIRST_NODE = "n1"


def initial_state(profile: Profile) -> BalancingState:
    """A cluster of one node, ``n1``, with nothing on it."""
    return BalancingState(nodes=(FIRST_NODE,), options=profile.balancing)


def get_settings(state: BalancingState, address: str, node: str | None = None) -> AddressBalancing:
    """The settings of ``address`` on ``node``: its own, else the cluster's, else the defaults (LB-TYPES)."""
    own = state.node_settings.get((node, address)) if node is not None else None
    return own if own is not None else state.settings.get(address, AddressBalancing())


def lb_type_on(state: BalancingState, node: str, address: str) -> LbType:
    """The type ``node`` routes and redistributes ``address`` under (LB-TYPE-ADOPTED).

    A node's bindings of an address start as OFF and take the configured type when a remote binding joins
    them, keeping it until the address has no bindings left (``BindingsImpl``: initial
    ``MessageLoadBalancingType.OFF``, ``addBinding`` adopts a ``RemoteQueueBinding``'s type, ARTEMIS-3009). The
    spec counts a remote binding as having joined when it is one now, or was recorded in :attr:`BalancingState.typed`
    when a queue of the address (or of a wild address matching an address that has queues of its own) was made
    on another node, or when the node joined.
    """
    if (node, address) in state.typed or any(q.node != node for q in get_bindings(state, address)):
        return get_settings(state, address, node).lb_type
    return LbType.OFF


def get_bindings(state: BalancingState, address: str) -> tuple[QueueState, ...]:
    """Every queue of ``address`` in the cluster, in creation order: any node's bindings of it (LB-QUEUE-PER-NODE).

    With wildcard routing, a plain address's bindings also hold the queues of every wild address matching it
    (:func:`~.wildcards.binds`, LB-WILDCARD-BINDINGS). Artemis copies those into a plain address's bindings
    when it first routes there, in the order of a hash map keyed by binding ID; the spec keeps creation order.
    """
    options = state.options
    return tuple(sorted((q for q in state.queues.values() if binds(options, q.address, address)),
                        key=lambda q: q.serial))


def get_group(state: BalancingState, address: str, routing_name: str) -> tuple[QueueState, ...]:
    """The members of one routing-name group, in creation order (LB-GROUPS)."""
    return tuple(q for q in get_bindings(state, address) if q.routing_name == routing_name)


def get_groups(bindings: tuple[QueueState, ...]) -> dict[str, tuple[QueueState, ...]]:
    """An address's bindings (:func:`get_bindings`) by routing name: each name's :func:`get_group`,
    the names in order of their first member."""
    groups: dict[str, list[QueueState]] = {}
    for queue in bindings:
        groups.setdefault(queue.routing_name, []).append(queue)
    return {name: tuple(members) for name, members in groups.items()}


def get_routing_names(state: BalancingState, address: str) -> tuple[str, ...]:
    """The routing names of ``address``'s groups, in order of their first member."""
    return tuple(get_groups(get_bindings(state, address)))


def is_connected(state: BalancingState, node: str, queue: QueueState) -> bool:
    """Whether ``node``'s binding for ``queue`` is connected: local ones always are (LB-DISCONNECTED)."""
    return queue.node == node or (node, queue.node) not in state.down_links


def matches(filter_color: str | None, message: Message) -> bool:
    """A filter matches a message when it is absent or names the message's colour."""
    return filter_color is None or filter_color == message.color


def consumers_of(state: BalancingState, queue: QueueState) -> tuple[Consumer, ...]:
    """The consumers of ``queue`` in attach order."""
    return tuple(state.consumers[name] for name in queue.consumers)


def has_matching_consumer(state: BalancingState, queue: QueueState, message: Message) -> bool:
    """``QueueImpl.hasMatchingConsumer``: some consumer's filter matches, paused or not (LB-PREFERRED, local)."""
    return any(matches(c.filter, message) for c in consumers_of(state, queue))


def can_take(consumer: Consumer, message: Message) -> bool:
    """Whether ``consumer`` takes ``message`` as it lands: started, not pulling, and its filter matches.

    A pulling consumer has no credit between its receives: ``ServerConsumerImpl.handle`` answers BUSY (LB-PULL).
    """
    return not consumer.paused and not consumer.pull and matches(consumer.filter, message)


def refused_by_every_filter(state: BalancingState, queue: QueueState, message: Message) -> bool:
    """Whether every consumer of ``queue`` answers NO_MATCH for ``message``: all started, no filter matches.

    ``QueueImpl.deliver`` flags ``hasUnMatchedPending`` only then (ARTEMIS-2007);
    a paused consumer, and a pulling one without credit, answers BUSY first (``ServerConsumerImpl.handle``).
    """
    consumers = consumers_of(state, queue)
    return bool(consumers) and all(not c.paused and not c.pull and not matches(c.filter, message)
                                   for c in consumers)


def is_remote_preferred(state: BalancingState, queue: QueueState, message: Message, lb_type: LbType) -> bool:
    """``RemoteQueueBindingImpl.isHighAcceptPriority`` (LB-PREFERRED).

    False without consumers or under OFF; otherwise true when no consumer
    filter is recorded, or any recorded one matches. A consumer without a
    filter records nothing (ARTEMIS-2473), so one filtered consumer beside
    an unfiltered one still decides.
    """
    consumers = consumers_of(state, queue)
    if not consumers or lb_type is LbType.OFF:
        return False
    filters = [c.filter for c in consumers if c.filter is not None]
    return not filters or any(matches(f, message) for f in filters)


def is_preferred(state: BalancingState, node: str, queue: QueueState, message: Message, lb_type: LbType) -> bool:
    """High accept priority of ``node``'s binding for ``queue`` (LB-PREFERRED)."""
    if queue.node == node:
        return has_matching_consumer(state, queue, message)
    return is_remote_preferred(state, queue, message, lb_type)


def invariant_violations(state: BalancingState) -> list[str]:
    """What is wrong with ``state``; empty for every state the operations produce."""
    problems: list[str] = []
    serials = [q.serial for q in state.queues.values()]
    if len(set(serials)) != len(serials):
        problems.append("two queues share a creation serial")
    for key, queue in state.queues.items():
        if key != (queue.node, queue.name):
            problems.append(f"queue {queue.name} on {queue.node} is filed under {key}")
        if queue.node not in state.nodes:
            problems.append(f"queue {queue.name} is on unknown node {queue.node}")
        if queue.serial >= state.next_serial:
            problems.append(f"queue {queue.name} on {queue.node} has a serial not yet issued")
        ids = [m.id for m in queue.pending]
        if len(set(ids)) != len(ids):
            problems.append(f"a message waits twice on {queue.node}/{queue.name}")
        consumers = consumers_of(state, queue) if queue.pending else ()
        for message in queue.pending:
            if message.id >= state.next_message:
                problems.append(f"message {message.id} was never issued")
            if any(can_take(c, message) for c in consumers):
                problems.append(f"message {message.id} waits on {queue.node}/{queue.name} beside a started "
                                "consumer that matches it")
        for name in queue.consumers:
            consumer = state.consumers.get(name)
            if consumer is None or (consumer.node, consumer.queue) != key:
                problems.append(f"queue {queue.name} on {queue.node} lists consumer {name} that is not its own")
    for name, consumer in state.consumers.items():
        owner = state.queues.get((consumer.node, consumer.queue))
        if owner is None or name not in owner.consumers:
            problems.append(f"consumer {name} is not listed by queue {consumer.queue} on {consumer.node}")
        if consumer.held and not consumer.manual_ack:
            problems.append(f"consumer {name} holds messages but acknowledges each as it takes it")
        if consumer.acked and not consumer.transacted:
            problems.append(f"consumer {name} keeps acknowledgements in a transaction it does not have")
        if consumer.transacted != (name in state.sessions):
            problems.append(f"consumer {name} and the session named like it disagree about its transaction")
        held = [m.id for m in (*consumer.held, *consumer.acked)]
        if len(set(held)) != len(held) or (owner is not None and set(held) & {m.id for m in owner.pending}):
            problems.append(f"consumer {name} holds a message twice, or one that also waits in its queue")
    for name, session in state.sessions.items():
        if session.node not in state.nodes:
            problems.append(f"session {name} is on unknown node {session.node}")
        consumer = state.consumers.get(name)
        if consumer is not None and consumer.node != session.node:
            problems.append(f"session {name} is on {session.node}, its consumer on {consumer.node}")
        for pending in session.sends:
            if pending.message.id >= state.next_message:
                problems.append(f"session {name} holds message {pending.message.id}, which was never issued")
            if any(key not in state.queues for key in pending.queues):
                problems.append(f"session {name} holds message {pending.message.id} for a queue that is gone")
    groups: dict[str, dict[str, tuple[QueueState, ...]]] = {}  # each address's groups, found once
    for node, address, routing_name in state.positions:
        if address not in groups:
            groups[address] = get_groups(get_bindings(state, address))
        if not groups[address].get(routing_name):
            problems.append(f"a position is kept for the empty group {routing_name} of {address} on {node}")
    for node_queue in state.consumer_positions:
        if node_queue not in state.queues:
            problems.append(f"a consumer position is kept for the missing queue {node_queue}")
    for node, _ in state.typed:
        if node not in state.nodes:
            problems.append(f"a type is recorded for the unknown node {node}")
    for node, _ in state.node_settings:
        if node not in state.nodes:
            problems.append(f"settings are kept for the unknown node {node}")
    for link in state.down_links:
        if link[0] not in state.nodes or link[1] not in state.nodes:
            problems.append(f"link {link} names an unknown node")
    return problems
