"""Outcomes: what each operation of the address model can result in.

Introduction
------------
Outcomes are values, never exceptions (STYLE point 3). A lookup is
``Resolved``, ``NotFound`` or ``Ambiguous``; a create or delete either
succeeds or is ``Rejected`` with a *reason* that says why in data (the queue
exists, and on which address; the address is missing; ...).

Every outcome carries, outside equality, the ID of the rule that decided it
(``rule``). The spec fills it in; the reference and the fast implementation
may leave it empty; comparisons ignore it. Ambiguity candidates and queue
lists are FQQNs, sorted, so outcomes compare by content.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from ..outcome import Outcome as Outcome
from ..outcome import Reason as Reason
from .names import RoutingType


@dataclass(frozen=True)
class InvalidName(Reason):
    """The name cannot name an address, queue or prefix.

    ``problem`` says why in words, for people; it is free text and never
    compared (a real broker words it its own way), so two refusals of the
    same name are equal whatever their wording.
    """

    kind: ClassVar[str] = "invalid_name"
    name: str
    problem: str = field(compare=False)


@dataclass(frozen=True)
class AddressExists(Reason):
    """An address of that name already exists."""

    kind: ClassVar[str] = "address_exists"
    address: str


@dataclass(frozen=True)
class AddressNotFound(Reason):
    """No address of that name exists (and it may not be auto-created)."""

    kind: ClassVar[str] = "address_not_found"
    address: str


@dataclass(frozen=True)
class AddressHasQueues(Reason):
    """The address still has queues and the delete was not forced."""

    kind: ClassVar[str] = "address_has_queues"
    address: str
    queues: tuple[str, ...]


@dataclass(frozen=True)
class QueueExists(Reason):
    """A queue of that name already exists, on ``address``."""

    kind: ClassVar[str] = "queue_exists"
    queue: str
    address: str


@dataclass(frozen=True)
class QueueNotFound(Reason):
    """No queue answers to that name (and it may not be auto-created)."""

    kind: ClassVar[str] = "queue_not_found"
    name: str


@dataclass(frozen=True)
class AmbiguousName(Reason):
    """The bare name is bound on several addresses; ``candidates`` are their FQQNs."""

    kind: ClassVar[str] = "ambiguous_name"
    name: str
    candidates: tuple[str, ...]


@dataclass(frozen=True)
class RoutingTypeNotAllowed(Reason):
    """The address does not allow the routing type (and may not be widened)."""

    kind: ClassVar[str] = "routing_type_not_allowed"
    address: str
    routing_type: RoutingType
    allowed: frozenset[RoutingType]


@dataclass(frozen=True)
class QueueRoutingTypeMismatch(Reason):
    """An ANYCAST consumer named a MULTICAST queue by its bare name (ARTEMIS-4512)."""

    kind: ClassVar[str] = "queue_routing_type_mismatch"
    address: str
    queue: str
    queue_routing_type: RoutingType
    requested: RoutingType


# --- outcomes ----------------------------------------------------------------------


@dataclass(frozen=True)
class Rejected(Outcome):
    """The command was refused; nothing changed."""

    kind: ClassVar[str] = "rejected"
    reason: Reason


@dataclass(frozen=True)
class Configured(Outcome):
    """A configuration command took effect."""

    kind: ClassVar[str] = "configured"


@dataclass(frozen=True)
class AddressCreated(Outcome):
    """The address was created."""

    kind: ClassVar[str] = "address_created"
    address: str


@dataclass(frozen=True)
class AddressDeleted(Outcome):
    """The address was deleted, with ``removed_queues`` (FQQNs) when forced."""

    kind: ClassVar[str] = "address_deleted"
    address: str
    removed_queues: tuple[str, ...] = ()


@dataclass(frozen=True)
class QueueCreated(Outcome):
    """The queue was created."""

    kind: ClassVar[str] = "queue_created"
    address: str
    queue: str


@dataclass(frozen=True)
class QueueDeleted(Outcome):
    """The queue was deleted."""

    kind: ClassVar[str] = "queue_deleted"
    address: str
    queue: str


@dataclass(frozen=True)
class Resolved(Outcome):
    """The name resolves to exactly one queue."""

    kind: ClassVar[str] = "resolved"
    address: str
    queue: str
    routing_type: RoutingType


@dataclass(frozen=True)
class NotFound(Outcome):
    """No queue answers to the name."""

    kind: ClassVar[str] = "not_found"
    name: str


@dataclass(frozen=True)
class Ambiguous(Outcome):
    """The bare name is bound on several addresses; ``candidates`` are sorted FQQNs."""

    kind: ClassVar[str] = "ambiguous"
    name: str
    candidates: tuple[str, ...]


@dataclass(frozen=True)
class Routed(Outcome):
    """Where a sent message may go.

    ``copies``: the queues (FQQNs) that each get a copy (MULTICAST queues, or
    the one queue an FQQN names). ``anycast_candidates``: the ANYCAST queues
    of which exactly one gets the message; which one is the load-balancing
    domain's business. Both empty: nothing is routed. ``created_address`` and
    ``created_queue`` name what the send auto-created, if anything.
    """

    kind: ClassVar[str] = "routed"
    address: str
    copies: tuple[str, ...] = ()
    anycast_candidates: tuple[str, ...] = ()
    created_address: str | None = None
    created_queue: str | None = None


@dataclass(frozen=True)
class Attached(Outcome):
    """The consumer is attached to a queue, which the consume may have auto-created."""

    kind: ClassVar[str] = "attached"
    address: str
    queue: str
    created_address: str | None = None
    created_queue: str | None = None


@dataclass(frozen=True)
class AddressQueried(Outcome):
    """What an address query found: whether ``address`` exists, its routing types and its queues' names (sorted)."""

    kind: ClassVar[str] = "address_queried"
    address: str
    exists: bool
    routing_types: frozenset[RoutingType] = frozenset()
    queues: tuple[str, ...] = ()


LookupOutcome = Resolved | NotFound | Ambiguous

OUTCOME_TYPES: tuple[type[Outcome], ...] = (
    Rejected, Configured, AddressCreated, AddressDeleted, QueueCreated, QueueDeleted,
    Resolved, NotFound, Ambiguous, Routed, Attached, AddressQueried,
)

REASON_TYPES: tuple[type[Reason], ...] = (
    InvalidName, AddressExists, AddressNotFound, AddressHasQueues, QueueExists, QueueNotFound,
    AmbiguousName, RoutingTypeNotAllowed, QueueRoutingTypeMismatch,
)
