"""Commands: the operations of the topology domain, as data.

Introduction
------------
Each operation an administrator or a client performs is a frozen dataclass;
``op`` is its name in traces. Brokers are named by short strings and join
with ``add_broker``. Every operation is atomic: the advisories it causes
travel, and the waiting messages it frees move, before the next operation,
so each step ends in a settled network (the spec has no clock).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Union

from ..errors import InvalidCommand
from .model import BridgeConfig, Role, check_destination, check_name


@dataclass(frozen=True)
class AddBroker:
    """Broker ``broker`` starts, with no connectors and no clients."""

    op: ClassVar[str] = "add_broker"
    broker: str

    def __post_init__(self) -> None:
        check_name(self.broker, "broker")


@dataclass(frozen=True)
class Connect:
    """``source`` declares a network connector to ``target`` with the given settings."""

    op: ClassVar[str] = "connect"
    source: str
    target: str
    duplex: bool = True
    config: BridgeConfig = field(default_factory=BridgeConfig)


@dataclass(frozen=True)
class TreeConnect:
    """``source`` declares a tree connector to its parent ``target`` as a leaf or branch (seed 002 rule 2)."""

    op: ClassVar[str] = "tree_connect"
    source: str
    target: str
    role: Role = Role.LEAF


@dataclass(frozen=True)
class Disconnect:
    """``source`` drops the connector it declared to ``target`` (of either design)."""

    op: ClassVar[str] = "disconnect"
    source: str
    target: str


@dataclass(frozen=True)
class Move:
    """Tree broker ``broker`` re-points its tree connector at ``parent``, keeping its role (seed 002: no retuning)."""

    op: ClassVar[str] = "move"
    broker: str
    parent: str


@dataclass(frozen=True)
class SetTtl:
    """Change the consumerTTL and messageTTL of the network connector ``source`` declared to ``target``."""

    op: ClassVar[str] = "set_ttl"
    source: str
    target: str
    consumer_ttl: int
    message_ttl: int

    def __post_init__(self) -> None:
        for name in ("consumer_ttl", "message_ttl"):
            value = getattr(self, name)
            if value < -1 or value == 0:
                raise InvalidCommand(f"{name} {value} must be -1 (unlimited) or at least 1", name)


@dataclass(frozen=True)
class SetReplay:
    """Turn ``replayWhenNoConsumers`` on or off in ``broker``'s queue policy (AMQ-2324)."""

    op: ClassVar[str] = "set_replay"
    broker: str
    enabled: bool


@dataclass(frozen=True)
class Subscribe:
    """A client consumer ``consumer`` opens on ``broker`` for ``destination`` with a JMS priority."""

    op: ClassVar[str] = "subscribe"
    consumer: str
    broker: str
    destination: str
    priority: int = 0

    def __post_init__(self) -> None:
        check_name(self.consumer, "consumer")
        check_destination(self.destination)


@dataclass(frozen=True)
class Unsubscribe:
    """Client consumer ``consumer`` closes; everything its advisories created goes with it."""

    op: ClassVar[str] = "unsubscribe"
    consumer: str


@dataclass(frozen=True)
class AddProducer:
    """A producer ``producer`` opens on ``broker`` for ``destination`` (it shapes the spillage metric only)."""

    op: ClassVar[str] = "add_producer"
    producer: str
    broker: str
    destination: str

    def __post_init__(self) -> None:
        check_name(self.producer, "producer")
        check_destination(self.destination)


@dataclass(frozen=True)
class RemoveProducer:
    """Producer ``producer`` closes."""

    op: ClassVar[str] = "remove_producer"
    producer: str


@dataclass(frozen=True)
class Send:
    """A client sends one message to ``destination`` at ``broker``."""

    op: ClassVar[str] = "send"
    broker: str
    destination: str

    def __post_init__(self) -> None:
        check_destination(self.destination)


@dataclass(frozen=True)
class QueryDemand:
    """Ask which brokers hold demand for ``destination`` (a query).

    A query changes nothing; a system under test answers it from SUT protocol version 2 on.
    """

    op: ClassVar[str] = "query_demand"
    query: ClassVar[bool] = True
    destination: str

    def __post_init__(self) -> None:
        check_destination(self.destination)


TopologyCommand = Union[AddBroker, Connect, TreeConnect, Disconnect, Move, SetTtl, SetReplay, Subscribe,
                        Unsubscribe, AddProducer, RemoveProducer, Send, QueryDemand]

COMMAND_TYPES: tuple[type[TopologyCommand], ...] = (AddBroker, Connect, TreeConnect, Disconnect, Move, SetTtl, SetReplay, Subscribe,
                                   Unsubscribe, AddProducer, RemoveProducer, Send, QueryDemand)
