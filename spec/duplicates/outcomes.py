"""Outcomes: what each duplicate-detection operation results in.

Introduction
------------
Outcomes are values (STYLE point 3). A duplicate is an ordinary result, and
the outcome records both sides of it: the broker's routing status and what
the client sees. Outside a transaction a duplicate is not routed, the
broker's status is ``DUPLICATED_ID``, and the client is told the send
succeeded (DUP-NONTX-DUPLICATE); inside one the send also "succeeds" but the transaction is
now rollback-only, and the commit fails (DUP-TX-DUPLICATE).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import ClassVar

from ..outcome import Outcome
from .model import DoomReason


class RoutingStatus(Enum):
    """The broker's ``RoutingStatus`` for a send that did not fail (``PostOfficeImpl.route``)."""

    OK = "OK"
    NO_BINDINGS = "NO_BINDINGS"
    DUPLICATED_ID = "DUPLICATED_ID"


class SendFailure(Enum):
    """Why a send failed, as the client sees it."""

    ID_NOT_BYTES = "ID_NOT_BYTES"
    """The duplicate-ID value is neither a string nor bytes: the cast in routing fails (DUP-ID-KEY)."""
    ADDRESS_FULL = "ADDRESS_FULL"
    """Routing failed after the duplicate check (a full address with the FAIL policy)."""
    ADDRESS_DOES_NOT_EXIST = "ADDRESS_DOES_NOT_EXIST"
    """An auto-creating send found a queue named like its address bound to another address (AMQ229203,
    DUP-AUTO-CREATE-NAME-TAKEN)."""


@dataclass(frozen=True)
class Done(Outcome):
    """The operation did what it says (queue created, transaction begun, size set, ID deleted...)."""

    kind: ClassVar[str] = "done"


@dataclass(frozen=True)
class QueueExists(Outcome):
    """A queue of that name already exists."""

    kind: ClassVar[str] = "queue_exists"
    queue: str


@dataclass(frozen=True)
class QueueNotFound(Outcome):
    """No queue of that name exists."""

    kind: ClassVar[str] = "queue_not_found"
    queue: str


@dataclass(frozen=True)
class QueueDeleted(Outcome):
    """The queue is gone; ``forgot_ids`` when it was its address's last queue (DUP-FORGET-ON-LAST-QUEUE)."""

    kind: ClassVar[str] = "queue_deleted"
    forgot_ids: bool


@dataclass(frozen=True)
class TransactionOpen(Outcome):
    """``begin`` on a session whose transaction is still open."""

    kind: ClassVar[str] = "transaction_open"
    session: str


@dataclass(frozen=True)
class TransactionPrepared(Outcome):
    """A send or receive on a session whose transaction is prepared: it takes no more work (DUP-XA-PREPARED-BUSY)."""

    kind: ClassVar[str] = "transaction_prepared"
    session: str


@dataclass(frozen=True)
class NoTransaction(Outcome):
    """``commit``, ``prepare`` or ``rollback`` on a session with no open transaction."""

    kind: ClassVar[str] = "no_transaction"
    session: str


@dataclass(frozen=True)
class Sent(Outcome):
    """The client was told the send succeeded.

    ``status`` is the broker's routing status; ``message`` the number the
    message got (None when it was not routed); ``queues`` where it went, or
    will go when its transaction commits; ``rollback_only`` whether the
    session's transaction is now rollback-only.
    """

    kind: ClassVar[str] = "sent"
    status: RoutingStatus
    message: int | None = None
    queues: tuple[str, ...] = ()
    rollback_only: bool = False


@dataclass(frozen=True)
class SendFailed(Outcome):
    """The client was told the send failed."""

    kind: ClassVar[str] = "send_failed"
    reason: SendFailure
    rollback_only: bool = False


@dataclass(frozen=True)
class Received(Outcome):
    """The message taken from the queue, or None when none was waiting."""

    kind: ClassVar[str] = "received"
    message: int | None


@dataclass(frozen=True)
class Committed(Outcome):
    """The transaction committed; ``messages`` are the numbers it routed, in send order."""

    kind: ClassVar[str] = "committed"
    messages: tuple[int, ...]


@dataclass(frozen=True)
class CommitFailed(Outcome):
    """The commit failed and everything in the transaction was rolled back (DUP-TX-DUPLICATE).

    ``reason`` DUPLICATE_ID is the client's ``DUPLICATE_ID_REJECTED`` (code 113).
    """

    kind: ClassVar[str] = "commit_failed"
    reason: DoomReason


@dataclass(frozen=True)
class PrepareFailed(Outcome):
    """The prepare failed and everything in the transaction was rolled back (DUP-XA-PREPARE-ROLLBACK-ONLY).

    The client sees an ``XAException`` whose cause is the reason the
    transaction was doomed (``DUPLICATE_ID_REJECTED`` for ``DUPLICATE_ID``).
    """

    kind: ClassVar[str] = "prepare_failed"
    reason: DoomReason


@dataclass(frozen=True)
class RolledBack(Outcome):
    """The transaction rolled back: its messages discarded, its acknowledged messages waiting again."""

    kind: ClassVar[str] = "rolled_back"


@dataclass(frozen=True)
class IdDeleted(Outcome):
    """``delete_id`` ran; ``found`` when the ID was in the cache (DUP-DELETE-ID)."""

    kind: ClassVar[str] = "id_deleted"
    found: bool


@dataclass(frozen=True)
class IdQueried(Outcome):
    """``query_id`` ran; ``present`` when the cache holds the ID now (DUP-QUERY-ID)."""

    kind: ClassVar[str] = "id_queried"
    present: bool


@dataclass(frozen=True)
class NotSupported(Outcome):
    """The profile's broker has no such operation (per-address ``id-cache-size`` before 2.31.0)."""

    kind: ClassVar[str] = "not_supported"
    operation: str


@dataclass(frozen=True)
class Restarted(Outcome):
    """Restarted: ``lost_transactions`` open ones rolled back, ``dropped_ids`` did not fit (DUP-RESTART-RELOAD).

    Prepared transactions are not lost and not counted (DUP-XA-PREPARED-RESTART).
    """

    kind: ClassVar[str] = "restarted"
    lost_transactions: int
    dropped_ids: int


OUTCOME_TYPES: tuple[type[Outcome], ...] = (
    Done, QueueExists, QueueNotFound, QueueDeleted, TransactionOpen, NoTransaction, Sent, SendFailed, Received,
    Committed, CommitFailed, RolledBack, IdDeleted, NotSupported, Restarted, IdQueried, TransactionPrepared,
    PrepareFailed,
)
