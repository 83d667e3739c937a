"""Transacted sessions: a transaction whose operations run when it commits or rolls back.

Introduction
------------
A :class:`ServerSession` is ``ServerSessionImpl`` with a transacted session's
one :class:`TransactionImpl`. It is a *producer session* that the first
transacted send naming it opened on that send's node, or a *transacted
consumer's* own session, named like the consumer (sessions and consumers
share one set of names, LB-TX-SEND). As in Artemis, a transaction is a list
of operations (``TransactionOperation``) that the commit runs
``afterCommit`` and the rollback ``afterRollback``, in the order they joined:

* an :class:`AddOperation` (``PostOfficeImpl.AddOperation``) for each
  transacted send: the references routing made for the message when it was
  sent, the bindings chosen and the round-robin positions moved then
  (``PostOfficeImpl.processRoute`` puts them in the transaction instead of
  the queues). A reference is bound to its queue: a :class:`QueueReference`
  to the local queue object, a :class:`ForwardedReference` to the remote
  queue's ID, which ``RemoteQueueBindingImpl.route`` writes into the message
  (``_AMQ_ROUTE_TO``) for the bridge. After the commit each is added to its
  queue, in routing order (``QueueImpl.addTail``); the forwarded ones cross
  the bridge (:mod:`.bridges`) and reach the remote queue through its
  ``route``, so a remote queue that now drops messages drops it. A queue deleted since took its references with
  it, and a queue made again under the name has another ID and gets none
  (LB-TX-COMMIT). After a rollback nothing is added, and no round-robin
  position is given back (``TransactionalSendTest.testSendWithRollback``).
* one :class:`RefsOperation` (``RefsOperation``, one per transaction,
  ``QueueImpl.getRefsOperation``) with the references the session's
  consumer acknowledged (``QueueImpl.acknowledge(tx, ref)``, LB-TX-ACK).
  They leave the consumer but still count in their queue
  (``getDeliveringCount``). The commit makes them final; the rollback hands
  them back (``RefsOperation.afterRollback``).

:meth:`ServerSession.rollback` is ``ServerSessionImpl.doRollback``: the
consumer first cancels what it holds unacknowledged (``cancelRefs``, its
delivery count given back) into the transaction, after what it acknowledged
(``QueueImpl.cancel(tx, ref)``); then the rollback checks every reference in
that order (``QueueImpl.checkRedelivery``): one whose delivery count has
reached ``max-delivery-attempts`` is dropped, there being no dead-letter
address (LB-TX-MAX-DELIVERY); the rest go back to their queue together
(``QueueImpl.postRollback``), see :meth:`.queues.QueueImpl.post_rollback`.
The session's transaction is replaced by a new one before the old one ends
(``ServerSessionImpl.commit`` and ``rollback`` start ``newTransaction``),
so what its consumer takes while the old one commits or rolls back belongs
to the new one. Closing a transacted consumer closes its session after it
(``ClientSessionImpl.closeChildren``), which rolls back (``doClose``).

An acknowledgement of a message the consumer does not hold acknowledges
everything it holds into the transaction and then marks it rollback-only
(``ServerConsumerImpl.acknowledge``: ``tx.markAsRollbackOnly``, LB-ACK); a
consumer outside a transaction does the same in a transaction of its own,
which it rolls back at once (:meth:`.consumers.ServerConsumer.acknowledge`).
The commit of a rollback-only transaction rolls back instead and fails
(``TransactionImpl.commit``, ROLLBACK_ONLY; LB-TX-COMMIT).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from brokerspec.spec.balancing import PendingSend, Refusal, Refused, Session

from .messages import CoreMessage

if TYPE_CHECKING:
    from .bridges import Bridge
    from .consumers import ServerConsumer
    from .queues import QueueImpl


class TransactionOperation(Protocol):
    """``TransactionOperation``: what a transaction does to its parts when it ends."""

    def after_commit(self) -> None: ...

    def after_rollback(self) -> None: ...


class QueueReference:
    """A reference to ``message`` for a local queue, bound to the queue object."""

    def __init__(self, message: CoreMessage, queue: QueueImpl) -> None:
        self.message = message
        self.queue = queue

    def add_tail(self) -> None:
        """``ref.getQueue().addTail(ref)``; a destroyed queue took its references with it."""
        if not self.queue.queue_destroyed:
            self.queue.add_tail(self.message)

    def get_queue_key(self) -> tuple[str, str] | None:
        """(node, queue) while the queue lives."""
        return None if self.queue.queue_destroyed else (self.queue.node, self.queue.name)


class ForwardedReference:
    """A reference in the store-and-forward queue of ``bridge``, for the peer's queue ``queue_name`` whose ID is
    ``queue_id`` (``RemoteQueueBindingImpl.route``, ``_AMQ_ROUTE_TO``)."""

    def __init__(self, bridge: Bridge, queue_name: str, queue_id: int) -> None:
        self.bridge = bridge
        self.queue_name = queue_name
        self.queue_id = queue_id

    def get_queue_key(self) -> tuple[str, str] | None:
        """(node, queue) while the queue of that ID lives."""
        queue = self.bridge.cluster.nodes[self.bridge.peer].post_office.get_local_queue(self.queue_name)
        return None if queue is None or queue.id != self.queue_id else (self.bridge.peer, self.queue_name)


class AddOperation:
    """``PostOfficeImpl.AddOperation``: the references one transacted send routed, added after the commit."""

    def __init__(self, message: CoreMessage, refs: list[QueueReference | ForwardedReference]) -> None:
        self.message = message
        self.refs = refs

    def after_commit(self) -> None:
        """Each reference whose queue lives to it, in routing order (LB-TX-COMMIT); what is for another node
        crosses its bridge once, for all of that node's queues (LB-BRIDGE-DUP)."""
        live = [ref for ref in self.refs if ref.get_queue_key() is not None]
        for index, ref in enumerate(live):
            if isinstance(ref, QueueReference):
                ref.add_tail()
                continue
            previous = live[index - 1] if index else None
            if not isinstance(previous, ForwardedReference) or previous.bridge is not ref.bridge:
                ref.bridge.forward(self.message, [(r.queue_name, r.queue_id) for r in live
                                                  if isinstance(r, ForwardedReference) and r.bridge is ref.bridge])

    def after_rollback(self) -> None:
        """Nothing reaches a queue (LB-TX-SEND)."""

    def to_spec(self) -> PendingSend | None:
        """The send as the spec writes it, or None when every queue it was routed to is gone."""
        keys = tuple(key for key in (ref.get_queue_key() for ref in self.refs) if key is not None)
        return PendingSend(self.message.to_spec(), keys) if keys else None


