"""The duplicate-ID cache: a bounded ring of IDs with a map for lookups.

Introduction
------------
This is Artemis 2.11's ``DuplicateIDCacheImpl`` (seed 001), which 2.17
split into ``PersistentDuplicateIDCache`` and ``InMemoryDuplicateIDCache``
without changing how it works (DUP-RING-FIFO). One cache exists per address, and one
more, ``BRIDGE.<address>``, for bridge IDs (DUP-CACHE-PER-ADDRESS). It has three parts:

``cache``
    a map from an ID's bytes to the slot it was last written to. "The ID is
    in the cache" means "the ID is a key of this map" (``contains``, ``DuplicateIDCache.contains``).
``ids``
    at most ``size`` slots, each an ID with the record ID of its journal
    record, or a hole left by an explicit delete (DUP-DELETE-ID).
``pos``
    the write cursor.

``add_to_cache_in_memory`` writes at the cursor: it points the map at the
cursor's slot, then evicts whatever ID the slot held (removing that ID from
the map and deleting its journal record), overwrites the slot and moves the
cursor on, wrapping after the last slot. Eviction is therefore first in,
first out by the time an ID entered memory; looking an ID up, or rejecting
it, never moves it (DUP-RING-FIFO). Because the map is updated before the eviction,
two quirks follow, and this reference keeps them as Artemis has them: an ID
written twice (DUP-SAME-ID-IN-TX) holds two slots and loses its map entry when the older
copy is evicted; an ID written over its own slot loses its map entry too.

``add_to_cache(key, tx, instant_add)`` decides *when* the in-memory write
happens (DUP-TX-HELD, DUP-NONTX-VISIBILITY, DUP-BRIDGE-DUPLICATE). For a client transaction (``instant_add`` false) it
waits until the commit is stored. For an *instant add* (a send outside any
client transaction, or a bridge ID) the answer depends on the version,
given to the cache as ``instant_add_timing``:

* ``AFTER_STORE`` (non-transactional sends before 2.8): once the broker's
  own transaction is stored;
* ``BEFORE_COMMIT`` (2.8 to 2.17, ARTEMIS-2324): in ``before_commit``;
* ``IMMEDIATE`` (2.18 on, ARTEMIS-3384): at once, and deleted again in
  ``before_rollback`` if the transaction rolls back; the delete leaves a
  hole and does not bring back what the write evicted (DUP-NONTX-VISIBILITY, DUP-DELETE-ID).

The waiting is done by an :class:`AddDuplicateIDOperation` registered on
the transaction, as in Artemis. ``atomic_verify`` is the bridge's check:
"contains, else add as an instant add" in one step (DUP-BRIDGE-DUPLICATE).

A cache of size 0 finds nothing and records nothing (DUP-SIZE-ZERO). From 2.28
(``ZeroSizeCache.NO_OP``) it is a :class:`NoOpDuplicateIDCache`, whose
bridge check answers "duplicate" to every ID (``atomicVerify`` returns
false), so every bridged message is dropped (DUP-SIZE-ZERO).

Journal records (DUP-RESTART-NO-PERSIST, DUP-RESTART-RELOAD): with ``persist`` on, every write into memory has
a ``DUPLICATE_ID`` record, inside the transaction the ID travels in, and
every eviction, delete or clear deletes the record. ``load`` rebuilds the
ring from the records a restart finds.

XA (:mod:`.prepared`): a prepare gives each ID its transaction holds a
record of its own, flagged ``prepared`` and filed with the cache
(``held_records``), which no eviction touches and forgetting the cache
deletes (DUP-FORGET-IN-FLIGHT); ``load_prepared`` is ``DuplicateIDCache.load(tx, id)``,
attaching such an ID to the transaction a restart rebuilt (DUP-XA-PREPARED-RESTART).
A cache that a restart makes at size 0 for such an ID takes nothing at the commit.
"""

from __future__ import annotations

from dataclasses import dataclass

from brokerspec.spec import InstantAdd, ReloadKeeps
from brokerspec.spec.duplicates import CacheName, DoomReason

from .journal import DuplicateIdRecord, StorageManager
from .transaction import Transaction, TransactionOperation


@dataclass
class IdSlot:
    """One slot of the ring: an ID and its journal record, or a hole (``key`` None).

    ``owner`` is the transaction whose instant add wrote the slot; while it
    is open the slot's record is not yet durable.
    """

    key: bytes | None
    record_id: int | None = None
    owner: Transaction | None = None


HOLE_KEY = None


