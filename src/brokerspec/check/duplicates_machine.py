"""The lockstep state machine for duplicate detection.

Introduction
------------
One thin rule-based machine: each rule is named after a broker operation
and only builds the command; :class:`~brokerspec.check.lockstep.Lockstep`
runs it through the spec and every subject and compares outcomes and
states. The alphabets are tiny so that IDs collide all the time: two string
IDs, the bytes that equal one of them (``7800`` is the string ``"x"``), the
UTF-8 byte that does not (``78``), a long that cannot be converted, and two
bridge IDs. Every run starts by restarting the broker with a cache of 1 to 3
slots, so eviction, holes and reload truncation happen within a few steps.
Restart (with a new cache size) and crash are ordinary operations.

Auto-creating sends (DUP-AUTO-CREATE) go to the two addresses, with or
without queues, and to ``q1``, a queue name too; duplicates among them are
as frequent as among the other sends, and the queue a send may have made is
sometimes received from or deleted at once.

XA two-phase commit: ``prepare`` is drawn on its own (mostly for a session
whose transaction is open, sometimes for any, so that ``NoTransaction`` and
a second prepare are drawn too), and as one step that begins a transaction,
sends an ID in it, prepares it and restarts or crashes the broker, then
perhaps ends it. So prepared transactions meet restarts, crashes, commits,
rollbacks, refused sends and forgotten caches within a few steps
(DUP-XA-PREPARE to DUP-XA-PREPARED-RESTART).

Tiny caches alone never show a mistake that needs more slots: a ring
cursor that wraps at a fixed four, a size capped on the way in, a reload
that keeps the wrong few. The *wide* alphabet (``wide=True``) adds caches
of 5, 8 and 13 slots and sixteen numbered string IDs, with bursts long
enough to fill and wrap them. :func:`~brokerspec.check.runner.check_for`
runs every other batch wide, so the tiny alphabet keeps the batches in
which it finds its mistakes fastest, and a fixed-seed ``run_machine``
draws exactly what it drew before.
"""

from __future__ import annotations

from collections.abc import Mapping

from brokerspec.spec import Profile
from brokerspec.spec.duplicates import (
    Begin,
    Commit,
    Crash,
    CreateQueue,
    DeleteId,
    QueryId,
    DeleteQueue,
    DuplicateId,
    IdKind,
    Prepare,
    Receive,
    Restart,
    Rollback,
    Send,
    SetIdCacheSize,
)

from .domains import DUPLICATES
from .draws import booleans, either, lists, pick, tuples
from .engine import initialize, issues, rule
from .lockstep import Lockstep, SubjectFactory
from .machine import OpsMachine, RunStats

SESSIONS = pick("s1", "s2", "s3")
ADDRESSES = pick("a1", "a2")
QUEUES = pick("q1", "q2", "q3")
AUTO_ADDRESSES = pick("a1", "a2", "q1")
"""Where auto-creating sends go: ``q1`` is also a queue name, bound to ``a1`` or ``a2`` or not at all, so a send
there makes queue ``q1`` on address ``q1`` or finds the name taken (DUP-AUTO-CREATE-NAME-TAKEN)."""
IDS = pick(
    DuplicateId(IdKind.STRING, "x"), DuplicateId(IdKind.STRING, "y"), DuplicateId(IdKind.SIMPLE_STRING, "x"),
    DuplicateId(IdKind.BYTES, "7800"), DuplicateId(IdKind.BYTES, "78"), DuplicateId(IdKind.STRING, "z"),
    DuplicateId(IdKind.LONG, "5"),
)
BRIDGE_IDS = pick(None, None, None, None, None, None, "01", "02")
SIZES = pick(0, 1, 2, 3)
NUMBERED_IDS = [DuplicateId(IdKind.STRING, f"n{number}") for number in range(16)]
WIDE_IDS = either(IDS, pick(*NUMBERED_IDS))
WIDE_SIZES = pick(0, 1, 2, 3, 5, 8, 13)


