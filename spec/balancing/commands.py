"""Commands: the operations of the load-balancing domain, as data.

Introduction
------------
Each operation an administrator, a client or the cluster itself performs is
a frozen dataclass; ``op`` is its name in traces. Nodes are named by short
strings; the cluster starts with node ``n1`` and grows with ``add_node``.
Every operation is atomic and the notifications it causes (a queue or
consumer appearing elsewhere) arrive before the next operation, so each
step ends in a settled cluster. After every step each active redistributor
gets one delivery attempt (RD-DELAY, RD-GROUPED).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Union

from ..addressing.names import RoutingType
from ..errors import InvalidCommand
from .model import LbType


def _check_filter(value: str | None, field: str) -> None:
    """A filter names a colour; the empty string is no colour (Artemis treats an empty filter as none, ARTEMIS-2473)."""
    if value == "":
        raise InvalidCommand(f"a {field} names a colour or is null, not the empty string", field)


@dataclass(frozen=True)
class AddNode:
    """Node ``node`` joins the cluster and learns every queue as a remote binding."""

    op: ClassVar[str] = "add_node"
    node: str


@dataclass(frozen=True)
class CreateQueue:
    """Create queue ``queue`` on ``node``, bound to ``address``, with an optional filter (a colour).

    ``enabled`` false makes a queue that routing may choose but that drops what it is chosen for;
    ``purge_on_no_consumers`` one that does so while it has no consumer, and drops what waits in it when its
    last consumer closes (LB-QUEUE-ENABLED, LB-PURGE-ON-NO-CONSUMERS).
    """

    op: ClassVar[str] = "create_queue"
    node: str
    address: str
    queue: str
    routing_type: RoutingType
    filter: str | None = None
    enabled: bool = True
    purge_on_no_consumers: bool = False

    def __post_init__(self) -> None:
        _check_filter(self.filter, "filter")


@dataclass(frozen=True)
class DeleteQueue:
    """Delete queue ``queue`` on ``node`` with its waiting messages; refused while it has consumers."""

    op: ClassVar[str] = "delete_queue"
    node: str
    queue: str


@dataclass(frozen=True)
class UpdateQueue:
    """Change a live queue's ``enabled`` or ``purge_on_no_consumers`` on ``node`` (None: left as it is).

    The messages already in the queue stay (``ActiveMQServerImpl.updateQueue``).
    """

    op: ClassVar[str] = "update_queue"
    node: str
    queue: str
    enabled: bool | None = None
    purge_on_no_consumers: bool | None = None


@dataclass(frozen=True)
class Attach:
    """Consumer ``consumer`` attaches to queue ``queue`` on ``node``, with an optional filter.

    ``fqqn_address`` set: it attaches by the FQQN ``fqqn_address::queue``, which the core client resolves by
    the queue part alone (``ServerSessionImpl.createConsumer``, rule ADDR-CONSUME-CORE), and which the other
    nodes then use to find their own queue of that name (RD-TRIGGER-FQQN-CONSUMER, ARTEMIS-3918).

    ``pull``: the consumer has window 0 and takes a message only when it receives (LB-PULL); otherwise messages
    are pushed to it as they come (window -1). ``manual_ack``: it holds what it takes until it acknowledges
    (LB-ACK); otherwise each message is acknowledged as it is delivered.

    ``transacted``: the consumer's session is transacted, and the session is named like the consumer: its
    acknowledgements wait in the session's transaction until a :class:`Commit` (LB-TX-ACK), and sends may join
    that transaction (``Send.tx``).
    """

    op: ClassVar[str] = "attach"
    consumer: str
    node: str
    queue: str
    filter: str | None = None
    fqqn_address: str | None = None
    pull: bool = False
    manual_ack: bool = False
    transacted: bool = False

    def __post_init__(self) -> None:
        _check_filter(self.filter, "filter")


@dataclass(frozen=True)
class Receive:
    """Pulling consumer ``consumer`` receives: it takes the first waiting message its filter matches, if any.

    Core ``ClientConsumer.receiveImmediate`` on a consumer of window 0: one credit, one message (LB-PULL).
    """

    op: ClassVar[str] = "receive"
    consumer: str


@dataclass(frozen=True)
class Ack:
    """Consumer ``consumer`` acknowledges what it holds: up to and including ``message``, or all of it (LB-ACK).

    Core acknowledgements are cumulative (``ServerConsumerImpl.acknowledge`` acknowledges every earlier
    delivery of the consumer too).
    """

    op: ClassVar[str] = "ack"
    consumer: str
    message: int | None = None


@dataclass(frozen=True)
class Close:
    """Consumer ``consumer`` closes."""

    op: ClassVar[str] = "close"
    consumer: str


@dataclass(frozen=True)
class Pause:
    """Consumer ``consumer``'s session stops: it takes no messages until resumed, but still counts as a consumer."""

    op: ClassVar[str] = "pause"
    consumer: str


