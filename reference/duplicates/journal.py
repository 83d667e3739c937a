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

Prepared transactions
~~~~~~~~~~~~~~~~~~~~~
The first phase of an XA commit (``TransactionImpl.prepare``) writes a
*prepare record* for the journal transaction, with the xid as its extra
data (``JournalStorageManager.prepare``). From then on a start-up neither
commits nor forgets the transaction's records: it hands them back as a
:class:`PreparedTransactionInfo` (the journal's own class of that name),
and ``AbstractJournalStorageManager.loadPreparedTransactions`` rebuilds the
transaction from them (see :mod:`.prepared`). Only a commit or a rollback
record ends it.

Messages have no records here, except in a prepared transaction: the
prepare writes a :class:`MessageRecord` for each message the transaction
will route and an :class:`AcknowledgeRecord` (Artemis's ``ACKNOWLEDGE_REF``,
naming the queue by its ID) for each message it took, so that a start-up
finds them again; and a :class:`DuplicateIdRecord` flagged ``prepared`` for
each ID it holds (DUP-XA-PREPARED-RESTART). The transaction's commit deletes
them all in the same journal transaction: their work is done by then.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Union

from brokerspec.spec.duplicates import CacheName


@dataclass(frozen=True)
class DuplicateIdRecord:
    """One ``DUPLICATE_ID`` add record: which cache, and the ID's bytes."""

    record_id: int
    cache_name: CacheName
    key: bytes
    prepared: bool = False
    """Written by a prepare for an ID its transaction holds: no slot owns it, so no eviction deletes it."""


@dataclass(frozen=True)
class MessageRecord:
    """A message a prepared transaction routes at its commit, with the names of the queues it goes to."""

    record_id: int
    message: int
    queue_names: tuple[str, ...]


@dataclass(frozen=True)
class AcknowledgeRecord:
    """A message a prepared transaction took (``ACKNOWLEDGE_REF``): the queue's ID and the message."""

    record_id: int
    queue_id: int
    message: int


JournalRecord = Union[DuplicateIdRecord, MessageRecord, AcknowledgeRecord]


@dataclass(frozen=True)
class PreparedTransactionInfo:
    """A prepared transaction as a start-up finds it: its ID, its xid and its records in written order."""

    tx_id: int
    xid: str
    records: tuple[JournalRecord, ...]


class Journal:
    """The live records, the records of journal transactions still open, and which of those are prepared."""

    def __init__(self) -> None:
        self.records: dict[int, JournalRecord] = {}
        self.transactions: dict[int, dict[int, JournalRecord]] = {}
        self.transactional_deletes: dict[int, list[int]] = {}
        self.open_transaction_of: dict[int, int] = {}
        self.prepared: dict[int, str] = {}
        """Transaction ID -> the xid its prepare record names."""

    # -- writing -----------------------------------------------------------------

    def append_add_record_transactional(self, tx_id: int, record: JournalRecord) -> None:
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

    def append_prepare_record(self, tx_id: int, xid: str) -> None:
        """Transaction ``tx_id`` is prepared: its records outlive a start-up, still pending (DUP-XA-PREPARE)."""
        self.prepared[tx_id] = xid

    def append_commit_record(self, tx_id: int) -> None:
        """Transaction ``tx_id`` is durable: its adds come alive and its deletes take effect."""
        self.prepared.pop(tx_id, None)
        for record_id, record in self.transactions.pop(tx_id, {}).items():
            del self.open_transaction_of[record_id]
            self.records[record_id] = record
        for record_id in self.transactional_deletes.pop(tx_id, []):
            self.records.pop(record_id, None)

    def append_rollback_record(self, tx_id: int) -> None:
        """Transaction ``tx_id`` is abandoned: its records never count."""
        self.prepared.pop(tx_id, None)
        for record_id in self.transactions.pop(tx_id, {}):
            del self.open_transaction_of[record_id]
        self.transactional_deletes.pop(tx_id, None)

    # -- reading -----------------------------------------------------------------

    def committed(self) -> list[DuplicateIdRecord]:
        """The committed live ID records in written order, read without touching open transactions."""
        return [record for record_id in sorted(self.records)
                if isinstance(record := self.records[record_id], DuplicateIdRecord)]

    def load(self) -> list[DuplicateIdRecord]:
        """Start-up: forget every transaction with neither a commit nor a prepare record; the live ID records in
        written order."""
        for tx_id in set(self.transactions) | set(self.transactional_deletes):
            if tx_id not in self.prepared:
                self.append_rollback_record(tx_id)
        return self.committed()

    def load_prepared(self) -> list[PreparedTransactionInfo]:
        """The prepared transactions with their records in written order, oldest transaction first."""
        return [PreparedTransactionInfo(tx_id, xid, tuple(record for _, record in sorted(
                    self.transactions.get(tx_id, {}).items())))
                for tx_id, xid in sorted(self.prepared.items())]


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

    def store_prepared_record(self, tx_id: int, record: JournalRecord) -> None:
        """Write one of the records a prepare leaves in transaction ``tx_id`` (a message, an acknowledgement, an ID)."""
        self.journal.append_add_record_transactional(tx_id, record)

    def delete_record_transactional(self, tx_id: int, record_id: int) -> None:
        """Delete any record when transaction ``tx_id`` commits."""
        self.journal.append_delete_record_transactional(tx_id, record_id)

    def prepare(self, tx_id: int, xid: str) -> None:
        """Write transaction ``tx_id``'s prepare record, naming ``xid`` (``JournalStorageManager.prepare``)."""
        self.journal.append_prepare_record(tx_id, xid)

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

    def load_prepared_transactions(self) -> list[PreparedTransactionInfo]:
        """The prepared transactions a start-up finds (after :meth:`load_duplicate_ids`, which reads the journal)."""
        return self.journal.load_prepared()

    def read_duplicate_ids(self) -> dict[CacheName, list[tuple[bytes, int]]]:
        """The committed ``DUPLICATE_ID`` records by cache, as :meth:`load_duplicate_ids` groups them, without a
        start-up: open transactions keep their records (an observer's read, for snapshots)."""
        grouped: dict[CacheName, list[tuple[bytes, int]]] = defaultdict(list)
        for record in self.journal.committed():
            grouped[record.cache_name].append((record.key, record.record_id))
        return dict(grouped)
