"""The teaching reference for duplicate detection, checked against hand-derived outcomes and the spec.

Three kinds of check:

* table-driven examples: each step's outcome is written out by hand from the
  rules (R-numbers in the names), and both the reference and the spec must
  produce exactly it; some examples also pin the cache's slots;
* a few checks of the reference's parts on their own (the journal, the
  transaction, the cache's reload, a prepared transaction's records);
* a Hypothesis run of random command sequences over tiny alphabets, under
  every bundled profile and a few option variants, comparing the
  reference's outcome and snapshot with the spec after every step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brokerspec.reference.duplicates import (
    AcknowledgeRecord,
    DuplicateIDCache,
    DuplicateIdRecord,
    MessageRecord,
    ReferenceDuplicatesBroker,
    StorageManager,
    Transaction,
    TransactionState,
)
from brokerspec.spec import PROFILES, InstantAdd, InvariantBroken, Outcome, Profile, ReloadKeeps, get_profile
from brokerspec.spec.duplicates import (
    Begin,
    CacheKind,
    CacheName,
    Commit,
    CommitFailed,
    Committed,
    Crash,
    CreateQueue,
    DeleteId,
    DeleteQueue,
    DoomReason,
    Done,
    DuplicatesCommand,
    DuplicatesState,
    IdDeleted,
    IdQueried,
    IdRing,
    NotSupported,
    NoTransaction,
    Prepare,
    PrepareFailed,
    QueryId,
    QueueDeleted,
    Receive,
    Received,
    Restart,
    Restarted,
    RolledBack,
    Rollback,
    RoutingStatus,
    Send,
    SendFailed,
    SendFailure,
    Sent,
    SetIdCacheSize,
    TransactionOpen,
    TransactionPrepared,
    apply,
    initial_state,
)
from depth import scaled
from duplicate_ids import LONG, X, X_BYTES, X_UTF8, Y, Z

KX, KY, KZ = (value.encode("utf-16-le") for value in "xyz")

OK, NO_BINDINGS, DUPLICATED = RoutingStatus.OK, RoutingStatus.NO_BINDINGS, RoutingStatus.DUPLICATED_ID
OLD_RELOAD = (("duplicates.reload_keeps", "OLDEST"), ("duplicates.nontx_add", "AFTER_STORE"))
"""Artemis 1.2's duplicate detection as options: reload keeps the oldest IDs, non-tx IDs visible after the store."""
PERSIST_OFF = (("duplicates.persist_id_cache", "false"),)

Step = tuple[DuplicatesCommand, Outcome]
StateCheck = Callable[[DuplicatesState], None]


def make_profile(name: str, size: int | None = None, overrides: tuple[tuple[str, str], ...] = ()) -> Profile:
    """A bundled profile with option overrides and, when given, a global id-cache-size."""
    profile = get_profile(name, overrides)
    return profile if size is None else profile.with_option("duplicates.id_cache_size", str(size))


def normal_ring(state: DuplicatesState, address: str = "a1") -> IdRing:
    return state.caches[CacheName(CacheKind.NORMAL, address)]


@dataclass(frozen=True)
class Example:
    """A script with the outcome each step must have, and optional checks of the final state."""

    name: str
    profile: Profile
    steps: tuple[Step, ...]
    check: StateCheck | None = None


def ring_is(slots: tuple[bytes | None, ...], position: int, address: str = "a1") -> StateCheck:
    def check(state: DuplicatesState) -> None:
        ring = normal_ring(state, address)
        assert (ring.slots, ring.position) == (slots, position)
    return check


def expect_no_caches(state: DuplicatesState) -> None:
    assert dict(state.caches) == {}


def expect_disabled_cache(state: DuplicatesState) -> None:
    assert normal_ring(state) == IdRing(0)


def expect_same_id_in_two_slots(state: DuplicatesState) -> None:
    ring = normal_ring(state)
    assert ring.slots == (KX, KX) and dict(ring.index) == {KX: 1}


def expect_bridge_cache_apart(state: DuplicatesState) -> None:
    assert set(normal_ring(state).index) == {KX}
    assert set(state.caches[CacheName(CacheKind.BRIDGE, "a1")].index) == {b"\x01", b"\x02"}


