"""The fast duplicate-detection broker and its SQLite store, against the spec.

Every check here runs commands through ``brokerspec.spec.duplicates.apply``
(the oracle) and :class:`FastDuplicatesBroker` side by side and compares,
after every step, the outcome, the snapshot and ``check_valid``. The
alphabets are small so that IDs collide: two sessions, two addresses, three
queues, the strings ``x`` and ``y``, the bytes ``7800`` (the same ID as
``"x"``) and ``78`` (a different one), a long (which cannot be converted),
two bridge IDs, and a two-slot cache. Restarts and crashes are ordinary
commands: with a file store a restart closes and reopens SQLite and a crash
abandons the connection, so the state after them comes from the store.

The planted variants at the end each break one rule by overriding one of
the broker's seams; each must part from the spec on its scenario, which
shows both that the seams reach the rules and that these checks can fail.
"""

from __future__ import annotations

import importlib.util
import itertools
import random
import sqlite3
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brokerspec.impl.duplicates import FastDuplicatesBroker, IdCache
from brokerspec.impl.duplicates import samples as fast_samples
from brokerspec.spec import PROFILES, InvariantBroken, Outcome, Profile, get_profile
from brokerspec.spec.duplicates import (
    AddMoment,
    Begin,
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
    Prepare,
    PrepareFailed,
    QueryId,
    QueueDeleted,
    Receive,
    Received,
    Restart,
    Restarted,
    Rollback,
    RolledBack,
    RoutingStatus,
    Send,
    SendFailed,
    SendFailure,
    Sent,
    SetIdCacheSize,
    TransactionPrepared,
    TxState,
    apply,
    initial_state,
)
from brokerspec.spec.duplicates import samples as spec_samples
from brokerspec.spec.duplicates.samples import RingStep, SampleId
from depth import scaled
from duplicate_ids import LONG, X, X_BYTES, X_UTF8, Y, Z
from brokerspec.planted.duplicates_bugs import PLANTED
from brokerspec.planted.registry import PlantedBug

TWO_SLOTS = ("duplicates.id_cache_size", "2")

VARIANTS: list[Profile] = [get_profile(name, (TWO_SLOTS,)) for name in PROFILES] + [
    get_profile("artemis-latest", (TWO_SLOTS, ("duplicates.reload_keeps", "OLDEST"))),
    get_profile("artemis-2.11", (TWO_SLOTS, ("duplicates.nontx_add", "AFTER_STORE"))),
    get_profile("artemis-latest", (TWO_SLOTS, ("duplicates.persist_id_cache", "false"))),
]
LATEST = get_profile("artemis-latest", (TWO_SLOTS,))
NOTHING = Received(None)

# --- running both sides ------------------------------------------------------------------------


BrokerFactory = Callable[[Profile, Path | None], FastDuplicatesBroker]


def first_divergence(profile: Profile, commands: Sequence[DuplicatesCommand], store: Path | None = None,
                     factory: BrokerFactory = FastDuplicatesBroker) -> str | None:
    """Run both sides; describe the first step where the broker parts from the spec, or None."""
    state = initial_state(profile)
    with factory(profile, store) as broker:
        for number, command in enumerate(commands, start=1):
            state, expected = apply(state, command)
            actual = broker.execute(command)
            if actual != expected:
                return f"step {number} {command}: spec {expected}, broker {actual}"
            if broker.snapshot() != state:
                return f"step {number} {command}: states differ\n spec   {state}\n broker {broker.snapshot()}"
            try:
                broker.check_valid()
            except InvariantBroken as error:
                return f"step {number} {command}: {error}"
    return None


def spec_state(profile: Profile, commands: Sequence[DuplicatesCommand]) -> DuplicatesState:
    state = initial_state(profile)
    for command in commands:
        state = apply(state, command)[0]
    return state


def outcomes_of(profile: Profile, commands: Sequence[DuplicatesCommand]) -> list[Outcome]:
    with FastDuplicatesBroker(profile) as broker:
        return [broker.execute(command) for command in commands]


# --- table-driven examples --------------------------------------------------------------------------

