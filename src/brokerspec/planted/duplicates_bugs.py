"""Wrong duplicate-detection implementations, kept to prove the checkers catch them.

Each class is the fast broker with one plausible mistake, made by overriding
one of its documented seams (see ``brokerspec.impl.duplicates.broker``).
``PLANTED`` lists them with the profiles under which the mistake shows and,
where it lives in code CrossHair can reach, the pair of functions to compare
(or, for a visibility mistake, the broken function whose contract fails).
"""

from __future__ import annotations

from brokerspec.planted.registry import ALL, PlantedBug

from brokerspec.impl.duplicates import FastDuplicatesBroker
from brokerspec.impl.duplicates.broker import OpenTransaction
from brokerspec.impl.duplicates.cache import IdCache
from brokerspec.impl.duplicates.samples import reload_survivors_on, run_ring_steps_on
from brokerspec.impl.duplicates.store import PreparedIds
from brokerspec.spec import InstantAdd
from brokerspec.spec.duplicates import AddMoment, CacheKind, DoomReason
from brokerspec.spec.duplicates.samples import RingStep, SampleId

# --- the mistakes -------------------------------------------------------------------


class IdAddedAtSend(FastDuplicatesBroker):
    """A transactional send's ID enters the cache at the send, not at the commit (against DUP-TX-HELD)."""

    def _hold_id(self, tx: OpenTransaction, cache: IdCache, key: bytes, moment: AddMoment) -> None:
        self._record(cache, key, "")


class NewestEvicted(FastDuplicatesBroker):
    """A full cache overwrites the ID written last instead of the oldest (against DUP-RING-FIFO)."""

    def _record(self, cache: IdCache, key: bytes, owner: str) -> None:
        if cache.size <= 0:
            return
        if cache.filled < cache.size:
            super()._record(cache, key, owner)
            return
        newest = (cache.position - 1) % cache.size
        cache.index[key] = newest
        evicted = cache.write(newest, key, owner)
        if evicted is not None and evicted != key:
            cache.index.pop(evicted, None)


class SharedBridgeCache(FastDuplicatesBroker):
    """Bridge IDs go into the address's normal cache (against DUP-CACHE-PER-ADDRESS)."""

    def _cache_for(self, kind: CacheKind, address: str) -> IdCache:
        return super()._cache_for(CacheKind.NORMAL, address)


class ReloadKeepsWrongEnd(FastDuplicatesBroker):
    """A reload into a smaller cache keeps the end of the stored list the profile drops (against DUP-RESTART-RELOAD)."""

    def _reload(self, stored: tuple[bytes, ...], size: int) -> tuple[tuple[bytes, ...] | None, int]:
        self._keeps_newest = not self._keeps_newest
        try:
            return super()._reload(stored, size)
        finally:
            self._keeps_newest = not self._keeps_newest


class RollbackLeavesIds(FastDuplicatesBroker):
    """A rollback does not delete the transaction's instant adds (against ARTEMIS-3384, Artemis 2.18.0)."""

    def _forget(self, cache: IdCache, key: bytes) -> None:
        if not getattr(self, "_undoing", False):
            super()._forget(cache, key)

    def _undo(self, tx: OpenTransaction) -> None:
        self._undoing = True
        try:
            super()._undo(tx)
        finally:
            self._undoing = False


class DuplicateDoesNotDoom(FastDuplicatesBroker):
    """A duplicate inside a transaction leaves it committable (against DUP-TX-DUPLICATE)."""

    def _doom(self, tx: OpenTransaction, reason: DoomReason) -> None:
        if reason is not DoomReason.DUPLICATE_ID:
            super()._doom(tx, reason)


class RejectedDuplicateMoves(FastDuplicatesBroker):
    """Finding a duplicate writes it again at the cursor, as an LRU would (against DUP-RING-FIFO)."""

    def _is_duplicate(self, cache: IdCache, key: bytes) -> bool:
        found = super()._is_duplicate(cache, key)
        if found:
            self._record(cache, key, "")
        return found


class LastQueueKeepsIds(FastDuplicatesBroker):
    """Deleting an address's last queue keeps its IDs (against DUP-FORGET-ON-LAST-QUEUE)."""

    def _forget_address(self, address: str) -> None:
        return None


class PreparedIdLostAtRestart(FastDuplicatesBroker):
    """A restart drops the ID records of prepared transactions, so their second-phase commit records no ID.

    Against DUP-XA-PREPARED-RESTART (``loadPreparedTransactions`` hands every
    ``DUPLICATE_ID`` record of a prepared transaction to ``DuplicateIDCache.load(tx, id)``):
    the messages and acknowledgements come back, the IDs do not, and the store
    forgets them too.
    """

    def _reattach_ids(self, session: str, ids: PreparedIds) -> list[tuple[IdCache, bytes]]:
        messages, _ = self._store.read_prepared()[session]
        self._store.forget_prepared(session)
        self._store.put_prepared(session, messages, [])
        return []


