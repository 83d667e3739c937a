"""Messages, filters, ID generators and the logical clock of the reference cluster.

Introduction
------------
Routing looks at very little of a message, and this module holds just that
little, shaped like Artemis's own classes:

* :class:`CoreMessage` stands for ``CoreMessage``: its ID, its address
  (with the queue part of an FQQN kept apart), the routing-type property
  (``_AMQ_ROUTING_TYPE``), a colour for filters to test, and a group ID
  (``_AMQ_GROUP_ID``). A message is never changed once it exists: a queue
  holds a *reference* to it (``MessageReference``), so one multicast
  message can wait in several queues, and redistribution makes a
  :meth:`CoreMessage.copy` with a new ID (seed 003,
  ``PostOfficeImpl.redistribute``: ``message.copy(storageManager.generateID())``).
  The value a queue or a consumer holds *is* that queue's reference, so it
  also carries the reference's delivery count
  (``MessageReference.getDeliveryCount``): a delivery or a cancel makes a
  new value for that one reference, and a multicast message's other queues
  keep theirs (LB-TX-MAX-DELIVERY).
* :class:`Filter` stands for ``FilterImpl``. Real filters are SQL-like
  selectors; here a filter names one colour and matches a message of that
  colour (the spec's filter language, ``spec.balancing.model.matches``).
  :func:`create_filter` follows ``FilterImpl.createFilter``: no filter
  string, no filter object, so ``filter is None or filter.match(m)`` reads
  as it does in ``BindingsImpl``.
* :class:`IDGenerator` stands for the storage manager's ``generateID()``.
  Artemis gives each node its own generator; the spec numbers messages and
  queues across the whole cluster so that a trace can name them, and the
  reference shares one generator of each kind between its nodes to match.
* :class:`DeliveryLog` is what the test's consumers see: deliveries, moves,
  drops and returns, in order, which the broker reads back as an outcome's
  events.
* :class:`LogicalClock` replaces the scheduled executor that runs a
  delayed redistributor (RD-DELAY): time only moves when a ``tick`` command says
  so, and no wall clock exists anywhere.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from brokerspec.spec.addressing.names import RoutingType
from brokerspec.spec.balancing import Delivered, Dropped, Event, Message, Redistributed, Returned
from brokerspec.spec.frozen import Maker

if TYPE_CHECKING:
    from .consumers import ServerConsumer
    from .queues import QueueImpl

MESSAGE = Maker(Message)
"""Spec messages from every field in field order (a lockstep check renders every message after each step)."""

GROUP_ID = "group"
"""The group ID a grouped send carries; only its presence matters to redistribution (RD-GROUPED)."""


@dataclass(frozen=True)
class CoreMessage:
    """A message as the post office routes it.

    ``address`` is the plain address; for a send to ``address::queue`` the
    queue part is ``fqqn_queue`` (what ``CompositeAddress.extractQueueName``
    would give). ``group_id`` is None for an ungrouped message.
    ``delivery_count`` is the count of the queue's reference to it: one more
    for each hand-over to a consumer (``ServerConsumerImpl.handle``:
    ``ref.incrementDeliveryCount()``), one less when a consumer gives it back
    unacknowledged on a clean close or rollback (``updateDeliveryCountForCanceledRef``).
    """

    message_id: int
    address: str
    routing_type: RoutingType | None = None
    color: str | None = None
    group_id: str | None = None
    fqqn_queue: str | None = None
    delivery_count: int = 0

    def is_fully_qualified(self) -> bool:
        """Whether it was sent to an FQQN (``CompositeAddress.isFullyQualified`` on its address)."""
        return self.fqqn_queue is not None

    def copy(self, new_id: int) -> CoreMessage:
        """``Message.copy(newID)``: the same message under a new ID (seed 003; RD-NEW-ID).

        The copy keeps the original's address (RD-TARGET: HEAD sets the copy's
        address to the message's, ARTEMIS-3223), so an FQQN copy stays one. It is
        a new reference wherever it lands: its delivery count starts at 0.
        """
        return dataclasses.replace(self, message_id=new_id, delivery_count=0)

    def with_delivery_count(self, change: int) -> CoreMessage:
        """This reference after ``incrementDeliveryCount`` (``change`` 1) or ``decrementDeliveryCount`` (-1)."""
        return dataclasses.replace(self, delivery_count=self.delivery_count + change)

    def to_spec(self, in_flight: bool = False, seen: Message | None = None) -> Message:
        """The message as the spec writes it (``seen`` when it is equal: see :class:`~brokerspec.spec.frozen.Maker`).

        The spec counts only the deliveries a rollback undid (``Message.deliveries``); a reference
        ``in_flight`` (held by a consumer, or acknowledged in a transaction not yet ended) also counts the
        delivery under way, which the spec leaves out.
        """
        return MESSAGE.like(seen, self.message_id, self.address, self.routing_type, self.color,
                            self.group_id is not None, self.fqqn_queue, self.delivery_count - in_flight)


@dataclass(frozen=True)
class Filter:
    """``FilterImpl`` reduced to one colour: it matches a message of that colour."""

    filter_string: str

    def match(self, message: CoreMessage) -> bool:
        """``Filter.match``: does the message have this filter's colour?"""
        return message.color == self.filter_string