EXAMPLES: tuple[Example, ...] = (
    Example("R8 a duplicate outside a transaction is dropped; the client is told it succeeded",
            make_profile("seed"), (
                (CreateQueue("a1", "q1"), Done()),
                (Send("s1", "a1", X), Sent(OK, 1, ("q1",))),
                (Send("s2", "a1", X), Sent(DUPLICATED)),
                (Send("s2", "a1", X_BYTES), Sent(DUPLICATED)),
                (Send("s2", "a1", X_UTF8), Sent(OK, 2, ("q1",))),
                (Receive("s3", "q1"), Received(1)),
                (Receive("s3", "q1"), Received(2)),
                (Receive("s3", "q1"), Received(None)),
            )),
    Example("R9 a duplicate dooms the transaction; the commit fails and rolls back its sends and acks",
            make_profile("artemis-2.11"), (
                (CreateQueue("a1", "q1"), Done()),
                (Send("s1", "a1", X), Sent(OK, 1, ("q1",))),
                (Send("s1", "a1"), Sent(OK, 2, ("q1",))),
                (Begin("s2"), Done()),
                (Receive("s2", "q1"), Received(1)),
                (Send("s2", "a1", Y), Sent(OK, 3, ("q1",))),
                (Send("s2", "a1", X), Sent(DUPLICATED, rollback_only=True)),
                (Send("s2", "a1", Z), Sent(OK, 4, ("q1",), rollback_only=True)),
                (Commit("s2"), CommitFailed(DoomReason.DUPLICATE_ID)),
                (Receive("s3", "q1"), Received(1)),
                (Send("s3", "a1", Y), Sent(OK, 5, ("q1",))),
            )),
    Example("R11 an ID sent in a transaction is visible only after the commit, never after a rollback",
            make_profile("artemis-latest"), (
                (CreateQueue("a1", "q1"), Done()),
                (Begin("s1"), Done()),
                (Send("s1", "a1", X), Sent(OK, 1, ("q1",))),
                (Send("s2", "a1", X), Sent(OK, 2, ("q1",))),
                (Commit("s1"), Committed((1,))),
                (Send("s2", "a1", X), Sent(DUPLICATED)),
                (Begin("s1"), Done()),
                (Send("s1", "a1", Y), Sent(OK, 3, ("q1",))),
                (Rollback("s1"), RolledBack()),
                (Send("s2", "a1", Y), Sent(OK, 4, ("q1",))),
            )),
    Example("R14 the same ID twice in one transaction: both delivered, two slots",
            make_profile("seed", 2), (
                (CreateQueue("a1", "q1"), Done()),
                (Begin("s1"), Done()),
                (Send("s1", "a1", X), Sent(OK, 1, ("q1",))),
                (Send("s1", "a1", X), Sent(OK, 2, ("q1",))),
                (Commit("s1"), Committed((1, 2))),
                (Receive("s2", "q1"), Received(1)),
                (Receive("s2", "q1"), Received(2)),
            ), expect_same_id_in_two_slots),
    Example("R15 two open transactions with the same ID both commit",
            make_profile("seed"), (
                (CreateQueue("a1", "q1"), Done()),
                (Begin("s1"), Done()),
                (Begin("s2"), Done()),
                (Send("s1", "a1", X), Sent(OK, 1, ("q1",))),
                (Send("s2", "a1", X), Sent(OK, 2, ("q1",))),
                (Commit("s1"), Committed((1,))),
                (Commit("s2"), Committed((2,))),
                (Send("s3", "a1", X), Sent(DUPLICATED)),
            )),
    Example("R19 a full ring of 2 evicts first in, first out",
            make_profile("seed", 2), (
                (Send("s1", "a1", X), Sent(NO_BINDINGS, 1)),
                (Send("s1", "a1", Y), Sent(NO_BINDINGS, 2)),
                (Send("s1", "a1", Z), Sent(NO_BINDINGS, 3)),
                (Send("s1", "a1", Y), Sent(DUPLICATED)),
                (Send("s1", "a1", X), Sent(NO_BINDINGS, 4)),
                (Send("s1", "a1", Z), Sent(DUPLICATED)),
                (Send("s1", "a1", Y), Sent(NO_BINDINGS, 5)),
            ), ring_is((KY, KX), 1)),
    Example("R19 a rejected duplicate does not move: it is still the oldest",
            make_profile("artemis-2.11", 2), (
                (Send("s1", "a1", X), Sent(NO_BINDINGS, 1)),
                (Send("s1", "a1", Y), Sent(NO_BINDINGS, 2)),
                (Send("s1", "a1", X), Sent(DUPLICATED)),
                (Send("s1", "a1", Z), Sent(NO_BINDINGS, 3)),
                (Send("s1", "a1", X), Sent(NO_BINDINGS, 4)),
            ), ring_is((KZ, KX), 0)),
    Example("R21 a delete leaves a hole; the cursor does not move; the hole is refilled in turn",
            make_profile("seed", 3), (
                (Send("s1", "a1", X), Sent(NO_BINDINGS, 1)),
                (Send("s1", "a1", Y), Sent(NO_BINDINGS, 2)),
                (Send("s1", "a1", Z), Sent(NO_BINDINGS, 3)),
                (DeleteId("a1", Y), IdDeleted(True)),
                (DeleteId("a1", Y), IdDeleted(False)),
                (DeleteId("a2", X), IdDeleted(False)),
                (Send("s1", "a1", Y), Sent(NO_BINDINGS, 4)),
                (Send("s1", "a1", X), Sent(NO_BINDINGS, 5)),
                (Send("s1", "a1", Z), Sent(DUPLICATED)),
            ), ring_is((KY, KX, KZ), 2)),
    Example("R24 size 0 disables detection",
            make_profile("seed", 0), (
                (Send("s1", "a1", X), Sent(NO_BINDINGS, 1)),
                (Send("s1", "a1", X), Sent(NO_BINDINGS, 2)),
            ), expect_disabled_cache),
    Example("R6 R7 bridge IDs live in BRIDGE.<address> and skip the normal check",
            make_profile("seed"), (
                (Send("s1", "a1", X), Sent(NO_BINDINGS, 1)),
                (Send("s1", "a1", X, bridge_id="01"), Sent(NO_BINDINGS, 2)),
                (Send("s1", "a1", Y, bridge_id="01"), Sent(DUPLICATED)),
                (Send("s1", "a1", Y), Sent(NO_BINDINGS, 3)),
                (Send("s1", "a1", Y), Sent(DUPLICATED)),
                (Send("s2", "a1", None, bridge_id="02"), Sent(NO_BINDINGS, 4)),
                (DeleteId("a1", Y), IdDeleted(True)),
            ), expect_bridge_cache_apart),
    Example("R13 a bridge duplicate inside a transaction rolls its work back at once",
            make_profile("artemis-latest"), (
                (CreateQueue("a1", "q1"), Done()),
                (Send("s1", "a1", None, bridge_id="01"), Sent(OK, 1, ("q1",))),
                (Begin("s2"), Done()),
                (Receive("s2", "q1"), Received(1)),
                (Send("s2", "a1", X), Sent(OK, 2, ("q1",))),
                (Send("s2", "a1", None, bridge_id="01"), Sent(DUPLICATED, rollback_only=True)),
                (Receive("s3", "q1"), Received(1)),
                (Send("s2", "a1", Y), Sent(OK, 3, ("q1",), rollback_only=True)),
                (Commit("s2"), CommitFailed(DoomReason.BRIDGE_DUPLICATE)),
                (Receive("s3", "q1"), Received(None)),
            )),
    Example("R13 from 2.18 a bridge ID in a transaction is visible at once",
            make_profile("artemis-latest"), (
                (Begin("s1"), Done()),
                (Send("s1", "a1", None, bridge_id="02"), Sent(NO_BINDINGS, 1)),
                (Send("s2", "a1", None, bridge_id="02"), Sent(DUPLICATED)),
                (Rollback("s1"), RolledBack()),
                (Send("s2", "a1", None, bridge_id="02"), Sent(NO_BINDINGS, 2)),
            )),
    Example("R13 in 2.11 a bridge ID in a transaction waits for beforeCommit",
            make_profile("artemis-2.11"), (
                (Begin("s1"), Done()),
                (Send("s1", "a1", None, bridge_id="02"), Sent(NO_BINDINGS, 1)),
                (Send("s2", "a1", None, bridge_id="02"), Sent(NO_BINDINGS, 2)),
                (Commit("s1"), Committed((1,))),
                (Send("s2", "a1", None, bridge_id="02"), Sent(DUPLICATED)),
            )),
    Example("R3 an ID that is not a string or bytes fails the send, and dooms a transaction",
            make_profile("seed"), (
                (Send("s1", "a1", LONG), SendFailed(SendFailure.ID_NOT_BYTES)),
                (Begin("s1"), Done()),
                (Send("s1", "a1", X), Sent(NO_BINDINGS, 1)),
                (Send("s1", "a1", LONG), SendFailed(SendFailure.ID_NOT_BYTES, rollback_only=True)),
                (Commit("s1"), CommitFailed(DoomReason.SEND_FAILED)),
                (Send("s1", "a1", X), Sent(NO_BINDINGS, 2)),
            )),
    Example("R10 with reject_duplicates false a duplicate is routed and not recorded again",
            make_profile("seed", 2), (
                (CreateQueue("a1", "q1"), Done()),
                (Send("s1", "a1", X), Sent(OK, 1, ("q1",))),
                (Send("s1", "a1", X, reject_duplicates=False), Sent(OK, 2, ("q1",))),
                (Send("s1", "a1", X), Sent(DUPLICATED)),
            ), ring_is((KX,), 1)),
    Example("R23 deleting an address's last queue forgets its IDs, across a restart too",
            make_profile("seed"), (
                (CreateQueue("a1", "q1"), Done()),
                (CreateQueue("a1", "q2"), Done()),
                (Send("s1", "a1", X), Sent(OK, 1, ("q1", "q2"))),
                (DeleteQueue("q1"), QueueDeleted(False)),
                (Send("s1", "a1", X), Sent(DUPLICATED)),
                (DeleteQueue("q2"), QueueDeleted(True)),
                (Restart(), Restarted(0, 0)),
                (Send("s1", "a1", X), Sent(NO_BINDINGS, 2)),
            )),
    Example("R26 a restart into a smaller cache drops the oldest IDs and loses open transactions",
            make_profile("seed", 3), (
                (CreateQueue("a1", "q1"), Done()),
                (Send("s1", "a1", X), Sent(OK, 1, ("q1",))),
                (Send("s1", "a1", Y), Sent(OK, 2, ("q1",))),
                (Send("s1", "a1", Z), Sent(OK, 3, ("q1",))),
                (Begin("s2"), Done()),
                (Receive("s2", "q1"), Received(1)),
                (Restart(2), Restarted(1, 1)),
                (Receive("s3", "q1"), Received(1)),
                (Send("s1", "a1", Z), Sent(DUPLICATED)),
                (Send("s1", "a1", Y), Sent(DUPLICATED)),
                (Send("s1", "a1", X), Sent(OK, 4, ("q1",))),
            )),
    Example("R26 before 1.3.0 (the artemis-1.2 options) a reload kept the oldest and dropped the newest",
            make_profile("artemis-2.11", 3, OLD_RELOAD), (
                (Send("s1", "a1", X), Sent(NO_BINDINGS, 1)),
                (Send("s1", "a1", Y), Sent(NO_BINDINGS, 2)),
                (Send("s1", "a1", Z), Sent(NO_BINDINGS, 3)),
                (Crash(), Restarted(0, 0)),
                (Restart(2), Restarted(0, 1)),
                (Send("s1", "a1", X), Sent(DUPLICATED)),
                (Send("s1", "a1", Y), Sent(DUPLICATED)),
                (Send("s1", "a1", Z), Sent(NO_BINDINGS, 4)),
            )),
    Example("R26 a reload hands a cache its IDs in the order they entered memory (the spec's choice)",
            make_profile("artemis-latest", 2), (
                (Begin("s1"), Done()),
                (Send("s1", "a1", None, bridge_id="01"), Sent(NO_BINDINGS, 1)),
                (Send("s2", "a1", None, bridge_id="02"), Sent(NO_BINDINGS, 2)),
                (Commit("s1"), Committed((1,))),
                (Restart(1), Restarted(0, 1)),
                (Send("s3", "a1", None, bridge_id="02"), Sent(DUPLICATED)),
                (Send("s3", "a1", None, bridge_id="01"), Sent(NO_BINDINGS, 3)),
            )),
    Example("R25 with persist-id-cache off every cache is empty after a restart",
            make_profile("seed", None, PERSIST_OFF), (
                (Send("s1", "a1", X), Sent(NO_BINDINGS, 1)),
                (Send("s1", "a1", X), Sent(DUPLICATED)),
                (Restart(), Restarted(0, 0)),
                (Send("s1", "a1", X), Sent(NO_BINDINGS, 2)),
                (Crash(), Restarted(0, 0)),
            ), expect_no_caches),
    Example("R12 R21 from 2.18 a failed send leaves a hole and does not restore the ID it evicted",
            make_profile("artemis-latest", 2), (
                (CreateQueue("a1", "q1"), Done()),
                (Send("s1", "a1", X), Sent(OK, 1, ("q1",))),
                (Send("s1", "a1", Y), Sent(OK, 2, ("q1",))),
                (Send("s1", "a1", Z, address_full=True), SendFailed(SendFailure.ADDRESS_FULL)),
                (Send("s1", "a1", X), Sent(OK, 3, ("q1",))),
            ), ring_is((None, KX), 0)),
    Example("R12 in 2.11 a failed send never reached the cache",
            make_profile("artemis-2.11", 2), (
                (CreateQueue("a1", "q1"), Done()),
                (Send("s1", "a1", X), Sent(OK, 1, ("q1",))),
                (Send("s1", "a1", Y), Sent(OK, 2, ("q1",))),
                (Send("s1", "a1", Z, address_full=True), SendFailed(SendFailure.ADDRESS_FULL)),
                (Send("s1", "a1", X), Sent(DUPLICATED)),
            ), ring_is((KX, KY), 0)),
    Example("a full address fails only a send that reaches a queue (PostOfficeImpl.route, processRoute)",
            make_profile("artemis-latest", 2), (
                (Send("s1", "a1", X, address_full=True), Sent(NO_BINDINGS, 1)),
                (Send("s1", "a1", X), Sent(DUPLICATED)),
                (Begin("s2"), Done()),
                (Send("s2", "a1", Y, address_full=True), Sent(NO_BINDINGS, 2)),
            )),
    Example("R18 a per-address id-cache-size exists from 2.31 and sizes caches created later",
            make_profile("artemis-latest", 3), (
                (Send("s1", "a2", X), Sent(NO_BINDINGS, 1)),
                (SetIdCacheSize("a1", 1), Done()),
                (SetIdCacheSize("a2", 1), Done()),
                (Send("s1", "a1", X), Sent(NO_BINDINGS, 2)),
                (Send("s1", "a1", Y), Sent(NO_BINDINGS, 3)),
                (Send("s1", "a1", X), Sent(NO_BINDINGS, 4)),
                (Send("s1", "a2", Y), Sent(NO_BINDINGS, 5)),
                (Send("s1", "a2", X), Sent(DUPLICATED)),
            )),
    Example("R18 before 2.31 there is no per-address id-cache-size",
            make_profile("artemis-2.11"), (
                (SetIdCacheSize("a1", 1), NotSupported("set_id_cache_size")),
            )),
    Example("DUP-XA-PREPARE a prepared transaction's ID stays invisible; another send of it passes, both commit",
            make_profile("artemis-latest"), (
                (CreateQueue("a1", "q1"), Done()),
                (Begin("s1"), Done()),
                (Send("s1", "a1", X), Sent(OK, 1, ("q1",))),
                (Prepare("s1"), Done()),
                (QueryId("a1", X), IdQueried(False)),
                (Send("s2", "a1", X), Sent(OK, 2, ("q1",))),
                (Commit("s1"), Committed((1,))),
                (Send("s3", "a1", X), Sent(DUPLICATED)),
                (Receive("s3", "q1"), Received(2)),
                (Receive("s3", "q1"), Received(1)),
            )),
    Example("DUP-XA-PREPARED-BUSY DUP-XA-PREPARE-AGAIN a prepared transaction takes no work; preparing it again is "
            "harmless; with none there is nothing to prepare",
            make_profile("seed"), (
                (CreateQueue("a1", "q1"), Done()),
                (Send("s2", "a1"), Sent(OK, 1, ("q1",))),
                (Begin("s1"), Done()),
                (Send("s1", "a1", X), Sent(OK, 2, ("q1",))),
                (Prepare("s1"), Done()),
                (Send("s1", "a1", Y), TransactionPrepared("s1")),
                (Send("s1", "a1", None, bridge_id="01"), TransactionPrepared("s1")),
                (Receive("s1", "q1"), TransactionPrepared("s1")),
                (Begin("s1"), TransactionOpen("s1")),
                (Prepare("s1"), Done()),
                (Prepare("s2"), NoTransaction("s2")),
                (Rollback("s1"), RolledBack()),
                (Send("s2", "a1", X), Sent(OK, 3, ("q1",))),
            )),
    Example("DUP-XA-PREPARE-ROLLBACK-ONLY a doomed transaction fails to prepare and rolls everything back",
            make_profile("artemis-2.11"), (
                (CreateQueue("a1", "q1"), Done()),
                (Send("s1", "a1", X), Sent(OK, 1, ("q1",))),
                (Begin("s2"), Done()),
                (Receive("s2", "q1"), Received(1)),
                (Send("s2", "a1", Y), Sent(OK, 2, ("q1",))),
                (Send("s2", "a1", X), Sent(DUPLICATED, rollback_only=True)),
                (Prepare("s2"), PrepareFailed(DoomReason.DUPLICATE_ID)),
                (Commit("s2"), NoTransaction("s2")),
                (Receive("s3", "q1"), Received(1)),
                (Send("s3", "a1", Y), Sent(OK, 3, ("q1",))),
            )),
    Example("DUP-XA-PREPARED-RESTART prepare, crash, commit: the message stays held, the ID enters at the commit "
            "(testXADuplicateDetectionPrepareAndRollbackStopServer)",
            make_profile("artemis-latest", 2), (
                (CreateQueue("a1", "q1"), Done()),
                (Send("s2", "a1", Y), Sent(OK, 1, ("q1",))),
                (Begin("s1"), Done()),
                (Receive("s1", "q1"), Received(1)),
                (Send("s1", "a1", X), Sent(OK, 2, ("q1",))),
                (Prepare("s1"), Done()),
                (Begin("s3"), Done()),
                (Crash(), Restarted(1, 0)),
                (Receive("s2", "q1"), Received(None)),
                (Send("s1", "a1", Z), TransactionPrepared("s1")),
                (QueryId("a1", X), IdQueried(False)),
                (Commit("s1"), Committed((2,))),
                (QueryId("a1", X), IdQueried(True)),
                (Send("s2", "a1", X), Sent(DUPLICATED)),
                (Receive("s2", "q1"), Received(2)),
                (Restart(), Restarted(0, 0)),
                (Send("s2", "a1", X), Sent(DUPLICATED)),
                (Send("s2", "a1", Y), Sent(DUPLICATED)),
            ), ring_is((KY, KX), 0)),
    Example("DUP-XA-SECOND-PHASE a prepared transaction rolled back after a restart frees its ID and its message",
            make_profile("artemis-2.11"), (
                (CreateQueue("a1", "q1"), Done()),
                (Send("s2", "a1"), Sent(OK, 1, ("q1",))),
                (Begin("s1"), Done()),
                (Receive("s1", "q1"), Received(1)),
                (Send("s1", "a1", X), Sent(OK, 2, ("q1",))),
                (Prepare("s1"), Done()),
                (Restart(), Restarted(0, 0)),
                (Restart(), Restarted(0, 0)),
                (Rollback("s1"), RolledBack()),
                (Receive("s2", "q1"), Received(1)),
                (Receive("s2", "q1"), Received(None)),
                (Send("s2", "a1", X), Sent(OK, 3, ("q1",))),
            )),
    Example("DUP-XA-PREPARED-RESTART from 2.18 a bridge ID added at once is not in the cache after a crash, "
            "until the commit",
            make_profile("artemis-latest"), (
                (Begin("s1"), Done()),
                (Send("s1", "a1", None, bridge_id="01"), Sent(NO_BINDINGS, 1)),
                (QueryId("a1", None, "01"), IdQueried(True)),
                (Prepare("s1"), Done()),
                (Crash(), Restarted(0, 0)),
                (QueryId("a1", None, "01"), IdQueried(False)),
                (Commit("s1"), Committed((1,))),
                (QueryId("a1", None, "01"), IdQueried(True)),
            )),
    Example("DUP-XA-PREPARED-RESTART without persist-id-cache a prepared transaction comes back without its IDs "
            "(testNoPersistXA1)",
            make_profile("artemis-2.11", None, PERSIST_OFF), (
                (Begin("s1"), Done()),
                (Send("s1", "a1", X), Sent(NO_BINDINGS, 1)),
                (Prepare("s1"), Done()),
                (Restart(), Restarted(0, 0)),
                (Commit("s1"), Committed((1,))),
                (Send("s2", "a1", X), Sent(NO_BINDINGS, 2)),
                (Send("s2", "a1", X), Sent(DUPLICATED)),
            )),
)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.name)
def test_reference_and_spec_give_the_hand_derived_outcomes(example: Example) -> None:
    broker = ReferenceDuplicatesBroker(example.profile)
    state = initial_state(example.profile)
    for number, (command, expected) in enumerate(example.steps, 1):
        state, spec_outcome = apply(state, command)
        outcome = broker.execute(command)
        assert outcome == expected, f"step {number} {command}: reference {outcome}, expected {expected}"
        assert spec_outcome == expected, f"step {number} {command}: spec {spec_outcome}, expected {expected}"
        assert broker.snapshot() == state, f"step {number} {command}: {state_difference(state, broker.snapshot())}"
    if example.check is not None:
        example.check(broker.snapshot())


