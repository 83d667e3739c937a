"""The load-balancing machine's transaction rules: transacted sends, transacted consumers, commits, rollbacks.

Introduction
------------
A mixin of :class:`~.balancing_machine.make_balancing_machine`'s machine. A
transacted send names a producer session (``t1``, ``t2``) or a transacted
consumer, usually on the session's own node and now and then on another
(SESSION_ON_OTHER_NODE); a transacted consumer attaches where messages
wait, pushed to or pulling, acknowledging at once or later, so that it has
something to give back; a commit or a rollback ends a session that has
something to end, now and then a name that is no session (SESSION_NOT_FOUND,
NOT_TRANSACTED); and a run of rollbacks on one consumer spends a message's
deliveries until it is dropped (LB-TX-MAX-DELIVERY); and a transacted consumer now and then acknowledges a
message it never took and commits, which fails (LB-ACK, LB-TX-COMMIT). A run that leaves
``commit`` or ``rollback`` out draws no transacted send or consumer, so a
SUT without transactions still gets every other scenario.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from brokerspec.spec.addressing import RoutingType
from brokerspec.spec.balancing import MAX_DELIVERY_ATTEMPTS, Ack, Attach, Commit, Rollback, Send

from . import draws as d
from .engine import issues, rule

if TYPE_CHECKING:
    from brokerspec.spec.balancing import BalancingState

PRODUCER_SESSIONS = ("t1", "t2")
TX_PICK = d.integers(0, 7)
TX_COLOURS = d.pick(None, None, "red", "blue")


class TransactionRules:
    """Rules that draw transactions; the machine provides ``run``, ``node``, ``lockstep``, ``excluded`` and the
    consumer and queue pickers."""

    excluded: Any
    lockstep: Any
    if TYPE_CHECKING:  # the machine's own, declared for the type checker only
        def run(self, command: object) -> None: ...
        def node(self, pick: int) -> str: ...
        def fresh_consumer(self) -> str | None: ...
        def waiting_queue(self, pick: int) -> tuple[str, str]: ...

    def transacting(self) -> bool:
        """Whether this run draws transactions: it must be able to end them."""
        return "commit" not in self.excluded and "rollback" not in self.excluded

    def sessions(self) -> list[str]:
        state: BalancingState = self.lockstep.state
        return sorted(state.sessions)

    @issues("send")
    @rule(pick=TX_PICK, count=d.integers(1, 3), color=TX_COLOURS, elsewhere=d.pick(False, False, False, True),
          routing_type=d.pick(None, None, RoutingType.MULTICAST))
    def send_in_transaction(self, pick: int, count: int, color: str | None, elsewhere: bool,
                            routing_type: RoutingType | None) -> None:
        """A few sends in one session (LB-TX-SEND), to a queue's address, from the session's node (or, now and
        then, from another, which is refused)."""
        if not self.transacting():
            return
        state: BalancingState = self.lockstep.state
        names = [*PRODUCER_SESSIONS, *sorted(n for n, c in state.consumers.items() if c.transacted)]
        session = names[pick % len(names)]
        known = state.sessions.get(session)
        node = self.node(pick + 1) if known is None or elsewhere else known.node
        queues = sorted(state.queues.values(), key=lambda q: q.serial)
        address = queues[pick % len(queues)].address if queues else "a1"
        for _ in range(count):
            self.run(Send(node, address, routing_type, color, tx=session))

    @issues("attach")
    @rule(pick=TX_PICK, pull=d.pick(False, False, True), manual_ack=d.pick(False, True))
    def attach_transacted(self, pick: int, pull: bool, manual_ack: bool) -> None:
        """A transacted consumer where messages wait (LB-TX-ACK), pushed to or pulling, acknowledging at once
        or later (each only while the run draws the operation it needs)."""
        fresh = self.fresh_consumer()
        if not self.transacting() or fresh is None:
            return
        node, name = self.waiting_queue(pick)
        self.run(Attach(fresh, node, name, pull=pull and "receive" not in self.excluded,
                        manual_ack=manual_ack and "ack" not in self.excluded, transacted=True))

    @issues("commit", "rollback")
    @rule(pick=TX_PICK, commit=d.booleans(), stray=d.pick(False, False, False, False, True))
    def end_transaction(self, pick: int, commit: bool, stray: bool) -> None:
        """Commit or roll back a session with something in it (any session when none has), or now and then a
        consumer or name that is no session (NOT_TRANSACTED, SESSION_NOT_FOUND)."""
        state: BalancingState = self.lockstep.state
        busy = sorted(n for n, s in state.sessions.items()
                      if s.sends or (n in state.consumers and (state.consumers[n].acked or state.consumers[n].held)))
        names = sorted(state.consumers) + ["t9"] if stray else busy or self.sessions()
        if not names:
            return
        name = names[pick % len(names)]
        if commit and "commit" not in self.excluded:
            self.run(Commit(name))
        elif not commit and "rollback" not in self.excluded:
            self.run(Rollback(name))

    @issues("ack", "commit")
    @rule(pick=TX_PICK)
    def fail_then_commit(self, pick: int) -> None:
        """A transacted consumer acknowledges a message it never took, which makes its transaction
        rollback-only (LB-ACK), then commits, which fails and gives back what it acknowledged (LB-TX-COMMIT)."""
        state: BalancingState = self.lockstep.state
        names = sorted(n for n, c in state.consumers.items() if c.transacted)
        if not names or "ack" in self.excluded or "commit" in self.excluded:
            return
        name = names[pick % len(names)]
        self.run(Ack(name, state.next_message + 100))
        self.run(Commit(name))

    @issues("rollback")
    @rule(pick=TX_PICK, count=d.integers(2, MAX_DELIVERY_ATTEMPTS))
    def rollback_again(self, pick: int, count: int) -> None:
        """Roll one transacted consumer back several times, so that what it acknowledges again each time runs
        out of deliveries (LB-TX-MAX-DELIVERY)."""
        state: BalancingState = self.lockstep.state
        names = sorted(n for n, c in state.consumers.items() if c.transacted and c.acked)
        if not names or "rollback" in self.excluded:
            return
        for _ in range(count):
            self.run(Rollback(names[pick % len(names)]))
