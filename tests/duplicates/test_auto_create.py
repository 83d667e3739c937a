"""Auto-creating sends (DUP-AUTO-CREATE, DUP-AUTO-CREATE-NAME-TAKEN): the spec's outcomes by hand, and the
reference and the fast broker (in memory and on a file store, across restarts and crashes) step for step."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from brokerspec.check.domains import DUPLICATES
from brokerspec.check.runner import run_machine
from brokerspec.spec.errors import InvalidCommand
from brokerspec.impl.duplicates import FastDuplicatesBroker
from brokerspec.reference.duplicates import ReferenceDuplicatesBroker
from brokerspec.spec import FrozenMap, InvariantBroken, Outcome, Profile, get_profile
from brokerspec.spec.duplicates import (
    STRANDED,
    Begin,
    CacheKind,
    CacheName,
    Commit,
    CommitFailed,
    Crash,
    CreateQueue,
    DeleteQueue,
    DoomReason,
    Done,
    DuplicatesCommand,
    DuplicatesState,
    IdQueried,
    QueryId,
    QueueDeleted,
    QueueNotFound,
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
    apply,
    initial_state,
    invariant_violations,
)
from duplicate_ids import X, Y

LATEST = get_profile("artemis-latest")
OLD = get_profile("artemis-2.11")
OK, NO_BINDINGS, DUPLICATED = RoutingStatus.OK, RoutingStatus.NO_BINDINGS, RoutingStatus.DUPLICATED_ID


def auto(session: str, address: str, duplicate_id: Any = None, **more: Any) -> Send:
    return Send(session, address, duplicate_id, auto_create=True, **more)


EXAMPLES: list[tuple[str, Profile, list[DuplicatesCommand], list[Outcome]]] = [
    ("the send makes a queue named like the address and lands in it; the duplicate makes none", LATEST,
     [auto("s1", "a1", X), auto("s1", "a1", X), Receive("s1", "a1"), Receive("s1", "a1")],
     [Sent(OK, 1, ("a1",)), Sent(DUPLICATED), Received(1), Received(None)]),
    ("before 2.28.0 nothing is made: NO_BINDINGS, the ID recorded all the same", OLD,
     [auto("s1", "a1", X), auto("s1", "a1", X), Receive("s1", "a1")],
     [Sent(NO_BINDINGS, 1), Sent(DUPLICATED), QueueNotFound("a1")]),
    ("a duplicate of an ID recorded without bindings makes no queue", LATEST,
     [Send("s1", "a1", X), auto("s1", "a1", X), auto("s1", "a1", Y)],
     [Sent(NO_BINDINGS, 1), Sent(DUPLICATED), Sent(OK, 2, ("a1",))]),
    ("an address with a queue gets no other", LATEST,
     [CreateQueue("a1", "q1"), auto("s1", "a1", X)],
     [Done(), Sent(OK, 1, ("q1",))]),
    ("the queue stays after a rollback, empty", LATEST,
     [Begin("s1"), auto("s1", "a1", X), Rollback("s1"), Receive("s2", "a1"), auto("s2", "a1", X)],
     [Done(), Sent(OK, 1, ("a1",)), RolledBack(), Received(None), Sent(OK, 2, ("a1",))]),
    ("a rollback-only transaction makes the queue too; its commit fails", LATEST,
     [Send("s1", "a2", X), Begin("s1"), Send("s1", "a2", X), auto("s1", "a1", Y), Commit("s1"),
      Receive("s1", "a1")],
     [Sent(NO_BINDINGS, 1), Done(), Sent(DUPLICATED, rollback_only=True), Sent(OK, 2, ("a1",), rollback_only=True),
      CommitFailed(DoomReason.DUPLICATE_ID), Received(None)]),
    ("a full address fails the send after the queue is made", LATEST,
     [auto("s1", "a1", X, address_full=True), auto("s1", "a1", X), Receive("s1", "a1")],
     [SendFailed(SendFailure.ADDRESS_FULL), Sent(OK, 1, ("a1",)), Received(1)]),
    ("a bridged send makes the queue; its bridge duplicate does not", LATEST,
     [auto("s1", "a1", bridge_id="01"), DeleteQueue("a1"), auto("s1", "a1", bridge_id="01"),
      auto("s1", "a1", bridge_id="01")],
     [Sent(OK, 1, ("a1",)), QueueDeleted(True), Sent(OK, 2, ("a1",)), Sent(DUPLICATED)]),
    ("deleting the auto-created queue, its address's last, forgets the IDs", LATEST,
     [auto("s1", "a1", X), DeleteQueue("a1"), QueryId("a1", X), auto("s1", "a1", X)],
     [Sent(OK, 1, ("a1",)), QueueDeleted(True), IdQueried(False), Sent(OK, 2, ("a1",))]),
    ("the queue and its messages survive a crash", LATEST,
     [auto("s1", "a1", X), auto("s1", "a1", Y), Crash(), Receive("s1", "a1"), auto("s1", "a1", X)],
     [Sent(OK, 1, ("a1",)), Sent(OK, 2, ("a1",)), Restarted(0, 0), Received(1), Sent(DUPLICATED)]),
    ("a queue of that name on another address fails the send; the ID stays until a restart", LATEST,
     [CreateQueue("a2", "a1"), auto("s1", "a1", X), QueryId("a1", X), Send("s1", "a1", X), Restart(),
      QueryId("a1", X)],
     [Done(), SendFailed(SendFailure.ADDRESS_DOES_NOT_EXIST), IdQueried(True), Sent(DUPLICATED), Restarted(0, 0),
      IdQueried(False)]),
    ("inside a transaction the name taken dooms it", LATEST,
     [CreateQueue("a2", "a1"), Begin("s1"), auto("s1", "a1", X), Commit("s1"), QueryId("a1", X)],
     [Done(), Done(), SendFailed(SendFailure.ADDRESS_DOES_NOT_EXIST, rollback_only=True),
      CommitFailed(DoomReason.SEND_FAILED), IdQueried(False)]),
]


@pytest.mark.parametrize(("title", "profile", "commands", "expected"), EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_the_spec_gives_the_hand_derived_outcomes(title: str, profile: Profile, commands: list[DuplicatesCommand],
                                                   expected: list[Outcome]) -> None:
    state = initial_state(profile)
    got = []
    for command in commands:
        state, outcome = apply(state, command)
        assert not invariant_violations(state), invariant_violations(state)
        got.append(outcome)
    assert got == expected


def first_divergence(profile: Profile, commands: Sequence[DuplicatesCommand], store: Path | None = None) -> str | None:
    """Run the spec, the reference and the fast broker side by side; the first step where one parts, or None."""
    state = initial_state(profile)
    reference = ReferenceDuplicatesBroker(profile)
    with FastDuplicatesBroker(profile, store) as fast:
        for number, command in enumerate(commands, start=1):
            state, expected = apply(state, command)
            for name, broker in (("reference", reference), ("impl", fast)):
                actual = broker.execute(command)
                if actual != expected:
                    return f"step {number} {command}: spec {expected}, {name} {actual}"
                if broker.snapshot() != state:
                    return f"step {number} {command}: {name} state differs\n spec {state}\n {name} {broker.snapshot()}"
            try:
                fast.check_valid()
            except InvariantBroken as error:
                return f"step {number} {command}: {error}"
    return None


@pytest.mark.parametrize(("title", "profile", "commands", "expected"), EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_reference_and_impl_follow_the_spec(title: str, profile: Profile, commands: list[DuplicatesCommand],
                                            expected: list[Outcome], tmp_path: Path) -> None:
    assert first_divergence(profile, commands) is None
    assert first_divergence(profile, [*commands, Crash(), *commands], tmp_path / "store.sqlite") is None


def test_the_stranded_id_is_pending_in_memory_and_absent_from_the_store(tmp_path: Path) -> None:
    commands: list[DuplicatesCommand] = [CreateQueue("a2", "a1"), auto("s1", "a1", X)]
    state = initial_state(LATEST)
    for command in commands:
        state = apply(state, command)[0]
    assert state.caches[CacheName(CacheKind.NORMAL, "a1")].pending == FrozenMap({0: STRANDED})
    with FastDuplicatesBroker(LATEST, tmp_path / "s.sqlite") as fast:
        for command in commands:
            fast.execute(command)
        assert fast.snapshot() == state
    with FastDuplicatesBroker(LATEST, tmp_path / "s.sqlite") as reopened:
        assert reopened.execute(QueryId("a1", X)) == IdQueried(False)
        assert set(reopened.snapshot().queues) == {"a1"}


def test_the_auto_created_queue_is_in_the_file_store(tmp_path: Path) -> None:
    with FastDuplicatesBroker(LATEST, tmp_path / "s.sqlite") as fast:
        fast.execute(Begin("s1"))
        fast.execute(auto("s1", "a1", X))
        fast.execute(auto("s2", "a2", Y))
    with FastDuplicatesBroker(LATEST, tmp_path / "s.sqlite") as reopened:
        queues = reopened.snapshot().queues
    assert {name: (queue.address, queue.messages) for name, queue in queues.items()} == {
        "a1": ("a1", ()), "a2": ("a2", (2,))}, "the lost transaction's queue stays, empty"


def test_a_move_path_send_cannot_auto_create() -> None:
    with pytest.raises(InvalidCommand):
        Send("s1", "a1", X, reject_duplicates=False, auto_create=True)


def test_the_machine_draws_every_auto_creation_outcome() -> None:
    seen: Counter[str] = Counter()

    class Watched(FastDuplicatesBroker):
        def execute(self, command: Any) -> Outcome:
            made = isinstance(command, Send) and command.auto_create and command.address not in self._queues
            outcome = super().execute(command)
            if isinstance(command, Send) and command.auto_create:
                seen["auto-creating send"] += 1
                if made and command.address in self._queues:
                    seen["queue made" + (" in a transaction" if command.session in self._txs else "")] += 1
                if isinstance(outcome, Sent) and outcome.status is DUPLICATED:
                    seen["duplicate"] += 1
                if isinstance(outcome, SendFailed):
                    seen[outcome.reason.value] += 1
            return outcome

    divergence = run_machine(LATEST, {"impl": Watched}, max_examples=150, run_seed=7, domain=DUPLICATES)
    assert divergence is None, divergence.explain()
    for event in ("queue made", "queue made in a transaction", "duplicate", "ADDRESS_DOES_NOT_EXIST",
                  "ADDRESS_FULL"):
        assert seen[event] >= 3, (event, seen)