class RefsOperation:
    """``RefsOperation``: the references a transaction acknowledged, or cancelled back, with their queues."""

    def __init__(self) -> None:
        self.refs_to_ack: list[tuple[QueueImpl, CoreMessage]] = []

    def add_ack(self, queue: QueueImpl, ref: CoreMessage) -> None:
        """``RefsOperation.addAck``: one more reference ends with the transaction."""
        self.refs_to_ack.append((queue, ref))

    def get_acked(self, queue: QueueImpl) -> list[CoreMessage]:
        """The references of ``queue`` among them, in the order they joined."""
        return [ref for owner, ref in self.refs_to_ack if owner is queue]

    def after_commit(self) -> None:
        """The acknowledgements are final (``postAcknowledge``): the references are gone for good."""
        self.refs_to_ack = []

    def after_rollback(self) -> None:
        """``RefsOperation.afterRollback``: ``checkRedelivery`` for each, then each queue takes the rest back.

        Artemis collects them per queue with ``addFirst`` and 2.11's ``addHead`` puts them back one at a time,
        which restores their order; here the list keeps it (LB-TX-ROLLBACK, LB-TX-MAX-DELIVERY).
        """
        queue_map: dict[QueueImpl, list[CoreMessage]] = {}
        for queue, ref in self.refs_to_ack:
            if queue.check_redelivery(ref):
                queue_map.setdefault(queue, []).append(ref)
        self.refs_to_ack = []
        for queue, refs in queue_map.items():
            queue.post_rollback(refs)


