"""The fast broker's XA transactions: the first phase, and prepared transactions found again at a restart.

Introduction
------------
``prepare`` is the first phase of a two-phase commit (``ServerSessionImpl.xaPrepare``,
``TransactionImpl.prepare``). The broker's transaction record stays where it
is, with its status ``PREPARED``; what changes is durability. In the
operation's one store transaction the prepare writes (through the broker's
``_store_prepared`` seam, :meth:`SqliteStore.put_prepared
<brokerspec.impl.duplicates.store.SqliteStore.put_prepared>`) a row saying
the session's transaction is prepared, the messages it routes at its
commit and the IDs it holds; the messages it took are already durable as
its ``held`` rows. A kill before that store transaction commits leaves no
trace of the prepare; after it, all of it (DUP-XA-PREPARE).

Rules, as the spec's ``process_prepare`` has them: no transaction is
``NoTransaction``; a prepared one is prepared again without a write
(DUP-XA-PREPARE-AGAIN); a rollback-only one rolls back and the prepare fails
with its reason (DUP-XA-PREPARE-ROLLBACK-ONLY,
``DuplicateDetectionTest.testXADuplicateDetection4``). A prepared
transaction takes no more work (DUP-XA-PREPARED-BUSY, checked by the broker's
send and receive); its commit or rollback (DUP-XA-SECOND-PHASE) deletes its
rows in the store transaction of its other writes.

A restart or a crash rebuilds every prepared transaction from the store
(:func:`restore_prepared`, as ``AbstractJournalStorageManager.loadPreparedTransactions``
does from the journal): its messages, the messages it holds (taken out of
their queues again, ``Queue.reacknowledge``) and its IDs, attached again to
wait for the stored commit, whatever moment they had before
(``DuplicateIDCache.load(tx, id)``; DUP-XA-PREPARED-RESTART,
``DuplicateDetectionTest.testXADuplicateDetectionPrepareAndRollbackStopServer``).
Attaching an ID makes its cache, sized by the restart's settings, when no
stored ID of its own did (``PostOffice.getDuplicateIDCache`` in the load).
Without ``persist-id-cache`` no ID row was written, so the transaction
comes back without its IDs (``testNoPersistXA1``).

This module reads and writes the broker's private fields; it belongs to the broker.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brokerspec.spec.duplicates import CacheKind, Done, NoTransaction, Prepare, PrepareFailed, TxState
from brokerspec.spec.outcome import Outcome

from .cache import IdCache
from .records import OpenTransaction
from .store import PreparedIds, StoredState

if TYPE_CHECKING:
    from .broker import FastDuplicatesBroker

PREPARED = TxState.PREPARED
DONE = Done()


def prepare_transaction(broker: FastDuplicatesBroker, command: Prepare) -> Outcome:
    """The first phase for ``command.session`` (DUP-XA-PREPARE, DUP-XA-PREPARE-AGAIN, DUP-XA-PREPARE-ROLLBACK-ONLY)."""
    tx = broker._txs.get(command.session)
    if tx is None:
        return NoTransaction(command.session)
    if tx.status is PREPARED:
        return DONE
    if tx.status is TxState.ROLLBACK_ONLY and tx.doom is not None:  # equivalent mutants (ReplaceAndWithOr): the status is ROLLBACK_ONLY exactly when doom is set
        broker._undo(tx)
        return PrepareFailed(tx.doom)
    tx.status = PREPARED
    broker._store_prepared(tx)
    return DONE


def restore_prepared(broker: FastDuplicatesBroker, stored: StoredState) -> None:
    """Rebuild the prepared transactions ``stored`` holds, into a broker whose queues and caches are reloaded.

    Each takes its held messages out of their queues again and gets its IDs
    back through the broker's ``_reattach_ids`` seam.
    """
    held: dict[str, list[tuple[str, int, int]]] = {}
    for session, queue_name, number, seq in stored.held:
        if session in stored.prepared:
            held.setdefault(session, []).append((queue_name, number, seq))
    for session in sorted(stored.prepared):
        messages, ids = stored.prepared[session]
        tx = OpenTransaction(session)
        tx.status = PREPARED
        tx.messages = list(messages)
        for queue_name, number, seq in held.get(session, ()):
            queue = broker._queues.get(queue_name)
            if queue is not None:  # equivalent mutants: deleting a queue deletes its held rows in the same store transaction
                queue.delivering[number] = seq
                tx.acks.append((queue_name, number))
        tx.after_store = broker._reattach_ids(session, ids)
        broker._txs[session] = tx


def reattach_ids(broker: FastDuplicatesBroker, ids: PreparedIds) -> list[tuple[IdCache, bytes]]:
    """Each stored ID of a prepared transaction with the cache it waits for, made now if missing."""
    return [(broker._cache_for(CacheKind.BRIDGE if bridge else CacheKind.NORMAL, address), key)
            for bridge, address, key in ids]
