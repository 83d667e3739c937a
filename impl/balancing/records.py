"""The fast balancing broker's mutable records: a queue, a node's binding of it, a routing-name group.

Introduction
------------
The spec keeps one list of queues and derives each node's view of it at
every send (``get_bindings``, ``get_group``), rebuilding frozen values as it
goes. Here the views are kept, and changed in place:

* a :class:`QueueRecord` per queue, with its consumers
  (:class:`ConsumerRecord`: paused or started, pushed to or pulling, and
  the messages it holds unacknowledged) in attach order and their
  filters counted (how many consumers have no filter, how many name each
  colour), so "has a consumer whose filter matches" is two lookups (LB-PREFERRED),
  its waiting messages, its consumer position and its redistributor;
* a :class:`Binding` per queue *per node*: what that node's post office holds
  for the queue, with the two flags that depend on the node precomputed:
  whether the queue is local there, and whether the bridge to the queue's
  node is up (LB-DISCONNECTED; always up for a local one);
* a :class:`Group` per node, address and routing name (LB-GROUPS): its bindings in
  creation order and its round-robin position (LB-ROUND-ROBIN).

A position the spec does not list yet (no choice made in that group, or no
message given to that queue's consumers) is 0 with ``kept`` False: the
scan treats it as 0, as the spec's ``positions.get(key, 0)`` does, and the
snapshot leaves it out.

A message is an immutable :class:`Waiting` tuple, made once per send and
shared by every queue it lands on (a rollback that counts a delivery makes
a new one for its queue); a spec ``Message`` is built only by
:meth:`~.broker.FastBalancingBroker.snapshot`. Transacted sessions have
records of their own (:mod:`.sessions`).
"""

from __future__ import annotations

from typing import NamedTuple

from brokerspec.spec.addressing.names import RoutingType
from brokerspec.spec.balancing import BalancingState, Consumer, Forward, Message, PendingSend, QueueState, Session
from brokerspec.spec.frozen import Maker

# The spec's values as the snapshot builds them, from every field in field order (:class:`Maker`).
STATE = Maker(BalancingState)
QUEUE = Maker(QueueState)
CONSUMER = Maker(Consumer)
MESSAGE = Maker(Message)
SESSION = Maker(Session)
PENDING_SEND = Maker(PendingSend)
FORWARD = Maker(Forward)


class Waiting(NamedTuple):
    """A message as the fast broker keeps it: the fields of the spec's ``Message``, in its order.

    ``deliveries`` is the delivery count a rollback gave this reference (``MessageReference.getDeliveryCount``,
    LB-TX-MAX-DELIVERY): a message sent once and shared by several queues has 0 in all of them, and a rolled
    back one is a new tuple in its own queue only.
    """

    id: int
    address: str
    routing_type: RoutingType | None
    color: str | None
    grouped: bool
    fqqn_queue: str | None
    deliveries: int = 0


class ConsumerRecord:
    """A consumer: its queue, its filter (a colour or None), whether its session is paused, whether it pulls
    (window 0: nothing is pushed to it, LB-PULL), for one that acknowledges later what it holds (LB-ACK) and,
    for one whose session is transacted, what it acknowledged in the open transaction (LB-TX-ACK)."""

    __slots__ = ("name", "queue", "filter", "paused", "pull", "manual_ack", "held", "transacted", "acked")

    def __init__(self, name: str, queue: QueueRecord, filter: str | None, pull: bool, manual_ack: bool,
                 transacted: bool) -> None:
        self.name = name
        self.queue = queue
        self.filter = filter
        self.paused = False
        self.pull = pull
        self.manual_ack = manual_ack
        self.held: list[Waiting] = []
        """Taken and not yet acknowledged, in delivery order (always empty unless ``manual_ack``)."""
        self.transacted = transacted
        self.acked: list[Waiting] = []
        """Acknowledged in its session's open transaction, in acknowledgement order (always empty unless
        ``transacted``): still its queue's until the commit (``QueueImpl.acknowledge(tx, ref)``)."""

    def can_take(self, color: str | None) -> bool:
        """Whether a message of ``color`` that lands goes to it: started, not pulling, and its filter matches."""
        return not self.paused and not self.pull and (self.filter is None or self.filter == color)

    def matches(self, color: str | None) -> bool:
        """Whether its filter lets a message of ``color`` through (what a receive looks for)."""
        return self.filter is None or self.filter == color


