"""The fast broker's private invariants: its indexes against each other, and memory against the store.

Introduction
------------
:meth:`FastDuplicatesBroker.check_valid` calls :func:`find_problems`, which
lists, in words, every way the broker's redundant structures disagree:

* each cache is filed under its own name, is live, and its slots, index,
  cursor, pending marks and write stamps are consistent (the ring
  invariants of DUP-RING-FIFO, ``DuplicateIDCache.contains`` and DUP-DELETE-ID,
  plus stamps in cursor order, which the store's
  reload order depends on);
* a pending mark belongs to a session with an open transaction, and every
  open transaction's ID work names caches that are still filed;
* the address -> queues index lists exactly the queues there are, and
  every queue's messages are in increasing order and below the counter;
* the store holds exactly what memory says is durable: the counter, the
  sizes, the queues and their waiting messages, the messages open
  transactions hold, per cache the durable IDs (slot and key) in the
  order the spec's ``get_durable_ids`` gives (DUP-RESTART-NO-PERSIST), and
  each prepared transaction with its messages and the IDs it holds, no
  more and no fewer (DUP-XA-PREPARE, DUP-XA-PREPARED-RESTART).

This module reads the broker's private fields; it belongs to the broker.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from brokerspec.spec.duplicates import STRANDED, CacheKind, CacheName, TxState

if TYPE_CHECKING:
    from .broker import FastDuplicatesBroker
    from .store import SqliteStore, StoredState


def find_problems(broker: FastDuplicatesBroker) -> list[str]:
    """Every private invariant ``broker`` breaks (empty when it is sound)."""
    return [*_cache_problems(broker), *_transaction_problems(broker), *_queue_problems(broker),
            *_store_problems(broker)]


def _cache_problems(broker: FastDuplicatesBroker) -> list[str]:
    found: list[str] = []
    for kind, table in ((CacheKind.NORMAL, broker._normal), (CacheKind.BRIDGE, broker._bridge)):
        for address, cache in table.items():
            if cache.name != CacheName(kind, address):
                found.append(f"cache {cache.name} filed as {CacheName(kind, address)}")
            if not cache.live:
                found.append(f"cache {cache.name} is filed but marked forgotten")
            found.extend(f"cache {cache.name}: {problem}" for problem in cache.problems())
            for owner in sorted(set(cache.pending.values())):
                if owner not in broker._txs and owner != STRANDED:
                    found.append(f"cache {cache.name}: pending add owned by {owner!r}, which has no open transaction")
    return found


def _transaction_problems(broker: FastDuplicatesBroker) -> list[str]:
    found: list[str] = []
    for session, tx in broker._txs.items():
        if tx.session != session:
            found.append(f"transaction of {tx.session!r} filed under {session!r}")
        if tx.status not in (TxState.ACTIVE, TxState.ROLLBACK_ONLY, TxState.PREPARED):
            found.append(f"transaction of {session!r} is open in state {tx.status.value}")
        if (tx.status is TxState.ROLLBACK_ONLY) != (tx.doom is not None):
            found.append(f"transaction of {session!r}: status {tx.status.value} with doom {tx.doom}")
        for work in tx.id_work():
            for cache, key in work:
                table = broker._bridge if cache.bridge else broker._normal
                if table.get(cache.address) is not cache:
                    found.append(f"transaction of {session!r} holds {key.hex()} for cache {cache.name}, "
                                 "which is no longer filed")
    return found


def _queue_problems(broker: FastDuplicatesBroker) -> list[str]:
    found: list[str] = []
    expected: dict[str, list[str]] = {}
    for name, queue in broker._queues.items():
        expected.setdefault(queue.address, []).append(name)
        waiting = queue.waiting()
        seqs = [seq for seq, _ in queue.messages[queue.head:]]
        if len(set(waiting)) != len(waiting) or set(waiting) & set(queue.delivering):
            found.append(f"queue {name!r}: a message twice among {waiting} and held {sorted(queue.delivering)}")
        if not broker._returns_to_head and seqs != sorted(seqs):
            found.append(f"queue {name!r}: waiting out of arrival order {queue.messages[queue.head:]}")
        if any(number >= broker._next_message for number in (*waiting, *queue.delivering)):
            found.append(f"queue {name!r}: a message at or beyond the counter {broker._next_message}")
        if any(seq > broker._arrivals for seq in (*seqs, *queue.delivering.values())):
            found.append(f"queue {name!r}: an arrival sequence beyond the last given, {broker._arrivals}")
        if not 0 <= queue.head <= len(queue.messages):
            found.append(f"queue {name!r}: head {queue.head} outside its list")
    bindings = {address: tuple(sorted(names)) for address, names in expected.items()}
    if bindings != broker._bindings:
        found.append(f"address index {broker._bindings} but the queues say {bindings}")
    return found


_READ: dict[int, tuple[sqlite3.Connection, int, StoredState, dict[tuple[bool, str], list[tuple[int, bytes]]]]] = {}
"""The last content read from an in-memory store, by its connection's identity (the connection is kept, so the
identity is not reused), with SQLite's count of rows the connection had changed then."""


