"""Queues: where a routed message ends up, waits, and comes back to.

Introduction
------------
A :class:`QueueImpl` lives on one node. It keeps what Artemis's
``QueueImpl`` keeps for this domain:

* its ``consumers`` (:class:`~.consumers.ServerConsumer`) in attach order,
  and ``pos``, the round-robin position among them;
* ``messages``, the references that wait because no started consumer took
  them;
* ``redistributor``, a :class:`Redistributor` once one has been added
  (RD-DELAY), or None.

Theory of operation. :meth:`QueueImpl.add_tail` is a message arriving. The
queue offers it to its consumers in turn starting at ``pos``; a consumer
whose filter does not match (NO_MATCH) or that cannot take anything now
(BUSY: a paused consumer, or one of window 0 without credit) is passed over
without losing its turn. The first that handles it takes it and ``pos``
moves to just after it; with none, the message waits (rule LB-CONSUMERS,
``QueueImpl.deliver``, ``ServerConsumerImpl.handle``). A consumer that
takes a message acknowledges it at once, or holds it until its client
acknowledges (LB-ACK, :mod:`.consumers`). So a waiting message may have a
matching consumer, a paused or a pulling one; a message no consumer's
*filter* matches, every consumer answering NO_MATCH, is *unmatched*
(``hasUnMatchedPending``). ``pos`` stays None until the first hand-over,
since the spec records a consumer position only once one has been used;
an out-of-range ``pos`` (consumers closed since) counts as 0.

:meth:`QueueImpl.add_consumer` cancels the redistributor
(``QueueImpl.addConsumer`` -> ``cancelRedistributor``, RD-DELAY) and offers every
waiting message to the consumers again, in order, as Artemis's delivery
loop does when a consumer appears; each one is reported again, taken or
still waiting. A paused consumer resuming does the same, without the
cancelling (:meth:`QueueImpl.deliver_waiting`).

A consumer of window 0 that receives gets one message through
:meth:`QueueImpl.force_delivery`, the first waiting one it handles (LB-PULL).
The messages a closing consumer held come back through
:meth:`QueueImpl.cancel`: before every waiting message in 2.11
(``QueueImpl.addHead``, by way of :meth:`QueueImpl.post_rollback`, which
drops them when the queue purges and has no consumer left), among them by
message ID later (``addSorted``), and then every waiting message is offered
to the consumers left (LB-CLOSE-RETURNS). What a rollback gives back comes through
:meth:`QueueImpl.check_redelivery`, which drops a message out of delivery
attempts, and :meth:`QueueImpl.post_rollback`, which puts the rest back the
same way, unless the queue purges and has no consumer left (LB-TX-ROLLBACK,
:mod:`.sessions`). A queue's message count (:meth:`QueueImpl.get_message_count`)
includes what its consumers hold (``QueueImpl.getMessageCount`` counts the
delivering references).

:meth:`QueueImpl.add_redistributor` is ``QueueImpl.addRedistributor``
(RD-DELAY, ARTEMIS-2007): nothing when the queue has one already; otherwise one
only when the queue has no consumers or holds an unmatched message, active
``delay`` ticks from now. The caller has already dropped the request when
the delay is -1 (``PostOfficeImpl.onNotification``).

The :class:`Redistributor` is Artemis's special consumer that moves
stranded messages (RD-GROUPED). The queue offers it its waiting messages in order,
one delivery attempt per step, and it answers each with a
:class:`~.consumers.HandleStatus`: ``NO_MATCH`` for a message with a group ID (never
redistributed; ``MessageRedistributionTest.testRedistributionWithMessageGroups``);
``BUSY`` while its delay runs or when the post office finds no target,
which ends the attempt; ``HANDLED`` when the message moved: the post
office chose a target and made a copy with a new ID (seed 003,
``PostOfficeImpl.redistribute``; RD-NEW-ID), the redistributor acknowledged
the original, and the copy was routed to the target (``processRoute``).
Artemis does this in a transaction on the queue's executor; every step
here is atomic, so neither is needed. A redistributor is "the tick at which
it becomes active" (``active_at``, RD-DELAY): the logical clock replaces the
scheduled executor of a delayed one.

Every hand-over is written to the :class:`~.messages.DeliveryLog`, which plays the part
of the test's consumers: the broker reads it back as the outcome's events.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brokerspec.spec.addressing.names import RoutingType
from brokerspec.spec.profiles import ReturnOrder

from .consumers import HandleStatus, ServerConsumer
from .messages import CoreMessage, DeliveryLog, Filter, LogicalClock, matches

if TYPE_CHECKING:
    from .post_office import PostOffice


class Redistributor:
    """``Redistributor``: moves the waiting messages of ``queue`` through its node's post office."""

    def __init__(self, queue: QueueImpl, post_office: PostOffice, active_at: int) -> None:
        self.queue = queue
        self.post_office = post_office
        self.active_at = active_at

    def is_active(self, now: int) -> bool:
        """Whether its delay has run out (a delay of 0 is active at once, RD-DELAY)."""
        return self.active_at <= now

    def handle(self, message: CoreMessage) -> HandleStatus:
        """``Redistributor.handle``: skip grouped messages, move the others, BUSY when one cannot move (RD-GROUPED)."""
        if not self.is_active(self.post_office.clock.now):
            return HandleStatus.BUSY
        if message.group_id is not None:
            return HandleStatus.NO_MATCH
        routed = self.post_office.redistribute(message, self.queue)
        if routed is None:
            return HandleStatus.BUSY
        copy, context = routed
        self.queue.acknowledge(message)
        to_node, to_queue, _ = context.get_destinations()[0]
        self.queue.log.redistributed(message, self.queue, copy, to_node, to_queue)
        self.post_office.process_route(copy, context)
        return HandleStatus.HANDLED