# --- the parts on their own ---------------------------------------------------------------------


def test_a_journal_delete_cancels_a_record_still_inside_its_transaction() -> None:
    storage = StorageManager()
    name = CacheName(CacheKind.BRIDGE, "a1")
    storage.store_duplicate_id_transactional(7, name, b"k1", 1)
    storage.store_duplicate_id_transactional(7, name, b"k2", 2)
    storage.delete_duplicate_id(1)
    storage.commit(7)
    storage.store_duplicate_id_transactional(8, name, b"k3", 3)
    assert storage.load_duplicate_ids() == {name: [(b"k2", 2)]}, "k1 was cancelled, k3 never committed"


def test_a_transaction_that_has_ended_ignores_the_mark_and_refuses_to_end_again() -> None:
    tx = Transaction(StorageManager())
    tx.mark_as_rollback_only(DoomReason.DUPLICATE_ID)
    tx.mark_as_rollback_only(DoomReason.SEND_FAILED)
    assert (tx.state, tx.rollback_reason) == (TransactionState.ROLLBACK_ONLY, DoomReason.DUPLICATE_ID)
    assert tx.commit() is DoomReason.DUPLICATE_ID
    tx.mark_as_rollback_only(DoomReason.SEND_FAILED)
    assert tx.state is TransactionState.ROLLED_BACK
    with pytest.raises(InvariantBroken, match="already ROLLEDBACK"):
        tx.rollback()