def _read_store(store: SqliteStore) -> tuple[StoredState, dict[tuple[bool, str], list[tuple[int, bytes]]]]:
    """What ``store`` holds: :meth:`~.store.SqliteStore.load` and its ID rows, read again only when it may differ.

    An in-memory store (the lockstep's) has one connection for life, its only reader and writer, and
    ``total_changes`` counts every row it inserted, updated or deleted, rolled back or not; so content
    read outside a transaction stays what the store holds while the count has not moved. Content read
    inside a transaction may still be rolled back, so it is never kept; a store in a file is always read
    (its connection is replaced at a restart, and keeping an old one open could hold the file's lock).
    """
    conn = store._conn
    kept = _READ.get(id(conn))
    if kept is not None and kept[0] is conn and kept[1] == conn.total_changes:
        return kept[2], kept[3]
    count = conn.total_changes
    stored, rows = store.load(), store.read_ids()
    _READ.clear()  # one store at a time in a check: keep only the newest
    if store.path is None and not conn.in_transaction:
        _READ[id(conn)] = (conn, count, stored, rows)
    return stored, rows


def _store_problems(broker: FastDuplicatesBroker) -> list[str]:
    found: list[str] = []
    store = broker._store
    stored, rows = _read_store(store)
    if stored.next_message != broker._next_message:
        found.append(f"store counter {stored.next_message}, memory {broker._next_message}")
    if stored.global_size != broker._global_size:
        found.append(f"store global id-cache-size {stored.global_size}, memory {broker._global_size}")
    if stored.sizes != broker._sizes:
        found.append(f"store sizes {stored.sizes}, memory {broker._sizes}")
    addresses = {name: queue.address for name, queue in broker._queues.items()}
    if stored.queues != addresses:
        found.append(f"store queues {stored.queues}, memory {addresses}")
    for name, queue in broker._queues.items():
        waiting = sorted(queue.messages[queue.head:])
        if stored.messages.get(name, []) != waiting:
            found.append(f"queue {name!r}: store holds {stored.messages.get(name, [])}, memory {waiting}")
    orphans = sorted(set(stored.messages) - set(broker._queues))
    if orphans:
        found.append(f"store holds messages of missing queues {orphans}")
    held = sorted((session, name, number, broker._queues[name].delivering[number])
                  for session, tx in broker._txs.items() for name, number in tx.acks
                  if name in broker._queues and number in broker._queues[name].delivering)
    if sorted(stored.held) != held:
        found.append(f"store holds {sorted(stored.held)} for open transactions, memory {held}")
    durable: dict[tuple[bool, str], list[tuple[int, bytes]]] = {}
    if broker._persist:
        for cache in (*broker._normal.values(), *broker._bridge.values()):
            slots = list(range(cache.position, cache.filled)) + list(range(min(cache.position, cache.filled)))
            entries = [(slot, key) for slot in slots
                       if (key := cache.slots[slot]) is not None and cache.is_durable(slot)]
            if entries:
                durable[(cache.bridge, cache.address)] = entries
    for (bridge, address), keys in broker._dormant.items():
        dormant_rows = [(-1 - index, key) for index, key in enumerate(keys)]
        durable[(bridge, address)] = dormant_rows + durable.get((bridge, address), [])
    for cache_key in sorted(set(rows) | set(durable)):
        if rows.get(cache_key, []) != durable.get(cache_key, []):
            label = CacheName(CacheKind.BRIDGE if cache_key[0] else CacheKind.NORMAL, cache_key[1])
            found.append(f"cache {label}: store records {rows.get(cache_key, [])}, "
                         f"durable in memory {durable.get(cache_key, [])}")
    prepared = {session: (tx.messages, tx.held_ids() if broker._persist else [])
                for session, tx in broker._txs.items() if tx.status is TxState.PREPARED}
    if stored.prepared != prepared:
        found.append(f"store holds prepared transactions {stored.prepared}, memory {prepared}")
    return found
