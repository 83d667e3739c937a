"""The fast duplicate-detection broker: mutable caches, a real durable store, checked against the spec.

Introduction
------------
:class:`FastDuplicatesBroker` runs the commands of
:mod:`brokerspec.spec.duplicates` and returns the outcomes the spec's
``apply`` returns, but keeps its state the way Artemis does: per cache a
dict from key to slot, a preallocated list of slots and a cursor
(``DuplicateIDCacheImpl``, DUP-RING-FIFO; see :mod:`.cache`), per session a mutable
transaction record, per queue a sorted list (:mod:`.records`). Nothing on
the hot path builds a spec value; :meth:`~FastDuplicatesBroker.snapshot`
does, when asked.

Durability. Every operation that changes durable state writes it to a
:class:`~.store.SqliteStore` in one store transaction, committed before
``execute`` returns: a non-transactional send writes its ID record, its
message rows and the message counter together, as Artemis writes the
``DUPLICATE_ID`` record in the message's own journal transaction (DUP-RESTART-NO-PERSIST); a
commit writes all of the transaction's ID records with its messages. ID
records follow the slots: the cache primitives note every slot they change
and, at the end of the operation, :meth:`~FastDuplicatesBroker._persist_ids`
writes each noted slot's durable content (a key, or nothing for a hole or
an uncommitted instant add). ``restart`` closes the store cleanly and
reopens it; ``crash`` abandons the connection and opens a new one; both,
and opening a broker on an existing store, rebuild memory from the store
alone, as the spec's ``process_restart`` does (DUP-RESTART-NO-PERSIST, DUP-RESTART-RELOAD).
A ``prepare`` (XA) writes the prepared transaction in its one store
transaction and a restart rebuilds it (DUP-XA-PREPARED-RESTART; :mod:`.prepared`).

Seams. Each method below does one thing and can be overridden on its own,
so that a planted-bug subclass breaks exactly one rule:

``_cache_for(kind, address)``
    the cache a check uses, created (and sized, DUP-SIZE-FIXED) on first use; one per
    address and kind (DUP-CACHE-PER-ADDRESS). Shared caches: ignore ``kind``.
``_is_duplicate(cache, key)``
    the check: an index lookup that moves nothing (DUP-RING-FIFO, ``DuplicateIDCache.contains``). A rejected
    duplicate that moves: re-record it here.
``_record(cache, key, owner)``
    the ring write at the cursor, evicting the oldest (DUP-RING-FIFO). Newest evicted:
    write elsewhere.
``_forget(cache, key)``
    drop a key and leave a hole; the cursor stays (DUP-DELETE-ID).
``_hold_id(tx, cache, key, moment)``
    where a transactional send's new ID waits: for the commit, or in the
    cache at once as a pending instant add (DUP-TX-HELD, DUP-BRIDGE-DUPLICATE). ID added at send:
    record it here instead.
``_commit_ids(tx)``
    when held IDs enter the cache at the commit, in send order (DUP-TX-HELD, DUP-SAME-ID-IN-TX).
``_undo(tx)``
    rollback: instant adds deleted, acknowledged messages back (DUP-TX-HELD, DUP-NONTX-VISIBILITY).
    A rollback that leaves IDs behind: skip the forgetting.
``_doom(tx, reason)``
    mark a transaction rollback-only, keeping the first reason (DUP-TX-DUPLICATE, DUP-BRIDGE-DUPLICATE).
    A duplicate that does not doom: ignore ``DUPLICATE_ID`` here.
``_reload(stored, size)``
    at a restart, which stored IDs survive and in which slot order (DUP-RESTART-RELOAD,
    ARTEMIS-332). Reload keeps the wrong end: slice the other way.
``_forget_address(address)``
    the last queue of an address went: both caches forgotten, in memory,
    in the store and in open transactions (DUP-FORGET-ON-LAST-QUEUE).
``_persist_ids(touched)``
    write the changed slots' ID records into the operation's store
    transaction (DUP-RESTART-NO-PERSIST). A store that loses IDs: delay or drop them here.
``_store_prepared(tx)``
    a prepare's durable write: the prepared transaction's messages and IDs,
    nothing made visible (DUP-XA-PREPARE). IDs visible at the prepare: record them here.
``_reattach_ids(session, ids)``
    at a restart, the IDs a prepared transaction's rows hold, attached again
    with the caches they wait for (DUP-XA-PREPARED-RESTART). A restart that
    loses them: return fewer.

An override that changes slots through :meth:`IdCache.write` and
:meth:`IdCache.clear` (which note the slot) keeps the store in step with
memory, whatever else it gets wrong.

:meth:`~FastDuplicatesBroker.check_valid` checks the private indexes against
each other and against what the store holds.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from brokerspec.spec import FrozenMap, InvariantBroken, Profile, ReloadKeeps, ReturnOrder, ZeroSizeCache
from brokerspec.spec.duplicates import (
    AddMoment,
    Begin,
    CacheKind,
    CacheName,
    Commit,
    CommitFailed,
    Committed,
    Crash,
    CreateQueue,
    DeleteId,
    QueryId,
    DeleteQueue,
    DoomReason,
    Done,
    DuplicatesCommand,
    DuplicatesState,
    IdDeleted,
    IdQueried,
    NotSupported,
    NoTransaction,
    Prepare,
    QueueDeleted,
    QueueExists,
    QueueNotFound,
    QueueState,
    Receive,
    Received,
    Restart,
    Restarted,
    Rollback,
    RolledBack,
    RoutingStatus,
    Send,
    SendFailed,
    SendFailure,
    Sent,
    SetIdCacheSize,
    TransactionOpen,
    TransactionPrepared,
    TxState,
    compute_add_moment,
    compute_cache_key,
    is_undone_on_failure,
)
from brokerspec.spec.outcome import Outcome

from .auto_create import auto_create_queue
from .cache import IdCache, SlotLog, record_at_cursor
from .prepared import prepare_transaction, reattach_ids, restore_prepared
from .records import OpenTransaction, WaitingQueue
from .store import PreparedIds, SqliteStore
from .validity import find_problems

__all__ = ["FastDuplicatesBroker", "IdCache", "OpenTransaction", "SqliteStore", "WaitingQueue"]
"""The broker, and the record types its seams take (so an override can name them from this module)."""

NORMAL = CacheKind.NORMAL
BRIDGE = CacheKind.BRIDGE
ACTIVE = TxState.ACTIVE
ROLLBACK_ONLY = TxState.ROLLBACK_ONLY
PREPARED = TxState.PREPARED
OK = RoutingStatus.OK
NO_BINDINGS = RoutingStatus.NO_BINDINGS
DUPLICATED_ID = RoutingStatus.DUPLICATED_ID
DONE = Done()
SENT_DUPLICATE = Sent(DUPLICATED_ID)
NOTHING_RECEIVED = Received(None)
"""Outcomes are frozen values, so the common constant ones are built once."""


class FastDuplicatesBroker:
    """Duplicate detection for one broker, built for speed, durable in SQLite, checked against the spec.

    ``store_path`` names the SQLite file (created when missing, reloaded when
    present); None keeps the store in memory, so nothing outlives the object.
    The broker-wide ``id-cache-size`` comes from ``profile`` when the store is
    new and from the store afterwards (a restart may have changed it).
    """

    def __init__(self, profile: Profile, store_path: Path | None = None) -> None:
        options = profile.duplicates
        self.profile = profile
        self._persist = options.persist_id_cache
        self._per_address_size = options.per_address_size
        self._keeps_newest = options.reload_keeps is ReloadKeeps.NEWEST
        self._failed_send_undoes = is_undone_on_failure(options.nontx_add)
        self._failed_bridge_undoes = is_undone_on_failure(options.bridge_add)
        self._tx_moment = compute_add_moment(True, False, options.nontx_add)  # equivalent mutants (ReplaceTrueWithFalse): _hold_id treats WITH_SEND as it treats AFTER_STORE
        self._tx_bridge_moment = compute_add_moment(True, True, options.bridge_add)
        self._returns_to_head = options.return_order is ReturnOrder.HEAD
        self._no_op_zero = options.zero_size_cache is ZeroSizeCache.NO_OP
        self._send_auto_create = options.send_auto_create
        self._dormant: dict[tuple[bool, str], tuple[bytes, ...]] = {}
        """(bridge, address) -> stored IDs a reload into size 0 left in the store (``ZeroSizeCache.NO_OP``)."""
        self._arrivals = 0
        """The last arrival sequence given to a message reaching a queue."""
        self._log = SlotLog()
        self._normal: dict[str, IdCache] = {}
        self._bridge: dict[str, IdCache] = {}
        self._queues: dict[str, WaitingQueue] = {}
        self._bindings: dict[str, tuple[str, ...]] = {}
        self._txs: dict[str, OpenTransaction] = {}
        self._sizes: dict[str, int] = {}
        self._global_size = options.id_cache_size
        self._next_message = 1  # equivalent mutants: _rebuild() sets it from the store
        self._closed = False  # equivalent mutants: close() only releases the store
        self._store = SqliteStore(store_path, options.id_cache_size)
        self._dispatch: dict[type[Any], Callable[[Any], Outcome]] = {
            Send: self._send,
            Receive: self._receive,
            Begin: self._begin,
            Commit: self._commit,
            Rollback: self._rollback,
            Prepare: self._prepare,
            CreateQueue: self._create_queue,
            DeleteQueue: self._delete_queue,
            DeleteId: self._delete_id,
            QueryId: self._query_id,
            SetIdCacheSize: self._set_id_cache_size,
            Restart: self._restart,
            Crash: self._restart,
        }
        try:
            self._rebuild()
        except BaseException:  # equivalent mutants: cleanup when a rebuild fails, which no script makes happen
            self._store.close()
            raise

    # -- the public surface ------------------------------------------------------------

    def execute(self, command: DuplicatesCommand) -> Outcome:
        """Run one command; its durable effects are committed to the store before this returns.

        An exception (a bug, or a store that fails) rolls the store
        transaction back but may leave memory changed: :meth:`check_valid`
        then says where the two part.
        """
        try:
            outcome = self._dispatch[type(command)](command)
            touched = self._log.touched
            if touched:
                self._persist_ids(touched)
                touched.clear()
            self._store.commit()
        except BaseException:  # equivalent mutants: cleanup after an exception, which no script makes happen
            self._log.touched.clear()
            self._store.rollback()
            raise
        return outcome

    def close(self) -> None:
        """Close the store (idempotent). Open transactions are lost, as at a restart."""
        if not self._closed:  # equivalent mutants: only a second close() differs, and nothing follows it
            self._closed = True  # equivalent mutants: only a second close() differs, and nothing follows it
            self._store.close()

    def __enter__(self) -> FastDuplicatesBroker:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()

    # -- seams: caches -----------------------------------------------------------------

    def _cache_for(self, kind: CacheKind, address: str) -> IdCache:
        """The cache of ``kind`` for ``address``, created now (and sized now, DUP-SIZE-FIXED) if missing."""
        table = self._normal if kind is NORMAL else self._bridge
        cache = table.get(address)
        if cache is None:
            cache = table[address] = IdCache(CacheName(kind, address), self._size_for(kind, address), self._log)
        return cache

    def _is_duplicate(self, cache: IdCache, key: bytes) -> bool:
        """Whether ``key`` is in ``cache``: one index probe; nothing moves.

        See DUP-RING-FIFO, ``DuplicateIDCache.contains``.
        """
        return key in cache.index

    def _record(self, cache: IdCache, key: bytes, owner: str) -> None:
        """Write ``key`` at the cursor, evicting what the slot held; ``owner`` marks a pending instant add.

        See DUP-RING-FIFO and :func:`.cache.record_at_cursor`.
        """
        record_at_cursor(cache, key, owner)

    def _forget(self, cache: IdCache, key: bytes) -> None:
        """Drop ``key`` from the index and leave a hole where it was last written; the cursor stays (DUP-DELETE-ID)."""
        used = cache.index.pop(key, None)
        if used is not None and used < cache.filled and cache.slots[used] == key:  # equivalent mutants (Lt_IsNot, Lt_LtE, Lt_NotEq, Eq_GtE, Eq_LtE): the index only points a key at a slot below filled that holds it
            cache.clear(used)

    def _keep_dormant(self, bridge: bool, address: str, keys: tuple[bytes, ...]) -> None:
        """Leave ``keys`` in the store unloaded: ``NoOpDuplicateIDCache.load`` neither loads nor deletes."""
        self._dormant[(bridge, address)] = keys
        for index, key in enumerate(keys):
            self._store.put_id(bridge, address, -1 - index, index - len(keys), key)

    def _reload(self, stored: tuple[bytes, ...], size: int) -> tuple[tuple[bytes, ...] | None, int]:
        """The IDs a reloaded cache holds, slot 0 first (None: disabled), and how many were dropped.

        See DUP-RESTART-RELOAD.

        More IDs than slots: the oldest go (ARTEMIS-332, 1.3.0), or the newest
        under ``reload_keeps=OLDEST``.
        """
        if size <= 0:  # equivalent mutants: sizes are never negative
            return None, len(stored)
        excess = max(0, len(stored) - size)
        return (stored[excess:] if self._keeps_newest else stored[:size]), excess

    def _forget_address(self, address: str) -> None:
        """Forget both caches of ``address`` and the open transactions' ID work for them (DUP-FORGET-ON-LAST-QUEUE)."""
        gone = False  # equivalent mutants: with no cache there is no ID row to drop, and open transactions name live caches only
        for table in (self._normal, self._bridge):
            cache = table.pop(address, None)
            if cache is not None:
                cache.live = False
                gone = True
        if not gone:
            return
        if self._persist:
            self._store.drop_caches(address)
            self._store.drop_prepared_ids(address)
        for tx in self._txs.values():
            for work in tx.id_work():
                if work:
                    work[:] = [item for item in work if item[0].live]

    def _persist_ids(self, touched: list[tuple[IdCache, int]]) -> None:
        """Write the ID records of the slots this operation changed (nothing when IDs are not persisted).

        See DUP-RESTART-NO-PERSIST.
        """
        if self._persist:
            self._write_id_rows(touched)

    def _store_prepared(self, tx: OpenTransaction) -> None:
        """Write the prepared transaction: its messages and the IDs it holds, none made visible (DUP-XA-PREPARE).

        Without ``persist-id-cache`` its IDs are not written (``testNoPersistXA1``).
        """
        self._store.put_prepared(tx.session, tx.messages, tx.held_ids() if self._persist else [])

    def _reattach_ids(self, session: str, ids: PreparedIds) -> list[tuple[IdCache, bytes]]:
        """The IDs ``session``'s prepared transaction holds, each with its cache, made now if missing.

        They enter their caches once the second phase's commit is stored
        (DUP-XA-PREPARED-RESTART, ``DuplicateIDCache.load(tx, id)``).
        """
        return reattach_ids(self, ids)

    # -- seams: transactions ---------------------------------------------------------------

    def _hold_id(self, tx: OpenTransaction, cache: IdCache, key: bytes, moment: AddMoment) -> None:
        """Keep a transactional send's new ID until its moment, or add it now as pending (2.18 on).

        See DUP-TX-HELD, DUP-BRIDGE-DUPLICATE.
        """
        if moment is AddMoment.AT_ONCE:
            self._record(cache, key, tx.session)
            tx.instant.append((cache, key))
        elif moment is AddMoment.BEFORE_COMMIT:
            tx.before_commit.append((cache, key))
        else:
            tx.after_store.append((cache, key))

    def _commit_ids(self, tx: OpenTransaction) -> None:
        """At the commit: ``beforeCommit`` IDs, then pending instant adds settle, then stored-commit IDs.

        See DUP-TX-HELD, DUP-SAME-ID-IN-TX.
        """
        for cache, key in tx.before_commit:
            self._record(cache, key, "")
        if tx.instant:
            for cache in dict.fromkeys(cache for cache, _ in tx.instant):
                cache.settle(tx.session)
        for cache, key in tx.after_store:
            self._record(cache, key, "")

    def _undo(self, tx: OpenTransaction) -> None:
        """Roll ``tx`` back: delete its instant adds, put its acknowledged messages back, close it.

        See DUP-TX-HELD, DUP-NONTX-VISIBILITY.
        """
        session = tx.session
        if tx.instant:
            for cache, key in tx.instant:
                self._forget(cache, key)
            for cache in dict.fromkeys(cache for cache, _ in tx.instant):  # equivalent mutants: each slot the session still marks holds its key, so the forget loop above has cleared every mark
                cache.settle(session)
        if self._txs.get(session) is tx:
            del self._txs[session]
        if tx.status is PREPARED:
            self._store.forget_prepared(session)
        if tx.acks:
            store = self._store
            taken: dict[str, list[int]] = {}
            for queue_name, number in tx.acks:
                taken.setdefault(queue_name, []).append(number)
            for queue_name, numbers in taken.items():
                queue = self._queues.get(queue_name)
                if queue is not None:
                    for seq, number in queue.put_back(numbers, self._returns_to_head):
                        store.add_message(queue_name, number, seq)
            store.release(session)

    def _doom(self, tx: OpenTransaction, reason: DoomReason) -> None:
        """Mark ``tx`` rollback-only; a transaction already doomed keeps its first reason (DUP-TX-DUPLICATE)."""
        tx.status = ROLLBACK_ONLY
        if tx.doom is None:
            tx.doom = reason

    # -- sending ------------------------------------------------------------------------

    def _send(self, command: Send) -> Outcome:
        """Check the ID, record it, route the message.

        See the sending rules DUP-ROUTED to DUP-SEND-FAILED-IN-TX; the spec's ``process_send``. A
        prepared transaction's session sends nothing (DUP-XA-PREPARED-BUSY).
        """
        tx = self._txs.get(command.session)
        if tx is not None and tx.status is PREPARED:
            return TransactionPrepared(command.session)
        if command.bridge_id is not None:
            return self._send_bridged(command, bytes.fromhex(command.bridge_id))
        duplicate_id = command.duplicate_id
        if duplicate_id is None:
            return self._route(command, tx, None, b"", False)  # equivalent mutants: with no cache _route never reads bridged
        key = compute_cache_key(duplicate_id)
        if key is None:
            if tx is None:
                return SendFailed(SendFailure.ID_NOT_BYTES)
            self._doom(tx, DoomReason.SEND_FAILED)
            return SendFailed(SendFailure.ID_NOT_BYTES, rollback_only=True)
        cache = self._cache_for(NORMAL, command.address)
        duplicate = self._is_duplicate(cache, key)
        if duplicate and command.reject_duplicates:
            if tx is None:
                return SENT_DUPLICATE
            self._doom(tx, DoomReason.DUPLICATE_ID)
            return Sent(DUPLICATED_ID, rollback_only=True)
        return self._route(command, tx, None if duplicate or cache.size == 0 else cache, key, False)  # equivalent mutants (Eq_LtE): sizes are never negative

    def _send_bridged(self, command: Send, key: bytes) -> Outcome:
        """Only the bridge cache counts; a duplicate is dropped, and inside a transaction undoes it.

        See DUP-BRIDGE-FIRST, DUP-BRIDGE-DUPLICATE.
        """
        cache = self._cache_for(BRIDGE, command.address)
        tx = self._txs.get(command.session)
        if not self._is_duplicate(cache, key) and not (cache.size == 0 and self._no_op_zero):
            return self._route(command, tx, None if cache.size == 0 else cache, key, True)  # equivalent mutants (Eq_LtE): sizes are never negative
        if tx is None:
            return SENT_DUPLICATE
        self._undo(tx)
        doomed = OpenTransaction(tx.session)
        if tx.doom is not None:
            doomed.status = ROLLBACK_ONLY
            doomed.doom = tx.doom
        self._doom(doomed, DoomReason.BRIDGE_DUPLICATE)
        self._txs[tx.session] = doomed
        return Sent(DUPLICATED_ID, rollback_only=True)

    def _route(self, command: Send, tx: OpenTransaction | None, cache: IdCache | None, key: bytes,
               bridged: bool) -> Outcome:
        """Record ``key`` in ``cache`` (None: nothing to record) and route, at once or inside ``tx``.

        An auto-creating send first makes its queue, or fails (:mod:`.auto_create`, DUP-AUTO-CREATE).
        """
        if command.auto_create and self._send_auto_create:
            failed = auto_create_queue(self, command, tx, cache, key, bridged)
            if failed is not None:
                return failed
        store = self._store
        full = command.address_full and bool(self._bindings.get(command.address))  # only a routed send pages
        if tx is None:
            if full:
                if cache is not None and (self._failed_bridge_undoes if bridged else self._failed_send_undoes):
                    self._record(cache, key, "")
                    self._forget(cache, key)
                return SendFailed(SendFailure.ADDRESS_FULL)
            if cache is not None:
                self._record(cache, key, "")
            targets = self._bindings.get(command.address, ())
            number = self._next_message
            self._next_message = number + 1
            store.set_next_message(number + 1)
            queues = self._queues
            for name in targets:
                self._arrivals += 1
                queues[name].add(self._arrivals, number)
                store.add_message(name, number, self._arrivals)
            return Sent(OK if targets else NO_BINDINGS, number, targets)
        if cache is not None:
            self._hold_id(tx, cache, key, self._tx_bridge_moment if bridged else self._tx_moment)
        if full:
            self._doom(tx, DoomReason.SEND_FAILED)
            return SendFailed(SendFailure.ADDRESS_FULL, rollback_only=True)
        targets = self._bindings.get(command.address, ())
        number = self._next_message
        self._next_message = number + 1
        store.set_next_message(number + 1)
        tx.messages.append((number, targets))
        return Sent(OK if targets else NO_BINDINGS, number, targets, rollback_only=tx.status is ROLLBACK_ONLY)

    # -- receiving and ending transactions ----------------------------------------------------

    def _receive(self, command: Receive) -> Outcome:
        """Take the lowest waiting message; inside a transaction it is held until the end.

        A prepared transaction's session takes nothing (DUP-XA-PREPARED-BUSY).
        """
        tx = self._txs.get(command.session)
        if tx is not None and tx.status is PREPARED:
            return TransactionPrepared(command.session)
        queue = self._queues.get(command.queue)
        if queue is None:
            return QueueNotFound(command.queue)
        if not len(queue):
            return NOTHING_RECEIVED
        seq, number = queue.take_first(tx is not None)
        self._store.remove_message(command.queue, number)
        if tx is not None:
            tx.acks.append((command.queue, number))
            self._store.hold(command.session, command.queue, number, seq)
        return Received(number)

    def _begin(self, command: Begin) -> Outcome:
        if command.session in self._txs:
            return TransactionOpen(command.session)
        self._txs[command.session] = OpenTransaction(command.session)
        return DONE

    def _prepare(self, command: Prepare) -> Outcome:
        """The first phase of a two-phase commit (:mod:`.prepared`)."""
        return prepare_transaction(self, command)

    def _commit(self, command: Commit) -> Outcome:
        """A rollback-only transaction fails and rolls back (DUP-TX-DUPLICATE); otherwise route, settle, record IDs.

        See DUP-TX-HELD; a prepared transaction's commit is its second phase and also
        deletes its prepared rows (DUP-XA-SECOND-PHASE).
        """
        tx = self._txs.get(command.session)
        if tx is None:
            return NoTransaction(command.session)
        if tx.status is ROLLBACK_ONLY and tx.doom is not None:  # equivalent mutants (ReplaceAndWithOr): the status is ROLLBACK_ONLY exactly when doom is set
            self._undo(tx)
            return CommitFailed(tx.doom)
        self._commit_ids(tx)
        queues = self._queues
        store = self._store
        for queue_name, number in tx.acks:
            acked = queues.get(queue_name)
            if acked is not None:
                acked.acknowledge(number)
        for number, targets in tx.messages:
            for name in targets:
                queue = queues.get(name)
                if queue is not None:
                    self._arrivals += 1
                    queue.add(self._arrivals, number)
                    store.add_message(name, number, self._arrivals)
        del self._txs[command.session]
        if tx.acks:
            store.release(command.session)
        if tx.status is PREPARED:
            store.forget_prepared(command.session)
        return Committed(tuple(number for number, _ in tx.messages))

    def _rollback(self, command: Rollback) -> Outcome:
        tx = self._txs.get(command.session)
        if tx is None:
            return NoTransaction(command.session)
        self._undo(tx)
        return RolledBack()

    # -- queues and administration -------------------------------------------------------------

    def _create_queue(self, command: CreateQueue) -> Outcome:
        if command.queue in self._queues:
            return QueueExists(command.queue)
        self._queues[command.queue] = WaitingQueue(command.address)
        self._bindings[command.address] = tuple(sorted((*self._bindings.get(command.address, ()), command.queue)))
        self._store.create_queue(command.queue, command.address)
        return DONE

    def _delete_queue(self, command: DeleteQueue) -> Outcome:
        queue = self._queues.pop(command.queue, None)
        if queue is None:
            return QueueNotFound(command.queue)
        self._store.delete_queue(command.queue)
        for tx in self._txs.values():  # the messages they took, and the copies they sent it, went with the queue
            if tx.acks:
                tx.acks = [ack for ack in tx.acks if ack[0] != command.queue]
            if any(command.queue in targets for _, targets in tx.messages):
                tx.messages = [(number, tuple(name for name in targets if name != command.queue))
                               for number, targets in tx.messages]
                if tx.status is PREPARED:
                    self._store.replace_prepared_messages(tx.session, tx.messages)
        remaining = tuple(name for name in self._bindings[queue.address] if name != command.queue)
        if remaining:
            self._bindings[queue.address] = remaining
            return QueueDeleted(False)
        del self._bindings[queue.address]
        self._forget_address(queue.address)
        return QueueDeleted(True)

    def _delete_id(self, command: DeleteId) -> Outcome:
        key = compute_cache_key(command.duplicate_id)
        cache = self._normal.get(command.address)
        if key is None or cache is None or key not in cache.index:
            return IdDeleted(False)
        self._forget(cache, key)
        return IdDeleted(True)

    def _query_id(self, command: QueryId) -> Outcome:
        """Whether the cache holds the ID now; nothing is created (DUP-QUERY-ID)."""
        key: bytes | None
        if command.bridge_id is not None:
            cache, key = self._bridge.get(command.address), bytes.fromhex(command.bridge_id)
        else:
            assert command.duplicate_id is not None
            cache, key = self._normal.get(command.address), compute_cache_key(command.duplicate_id)
        return IdQueried(cache is not None and key is not None and key in cache.index)

    def _set_id_cache_size(self, command: SetIdCacheSize) -> Outcome:
        """Per-address ``id-cache-size`` (ARTEMIS-4159); existing caches keep their size (DUP-SIZE-FIXED)."""
        if not self._per_address_size:
            return NotSupported(command.op)
        self._sizes[command.address] = command.size
        self._store.set_size(command.address, command.size)
        return DONE

    def _size_for(self, kind: CacheKind, address: str) -> int:
        """The size a cache gets when created now; the bridge cache ignores the address's setting (DUP-SIZE-FIXED)."""
        if kind is NORMAL:
            size = self._sizes.get(address)
            if size is not None:
                return size
        return self._global_size

    # -- restarts -------------------------------------------------------------------------------

    def _restart(self, command: Restart | Crash) -> Outcome:
        """Lose open transactions and rebuild everything from the store (DUP-RESTART-NO-PERSIST, DUP-RESTART-RELOAD).

        Prepared transactions are not lost: the store holds them (DUP-XA-PREPARED-RESTART).
        """
        lost = sum(1 for tx in self._txs.values() if tx.status is not PREPARED)
        store = self._store
        if isinstance(command, Restart):
            if command.id_cache_size is not None:
                store.set_global_size(command.id_cache_size)
                store.commit()
            store.reopen()
        else:
            store.abandon()
        dropped = self._rebuild()
        return Restarted(lost, dropped)

    def _rebuild(self) -> int:
        """Replace all memory by what the store holds, as the spec's ``process_restart``; return the IDs dropped.

        Held messages wait in their queue again and every queue is in arrival
        order (sequence order, the journal's); each
        cache is reloaded from its records in stamp order into a cache sized by
        the settings in force, and the store is rewritten to match (the dropped
        IDs' records deleted, the survivors in their new slots), in one store
        transaction. Then the prepared transactions are rebuilt: the messages
        they hold stay held (:func:`~.prepared.restore_prepared`).
        """
        store = self._store
        stored = store.load()
        for cache in (*self._normal.values(), *self._bridge.values()):  # equivalent mutants: nothing refers to the old caches after a rebuild, so their live flag is never read
            cache.live = False  # equivalent mutants: nothing refers to the old caches after a rebuild, so their live flag is never read
        self._normal = {}
        self._bridge = {}
        self._txs = {}
        self._log.touched.clear()
        self._log.stamp = 0  # equivalent mutants: stamps are only compared with each other, and every stored one is rewritten below
        self._global_size = stored.global_size
        self._sizes = dict(stored.sizes)
        self._next_message = stored.next_message
        held: dict[str, list[tuple[int, int]]] = {}
        for session, queue_name, number, seq in stored.held:
            if queue_name in stored.queues and session not in stored.prepared:
                held.setdefault(queue_name, []).append((seq, number))
                store.add_message(queue_name, number, seq)
        self._queues = {name: WaitingQueue(address, [*stored.messages.get(name, ()), *held.get(name, ())])
                        for name, address in stored.queues.items()}
        bindings: dict[str, list[str]] = {}
        for name, address in stored.queues.items():
            bindings.setdefault(address, []).append(name)
        self._bindings = {address: tuple(sorted(names)) for address, names in bindings.items()}
        if stored.held:
            store.release_lost(list(stored.prepared))
        dropped = 0
        self._dormant = {}
        if stored.ids:
            store.drop_all_ids()
        if self._persist:
            for (bridge, address), keys in sorted(stored.ids.items()):
                kind = BRIDGE if bridge else NORMAL
                size = self._size_for(kind, address)
                kept, excess = self._reload(tuple(keys), size)
                dropped += excess
                if kept is not None:
                    cache = IdCache(CacheName(kind, address), size, self._log)
                    cache.fill(kept)
                    (self._bridge if bridge else self._normal)[address] = cache
                elif self._no_op_zero:
                    self._keep_dormant(bridge, address, tuple(keys))
            self._write_id_rows(self._log.touched)
        self._log.touched.clear()
        if stored.prepared:
            restore_prepared(self, stored)
        self._arrivals = max((seq for queue in self._queues.values()
                              for seq in (*(seq for seq, _ in queue.messages), *queue.delivering.values())),
                             default=0)
        store.commit()
        return dropped

    # -- the store ---------------------------------------------------------------------------------

    def _write_id_rows(self, touched: list[tuple[IdCache, int]]) -> None:
        """Each touched slot of a live cache: its key's record, or no record for a hole or a pending add."""
        store = self._store
        for cache, slot in (dict.fromkeys(touched) if len(touched) > 1 else touched):  # equivalent mutants: rows are idempotent
            if not cache.live:
                continue  # equivalent mutants: unreachable: no operation writes a slot of a cache it drops, and a rebuild clears the log first
            key = cache.slots[slot]
            if key is None or slot in cache.pending:
                store.delete_id(cache.bridge, cache.address, slot)
            else:
                store.put_id(cache.bridge, cache.address, slot, cache.stamps[slot], key)

    # -- observation -------------------------------------------------------------------------------

    def snapshot(self) -> DuplicatesState:
        """The broker as a spec state (the only place spec values are built)."""
        return DuplicatesState(
            options=self.profile.duplicates,
            global_size=self._global_size,
            size_settings=FrozenMap(self._sizes),
            caches=FrozenMap({cache.name: cache.to_ring()
                              for table in (self._normal, self._bridge) for cache in table.values()}),
            queues=FrozenMap({name: QueueState(queue.address, queue.waiting(), queue.arrived())
                              for name, queue in self._queues.items()}),
            transactions=FrozenMap({session: tx.to_spec() for session, tx in self._txs.items()}),
            next_message=self._next_message,
            dormant=FrozenMap({CacheName(BRIDGE if bridge else NORMAL, address): keys
                               for (bridge, address), keys in self._dormant.items()}),
        )

    def check_valid(self) -> None:
        """Raise :class:`InvariantBroken` naming every private index that disagrees with another or with the store."""
        problems = find_problems(self)
        if problems:
            raise InvariantBroken("fast duplicates broker: " + "; ".join(problems))