def make_duplicates_machine(profile: Profile, subjects: Mapping[str, SubjectFactory],
                            counts: RunStats, wide: bool = False, window: int = 1) -> type[OpsMachine]:
    """A state machine class running ``subjects`` in lockstep with the duplicate-detection spec.

    ``wide`` draws from the wide alphabet: larger caches, more IDs, longer bursts.
    """
    ids = WIDE_IDS if wide else IDS
    optional_ids = either(pick(None), ids, ids)
    sizes = WIDE_SIZES if wide else SIZES
    start_sizes = pick(1, 2, 3, 5, 8, 13) if wide else pick(1, 2, 3)
    burst = 16 if wide else 4

    class DuplicatesLockstep(OpsMachine):
        """Spec and subjects in lockstep over ID caches, transactions and restarts."""

        def __init__(self) -> None:
            super().__init__()
            self.lockstep = Lockstep(profile, subjects, DUPLICATES, window=window)
            counts.examples += 1

        def teardown(self) -> None:
            try:
                self.lockstep.finish()  # deferred replies are compared before the scenario ends
            finally:
                self.lockstep.close()

        def run(self, command: object) -> None:
            if self.leaves_out(command):
                return
            counts.note(command)
            self.lockstep.step(command)

        @initialize(size=start_sizes, queues=lists(tuples(ADDRESSES, QUEUES), 0, 3))
        def start_small(self, size: int, queues: list[tuple[str, str]]) -> None:
            """Restart with a tiny cache, then bind a few queues."""
            self.run(Restart(size))
            for address, queue in queues:
                self.run(CreateQueue(address, queue))

        @issues("send")
        @rule(session=SESSIONS, address=ADDRESSES, duplicate_id=optional_ids, bridge_id=BRIDGE_IDS,
              reject_duplicates=pick(True, True, True, False), address_full=pick(False, False, False, False, True))
        def send(self, session: str, address: str, duplicate_id: DuplicateId | None, bridge_id: str | None,
                 reject_duplicates: bool, address_full: bool) -> None:
            self.run(Send(session, address, duplicate_id, bridge_id, reject_duplicates, address_full))

        @issues("send")
        @rule(session=SESSIONS, address=ADDRESSES, duplicate_ids=lists(ids, 2, burst))
        def send_several(self, session: str, address: str, duplicate_ids: list[DuplicateId]) -> None:
            """A burst of sends with IDs, so caches fill and wrap (and restarts reload full ones)."""
            for duplicate_id in duplicate_ids:
                self.run(Send(session, address, duplicate_id))

        @issues("send")
        @rule(session=SESSIONS, address=ADDRESSES, duplicate_id=optional_ids, bridge_id=BRIDGE_IDS)
        def send_in_transaction(self, session: str, address: str, duplicate_id: DuplicateId | None,
                                bridge_id: str | None) -> None:
            """Begin (refused when one is open, which is fine) and send in the session's transaction."""
            self.run(Begin(session))
            self.run(Send(session, address, duplicate_id, bridge_id))

        @issues("send")
        @rule(session=SESSIONS, address=AUTO_ADDRESSES, duplicate_id=optional_ids, bridge_id=BRIDGE_IDS,
              in_transaction=pick(False, False, True), address_full=pick(False, False, False, False, True),
              then=pick(None, None, "receive", "delete_queue"))
        def send_auto_create(self, session: str, address: str, duplicate_id: DuplicateId | None,
                             bridge_id: str | None, in_transaction: bool, address_full: bool,
                             then: str | None) -> None:
            """An auto-creating send (DUP-AUTO-CREATE), perhaps in a transaction, then perhaps a receive from or
            the deletion of the queue named like the address (the one it may have made)."""
            if in_transaction:
                self.run(Begin(session))
            self.run(Send(session, address, duplicate_id, bridge_id, address_full=address_full, auto_create=True))
            if then == "receive":
                self.run(Receive(session, address))
            elif then == "delete_queue":
                self.run(DeleteQueue(address))

        def ending(self, session: str) -> str:
            """``session`` if its transaction is open, else the first session that has one (else ``session``).

            A plain function of the state, so the choice shrinks as well as any
            argument; drawing from the open sessions directly, or guarding the
            rule with a precondition, left shrunk scripts full of no-op steps.
            """
            open_ones = self.lockstep.state.transactions
            return session if session in open_ones or not open_ones else min(open_ones)

        @issues("commit")
        @rule(session=SESSIONS)
        def commit(self, session: str) -> None:
            self.run(Commit(self.ending(session)))

        @issues("rollback")
        @rule(session=SESSIONS)
        def rollback(self, session: str) -> None:
            self.run(Rollback(self.ending(session)))

        @issues("receive")
        @rule(session=SESSIONS, queue=QUEUES)
        def receive(self, session: str, queue: str) -> None:
            self.run(Receive(session, queue))

        @issues("create_queue")
        @rule(address=ADDRESSES, queue=QUEUES)
        def create_queue(self, address: str, queue: str) -> None:
            self.run(CreateQueue(address, queue))

        @issues("delete_queue")
        @rule(queue=QUEUES)
        def delete_queue(self, queue: str) -> None:
            self.run(DeleteQueue(queue))

        @issues("delete_id")
        @rule(address=ADDRESSES, duplicate_id=ids)
        def delete_id(self, address: str, duplicate_id: DuplicateId) -> None:
            self.run(DeleteId(address, duplicate_id))

        @issues("query_id")
        @rule(address=ADDRESSES, duplicate_id=ids, bridge_id=BRIDGE_IDS)
        def query_id(self, address: str, duplicate_id: DuplicateId, bridge_id: str | None) -> None:
            """Ask about an ID (a bridge ID when one is drawn): what is cached, and what a transaction still holds."""
            self.run(QueryId(address, None, bridge_id) if bridge_id is not None else QueryId(address, duplicate_id))

        @issues("set_id_cache_size")
        @rule(address=ADDRESSES, size=sizes)
        def set_id_cache_size(self, address: str, size: int) -> None:
            self.run(SetIdCacheSize(address, size))

        @issues("prepare")
        @rule(session=SESSIONS, any_session=pick(False, False, False, True))
        def prepare(self, session: str, any_session: bool) -> None:
            """The first phase of an XA commit: of an open transaction three times in four, else of ``session``."""
            self.run(Prepare(session if any_session else self.ending(session)))

        @issues("prepare")
        @rule(session=SESSIONS, address=ADDRESSES, duplicate_id=optional_ids, bridge_id=BRIDGE_IDS, crash=booleans(),
              end=pick(None, "commit", "commit", "rollback"))
        def prepare_across_restart(self, session: str, address: str, duplicate_id: DuplicateId | None,
                                   bridge_id: str | None, crash: bool, end: str | None) -> None:
            """Begin, send, prepare, then a restart or a crash, then perhaps the second phase.

            Begin is refused when a transaction is open (the send then goes
            into it, or is refused when it is prepared), which is fine.
            """
            self.run(Begin(session))
            self.run(Send(session, address, duplicate_id, bridge_id))
            self.run(Prepare(session))
            self.run(Crash() if crash else Restart())
            if end == "commit":
                self.run(Commit(session))
            elif end == "rollback":
                self.run(Rollback(session))

        @issues("restart", "crash")
        @rule(crash=booleans(), size=either(pick(None), sizes))
        def restart(self, crash: bool, size: int | None) -> None:
            """A clean restart (possibly with a new global cache size) or a crash."""
            self.run(Crash() if crash else Restart(size))

    DuplicatesLockstep.__name__ = f"DuplicatesLockstep[{profile.label}{', wide' if wide else ''}]"
    DuplicatesLockstep.__qualname__ = DuplicatesLockstep.__name__
    return DuplicatesLockstep