@pytest.mark.parametrize(("keeps", "kept", "deleted_records"),
                         [(ReloadKeeps.NEWEST, [KY, KZ], [1]), (ReloadKeeps.OLDEST, [KX, KY], [3])])
def test_cache_load_drops_the_excess_and_deletes_its_records(keeps: ReloadKeeps, kept: list[bytes],
                                                             deleted_records: list[int]) -> None:
    storage = StorageManager()
    name = CacheName(CacheKind.NORMAL, "a1")
    for record_id, key in enumerate((KX, KY, KZ), 1):
        storage.store_duplicate_id_transactional(100, name, key, record_id)
    storage.commit(100)
    storage.last_id = 100
    cache = DuplicateIDCache(name, 2, storage, True, InstantAdd.IMMEDIATE)
    assert cache.load(storage.load_duplicate_ids()[name], keeps) == 1
    assert [slot.key for slot in cache.ids] == kept and cache.pos == 0
    survivors = {record_id for _, record_id in storage.load_duplicate_ids()[name]}
    assert survivors == {1, 2, 3} - set(deleted_records)


def test_a_prepared_journal_transaction_outlives_a_start_up_until_it_ends() -> None:
    storage = StorageManager()
    name = CacheName(CacheKind.NORMAL, "a1")
    storage.store_duplicate_id_transactional(5, name, b"slot", 1)
    storage.store_prepared_record(5, DuplicateIdRecord(2, name, KX, prepared=True))
    storage.store_prepared_record(5, MessageRecord(3, 7, (11,)))
    storage.store_prepared_record(5, AcknowledgeRecord(4, 9, 6))
    storage.prepare(5, "s1")
    storage.store_duplicate_id_transactional(6, name, KY, 8)
    assert storage.load_duplicate_ids() == {}, "neither the prepared nor the open transaction has committed"
    found = storage.load_prepared_transactions()
    assert [(info.tx_id, info.xid, [r.record_id for r in info.records]) for info in found] == [(5, "s1", [1, 2, 3, 4])]
    assert storage.load_prepared_transactions() == found, "a second start-up finds it again"
    for record_id in (2, 3, 4):
        storage.delete_record_transactional(5, record_id)
    storage.commit(5)
    assert storage.load_duplicate_ids() == {name: [(b"slot", 1)]} and storage.load_prepared_transactions() == []