class DuplicateIDCache:
    """One bounded ID cache, named after its address (or ``BRIDGE.`` and the address)."""

    def __init__(self, name: CacheName, size: int, storage: StorageManager, persist: bool,
                 instant_add_timing: InstantAdd) -> None:
        self.name = name
        self.size = size
        self.storage = storage
        self.persist = persist
        self.instant_add_timing = instant_add_timing
        self.cache: dict[bytes, int] = {}
        self.ids: list[IdSlot] = []
        self.pos = 0
        self.discarded = False
        self.held_records: list[int] = []
        """Records prepared transactions wrote for IDs of this cache they hold (deleted with the cache)."""

    def is_enabled(self) -> bool:
        """Whether the cache records anything at all (size 0 turns it off, DUP-SIZE-ZERO)."""
        return self.size > 0

    # -- looking up ------------------------------------------------------------------

    def contains(self, key: bytes) -> bool:
        """Whether ``key`` is in the map (``DuplicateIDCache.contains``)."""
        return key in self.cache

    def atomic_verify(self, key: bytes, tx: Transaction) -> bool:
        """The bridge check: False (and ``tx`` doomed) for a duplicate, else add ``key`` as an instant add.

        See DUP-BRIDGE-DUPLICATE.
        """
        if self.contains(key):
            tx.mark_as_rollback_only(DoomReason.BRIDGE_DUPLICATE)
            return False
        self.add_to_cache(key, tx, instant_add=True)
        return True

    # -- adding ----------------------------------------------------------------------

    def add_to_cache(self, key: bytes, tx: Transaction, instant_add: bool) -> None:
        """Record ``key`` as part of ``tx``, now or when ``tx`` commits.

        See DUP-TX-HELD, DUP-NONTX-VISIBILITY, DUP-BRIDGE-DUPLICATE.
        """
        if not self.is_enabled():
            return
        timing = self.instant_add_timing if instant_add else InstantAdd.AFTER_STORE
        if timing is InstantAdd.IMMEDIATE:
            record_id = self.store_record(key, tx)
            self.add_to_cache_in_memory(key, record_id, owner=tx)
            tx.add_operation(AddDuplicateIDOperation(self, key, timing))
        elif timing is InstantAdd.BEFORE_COMMIT:
            tx.add_operation(AddDuplicateIDOperation(self, key, timing))
        else:
            tx.after_store(AddDuplicateIDOperation(self, key, timing))

    def store_record(self, key: bytes, tx: Transaction) -> int | None:
        """Write ``key``'s journal record inside ``tx``; its record ID, or None when not persisting."""
        if not self.persist:
            return None
        record_id = self.storage.generate_id()
        self.storage.store_duplicate_id_transactional(tx.id, self.name, key, record_id)
        return record_id

    def add_to_cache_in_memory(self, key: bytes, record_id: int | None, owner: Transaction | None = None) -> None:
        """Write ``key`` at the cursor, evicting the slot's previous ID, and move the cursor on (DUP-RING-FIFO).

        >>> from brokerspec.spec.duplicates import CacheKind
        >>> cache = DuplicateIDCache(CacheName(CacheKind.NORMAL, "a1"), 2, StorageManager(), False,
        ...                          InstantAdd.IMMEDIATE)
        >>> for key in (b"a", b"b", b"c"):
        ...     cache.add_to_cache_in_memory(key, None)
        >>> [slot.key for slot in cache.ids], cache.pos, cache.contains(b"a")
        ([b'c', b'b'], 1, False)

        Writing an ID over its own slot loses its map entry (the quirk kept on purpose):

        >>> cache.add_to_cache_in_memory(b"b", None)
        >>> [slot.key for slot in cache.ids], cache.contains(b"b")
        ([b'c', b'b'], False)
        """
        self.cache[key] = self.pos
        slot = IdSlot(key, record_id, owner)
        if self.pos < len(self.ids):
            evicted = self.ids[self.pos]
            if evicted.key is not None:
                self.cache.pop(evicted.key, None)
                self.delete_record(evicted)
            self.ids[self.pos] = slot
        else:
            self.ids.append(slot)
        self.pos = 0 if self.pos == self.size - 1 else self.pos + 1

    # -- removing --------------------------------------------------------------------

    def delete_from_cache(self, key: bytes) -> None:
        """Forget ``key``: drop its map entry and, if its slot still holds it, leave a hole (DUP-DELETE-ID).

        The cursor does not move and nothing is compacted.
        """
        used = self.cache.pop(key, None)
        if used is None:
            return
        slot = self.ids[used]
        if slot.key == key:
            self.delete_record(slot)
            self.ids[used] = IdSlot(HOLE_KEY)

    def delete_record(self, slot: IdSlot) -> None:
        """Delete the journal record of ``slot``'s ID, when it has one."""
        if slot.record_id is not None:
            self.storage.delete_duplicate_id(slot.record_id)

    def clear(self) -> None:
        """Forget every ID and delete every record; the cursor goes back to 0 (DUP-FORGET-ON-LAST-QUEUE)."""
        for slot in self.ids:
            self.delete_record(slot)
        self.cache.clear()
        self.ids.clear()
        self.pos = 0

    def discard(self) -> None:
        """Clear the cache for good: the post office no longer knows it (DUP-FORGET-ON-LAST-QUEUE).

        Operations of open transactions that still point at this object do
        nothing from now on. In Artemis they would still write into the
        orphaned object and, at their commit, into the journal, from where a
        restart would bring their IDs back; the spec drops that work
        (DUP-FORGET-IN-FLIGHT), and so does this reference.
        """
        self.clear()
        for record_id in self.held_records:
            self.storage.delete_duplicate_id(record_id)
        self.held_records.clear()
        self.discarded = True

    # -- loading ---------------------------------------------------------------------

    def load(self, stored: list[tuple[bytes, int]], keeps: ReloadKeeps) -> int:
        """Fill the empty ring from the records a restart found (oldest first); return how many were dropped.

        See DUP-RESTART-RELOAD.

        When more IDs are stored than the ring holds, the oldest are dropped
        (ARTEMIS-332, 1.3.0) or, before that, the newest; the dropped
        records are deleted in one journal transaction. The survivors fill
        slots ``0..k-1`` and the cursor stands at ``k``, or at 0 when the
        ring is full, so the next write overwrites the oldest survivor.
        """
        excess = max(0, len(stored) - self.size)
        if keeps is ReloadKeeps.NEWEST:
            dropped, kept = stored[:excess], stored[excess:]
        else:
            kept, dropped = stored[:self.size], stored[self.size:]
        if dropped:
            load_tx = self.storage.generate_id()
            for _, record_id in dropped:
                self.storage.delete_duplicate_id_transactional(load_tx, record_id)
            self.storage.commit(load_tx)
        for key, record_id in kept:
            self.cache[key] = len(self.ids)
            self.ids.append(IdSlot(key, record_id))
        self.pos = 0 if len(self.ids) == self.size else len(self.ids)
        return len(dropped)

    def load_prepared(self, tx: Transaction, key: bytes, record_id: int) -> None:
        """``DuplicateIDCache.load(tx, id)``: a prepared transaction found at a start-up holds ``key``, which
        enters this cache once that transaction's commit is stored (DUP-XA-PREPARED-RESTART).

        ``record_id`` is the prepared record that brought it back; it is
        deleted with the cache if the cache is forgotten first.
        """
        tx.after_store(AddDuplicateIDOperation(self, key, InstantAdd.AFTER_STORE))
        self.held_records.append(record_id)


