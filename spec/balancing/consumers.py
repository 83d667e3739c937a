"""The consumer operations: attach, close, pause, resume, receive, acknowledge.

Introduction
------------
Consumers take what lands on their queue (:mod:`.queues`). Attaching one
cancels its queue's redistributor, offers it what waits, and tells every
other node, whose queue of the same routing name (or of the FQQN's queue
name) then gets a redistributor (RD-TRIGGER-REMOTE-CONSUMER). Closing a
queue's last consumer purges a purge-on-no-consumers queue and gives the
queue a redistributor (RD-TRIGGER-CLOSE). Pausing stops a consumer's
session: it takes nothing, yet still counts as a consumer.

A consumer of window 0 pulls: nothing is pushed to it, and each receive
takes one message (LB-PULL); it counts as a consumer all the same, so it
attracts messages to its node and keeps its queue from redistributing. A
consumer whose client acknowledges later holds what it takes (LB-ACK); on
its close the messages it still holds go back to the queue, are offered to
the queue's other consumers, and redistribute once none is left
(LB-CLOSE-RETURNS; ``MessageRedistributionTest.testRedistributionWhenConsumerIsClosed``).
"""

from __future__ import annotations

from ..frozen import replace
from ..profiles import ReturnOrder
from .commands import Ack, Attach, Close, Pause, Receive, Resume
from .model import Consumer, Message, Session, matches
from .outcomes import BalancingOutcome, Delivered, Done, Failed, Refusal, Refused, Returned
from .queues import add_redistributor, hand_over, purge, reland_waiting
from .step import Step
from .transactions import give_back


def process_attach(step: Step, command: Attach) -> BalancingOutcome:
    state = step.state
    if command.node not in state.nodes:
        return Refused(Refusal.UNKNOWN_NODE, rule="LB-NODES")
    key = (command.node, command.queue)
    queue = state.queues.get(key)
    if queue is None:
        return Refused(Refusal.QUEUE_NOT_FOUND, rule="LB-QUEUE-PER-NODE")
    if command.consumer in state.consumers:
        return Refused(Refusal.CONSUMER_EXISTS, rule="LB-CONSUMERS")
    if command.consumer in state.sessions:
        return Refused(Refusal.SESSION_EXISTS, rule="LB-TX-SEND")
    consumer = Consumer(command.consumer, command.node, command.queue, command.filter, pull=command.pull,
                        manual_ack=command.manual_ack, transacted=command.transacted)
    step.update(consumers=state.consumers.set(consumer.name, consumer))
    if command.transacted:
        step.update(sessions=step.state.sessions.set(consumer.name, Session(command.node)))
    step.put_queue(replace(queue, consumers=(*queue.consumers, consumer.name), redistributor=None,
                                       unmatched=False))
    reland_waiting(step, key)
    # the other nodes look their queue up by the routing name, or by the FQQN's queue part when the consumer
    # came by one (PostOfficeImpl.onNotification, CONSUMER_CREATED at distance > 0; ARTEMIS-3918)
    by_fqqn = command.fqqn_address is not None and step.state.options.fqqn_consumer_redistributes
    name = command.queue if by_fqqn else queue.routing_name
    for node in step.state.nodes:
        if node != command.node:
            add_redistributor(step, (node, name))
    return Done(rule="LB-CONSUMERS")


def process_close(step: Step, command: Close) -> BalancingOutcome:
    """Close a consumer: what it holds goes back to its queue first, then it leaves (LB-CLOSE-RETURNS); a
    transacted consumer's session then closes, which rolls its transaction back (LB-TX-ROLLBACK): the core
    client closes a session's consumers before the session (``ClientSessionImpl.closeChildren``).

    ``ServerConsumerImpl.close`` cancels the held messages (``cancelRefs``) and then removes the consumer
    (2.31.0 on, ARTEMIS-4410), so a purge-on-no-consumers queue drops them with the rest; 2.11 removed it
    first and purged, and then ``QueueImpl.postRollback`` found the queue without consumers and purged the
    returned messages too (``close_return_order`` HEAD; found against Artemis 2.11.0). Returned messages are offered to
    the queue's remaining consumers; with none left, the queue gets a redistributor (RD-TRIGGER-CLOSE).
    A clean close does not count as a delivery attempt (the delivery count is decremented again).
    """
    consumer = step.state.consumers.get(command.consumer)
    if consumer is None:
        return Refused(Refusal.CONSUMER_NOT_FOUND, rule="LB-CONSUMERS")
    key = (consumer.node, consumer.queue)
    queue = step.state.queues[key]
    remaining = tuple(c for c in queue.consumers if c != consumer.name)
    step.put_queue(replace(queue, consumers=remaining))
    step.update(consumers=step.state.consumers.remove(consumer.name))
    removed_first = step.state.options.close_return_order is ReturnOrder.HEAD
    if removed_first:  # 2.11: removeItself, then cancelRefs, whose postRollback purges too
        if not remaining and queue.purge_on_no_consumers:
            purge(step, key)
        if consumer.held:
            give_back(step, consumer, (), consumer.held)
    else:
        if consumer.held:
            return_held(step, consumer)
        if not remaining and queue.purge_on_no_consumers:
            purge(step, key)
    if not remaining:
        add_redistributor(step, (consumer.node, queue.routing_name))
    if consumer.transacted:  # then the session closes, rolling its transaction back (ServerSessionImpl.doClose)
        step.update(sessions=step.state.sessions.remove(consumer.name))
        if consumer.acked:
            spent = give_back(step, consumer, consumer.acked, ())
            return Done(rule="LB-TX-MAX-DELIVERY" if spent else "LB-TX-ROLLBACK")
    return Done(rule="LB-CLOSE-RETURNS" if consumer.held else "LB-CONSUMERS")