@dataclass(frozen=True)
class Resume:
    """Consumer ``consumer``'s session starts again and takes the waiting messages it matches."""

    op: ClassVar[str] = "resume"
    consumer: str


@dataclass(frozen=True)
class Send:
    """A producer on ``node`` sends one message to ``address``, or to ``address::fqqn_queue``.

    ``routing_type`` is the message's routing-type property (None: unset);
    ``color`` is what filters test; ``grouped`` gives it a group ID.

    ``tx`` names the transacted session the send belongs to: a transacted consumer's, or a producer session on
    ``node`` that the first send naming it opens. Routing is decided at the send; the message reaches its
    queues at the session's :class:`Commit`, and never after a :class:`Rollback` (LB-TX-SEND).
    """

    op: ClassVar[str] = "send"
    node: str
    address: str
    routing_type: RoutingType | None = None
    color: str | None = None
    grouped: bool = False
    fqqn_queue: str | None = None
    tx: str | None = None


@dataclass(frozen=True)
class Commit:
    """Session ``session`` commits: its sends reach their queues, its acknowledgements become final (LB-TX-COMMIT).

    ``session`` is a producer session a transacted send opened, or a transacted consumer (its own session).
    """

    op: ClassVar[str] = "commit"
    session: str


@dataclass(frozen=True)
class Rollback:
    """Session ``session`` rolls back: its sends are discarded, and what its consumer acknowledged or holds goes
    back to the queue (LB-TX-ROLLBACK)."""

    op: ClassVar[str] = "rollback"
    session: str


@dataclass(frozen=True)
class Resend:
    """The cluster bridge from ``node`` to ``peer`` reconnects and sends again the last message it forwarded,
    whose confirmation it lost (``BridgeImpl`` resends unconfirmed references; LB-BRIDGE-DUP).

    A fault a real cluster shows only when a connection fails at the wrong moment: the target drops the copy
    by its bridge duplicate ID, so nothing arrives twice.
    """

    op: ClassVar[str] = "resend"
    node: str
    peer: str


@dataclass(frozen=True)
class Configure:
    """Set ``address``'s load-balancing type, redistribution delay (ticks; -1 never) and ``auto-create-queues``
    on every node, or on ``node`` alone (its own cluster connection and address settings; LB-TYPES,
    LB-AUTO-CREATE).

    On every node, it replaces what a configure on one node set for the address there.
    """

    op: ClassVar[str] = "configure"
    address: str
    lb_type: LbType
    redistribution_delay: int = -1
    node: str | None = None
    auto_create_queues: bool = False


@dataclass(frozen=True)
class SetLink:
    """Connect or disconnect the cluster bridge from ``node`` to ``peer`` (LB-DISCONNECTED)."""

    op: ClassVar[str] = "set_link"
    node: str
    peer: str
    connected: bool


@dataclass(frozen=True)
class SetPrefix:
    """Give every node's acceptor the routing-type prefix ``prefix`` (``anycastPrefix``/``multicastPrefix``), or
    take it away when ``routing_type`` is None (rule LB-PREFIX).

    A send whose address starts with a prefix is routed on the address without it, with the prefix's routing
    type (``PrefixUtil.getAddress``; the first matching prefix in ``HashMap`` order, as ``strip_prefix`` with
    ``PrefixMatch.HASH_MAP`` finds it).
    """

    op: ClassVar[str] = "set_prefix"
    prefix: str
    routing_type: RoutingType | None


@dataclass(frozen=True)
class Tick:
    """Advance the logical clock by ``ticks`` (1 or more)."""

    op: ClassVar[str] = "tick"
    ticks: int = 1


@dataclass(frozen=True)
class QueryQueue:
    """Ask ``node`` about queue ``queue``: its binding, filter, waiting messages and consumers (a query).

    A query changes nothing and gives no redistributor a turn; a system under test answers it from SUT
    protocol version 2 on.
    """

    op: ClassVar[str] = "query_queue"
    query: ClassVar[bool] = True
    node: str
    queue: str


BalancingCommand = Union[AddNode, CreateQueue, DeleteQueue, Attach, Close, Pause, Resume, Send, Configure, SetLink,
                         Tick, QueryQueue, UpdateQueue, SetPrefix, Receive, Ack, Commit, Rollback,
                         Resend]
COMMAND_TYPES: tuple[type[BalancingCommand], ...] = (AddNode, CreateQueue, DeleteQueue, Attach, Close, Pause, Resume,
                                                     Send, Configure, SetLink, Tick, QueryQueue, UpdateQueue,
                                                     SetPrefix, Receive, Ack, Commit, Rollback,
                                                     Resend)