class AddDuplicateIDOperation(TransactionOperation):
    """The transaction's note to write an ID into a cache at the right moment (seed 001).

    ``timing`` says which hook does the work: ``IMMEDIATE`` (already in
    memory; undone by ``before_rollback``), ``BEFORE_COMMIT`` or
    ``AFTER_STORE``. A waiting ID's journal record is written in
    ``before_commit``, inside the transaction, so that the journal holds
    records in the order IDs enter memory (see :mod:`.journal`).
    """

    def __init__(self, cache: DuplicateIDCache, key: bytes, timing: InstantAdd) -> None:
        self.cache = cache
        self.key = key
        self.timing = timing
        self.record_id: int | None = None
        self.done = False

    def is_live(self) -> bool:
        """Whether the operation still has a cache to work on.

        See its cache was not forgotten, DUP-FORGET-ON-LAST-QUEUE.
        """
        return not self.cache.discarded

    def before_prepare(self, tx: Transaction) -> None:
        """The ID's own record in the prepared transaction, whatever its timing (DUP-XA-PREPARED-RESTART).

        An instant add's slot record is the slot's: an eviction deletes it,
        while the prepared transaction still holds the ID. So the prepare
        writes one more record, flagged ``prepared``, which only the
        transaction's end (or forgetting the cache) deletes.
        """
        if not self.is_live() or not self.cache.persist:
            return
        record_id = self.cache.storage.generate_id()
        tx.store_prepared(DuplicateIdRecord(record_id, self.cache.name, self.key, prepared=True))
        self.cache.held_records.append(record_id)

    def before_commit(self, tx: Transaction) -> None:
        if self.timing is InstantAdd.IMMEDIATE or not self.is_live() or not self.cache.is_enabled():
            return
        self.record_id = self.cache.store_record(self.key, tx)
        if self.timing is InstantAdd.BEFORE_COMMIT:
            self.process()

    def after_commit(self, tx: Transaction) -> None:
        if self.timing is InstantAdd.AFTER_STORE and self.is_live():
            self.process()

    def before_rollback(self, tx: Transaction) -> None:
        if self.timing is InstantAdd.IMMEDIATE and self.is_live():
            self.cache.delete_from_cache(self.key)

    def process(self) -> None:
        """Write the ID into memory, once (a disabled cache, which a start-up may make, takes nothing)."""
        if not self.done and self.cache.is_enabled():
            self.cache.add_to_cache_in_memory(self.key, self.record_id)
            self.done = True


class NoOpDuplicateIDCache(DuplicateIDCache):
    """A cache of size 0 from 2.28 (ARTEMIS-4115): it finds and records nothing, and its bridge check says "duplicate"."""

    def atomic_verify(self, key: bytes, tx: Transaction) -> bool:
        """``NoOpDuplicateIDCache.atomicVerify`` returns false: every bridge ID is a duplicate."""
        tx.mark_as_rollback_only(DoomReason.BRIDGE_DUPLICATE)
        return False
