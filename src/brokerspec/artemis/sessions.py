"""The load-balancing domain's transacted sessions on a real Artemis cluster: sends, commits, rollbacks.

Introduction
------------
A spec session (LB-TX-SEND, LB-TX-ACK) is a core session made with
``autoCommitSends`` and ``autoCommitAcks`` off: a producer session on the
send's node, opened by the first send that names it, or a transacted
consumer's own session. Which names are sessions, and on which node, is the
adapter's bookkeeping, like consumer names (NOT_TRANSACTED,
SESSION_NOT_FOUND, SESSION_EXISTS, SESSION_ON_OTHER_NODE).

A transacted send is routed at the send (``PostOfficeImpl.processRoute``
adds the references to the transaction, and the probe's route record names
the queues and store-and-forward queues chosen then), and lands at the
commit (``AddOperation.afterCommit``): the adapter keeps each send's route
record and tells the commit's landings from it, the remote ones from the
route records the commit's crossings make on their nodes, send by send. A
reference holds the queue object, so a local queue deleted since the send
(even if made again under its name) gets nothing.

A transacted consumer's acknowledgements join the transaction
(``RefsOperation``); the queue counts them as delivering until the commit
(``QueueImpl.getDeliveringCount``), so :attr:`SessionSteps.acked` counts for
the cluster's settling as held messages do. A rollback
(``ServerSessionImpl.rollback``: the consumer's held references are cancelled
into the transaction after the acknowledged ones) gives them back through
``RefsOperation.afterRollback``: each acknowledged one has spent a delivery and
is dropped at :data:`MAX_DELIVERY_ATTEMPTS` (``QueueImpl.checkRedelivery``),
the rest go back in ``close_return_order`` (``QueueImpl.postRollback``) and
are offered again (LB-TX-ROLLBACK, LB-TX-MAX-DELIVERY). A failed
acknowledgement marks the transaction rollback-only
(``ServerConsumerImpl.acknowledge``, ``tx.markAsRollbackOnly``), and its commit
rolls back the transaction alone and throws (``TransactionImpl.commit``:
``internalRollback``; ``ServerSessionImpl.commit`` cancels no held reference).

``Resend`` is a bridge losing a confirmation, which no client can cause: not
expressible.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from brokerspec.spec import Outcome
from brokerspec.spec.balancing import Commit, Done, Failed, Refusal, Refused, Resend, Rollback

from .cluster import Snapshot
from .consumers import ConsumerSteps
from .driver import CallFailed
from .outcomes import NotExpressible, UnexpectedRefusal
from .placement import Instance, Primary, QueueKey, landings_of, routed_queues
from .returns import Start, give_back, told

RESEND = ("a resend is a cluster bridge sending again, after it reconnects, a message whose confirmation it lost "
          "(BridgeImpl resends unconfirmed references): a fault of the bridge's own connection at the wrong moment, "
          "which no client or management call can cause on a running cluster")
"""Why ``resend`` is not expressible."""

BOTH_OFFERED = ("the close of a transacted consumer that holds messages and has acknowledged others, while its queue "
                "keeps other consumers: the spec offers the queue's messages twice in one step (after the close's "
                "return, then after the session's rollback), and the adapter sees only where each message ended up")
"""Why such a close is not expressible."""


@dataclass
class PendingSend:
    """A transacted send waiting for its commit: its spec ID and tag, the queues its route record names (broker names,
    store-and-forward ones included), and the creation serial each local queue of the case had at the send."""

    id: int
    tag: str
    queues: tuple[str, ...]
    serials: dict[QueueKey, int]


@dataclass
class TxSession:
    """A spec session: the broker session ``real`` on ``node``, a transacted consumer's or a producer's."""

    real: str
    node: str
    consumer: bool = False
    sends: list[PendingSend] = field(default_factory=list)
    rollback_only: bool = False


def send_refusal(name: str, node: str, sessions: Mapping[str, TxSession],
                 transacted: Mapping[str, bool]) -> Refusal | None:
    """Why a send on ``node`` in session ``name`` is refused (``transacted``: consumer name -> transacted), or None."""
    if name in transacted and not transacted[name]:
        return Refusal.NOT_TRANSACTED
    session = sessions.get(name)
    if session is not None and session.node != node:
        return Refusal.SESSION_ON_OTHER_NODE
    return None


def end_refusal(name: str, sessions: Mapping[str, TxSession], consumers: Mapping[str, object]) -> Refusal | None:
    """Why a commit or rollback of ``name`` is refused, or None."""
    if name in sessions:
        return None
    return Refusal.NOT_TRANSACTED if name in consumers else Refusal.SESSION_NOT_FOUND


def commit_landings(node: str, sends: Sequence[PendingSend], records: Mapping[str, Sequence[Mapping[str, Any]]],
                    peers: Mapping[str, str], prefix: str, serials: Mapping[QueueKey, int]) -> tuple[Instance, ...]:
    """Where a commit's ``sends`` (made on ``node``) landed, send by send: each local queue the send's route record
    names that is still the queue it was (``serials``: each queue of the case's creation serial now), and on other
    nodes the queues the commit's crossings reached (their route records, ``records``)."""
    found: list[Instance] = []
    for pending in sends:
        for key in landings_of(node, pending.tag, pending.queues, records, peers, prefix):
            if key[0] != node or (key in pending.serials and serials.get(key) == pending.serials[key]):
                found.append(Instance(pending.id, pending.tag, key))
    return tuple(found)


class SessionSteps(ConsumerSteps):
    """The session operations of :class:`~.balancing.BalancingAdapter`, and its consumer operations
    (:class:`~.consumers.ConsumerSteps`), which the adapter supplies with the cluster, the case's bookkeeping
    and the settling."""

    tx: dict[str, TxSession]
    """The spec's sessions by name."""

    if TYPE_CHECKING:  # the adapter's own, declared for the type checker only
        def settled_step(self) -> tuple[Snapshot, list[dict[str, Any]], dict[str, list[dict[str, Any]]]]: ...
        def account(self, snapshot: Snapshot, deliveries: list[dict[str, Any]], primary: Primary,
                    landings: tuple[Instance, ...], records: dict[str, list[dict[str, Any]]]) -> tuple[Any, ...]: ...
        def queue_serials(self) -> dict[QueueKey, int]: ...
        def peers(self) -> dict[str, str]: ...

    def is_session(self, name: str) -> bool:
        return name in self.tx

    def consumer_session(self, name: str, node: str, real: str) -> None:
        """A transacted consumer's session, named like it."""
        self.tx[name] = TxSession(real, node, consumer=True)

    def mark_rollback_only(self, name: str) -> None:
        self.tx[name].rollback_only = True

    def tx_refusal(self, name: str, node: str) -> Refusal | None:
        """Why a send on ``node`` in session ``name`` is refused, or None."""
        return send_refusal(name, node, self.tx, {n: c.transacted for n, c in self.consumers.items()})

    def tx_session(self, name: str, node: str) -> str:
        """The broker session of session ``name`` on ``node``, a producer session opened (transacted) if it is new or
        a restart closed it."""
        session = self.tx.get(name)
        if session is None or not session.real:
            session = TxSession(f"{self.real(name)}-tx-{len(self.sessions)}", node)
            self.cluster.nodes[node].call("session", id=session.real, transacted=True)
            self.sessions.add(session.real)
            self.tx[name] = session
        return session.real

    def hold_send(self, name: str, message: int, tag: str, node: str,
                  records: Mapping[str, Sequence[Mapping[str, Any]]]) -> None:
        """Session ``name`` keeps the send of ``tag`` until it ends, with the queues its route record names."""
        serials = {key: serial for key, serial in self.queue_serials().items() if key[0] == node}
        self.tx[name].sends.append(PendingSend(message, tag, routed_queues(node, tag, records), serials))

    def commit(self, command: Commit) -> Outcome:
        refusal = end_refusal(command.session, self.tx, self.consumers)
        if refusal is not None:
            return Refused(refusal)
        session = self.tx[command.session]
        try:
            self.cluster.driver.call("commit", session=session.real)
        except CallFailed as failure:
            if not session.rollback_only:
                raise UnexpectedRefusal(str(failure)) from None
            return Failed(Refusal.ROLLBACK_ONLY, self.rolled_back(command.session, session, cancelled=False))
        if session.rollback_only:
            raise UnexpectedRefusal(f"the broker committed {command.session}'s transaction, which a failed "
                                    "acknowledgement marked rollback-only")
        sends, session.sends = session.sends, []
        self.acked.pop(command.session, None)
        snapshot, deliveries, records = self.settled_step()
        landings = commit_landings(session.node, sends, records, self.peers(), self.prefix, self.queue_serials())
        return Done(self.account(snapshot, deliveries, Primary("send"), landings, records))

    def rollback(self, command: Rollback) -> Outcome:
        refusal = end_refusal(command.session, self.tx, self.consumers)
        if refusal is not None:
            return Refused(refusal)
        session = self.tx[command.session]
        self.cluster.driver.call("rollback", session=session.real)
        return Done(self.rolled_back(command.session, session, cancelled=True))

    def rolled_back(self, name: str, session: TxSession, cancelled: bool) -> tuple[Any, ...]:
        """Session ``name``'s transaction rolled back: its sends are gone, and its consumer's acknowledged messages
        come back, then, when ``ServerSessionImpl.rollback`` ``cancelled`` them into the transaction, its held ones
        (a rollback-only transaction's commit, ``TransactionImpl.commit``, rolls back the transaction alone); the
        step's events. The consumer is still attached, so its queue does not purge."""
        session.sends, session.rollback_only = [], False
        acked = self.acked.pop(name, ())
        held = self.held.pop(name, ()) if cancelled else ()
        if not (acked or held):
            return self.step_events()
        key = (*acked, *held)[0].key
        first, self.waiting[key], primary = give_back(key, acked, held, self.waiting.get(key, ()),
                                                      self.options.close_return_order, False, self.spent)
        return (*first, *self.step_events(primary))

    def resend(self, command: Resend) -> Outcome:
        if command.node not in self.nodes or command.peer not in self.nodes:
            return Refused(Refusal.UNKNOWN_NODE)
        if command.node == command.peer:
            return Refused(Refusal.BAD_VALUE)
        raise NotExpressible(RESEND)

    def close_rollback(self, name: str, start: Start, purge: bool, others: bool) -> Start:
        """A transacted consumer's close, after the consumer's own part (``start``): its session closes and rolls
        back (``ClientSessionImpl.closeChildren``, ``ServerSessionImpl.doClose``), giving back what it acknowledged
        (``others``: its queue keeps other consumers; ``purge``: it purges, having none)."""
        self.tx.pop(name, None)
        acked = self.acked.pop(name, ())
        first, waiting, primary = start
        if not acked:
            return start
        if others and primary.kind == "offer":
            raise NotExpressible(BOTH_OFFERED)
        told_events, waiting = ((), waiting) if others else told(waiting, primary)
        more, waiting, primary = give_back(acked[0].key, acked, (), waiting, self.options.close_return_order, purge,
                                           self.spent)
        return (*first, *told_events, *more), waiting, primary
