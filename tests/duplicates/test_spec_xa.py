"""The spec's XA two-phase commit in duplicate detection: prepare, the second phase, prepared transactions at restarts.

Each test states one rule (DUP-XA-*) on a short script, with the Artemis test it follows where there is one.
"""

from __future__ import annotations

import pytest

from brokerspec.spec import get_profile
from brokerspec.spec.outcome import Outcome
from brokerspec.spec.duplicates import (
    Begin,
    CacheKind,
    CacheName,
    Commit,
    Committed,
    Crash,
    CreateQueue,
    DoomReason,
    Done,
    DuplicatesState,
    IdQueried,
    NoTransaction,
    Prepare,
    PrepareFailed,
    QueryId,
    Receive,
    Received,
    Restart,
    Restarted,
    RolledBack,
    Rollback,
    RoutingStatus,
    Send,
    Sent,
    TransactionOpen,
    TransactionPrepared,
    TxState,
    apply,
    initial_state,
    invariant_violations,
)
from duplicate_ids import X, Y

BRIDGE = "0a" * 24


def run(profile_name: str, *commands: object, persist: bool = True) -> tuple[DuplicatesState, list[object]]:
    profile = get_profile(profile_name, () if persist else (("duplicates.persist_id_cache", "false"),))
    state = initial_state(profile)
    outcomes: list[object] = []
    for command in commands:
        state, outcome = apply(state, command)  # type: ignore[arg-type]
        assert invariant_violations(state) == [], command
        outcomes.append(outcome)
    return state, outcomes


def rule(outcome: object) -> str:
    assert isinstance(outcome, Outcome)
    return outcome.rule


def test_a_prepared_id_is_invisible_until_the_second_phase() -> None:
    """DUP-XA-PREPARE, DUP-XA-SECOND-PHASE (testXADuplicateDetection1)."""
    state, out = run("artemis-latest", CreateQueue("a", "q"), Begin("s1"), Send("s1", "a", X), Prepare("s1"),
                     QueryId("a", X), Receive("s2", "q"), Commit("s1"), QueryId("a", X), Receive("s2", "q"))
    assert out[3] == Done() and rule(out[3]) == "DUP-XA-PREPARE"
    assert out[4] == IdQueried(False) and out[5] == Received(None), "prepared: nothing visible, nothing delivered"
    assert out[6] == Committed((1,)) and rule(out[6]) == "DUP-XA-SECOND-PHASE"
    assert out[7] == IdQueried(True) and out[8] == Received(1)
    assert len(state.transactions) == 0


def test_a_prepared_transaction_reserves_nothing() -> None:
    """DUP-CONCURRENT-TX: a second transaction sends the ID, prepares and commits (testXADuplicateDetection3)."""
    state, out = run("artemis-2.11", CreateQueue("a", "q"), Begin("s1"), Send("s1", "a", X), Prepare("s1"),
                     Begin("s2"), Send("s2", "a", X), Prepare("s2"), Commit("s2"), Commit("s1"))
    assert out[5] == Sent(RoutingStatus.OK, 2, ("q",))
    assert out[7] == Committed((2,)) and out[8] == Committed((1,)), "both commit: nothing is checked again"
    assert state.queues["q"].messages == (2, 1)


def test_a_duplicate_makes_the_prepare_fail_and_rolls_everything_back() -> None:
    """DUP-XA-PREPARE-ROLLBACK-ONLY (testXADuplicateDetection4)."""
    state, out = run("artemis-latest", CreateQueue("a", "q"), Send("s0", "a", X), Begin("s1"), Receive("s1", "q"),
                     Send("s1", "a", Y), Send("s1", "a", X), Prepare("s1"), Rollback("s1"), QueryId("a", Y))
    assert out[5] == Sent(RoutingStatus.DUPLICATED_ID, rollback_only=True)
    assert out[6] == PrepareFailed(DoomReason.DUPLICATE_ID) and rule(out[6]) == "DUP-XA-PREPARE-ROLLBACK-ONLY"
    assert out[7] == NoTransaction("s1"), "the failed prepare ended the transaction"
    assert out[8] == IdQueried(False)
    assert state.queues["q"].messages == (1,), "the received message waits again"


def test_a_prepared_session_takes_no_more_work_and_a_second_prepare_is_harmless() -> None:
    """DUP-XA-PREPARED-BUSY, DUP-XA-PREPARE-AGAIN, DUP-TX-ALREADY-OPEN, DUP-NO-TRANSACTION."""
    state, out = run("seed", CreateQueue("a", "q"), Send("s0", "a"), Begin("s1"), Prepare("s1"), Send("s1", "a", X),
                     Receive("s1", "q"), Begin("s1"), Prepare("s1"), Prepare("s2"), QueryId("a", X))
    assert out[4] == TransactionPrepared("s1") and out[5] == TransactionPrepared("s1")
    assert out[6] == TransactionOpen("s1")
    assert out[7] == Done() and rule(out[7]) == "DUP-XA-PREPARE-AGAIN"
    assert out[8] == NoTransaction("s2")
    assert out[9] == IdQueried(False), "the refused send checked nothing"
    assert state.queues["q"].messages == (1,)
    assert state.transactions["s1"].status is TxState.PREPARED


