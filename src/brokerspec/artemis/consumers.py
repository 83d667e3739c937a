"""The load-balancing domain's consumers on a real Artemis cluster: attach, close, pause, resume, receive, ack.

Introduction
------------
Every consumer is a core consumer on a session of its own. One that is
pushed to has a message listener (the locator's window 0 makes it a slow
consumer: ``ClientConsumerImpl`` asks for the next message once the
listener has returned); one that pulls has window 0 and no listener, and
``receive`` is ``ClientConsumer.receiveImmediate``, which grants one credit
and takes the first waiting message the consumer's filter matches, or
nothing (rule LB-PULL; ``ConsumerWindowSizeTest.testReceiveImmediateWithZeroWindow``).
A consumer acknowledges each message as it takes it, unless it acknowledges
later (LB-ACK): then its listener or receive only records the delivery, and
the driver keeps the ``ClientMessage`` so that ``ack`` can acknowledge it.
The sessions acknowledge at once and block until the broker has handled the
acknowledgement (``ackBatchSize`` 0, ``blockOnAcknowledge``).

What a consumer holds is the adapter's picture (:attr:`ConsumerSteps.held`):
the instances delivered to it and not yet acknowledged, in delivery order.
The broker counts them as *delivering* (``QueueImpl.getDeliveringCount``)
and in the queue's message count, and its browse does not show them, so
the cluster is settled when each queue's delivering count is what its
consumers hold (:meth:`ConsumerSteps.holding`). An acknowledgement is
cumulative (``ServerConsumerImpl.acknowledge`` acknowledges every earlier
delivery of the consumer too). One that names a message the consumer does
not hold is sent as well, as the acknowledgement of an ID no message has
(the broker looks only at the ID), and the broker refuses it with
ILLEGAL_STATE.

A close gives back what the consumer held (LB-CLOSE-RETURNS,
``ServerConsumerImpl.close`` and ``cancelRefs``): the step's events start with
a :class:`Returned` for each held message, then the queue's waiting
messages, returned ones among them in the order of the profile's
``close_return_order`` (before the others, ``QueueImpl.addHead``, 2.11; by
message ID, ``addSorted``, ARTEMIS-4517), are offered again, and
:func:`~.placement.reconcile` tells where each went. A purge-on-no-consumers
queue whose last consumer closed purges the waiting messages before they
return (2.11: the consumer is removed first) or with them (from 2.31.0,
ARTEMIS-4410: ``cancelRefs`` before ``removeItself``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from brokerspec.spec import BalancingOptions, Outcome
from brokerspec.spec.balancing import (
    Ack,
    Attach,
    Close,
    Delivered,
    Done,
    Dropped,
    Event,
    Pause,
    Receive,
    Refusal,
    Refused,
    Resume,
    Returned,
)
from brokerspec.spec.profiles import ReturnOrder

from .cluster import ArtemisCluster
from .driver import CallFailed
from .outcomes import UnexpectedRefusal
from .placement import Instance, Primary, QueueKey

REFUSED_ACK_RETURNS = (
    "the broker refused the acknowledgement and gave back what the consumer held: ServerConsumerImpl.acknowledge "
    "acknowledges its delivering references one by one in a transaction of its own until it finds the message, "
    "and when it does not, rolls that transaction back: RefsOperation.afterRollback puts every one of them back in "
    "the queue (QueueImpl.postRollback: addHead in 2.11, addSorted later), to be delivered again; the spec says a "
    "refused acknowledgement changes nothing")
"""What the adapter says when a refused ``ack`` moved the consumer's messages."""

RETURNED_PURGED = (
    "the messages the consumer gave back were purged too: QueueImpl.postRollback drops what comes back to a "
    "purge-on-no-consumers queue without consumers (purgeAfterRollback), and 2.11's ServerConsumerImpl.close "
    "cancels the consumer's references after removeItself, so its queue has none left by then; the spec "
    "(close_return_order HEAD) has them survive the purge")
"""What the adapter says when a close's returned messages vanished with a 2.11-style purge."""


@dataclass
class ConsumerInfo:
    """A consumer of the case: its broker-side ID and session, its queue, and how it takes and acknowledges."""

    real: str
    session: str
    key: QueueKey
    pull: bool = False
    manual_ack: bool = False


def ordered_return(held: Sequence[Instance], waiting: Sequence[Instance], order: ReturnOrder) -> tuple[Instance, ...]:
    """The queue's waiting instances once ``held`` are back: before the others (HEAD, ``QueueImpl.addHead``) or
    among them by message ID, the order in which they reached the queue (ARRIVAL, ``addSorted``)."""
    if order is ReturnOrder.HEAD:
        return (*held, *waiting)
    return tuple(sorted((*held, *waiting), key=lambda instance: instance.id))


