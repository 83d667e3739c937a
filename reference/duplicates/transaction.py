"""Transactions: work held back until a commit, and the operations that carry it out.

Introduction
------------
Artemis's ``TransactionImpl`` does not hold messages or IDs itself. Each
piece of transactional work registers a ``TransactionOperation``, an
object with hooks the transaction calls as it ends:

``before_commit``
    before anything is made durable;
``after_commit``
    once the commit record is stored (Artemis distinguishes the completion
    of the commit's I/O, ``afterCommit``, from that of earlier stores,
    ``afterStore``; with no real I/O here both come straight after the
    commit record);
``before_rollback`` / ``after_rollback``
    around a rollback.

Operations registered with :meth:`Transaction.add_operation` and those
registered with :meth:`Transaction.after_store` (``TransactionImpl.afterStore``,
work that is meant to happen once the commit is stored) hear the same hooks
here; the store operations come after the others in every phase. Artemis
calls only ``afterCommit`` on a store operation; the duplicate-ID operation
here also uses ``before_commit`` to put its journal record into the
transaction (see :mod:`.journal`). Both lists are kept in registration
order, which is the order of the sends.

The duplicate-ID operation is ``AddDuplicateIDOperation`` (:mod:`.cache`);
delivering a held message and undoing an acknowledgement are operations too
(:mod:`.queues`).

A transaction is ``ACTIVE`` until it ends; a duplicate or a failed send
marks it ``ROLLBACK_ONLY`` (``markAsRollbackOnly``, DUP-TX-DUPLICATE), and committing it
then rolls it back and reports why. Artemis keeps the *last* reason it was
marked with; this reference keeps the *first*, as the spec does.

Every transaction takes its ID from the storage manager's generator, so a
transaction's journal records are written under that ID (:mod:`.journal`).
A non-transactional send runs inside a transaction the broker starts for it
(DUP-NONTX-VISIBILITY); that transaction never outlives the send.
"""

from __future__ import annotations

from enum import Enum

from brokerspec.spec import InvariantBroken
from brokerspec.spec.duplicates import DoomReason

from .journal import StorageManager


class TransactionState(Enum):
    """Where a transaction is in its life (``Transaction.State`` in Artemis, less the XA states)."""

    ACTIVE = "ACTIVE"
    ROLLBACK_ONLY = "ROLLBACK_ONLY"
    COMMITTED = "COMMITTED"
    ROLLED_BACK = "ROLLEDBACK"


class TransactionOperation:
    """A piece of transactional work; each hook does nothing unless a subclass says otherwise."""

    def before_commit(self, tx: Transaction) -> None:
        """Called before the commit record is written."""

    def after_commit(self, tx: Transaction) -> None:
        """Called once the commit is stored."""

    def before_rollback(self, tx: Transaction) -> None:
        """Called before the rollback record is written."""

    def after_rollback(self, tx: Transaction) -> None:
        """Called once the transaction has rolled back."""


class Transaction:
    """One transaction: its state, its operations, and the journal transaction under its ID."""

    def __init__(self, storage: StorageManager) -> None:
        self.storage = storage
        self.id = storage.generate_id()
        self.state = TransactionState.ACTIVE
        self.rollback_reason: DoomReason | None = None
        self.operations: list[TransactionOperation] = []
        self.store_operations: list[TransactionOperation] = []

    # -- registering work --------------------------------------------------------------

    def add_operation(self, operation: TransactionOperation) -> None:
        """Register work that hears every hook."""
        self.operations.append(operation)

    def after_store(self, operation: TransactionOperation) -> None:
        """Register work that runs once the commit is stored, after the other operations."""
        self.store_operations.append(operation)

    def get_all_operations(self) -> list[TransactionOperation]:
        """Every registered operation, in the order the hooks reach them."""
        return [*self.operations, *self.store_operations]

    # -- state -------------------------------------------------------------------------

    def is_open(self) -> bool:
        """Whether the transaction has not ended yet."""
        return self.state in (TransactionState.ACTIVE, TransactionState.ROLLBACK_ONLY)

    def mark_as_rollback_only(self, reason: DoomReason) -> None:
        """Doom the transaction: its commit will fail (DUP-TX-DUPLICATE). The first reason is kept.

        A transaction that has already ended ignores the mark, as Artemis's
        ``isEffective`` check does.
        """
        if not self.is_open():
            return
        self.state = TransactionState.ROLLBACK_ONLY
        if self.rollback_reason is None:
            self.rollback_reason = reason

    # -- ending ------------------------------------------------------------------------

    def commit(self) -> DoomReason | None:
        """Commit; a rollback-only transaction rolls back instead and its reason is returned (DUP-TX-DUPLICATE).

        Otherwise: every operation's ``before_commit``, the commit record,
        then ``after_commit`` for the operations and then for the store
        operations. Returns None when the commit succeeded.
        """
        if self.state is TransactionState.ROLLBACK_ONLY:
            self.rollback()
            return self.rollback_reason
        self._require_open("commit")
        for operation in self.get_all_operations():
            operation.before_commit(self)
        self.storage.commit(self.id)
        self.state = TransactionState.COMMITTED
        for operation in self.get_all_operations():
            operation.after_commit(self)
        return None

    def rollback(self) -> None:
        """Roll back: ``before_rollback`` hooks, the rollback record, ``after_rollback`` hooks."""
        self._require_open("roll back")
        for operation in self.get_all_operations():
            operation.before_rollback(self)
        self.storage.rollback(self.id)
        self.state = TransactionState.ROLLED_BACK
        for operation in self.get_all_operations():
            operation.after_rollback(self)

    def _require_open(self, verb: str) -> None:
        if not self.is_open():
            raise InvariantBroken(f"cannot {verb} transaction {self.id}: it is already {self.state.value}")
