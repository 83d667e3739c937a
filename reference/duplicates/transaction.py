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

``prepare`` is the first phase of an XA commit (``TransactionImpl.prepare``):
a rollback-only transaction rolls back and the prepare fails with its reason
(DUP-XA-PREPARE-ROLLBACK-ONLY); otherwise every operation's ``before_prepare``
writes the records a start-up needs to find the transaction again, then
the prepare record, and the transaction is ``PREPARED`` (DUP-XA-PREPARE). A
prepared transaction can no longer be marked rollback-only (Artemis's
``isEffective``); its commit, the second phase, cannot fail and deletes the
records the prepare wrote in the same journal transaction
(DUP-XA-SECOND-PHASE). A transaction rebuilt at a start-up from its
prepared records takes the journal transaction's ID again (``new
TransactionImpl(id, xid, ...)`` in ``loadPreparedTransactions``).

Every transaction takes its ID from the storage manager's generator, so a
transaction's journal records are written under that ID (:mod:`.journal`).
A non-transactional send runs inside a transaction the broker starts for it
(DUP-NONTX-VISIBILITY); that transaction never outlives the send.
"""

from __future__ import annotations

from enum import Enum

from brokerspec.spec import InvariantBroken
from brokerspec.spec.duplicates import DoomReason

from .journal import JournalRecord, StorageManager


class TransactionState(Enum):
    """Where a transaction is in its life (``Transaction.State`` in Artemis, less ``SUSPENDED``)."""

    ACTIVE = "ACTIVE"
    ROLLBACK_ONLY = "ROLLBACK_ONLY"
    PREPARED = "PREPARED"
    COMMITTED = "COMMITTED"
    ROLLED_BACK = "ROLLEDBACK"


OPEN = frozenset({TransactionState.ACTIVE, TransactionState.ROLLBACK_ONLY, TransactionState.PREPARED})
"""The states of a transaction that has not ended."""


class TransactionOperation:
    """A piece of transactional work; each hook does nothing unless a subclass says otherwise."""

    def before_prepare(self, tx: Transaction) -> None:
        """Called before the prepare record is written: write what a start-up needs to find this work again."""

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

    def __init__(self, storage: StorageManager, tx_id: int | None = None) -> None:
        self.storage = storage
        self.id = storage.generate_id() if tx_id is None else tx_id
        self.state = TransactionState.ACTIVE
        self.rollback_reason: DoomReason | None = None
        self.operations: list[TransactionOperation] = []
        self.store_operations: list[TransactionOperation] = []
        self.prepared_records: list[int] = []
        """The records the prepare wrote (or a start-up found), which the commit deletes."""

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
        """Whether the transaction has not ended yet (a prepared one has not)."""
        return self.state in OPEN

    def mark_as_rollback_only(self, reason: DoomReason) -> None:
        """Doom the transaction: its commit will fail (DUP-TX-DUPLICATE). The first reason is kept.

        A transaction that has already ended, or is prepared, ignores the
        mark, as Artemis's ``isEffective`` check does.
        """
        if self.state not in (TransactionState.ACTIVE, TransactionState.ROLLBACK_ONLY):
            return
        self.state = TransactionState.ROLLBACK_ONLY
        if self.rollback_reason is None:
            self.rollback_reason = reason

    def store_prepared(self, record: JournalRecord) -> None:
        """Write one record of the prepare into this transaction; the commit deletes it again."""
        self.storage.store_prepared_record(self.id, record)
        self.prepared_records.append(record.record_id)

    # -- ending ------------------------------------------------------------------------

    def prepare(self, xid: str) -> DoomReason | None:
        """The first phase: None when prepared, else the reason a rollback-only transaction rolled back.

        Rules DUP-XA-PREPARE and DUP-XA-PREPARE-ROLLBACK-ONLY
        (``TransactionImpl.prepare``: ``internalRollback``, then the stored
        exception). ``xid`` names the transaction in its prepare record.
        """
        if self.state is TransactionState.ROLLBACK_ONLY:
            self.rollback()
            return self.rollback_reason
        if self.state is not TransactionState.ACTIVE:
            raise InvariantBroken(f"cannot prepare transaction {self.id}: it is {self.state.value}")
        for operation in self.get_all_operations():
            operation.before_prepare(self)
        self.storage.prepare(self.id, xid)
        self.state = TransactionState.PREPARED
        return None

    def commit(self) -> DoomReason | None:
        """Commit; a rollback-only transaction rolls back instead and its reason is returned (DUP-TX-DUPLICATE).

        Otherwise: every operation's ``before_commit``, the deletes of the
        records a prepare wrote, the commit record, then ``after_commit`` for
        the operations and then for the store operations. Returns None when
        the commit succeeded; a prepared transaction always succeeds
        (DUP-XA-SECOND-PHASE).
        """
        if self.state is TransactionState.ROLLBACK_ONLY:
            self.rollback()
            return self.rollback_reason
        self._require_open("commit")
        for operation in self.get_all_operations():
            operation.before_commit(self)
        for record_id in self.prepared_records:
            self.storage.delete_record_transactional(self.id, record_id)
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