def close_return(held: Sequence[Instance], waiting: Sequence[Instance], options: BalancingOptions,
                 purge: bool) -> tuple[tuple[Event, ...], tuple[Instance, ...], Primary]:
    """How a close that gives back ``held`` starts, for :func:`~.placement.reconcile` to finish.

    The events before reconciling, the instances waiting in the queue for it
    to match, and the step's primary: the queue offers them all again, or,
    when the purge comes after their return, drops them all. ``purge``: the
    queue purges on no consumers and the closing consumer was its last.
    """
    key = held[0].key
    head = options.close_return_order is ReturnOrder.HEAD
    first: list[Event] = []
    if purge and head:  # 2.11 removes the consumer first: QueueManagerImpl.doIt purges before the return
        first.extend(Dropped(i.id, key[0], key[1]) for i in waiting)
        waiting = ()
    first.extend(Returned(i.id, key[0], key[1]) for i in held)
    offered = ordered_return(held, waiting, options.close_return_order)
    if purge and not head:  # offered to no consumer, then purged with the rest (ARTEMIS-4410)
        first.extend(Delivered(i.id, key[0], key[1], None) for i in offered)
        return tuple(first), offered, Primary("drop", key)
    return tuple(first), offered, Primary("offer", key)


def acknowledged(held: Sequence[Instance], message: int | None) -> tuple[Instance, ...] | None:
    """What stays held after acknowledging ``message`` (None: all); None when the consumer does not hold it."""
    ids = [instance.id for instance in held]
    if message is None:
        return ()
    if message not in ids:
        return None
    return tuple(held[ids.index(message) + 1:])


def holding(held: Mapping[str, Sequence[Instance]], deliveries: Sequence[Mapping[str, Any]],
            consumers: Mapping[str, ConsumerInfo], real: str) -> dict[QueueKey, int]:
    """(node, broker queue name) -> how many messages the consumers of the queue hold: what they held before the
    step and what the step's deliveries gave those that acknowledge later, each message once.

    ``held`` is by consumer name, ``deliveries`` are the driver's (by broker consumer ID); ``real`` is the case's
    name prefix. A message given back and delivered again counts once.
    """
    tags: dict[QueueKey, set[str]] = {}
    for name, instances in held.items():
        for instance in instances:
            tags.setdefault((instance.key[0], real + instance.key[1]), set()).add(instance.tag)
    by_real = {info.real: info for info in consumers.values()}
    for delivery in deliveries:
        info = by_real.get(str(delivery.get("consumer")))
        if info is not None and info.manual_ack:
            tag = str(delivery["properties"].get("_BS_TAG"))
            tags.setdefault((info.key[0], real + info.key[1]), set()).add(tag)
    return {key: len(found) for key, found in tags.items()}


def now_held(held: Mapping[str, tuple[Instance, ...]], taken: Sequence[tuple[str, Instance]],
             consumers: Mapping[str, ConsumerInfo]) -> dict[str, tuple[Instance, ...]]:
    """``held`` with what a step's consumers that acknowledge later took (:attr:`~.placement.Reconciled.taken`)."""
    after = dict(held)
    for name, instance in taken:
        info = consumers.get(name)
        if info is not None and info.manual_ack:
            after[name] = (*after.get(name, ()), instance)
    return after


