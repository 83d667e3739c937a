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
(the broker looks only at the ID): the broker acknowledges everything the
consumer holds on the way, in a transaction of its own that it rolls back,
giving them back with a delivery spent (:func:`~.returns.give_back`), or in
the consumer's transacted session, which it marks rollback-only; then it
throws ILLEGAL_STATE (LB-ACK).

A close gives back what the consumer held (LB-CLOSE-RETURNS,
``ServerConsumerImpl.close`` and ``cancelRefs``): the step's events start with
a :class:`Returned` for each held message, then the queue's waiting
messages, returned ones among them in the order of the profile's
``close_return_order`` (before the others, ``QueueImpl.addHead``, 2.11; by
message ID, ``addSorted``, ARTEMIS-4517), are offered again, and
:func:`~.placement.reconcile` tells where each went. A purge-on-no-consumers
queue whose last consumer closed purges the waiting messages before they
return (2.11: the consumer is removed first) or with them (from 2.31.0,
ARTEMIS-4410: ``cancelRefs`` before ``removeItself``), :func:`~.returns.close_return`.
A transacted consumer's close then closes its session, whose rollback gives
back what it acknowledged (:meth:`~.sessions.SessionSteps.close_rollback`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from brokerspec.spec import BalancingOptions, Outcome
from brokerspec.spec.balancing import (
    Ack,
    Attach,
    Close,
    Done,
    Failed,
    Pause,
    Receive,
    Refusal,
    Refused,
    Resume,
)

from .cluster import ArtemisCluster
from .driver import CallFailed
from .outcomes import UnexpectedRefusal
from .placement import Instance, Primary, QueueKey
from .returns import Start, acknowledged, close_return, give_back


@dataclass
class ConsumerInfo:
    """A consumer of the case: its broker-side ID and session, its queue, and how it takes and acknowledges."""

    real: str
    session: str
    key: QueueKey
    pull: bool = False
    manual_ack: bool = False
    transacted: bool = False


def holding(held: Mapping[str, Sequence[Instance]], deliveries: Sequence[Mapping[str, Any]],
            consumers: Mapping[str, ConsumerInfo], real: str) -> dict[QueueKey, int]:
    """(node, broker queue name) -> how many messages the consumers of the queue hold: what they held (or acknowledged
    in an open transaction) before the step, and what the step's deliveries gave those that acknowledge later or in a
    transaction, each message once.

    ``held`` is by consumer name, ``deliveries`` are the driver's (by broker consumer ID); ``real`` is the case's
    name prefix. A message given back and delivered again counts once. A transacted consumer's acknowledgement
    leaves the message delivering until the commit (``RefsOperation.afterCommit`` -> ``QueueImpl.postAcknowledge``).
    """
    tags: dict[QueueKey, set[str]] = {}
    for name, instances in held.items():
        for instance in instances:
            tags.setdefault((instance.key[0], real + instance.key[1]), set()).add(instance.tag)
    by_real = {info.real: info for info in consumers.values()}
    for delivery in deliveries:
        info = by_real.get(str(delivery.get("consumer")))
        if info is not None and (info.manual_ack or info.transacted):
            tag = str(delivery["properties"].get("_BS_TAG"))
            tags.setdefault((info.key[0], real + info.key[1]), set()).add(tag)
    return {key: len(found) for key, found in tags.items()}


def now_held(held: Mapping[str, tuple[Instance, ...]], taken: Sequence[tuple[str, Instance]],
             consumers: Mapping[str, ConsumerInfo], acked: bool = False) -> dict[str, tuple[Instance, ...]]:
    """``held`` with what a step's consumers that acknowledge later took (:attr:`~.placement.Reconciled.taken`); with
    ``acked``, what a step's transacted consumers that acknowledge at once took, into their transaction."""
    after = dict(held)
    for name, instance in taken:
        info = consumers.get(name)
        if info is not None and (info.transacted and not info.manual_ack if acked else info.manual_ack):
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
    acked: dict[str, tuple[Instance, ...]]
    """Transacted consumer name -> the instances it acknowledged in its open transaction, in order."""
    spent: dict[int, int]
    """Spec message ID -> the deliveries rollbacks have spent of it."""

    if TYPE_CHECKING:  # the adapter's own, declared for the type checker only
        def real(self, name: str) -> str: ...
        def step_events(self, primary: Primary = Primary(),
                        landings: tuple[Instance, ...] = ()) -> tuple[Any, ...]: ...
        def _quietly(self, command: str, **fields: Any) -> None: ...
        def is_session(self, name: str) -> bool: ...
        def consumer_session(self, name: str, node: str, real: str) -> None: ...
        def close_rollback(self, name: str, start: Start, purge: bool, others: bool) -> Start: ...
        def mark_rollback_only(self, name: str) -> None: ...

    def holding(self, deliveries: Sequence[Mapping[str, Any]]) -> dict[QueueKey, int]:
        """:func:`holding` for the case now: what the cluster's queues should count as delivering."""
        both = {name: (*self.held.get(name, ()), *self.acked.get(name, ())) for name in {*self.held, *self.acked}}
        return holding(both, deliveries, self.consumers, self.prefix)

    def attach(self, command: Attach) -> Outcome:
        if command.node not in self.nodes:
            return Refused(Refusal.UNKNOWN_NODE)
        key = (command.node, command.queue)
        node = self.cluster.nodes[command.node]
        if command.consumer in self.consumers or self.is_session(command.consumer):
            exists = node.call("queue_query", name=self.real(command.queue))["exists"]
            taken = Refusal.CONSUMER_EXISTS if command.consumer in self.consumers else Refusal.SESSION_EXISTS
            return Refused(taken if exists else Refusal.QUEUE_NOT_FOUND)
        real = f"{self.real(command.consumer)}@{len(self.sessions)}-{time.monotonic_ns() % 10**9}"
        session = f"{real}-session"
        node.call("session", id=session, transacted=command.transacted)
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
        self.consumers[command.consumer] = ConsumerInfo(real, session, key, command.pull, command.manual_ack,
                                                        command.transacted)
        if command.transacted:
            self.consumer_session(command.consumer, command.node, session)
        return Done(self.step_events(Primary("offer", key)))

    def close(self, command: Close) -> Outcome:
        consumer = self.consumers.pop(command.consumer, None)
        if consumer is None:
            return Refused(Refusal.CONSUMER_NOT_FOUND)
        key = consumer.key
        held = self.held.pop(command.consumer, ())
        self.cluster.driver.call("close_session", id=consumer.session)
        others = any(c.key == key for c in self.consumers.values())
        purge = key in self.purging and not others
        waiting = self.waiting.get(key, ())
        if held:
            start = close_return(held, waiting, self.options, purge)
        else:  # QueueManagerImpl.doIt purged what waits
            start = (), waiting, Primary("drop", key) if purge else Primary()
        if consumer.transacted:
            start = self.close_rollback(command.consumer, start, purge, others)
        first, self.waiting[key], primary = start
        return Done((*first, *self.step_events(primary)))

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
        """Acknowledge on the broker (in a transacted consumer's transaction, LB-TX-ACK); a message the consumer does
        not hold is acknowledged too, and fails (:func:`failed_ack`)."""
        consumer = self.consumers.get(command.consumer)
        if consumer is None:
            return Refused(Refusal.CONSUMER_NOT_FOUND)
        held = self.held.get(command.consumer, ())
        kept = acknowledged(held, command.message)
        if kept is not None:
            if held:  # the last one up to the message: the broker acknowledges every earlier one with it
                self.cluster.driver.call("ack", consumer=consumer.real, tag=held[len(held) - len(kept) - 1].tag)
            self.held[command.consumer] = kept
            if consumer.transacted:
                self.acked[command.consumer] = (*self.acked.get(command.consumer, ()), *held[:len(held) - len(kept)])
            return Done(self.step_events())
        try:
            self.cluster.driver.call("ack", consumer=consumer.real, tag=None)
        except CallFailed as failure:
            if not failure.has_type("ILLEGAL_STATE"):
                raise UnexpectedRefusal(str(failure)) from None
        else:
            raise UnexpectedRefusal(f"the broker took an acknowledgement of message {command.message}, which "
                                    f"{command.consumer} does not hold")
        return self.failed_ack(command.consumer, consumer)

    def failed_ack(self, name: str, consumer: ConsumerInfo) -> Outcome:
        """``ServerConsumerImpl.acknowledge`` ran out of held messages looking for the one named, having acknowledged
        them all: in the consumer's transaction, now rollback-only; else in its own, which it rolled back, giving
        them back with a delivery spent (``RefsOperation.afterRollback``). Holding nothing outside a transaction,
        the acknowledgement changed nothing: refused."""
        held = self.held.pop(name, ())
        if consumer.transacted:
            self.acked[name] = (*self.acked.get(name, ()), *held)
            self.mark_rollback_only(name)
            return Failed(Refusal.NOT_DELIVERED, self.step_events())
        if not held:
            moved = self.step_events()
            if moved:
                raise UnexpectedRefusal(f"a refused acknowledgement of a consumer holding nothing moved messages: "
                                        f"{moved}")
            return Refused(Refusal.NOT_DELIVERED)
        first, self.waiting[consumer.key], primary = give_back(
            consumer.key, held, (), self.waiting.get(consumer.key, ()), self.options.close_return_order, False,
            self.spent)
        return Failed(Refusal.NOT_DELIVERED, (*first, *self.step_events(primary)))


def color_filter(color: str | None) -> str | None:
    """The filter expression for a spec filter (a colour), or None."""
    return None if color is None else "color = '" + color.replace("'", "''") + "'"