def test_a_transaction_prepares_once_and_a_doomed_one_rolls_back_instead() -> None:
    tx = Transaction(StorageManager())
    assert tx.prepare("s1") is None and tx.state is TransactionState.PREPARED and tx.is_open()
    tx.mark_as_rollback_only(DoomReason.DUPLICATE_ID)
    assert tx.state is TransactionState.PREPARED and tx.rollback_reason is None, "a prepared one ignores the mark"
    with pytest.raises(InvariantBroken, match="cannot prepare"):
        tx.prepare("s1")
    assert tx.commit() is None and not tx.is_open() and tx.state.name == "COMMITTED"
    doomed = Transaction(StorageManager())
    doomed.mark_as_rollback_only(DoomReason.SEND_FAILED)
    assert doomed.prepare("s2") is DoomReason.SEND_FAILED and doomed.state is TransactionState.ROLLED_BACK


def test_prepare_crash_commit_reattaches_the_records_and_writes_the_id_anew() -> None:
    """The prepared records bring the transaction back; the commit deletes them and writes the ID's record."""
    broker = ReferenceDuplicatesBroker(make_profile("artemis-latest", 3))
    for command in (CreateQueue("a1", "q1"), Send("s2", "a1"), Begin("s1"), Receive("s1", "q1"),
                    Send("s1", "a1", X), Send("s1", "a1", None, bridge_id="01"), Prepare("s1"), Crash()):
        broker.execute(command)
    tx = broker.open_transactions()["s1"]
    assert tx.state is TransactionState.PREPARED and len(tx.prepared_records) == 5, "two messages, an ack, two IDs"
    assert broker.snapshot().transactions["s1"].after_store_ids == (
        (CacheName(CacheKind.BRIDGE, "a1"), b"\x01"), (CacheName(CacheKind.NORMAL, "a1"), KX))
    assert CacheName(CacheKind.NORMAL, "a1") in broker.post_office.duplicate_id_caches, "the load made the cache"
    broker.execute(Send("s3", "a1", Y))
    assert broker.execute(Commit("s1")) == Committed((2, 3))
    stored = broker.storage.load_duplicate_ids()
    assert [key for key, _ in stored[CacheName(CacheKind.NORMAL, "a1")]] == [KY, KX], "in the order they entered"
    assert broker.storage.load_prepared_transactions() == []
    assert broker.execute(Restart()) == Restarted(0, 0)
    assert broker.execute(QueryId("a1", X)) == IdQueried(True)
    assert broker.execute(QueryId("a1", None, "01")) == IdQueried(True)