class ConsumerSteps:
    """The consumer operations of :class:`~.balancing.BalancingAdapter` (which supplies the cluster, the case's
    bookkeeping and the settling)."""

    cluster: ArtemisCluster
    nodes: list[str]
    prefix: str
    options: BalancingOptions
    consumers: dict[str, ConsumerInfo]
    sessions: set[str]
    purging: set[QueueKey]
    waiting: dict[QueueKey, tuple[Instance, ...]]
    held: dict[str, tuple[Instance, ...]]
    """Consumer name -> the instances it holds unacknowledged, in delivery order."""

    def real(self, name: str) -> str:
        raise NotImplementedError

    def step_events(self, primary: Primary = Primary(), landings: tuple[Instance, ...] = ()) -> tuple[Any, ...]:
        raise NotImplementedError

    def _quietly(self, command: str, **fields: Any) -> None:
        raise NotImplementedError

    def holding(self, deliveries: Sequence[Mapping[str, Any]]) -> dict[QueueKey, int]:
        """:func:`holding` for the case now: what the cluster's queues should count as delivering."""
        return holding(self.held, deliveries, self.consumers, self.prefix)

    def attach(self, command: Attach) -> Outcome:
        if command.node not in self.nodes:
            return Refused(Refusal.UNKNOWN_NODE)
        key = (command.node, command.queue)
        node = self.cluster.nodes[command.node]
        if command.consumer in self.consumers:
            exists = node.call("queue_query", name=self.real(command.queue))["exists"]
            return Refused(Refusal.CONSUMER_EXISTS if exists else Refusal.QUEUE_NOT_FOUND)
        real = f"{self.real(command.consumer)}@{len(self.sessions)}-{time.monotonic_ns() % 10**9}"
        session = f"{real}-session"
        node.call("session", id=session)
        try:
            queue = self.real(command.queue)
            if command.fqqn_address is not None:  # the core client by FQQN: ServerSessionImpl.createConsumer
                queue = f"{self.real(command.fqqn_address) if command.fqqn_address else ''}::{queue}"
            node.driver.call("consumer", session=session, id=real, queue=queue, filter=color_filter(command.filter),
                             listen=True, pull=command.pull, manual_ack=command.manual_ack)
        except CallFailed as failure:
            self._quietly("close_session", id=session)
            if failure.has_type("QUEUE_DOES_NOT_EXIST"):
                return Refused(Refusal.QUEUE_NOT_FOUND)
            raise UnexpectedRefusal(str(failure)) from None
        self.consumers[command.consumer] = ConsumerInfo(real, session, key, command.pull, command.manual_ack)
        return Done(self.step_events(Primary("offer", key)))

    def close(self, command: Close) -> Outcome:
        consumer = self.consumers.pop(command.consumer, None)
        if consumer is None:
            return Refused(Refusal.CONSUMER_NOT_FOUND)
        held = self.held.pop(command.consumer, ())
        self.cluster.driver.call("close_session", id=consumer.session)
        purge = consumer.key in self.purging and not any(c.key == consumer.key for c in self.consumers.values())
        if held:
            first, offered, primary = close_return(held, self.waiting.get(consumer.key, ()), self.options, purge)
            self.waiting[consumer.key] = offered
            try:
                return Done((*first, *self.step_events(primary)))
            except UnexpectedRefusal as refusal:
                if purge and primary.kind == "offer":
                    raise UnexpectedRefusal(f"{RETURNED_PURGED} ({refusal.what})") from None
                raise
        if purge:
            return Done(self.step_events(Primary("drop", consumer.key)))  # QueueManagerImpl.doIt purged it
        return Done(self.step_events())

    def pause(self, command: Pause) -> Outcome:
        consumer = self.consumers.get(command.consumer)
        if consumer is None:
            return Refused(Refusal.CONSUMER_NOT_FOUND)
        self.cluster.driver.call("stop_session", session=consumer.session)
        return Done(self.step_events())

    def resume(self, command: Resume) -> Outcome:
        consumer = self.consumers.get(command.consumer)
        if consumer is None:
            return Refused(Refusal.CONSUMER_NOT_FOUND)
        self.cluster.driver.call("start_session", session=consumer.session)
        return Done(self.step_events(Primary("offer", consumer.key)))

    def receive(self, command: Receive) -> Outcome:
        """``receiveImmediate``: the delivery is recorded like a listener's, and the step tells what it took."""
        consumer = self.consumers.get(command.consumer)
        if consumer is None:
            return Refused(Refusal.CONSUMER_NOT_FOUND)
        if not consumer.pull:
            return Refused(Refusal.NOT_PULLING)
        self.cluster.driver.call("receive", consumer=consumer.real, record=True)
        return Done(self.step_events())

    def ack(self, command: Ack) -> Outcome:
        """Acknowledge on the broker; a message the consumer does not hold is acknowledged too, and refused."""
        consumer = self.consumers.get(command.consumer)
        if consumer is None:
            return Refused(Refusal.CONSUMER_NOT_FOUND)
        held = self.held.get(command.consumer, ())
        kept = acknowledged(held, command.message)
        if kept is not None:
            if held:  # the last one up to the message: the broker acknowledges every earlier one with it
                self.cluster.driver.call("ack", consumer=consumer.real, tag=held[len(held) - len(kept) - 1].tag)
            self.held[command.consumer] = kept
            return Done(self.step_events())
        try:
            self.cluster.driver.call("ack", consumer=consumer.real, tag=None)
        except CallFailed as failure:
            if not failure.has_type("ILLEGAL_STATE"):
                raise UnexpectedRefusal(str(failure)) from None
        else:
            raise UnexpectedRefusal(f"the broker took an acknowledgement of message {command.message}, which "
                                    f"{command.consumer} does not hold")
        try:
            moved = self.step_events()
        except UnexpectedRefusal as refusal:
            raise UnexpectedRefusal(f"{REFUSED_ACK_RETURNS} ({refusal.what})") from None
        if moved:
            raise UnexpectedRefusal(f"{REFUSED_ACK_RETURNS}: {moved}")
        return Refused(Refusal.NOT_DELIVERED)


def color_filter(color: str | None) -> str | None:
    """The filter expression for a spec filter (a colour), or None."""
    return None if color is None else "color = '" + color.replace("'", "''") + "'"
