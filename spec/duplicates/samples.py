"""Small, closed inputs for solver-driven checks of the ID cache.

Introduction
------------
CrossHair explores a function's inputs symbolically. Free byte strings used
as dictionary keys make it concretise them one by one, so the functions here
take IDs from a three-member enumeration and a list of ring steps, run them
through the spec's ring, and return plain values (the slots, the cursor, the
indexed IDs). The fast implementation offers functions of the same names and
signatures over its own cache, so ``crosshair diffbehavior`` can compare the
two; planted bugs offer broken counterparts.
"""

from __future__ import annotations

from enum import Enum

from ..profiles import ReloadKeeps
from .ring import add_to_ring, delete_from_ring, is_in_ring, load_ring, new_ring


class SampleId(Enum):
    """Three IDs, enough for every eviction pattern of a cache of up to 3 slots."""

    X = "x"
    Y = "y"
    Z = "z"


class RingStep(Enum):
    """One thing done to a cache: add (if not already present, as a send does) or delete an ID."""

    SEND_X = "send x"
    SEND_Y = "send y"
    SEND_Z = "send z"
    FORCE_X = "add x unchecked"
    DELETE_X = "delete x"
    DELETE_Y = "delete y"


def get_sample_key(sample: SampleId) -> bytes:
    """The cache key of a sample ID (its text as a SimpleString, DUP-ID-KEY)."""
    return sample.value.encode("utf-16-le")


def describe_slot(key: bytes | None) -> str:
    """A slot's sample ID as its text, ``-`` for a hole."""
    return "-" if key is None else key.decode("utf-16-le")


def run_ring_steps(size: int, steps: list[RingStep]) -> tuple[tuple[str, ...], int, tuple[str, ...], tuple[bool, ...]]:
    """Slots (``-`` for a hole), cursor, indexed IDs (sorted) and each send's "was a duplicate" answer.

    A send checks first and adds only a new ID (DUP-NONTX-DUPLICATE,
    DUP-RING-FIFO); an unchecked add writes even a present ID (the move paths
    of DUP-NO-REJECT never do, the second copy of DUP-SAME-ID-IN-TX does); a
    delete leaves a hole (DUP-DELETE-ID).

    pre: 1 <= size <= 3
    pre: len(steps) <= 6
    post: len(__return__[0]) <= size
    """
    ring = new_ring(size)
    answers: list[bool] = []
    for step in steps:
        if step.name.startswith("SEND_"):
            key = get_sample_key(SampleId[step.name[5:]])
            duplicate = is_in_ring(ring, key)
            answers.append(duplicate)
            if not duplicate:
                ring = add_to_ring(ring, key)
        elif step is RingStep.FORCE_X:
            ring = add_to_ring(ring, get_sample_key(SampleId.X))
        else:
            ring = delete_from_ring(ring, get_sample_key(SampleId[step.name[7:]]))
    return (tuple(describe_slot(k) for k in ring.slots), ring.position,
            tuple(sorted(describe_slot(k) for k in ring.index)), tuple(answers))


def reload_survivors(stored: list[SampleId], size: int, keep_newest: bool) -> tuple[tuple[str, ...], int, int]:
    """The slots, cursor and dropped count after reloading ``stored`` (oldest first) into ``size`` slots.

    Rule DUP-RESTART-RELOAD.

    pre: 1 <= size <= 3
    pre: len(stored) <= 5
    post: __return__[2] == max(0, len(stored) - size)
    """
    keeps = ReloadKeeps.NEWEST if keep_newest else ReloadKeeps.OLDEST
    ring, dropped = load_ring(tuple(get_sample_key(s) for s in stored), size, keeps)
    if ring is None:  # pragma: no cover - size is at least 1
        return (), 0, dropped
    return tuple(describe_slot(k) for k in ring.slots), ring.position, dropped
