"""What happens on one queue: a message lands, consumers take what waits, a redistributor is added.

Introduction
------------
A message that reaches a queue goes to one started consumer that can take
it, in round robin over the queue's consumers (LB-CONSUMERS), or waits
there. A waiting message is offered again when something changes what the
consumers can take (a consumer attaches or resumes). When the queue's
consumers are gone, or all of them refused a message by their filters, the
redistribution triggers give it a redistributor (RD-DELAY); the
redistributor's deliveries are :func:`.operations.deliver`.
"""

from __future__ import annotations

from ..frozen import replace
from .choice import allowed_consumers, choose_consumer
from .model import Message, QueueKey, can_take, get_settings, refused_by_every_filter
from .outcomes import Delivered, Dropped
from .step import Step


def land(step: Step, key: QueueKey, message: Message, routed: bool = True) -> bool:
    """``message`` reaches queue ``key``: a started matching consumer takes it, or it waits (LB-CONSUMERS).

    A message that routing brings (``routed``) to a queue that :attr:`~.model.QueueState.drops` vanishes
    instead (``QueueImpl.route`` adds it to no context; LB-QUEUE-ENABLED, LB-PURGE-ON-NO-CONSUMERS): False
    then, and no event, as no client can see which queue dropped it (the group's position has moved past
    that queue, which later sends show). A waiting message offered again is already in the queue.
    """
    queue = step.state.queues[key]
    if routed and queue.drops:
        return False
    step.prompted.add(key)  # QueueImpl.addTail prompts delivery
    matching = tuple(can_take(step.state.consumers[c], message) for c in queue.consumers)
    position = step.state.consumer_positions.get(key, 0)
    strict, _ = choose_consumer(matching, position)
    if strict is None:
        flag = queue.redistributor is None and refused_by_every_filter(step.state, queue, message)
        step.put_queue(replace(queue, pending=(*queue.pending, message), unmatched=queue.unmatched or flag))
        step.events.append(Delivered(message.id, queue.node, queue.name, None))
        return True
    index = step.choose("consumer", key, queue.consumers, allowed_consumers(matching), strict)
    step.update(consumer_positions=step.state.consumer_positions.set(key, (index + 1) % len(matching)))
    hand_over(step, queue.consumers[index], message)
    step.events.append(Delivered(message.id, queue.node, queue.name, queue.consumers[index]))
    return True


def hand_over(step: Step, name: str, message: Message) -> None:
    """Consumer ``name`` takes ``message``: acknowledged at once, or held until its client acknowledges (LB-ACK);
    a transacted consumer's acknowledgement waits in its transaction (LB-TX-ACK)."""
    consumer = step.state.consumers[name]
    if consumer.manual_ack:
        held = replace(consumer, held=(*consumer.held, message))
        step.update(consumers=step.state.consumers.set(name, held))
    elif consumer.transacted:
        step.update(consumers=step.state.consumers.set(name, replace(consumer, acked=(*consumer.acked, message))))


def add_redistributor(step: Step, key: QueueKey) -> None:
    """``QueueImpl.addRedistributor`` with the delay of the queue's address (RD-DELAY).

    Nothing when the delay is -1 or the queue already has one; otherwise
    only when the queue has no consumers or (from 2.19.0, ARTEMIS-2007)
    has flagged a message all of them refused (``QueueState.unmatched``,
    which adding the redistributor clears); it becomes active
    ``delay`` ticks from now.
    """
    queue = step.state.queues.get(key)
    if queue is None:
        return
    delay = get_settings(step.state, queue.address, queue.node).redistribution_delay
    if delay == -1:
        return
    step.prompted.add(key)  # a redistributor in place is prompted to try again ("just prompt delivery")
    if queue.redistributor is not None:
        return
    if queue.consumers and not (step.state.options.redistribute_unmatched and queue.unmatched):
        return
    # QueueImpl.addRedistributor schedules only a positive delay; any other (-2 too: redistribution-delay is a
    # plain long, never checked) adds the redistributor at once (found against Artemis 2.40.0 and 2.11.0)
    step.put_queue(replace(queue, redistributor=step.state.clock + max(delay, 0), unmatched=False))


def purge(step: Step, key: QueueKey) -> None:
    """The last consumer of a purge-on-no-consumers queue closed: what waits in it is dropped, before the
    close can give the queue a redistributor (``QueueManagerImpl.doIt``, run when the consumer count reaches
    0 in ``QueueImpl.removeConsumer``; rule LB-PURGE-ON-NO-CONSUMERS)."""
    queue = step.state.queues[key]
    step.events.extend(Dropped(m.id, queue.node, queue.name) for m in queue.pending)
    step.put_queue(replace(queue, pending=()))


def reland_waiting(step: Step, key: QueueKey) -> None:
    """Offer queue ``key``'s waiting messages, in order, to its started consumers again."""
    queue = step.state.queues[key]
    step.put_queue(replace(queue, pending=()))
    for message in queue.pending:
        land(step, key, message, routed=False)
