"""The journal: where accepted duplicate IDs are written so that a restart can find them.

Introduction
------------
Artemis keeps everything durable in an append-only *journal* of records.
Each record has a numeric *record ID* taken from one ever-growing
generator (``StorageManager.generateID``); an *add record* creates an
entry, a *delete record* names a record ID and cancels it. A record may be
written inside a journal transaction: it then counts only once the
transaction's *commit record* is written, and a rollback record (or a
crash before the commit) throws it away.

Duplicate detection writes one add record, of type ``DUPLICATE_ID``, per
accepted ID: the cache's name and the ID's bytes (``DuplicateIDEncoding``,
DUP-RESTART-NO-PERSIST). The cache writes a delete record whenever it evicts an ID, deletes
one (DUP-DELETE-ID), or is cleared (DUP-FORGET-ON-LAST-QUEUE). So the journal holds, per cache, about
as many live records as the cache has slots.

At start-up ``AbstractJournalStorageManager.loadMessageJournal`` reads every
live record back, groups the ``DUPLICATE_ID`` ones by cache name and hands
the lists to ``PostOfficeJournalLoader.handleDuplicateIds`` (see
:mod:`.loader`), which calls ``DuplicateIDCache.load`` (seed 001).

This module models the journal by its meaning, not its bytes: the live
records, the records of journal transactions not yet committed, and the
generator. :class:`StorageManager` puts the broker's words on it
(``store_duplicate_id``, ``delete_duplicate_id``, ``commit``...).

The order of a reload
~~~~~~~~~~~~~~~~~~~~~
A reload must hand each cache its IDs oldest first, because ``load`` keeps
the newest when they do not all fit (DUP-RESTART-RELOAD). The spec's "oldest first" is the
order in which the IDs entered the cache in memory (DUP-RESTART-RELOAD).
This journal gives exactly that order by two choices of its own:

* :meth:`Journal.load` returns live records in the order they were
  written (their record IDs), whether or not they were written inside a
  transaction. Artemis's ``JournalImpl`` instead replays a transaction's
  records where it reads the transaction's commit record.
* an ID that waits for its transaction's commit has its record written when
  the commit begins (see :mod:`.cache`), not at the send as Artemis does.

The two orders differ only for an *instant add* inside a client transaction
(2.18 on, DUP-BRIDGE-DUPLICATE): it enters memory at the send but commits later. There the
reference follows the spec.

A delete record for a record that is still inside an open transaction
cancels it: when that transaction commits, the record does not come alive.
This is what the spec implies (an uncommitted instant add that is evicted is
gone for good); Artemis's loader gives the same result for a delete that
reaches the journal, since it applies deletes after reading every add.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from brokerspec.spec.duplicates import CacheName


@dataclass(frozen=True)
class DuplicateIdRecord:
    """One ``DUPLICATE_ID`` add record: which cache, and the ID's bytes."""

    record_id: int
    cache_name: CacheName
    key: bytes