def test_a_forgotten_cache_takes_the_prepared_ids_with_it_across_restarts() -> None:
    """DUP-FORGET-IN-FLIGHT: the prepared record of an ID whose last queue went is deleted, so no restart brings
    it back, before or after the first restart."""
    profile = make_profile("artemis-latest")
    for restart_first in (False, True):
        broker = ReferenceDuplicatesBroker(profile)
        state = initial_state(profile)
        script: list[DuplicatesCommand] = [CreateQueue("a1", "q1"), Begin("s1"), Send("s1", "a1", X), Prepare("s1")]
        script += [Restart()] if restart_first else []
        script += [DeleteQueue("q1"), CreateQueue("a1", "q1"), Crash(), Commit("s1"), QueryId("a1", X)]
        for command in script:
            state, expected = apply(state, command)
            assert broker.execute(command) == expected, command
            assert broker.snapshot() == state, command
        assert expected == IdQueried(False)


def test_the_comparison_catches_a_broker_running_other_semantics() -> None:
    """A reference built for 2.18+ run against the 2.11 spec must be caught: the check can fail."""
    script = (CreateQueue("a1", "q1"), Send("s1", "a1", X), Send("s1", "a1", Y), Send("s1", "a1", Z, address_full=True),
              Send("s1", "a1", X))
    broker = ReferenceDuplicatesBroker(make_profile("artemis-latest", 2))
    state = initial_state(make_profile("artemis-2.11", 2))
    parted = False
    for command in script:
        state, expected = apply(state, command)
        parted = parted or broker.execute(command) != expected or broker.snapshot().caches != state.caches
    assert parted


