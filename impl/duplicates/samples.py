"""Closed entry points into the fast ID cache, named and typed like the spec's samples.

Introduction
------------
:mod:`brokerspec.spec.duplicates.samples` drives the spec's ring with a
short list of steps over three IDs, the shape of input CrossHair explores
well. The functions here take the same inputs and return the same plain
values, but run them through the fast broker's seams (``_is_duplicate``,
``_record``, ``_forget``, ``_reload``) on an :class:`~.cache.IdCache`, so
``crosshair diffbehavior`` can compare the two implementations of
DUP-RING-FIFO, DUP-DELETE-ID and DUP-RESTART-RELOAD. The ``*_on`` variants take the broker class, so a planted bug
that overrides one of those seams can be compared with the correct one.

Only the ring seams run here, and they touch nothing but the cache they
are given, so the broker object is made without ``__init__``: no store is
opened (CrossHair forbids the side effect of opening one), and the one
setting the reload seam reads is set by hand.
"""

from __future__ import annotations

from brokerspec.spec.duplicates import CacheKind, CacheName
from brokerspec.spec.duplicates.samples import RingStep, SampleId, describe_slot, get_sample_key

from .broker import FastDuplicatesBroker
from .cache import IdCache, SlotLog

SAMPLE_CACHE = CacheName(CacheKind.NORMAL, "sample")


def ring_seams(broker_type: type[FastDuplicatesBroker], keep_newest: bool = True) -> FastDuplicatesBroker:
    """A ``broker_type`` object for calling its ring seams only: no store, no state."""
    broker = broker_type.__new__(broker_type)
    broker._keeps_newest = keep_newest
    return broker


def run_ring_steps(size: int, steps: list[RingStep]) -> tuple[tuple[str, ...], int, tuple[str, ...], tuple[bool, ...]]:
    """Slots (``-`` for a hole), cursor, indexed IDs (sorted) and each send's "was a duplicate" answer.

    pre: 1 <= size <= 3
    pre: len(steps) <= 6
    """
    return run_ring_steps_on(FastDuplicatesBroker, size, steps)


def run_ring_steps_on(broker_type: type[FastDuplicatesBroker], size: int,
                      steps: list[RingStep]) -> tuple[tuple[str, ...], int, tuple[str, ...], tuple[bool, ...]]:
    """:func:`run_ring_steps` through the seams of ``broker_type``."""
    broker = ring_seams(broker_type)
    cache = IdCache(SAMPLE_CACHE, size, SlotLog())
    answers: list[bool] = []
    for step in steps:
        if step.name.startswith("SEND_"):
            key = get_sample_key(SampleId[step.name[5:]])
            duplicate = broker._is_duplicate(cache, key)
            answers.append(duplicate)
            if not duplicate:
                broker._record(cache, key, "")
        elif step is RingStep.FORCE_X:
            broker._record(cache, get_sample_key(SampleId.X), "")
        else:
            broker._forget(cache, get_sample_key(SampleId[step.name[7:]]))
    return (tuple(describe_slot(key) for key in cache.slots[:cache.filled]), cache.position,
            tuple(sorted(describe_slot(key) for key in cache.index)), tuple(answers))


def reload_survivors(stored: list[SampleId], size: int, keep_newest: bool) -> tuple[tuple[str, ...], int, int]:
    """The slots, cursor and dropped count after reloading ``stored`` (oldest first) into ``size`` slots.

    See DUP-RESTART-RELOAD.

    pre: 1 <= size <= 3
    pre: len(stored) <= 5
    """
    return reload_survivors_on(FastDuplicatesBroker, stored, size, keep_newest)


def reload_survivors_on(broker_type: type[FastDuplicatesBroker], stored: list[SampleId], size: int,
                        keep_newest: bool) -> tuple[tuple[str, ...], int, int]:
    """:func:`reload_survivors` through the ``_reload`` seam of ``broker_type``."""
    broker = ring_seams(broker_type, keep_newest)
    kept, dropped = broker._reload(tuple(get_sample_key(sample) for sample in stored), size)
    if kept is None:
        return (), 0, dropped
    cache = IdCache(SAMPLE_CACHE, size, SlotLog())
    cache.fill(kept)
    return tuple(describe_slot(key) for key in cache.slots[:cache.filled]), cache.position, dropped
