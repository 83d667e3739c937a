"""The fast broker's transacted sessions: sends kept until a commit, acknowledgements a rollback gives back.

Introduction
------------
:class:`TransactedSessions` is a part of
:class:`~.broker.FastBalancingBroker` (a base class, as
:class:`~.choice.BindingChoice` is): it keeps the sessions in a dict of
:class:`SessionRecord`, by name, and runs the commands of the spec's
``transactions`` module on the broker's mutable records, in place.

* A transacted send names its session: a producer session, opened on the
  send's node by the first send that names it, or a transacted consumer's
  (named like it). It is routed at once, the group positions moving as for
  any send (``BindingsImpl.route``; ``PostOfficeImpl.processRoute`` adds the
  references to the transaction instead of the queues), and kept as a
  :class:`HeldSend` with the queues routing chose: a local one that drops
  messages takes nothing, a remote one counts (LB-TX-SEND).
* A commit lands the kept sends in order, each on its queues in key order
  (``AddOperation.afterCommit``: a local queue took it at the send, so it
  lands whatever the queue now does; a remote one gets it over the cluster
  bridge, :mod:`.bridges`, and drops it if it now drops messages), and
  makes its consumer's acknowledgements final
  (``RefsOperation.afterCommit``; LB-TX-COMMIT).
* A queue deleted before the commit takes its messages out of every open
  transaction (the references hold the queue object), so one made again
  under the name gets nothing: :meth:`TransactedSessions._forget_queue`.
* A rollback discards the kept sends (no position goes back) and gives its
  consumer's acknowledged, then held, messages back to the queue
  (``ServerSessionImpl.rollback``, ``RefsOperation.afterRollback``; LB-TX-ROLLBACK).
  Each acknowledged one has used up a delivery, and one whose count reaches
  ``MAX_DELIVERY_ATTEMPTS`` (``AddressSettings.DEFAULT_MAX_DELIVERY_ATTEMPTS``,
  10) is dropped, there being no dead-letter address
  (``QueueImpl.checkRedelivery``; LB-TX-MAX-DELIVERY,
  ``RedeliveryConsumerTest.testDelivery``).
* Closing a transacted consumer closes its session after it
  (``ClientSessionImpl.closeChildren``, ``ServerSessionImpl.doClose``): what
  it acknowledged comes back after what it held.
* An acknowledgement of a message the consumer does not hold
  (:meth:`TransactedSessions._fail_ack`) acknowledges all it holds and then
  fails (``ServerConsumerImpl.acknowledge``, ActiveMQIllegalStateException):
  outside a transaction, in one of its own that it rolls back, so they all
  come back as a rollback's acknowledged messages do; in its session's, which
  it marks rollback-only, so that the commit rolls back instead and fails
  (``TransactionImpl.commit``, ROLLBACK_ONLY; LB-ACK, LB-TX-COMMIT).

Sessions and consumers share one set of names: an attach under a producer
session's name is refused (SESSION_EXISTS), a commit, rollback or transacted
send naming a consumer that is not transacted too (NOT_TRANSACTED).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from brokerspec.spec import FrozenMap
from brokerspec.spec.balancing import (
    MAX_DELIVERY_ATTEMPTS,
    Commit,
    Dropped,
    Event,
    Failed,
    Refusal,
    Refused,
    Returned,
    Rollback,
    RoutingStatus,
    Session,
)

from .consumers import merge_returned
from .records import MESSAGE, PENDING_SEND, SESSION, ConsumerRecord, QueueRecord, Waiting

NOT_TRANSACTED = Refused(Refusal.NOT_TRANSACTED)
SESSION_NOT_FOUND = Refused(Refusal.SESSION_NOT_FOUND)
SESSION_EXISTS = Refused(Refusal.SESSION_EXISTS)
SESSION_ON_OTHER_NODE = Refused(Refusal.SESSION_ON_OTHER_NODE)
NOT_DELIVERED = Refused(Refusal.NOT_DELIVERED)
ACK_FAILED = Failed(Refusal.NOT_DELIVERED)
COMMIT_FAILED = Failed(Refusal.ROLLBACK_ONLY)
"""A handler returns a failure without events; the broker's ``execute`` gives it the step's events."""


class HeldSend(NamedTuple):
    """A transacted send: its message and the queues routing chose for it, in key order (LB-TX-SEND)."""

    message: Waiting
    queues: tuple[QueueRecord, ...]


class SessionRecord:
    """A transacted session on ``node``, the sends its open transaction holds, in send order, and whether a failed
    acknowledgement made that transaction rollback-only."""

    __slots__ = ("node", "sends", "rollback_only")

    def __init__(self, node: str) -> None:
        self.node = node
        self.sends: list[HeldSend] = []
        self.rollback_only = False


class TransactedSessions:
    """The sessions and the operations on them; the broker provides the queues, consumers and landing."""

    _sessions: dict[str, SessionRecord]
    _consumers: dict[str, ConsumerRecord]
    _queues: dict[tuple[str, str], QueueRecord]
    _close_at_head: bool
    _unrouted: RoutingStatus

    _land_from: Callable[[str, Waiting, Sequence[QueueRecord], list[Event], bool], bool]
    _reland_waiting: Callable[[QueueRecord, list[Event]], None]
    """The broker's own (declared here only, so no code of this class stands in for them)."""

    # -- sends -------------------------------------------------------------------------------------

    def _send_refusal(self, name: str, node: str) -> Refused | None:
        """Why a transacted send on ``node`` cannot join session ``name``: a consumer of that name that is not
        transacted, or a session on another node (a session is connected to one node; LB-TX-SEND)."""
        consumer = self._consumers.get(name)
        if consumer is not None and not consumer.transacted:
            return NOT_TRANSACTED
        session = self._sessions.get(name)
        if session is not None and session.node != node:
            return SESSION_ON_OTHER_NODE
        return None

    def _join_session(self, name: str, node: str) -> SessionRecord:
        """Session ``name``, opened on ``node`` by this send when it is new (``_send_refusal`` said yes)."""
        session = self._sessions.get(name)
        if session is None:
            session = self._sessions[name] = SessionRecord(node)
        return session

    def _hold_send(self, session: SessionRecord, landed: list[QueueRecord], message: Waiting) -> RoutingStatus:
        """Keep ``message``, routed to ``landed`` (key order), in ``session`` until it ends (LB-TX-SEND).

        A local queue that drops messages adds no reference now (``QueueImpl.route``); a remote binding counts
        as routed, its node deciding when the message arrives after the commit.
        """
        accepted = tuple(queue for queue in landed if queue.node != session.node or not queue.drops())
        if not accepted:
            return self._unrouted
        session.sends.append(HeldSend(message, accepted))
        return RoutingStatus.OK

    def _forget_queue(self, queue: QueueRecord) -> None:
        """``queue`` is deleted: its references leave every open transaction, and a send routed to it alone
        is gone (the references hold the queue, not its name; LB-TX-COMMIT)."""
        for session in self._sessions.values():
            if any(queue in held.queues for held in session.sends):
                kept = [HeldSend(held.message, tuple(q for q in held.queues if q is not queue))
                        for held in session.sends]
                session.sends = [held for held in kept if held.queues]

    # -- ending a transaction ------------------------------------------------------------------------

    def _session_to_end(self, name: str) -> SessionRecord | Refused:
        """The session a commit or a rollback names, or why there is none: a consumer that is not transacted,
        or nothing of that name (LB-TX-COMMIT; ``ServerSessionImpl.commit`` of a non-transacted session)."""
        session = self._sessions.get(name)
        if session is not None:
            return session
        return NOT_TRANSACTED if name in self._consumers else SESSION_NOT_FOUND

    def _commit(self, command: Commit, events: list[Event]) -> Refused | Failed | None:
        """Commit: the kept sends land in order (``AddOperation.afterCommit``), the consumer's acknowledgements
        are final (``RefsOperation.afterCommit``); LB-TX-COMMIT, ``TransactionalSendTest.testSendWithCommit``.
        A rollback-only transaction rolls back instead and the commit fails (``TransactionImpl.commit``)."""
        session = self._session_to_end(command.session)
        if isinstance(session, Refused):
            return session
        if session.rollback_only:  # TransactionImpl.internalRollback: its own operations, not what is held
            session.sends = []
            session.rollback_only = False
            consumer = self._consumers.get(command.session)
            if consumer is not None:
                acked, consumer.acked = consumer.acked, []
                self._give_back(consumer.queue, acked, [], events)
            return COMMIT_FAILED
        sends, session.sends = session.sends, []
        consumer = self._consumers.get(command.session)
        if consumer is not None:
            consumer.acked = []
        for held in sends:  # a local queue took its reference at the send; a remote one decides as it arrives
            self._land_from(session.node, held.message, held.queues, events, False)
        return None

    def _rollback(self, command: Rollback, events: list[Event]) -> Refused | None:
        """Roll back: the kept sends are gone, the consumer's acknowledged and held messages come back
        (``ServerSessionImpl.rollback``; LB-TX-ROLLBACK, ``JMSOrderTest.testReceiveSomeThenRollback``)."""
        session = self._session_to_end(command.session)
        if isinstance(session, Refused):
            return session
        session.sends = []
        session.rollback_only = False
        consumer = self._consumers.get(command.session)
        if consumer is not None:
            acked, held = consumer.acked, consumer.held
            consumer.acked, consumer.held = [], []
            self._give_back(consumer.queue, acked, held, events)
        return None

    def _fail_ack(self, consumer: ConsumerRecord, events: list[Event]) -> Refused | Failed:
        """``consumer`` acknowledged a message it does not hold (LB-ACK): everything it holds is acknowledged, and
        then its session's transaction is marked rollback-only, or its own transaction rolled back, which gives
        the messages back with a delivery spent (``ServerConsumerImpl.acknowledge``, ``RefsOperation.afterRollback``).
        Refused, nothing changed, only outside a transaction with nothing held."""
        held = consumer.held
        if consumer.transacted:
            consumer.acked += held
            consumer.held = []
            self._sessions[consumer.name].rollback_only = True
            return ACK_FAILED
        if not held:
            return NOT_DELIVERED
        consumer.held = []
        self._give_back(consumer.queue, held, [], events)
        return ACK_FAILED

    def _close_session(self, consumer: ConsumerRecord, events: list[Event]) -> None:
        """A transacted consumer closed (what it held is back already): its session closes and rolls back,
        giving back what it acknowledged (``ServerSessionImpl.doClose``; LB-TX-ROLLBACK)."""
        del self._sessions[consumer.name]
        acked, consumer.acked = consumer.acked, []
        self._give_back(consumer.queue, acked, [], events)

    def _give_back(self, queue: QueueRecord, acked: list[Waiting], held: list[Waiting], events: list[Event]) -> None:
        """Return ``acked`` (each with one more delivery) and then ``held`` to ``queue``.

        One whose count reaches ``MAX_DELIVERY_ATTEMPTS`` is dropped first (``QueueImpl.checkRedelivery``,
        no dead-letter address; LB-TX-MAX-DELIVERY); a purge-on-no-consumers queue without consumers drops the
        rest (``QueueImpl.postRollback``); otherwise they go back at the head (2.11, ``QueueImpl.addHead``) or
        among the waiting by arrival (``addSorted``), and the queue offers what waits again.
        """
        back: list[Waiting] = []
        for message in [*(m._replace(deliveries=m.deliveries + 1) for m in acked), *held]:
            if message.deliveries >= MAX_DELIVERY_ATTEMPTS:  # equivalent mutants (GtE_Eq, GtE_Is): a count starts at 0 and grows by one per rollback, and a message whose count reaches the maximum is dropped, so no count exceeds it
                events.append(Dropped(message.id, queue.node, queue.name))
            else:
                back.append(message)
        if not back:
            return
        events.extend(Returned(message.id, queue.node, queue.name) for message in back)
        if queue.purge_on_no_consumers and not queue.consumers:
            events.extend(Dropped(message.id, queue.node, queue.name) for message in back)
            return
        queue.pending = merge_returned(back, queue.pending, self._close_at_head)
        self._reland_waiting(queue, events)

    # -- observation ---------------------------------------------------------------------------------

    def _session_states(self) -> FrozenMap[str, Session]:
        """The sessions as the spec's (for the broker's snapshot)."""
        return FrozenMap({name: SESSION.new(session.node, tuple([
            PENDING_SEND.new(MESSAGE.new(*held.message), tuple([queue.key for queue in held.queues]))
            for held in session.sends]), session.rollback_only) for name, session in self._sessions.items()})