EXAMPLES: list[tuple[str, Profile, list[DuplicatesCommand], list[Outcome]]] = [
    ("string x and bytes 7800 are one ID; bytes 78 another", LATEST,
     [CreateQueue("a1", "q1"), Send("s1", "a1", X), Send("s1", "a1", X_BYTES), Send("s1", "a1", X_UTF8)],
     [Done(), Sent(RoutingStatus.OK, 1, ("q1",)), Sent(RoutingStatus.DUPLICATED_ID),
      Sent(RoutingStatus.OK, 2, ("q1",))]),
    ("a long ID fails the send, and dooms a transaction", LATEST,
     [Send("s1", "a1", LONG), Begin("s1"), Send("s1", "a1", LONG), Commit("s1")],
     [SendFailed(SendFailure.ID_NOT_BYTES), Done(), SendFailed(SendFailure.ID_NOT_BYTES, rollback_only=True),
      CommitFailed(DoomReason.SEND_FAILED)]),
    ("the oldest of three IDs leaves a two-slot cache", LATEST,
     [Send("s1", "a1", X), Send("s1", "a1", Y), Send("s1", "a1", Z), Send("s1", "a1", X)],
     [Sent(RoutingStatus.NO_BINDINGS, 1), Sent(RoutingStatus.NO_BINDINGS, 2), Sent(RoutingStatus.NO_BINDINGS, 3),
      Sent(RoutingStatus.NO_BINDINGS, 4)]),
    ("a transaction's ID is invisible until the commit, then dooms a second one", LATEST,
     [Begin("s1"), Send("s1", "a1", X), Send("s2", "a1", X), Begin("s2"), Commit("s1"), Send("s2", "a1", X),
      Commit("s2")],
     [Done(), Sent(RoutingStatus.NO_BINDINGS, 1), Sent(RoutingStatus.NO_BINDINGS, 2), Done(), Committed((1,)),
      Sent(RoutingStatus.DUPLICATED_ID, rollback_only=True), CommitFailed(DoomReason.DUPLICATE_ID)]),
    ("a bridge duplicate in a transaction rolls it back at once", LATEST,
     [CreateQueue("a1", "q1"), Send("s1", "a1", bridge_id="01"), Receive("s2", "q1"), Begin("s2"),
      Send("s2", "a1", bridge_id="01"), Commit("s2")],
     [Done(), Sent(RoutingStatus.OK, 1, ("q1",)), Received(1), Done(),
      Sent(RoutingStatus.DUPLICATED_ID, rollback_only=True), CommitFailed(DoomReason.BRIDGE_DUPLICATE)]),
    ("deleting the last queue forgets the IDs", LATEST,
     [CreateQueue("a1", "q1"), Send("s1", "a1", X), DeleteQueue("q1"), CreateQueue("a1", "q1"), Send("s1", "a1", X)],
     [Done(), Sent(RoutingStatus.OK, 1, ("q1",)), QueueDeleted(True), Done(), Sent(RoutingStatus.OK, 2, ("q1",))]),
    ("a rolled-back receive puts the message back; a restart loses the transaction", LATEST,
     [CreateQueue("a1", "q1"), Send("s1", "a1"), Begin("s1"), Receive("s1", "q1"), Rollback("s1"), Begin("s2"),
      Receive("s2", "q1"), Crash(), Receive("s1", "q1")],
     [Done(), Sent(RoutingStatus.OK, 1, ("q1",)), Done(), Received(1), RolledBack(), Done(), Received(1),
      Restarted(1, 0), Received(1)]),
    ("a restart into a smaller cache drops the oldest", get_profile("artemis-latest"),
     [Send("s1", "a1", X), Send("s1", "a1", Y), Send("s1", "a1", Z), Restart(2), Send("s1", "a1", X),
      Send("s1", "a1", Z)],
     [Sent(RoutingStatus.NO_BINDINGS, 1), Sent(RoutingStatus.NO_BINDINGS, 2), Sent(RoutingStatus.NO_BINDINGS, 3),
      Restarted(0, 1), Sent(RoutingStatus.NO_BINDINGS, 4), Sent(RoutingStatus.DUPLICATED_ID)]),
    ("a delete leaves a hole that a restart compacts", LATEST,
     [Send("s1", "a1", X), Send("s1", "a1", Y), DeleteId("a1", X), DeleteId("a1", X), Restart(), Send("s1", "a1", X)],
     [Sent(RoutingStatus.NO_BINDINGS, 1), Sent(RoutingStatus.NO_BINDINGS, 2), IdDeleted(True), IdDeleted(False),
      Restarted(0, 0), Sent(RoutingStatus.NO_BINDINGS, 3)]),
    ("a prepared transaction survives a crash; its commit makes the ID visible", LATEST,
     [CreateQueue("a1", "q1"), Send("s2", "a1"), Begin("s1"), Receive("s1", "q1"), Send("s1", "a1", X),
      Prepare("s1"), Crash(), Receive("s2", "q1"), Send("s1", "a1", Y), QueryId("a1", X), Commit("s1"),
      QueryId("a1", X), Receive("s2", "q1")],
     [Done(), Sent(RoutingStatus.OK, 1, ("q1",)), Done(), Received(1), Sent(RoutingStatus.OK, 2, ("q1",)), Done(),
      Restarted(0, 0), NOTHING, TransactionPrepared("s1"), IdQueried(False), Committed((2,)), IdQueried(True),
      Received(2)]),
    ("a doomed transaction fails to prepare; a prepared one rolls back after a restart", LATEST,
     [Send("s1", "a1", X), Begin("s2"), Send("s2", "a1", X), Prepare("s2"), Begin("s2"), Send("s2", "a1", Y),
      Prepare("s2"), Restart(), Rollback("s2"), Send("s1", "a1", Y)],
     [Sent(RoutingStatus.NO_BINDINGS, 1), Done(), Sent(RoutingStatus.DUPLICATED_ID, rollback_only=True),
      PrepareFailed(DoomReason.DUPLICATE_ID), Done(), Sent(RoutingStatus.NO_BINDINGS, 2), Done(), Restarted(0, 0),
      RolledBack(), Sent(RoutingStatus.NO_BINDINGS, 3)]),
    ("a per-address size applies to caches created later", LATEST,
     [SetIdCacheSize("a2", 0), Send("s1", "a2", X), Send("s1", "a2", X), Send("s1", "a2", bridge_id="02"),
      Send("s1", "a2", bridge_id="02")],
     [Done(), Sent(RoutingStatus.NO_BINDINGS, 1), Sent(RoutingStatus.NO_BINDINGS, 2),
      Sent(RoutingStatus.NO_BINDINGS, 3), Sent(RoutingStatus.DUPLICATED_ID)]),
]


