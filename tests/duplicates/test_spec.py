"""The duplicate-detection spec on its own: rules, lifecycle table, examples, invariants."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brokerspec.spec import get_profile
from brokerspec.spec.duplicates import (
    RULES,
    STRUCTURAL,
    TRANSACTION_LIFECYCLE,
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
    DuplicateId,
    DuplicatesState,
    IdKind,
    Receive,
    Received,
    Restart,
    Restarted,
    Rollback,
    RoutingStatus,
    Send,
    SendFailed,
    SendFailure,
    Sent,
    TxEvent,
    TxState,
    add_to_ring,
    apply,
    compute_cache_key,
    compute_next_tx_state,
    delete_from_ring,
    get_ids_in_order,
    initial_state,
    invariant_violations,
    is_in_ring,
    load_ring,
    new_ring,
)
from brokerspec.spec.duplicates import operations as operations_module
from brokerspec.spec.profiles import ReloadKeeps
from duplicate_ids import X, Y, Z



def run(profile_name: str, *commands: object, size: int | None = None) -> tuple[DuplicatesState, list[object]]:
    state = initial_state(get_profile(profile_name))
    outcomes: list[object] = []
    if size is not None:
        state, _ = apply(state, Restart(size))
    for command in commands:
        state, outcome = apply(state, command)  # type: ignore[arg-type]
        assert invariant_violations(state) == [], command
        outcomes.append(outcome)
    return state, outcomes


def key(d: DuplicateId) -> bytes:
    k = compute_cache_key(d)
    assert k is not None
    return k


def normal(state: DuplicatesState, address: str = "a") -> tuple[bytes, ...]:
    ring = state.caches.get(CacheName(CacheKind.NORMAL, address))
    return () if ring is None else tuple(k for k in ring.index)


# --- the rule table ---------------------------------------------------------------------


def rules_named_in_operations() -> set[str]:
    tree = ast.parse(Path(operations_module.__file__).read_text(encoding="utf-8"))
    named: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("DUP-"):
            named.add(node.value)
    return named


def test_every_rule_an_operation_names_is_listed_and_every_listed_rule_is_used() -> None:
    named = rules_named_in_operations()
    assert named <= set(RULES), named - set(RULES)
    unused = set(RULES) - named - STRUCTURAL
    assert not unused, f"rules no operation decides and not marked structural: {sorted(unused)}"
    assert all(rule.source and rule.summary for rule in RULES.values())


# --- the lifecycle table ------------------------------------------------------------------


REFUSED = {(TxState.NONE, TxEvent.COMMIT), (TxState.NONE, TxEvent.ROLLBACK), (TxState.NONE, TxEvent.PREPARE),
           (TxState.ACTIVE, TxEvent.BEGIN), (TxState.ROLLBACK_ONLY, TxEvent.BEGIN), (TxState.PREPARED, TxEvent.BEGIN),
           (TxState.PREPARED, TxEvent.SEND), (TxState.PREPARED, TxEvent.DUPLICATE),
           (TxState.PREPARED, TxEvent.FAILED_SEND), (TxState.PREPARED, TxEvent.RECEIVE)}


@pytest.mark.parametrize("state", list(TxState))
@pytest.mark.parametrize("event", list(TxEvent))
def test_lifecycle_product(state: TxState, event: TxEvent) -> None:
    nxt = compute_next_tx_state(state, event)
    if (state, event) in REFUSED:
        assert nxt is None
        return
    assert nxt is not None
    if event in (TxEvent.COMMIT, TxEvent.ROLLBACK):
        assert nxt is TxState.NONE
    if event is TxEvent.RESTART:
        assert nxt is (TxState.PREPARED if state is TxState.PREPARED else TxState.NONE), \
            "a restart loses every transaction but a prepared one"
    if state is TxState.ROLLBACK_ONLY:
        assert nxt in (TxState.ROLLBACK_ONLY, TxState.NONE), "a doomed transaction never becomes active again"
    if state is TxState.PREPARED:
        assert nxt in (TxState.PREPARED, TxState.NONE), "a prepared transaction only ends"
    if state is TxState.ACTIVE and event in (TxEvent.DUPLICATE, TxEvent.FAILED_SEND):
        assert nxt is TxState.ROLLBACK_ONLY
    if event is TxEvent.PREPARE and state is not TxState.ROLLBACK_ONLY:
        assert nxt is TxState.PREPARED
    assert len(TRANSACTION_LIFECYCLE) == len(TxState) * len(TxEvent) - len(REFUSED)


# --- examples from the sources --------------------------------------------------------------


def test_ids_as_r3_converts_them() -> None:
    assert key(X) == key(DuplicateId(IdKind.SIMPLE_STRING, "x")) == key(DuplicateId(IdKind.BYTES, "7800"))
    assert key(X) != key(DuplicateId(IdKind.BYTES, "78"))
    assert compute_cache_key(DuplicateId(IdKind.LONG, "5")) is None


def test_duplicate_outside_a_transaction_is_dropped_but_the_client_sees_success() -> None:
    state, outcomes = run("seed", CreateQueue("a", "q"), Send("s1", "a", X), Send("s2", "a", X),
                          Receive("s3", "q"), Receive("s3", "q"))
    assert outcomes[1] == Sent(RoutingStatus.OK, 1, ("q",))
    assert outcomes[2] == Sent(RoutingStatus.DUPLICATED_ID)
    assert outcomes[3:] == [Received(1), Received(None)]


def test_duplicate_inside_a_transaction_fails_the_commit_and_rolls_back_acks() -> None:
    state, outcomes = run("artemis-2.11", CreateQueue("a", "q"), Send("s1", "a", X), Send("s2", "a"),
                          Begin("s3"), Receive("s3", "q"), Send("s3", "a", Y), Send("s3", "a", X), Commit("s3"))
    assert outcomes[6] == Sent(RoutingStatus.DUPLICATED_ID, rollback_only=True)
    assert outcomes[7] == CommitFailed(DoomReason.DUPLICATE_ID)
    assert state.queues["q"].messages == (1, 2), "the acknowledged message is back"
    assert key(Y) not in normal(state), "nothing of the failed transaction stays visible"


def test_transactional_ids_are_visible_only_after_commit_and_never_after_rollback() -> None:
    state, outcomes = run("artemis-latest", CreateQueue("a", "q"), Begin("s1"), Send("s1", "a", X),
                          Send("s2", "a", X), Begin("s3"), Send("s3", "a", Y), Rollback("s3"), Commit("s1"),
                          Send("s2", "a", Y), Send("s2", "a", X))
    assert outcomes[3] == Sent(RoutingStatus.OK, 2, ("q",)), "not yet visible: the open transaction holds it"
    assert outcomes[7] == Committed((1,))
    assert outcomes[8] == Sent(RoutingStatus.OK, 4, ("q",)), "a rolled-back ID is free"
    assert outcomes[9] == Sent(RoutingStatus.DUPLICATED_ID)


def test_same_id_twice_in_one_transaction_and_in_two_concurrent_ones() -> None:
    state, outcomes = run("seed", CreateQueue("a", "q"), Begin("s1"), Begin("s2"), Send("s1", "a", X),
                          Send("s1", "a", X), Send("s2", "a", X), Commit("s1"), Commit("s2"))
    assert outcomes[6] == Committed((1, 2)) and outcomes[7] == Committed((3,))
    assert state.queues["q"].messages == (1, 2, 3)
    ring = state.caches[CacheName(CacheKind.NORMAL, "a")]
    assert ring.slots == (key(X), key(X), key(X))


def test_ring_is_fifo_and_a_rejected_duplicate_does_not_move() -> None:
    state, outcomes = run("seed", Send("s", "a", X), Send("s", "a", Y), Send("s", "a", X), Send("s", "a", Z),
                          Send("s", "a", X), size=2)
    assert outcomes[2] == Sent(RoutingStatus.DUPLICATED_ID), "x is still there"
    assert outcomes[4] == Sent(RoutingStatus.NO_BINDINGS, 4), "z evicted x, the oldest, although x was just rejected"


def test_delete_leaves_a_hole_refilled_when_the_cursor_comes_round() -> None:
    ring = add_to_ring(add_to_ring(add_to_ring(new_ring(3), b"a"), b"b"), b"c")
    ring = delete_from_ring(ring, b"b")
    assert ring.slots == (b"a", None, b"c") and ring.position == 0
    ring = add_to_ring(ring, b"d")
    assert ring.slots == (b"d", None, b"c") and get_ids_in_order(ring) == (b"c", b"d")
    ring = add_to_ring(ring, b"e")
    assert ring.slots == (b"d", b"e", b"c") and is_in_ring(ring, b"c")


def test_size_zero_disables_detection() -> None:
    _, outcomes = run("seed", Send("s", "a", X), Send("s", "a", X), size=0)
    assert outcomes == [Sent(RoutingStatus.NO_BINDINGS, 1), Sent(RoutingStatus.NO_BINDINGS, 2)]


def test_bridge_ids_have_their_own_cache_and_skip_the_normal_check() -> None:
    state, outcomes = run("seed", Send("s", "a", X), Send("s", "a", X, bridge_id="01"), Send("s", "a", Y, "01"),
                          Send("s", "a", Y))
    assert outcomes[1] == Sent(RoutingStatus.NO_BINDINGS, 2), "the normal ID is not checked on a bridged message"
    assert outcomes[2] == Sent(RoutingStatus.DUPLICATED_ID)
    assert outcomes[3] == Sent(RoutingStatus.NO_BINDINGS, 3), "nor recorded"


def test_deleting_the_last_queue_forgets_the_ids() -> None:
    state, outcomes = run("seed", CreateQueue("a", "q1"), CreateQueue("a", "q2"), Send("s", "a", X),
                          DeleteQueue("q1"), Send("s", "a", X), DeleteQueue("q2"), Send("s", "a", X))
    assert outcomes[4] == Sent(RoutingStatus.DUPLICATED_ID)
    assert outcomes[6] == Sent(RoutingStatus.NO_BINDINGS, 2)


def test_failed_send_undo_leaves_a_hole_only_from_2_18() -> None:
    script = (CreateQueue("a", "q"), Send("s", "a", X), Send("s", "a", Y), Send("s", "a", Z, address_full=True),
              Send("s", "a", X))
    latest, late = run("artemis-latest", *script, size=2)
    old, early = run("artemis-2.11", *script, size=2)
    assert late[3] == early[3] == SendFailed(SendFailure.ADDRESS_FULL)
    assert late[4] == Sent(RoutingStatus.OK, 3, ("q",)), "z evicted x and its undo did not restore it"
    assert early[4] == Sent(RoutingStatus.DUPLICATED_ID)


def test_a_full_address_fails_only_a_send_that_reaches_a_queue() -> None:
    """DUP-SEND-FAILED: PostOfficeImpl.route calls processRoute, where paging throws, only with queues routed to."""
    _, outcomes = run("artemis-latest", Send("s", "a", X, address_full=True), CreateQueue("a", "q"),
                      Send("s", "a", Y, address_full=True))
    assert outcomes[0] == Sent(RoutingStatus.NO_BINDINGS, 1)
    assert outcomes[2] == SendFailed(SendFailure.ADDRESS_FULL)


@pytest.mark.parametrize(("keeps", "survivors"), [(ReloadKeeps.NEWEST, (b"b", b"c")), (ReloadKeeps.OLDEST, (b"a", b"b"))])
def test_reload_truncates_at_the_profile_end(keeps: ReloadKeeps, survivors: tuple[bytes, ...]) -> None:
    ring, dropped = load_ring((b"a", b"b", b"c"), 2, keeps)
    assert ring is not None and ring.slots == survivors and dropped == 1 and ring.position == 0


def test_restart_with_a_smaller_cache_drops_the_oldest_and_loses_open_transactions() -> None:
    state, outcomes = run("seed", CreateQueue("a", "q"), Send("s", "a", X), Send("s", "a", Y), Send("s", "a", Z),
                          Begin("t"), Receive("t", "q"), Restart(2), Send("s", "a", Z), Send("s", "a", X), size=3)
    assert outcomes[6] == Restarted(1, 1)
    assert state.queues["q"].messages == (1, 2, 3, 4)
    assert outcomes[7] == Sent(RoutingStatus.DUPLICATED_ID), "z survived the reload"
    assert outcomes[8] == Sent(RoutingStatus.OK, 4, ("q",)), "x, the oldest, was dropped"


def test_persist_off_forgets_everything_at_a_crash() -> None:
    profile = get_profile("seed", (("duplicates.persist_id_cache", "false"),))
    state = initial_state(profile)
    for command in (Send("s", "a", X), Crash()):
        state, _ = apply(state, command)
    assert state.caches == type(state.caches)()


def test_delete_id_on_a_missing_cache_or_long_id_finds_nothing() -> None:
    _, outcomes = run("seed", DeleteId("a", X), Send("s", "a", X), DeleteId("a", DuplicateId(IdKind.LONG, "1")),
                      DeleteId("a", X), Send("s", "a", X))
    assert [getattr(o, "found", None) for o in outcomes] == [False, None, False, True, None]
    assert outcomes[4] == Sent(RoutingStatus.NO_BINDINGS, 2)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([b"a", b"b", b"c"]), max_size=8), st.integers(1, 3))
def test_ring_holds_the_last_size_ids_added(keys: list[bytes], size: int) -> None:
    ring = new_ring(size)
    for k in keys:
        ring = add_to_ring(ring, k)
    assert get_ids_in_order(ring) == (tuple(keys[-size:]) if keys else ())


# --- the invariants catch broken states ------------------------------------------------------


def broken_states() -> list[tuple[str, DuplicatesState]]:
    from dataclasses import replace

    from brokerspec.spec import FrozenMap
    from brokerspec.spec import ReturnOrder
    from brokerspec.spec.duplicates import IdRing, QueueState, Transaction

    good = initial_state(get_profile("seed"))
    name = CacheName(CacheKind.NORMAL, "a")
    return [
        ("slots in a cache of size", replace(good, caches=FrozenMap({name: IdRing(1, (b"a", b"b"), 0)}))),
        ("cursor at", replace(good, caches=FrozenMap({name: IdRing(3, (b"a",), 0)}))),
        ("outside", replace(good, caches=FrozenMap({name: IdRing(1, (b"a",), 5)}))),
        ("does not hold it", replace(good, caches=FrozenMap({name: IdRing(2, (b"a",), 1, FrozenMap({b"b": 0}))}))),
        ("pending mark on empty slot", replace(good, caches=FrozenMap({name: IdRing(
            2, (None,), 1, FrozenMap(), FrozenMap({0: "s"}))}))),
        ("has no open transaction", replace(good, caches=FrozenMap({name: IdRing(
            2, (b"a",), 1, FrozenMap({b"a": 0}), FrozenMap({0: "s"}))}))),
        ("with doom", replace(good, transactions=FrozenMap({"s": Transaction(TxState.ROLLBACK_ONLY)}))),
        ("out of arrival order", replace(good, next_message=9, options=replace(
            good.options, return_order=ReturnOrder.ARRIVAL), queues=FrozenMap({"q": QueueState("a", (2, 1), (1, 2))}))),
        ("a message twice", replace(good, next_message=9, queues=FrozenMap({"q": QueueState("a", (1, 1), (1,))}))),
        ("is not the waiting", replace(good, next_message=9, queues=FrozenMap({"q": QueueState("a", (1,), ())}))),
        ("held by a transaction", replace(good, next_message=9, queues=FrozenMap({"q": QueueState("a", (1,), (1,))}),
                                          transactions=FrozenMap({"s": Transaction(acks=(("q", 1),))}))),
        ("numbered beyond", replace(good, queues=FrozenMap({"q": QueueState("a", (4,), (4,))}))),
        ("negative id-cache-size", replace(good, global_size=-1)),
    ]


@pytest.mark.parametrize(("fragment", "state"), broken_states(), ids=[f for f, _ in broken_states()])
def test_invariants_name_each_broken_state(fragment: str, state: DuplicatesState) -> None:
    problems = invariant_violations(state)
    assert any(fragment in p for p in problems), problems