class QueueImpl:
    """One queue on one node: consumers in attach order, waiting messages, an optional redistributor."""

    def __init__(self, queue_id: int, name: str, address: str, routing_type: RoutingType, filter: Filter | None,
                 node: str, post_office: PostOffice, clock: LogicalClock, log: DeliveryLog) -> None:
        self.id = queue_id
        self.name = name
        self.address = address
        self.routing_type = routing_type
        self.filter = filter
        self.configured_filter = None if filter is None else filter.filter_string
        """The filter string of the queue's configuration, which a queue query reports (LB-UPDATE-FILTER)."""
        self.node = node
        self.post_office = post_office
        self.clock = clock
        self.log = log
        self.consumers: list[ServerConsumer] = []
        self.pos: int | None = None
        self.messages: list[CoreMessage] = []
        self.redistributor: Redistributor | None = None
        self.unmatched = False
        """``hasUnMatchedPending``: a message found every consumer answering NO_MATCH (ARTEMIS-2007)."""
        self.prompted = False
        """Whether this step prompted the queue's delivery (``deliverAsync``); the broker clears it per step."""
        self.enabled = True
        self.purge_on_no_consumers = False
        self.queue_destroyed = False
        """``queueDestroyed``: the queue was deleted; references a transaction holds for it go with it."""

    # -- consumers -------------------------------------------------------------------

    def add_consumer(self, consumer: ServerConsumer) -> None:
        """``QueueImpl.addConsumer``: cancel the redistributor, then offer the waiting messages again (RD-DELAY)."""
        self.cancel_redistributor()
        self.consumers.append(consumer)
        self.deliver_waiting()

    def remove_consumer(self, consumer: ServerConsumer) -> None:
        """``QueueImpl.removeConsumer``; ``pos`` is left as it is (an index past the end counts as 0)."""
        self.consumers.remove(consumer)

    def get_consumer_count(self) -> int:
        """How many consumers are attached (the redistributor is not one of them here)."""
        return len(self.consumers)

    def has_matching_consumer(self, message: CoreMessage) -> bool:
        """``QueueImpl.hasMatchingConsumer``: some consumer's filter matches (LB-PREFERRED, local bindings)."""
        return any(matches(consumer.filter, message) for consumer in self.consumers)

    # -- delivery --------------------------------------------------------------------

    def route(self, message: CoreMessage) -> bool:
        """``QueueImpl.route``: a disabled queue, or a purge-on-no-consumers one without consumers, takes
        nothing, and the message routed to it vanishes unlogged (LB-QUEUE-ENABLED, LB-PURGE-ON-NO-CONSUMERS)."""
        if not self.is_routable():
            return False
        self.add_tail(message)
        return True

    def is_routable(self) -> bool:
        """What ``QueueImpl.route`` checks before it takes a message: enabled, and not purging without consumers."""
        return self.enabled and not (self.purge_on_no_consumers and not self.consumers)

    def purge(self) -> None:
        """``QueueManagerImpl.doIt`` when the last consumer of a purge-on-no-consumers queue went: drop what waits."""
        self.delete_messages()

    def add_tail(self, message: CoreMessage) -> None:
        """A message arrives: the next consumer in turn that handles it takes it, or it waits."""
        self.prompted = True  # addTail prompts delivery
        count = len(self.consumers)
        start = self.pos if self.pos is not None and 0 <= self.pos < count else 0
        no_match = 0
        for step in range(count):
            index = (start + step) % count
            consumer = self.consumers[index]
            status = consumer.handle(message)
            if status is HandleStatus.HANDLED:
                self.pos = (index + 1) % count
                consumer.proceed_deliver(message)
                self.log.delivered(message, self, consumer)
                return
            no_match += status is HandleStatus.NO_MATCH
        if count and no_match == count and self.redistributor is None:
            # QueueImpl.deliver: every consumer refused it by its filter (a stopped one answers BUSY)
            self.unmatched = True
        self.messages.append(message)
        self.log.delivered(message, self, None)

    def deliver_waiting(self) -> None:
        """``deliverAsync`` after a consumer appeared or started: offer every waiting message again, in order."""
        waiting, self.messages = self.messages, []
        for message in waiting:
            self.add_tail(message)

    def force_delivery(self, consumer: ServerConsumer) -> None:
        """``ServerConsumerImpl.forceDelivery`` for a consumer of window 0 that has just been given one credit.

        The delivery loop offers the waiting messages in order; every other consumer answers BUSY or has
        refused them before, so the first one ``consumer`` handles is the one it takes (LB-PULL). The queue's
        round-robin position among its consumers stays where it was. Without a message nothing happens (the
        client is sent the forced-delivery marker and gets null).
        """
        for message in self.messages:
            if consumer.handle(message) is HandleStatus.HANDLED:
                self.messages = [m for m in self.messages if m is not message]
                consumer.proceed_deliver(message)
                self.log.delivered(message, self, consumer)
                return

    def cancel(self, refs: list[CoreMessage], at_head: bool) -> None:
        """``QueueImpl.cancel`` of the messages a closing consumer held, then a delivery round (LB-CLOSE-RETURNS).

        ``at_head``: ``QueueImpl.addHead`` (2.11) puts them before every waiting message, in the order they
        were delivered; otherwise ``addSorted`` (ARTEMIS-3093, ARTEMIS-4517) puts them among the waiting
        messages by message ID, which in this domain is the order they arrived in. Every waiting message is
        then offered to the queue's consumers again, as :meth:`deliver_waiting` does.
        """
        for message in refs:
            self.log.returned(message, self)
        if at_head:
            self.messages = [*refs, *self.messages]
        else:
            self.messages = sorted([*refs, *self.messages], key=lambda m: m.message_id)
        self.deliver_waiting()

    def check_redelivery(self, ref: CoreMessage) -> bool:
        """``QueueImpl.checkRedelivery`` of a reference a rollback gives back: False, and the message dropped,
        when its delivery count has reached the address's ``max-delivery-attempts``, there being no
        dead-letter address (``sendToDeadLetterAddress``; LB-TX-MAX-DELIVERY)."""
        max_deliveries = self.post_office.address_settings.get_match(self.address).max_delivery_attempts
        if 0 < max_deliveries <= ref.delivery_count:
            self.log.dropped(ref, self)
            return False
        return True

    def post_rollback(self, refs: list[CoreMessage]) -> None:
        """``QueueImpl.postRollback``: a rollback gives ``refs`` back (LB-TX-ROLLBACK).

        A purge-on-no-consumers queue without consumers drops them (``purgeAfterRollback``); otherwise they
        go back as a closing consumer's do (:meth:`cancel`: ``addHead`` in 2.11, ``addSorted`` later, as the
        profile's ``close_return_order`` says) and the waiting messages are offered again.
        """
        at_head = self.post_office.options.close_return_order is ReturnOrder.HEAD
        if self.purge_on_no_consumers and not self.consumers:
            for ref in refs:
                self.log.returned(ref, self)
            for ref in refs:
                self.log.dropped(ref, self)
            return
        self.cancel(refs, at_head)

    def get_message_count(self) -> int:
        """``QueueImpl.getMessageCount``: the waiting messages and those its consumers hold unacknowledged or
        acknowledged in a transaction not yet ended (``getDeliveringCount``; LB-TX-ACK)."""
        return len(self.messages) + sum(len(consumer.delivering_refs) + len(consumer.get_acked())
                                        for consumer in self.consumers)

    def acknowledge(self, message: CoreMessage) -> None:
        """The redistributor took ``message`` away (``Redistributor`` acknowledges the original)."""
        self.messages = [m for m in self.messages if m is not message]

    def delete_messages(self) -> None:
        """The queue is being destroyed: every waiting message goes with it."""
        for message in self.messages:
            self.log.dropped(message, self)
        self.messages = []

    # -- redistribution --------------------------------------------------------------

    def add_redistributor(self, delay: int) -> None:
        """``QueueImpl.addRedistributor(delay)``: one redistributor, active ``delay`` ticks from now (RD-DELAY).

        One already in place is only prompted to try again ("just prompt delivery").
        """
        self.prompted = True
        if self.redistributor is not None:
            return
        unmatched = self.post_office.options.redistribute_unmatched and self.unmatched
        if self.consumers and not unmatched:  # ARTEMIS-2007 (2.19.0) added the unmatched case
            return
        # addRedistributor schedules only a positive delay: any other one (-2 too) adds it at once
        self.redistributor = Redistributor(self, self.post_office, self.clock.now + max(delay, 0))
        self.unmatched = False

    def cancel_redistributor(self) -> None:
        """``QueueImpl.cancelRedistributor``: a consumer is here, so nothing needs to move (the flag goes too)."""
        self.redistributor = None
        self.unmatched = False

    def deliver_to_redistributor(self, since: int) -> None:
        """One delivery attempt: offer each waiting message to an active redistributor (RD-GROUPED).

        Only when the step prompted the queue's delivery or the redistributor
        became active after ``since`` (the clock when the step began): a
        BUSY redistributor waits for ``deliverAsync``. A grouped message is
        passed over (NO_MATCH); the first message that finds no target
        (BUSY) ends the attempt.
        """
        redistributor = self.redistributor
        if redistributor is None or not redistributor.is_active(self.clock.now):
            return
        if not self.prompted and redistributor.active_at <= since:
            return
        for message in list(self.messages):
            if redistributor.handle(message) is HandleStatus.BUSY:
                break