# --- random sequences in lockstep with the spec ------------------------------------------------------

SESSIONS = st.sampled_from(["s1", "s2"])
ADDRESSES = st.sampled_from(["a1", "a2"])
QUEUES = st.sampled_from(["q1", "q2", "q3"])
IDS = st.sampled_from([X, Y, X_BYTES, X_UTF8, LONG])
SIZES = st.integers(0, 3)
SENDS = st.builds(
    Send, SESSIONS, ADDRESSES,
    duplicate_id=st.one_of(st.none(), IDS, IDS),
    bridge_id=st.sampled_from([None, None, "01", "02"]),
    reject_duplicates=st.sampled_from([True, True, True, False]),
    address_full=st.sampled_from([False, False, False, False, True]),
)
KINDS: dict[str, tuple[int, st.SearchStrategy[DuplicatesCommand]]] = {
    "send": (10, SENDS),
    "begin": (3, st.builds(Begin, SESSIONS)),
    "commit": (3, st.builds(Commit, SESSIONS)),
    "rollback": (1, st.builds(Rollback, SESSIONS)),
    "prepare": (2, st.builds(Prepare, SESSIONS)),
    "receive": (2, st.builds(Receive, SESSIONS, QUEUES)),
    "create_queue": (2, st.builds(CreateQueue, ADDRESSES, QUEUES)),
    "delete_queue": (1, st.builds(DeleteQueue, QUEUES)),
    "delete_id": (1, st.builds(DeleteId, ADDRESSES, IDS)),
    "set_id_cache_size": (1, st.builds(SetIdCacheSize, ADDRESSES, SIZES)),
    "restart": (1, st.builds(Restart, st.one_of(st.none(), SIZES))),
    "crash": (1, st.just(Crash())),
}
"""Each operation with its weight: sends and transaction boundaries come most often."""
COMMANDS: st.SearchStrategy[DuplicatesCommand] = st.sampled_from(
    [kind for kind, (weight, _) in KINDS.items() for _ in range(weight)]).flatmap(lambda kind: KINDS[kind][1])
