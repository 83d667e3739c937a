"""The bounded duplicate-ID cache: a FIFO ring with an index.

Introduction
------------
Each cache (one per address, and one more per address for bridge IDs) is
the structure Artemis builds in ``DuplicateIDCacheImpl`` (2.11, seed 001)
and ``InMemoryDuplicateIDCache``/``PersistentDuplicateIDCache`` (2.17 on),
rule DUP-RING-FIFO:

* ``slots``: at most ``size`` slots, each holding an ID or a *hole*
  (``None``) left by an explicit delete;
* ``index``: a map from ID to the slot it was last written to; membership
  in the index is what "the ID is in the cache" means (``DuplicateIDCache.contains``);
* ``position``: the write cursor.

Adding an ID first points the index at the cursor's slot, then overwrites
that slot, removing the slot's previous ID from the index (in that order,
as the broker does), then moves the cursor on, wrapping after the last
slot. Eviction is therefore strict FIFO by the time an ID entered memory;
looking an ID up, or rejecting it as a duplicate, never moves it (DUP-RING-FIFO).

Two quirks follow from that order and are kept on purpose: an ID written
twice (DUP-SAME-ID-IN-TX) occupies two slots, and evicting the older copy removes the ID
from the index although the newer slot still holds it; and writing an ID
over a slot that holds the same ID removes it from the index altogether.

Deleting an ID (DUP-DELETE-ID) removes it from the index and, if its slot still holds
it, leaves a hole there. The cursor does not move and nothing is compacted:
the hole is refilled only when the cursor comes round to it.

``pending`` marks slots written by an instant add inside a client
transaction that has not committed (DUP-NONTX-VISIBILITY, DUP-BRIDGE-DUPLICATE from 2.18): in memory at once,
but not yet durable. :func:`get_durable_ids` leaves them out. A slot marked
:data:`STRANDED` was written by the instant add of a transaction the broker
started for a send and then neither committed nor rolled back (an
auto-creating send refused after the check, DUP-AUTO-CREATE-NAME-TAKEN): it
stays in memory, never durable, until it is overwritten, deleted or lost
at a restart.

A size of 0 disables the cache: nothing is ever added (DUP-SIZE-ZERO).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..frozen import FrozenMap
from ..profiles import ReloadKeeps


STRANDED = "(abandoned)"
"""The owner of a pending slot whose transaction will never end (``PostOfficeImpl.route`` throws from
``checkAddress`` without ending the transaction it started for the send)."""


@dataclass(frozen=True)
class IdRing:
    """One bounded ID cache.

    inv: 0 <= len(self.slots) <= max(self.size, 0)
    """

    size: int
    slots: tuple[bytes | None, ...] = ()
    position: int = 0
    index: FrozenMap[bytes, int] = field(default_factory=FrozenMap)
    pending: FrozenMap[int, str] = field(default_factory=FrozenMap)


def new_ring(size: int) -> IdRing:
    """An empty cache of ``size`` slots (DUP-SIZE-FIXED: the size is fixed when the cache is created)."""
    return IdRing(size)


def is_in_ring(ring: IdRing, key: bytes) -> bool:
    """Whether ``key`` is in the cache: a plain index lookup (``DuplicateIDCache.contains``).

    >>> is_in_ring(add_to_ring(new_ring(2), b"a"), b"a")
    True
    """
    return key in ring.index


def add_to_ring(ring: IdRing, key: bytes, owner: str = "") -> IdRing:
    """Write ``key`` at the cursor, evicting what the slot held; ``owner`` marks an uncommitted instant add.

    Rule DUP-RING-FIFO.

    pre: ring.size >= 0
    post: ring.size == 0 or is_in_ring(__return__, key) or key == (ring.slots[ring.position] if ring.position < len(ring.slots) else None)
    post: len(__return__.slots) <= max(ring.size, 0)

    >>> ring = add_to_ring(add_to_ring(add_to_ring(new_ring(2), b"a"), b"b"), b"c")
    >>> ring.slots, is_in_ring(ring, b"a")
    ((b'c', b'b'), False)
    """
    if ring.size <= 0:
        return ring
    position = ring.position
    index = ring.index.set(key, position)
    slots = list(ring.slots)
    if position < len(slots):
        evicted = slots[position]
        slots[position] = key
        if evicted is not None and evicted in index:
            index = index.remove(evicted)
    else:
        slots.append(key)
    pending = ring.pending.remove(position) if position in ring.pending else ring.pending
    if owner:
        pending = pending.set(position, owner)
    next_position = 0 if position == ring.size - 1 else position + 1
    return IdRing(ring.size, tuple(slots), next_position, index, pending)


def delete_from_ring(ring: IdRing, key: bytes) -> IdRing:
    """Forget ``key``: drop it from the index and leave a hole where it sits; the cursor stays (DUP-DELETE-ID).

    post: not is_in_ring(__return__, key)
    post: __return__.position == ring.position
    post: len(__return__.slots) == len(ring.slots)

    >>> ring = delete_from_ring(add_to_ring(add_to_ring(new_ring(3), b"a"), b"b"), b"a")
    >>> ring.slots, ring.position
    ((None, b'b'), 2)
    """
    used = ring.index.get(key)
    if used is None:
        return ring
    index = ring.index.remove(key)
    slots = ring.slots
    pending = ring.pending
    if used < len(slots) and slots[used] == key:
        slots = slots[:used] + (None,) + slots[used + 1:]
        if used in pending:
            pending = pending.remove(used)
    return IdRing(ring.size, slots, ring.position, index, pending)


def settle_pending(ring: IdRing, owner: str) -> IdRing:
    """Mark ``owner``'s uncommitted instant adds as durable (its transaction committed)."""
    if owner not in ring.pending.values():
        return ring
    pending = FrozenMap((slot, who) for slot, who in ring.pending.items() if who != owner)
    return IdRing(ring.size, ring.slots, ring.position, ring.index, pending)


