"""Commands: the operations of the address-resolution domain, as data.

Introduction
------------
Every operation a client or an administrator performs on the address model
is a frozen dataclass here. Its class attribute ``op`` is the operation's
name in traces and in the conformance protocol; its fields are the
operation's arguments, under the same names. One vocabulary serves the spec,
the reference, the fast implementation and trace files alike.

Names given to ``delete_queue``, ``lookup``, ``send`` and ``consume`` are
*client-supplied*: they may carry a configured routing-type prefix and may be
bare names or FQQNs. Names given to ``create_address`` and ``create_queue``
are the plain names of the entities to create (management operations).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .names import RoutingType


@dataclass(frozen=True)
class CreateAddress:
    """Create an address allowing ``routing_types``."""

    op: ClassVar[str] = "create_address"
    address: str
    routing_types: frozenset[RoutingType]


@dataclass(frozen=True)
class DeleteAddress:
    """Delete an address; with ``force``, delete its queues first."""

    op: ClassVar[str] = "delete_address"
    address: str
    force: bool = False


@dataclass(frozen=True)
class CreateQueue:
    """Create queue ``queue`` on ``address`` with ``routing_type``."""

    op: ClassVar[str] = "create_queue"
    address: str
    queue: str
    routing_type: RoutingType


@dataclass(frozen=True)
class DeleteQueue:
    """Delete the queue a client-supplied name (bare or FQQN) resolves to."""

    op: ClassVar[str] = "delete_queue"
    name: str


@dataclass(frozen=True)
class Lookup:
    """Look a queue up by a client-supplied name (bare or FQQN)."""

    op: ClassVar[str] = "lookup"
    name: str


@dataclass(frozen=True)
class Send:
    """Send a message to an address or an FQQN, with an optional routing type."""

    op: ClassVar[str] = "send"
    name: str
    routing_type: RoutingType | None = None


@dataclass(frozen=True)
class Consume:
    """Attach a consumer to the queue a name resolves to, auto-creating when allowed."""

    op: ClassVar[str] = "consume"
    name: str
    routing_type: RoutingType | None = None


@dataclass(frozen=True)
class SetPrefix:
    """Configure (or, with no routing type, remove) an acceptor routing-type prefix."""

    op: ClassVar[str] = "set_prefix"
    prefix: str
    routing_type: RoutingType | None


@dataclass(frozen=True)
class SetAddressSettings:
    """Set the auto-creation settings for an address, or for ``#`` (every other address)."""

    op: ClassVar[str] = "set_address_settings"
    match: str
    auto_create_addresses: bool = True
    auto_create_queues: bool = True
    default_address_routing_type: RoutingType = RoutingType.MULTICAST
    default_queue_routing_type: RoutingType = RoutingType.MULTICAST


@dataclass(frozen=True)
class QueryAddress:
    """Ask whether an address exists, which routing types it allows and which queues it binds (a query).

    A *query* reads without changing anything; a system under test answers it
    from SUT protocol version 2 on (``docs/sut-protocol.md``).
    """

    op: ClassVar[str] = "query_address"
    query: ClassVar[bool] = True
    address: str


AddressingCommand = (
    CreateAddress | DeleteAddress | CreateQueue | DeleteQueue | Lookup | Send | Consume | SetPrefix | SetAddressSettings
    | QueryAddress
)

COMMAND_TYPES: tuple[type[AddressingCommand], ...] = (
    CreateAddress, DeleteAddress, CreateQueue, DeleteQueue, Lookup, Send, Consume, SetPrefix, SetAddressSettings,
    QueryAddress,
)