VARIANTS = ((), PERSIST_OFF, OLD_RELOAD)
PROFILE_CHOICES = st.builds(make_profile, st.sampled_from(sorted(PROFILES)), st.integers(1, 3),
                            st.sampled_from(VARIANTS))


def state_difference(expected: DuplicatesState, actual: DuplicatesState) -> str:
    """The parts in which two states differ, spec first."""
    parts = ("caches", "queues", "transactions", "size_settings", "global_size", "next_message", "options")
    return "; ".join(f"{part}: spec {getattr(expected, part)!r}, reference {getattr(actual, part)!r}"
                     for part in parts if getattr(expected, part) != getattr(actual, part))


@settings(max_examples=scaled(1500, 20000), deadline=None)
@given(profile=PROFILE_CHOICES, commands=st.lists(COMMANDS, max_size=40))
def test_random_sequences_match_the_spec_at_every_step(profile: Profile, commands: list[DuplicatesCommand]) -> None:
    broker = ReferenceDuplicatesBroker(profile)
    state = initial_state(profile)
    for number, command in enumerate(commands, 1):
        state, expected = apply(state, command)
        outcome = broker.execute(command)
        script = "\n".join(f"  {c}" for c in commands[:number])
        assert outcome == expected, f"{profile.label}, after\n{script}\nreference {outcome}, spec {expected}"
        snapshot = broker.snapshot()
        assert snapshot == state, f"{profile.label}, after\n{script}\n{state_difference(state, snapshot)}"