class PreparedIdVisibleBeforeCommit(FastDuplicatesBroker):
    """A prepare makes the transaction's IDs visible (and durable) at once, as if it were the commit.

    Against DUP-XA-PREPARE: a prepared transaction reserves nothing, its IDs
    enter the cache only at the second phase (``DuplicateDetectionTest.testXADuplicateDetection1``).
    """

    def _store_prepared(self, tx: OpenTransaction) -> None:
        self._commit_ids(tx)
        tx.before_commit.clear()
        tx.after_store.clear()
        tx.instant.clear()
        super()._store_prepared(tx)


# --- closed entry points for CrossHair --------------------------------------------------


_SEND = {SampleId.X: RingStep.SEND_X, SampleId.Y: RingStep.SEND_Y, SampleId.Z: RingStep.SEND_Z}

RingResult = tuple[tuple[str, ...], int, tuple[str, ...], tuple[bool, ...]]


def four_sends(size: int, first: SampleId, second: SampleId, third: SampleId, fourth: SampleId) -> RingResult:
    """Four sends through the fast cache: fixed arity, so the solver enumerates ID orders quickly.

    pre: 1 <= size <= 3
    """
    return run_ring_steps_on(FastDuplicatesBroker, size, [_SEND[s] for s in (first, second, third, fourth)])


def four_sends_newest_evicted(size: int, first: SampleId, second: SampleId, third: SampleId,
                              fourth: SampleId) -> RingResult:
    """:func:`four_sends` through :class:`NewestEvicted`.

    pre: 1 <= size <= 3
    """
    return run_ring_steps_on(NewestEvicted, size, [_SEND[s] for s in (first, second, third, fourth)])


def run_ring_steps_rejected_moves(size: int, steps: list[RingStep]) -> tuple[
        tuple[str, ...], int, tuple[str, ...], tuple[bool, ...]]:
    """The ring samples through :class:`RejectedDuplicateMoves`.

    pre: 1 <= size <= 3
    pre: len(steps) <= 6
    """
    return run_ring_steps_on(RejectedDuplicateMoves, size, steps)


def reload_survivors_wrong_end(stored: list[SampleId], size: int, keep_newest: bool) -> tuple[
        tuple[str, ...], int, int]:
    """The reload samples through :class:`ReloadKeepsWrongEnd`.

    pre: 1 <= size <= 3
    pre: len(stored) <= 5
    """
    return reload_survivors_on(ReloadKeepsWrongEnd, stored, size, keep_newest)


def compute_add_moment_at_send(in_transaction: bool, bridged: bool, timing: InstantAdd) -> AddMoment:
    """The moment :class:`IdAddedAtSend` uses: every ID at once, with the spec's contract.

    post: in_transaction or __return__ == AddMoment.WITH_SEND
    post: not in_transaction or bridged or __return__ == AddMoment.AFTER_STORE
    """
    return AddMoment.AT_ONCE if in_transaction else AddMoment.WITH_SEND


# --- the registry ---------------------------------------------------------------------------


SAMPLES = "brokerspec.impl.duplicates.samples"
ME = "brokerspec.planted.duplicates_bugs"

PLANTED: tuple[PlantedBug, ...] = (
    PlantedBug("id-added-at-send-not-at-commit", IdAddedAtSend, ALL,
               ("check", f"{ME}.compute_add_moment_at_send")),
    PlantedBug("newest-evicted-instead-of-oldest", NewestEvicted, ALL,
               (f"{ME}.four_sends", f"{ME}.four_sends_newest_evicted")),
    PlantedBug("bridge-and-normal-caches-shared", SharedBridgeCache, ALL, None,
               "the mistake is which cache a message is checked against, decided by the broker's routing "
               "of a whole send; the ring samples take one cache as given"),
    PlantedBug("reload-keeps-the-wrong-end", ReloadKeepsWrongEnd, ALL,
               (f"{SAMPLES}.reload_survivors", f"{ME}.reload_survivors_wrong_end")),
    PlantedBug("rollback-leaves-ids-behind", RollbackLeavesIds, ("artemis-latest",), None,
               "only instant adds inside a client transaction are undone, so the mistake needs a "
               "transaction, a bridge ID and a rollback: state across several broker operations"),
    PlantedBug("duplicate-in-transaction-does-not-doom", DuplicateDoesNotDoom, ALL, None,
               "the doom is a transaction's state across a send and a commit, not a pure function"),
    PlantedBug("rejected-duplicate-moves-in-ring", RejectedDuplicateMoves, ALL,
               (f"{SAMPLES}.run_ring_steps", f"{ME}.run_ring_steps_rejected_moves")),
    PlantedBug("last-queue-deleted-keeps-ids", LastQueueKeepsIds, ALL, None,
               "forgetting lives in the broker's queue bookkeeping, outside the cache functions"),
    PlantedBug("prepared-id-lost-at-restart", PreparedIdLostAtRestart, ALL, None,
               "the mistake is in the reload of a prepared transaction from the store, across a prepare, a "
               "restart and a commit: state across several broker operations and a store"),
    PlantedBug("prepared-id-visible-before-commit", PreparedIdVisibleBeforeCommit, ALL, None,
               "the mistake is when a transaction's IDs enter the cache across a send, a prepare and a commit; "
               "the visibility function the spec contracts is not the one the prepare uses"),
)
