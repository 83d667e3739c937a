"""The model's duplicate detection: one bounded ID cache per address, recorded with the send or at the commit.

Introduction
------------
A STOMP client asks for duplicate detection the way a core client does: it
sets the ``_AMQ_DUPL_ID`` header, which Artemis's STOMP protocol manager
turns into the message property of that name (a ``String``), so its cache
key is the value's UTF-16LE bytes (DUP-ID-KEY,
:func:`brokerspec.spec.duplicates.compute_cache_key`). The caches are the
fast broker's own :class:`~brokerspec.impl.duplicates.cache.IdCache`, one per
address (DUP-CACHE-PER-ADDRESS), created and sized by the first check on the
address (DUP-SIZE-FIXED), written as a ring at a cursor
(DUP-RING-FIFO, :func:`~brokerspec.impl.duplicates.cache.record_at_cursor`).

Rules this module keeps, with the spec's rule IDs (``docs/duplicate-detection.md``):

* a duplicate outside a transaction is not routed and the client is told the
  send succeeded (DUP-NONTX-DUPLICATE); a new ID is recorded as part of the
  send, in the send's store transaction (DUP-NONTX-VISIBILITY, DUP-RESTART-NO-PERSIST);
* inside a transaction a duplicate makes the transaction rollback-only
  (DUP-TX-DUPLICATE), and a new ID waits for the commit (DUP-TX-HELD): the
  same ID twice in one transaction, or in two open ones, is no duplicate
  (DUP-SAME-ID-IN-TX, DUP-CONCURRENT-TX); the commit records them in send order;
* a send that reaches no queue still records its ID (DUP-ROUTED);
* the address's last queue going forgets its cache (DUP-FORGET-ON-LAST-QUEUE);
* a restart reloads the stored IDs oldest first and, when there are more
  than slots, keeps the newest (DUP-RESTART-RELOAD, ARTEMIS-332); with
  ``persist_id_cache`` off nothing is stored (DUP-RESTART-NO-PERSIST).
"""

from __future__ import annotations

from brokerspec.impl.duplicates.cache import IdCache, SlotLog, record_at_cursor
from brokerspec.spec.duplicates import CacheKind, CacheName, DuplicateId, IdKind, compute_cache_key

from .store import BrokerStore

DUPLICATE_ID_HEADER = "_AMQ_DUPL_ID"
"""The header (Artemis's ``Message.HDR_DUPLICATE_DETECTION_ID``) that carries a message's duplicate ID."""


def compute_key(value: str) -> bytes:
    """The cache key of a ``_AMQ_DUPL_ID`` header value: a String property's key (DUP-ID-KEY).

    >>> compute_key("ab").hex()
    '61006200'
    """
    key = compute_cache_key(DuplicateId(IdKind.STRING, value))
    if key is None:  # pragma: no cover - a String always converts
        raise ValueError(f"duplicate ID {value!r} has no cache key")
    return key


class IdCaches:
    """Every address's ID cache, kept in step with the store."""

    def __init__(self, store: BrokerStore, size: int, persist: bool) -> None:
        self.store = store
        self.size = size
        self.persist = persist
        self.log = SlotLog()
        self.caches: dict[str, IdCache] = {}

    def cache_for(self, address: str) -> IdCache:
        """The address's cache, created and sized now if it has none (DUP-CACHE-PER-ADDRESS, DUP-SIZE-FIXED)."""
        cache = self.caches.get(address)
        if cache is None:
            cache = self.caches[address] = IdCache(CacheName(CacheKind.NORMAL, address), self.size, self.log)
        return cache

    def is_duplicate(self, address: str, key: bytes) -> bool:
        """Whether ``key`` is in the address's cache; the check creates the cache (DUP-SIZE-FIXED)."""
        return key in self.cache_for(address).index

    def record(self, address: str, key: bytes) -> None:
        """Write ``key`` into the address's cache and its record into the open store transaction."""
        record_at_cursor(self.cache_for(address), key, "")
        self.flush()

    def forget_address(self, address: str) -> bool:
        """Drop the address's cache and its stored IDs (DUP-FORGET-ON-LAST-QUEUE); whether there was one."""
        cache = self.caches.pop(address, None)
        if cache is None:
            return False
        cache.live = False
        if self.persist:
            self.store.drop_caches(address)
        return True

    def flush(self) -> None:
        """Turn the slots changed since the last flush into ID records (none without ``persist_id_cache``)."""
        touched, self.log.touched = self.log.touched, []
        if not self.persist:
            return
        for cache, slot in dict.fromkeys(touched):
            if not cache.live:
                continue
            key = cache.slots[slot]
            if key is None:
                self.store.delete_id(False, cache.address, slot)
            else:
                self.store.put_id(False, cache.address, slot, cache.stamps[slot], key)

    def reload(self, stored: dict[tuple[bool, str], list[bytes]]) -> int:
        """Fill the caches from the stored IDs, oldest first, keeping the newest when there are too many.

        See DUP-RESTART-RELOAD (ARTEMIS-332). Returns how many IDs did not fit.
        The store is rewritten to hold exactly what was loaded. With a cache
        size of 0 nothing is loaded and nothing deleted: the stored IDs stay,
        dormant, for a later start with a cache (``NoOpDuplicateIDCache.load``;
        they get negative slots, which forgetting an address leaves alone).
        """
        self.caches.clear()
        self.log = SlotLog()
        total = sum(len(keys) for keys in stored.values())
        if self.size <= 0:
            if self.persist:
                self.store.drop_all_ids()
                for (bridge, address), keys in stored.items():
                    for index, key in enumerate(keys):
                        self.store.put_id(bridge, address, -1 - index, index - len(keys), key)
            return total
        dropped = 0
        if self.persist:
            self.store.drop_all_ids()
        for (bridge, address), keys in sorted(stored.items()):
            if bridge:
                dropped += len(keys)
                continue
            excess = max(0, len(keys) - self.size)
            dropped += excess
            cache = self.cache_for(address)
            cache.fill(tuple(keys[excess:]))
        self.flush()
        return dropped

    def ids(self, address: str, slots: bool = False) -> list[bytes]:
        """The address's IDs, oldest first: those its duplicate check finds, or (``slots``) every ID a slot
        holds, which includes an ID whose newer slot was overwritten (the check no longer finds it)."""
        cache = self.caches.get(address)
        if cache is None:
            return []
        used = sorted((slot for slot in range(cache.filled) if cache.slots[slot] is not None),
                      key=lambda s: cache.stamps[s])
        held = [(slot, key) for slot in used if (key := cache.slots[slot]) is not None]
        return [key for slot, key in held if slots or cache.index.get(key) == slot]
