"""Transacted sessions: sends that wait for a commit, acknowledgements that a rollback undoes.

Introduction
------------
A session is transacted when a send names it (a producer session, opened
on the send's node by the first send that names it) or when a consumer
attaches with ``transacted`` (its own session, named like it). Sessions and
consumers share one set of names.

A transacted send is routed at once: the bindings are chosen and the
round-robin positions move as for any send, but the message reaches its
queues only at the commit (``PostOfficeImpl.processRoute`` adds the
references to the transaction, ``AddOperation.afterCommit`` adds them to
the queues), in the order of the sends; a rollback discards it and gives
back no position (LB-TX-SEND, LB-TX-COMMIT). The references belong to the
queues routing chose, so a queue deleted before the commit takes its
messages with it, and a queue made again under the same name gets none.

A transacted consumer's acknowledgements wait in its transaction: what it
acknowledges leaves its hands but not its queue until the commit (LB-TX-ACK;
a queue query still counts it, ``QueueImpl.getDeliveringCount``). A
rollback gives back what the transaction acknowledged and what the consumer
holds unacknowledged, in that order (``RefsOperation.afterRollback``, the
acknowledged references first, then those ``ServerConsumerImpl.cancelRefs``
cancelled): each acknowledged one has used up a delivery, and one whose
count reaches :data:`~.model.MAX_DELIVERY_ATTEMPTS` is dropped
(``QueueImpl.checkRedelivery``; LB-TX-MAX-DELIVERY). The rest go back to
the queue, at its head (2.11, ``QueueImpl.addHead``) or among the waiting
ones by arrival (latest, ``addSorted``), as ``close_return_order`` says, or
are dropped when the queue purges on no consumers and has none left
(``QueueImpl.postRollback``). The consumer stays; its queue offers what
waits to its consumers again (LB-TX-ROLLBACK).
"""

from __future__ import annotations

from ..frozen import replace
from ..profiles import ReturnOrder
from .commands import Commit, Rollback
from .model import MAX_DELIVERY_ATTEMPTS, Consumer, Message, PendingSend, QueueKey, Session
from .outcomes import BalancingOutcome, Done, Dropped, Failed, Refusal, Refused, Returned
from .bridges import land_from
from .queues import reland_waiting
from .step import Step


def open_session(step: Step, name: str, node: str) -> Refused | None:
    """The session ``name`` a transacted send on ``node`` joins, opened by this send if it is new (LB-TX-SEND)."""
    consumer = step.state.consumers.get(name)
    if consumer is not None and not consumer.transacted:
        return Refused(Refusal.NOT_TRANSACTED, rule="LB-TX-SEND")
    session = step.state.sessions.get(name)
    if session is None:
        step.update(sessions=step.state.sessions.set(name, Session(node)))
    elif session.node != node:
        return Refused(Refusal.SESSION_ON_OTHER_NODE, rule="LB-TX-SEND")
    return None


def hold_send(step: Step, name: str, message: Message, queues: tuple[QueueKey, ...]) -> None:
    """Session ``name`` keeps ``message``, routed to ``queues``, until it ends."""
    session = step.state.sessions[name]
    held = replace(session, sends=(*session.sends, PendingSend(message, queues)))
    step.update(sessions=step.state.sessions.set(name, held))


def forget_queue(step: Step, key: QueueKey) -> None:
    """Queue ``key`` is deleted: the transactions' messages for it go with it (the references hold the queue)."""
    changed = {name: replace(s, sends=tuple(replace(p, queues=tuple(k for k in p.queues if k != key))
                                             for p in s.sends if p.queues != (key,)))
               for name, s in step.state.sessions.items() if any(key in p.queues for p in s.sends)}
    sessions = step.state.sessions
    for name, session in changed.items():
        sessions = sessions.set(name, session)
    if changed:
        step.update(sessions=sessions)


def _session_refusal(step: Step, name: str) -> Refused | None:
    if name in step.state.sessions:
        return None
    if name in step.state.consumers:
        return Refused(Refusal.NOT_TRANSACTED, rule="LB-TX-COMMIT")
    return Refused(Refusal.SESSION_NOT_FOUND, rule="LB-TX-COMMIT")


