"""The mutable ID cache: a preallocated list of slots, a dict index and a cursor.

Introduction
------------
This is the structure of Artemis's ``DuplicateIDCacheImpl`` (2.11, seed 001)
and ``PersistentDuplicateIDCache`` (2.17 on), rule DUP-RING-FIFO, kept mutable so that
a check is one dict probe and an add touches one slot:

``slots``
    a list allocated once, up to :data:`PREALLOCATE_LIMIT` entries (larger
    caches grow by appending while they fill, as ``ArrayList`` does);
    ``filled`` says how many of them are in use, so ``slots[:filled]`` is the
    spec's ``IdRing.slots``. A slot holds a key or ``None``, a *hole* left by
    an explicit delete (DUP-DELETE-ID).
``index``
    key -> the slot it was last written to (``DuplicateIDCache.contains``).
``position``
    the write cursor.
``pending``
    slot -> the session whose uncommitted instant add wrote it (DUP-BRIDGE-DUPLICATE, 2.18
    on); such a slot is in memory but not durable.
``stamps``
    slot -> when it was last written, from a counter shared by every cache
    of one broker. The cursor walks the slots in order, so ordering a
    cache's durable slots by stamp gives the order the spec's
    ``get_durable_ids`` lists them in (DUP-RESTART-NO-PERSIST); the store keeps the stamp with
    each ID record and reloads in that order.

The ring algorithm itself (the order in which the index and the slot change,
the quirks that order implies) lives in the broker's ``_record`` and
``_forget`` seams; this class offers the two slot primitives they use,
:meth:`IdCache.write` and :meth:`IdCache.clear`. Both note the slot in the
shared :class:`SlotLog`, and the broker turns the noted slots into store
writes at the end of the operation. So an override of a seam (a planted
bug) that changes slots only through these primitives keeps the store in
step with memory.
"""

from __future__ import annotations

from brokerspec.spec import FrozenMap
from brokerspec.spec.duplicates import CacheKind, CacheName, IdRing

PREALLOCATE_LIMIT = 1 << 16  # equivalent mutants: up-front allocation only; write() appends past it
"""Slots allocated up front per cache; a larger ``id-cache-size`` grows by appending while it fills."""


class SlotLog:
    """The slots changed by the operation in progress, and the stamp the next write gets."""

    __slots__ = ("touched", "stamp")

    def __init__(self) -> None:
        self.touched: list[tuple[IdCache, int]] = []
        self.stamp = 0  # equivalent mutants: the broker's __init__ calls _rebuild, which resets the stamp