def create_filter(filter_string: str | None) -> Filter | None:
    """``FilterImpl.createFilter``: None when there is no filter string, else the filter.

    Artemis also returns None for an empty string. In this model's filter
    language every string names a colour, so only a missing filter is no
    filter (as in the spec's ``matches``).
    """
    return None if filter_string is None else Filter(filter_string)


def matches(filter: Filter | None, message: CoreMessage) -> bool:
    """``filter == null || filter.match(message)``, the idiom of ``BindingsImpl`` and ``QueueImpl``."""
    return filter is None or filter.match(message)


class IDGenerator:
    """``StorageManager.generateID()``: increasing numbers from 1, one generator per kind of thing."""

    def __init__(self) -> None:
        self.next_id = 1

    def generate_id(self) -> int:
        """Hand out the next number."""
        number = self.next_id
        self.next_id += 1
        return number


class LogicalClock:
    """The cluster's time, in ticks; a delayed redistributor waits for it (RD-DELAY)."""

    def __init__(self) -> None:
        self.now = 0

    def advance(self, ticks: int) -> None:
        """Let ``ticks`` ticks pass."""
        self.now += ticks


class DeliveryLog:
    """What the clients saw during one command, in order: deliveries, moves, drops and returns."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def delivered(self, message: CoreMessage, queue: QueueImpl, consumer: ServerConsumer | None) -> None:
        """``message`` reached ``queue``; ``consumer`` took it, or None: it waits there."""
        self.events.append(Delivered(message.message_id, queue.node, queue.name,
                                     None if consumer is None else consumer.name))

    def redistributed(self, message: CoreMessage, queue: QueueImpl, copy: CoreMessage, to_node: str,
                      to_queue: str) -> None:
        """``message`` left ``queue``; its ``copy`` went to ``to_queue`` on ``to_node``."""
        self.events.append(Redistributed(message.message_id, queue.node, queue.name, copy.message_id, to_node,
                                         to_queue))

    def dropped(self, message: CoreMessage, queue: QueueImpl) -> None:
        """``message`` left ``queue`` for good: the queue was deleted or purged, or the message ran out of
        delivery attempts."""
        self.events.append(Dropped(message.message_id, queue.node, queue.name))

    def returned(self, message: CoreMessage, queue: QueueImpl) -> None:
        """``message``, held by a consumer that closed or given back by a rollback, is back in ``queue``."""
        self.events.append(Returned(message.message_id, queue.node, queue.name))

    def drain(self) -> tuple[Event, ...]:
        """The events so far, and a fresh start."""
        events, self.events = tuple(self.events), []
        return events
