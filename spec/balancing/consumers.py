"""The consumer operations: attach, close, pause, resume.

Introduction
------------
Consumers take what lands on their queue (:mod:`.queues`). Attaching one
cancels its queue's redistributor, offers it what waits, and tells every
other node, whose queue of the same routing name (or of the FQQN's queue
name) then gets a redistributor (RD-TRIGGER-REMOTE-CONSUMER). Closing a
queue's last consumer purges a purge-on-no-consumers queue and gives the
queue a redistributor (RD-TRIGGER-LAST-CONSUMER). Pausing stops a consumer's
session: it takes nothing, yet still counts as a consumer.
"""

from __future__ import annotations

from ..frozen import replace
from .commands import Attach, Close, Pause, Resume
from .model import Consumer
from .outcomes import BalancingOutcome, Done, Refusal, Refused
from .queues import add_redistributor, purge, reland_waiting
from .step import Step


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
    consumer = Consumer(command.consumer, command.node, command.queue, command.filter)
    step.update(consumers=state.consumers.set(consumer.name, consumer))
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
    consumer = step.state.consumers.get(command.consumer)
    if consumer is None:
        return Refused(Refusal.CONSUMER_NOT_FOUND, rule="LB-CONSUMERS")
    key = (consumer.node, consumer.queue)
    queue = step.state.queues[key]
    remaining = tuple(c for c in queue.consumers if c != consumer.name)
    step.put_queue(replace(queue, consumers=remaining))
    step.update(consumers=step.state.consumers.remove(consumer.name))
    if not remaining and queue.purge_on_no_consumers:
        purge(step, key)
    if not remaining:
        add_redistributor(step, (consumer.node, queue.routing_name))
    return Done(rule="LB-CONSUMERS")


def process_pause(step: Step, command: Pause) -> BalancingOutcome:
    consumer = step.state.consumers.get(command.consumer)
    if consumer is None:
        return Refused(Refusal.CONSUMER_NOT_FOUND, rule="LB-CONSUMERS")
    step.update(consumers=step.state.consumers.set(consumer.name, replace(consumer, paused=True)))
    return Done(rule="LB-CONSUMERS")


def process_resume(step: Step, command: Resume) -> BalancingOutcome:
    consumer = step.state.consumers.get(command.consumer)
    if consumer is None:
        return Refused(Refusal.CONSUMER_NOT_FOUND, rule="LB-CONSUMERS")
    step.update(consumers=step.state.consumers.set(consumer.name, replace(consumer, paused=False)))
    reland_waiting(step, (consumer.node, consumer.queue))
    return Done(rule="LB-CONSUMERS")
