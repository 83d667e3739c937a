"""Outcomes: what each load-balancing operation results in, and where every message went.

Introduction
------------
The observation is the point of this domain: for each message, the node and
queue it lands on and the consumer it reaches (or that it waits there).
Every successful outcome carries the *events* of its step in order:

* :class:`Delivered` - a message reached a queue, and the consumer it went
  to, or None when it waits in the queue;
* :class:`Redistributed` - a waiting message left its queue; its copy, with
  a new message ID, went to another queue (a :class:`Delivered` for the
  copy follows);
* :class:`Dropped` - a waiting message went with its deleted queue;
* :class:`Returned` - a message a closing consumer held unacknowledged is
  back in its queue (where it waits, or a :class:`Delivered` follows).

The events of one send's first routing are listed by (node, queue), since
the order in which a broker visits groups is not part of the semantics.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import ClassVar, Union

from ..addressing.names import RoutingType
from ..outcome import Outcome


class RoutingStatus(Enum):
    """The send's ``RoutingStatus`` (LB-UNROUTED-STATUS)."""

    OK = "OK"
    NO_BINDINGS = "NO_BINDINGS"


class Refusal(Enum):
    """Why an operation was refused."""

    UNKNOWN_NODE = "UNKNOWN_NODE"
    NODE_EXISTS = "NODE_EXISTS"
    QUEUE_EXISTS = "QUEUE_EXISTS"
    """A queue of that name already exists on that node (queue names are unique per node, LB-QUEUE-PER-NODE)."""
    QUEUE_NOT_FOUND = "QUEUE_NOT_FOUND"
    QUEUE_IN_USE = "QUEUE_IN_USE"
    CONSUMER_EXISTS = "CONSUMER_EXISTS"
    CONSUMER_NOT_FOUND = "CONSUMER_NOT_FOUND"
    NOT_SUPPORTED = "NOT_SUPPORTED"
    """The load-balancing type does not exist in this profile's version."""
    ADDRESS_DOES_NOT_EXIST = "ADDRESS_DOES_NOT_EXIST"
    """An ANYCAST send on a node without a queue of its address, where ``auto-create-queues`` is off (AMQ229203,
    ``PostOfficeImpl.simpleRoute``; LB-AUTO-CREATE)."""
    NOT_PULLING = "NOT_PULLING"
    """A receive by a consumer that does not pull: messages are pushed to it (LB-PULL)."""
    NOT_DELIVERED = "NOT_DELIVERED"
    """An acknowledgement of a message the consumer does not hold (``ServerConsumerImpl.acknowledge`` throws
    ActiveMQIllegalStateException; LB-ACK)."""
    NOT_TRANSACTED = "NOT_TRANSACTED"
    """A commit, a rollback or a transacted send naming a consumer whose session is not transacted (LB-TX-COMMIT,
    LB-TX-SEND)."""
    SESSION_NOT_FOUND = "SESSION_NOT_FOUND"
    """A commit or a rollback of a session no transacted send or consumer opened (LB-TX-COMMIT)."""
    SESSION_EXISTS = "SESSION_EXISTS"
    """An attach under the name of a producer session: sessions and consumers share one set of names."""
    ROLLBACK_ONLY = "ROLLBACK_ONLY"
    """A commit of a session whose transaction a failed acknowledgement marked rollback-only: it rolls back
    instead (``TransactionImpl.commit``, ActiveMQTransactionRolledBackException; LB-TX-COMMIT)."""
    SESSION_ON_OTHER_NODE = "SESSION_ON_OTHER_NODE"
    """A transacted send on a node other than its session's: a session is connected to one node (LB-TX-SEND)."""
    BAD_VALUE = "BAD_VALUE"
    """A tick count below 1, or a link from a node to itself. (A redistribution delay below -1 is no bad
    value: Artemis takes any long and redistributes at once for every delay but -1 that is not positive.)"""


@dataclass(frozen=True)
class Delivered:
    """Message ``message`` reached ``queue`` on ``node``; ``consumer`` took it, or None: it waits there."""

    kind: ClassVar[str] = "delivered"
    message: int
    node: str
    queue: str
    consumer: str | None


@dataclass(frozen=True)
class Redistributed:
    """Waiting message ``message`` left ``queue`` on ``node``; its copy ``copy`` went to ``to_queue`` on ``to_node``."""

    kind: ClassVar[str] = "redistributed"
    message: int
    node: str
    queue: str
    copy: int
    to_node: str
    to_queue: str


@dataclass(frozen=True)
class Dropped:
    """Waiting message ``message`` was deleted with its queue."""

    kind: ClassVar[str] = "dropped"
    message: int
    node: str
    queue: str


@dataclass(frozen=True)
class Returned:
    """Message ``message``, held by a consumer that closed, or acknowledged or held in a transaction that rolled
    back, is back in ``queue`` on ``node`` (LB-CLOSE-RETURNS, LB-TX-ROLLBACK)."""

    kind: ClassVar[str] = "returned"
    message: int
    node: str
    queue: str


Event = Union[Delivered, Redistributed, Dropped, Returned]
EVENT_TYPES: tuple[type, ...] = (Delivered, Redistributed, Dropped, Returned)


@dataclass(frozen=True)
class Sent(Outcome):
    """The send was routed with ``status``; ``message`` is its new ID; ``events`` say where it and others went."""

    kind: ClassVar[str] = "sent"
    message: int
    status: RoutingStatus
    events: tuple[Event, ...] = ()


@dataclass(frozen=True)
class Done(Outcome):
    """The operation did what it says; ``events`` are the deliveries and moves it caused."""

    kind: ClassVar[str] = "done"
    events: tuple[Event, ...] = ()


@dataclass(frozen=True)
class Refused(Outcome):
    """The operation was refused and changed nothing."""

    kind: ClassVar[str] = "refused"
    reason: Refusal


@dataclass(frozen=True)
class Failed(Outcome):
    """The operation failed with ``reason`` after it had changed the cluster; ``events`` say how: an
    acknowledgement of a message the consumer does not hold gives back what it held (LB-ACK), a commit of a
    rollback-only transaction rolls it back (LB-TX-COMMIT)."""

    kind: ClassVar[str] = "failed"
    reason: Refusal
    events: tuple[Event, ...] = ()


@dataclass(frozen=True)
class QueueQueried(Outcome):
    """What a queue query found on one node.

    When the queue ``exists``: its ``address``, ``routing_type`` and ``filter`` (a colour or None), how many
    messages it has (``messages``: waiting ones and those its consumers hold unacknowledged, as
    ``QueueImpl.getMessageCount`` counts delivering ones), how many consumers it has (``consumers``, paused ones included) and its
    ``enabled`` and ``purge_on_no_consumers`` attributes.
    Otherwise every other field keeps its default.
    """

    kind: ClassVar[str] = "queue_queried"
    exists: bool
    address: str | None = None
    routing_type: RoutingType | None = None
    filter: str | None = None
    messages: int = 0
    consumers: int = 0
    enabled: bool = True
    purge_on_no_consumers: bool = False


BalancingOutcome = Union[Sent, Done, Refused, Failed, QueueQueried]
OUTCOME_TYPES: tuple[type[Outcome], ...] = (Sent, Done, Refused, Failed, QueueQueried)
