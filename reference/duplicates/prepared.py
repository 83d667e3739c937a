"""Prepared transactions: what the first phase of an XA commit leaves behind, and how a start-up finds it.

Introduction
------------
A client ends an XA transaction in two phases. ``ServerSessionImpl.xaPrepare``
calls ``TransactionImpl.prepare``: every operation hears ``beforePrepare``,
the storage manager writes the prepare record with the xid, and the
transaction is ``PREPARED`` (DUP-XA-PREPARE). Nothing becomes visible: the
messages are still held, the IDs still wait. Only ``xaCommit`` or
``xaRollback`` ends it (DUP-XA-SECOND-PHASE), and until then the session's
sends and receives are refused (DUP-XA-PREPARED-BUSY, :mod:`.session`).

What the prepare writes (:mod:`.transaction`, :mod:`.queues`, :mod:`.cache`):
a record for each message the transaction routes at its commit, one for
each message it took, and one, flagged ``prepared``, for each ID it holds,
in the order the spec lists them: instant adds, ``beforeCommit`` IDs, IDs
waiting for the stored commit.

A start-up (``AbstractJournalStorageManager.loadPreparedTransactions``)
rebuilds each prepared transaction from its
:class:`~.journal.PreparedTransactionInfo`, under the journal
transaction's own ID and with the xid, record by record
(:func:`load_prepared_transactions`):

* a message record becomes the :class:`~.queues.DeliverOperation` that
  routes it at the commit;
* an acknowledgement record takes the message out of its queue again
  (``QueueImpl.removeReferenceWithID``, then ``reacknowledge``), so it stays
  held; a queue deleted since (its ID is gone) is skipped, as Artemis logs
  and skips it;
* a prepared ID record is attached to the transaction again
  (:meth:`~.cache.DuplicateIDCache.load_prepared`, Artemis's
  ``DuplicateIDCache.load(tx, id)``, which registers an
  ``AddDuplicateIDOperation`` for after the commit). The cache is the one
  the post office gives for the record's name (``getDuplicateIDCache``),
  created now, with the size the restart's settings give, when no stored
  ID of its own made it. Whatever moment the ID would have entered its
  cache before, it now enters when the commit is stored, and an instant add
  made in the transaction is no longer visible (DUP-XA-PREPARED-RESTART);
* any other ID record is an instant add's own slot record, never
  committed: it is deleted, as the spec keeps no uncommitted instant add
  across a restart.

The commit writes each re-attached ID's record anew, under a new record
ID, so that the journal keeps records in the order IDs enter memory
(:mod:`.journal`), and deletes the prepared records with it. Deleting the
last queue of the address first drops the ID and its prepared record with
the cache (DUP-FORGET-IN-FLIGHT), as for any open transaction.

A client would find the transaction again with ``XAResource.recover`` and
end it by its xid; the spec names it by the session that began it, and so
does the xid written here. ``DuplicateDetectionTest.testXADuplicateDetectionPrepareAndRollbackStopServer``
is the Artemis test of a prepared transaction across a restart, and
``testNoPersistXA1`` the one without ``persist-id-cache``: then no ID record
is written, and the transaction comes back without its IDs.
"""

from __future__ import annotations

from .journal import AcknowledgeRecord, DuplicateIdRecord, MessageRecord, PreparedTransactionInfo
from .post_office import PostOffice
from .queues import AcknowledgeOperation, DeliverOperation
from .transaction import Transaction, TransactionState


def load_prepared_transactions(post_office: PostOffice, found: list[PreparedTransactionInfo]
                               ) -> list[tuple[str, Transaction]]:
    """Rebuild each prepared transaction a start-up found; (xid, transaction) pairs, oldest first.

    Rule DUP-XA-PREPARED-RESTART. Call it once the queues are reloaded: the
    messages the transactions took are taken out of them again.
    """
    storage = post_office.storage
    bindings = post_office.bindings
    rebuilt: list[tuple[str, Transaction]] = []
    for info in found:
        tx = Transaction(storage, info.tx_id)
        tx.state = TransactionState.PREPARED
        refs = AcknowledgeOperation(bindings, post_office.options.return_order)
        for record in info.records:
            if isinstance(record, MessageRecord):
                tx.add_operation(DeliverOperation(bindings, record.message, record.queue_names))
            elif isinstance(record, AcknowledgeRecord):
                queue = bindings.get_queue_by_id(record.queue_id)
                if queue is not None and queue.remove_reference_with_id(record.message) is not None:
                    refs.add_ack(queue, record.message)
            elif isinstance(record, DuplicateIdRecord) and record.prepared:
                post_office.get_duplicate_id_cache(record.cache_name).load_prepared(tx, record.key, record.record_id)
            else:
                storage.delete_duplicate_id(record.record_id)  # an instant add's slot record: not durable
                continue
            tx.prepared_records.append(record.record_id)
        if refs.taken:
            tx.add_operation(refs)
        rebuilt.append((info.xid, tx))
    return rebuilt
