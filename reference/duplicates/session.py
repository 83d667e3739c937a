"""The server session: what one client connection can do, and what it is told.

Introduction
------------
Artemis serves each client connection with a ``ServerSessionImpl``. A
session either has an open transaction, after ``begin``, or works
outside one (``autoCommitSends``). It turns client requests into post-office
calls and turns the results into what the client sees:

* a send outside a transaction whose ID is a duplicate is dropped, the
  broker's status is ``DUPLICATED_ID``, and the client is told the send
  succeeded: no protocol handler looks at that status (DUP-NONTX-DUPLICATE);
* inside a transaction the send also succeeds for the client, but the
  transaction is now rollback-only, and the commit fails with
  ``DUPLICATE_ID_REJECTED``, rolling back every send *and* acknowledgement
  in it (DUP-TX-DUPLICATE);
* a send that fails (its ID cannot be cast to bytes, its address is full)
  reports the failure; inside a transaction it also dooms the transaction,
  as ``OpenWireConnection.processMessageSend`` does.

A bridge duplicate inside a client transaction is harsher: the post office
rolls the client's transaction back on the spot (DUP-BRIDGE-DUPLICATE). The session then
keeps a rollback-only transaction in its place, so that the client's later
work in it is held and discarded and its commit fails; in Artemis the
session keeps the rolled-back transaction object, whose commit fails.

Receiving takes the lowest-numbered waiting message; inside a transaction
its acknowledgement is held until the transaction ends.

``prepare`` is the first phase of an XA commit (``ServerSessionImpl.xaPrepare``,
:mod:`.prepared`): the transaction becomes durable and takes no more work, so
the session's sends and receives are refused until ``commit`` or
``rollback`` ends it (DUP-XA-PREPARED-BUSY; in Artemis ``xaEnd`` has
dissociated the branch from the session by then). A second prepare is
ignored (DUP-XA-PREPARE-AGAIN: ``xaPrepare`` logs ``AMQ221079`` and returns);
a rollback-only transaction fails to prepare and rolls back
(DUP-XA-PREPARE-ROLLBACK-ONLY, ``DuplicateDetectionTest.testXADuplicateDetection4``).
"""

from __future__ import annotations

from brokerspec.spec import Outcome
from brokerspec.spec.duplicates import (
    CommitFailed,
    Committed,
    DoomReason,
    Done,
    DuplicateId,
    NoTransaction,
    PrepareFailed,
    QueueNotFound,
    Received,
    RolledBack,
    RoutingStatus,
    SendFailed,
    SendFailure,
    Sent,
    TransactionOpen,
    TransactionPrepared,
)

from .post_office import Message, PostOffice, RoutingContext
from .queues import AcknowledgeOperation, DeliverOperation
from .transaction import Transaction, TransactionState


class ServerSession:
    """One client session and its open transaction, if any."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.tx: Transaction | None = None

    def begin(self, post_office: PostOffice) -> Outcome:
        """Open a transaction; refused while one is open."""
        if self.tx is not None:
            return TransactionOpen(self.name)
        self.tx = Transaction(post_office.storage)
        return Done()

    def is_prepared(self) -> bool:
        """Whether the session's transaction is prepared, so takes no more work (DUP-XA-PREPARED-BUSY)."""
        return self.tx is not None and self.tx.state is TransactionState.PREPARED

    def prepare(self) -> Outcome:
        """The first phase of a two-phase commit (DUP-XA-PREPARE, DUP-XA-PREPARE-AGAIN, DUP-XA-PREPARE-ROLLBACK-ONLY)."""
        tx = self.tx
        if tx is None:
            return NoTransaction(self.name)
        if tx.state is TransactionState.PREPARED:
            return Done()
        failure = tx.prepare(self.name)
        if failure is not None:
            self.tx = None
            return PrepareFailed(failure)
        return Done()

    def commit(self) -> Outcome:
        """Commit the open transaction: the messages it routed, or why it failed (DUP-TX-DUPLICATE, DUP-TX-HELD).

        A prepared transaction commits in its second phase and cannot fail (DUP-XA-SECOND-PHASE).
        """
        tx = self.tx
        if tx is None:
            return NoTransaction(self.name)
        self.tx = None
        failure = tx.commit()
        if failure is not None:
            return CommitFailed(failure)
        return Committed(tuple(op.message for op in tx.get_all_operations() if isinstance(op, DeliverOperation)))

    def rollback(self) -> Outcome:
        """Roll the open transaction back: no ID of it stays visible, received messages wait again (DUP-TX-HELD)."""
        tx = self.tx
        if tx is None:
            return NoTransaction(self.name)
        self.tx = None
        tx.rollback()
        return RolledBack()

    def send(self, post_office: PostOffice, address: str, duplicate_id: DuplicateId | None,
             bridge_id: bytes | None, reject_duplicates: bool, address_full: bool,
             auto_create: bool = False) -> Outcome:
        """Send one message and report what the client sees; ``auto_create`` when it may make its queue."""
        if self.is_prepared():
            return TransactionPrepared(self.name)
        message = Message(address, duplicate_id, bridge_id, address_full)
        context = RoutingContext(self.tx, auto_create_queues=auto_create)
        result = post_office.route(message, context, reject_duplicates)
        if self.tx is not None and self.tx.state is TransactionState.ROLLED_BACK:
            self.tx = self.replace_rolled_back(self.tx, post_office)
        if isinstance(result, SendFailure):
            return self.report_failure(result)
        doomed = self.tx is not None and self.tx.state is TransactionState.ROLLBACK_ONLY
        if result is RoutingStatus.DUPLICATED_ID:
            return Sent(result, rollback_only=doomed)
        return Sent(result, message.message_id, context.routed_to, rollback_only=doomed)

    def report_failure(self, failure: SendFailure) -> Outcome:
        """A failed send: the client sees the failure, and an open transaction is doomed."""
        if self.tx is None:
            return SendFailed(failure)
        self.tx.mark_as_rollback_only(DoomReason.SEND_FAILED)
        return SendFailed(failure, rollback_only=True)

    @staticmethod
    def replace_rolled_back(rolled_back: Transaction, post_office: PostOffice) -> Transaction:
        """A rollback-only transaction to stand in for one the post office rolled back (DUP-BRIDGE-DUPLICATE)."""
        stand_in = Transaction(post_office.storage)
        if rolled_back.rollback_reason is not None:
            stand_in.mark_as_rollback_only(rolled_back.rollback_reason)
        return stand_in

    def receive(self, post_office: PostOffice, queue_name: str) -> Outcome:
        """Take the first waiting message; inside a transaction its acknowledgement waits for the end."""
        if self.is_prepared():
            return TransactionPrepared(self.name)
        queue = post_office.bindings.get_queue(queue_name)
        if queue is None:
            return QueueNotFound(queue_name)
        reference = queue.take_first()
        if reference is None:
            return Received(None)
        message = reference[1]
        if self.tx is None:
            queue.acknowledge(message)
            return Received(message)
        refs = next((op for op in self.tx.get_all_operations() if isinstance(op, AcknowledgeOperation)), None)
        if refs is None:
            refs = AcknowledgeOperation(post_office.bindings, post_office.options.return_order)
            self.tx.add_operation(refs)
        refs.add_ack(queue, message)
        return Received(message)