class TransactionImpl:
    """``TransactionImpl``: the operations, run in the order they joined when it commits or rolls back."""

    def __init__(self) -> None:
        self.operations: list[TransactionOperation] = []
        self.refs_operation: RefsOperation | None = None
        self.rollback_only = False
        """``state == ROLLBACK_ONLY``: a failed acknowledgement marked it (``markAsRollbackOnly``; LB-ACK)."""

    def mark_as_rollback_only(self) -> None:
        """``TransactionImpl.markAsRollbackOnly``: its commit will roll it back instead (LB-TX-COMMIT)."""
        self.rollback_only = True

    def add_operation(self, operation: TransactionOperation) -> None:
        """``Transaction.addOperation``."""
        self.operations.append(operation)

    def get_refs_operation(self) -> RefsOperation:
        """``QueueImpl.getRefsOperation``: the transaction's one ``RefsOperation``, made when first needed."""
        if self.refs_operation is None:
            self.refs_operation = RefsOperation()
            self.add_operation(self.refs_operation)
        return self.refs_operation

    def get_acked(self, queue: QueueImpl) -> list[CoreMessage]:
        """What the transaction holds acknowledged for ``queue``."""
        return [] if self.refs_operation is None else self.refs_operation.get_acked(queue)

    def commit(self) -> None:
        """``TransactionImpl.commit``: every operation's ``afterCommit``."""
        for operation in self.operations:
            operation.after_commit()

    def rollback(self) -> None:
        """``TransactionImpl.rollback``: every operation's ``afterRollback``."""
        for operation in self.operations:
            operation.after_rollback()


class ServerSession:
    """``ServerSessionImpl`` of a transacted session on ``node``: its transaction and its consumer, if any."""

    def __init__(self, name: str, node: str) -> None:
        self.name = name
        self.node = node
        self.consumer: ServerConsumer | None = None
        self.tx = TransactionImpl()

    def get_acked(self, queue: QueueImpl) -> list[CoreMessage]:
        """What its consumer acknowledged of ``queue`` in the open transaction."""
        return self.tx.get_acked(queue)

    def commit(self) -> bool:
        """``ServerSessionImpl.commit``: a new transaction, then the old one commits (LB-TX-COMMIT); False when
        it was rollback-only and rolled back instead.

        ``TransactionImpl.commit`` of a ``ROLLBACK_ONLY`` transaction runs ``internalRollback`` and throws
        (ActiveMQTransactionRolledBackException): the transaction's own operations are undone, while what its
        consumer holds stays delivering (no ``cancelRefs``, unlike :meth:`rollback`).
        """
        if self.tx.rollback_only:
            tx, self.tx = self.tx, TransactionImpl()
            tx.rollback()
            return False
        tx, self.tx = self.tx, TransactionImpl()
        tx.commit()
        return True

    def rollback(self) -> None:
        """``ServerSessionImpl.rollback`` / ``doRollback``: the consumer's held references join the transaction
        after its acknowledged ones, then it rolls back (LB-TX-ROLLBACK)."""
        tx, self.tx = self.tx, TransactionImpl()
        if self.consumer is not None:
            for ref in self.consumer.cancel_refs():
                tx.get_refs_operation().add_ack(self.consumer.queue, ref)  # QueueImpl.cancel(tx, ref)
        tx.rollback()

    def to_spec(self) -> Session:
        """The session as the spec writes it: its node, the sends its transaction holds, whether it is
        rollback-only."""
        sends = (op.to_spec() for op in self.tx.operations if isinstance(op, AddOperation))
        return Session(self.node, tuple(send for send in sends if send is not None), self.tx.rollback_only)


def find_session(sessions: Mapping[str, ServerSession], consumers: Mapping[str, ServerConsumer],
                 name: str) -> ServerSession | Refused:
    """The session a commit or a rollback names (LB-TX-COMMIT): NOT_TRANSACTED for a consumer without one,
    SESSION_NOT_FOUND for a name nothing opened."""
    session = sessions.get(name)
    if session is not None:
        return session
    return Refused(Refusal.NOT_TRANSACTED if name in consumers else Refusal.SESSION_NOT_FOUND)


def check_send_session(sessions: Mapping[str, ServerSession], consumers: Mapping[str, ServerConsumer],
                       name: str, node: str) -> Refused | None:
    """Whether a transacted send on ``node`` may join session ``name`` (LB-TX-SEND): not a consumer's that is not
    transacted (NOT_TRANSACTED), nor one on another node (SESSION_ON_OTHER_NODE)."""
    if name in consumers and name not in sessions:
        return Refused(Refusal.NOT_TRANSACTED)
    session = sessions.get(name)
    if session is not None and session.node != node:
        return Refused(Refusal.SESSION_ON_OTHER_NODE)
    return None
