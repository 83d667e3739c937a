"""Commands: the operations of the duplicate-detection domain, as data.

Introduction
------------
Each operation a client, a bridge or an administrator performs is a frozen
dataclass; its class attribute ``op`` is its name in traces, and its fields
are its arguments. A *session* is a client connection, named by a short
string; a session either has an open transaction (after ``begin``) or sends
and receives outside one. Several sessions interleave their operations,
which is how concurrency is modelled (DUP-CONCURRENT-TX): every operation is atomic.

``restart`` stops the broker cleanly and starts it again, optionally with a
new global ``id-cache-size``; ``crash`` stops it without warning. In the spec
both lose every open transaction that is not prepared and rebuild the caches
from what was durable; the fast implementation carries them out differently (a clean
close of its store, or abandoning it mid-flight), which is the point.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar, Union

from ..errors import InvalidCommand
from .ids import DuplicateId

_HEX = re.compile(r"(?:[0-9a-f]{2})+")


@dataclass(frozen=True)
class CreateQueue:
    """Create queue ``queue`` bound to ``address``."""

    op: ClassVar[str] = "create_queue"
    address: str
    queue: str


@dataclass(frozen=True)
class DeleteQueue:
    """Delete queue ``queue`` and its messages."""

    op: ClassVar[str] = "delete_queue"
    queue: str


@dataclass(frozen=True)
class Begin:
    """Open a transaction on ``session``."""

    op: ClassVar[str] = "begin"
    session: str


@dataclass(frozen=True)
class Send:
    """``session`` sends a message to ``address``.

    ``duplicate_id`` is the ``_AMQ_DUPL_ID`` property, ``bridge_id`` the
    ``_AMQ_BRIDGE_DUP`` property as lower-case hex (a bridge sets 24 bytes,
    ``BridgeImpl.getDuplicateBytes``; any client may set it, and the broker
    then treats the message as bridged). ``reject_duplicates`` is false only on
    the broker's own move paths (DUP-NO-REJECT). ``address_full`` makes routing fail
    after the duplicate check, as a full address with the FAIL policy does
    (``ActiveMQAddressFullException``, DUP-SEND-FAILED).

    ``auto_create`` sends the message ANYCAST to an address whose settings
    have ``auto-create-queues`` on: when the address has no queue, the send
    makes one named like the address, after the duplicate check, where the
    profile's ``send_auto_create`` says so (DUP-AUTO-CREATE,
    ``ServerSessionImpl.checkAutoCreate``). Only a client session's send
    auto-creates, and a client session always rejects duplicates: the move
    paths route without a session (``RoutingContextImpl(tx)``), so
    ``auto_create`` with ``reject_duplicates`` false is not a command.
    """

    op: ClassVar[str] = "send"
    session: str
    address: str
    duplicate_id: DuplicateId | None = None
    bridge_id: str | None = None
    reject_duplicates: bool = True
    address_full: bool = False
    auto_create: bool = False

    def __post_init__(self) -> None:
        if self.bridge_id is not None and not _HEX.fullmatch(self.bridge_id):
            raise InvalidCommand(f"a bridge duplicate ID is written as lower-case hex pairs, not {self.bridge_id!r}",
                                 "bridge_id")
        if self.auto_create and not self.reject_duplicates:
            raise InvalidCommand("only a client session's send auto-creates a queue, and it always rejects "
                                 "duplicates (the move paths have no session)", "auto_create")


@dataclass(frozen=True)
class Receive:
    """``session`` takes the first waiting message of ``queue`` and acknowledges it."""

    op: ClassVar[str] = "receive"
    session: str
    queue: str


@dataclass(frozen=True)
class Prepare:
    """``session`` prepares its transaction: the first phase of an XA two-phase commit (DUP-XA-PREPARE).

    The transaction becomes durable and survives a restart or a crash; it
    takes no more work, and only ``commit`` (the second phase) or
    ``rollback`` ends it. A client names an XA transaction by its xid; the
    spec names it by the session that began it, also after a restart, where
    a client would recover the xid (``XAResource.recover``) to end it.
    """

    op: ClassVar[str] = "prepare"
    session: str


@dataclass(frozen=True)
class Commit:
    """``session`` commits its transaction: in one phase when it is open, in the second when it is prepared."""

    op: ClassVar[str] = "commit"
    session: str


@dataclass(frozen=True)
class Rollback:
    """``session`` rolls its transaction back."""

    op: ClassVar[str] = "rollback"
    session: str


@dataclass(frozen=True)
class DeleteId:
    """Remove one ID from ``address``'s cache (``DuplicateIDCache.deleteFromCache``, DUP-DELETE-ID)."""

    op: ClassVar[str] = "delete_id"
    address: str
    duplicate_id: DuplicateId


@dataclass(frozen=True)
class SetIdCacheSize:
    """Set ``address-settings/id-cache-size`` for ``address`` (DUP-SIZE-FIXED, ARTEMIS-4159)."""

    op: ClassVar[str] = "set_id_cache_size"
    address: str
    size: int

    def __post_init__(self) -> None:
        if self.size < 0:
            raise InvalidCommand(f"id-cache-size must be 0 or more, not {self.size}", "size")


@dataclass(frozen=True)
class Restart:
    """Stop the broker cleanly and start it, with a new global ``id_cache_size`` when given."""

    op: ClassVar[str] = "restart"
    id_cache_size: int | None = None

    def __post_init__(self) -> None:
        if self.id_cache_size is not None and self.id_cache_size < 0:
            raise InvalidCommand(f"id-cache-size must be 0 or more, not {self.id_cache_size}", "id_cache_size")


@dataclass(frozen=True)
class Crash:
    """The broker process dies at once (SIGKILL) and is started again."""

    op: ClassVar[str] = "crash"


@dataclass(frozen=True)
class QueryId:
    """Ask whether ``address``'s cache holds ``duplicate_id``, or its bridge cache ``bridge_id`` (a query).

    Exactly one of the two is given. A query changes nothing; a system under test answers it from SUT
    protocol version 2 on.
    """

    op: ClassVar[str] = "query_id"
    query: ClassVar[bool] = True
    address: str
    duplicate_id: DuplicateId | None = None
    bridge_id: str | None = None

    def __post_init__(self) -> None:
        if (self.duplicate_id is None) == (self.bridge_id is None):
            raise InvalidCommand("an ID query names exactly one of duplicate_id and bridge_id", "duplicate_id")
        if self.bridge_id is not None and not _HEX.fullmatch(self.bridge_id):
            raise InvalidCommand(f"a bridge duplicate ID is written as lower-case hex pairs, not {self.bridge_id!r}",
                                 "bridge_id")


DuplicatesCommand = Union[CreateQueue, DeleteQueue, Begin, Send, Receive, Commit, Rollback, DeleteId,
                          SetIdCacheSize, Restart, Crash, QueryId, Prepare]

COMMAND_TYPES: tuple[type[DuplicatesCommand], ...] = (
    CreateQueue, DeleteQueue, Begin, Send, Receive, Commit, Rollback, DeleteId, SetIdCacheSize, Restart, Crash,
    QueryId, Prepare,
)