class IdCache:
    """One bounded ID cache (an address's normal cache or its ``BRIDGE.`` cache, DUP-CACHE-PER-ADDRESS)."""

    __slots__ = ("name", "bridge", "address", "size", "slots", "stamps", "filled", "position", "index", "pending",
                 "log", "live")

    def __init__(self, name: CacheName, size: int, log: SlotLog) -> None:
        self.name = name
        self.bridge = name.kind is CacheKind.BRIDGE
        self.address = name.address
        self.size = size
        allocated = min(max(size, 0), PREALLOCATE_LIMIT)  # equivalent mutants (NumberReplacer): sizes are never negative, and a size-0 cache is never written
        self.slots: list[bytes | None] = [None] * allocated
        self.stamps: list[int] = [0] * allocated  # equivalent mutants: write() sets a slot's stamp before anything reads it
        self.filled = 0
        self.position = 0
        self.index: dict[bytes, int] = {}
        self.pending: dict[int, str] = {}
        self.log = log
        self.live = True

    # -- the two slot primitives ----------------------------------------------------

    def write(self, slot: int, key: bytes, owner: str) -> bytes | None:
        """Put ``key`` in ``slot`` (a used slot or the first free one); return what it held. The index is not touched.

        ``owner`` non-empty marks the write as an uncommitted instant add of
        that session; any earlier mark on the slot goes.
        """
        slots = self.slots
        evicted: bytes | None = None
        if slot < self.filled:  # equivalent mutants (Lt_NotEq): the cursor never passes the first free slot, so slot <= filled
            evicted = slots[slot]
            slots[slot] = key
        else:
            if slot != self.filled:  # equivalent mutants (NotEq_Gt, NotEq_Lt): slot >= filled here, and the cursor never passes filled
                raise IndexError(f"cache {self.name}: write at slot {slot} skips the first free slot {self.filled}")
            if slot < len(slots):  # equivalent mutants (Lt_NotEq): slot == filled <= len(slots) here
                slots[slot] = key
            else:
                slots.append(key)
                self.stamps.append(0)  # equivalent mutants: overwritten by the stamp below
            self.filled = slot + 1
        pending = self.pending
        if pending:
            pending.pop(slot, None)
        if owner:
            pending[slot] = owner
        log = self.log
        self.stamps[slot] = log.stamp
        log.stamp += 1  # equivalent mutants (NumberReplacer): stamps are only compared with each other; steps of 2 keep the order
        log.touched.append((self, slot))
        return evicted

    def clear(self, slot: int) -> None:
        """Leave a hole in ``slot`` (DUP-DELETE-ID); its pending mark, if any, goes with it."""
        self.slots[slot] = None
        if self.pending:
            self.pending.pop(slot, None)
        self.log.touched.append((self, slot))

    def settle(self, owner: str) -> None:
        """Drop ``owner``'s pending marks: its instant adds are committed, so their slots become durable."""
        settled = [slot for slot, who in self.pending.items() if who == owner]
        for slot in settled:
            del self.pending[slot]
            self.log.touched.append((self, slot))

    def fill(self, keys: tuple[bytes, ...]) -> None:
        """Load ``keys`` into an empty cache: slots ``0..k-1``, cursor at ``k`` or 0 when full (DUP-RESTART-RELOAD)."""
        for slot, key in enumerate(keys):
            self.write(slot, key, "")
            self.index[key] = slot
        self.position = 0 if len(keys) == self.size else len(keys)  # equivalent mutants (Eq_GtE): _reload never keeps more IDs than the size

    # -- reading ----------------------------------------------------------------------

    def is_durable(self, slot: int) -> bool:
        """Whether ``slot`` holds an ID whose record belongs in the store (not a hole, not pending)."""
        return self.slots[slot] is not None and slot not in self.pending

    def to_ring(self) -> IdRing:
        """This cache as the spec's value."""
        return IdRing(self.size, tuple(self.slots[:self.filled]), self.position, FrozenMap(self.index),
                      FrozenMap(self.pending))

    def problems(self) -> list[str]:
        """Every way the private structure is inconsistent (empty when it is sound)."""
        found: list[str] = []
        size = max(self.size, 0)
        if self.filled > size:
            found.append(f"{self.filled} slots in use in a cache of size {self.size}")
        if self.filled < size and self.position != self.filled:
            found.append(f"cursor at {self.position} while {self.filled} slots are in use")
        if size and not 0 <= self.position < size:
            found.append(f"cursor {self.position} outside 0..{size - 1}")
        if any(key is not None for key in self.slots[self.filled:]):
            found.append("a key beyond the slots in use")
        for key, slot in self.index.items():
            if not 0 <= slot < self.filled or self.slots[slot] != key:
                found.append(f"index sends {key.hex()} to slot {slot}, which does not hold it")
        for slot in self.pending:
            if not 0 <= slot < self.filled or self.slots[slot] is None:
                found.append(f"pending mark on empty slot {slot}")
        order = list(range(self.position, self.filled)) + list(range(min(self.position, self.filled)))
        stamps = [self.stamps[slot] for slot in order if self.slots[slot] is not None]
        if stamps != sorted(stamps):
            found.append("write stamps out of cursor order, so the store would reload IDs out of order")
        return found


def record_at_cursor(cache: IdCache, key: bytes, owner: str) -> None:
    """Write ``key`` at the cursor of ``cache``, evicting what the slot held (DUP-RING-FIFO).

    The order is Artemis's ``addToCacheInMemory``: the index points the key
    at the cursor first, then the evicted key leaves the index, even when
    it is the same key or a newer slot still holds it. ``owner`` marks a
    pending instant add; a cache of size 0 records nothing.
    """
    size = cache.size
    if size <= 0:  # equivalent mutants: sizes are never negative
        return
    position = cache.position
    index = cache.index
    index[key] = position
    evicted = cache.write(position, key, owner)
    if evicted is not None:
        index.pop(evicted, None)
    cache.position = 0 if position == size - 1 else position + 1  # equivalent mutants (Eq_GtE): the cursor never passes size - 1