@pytest.mark.parametrize("stop", [Restart(), Crash()], ids=["restart", "crash"])
def test_a_prepared_transaction_survives_a_stop_and_commits_afterwards(stop: Restart | Crash) -> None:
    """DUP-XA-PREPARED-RESTART: messages, acknowledgements and IDs come back with it."""
    state, out = run("artemis-latest", CreateQueue("a", "q"), Send("s0", "a"), Begin("s1"), Receive("s1", "q"),
                     Send("s1", "a", X), Prepare("s1"), Begin("s2"), Send("s2", "a", Y), stop,
                     Receive("s3", "q"), QueryId("a", X), Commit("s1"), QueryId("a", X), Receive("s3", "q"))
    assert out[8] == Restarted(1, 0), "the open transaction is lost, the prepared one is not counted"
    assert out[9] == Received(None), "the message the prepared transaction took stays held"
    assert out[10] == IdQueried(False)
    assert out[11] == Committed((2,)) and rule(out[11]) == "DUP-XA-SECOND-PHASE"
    assert out[12] == IdQueried(True)
    assert out[13] == Received(2)
    assert state.queues["q"].arrived == (), "the held message was acknowledged by the commit"


def test_a_prepared_transaction_rolled_back_after_a_restart_leaves_its_id_free() -> None:
    """DUP-XA-SECOND-PHASE after a restart (testXADuplicateDetectionPrepareAndRollbackStopServer)."""
    state, out = run("artemis-2.11", CreateQueue("a", "q"), Send("s0", "a"), Begin("s1"), Receive("s1", "q"),
                     Send("s1", "a", X), Prepare("s1"), Restart(), Rollback("s1"), Send("s2", "a", X),
                     Receive("s3", "q"), Receive("s3", "q"))
    assert out[7] == RolledBack() and rule(out[7]) == "DUP-XA-SECOND-PHASE"
    assert out[8] == Sent(RoutingStatus.OK, 3, ("q",)), "the rolled-back ID is free"
    assert out[9] == Received(1) and out[10] == Received(3)


def test_without_persist_id_cache_a_prepared_transaction_comes_back_without_its_ids() -> None:
    """DUP-XA-PREPARED-RESTART with persist-id-cache false (testNoPersistXA1): no ID record was written."""
    state, out = run("artemis-latest", CreateQueue("a", "q"), Begin("s1"), Send("s1", "a", X), Prepare("s1"),
                     Crash(), Commit("s1"), QueryId("a", X), Receive("s2", "q"), persist=False)
    assert out[5] == Committed((1,))
    assert out[6] == IdQueried(False)
    assert out[7] == Received(1)


def test_a_bridge_id_added_at_once_is_visible_until_a_restart_reattaches_it() -> None:
    """DUP-XA-PREPARED-RESTART: from 2.18 a bridge ID in a transaction is added at once (DUP-BRIDGE-DUPLICATE);
    reloaded, it is an after-commit add of the prepared transaction. Under 2.11 it is added before the commit."""
    steps = (CreateQueue("a", "q"), Begin("s1"), Send("s1", "a", bridge_id=BRIDGE), Prepare("s1"),
             QueryId("a", bridge_id=BRIDGE), Restart(), QueryId("a", bridge_id=BRIDGE), Commit("s1"),
             QueryId("a", bridge_id=BRIDGE))
    _, latest = run("artemis-latest", *steps)
    _, old = run("artemis-2.11", *steps)
    assert [latest[i] for i in (4, 6, 8)] == [IdQueried(True), IdQueried(False), IdQueried(True)]
    assert [old[i] for i in (4, 6, 8)] == [IdQueried(False), IdQueried(False), IdQueried(True)]


def test_a_prepared_transaction_keeps_its_id_order_across_a_restart() -> None:
    """DUP-XA-PREPARED-RESTART, DUP-SAME-ID-IN-TX: re-attached IDs enter at the commit, in send order."""
    state, _ = run("seed", CreateQueue("a", "q"), Begin("s1"), Send("s1", "a", X), Send("s1", "a", Y),
                   Send("s1", "a", X), Prepare("s1"), Crash(), Commit("s1"))
    ring = state.caches[CacheName(CacheKind.NORMAL, "a")]
    assert ring.slots == (b"x\x00", b"y\x00", b"x\x00")