def return_held(step: Step, consumer: Consumer) -> None:
    """Put ``consumer``'s held messages back in its queue and offer the queue's waiting messages again.

    HEAD: before every waiting message, in delivery order (2.11, ``QueueImpl.addHead``); ARRIVAL: among them in
    arrival order (``QueueImpl.addSorted``, ARTEMIS-4517), which here is message-ID order.
    """
    key = (consumer.node, consumer.queue)
    queue = step.state.queues[key]
    step.events.extend(Returned(m.id, queue.node, queue.name) for m in consumer.held)
    if step.state.options.close_return_order is ReturnOrder.HEAD:
        waiting = (*consumer.held, *queue.pending)
    else:
        waiting = tuple(sorted((*consumer.held, *queue.pending), key=lambda m: m.id))
    step.put_queue(replace(queue, pending=waiting))
    reland_waiting(step, key)


def process_pause(step: Step, command: Pause) -> BalancingOutcome:
    consumer = step.state.consumers.get(command.consumer)
    if consumer is None:
        return Refused(Refusal.CONSUMER_NOT_FOUND, rule="LB-CONSUMERS")
    step.update(consumers=step.state.consumers.set(consumer.name, replace(consumer, paused=True)))
    return Done(rule="LB-CONSUMERS")


def process_receive(step: Step, command: Receive) -> BalancingOutcome:
    """A pulling consumer takes the first waiting message its filter matches (LB-PULL).

    ``ClientConsumerImpl.receiveImmediate`` on a consumer of window 0 sends one credit, and the queue hands
    the consumer the first message it accepts; a stopped session takes nothing.
    """
    consumer = step.state.consumers.get(command.consumer)
    if consumer is None:
        return Refused(Refusal.CONSUMER_NOT_FOUND, rule="LB-CONSUMERS")
    if not consumer.pull:
        return Refused(Refusal.NOT_PULLING, rule="LB-PULL")
    key = (consumer.node, consumer.queue)
    queue = step.state.queues[key]
    taken = None if consumer.paused else next((m for m in queue.pending if matches(consumer.filter, m)), None)
    if taken is not None:
        step.put_queue(replace(queue, pending=tuple(m for m in queue.pending if m.id != taken.id)))
        hand_over(step, consumer.name, taken)
        step.events.append(Delivered(taken.id, queue.node, queue.name, consumer.name))
    return Done(rule="LB-PULL")


def process_ack(step: Step, command: Ack) -> BalancingOutcome:
    """Acknowledge what a consumer holds, up to and including ``message`` or all of it (LB-ACK); a transacted
    consumer's acknowledgements wait in its transaction (LB-TX-ACK)."""
    consumer = step.state.consumers.get(command.consumer)
    if consumer is None:
        return Refused(Refusal.CONSUMER_NOT_FOUND, rule="LB-CONSUMERS")
    ids = [m.id for m in consumer.held]
    if command.message is None:
        kept: tuple[Message, ...] = ()
    elif command.message in ids:
        kept = consumer.held[ids.index(command.message) + 1:]
    else:
        return failed_ack(step, consumer)
    acked = (*consumer.acked, *consumer.held[:len(consumer.held) - len(kept)]) if consumer.transacted else ()
    step.update(consumers=step.state.consumers.set(consumer.name, replace(consumer, held=kept, acked=acked)))
    return Done(rule="LB-TX-ACK" if consumer.transacted else "LB-ACK")


def failed_ack(step: Step, consumer: Consumer) -> BalancingOutcome:
    """An acknowledgement of a message ``consumer`` does not hold (LB-ACK).

    ``ServerConsumerImpl.acknowledge`` acknowledges the consumer's held messages one by one until it finds
    the message, in a transaction of its own or the session's; running out, it throws
    (ActiveMQIllegalStateException, "consumerNoReference"). Its own transaction it rolls back: every held
    message goes back to the queue, one delivery spent, as a rollback gives it back (``RefsOperation.afterRollback``).
    The session's it marks rollback-only, the held messages acknowledged in it. Refused, and nothing changed,
    only for a consumer outside a transaction that holds nothing.
    """
    if consumer.transacted:
        session = step.state.sessions[consumer.name]
        step.update(sessions=step.state.sessions.set(consumer.name, replace(session, rollback_only=True)),
                    consumers=step.state.consumers.set(consumer.name, replace(
                        consumer, held=(), acked=(*consumer.acked, *consumer.held))))
        return Failed(Refusal.NOT_DELIVERED, rule="LB-ACK")
    if not consumer.held:
        return Refused(Refusal.NOT_DELIVERED, rule="LB-ACK")
    step.update(consumers=step.state.consumers.set(consumer.name, replace(consumer, held=())))
    give_back(step, consumer, consumer.held, ())
    return Failed(Refusal.NOT_DELIVERED, rule="LB-ACK")


def process_resume(step: Step, command: Resume) -> BalancingOutcome:
    consumer = step.state.consumers.get(command.consumer)
    if consumer is None:
        return Refused(Refusal.CONSUMER_NOT_FOUND, rule="LB-CONSUMERS")
    step.update(consumers=step.state.consumers.set(consumer.name, replace(consumer, paused=False)))
    reland_waiting(step, (consumer.node, consumer.queue))
    return Done(rule="LB-CONSUMERS")