class QueueRecord:
    """One queue on one node, with its consumers counted by filter."""

    __slots__ = ("node", "name", "address", "routing_type", "filter", "serial", "routing_name", "key",
                 "consumers", "unfiltered", "by_filter", "pending", "consumer_position", "consumer_position_kept",
                 "redistributor", "unmatched", "bindings", "enabled", "purge_on_no_consumers", "configured_filter")

    def __init__(self, node: str, name: str, address: str, routing_type: RoutingType, filter: str | None,
                 serial: int) -> None:
        self.node = node
        self.name = name
        self.address = address
        self.routing_type = routing_type
        self.filter = filter
        self.configured_filter = filter
        """What a queue query reports; an update takes ``filter`` away, not this (LB-UPDATE-FILTER)."""
        self.serial = serial
        self.routing_name = address if routing_type is RoutingType.ANYCAST else name
        """The group it balances in (LB-GROUPS)."""
        self.key = (node, name)
        self.consumers: list[ConsumerRecord] = []
        """In attach order."""
        self.unfiltered = 0
        """How many consumers, paused or not, have no filter."""
        self.by_filter: dict[str, int] = {}
        """Per colour, how many consumers, paused or not, filter on it (never a zero count)."""
        self.pending: list[Waiting] = []
        self.consumer_position = 0
        self.consumer_position_kept = False  # state view: only the snapshot reads the flag (whether it lists the position); no operation does
        self.redistributor: int | None = None
        self.unmatched = False
        """``QueueImpl.hasUnMatchedPending``: set by a message every consumer refused, cleared with the redistributor."""
        self.bindings: dict[str, Binding] = {}
        """Every node's binding of this queue, by node."""
        self.enabled = True
        self.purge_on_no_consumers = False

    def add_consumer(self, consumer: ConsumerRecord) -> None:
        """Attach a consumer last, and count its filter."""
        self.consumers.append(consumer)
        if consumer.filter is None:
            self.unfiltered += 1
        else:
            self.by_filter[consumer.filter] = self.by_filter.get(consumer.filter, 0) + 1

    def remove_consumer(self, consumer: ConsumerRecord) -> None:
        """Detach a consumer, and uncount its filter."""
        self.consumers.remove(consumer)
        if consumer.filter is None:
            self.unfiltered -= 1
        else:
            left = self.by_filter[consumer.filter] - 1
            if left:
                self.by_filter[consumer.filter] = left
            else:
                del self.by_filter[consumer.filter]

    def has_matching_consumer(self, color: str | None) -> bool:
        """``QueueImpl.hasMatchingConsumer``: a consumer's filter, paused or not, matches ``color`` (LB-PREFERRED)."""
        return self.unfiltered > 0 or color in self.by_filter  # equivalent mutants (Gt_NotEq): unfiltered counts attached consumers and is never below 0

    def refused_by_every_filter(self, color: str | None) -> bool:
        """Every consumer answers NO_MATCH for ``color``: all started and none matching (``hasUnMatchedPending``
        is set only then, ARTEMIS-2007; a paused consumer, or a pulling one without credit, answers BUSY first,
        ``ServerConsumerImpl.handle``)."""
        return bool(self.consumers) and all(
            not c.paused and not c.pull and c.filter is not None and c.filter != color for c in self.consumers)

    def held_count(self) -> int:
        """How many messages its consumers hold unacknowledged or acknowledged in an open transaction
        (``QueueImpl.getMessageCount`` counts the delivering ones, ``getDeliveringCount``; LB-TX-ACK)."""
        return sum(len(c.held) + len(c.acked) for c in self.consumers)

    def drops(self) -> bool:
        """Whether a message routing chooses it for vanishes: disabled, or purging without a consumer
        (``QueueImpl.route``; LB-QUEUE-ENABLED, LB-PURGE-ON-NO-CONSUMERS)."""
        return not self.enabled or (self.purge_on_no_consumers and not self.consumers)

    def is_remote_preferred(self, color: str | None) -> bool:
        """``RemoteQueueBindingImpl.isHighAcceptPriority`` for a type other than OFF (LB-PREFERRED, ARTEMIS-2473).

        Some consumer, and no consumer filter recorded or one that matches.
        """
        return bool(self.consumers) and (not self.by_filter or color in self.by_filter)


class Binding:
    """A node's binding of a queue: local there or remote, and whether its bridge is up."""

    __slots__ = ("queue", "local", "connected")

    def __init__(self, queue: QueueRecord, local: bool, connected: bool) -> None:
        self.queue = queue
        self.local = local
        self.connected = connected


class Group:
    """A node's routing-name group of one address: its bindings in creation order and its position (LB-ROUND-ROBIN)."""

    __slots__ = ("node", "address", "routing_name", "members", "position", "kept")

    def __init__(self, node: str, address: str, routing_name: str) -> None:
        self.node = node
        self.address = address
        self.routing_name = routing_name
        self.members: list[Binding] = []
        self.position = 0
        self.kept = False  # state view: only the snapshot reads the flag (whether it lists the position); no operation does
        """Whether a choice has stored the position, so the spec lists it."""