@pytest.mark.parametrize(("title", "profile", "commands", "expected"), EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_examples(title: str, profile: Profile, commands: list[DuplicatesCommand], expected: list[Outcome],
                  tmp_path: Path) -> None:
    assert outcomes_of(profile, commands) == expected
    assert first_divergence(profile, commands) is None
    assert first_divergence(profile, commands, tmp_path / "store.sqlite") is None


# --- random sequences -----------------------------------------------------------------------------

SESSIONS = st.sampled_from(["s1", "s2"])
ADDRESSES = st.sampled_from(["a1", "a2"])
QUEUES = st.sampled_from(["q1", "q2", "q3"])
IDS = st.sampled_from([X, Y, X_BYTES, X_UTF8, LONG])
SENDS = st.builds(Send, SESSIONS, ADDRESSES, st.sampled_from([X, Y, X_UTF8, None, X_BYTES, LONG]),
                  st.sampled_from([None, None, None, None, "01", "02"]), st.sampled_from([True, True, True, False]),
                  st.sampled_from([False, False, False, False, True]))
OTHERS: st.SearchStrategy[DuplicatesCommand] = st.one_of(
    st.builds(Begin, SESSIONS), st.builds(Commit, SESSIONS), st.builds(Rollback, SESSIONS), st.builds(Prepare, SESSIONS),
    st.builds(Receive, SESSIONS, QUEUES), st.builds(CreateQueue, ADDRESSES, QUEUES), st.builds(DeleteQueue, QUEUES),
    st.builds(DeleteId, ADDRESSES, IDS), st.builds(SetIdCacheSize, ADDRESSES, st.integers(0, 3)),
    st.builds(Restart, st.one_of(st.none(), st.integers(0, 3))), st.just(Crash()),
)
COMMANDS: st.SearchStrategy[DuplicatesCommand] = st.one_of(SENDS, OTHERS)
"""Half sends, most with an ID, so that two-slot caches wrap before a restart; half everything else."""


def random_program(seed: int, length: int) -> tuple[Profile, list[DuplicatesCommand]]:
    """A profile variant and ``length`` commands drawn with fixed weights from ``seed``.

    Hypothesis shrinks well but spends many examples on near-empty programs;
    these programs are about half sends with IDs, so two-slot caches wrap,
    leave holes and are truncated by restarts in most of them.
    """
    rng = random.Random(seed)
    profile = rng.choice(VARIANTS)
    commands: list[DuplicatesCommand] = []
    for _ in range(length):
        session, address, queue = rng.choice(["s1", "s2"]), rng.choice(["a1", "a2"]), rng.choice(["q1", "q2", "q3"])
        roll = rng.random()
        if roll < 0.5:
            commands.append(Send(session, address, rng.choice([None, X, Y, X_BYTES, X_UTF8, LONG, Y, X_UTF8]),
                                 rng.choice([None, None, None, None, "01", "02"]), rng.random() < 0.9,
                                 rng.random() < 0.1))
        else:
            others: list[DuplicatesCommand] = [
                Begin(session), Commit(session), Rollback(session), Prepare(session), Prepare(session),
                Receive(session, queue),
                CreateQueue(address, queue),
                DeleteQueue(queue), DeleteId(address, rng.choice([X, Y, X_UTF8])),
                SetIdCacheSize(address, rng.randint(0, 3)), Restart(rng.choice([None, None, 1, 2, 3])), Crash(),
            ]
            commands.append(rng.choice(others))
    return profile, commands


@pytest.mark.parametrize("block", range(4))
def test_seeded_programs_match_the_spec(block: int) -> None:
    per_block = scaled(250, 2500)
    for seed in range(block * per_block, (block + 1) * per_block):
        profile, commands = random_program(seed, 60)
        divergence = first_divergence(profile, commands)
        assert divergence is None, f"program seed {seed} ({profile.label}): {divergence}"


def test_seeded_programs_on_a_file_store_match_the_spec(tmp_path: Path) -> None:
    for seed in range(scaled(60, 600)):
        profile, commands = random_program(10_000 + seed, 60)
        store = tmp_path / f"store-{seed}.sqlite"
        divergence = first_divergence(profile, commands, store)
        assert divergence is None, f"program seed {10_000 + seed} ({profile.label}): {divergence}"


@settings(max_examples=scaled(1000, 10000), deadline=None)
@given(profile=st.sampled_from(VARIANTS), commands=st.lists(COMMANDS, min_size=10, max_size=60))
def test_random_sequences_match_the_spec(profile: Profile, commands: list[DuplicatesCommand]) -> None:
    divergence = first_divergence(profile, commands)
    assert divergence is None, divergence


@settings(max_examples=scaled(60, 600), deadline=None)
@given(profile=st.sampled_from(VARIANTS), commands=st.lists(COMMANDS, min_size=5, max_size=40))
def test_file_store_matches_the_spec_and_reopens_as_a_crash(profile: Profile,
                                                            commands: list[DuplicatesCommand]) -> None:
    with tempfile.TemporaryDirectory(prefix="brokerspec-store-") as folder:
        store = Path(folder) / "store.sqlite"
        divergence = first_divergence(profile, commands, store)
        assert divergence is None, divergence
        expected = apply(spec_state(profile, commands), Crash())[0]
        with FastDuplicatesBroker(profile, store) as reopened:
            assert reopened.snapshot() == expected
            reopened.check_valid()


def test_state_survives_restart_crash_and_reopen_identically(tmp_path: Path) -> None:
    profile = get_profile("artemis-latest", (("duplicates.id_cache_size", "3"),))
    store = tmp_path / "store.sqlite"
    work: list[DuplicatesCommand] = [
        CreateQueue("a1", "q1"), CreateQueue("a2", "q2"), Send("s1", "a1", X), Send("s1", "a1", Y),
        Begin("s2"), Send("s2", "a1", Z), Send("s2", "a2", bridge_id="01"), Receive("s2", "q1"),
        SetIdCacheSize("a1", 1), DeleteId("a1", X),
    ]
    for ending in (Restart(), Crash(), Restart(2)):
        store.unlink(missing_ok=True)
        assert first_divergence(profile, [*work, ending, Send("s1", "a1", Y), ending], store) is None
    with FastDuplicatesBroker(profile, tmp_path / "kept.sqlite") as broker:
        for command in work:
            broker.execute(command)
        before_close = broker.snapshot()
    assert before_close == spec_state(profile, work)
    with FastDuplicatesBroker(profile, tmp_path / "kept.sqlite") as reopened:
        reloaded = reopened.snapshot()
    assert reloaded == apply(spec_state(profile, work), Crash())[0]
    assert reloaded.queues["q1"].messages == (1, 2), "the message taken by the lost transaction is back"
    assert not reloaded.transactions and reloaded.size_settings["a1"] == 1


def test_ids_and_messages_are_durable_in_the_file(tmp_path: Path) -> None:
    store = tmp_path / "store.sqlite"
    with FastDuplicatesBroker(LATEST, store) as broker:
        broker.execute(CreateQueue("a1", "q1"))
        broker.execute(Send("s1", "a1", X))
        broker.execute(Send("s1", "a1", bridge_id="01"))
    conn = sqlite3.connect(store)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        ids = conn.execute("SELECT bridge, address, key FROM ids ORDER BY stamp").fetchall()
        messages = conn.execute("SELECT queue, number FROM messages ORDER BY number").fetchall()
    finally:
        conn.close()
    assert ids == [(0, "a1", b"x\x00"), (1, "a1", b"\x01")]
    assert messages == [("q1", 1), ("q1", 2)]


def test_a_reopened_store_holds_the_prepared_transaction(tmp_path: Path) -> None:
    """The prepare's rows (messages, IDs, the held message) are in the file; a reopen rebuilds the transaction."""
    store = tmp_path / "store.sqlite"
    work: list[DuplicatesCommand] = [CreateQueue("a1", "q1"), Send("s2", "a1"), Begin("s1"), Receive("s1", "q1"),
                                     Send("s1", "a1", X), Send("s1", "a1", bridge_id="01"), Prepare("s1")]
    with FastDuplicatesBroker(LATEST, store) as broker:
        for command in work:
            broker.execute(command)
    conn = sqlite3.connect(store)
    try:
        assert conn.execute("SELECT session FROM prepared").fetchall() == [("s1",)]
        assert conn.execute("SELECT number, targets FROM prepared_messages ORDER BY ord").fetchall() == [
            (2, '["q1"]'), (3, '["q1"]')]
        assert conn.execute("SELECT bridge, address, key FROM prepared_ids ORDER BY ord").fetchall() == [
            (1, "a1", b"\x01"), (0, "a1", b"x\x00")], "the instant add first, as keep_prepared lists them"
        assert conn.execute("SELECT session, queue, number FROM held").fetchall() == [("s1", "q1", 1)]
        assert conn.execute("SELECT key FROM ids").fetchall() == [], "nothing of the transaction is in a cache"
    finally:
        conn.close()
    expected = apply(spec_state(LATEST, work), Crash())[0]
    with FastDuplicatesBroker(LATEST, store) as reopened:
        assert reopened.snapshot() == expected
        assert expected.transactions["s1"].status is TxState.PREPARED and expected.transactions["s1"].acks
        reopened.check_valid()
        assert reopened.execute(Commit("s1")) == Committed((2, 3))
        assert reopened.execute(QueryId("a1", X)) == IdQueried(True)
    conn = sqlite3.connect(store)
    try:
        for table in ("prepared", "prepared_messages", "prepared_ids", "held"):
            assert conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == 0, table
    finally:
        conn.close()


def test_deleting_the_last_queue_drops_the_prepared_ids_from_the_store(tmp_path: Path) -> None:
    store = tmp_path / "store.sqlite"
    work: list[DuplicatesCommand] = [CreateQueue("a1", "q1"), CreateQueue("a2", "q2"), Begin("s1"),
                                     Send("s1", "a1", X), Send("s1", "a2", Y), Prepare("s1"), DeleteQueue("q1"),
                                     CreateQueue("a1", "q1")]
    assert first_divergence(LATEST, [*work, Crash(), Commit("s1"), QueryId("a1", X), QueryId("a2", Y)], store) is None
    store.unlink()
    with FastDuplicatesBroker(LATEST, store) as broker:
        for command in work:
            broker.execute(command)
        assert broker._store.read_prepared() == {"s1": ([(1, ()), (2, ("q2",))], [(False, "a2", b"y\x00")])}, \
            "the ID of a1 and the copy for the deleted q1 are gone; the q1 made again gets nothing"


def test_check_valid_notices_a_prepared_transaction_out_of_step_with_the_store() -> None:
    with FastDuplicatesBroker(LATEST) as broker:
        for command in (Begin("s1"), Send("s1", "a1", X), Prepare("s1")):
            broker.execute(command)
        broker.check_valid()
        broker._store.forget_prepared("s1")
        broker._store.commit()
        with pytest.raises(InvariantBroken, match="prepared transactions"):
            broker.check_valid()


def test_check_valid_notices_broken_indexes_and_a_store_out_of_step() -> None:
    with FastDuplicatesBroker(LATEST) as broker:
        broker.execute(Send("s1", "a1", X))
        broker.check_valid()
        cache = broker._normal["a1"]
        cache.index[b"y\x00"] = 0
        with pytest.raises(InvariantBroken, match="does not hold it"):
            broker.check_valid()
        del cache.index[b"y\x00"]
        broker._store.delete_id(False, "a1", 0)
        broker._store.commit()
        with pytest.raises(InvariantBroken, match="store records"):
            broker.check_valid()


def test_check_valid_reads_the_store_again_once_it_may_have_changed() -> None:
    """The self-check keeps what it read from the store while the store's connection changed no row; what it read
    inside a store transaction is never kept, as the transaction may yet be rolled back."""
    with FastDuplicatesBroker(LATEST) as broker:
        broker.execute(Send("s1", "a1", X))
        broker.check_valid()
        broker._store.delete_id(False, "a1", 0)  # uncommitted, read back inside the store's transaction
        with pytest.raises(InvariantBroken, match="store records"):
            broker.check_valid()
        broker._store.rollback()
        broker.check_valid()  # the row is back: a kept read from inside the transaction would still miss it
        broker._store.delete_id(False, "a1", 0)
        broker._store.commit()
        with pytest.raises(InvariantBroken, match="store records"):
            broker.check_valid()


def _corrupt_cache_name(broker: FastDuplicatesBroker) -> None:
    broker._normal["a2"] = broker._normal.pop("a1")


def _forgotten_but_filed(broker: FastDuplicatesBroker) -> None:
    broker._normal["a1"].live = False


def _overfilled(broker: FastDuplicatesBroker) -> None:
    broker._normal["a1"].size = 0


def _cursor_astray(broker: FastDuplicatesBroker) -> None:
    broker._normal["a1"].position = 0


def _key_beyond_use(broker: FastDuplicatesBroker) -> None:
    broker._normal["a1"].slots[1] = b"y\x00"


def _orphan_pending_mark(broker: FastDuplicatesBroker) -> None:
    broker._normal["a1"].pending[0] = "s9"


def _stamps_backwards(broker: FastDuplicatesBroker) -> None:
    cache = broker._bridge["a1"]
    cache.stamps[0], cache.stamps[1] = cache.stamps[1], cache.stamps[0]


def _transaction_misfiled(broker: FastDuplicatesBroker) -> None:
    broker._txs["s3"] = broker._txs.pop("s2")


def _doom_without_status(broker: FastDuplicatesBroker) -> None:
    broker._txs["s2"].doom = DoomReason.DUPLICATE_ID


def _work_for_a_forgotten_cache(broker: FastDuplicatesBroker) -> None:
    broker._txs["s2"].after_store.append((IdCache(broker._normal["a1"].name, 2, broker._log), b"z\x00"))


def _queue_out_of_order(broker: FastDuplicatesBroker) -> None:
    queue = broker._queues["q1"]
    queue.messages.append((0, 1))


def _counter_behind(broker: FastDuplicatesBroker) -> None:
    broker._next_message = 2


def _binding_lost(broker: FastDuplicatesBroker) -> None:
    broker._bindings.clear()


def _store_behind_on_sizes(broker: FastDuplicatesBroker) -> None:
    broker._sizes["a2"] = 1
    broker._global_size = 7


def _held_message_unrecorded(broker: FastDuplicatesBroker) -> None:
    broker._store.release("s2")
    broker._store.add_message("q9", 1, 1)
    broker._store.commit()


CORRUPTIONS: list[tuple[Callable[[FastDuplicatesBroker], None], str]] = [
    (_corrupt_cache_name, "filed as"), (_forgotten_but_filed, "marked forgotten"), (_overfilled, "slots in use"),
    (_cursor_astray, "cursor at 0"), (_key_beyond_use, "beyond the slots"),
    (_orphan_pending_mark, "no open transaction"),
    (_stamps_backwards, "stamps out of cursor order"), (_transaction_misfiled, "filed under"),
    (_doom_without_status, "with doom"), (_work_for_a_forgotten_cache, "no longer filed"),
    (_queue_out_of_order, "out of arrival order"), (_counter_behind, "beyond the counter"),
    (_binding_lost, "address index"), (_store_behind_on_sizes, "store sizes"),
    (_held_message_unrecorded, "missing queues"),
]


@pytest.mark.parametrize(("corrupt", "complaint"), CORRUPTIONS, ids=[c[0].__name__.strip("_") for c in CORRUPTIONS])
def test_check_valid_names_each_broken_invariant(corrupt: Callable[[FastDuplicatesBroker], None],
                                                 complaint: str) -> None:
    with FastDuplicatesBroker(get_profile("artemis-latest", (("duplicates.id_cache_size", "3"),))) as broker:
        for command in (CreateQueue("a1", "q1"), Send("s1", "a1", X), Send("s1", "a1", bridge_id="01"),
                        Send("s1", "a1", bridge_id="02"), Begin("s2"), Send("s2", "a1", Y), Receive("s2", "q1")):
            broker.execute(command)
        broker.check_valid()
        corrupt(broker)
        with pytest.raises(InvariantBroken, match=complaint):
            broker.check_valid()


def test_misuse_raises_and_leaves_the_store_usable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = tmp_path / "store.sqlite"
    with FastDuplicatesBroker(LATEST, store) as broker:
        broker.execute(Send("s1", "a1", X))
        with pytest.raises(KeyError):
            broker.execute("not a command")  # type: ignore[arg-type]
        with pytest.raises(IndexError, match="skips the first free slot"):
            broker._normal["a1"].write(5, b"y\x00", "")
        broker.check_valid()
    conn = sqlite3.connect(store)
    conn.execute("UPDATE meta SET value = 1 WHERE name = 'schema'")
    conn.commit()
    conn.close()
    with pytest.raises(ValueError, match="schema version 1, this broker reads 2"):
        FastDuplicatesBroker(LATEST, store)
    monkeypatch.setattr("brokerspec.impl.duplicates.cache.PREALLOCATE_LIMIT", 1)
    with FastDuplicatesBroker(LATEST) as broker:
        for command in (Send("s1", "a1", X), Send("s1", "a1", Y), Send("s1", "a1", X_UTF8)):
            broker.execute(command)
        assert broker.snapshot() == spec_state(LATEST, [Send("s1", "a1", X), Send("s1", "a1", Y),
                                                         Send("s1", "a1", X_UTF8)])
        broker.check_valid()


def test_long_queues_compact_as_they_drain() -> None:
    commands: list[DuplicatesCommand] = [CreateQueue("a1", "q1")]
    commands += [Send("s1", "a1")] * 200
    commands += [Receive("s1", "q1")] * 150
    commands += [Begin("s2"), Receive("s2", "q1"), Rollback("s2")]
    assert first_divergence(LATEST, commands) is None


# --- the closed ring entry points agree with the spec's, exhaustively on short inputs -----------------


def test_ring_samples_match_the_spec_on_every_short_input() -> None:
    for size in (1, 2, 3):
        for length in range(5):
            for steps in itertools.product(RingStep, repeat=length):
                assert fast_samples.run_ring_steps(size, list(steps)) == spec_samples.run_ring_steps(size, list(steps))
    for size in (0, 1, 2, 3):
        for length in range(6):
            for stored in itertools.product(SampleId, repeat=length):
                for newest in (True, False):
                    assert (fast_samples.reload_survivors(list(stored), size, newest)
                            == spec_samples.reload_survivors(list(stored), size, newest))


# --- planted variants: one seam each, each parted from the spec by a short known script ---------------

SCRIPTS: dict[str, list[DuplicatesCommand]] = {
    "id-added-at-send-not-at-commit": [Begin("s1"), Send("s1", "a1", X), Send("s2", "a1", X)],
    "newest-evicted-instead-of-oldest": [Send("s1", "a1", X), Send("s1", "a1", Y), Send("s1", "a1", Z),
                                         Send("s1", "a1", X)],
    "bridge-and-normal-caches-shared": [Send("s1", "a1", bridge_id="7800"), Send("s1", "a1", X)],
    "reload-keeps-the-wrong-end": [Send("s1", "a1", X), Send("s1", "a1", Y), Restart(1), Send("s1", "a1", X)],
    "rollback-leaves-ids-behind": [Begin("s1"), Send("s1", "a1", bridge_id="01"), Rollback("s1"),
                                   Send("s2", "a1", bridge_id="01")],
    "duplicate-in-transaction-does-not-doom": [Send("s1", "a1", X), Begin("s2"), Send("s2", "a1", X), Commit("s2")],
    "rejected-duplicate-moves-in-ring": [Send("s1", "a1", X), Send("s1", "a1", Y), Send("s1", "a1", X),
                                         Send("s1", "a1", Z), Send("s1", "a1", X)],
    "last-queue-deleted-keeps-ids": [CreateQueue("a1", "q1"), Send("s1", "a1", X), DeleteQueue("q1"),
                                     CreateQueue("a1", "q1"), Send("s1", "a1", X)],
    "prepared-id-lost-at-restart": [Begin("s1"), Send("s1", "a1", X), Prepare("s1"), Crash(), Commit("s1"),
                                    Send("s2", "a1", X)],
    "prepared-id-visible-before-commit": [Begin("s1"), Send("s1", "a1", X), Prepare("s1"), Send("s2", "a1", X)],
}


@pytest.mark.parametrize("bug", PLANTED, ids=[bug.name for bug in PLANTED])
def test_each_planted_seam_parts_from_the_spec(bug: PlantedBug) -> None:
    commands = SCRIPTS[bug.name]
    assert first_divergence(LATEST, commands) is None, "the scenario itself is fine for the real broker"
    assert first_divergence(LATEST, commands, factory=bug.broker) is not None


# --- the store-choice benchmark still runs ----------------------------------------------------------


def test_store_choice_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "store_choice.py"
    spec = importlib.util.spec_from_file_location("store_choice", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["store_choice"] = module
    spec.loader.exec_module(module)
    assert module.main(["--seconds", "0.05"]) == 0
    table = capsys.readouterr().out
    assert "journal + CRC32 + fsync" in table and "sqlite WAL+FULL, broker send" in table