def process_commit(step: Step, command: Commit) -> BalancingOutcome:
    """Commit session ``command.session``: its sends land, in order, and its acknowledgements are final.

    Each send's message reaches the queues it was routed to (a remote queue as it arrives, so one that now
    drops messages drops it; a local one took it at the send); ``AddOperation.afterCommit``, LB-TX-COMMIT.
    A transaction a failed acknowledgement marked rollback-only rolls back instead, and the commit fails:
    ``TransactionImpl.commit`` runs ``internalRollback``, which undoes the transaction's own operations (its
    sends, its acknowledgements) but, unlike ``ServerSessionImpl.rollback``, cancels nothing the consumer holds;
    the core client does not roll back on that exception (``ClientSessionImpl.commit``).
    """
    refusal = _session_refusal(step, command.session)
    if refusal is not None:
        return refusal
    session = step.state.sessions[command.session]
    if session.rollback_only:  # TransactionImpl.commit rolls a rollback-only transaction back and throws
        step.update(sessions=step.state.sessions.set(command.session, Session(session.node)))
        consumer = step.state.consumers.get(command.session)
        if consumer is not None and consumer.acked:  # its own operations only: what the consumer holds stays
            step.update(consumers=step.state.consumers.set(consumer.name, replace(consumer, acked=())))
            give_back(step, consumer, consumer.acked, ())
        return Failed(Refusal.ROLLBACK_ONLY, rule="LB-TX-COMMIT")
    step.update(sessions=step.state.sessions.set(command.session, Session(session.node)))
    consumer = step.state.consumers.get(command.session)
    if consumer is not None and consumer.acked:
        step.update(consumers=step.state.consumers.set(consumer.name, replace(consumer, acked=())))
    for pending in session.sends:
        land_from(step, session.node, pending.message, pending.queues, routed=False)
    return Done(rule="LB-TX-COMMIT")


def process_rollback(step: Step, command: Rollback) -> BalancingOutcome:
    """Roll session ``command.session`` back: its sends are gone, its consumer's messages return (LB-TX-ROLLBACK)."""
    refusal = _session_refusal(step, command.session)
    if refusal is not None:
        return refusal
    session = step.state.sessions[command.session]
    step.update(sessions=step.state.sessions.set(command.session, Session(session.node)))
    consumer = step.state.consumers.get(command.session)
    if consumer is not None and (consumer.acked or consumer.held):
        step.update(consumers=step.state.consumers.set(consumer.name, replace(consumer, acked=(), held=())))
        if give_back(step, consumer, consumer.acked, consumer.held):
            return Done(rule="LB-TX-MAX-DELIVERY")
    return Done(rule="LB-TX-ROLLBACK")


def give_back(step: Step, consumer: Consumer, acked: tuple[Message, ...], held: tuple[Message, ...]) -> bool:
    """Return ``acked`` (each with one more delivery) and then ``held`` to ``consumer``'s queue.

    A message whose count reaches :data:`MAX_DELIVERY_ATTEMPTS` is dropped first
    (``QueueImpl.checkRedelivery``, no dead-letter address); a queue that purges and has no consumer drops
    the rest (``QueueImpl.postRollback``); otherwise they go back as ``close_return_order`` says and the queue
    offers what waits again. True when a message ran out of deliveries.
    """
    key = (consumer.node, consumer.queue)
    queue = step.state.queues[key]
    back: list[Message] = []
    for message in (*(replace(m, deliveries=m.deliveries + 1) for m in acked), *held):
        if message.deliveries >= MAX_DELIVERY_ATTEMPTS:
            step.events.append(Dropped(message.id, queue.node, queue.name))
        else:
            back.append(message)
    spent = len(back) < len(acked) + len(held)
    if not back:
        return spent
    step.events.extend(Returned(m.id, queue.node, queue.name) for m in back)
    if queue.purge_on_no_consumers and not queue.consumers:
        step.events.extend(Dropped(m.id, queue.node, queue.name) for m in back)
        return spent
    if step.state.options.close_return_order is ReturnOrder.HEAD:
        waiting = (*back, *queue.pending)
    else:
        waiting = tuple(sorted((*back, *queue.pending), key=lambda m: m.id))
    step.put_queue(replace(queue, pending=waiting))
    reland_waiting(step, key)
    return spent