class Journal:
    """The live records, and the records of journal transactions still open."""

    def __init__(self) -> None:
        self.records: dict[int, DuplicateIdRecord] = {}
        self.transactions: dict[int, dict[int, DuplicateIdRecord]] = {}
        self.transactional_deletes: dict[int, list[int]] = {}
        self.open_transaction_of: dict[int, int] = {}

    # -- writing -----------------------------------------------------------------

    def append_add_record_transactional(self, tx_id: int, record: DuplicateIdRecord) -> None:
        """A record that counts once transaction ``tx_id`` commits."""
        self.transactions.setdefault(tx_id, {})[record.record_id] = record
        self.open_transaction_of[record.record_id] = tx_id

    def append_delete_record(self, record_id: int) -> None:
        """Cancel a record: a live one at once, one inside an open transaction before it can commit.

        >>> from brokerspec.spec.duplicates import CacheKind
        >>> journal = Journal()
        >>> name = CacheName(CacheKind.BRIDGE, "a1")
        >>> journal.append_add_record_transactional(9, DuplicateIdRecord(1, name, b"\\x01"))
        >>> journal.append_delete_record(1)
        >>> journal.append_commit_record(9)
        >>> journal.load()
        []
        """
        if self.records.pop(record_id, None) is not None:
            return
        tx_id = self.open_transaction_of.pop(record_id, None)
        if tx_id is not None:
            del self.transactions[tx_id][record_id]

    def append_delete_record_transactional(self, tx_id: int, record_id: int) -> None:
        """Cancel a live record once transaction ``tx_id`` commits."""
        self.transactional_deletes.setdefault(tx_id, []).append(record_id)

    def append_commit_record(self, tx_id: int) -> None:
        """Transaction ``tx_id`` is durable: its adds come alive and its deletes take effect."""
        for record_id, record in self.transactions.pop(tx_id, {}).items():
            del self.open_transaction_of[record_id]
            self.records[record_id] = record
        for record_id in self.transactional_deletes.pop(tx_id, []):
            self.records.pop(record_id, None)

    def append_rollback_record(self, tx_id: int) -> None:
        """Transaction ``tx_id`` is abandoned: its records never count."""
        for record_id in self.transactions.pop(tx_id, {}):
            del self.open_transaction_of[record_id]
        self.transactional_deletes.pop(tx_id, None)

    # -- reading -----------------------------------------------------------------

    def committed(self) -> list[DuplicateIdRecord]:
        """The committed live records in written order, read without touching open transactions."""
        return [self.records[record_id] for record_id in sorted(self.records)]

    def load(self) -> list[DuplicateIdRecord]:
        """Start-up: forget every transaction with no commit record, return the live records in written order."""
        for tx_id in list(self.transactions):
            self.append_rollback_record(tx_id)
        self.transactional_deletes.clear()
        return [self.records[record_id] for record_id in sorted(self.records)]


class StorageManager:
    """The broker's persistence calls for duplicate IDs (Artemis's ``JournalStorageManager``).

    It also owns the two generators that must never repeat across a
    restart: record and transaction IDs (``generate_id``), and the numbers
    given to accepted messages (``generate_message_number``).
    """

    def __init__(self) -> None:
        self.journal = Journal()
        self.last_id = 0
        self.next_message_number = 1

    def generate_id(self) -> int:
        """A fresh record or transaction ID."""
        self.last_id += 1
        return self.last_id

    def generate_message_number(self) -> int:
        """The number the next accepted message gets."""
        number = self.next_message_number
        self.next_message_number += 1
        return number

    def store_duplicate_id_transactional(self, tx_id: int, cache_name: CacheName, key: bytes, record_id: int) -> None:
        """Write a ``DUPLICATE_ID`` record that commits with transaction ``tx_id`` (DUP-RESTART-NO-PERSIST)."""
        self.journal.append_add_record_transactional(tx_id, DuplicateIdRecord(record_id, cache_name, key))

    def delete_duplicate_id(self, record_id: int) -> None:
        """Cancel a ``DUPLICATE_ID`` record (an eviction, a delete, a clear)."""
        self.journal.append_delete_record(record_id)

    def delete_duplicate_id_transactional(self, tx_id: int, record_id: int) -> None:
        """Cancel a ``DUPLICATE_ID`` record when transaction ``tx_id`` commits (a reload dropping IDs)."""
        self.journal.append_delete_record_transactional(tx_id, record_id)

    def commit(self, tx_id: int) -> None:
        """Write transaction ``tx_id``'s commit record."""
        self.journal.append_commit_record(tx_id)

    def rollback(self, tx_id: int) -> None:
        """Write transaction ``tx_id``'s rollback record."""
        self.journal.append_rollback_record(tx_id)

    def load_duplicate_ids(self) -> dict[CacheName, list[tuple[bytes, int]]]:
        """The live ``DUPLICATE_ID`` records, grouped by cache, each list oldest first (DUP-RESTART-RELOAD).

        Each entry is the ID's bytes and its record ID, the pairs Artemis
        passes to ``DuplicateIDCache.load``.
        """
        grouped: dict[CacheName, list[tuple[bytes, int]]] = defaultdict(list)
        for record in self.journal.load():
            grouped[record.cache_name].append((record.key, record.record_id))
        return dict(grouped)

    def read_duplicate_ids(self) -> dict[CacheName, list[tuple[bytes, int]]]:
        """The committed ``DUPLICATE_ID`` records by cache, as :meth:`load_duplicate_ids` groups them, without a
        start-up: open transactions keep their records (an observer's read, for snapshots)."""
        grouped: dict[CacheName, list[tuple[bytes, int]]] = defaultdict(list)
        for record in self.journal.committed():
            grouped[record.cache_name].append((record.key, record.record_id))
        return dict(grouped)