def get_ids_in_order(ring: IdRing) -> tuple[bytes, ...]:
    """The IDs the slots hold, oldest first (the order they entered memory), holes skipped.

    post: len(__return__) <= len(ring.slots)

    >>> get_ids_in_order(add_to_ring(add_to_ring(add_to_ring(new_ring(2), b"a"), b"b"), b"c"))
    (b'b', b'c')
    """
    slots = ring.slots[ring.position:] + ring.slots[:ring.position]
    return tuple(key for key in slots if key is not None)


def get_durable_ids(ring: IdRing) -> tuple[bytes, ...]:
    """The IDs whose journal records are committed, oldest first: the slots minus holes and pending adds."""
    order = list(range(ring.position, len(ring.slots))) + list(range(ring.position))
    return tuple(key for slot in order if (key := ring.slots[slot]) is not None and slot not in ring.pending)


def load_ring(stored: tuple[bytes, ...], size: int, keeps: ReloadKeeps) -> tuple[IdRing | None, int]:
    """Rebuild a cache from its stored IDs (oldest first); return it (None if disabled) and how many were dropped.

    Rule DUP-RESTART-RELOAD.

    When more IDs are stored than the cache holds, the oldest are dropped
    (ARTEMIS-332, 1.3.0); before that the newest were. The survivors fill
    slots ``0..k-1`` and the cursor stands at ``k``, or at 0 when the cache
    is full, so FIFO order carries across the restart.

    pre: size >= 0
    post: __return__[0] is None or len(__return__[0].slots) == min(len(stored), size)
    post: __return__[1] == (len(stored) if size == 0 else max(0, len(stored) - size))

    >>> ring, dropped = load_ring((b"a", b"b", b"c"), 2, ReloadKeeps.NEWEST)
    >>> ring.slots, ring.position, dropped
    ((b'b', b'c'), 0, 1)
    """
    if size <= 0:
        return None, len(stored)
    excess = max(0, len(stored) - size)
    kept = stored[excess:] if keeps is ReloadKeeps.NEWEST else stored[:size]
    index: dict[bytes, int] = {}
    for slot, key in enumerate(kept):
        index[key] = slot
    position = 0 if len(kept) == size else len(kept)
    return IdRing(size, tuple(kept), position, FrozenMap(index)), excess


def ring_problems(ring: IdRing) -> list[str]:
    """Every way ``ring`` breaks the cache's invariants (empty when it is well formed)."""
    problems: list[str] = []
    if len(ring.slots) > ring.size:
        problems.append(f"{len(ring.slots)} slots in a cache of size {ring.size}")
    if len(ring.slots) < ring.size and ring.position != len(ring.slots):
        problems.append(f"cursor at {ring.position} while only {len(ring.slots)} slots are filled")
    if ring.size and not 0 <= ring.position < ring.size:
        problems.append(f"cursor {ring.position} outside 0..{ring.size - 1}")
    for key, slot in ring.index.items():
        if not 0 <= slot < len(ring.slots) or ring.slots[slot] != key:
            problems.append(f"index sends {key.hex()} to slot {slot}, which does not hold it")
    for slot in ring.pending:
        if not 0 <= slot < len(ring.slots) or ring.slots[slot] is None:
            problems.append(f"pending mark on empty slot {slot}")
    return problems
