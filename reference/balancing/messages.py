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
* :class:`LogicalClock` replaces the scheduled executor that runs a
  delayed redistributor (RD-DELAY): time only moves when a ``tick`` command says
  so, and no wall clock exists anywhere.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from brokerspec.spec.addressing.names import RoutingType
from brokerspec.spec.balancing import Message

GROUP_ID = "group"
"""The group ID a grouped send carries; only its presence matters to redistribution (RD-GROUPED)."""


@dataclass(frozen=True)
class CoreMessage:
    """A message as the post office routes it.

    ``address`` is the plain address; for a send to ``address::queue`` the
    queue part is ``fqqn_queue`` (what ``CompositeAddress.extractQueueName``
    would give). ``group_id`` is None for an ungrouped message.
    """

    message_id: int
    address: str
    routing_type: RoutingType | None = None
    color: str | None = None
    group_id: str | None = None
    fqqn_queue: str | None = None

    def is_fully_qualified(self) -> bool:
        """Whether it was sent to an FQQN (``CompositeAddress.isFullyQualified`` on its address)."""
        return self.fqqn_queue is not None

    def copy(self, new_id: int) -> CoreMessage:
        """``Message.copy(newID)``: the same message under a new ID (seed 003; RD-NEW-ID).

        The copy keeps the original's address (RD-TARGET: HEAD sets the copy's
        address to the message's, ARTEMIS-3223), so an FQQN copy stays one.
        """
        return dataclasses.replace(self, message_id=new_id)

    def to_spec(self) -> Message:
        """The message as the spec writes it."""
        return Message(self.message_id, self.address, self.routing_type, self.color, self.group_id is not None,
                       self.fqqn_queue)


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
