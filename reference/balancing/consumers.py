"""Consumers: what a queue offers its messages to, and what a consumer holds until its client acknowledges.

Introduction
------------
A :class:`ServerConsumer` is ``ServerConsumerImpl`` cut down to what this
domain observes. It keeps:

* its filter (a colour) and whether its session is started: a stopped
  (paused) consumer answers every offer BUSY, yet stays attached and still
  counts as a matching consumer for routing and redistribution
  (LB-CONSUMERS);
* ``available_credits`` (``availableCredits``): None for a consumer of
  window -1, to which its queue pushes every message it matches, and a
  count for one of window 0 (``consumerWindowSize=0``), which holds no
  credit between its client's receives and so answers BUSY, before its
  filter is asked, to every message its queue offers (LB-PULL,
  ``ServerConsumerImpl.handle``);
* ``delivering_refs`` (``deliveringRefs``): the messages handed to it and
  not yet acknowledged, in delivery order (LB-ACK).

Theory of operation:

1. :meth:`ServerConsumer.handle` answers an offer: BUSY when stopped or
   out of credit, NO_MATCH when the filter says no, else HANDLED; the queue
   then calls :meth:`ServerConsumer.proceed_deliver`, which spends a credit
   where credits are counted and files the message among the delivering
   ones. A consumer whose client acknowledges each message as it arrives
   (a message listener that acknowledges: every consumer but a
   ``manual_ack`` one) acknowledges it there and then, so nothing stays.
2. A receive on a consumer of window 0 is ``ClientConsumerImpl.receiveImmediate``:
   the client sends one credit (``startSlowConsumer``), the server forces
   delivery (:meth:`.queues.QueueImpl.force_delivery`), and the client
   takes the credits back to 0 whether or not a message came
   (``resetIfSlowConsumer``; ``ConsumerWindowSizeTest.testReceiveImmediateWithZeroWindow``).
   :meth:`ServerConsumer.receive_credits` takes the credits as
   ``ServerConsumerImpl.receiveCredits`` does: 0 resets, more adds.
3. :meth:`ServerConsumer.acknowledge` is ``ServerConsumerImpl.acknowledge``:
   cumulative, it acknowledges every delivering message up to and including
   the one named (``AcknowledgeTest.testReceiveAckLastMessageOnly``), or all
   of them, one by one, in a transaction: its session's, or one of its own
   that it commits at the end. When it runs out of delivering messages
   before it finds the ID it throws (``ActiveMQIllegalStateException``,
   ``consumerNoReference``): its own transaction it rolls back, so every
   message it acknowledged goes back to the queue with the delivery spent
   (``RefsOperation.afterRollback``); the session's it marks rollback-only
   (LB-ACK, NOT_DELIVERED).
4. :meth:`ServerConsumer.cancel_refs` is ``ServerConsumerImpl.cancelRefs``
   on close: every delivering message leaves the consumer, in delivery
   order, for its queue to take back (:meth:`.queues.QueueImpl.cancel`,
   LB-CLOSE-RETURNS). A clean close does not count as a delivery attempt:
   each reference's delivery count, raised when the consumer took it, is
   lowered again (``updateDeliveryCountForCanceledRef``).
5. A consumer of a transacted session (``session``) acknowledges into the
   session's transaction (``ServerConsumerImpl.acknowledge(tx, ...)``,
   ``QueueImpl.acknowledge(tx, ref)``): the references leave its delivering
   ones but wait in the transaction until it commits or rolls back (LB-TX-ACK,
   :mod:`.sessions`); a consumer that acknowledges each message as it
   arrives does so into the transaction too.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

from .messages import CoreMessage, Filter, matches
from .sessions import TransactionImpl

if TYPE_CHECKING:
    from .queues import QueueImpl
    from .sessions import ServerSession


class HandleStatus(Enum):
    """``HandleStatus``: what a consumer does with a message offered to it."""

    HANDLED = "HANDLED"
    NO_MATCH = "NO_MATCH"
    BUSY = "BUSY"


class ServerConsumer:
    """``ServerConsumerImpl``: a named consumer on one queue, with an optional filter (a colour).

    ``pull`` makes it a consumer of window 0 (no credit until its client receives); ``manual_ack`` one whose
    client acknowledges later, so that what it takes stays among its delivering messages. ``session`` is its
    transacted session, or None when its session acknowledges outside any transaction.
    """

    def __init__(self, name: str, queue: QueueImpl, filter: Filter | None, pull: bool = False,
                 manual_ack: bool = False, session: ServerSession | None = None) -> None:
        self.name = name
        self.queue = queue
        self.filter = filter
        self.started = True
        self.available_credits: int | None = 0 if pull else None
        """``availableCredits``: None is window -1 (no flow control); a number is what a window-0 client granted."""
        self.manual_ack = manual_ack
        self.delivering_refs: list[CoreMessage] = []
        """``deliveringRefs``: handed over, not yet acknowledged, in delivery order."""
        self.session = session

    @property
    def pull(self) -> bool:
        """Whether it is a consumer of window 0, whose credits are counted."""
        return self.available_credits is not None

    def get_filter_string(self) -> str | None:
        """The filter as the ``CONSUMER_CREATED`` notification carries it (``_AMQ_FilterString``)."""
        return None if self.filter is None else self.filter.filter_string

    def set_started(self, started: bool) -> None:
        """``ServerConsumerImpl.setStarted``: its session stopped or started again."""
        self.started = started

    def handle(self, message: CoreMessage) -> HandleStatus:
        """``ServerConsumerImpl.handle``: BUSY when stopped or without credit, NO_MATCH when the filter says no,
        else HANDLED."""
        if not self.started:
            return HandleStatus.BUSY
        if self.available_credits is not None and self.available_credits <= 0:
            return HandleStatus.BUSY
        if not matches(self.filter, message):
            return HandleStatus.NO_MATCH
        return HandleStatus.HANDLED

    def proceed_deliver(self, message: CoreMessage) -> None:
        """``ServerConsumerImpl.handle`` and ``proceedDeliver``: spend a credit, count the delivery
        (``ref.incrementDeliveryCount()``), file the message as delivering; a client that acknowledges on
        arrival acknowledges it at once (LB-ACK)."""
        if self.available_credits is not None:
            self.available_credits -= 1
        self.delivering_refs.append(message.with_delivery_count(1))
        if not self.manual_ack:
            self.acknowledge(message.message_id)

    def receive_credits(self, credits: int) -> None:
        """``ServerConsumerImpl.receiveCredits`` for a consumer of window 0: 0 resets the credits, more adds to them."""
        if self.available_credits is None:
            return
        self.available_credits = 0 if credits == 0 else self.available_credits + credits

    def holds(self, message_id: int) -> bool:
        """Whether ``message_id`` is among its delivering messages."""
        return any(ref.message_id == message_id for ref in self.delivering_refs)

    def acknowledge(self, message_id: int | None = None) -> bool:
        """``ServerConsumerImpl.acknowledge``: every delivering message up to and including ``message_id`` (all of
        them when None) is acknowledged, one by one, in a transaction; False when it ran out before it found
        ``message_id`` (LB-ACK).

        The transaction is the session's (LB-TX-ACK), which a failure marks rollback-only, or one of its own
        (``startedTransaction``), committed at the end or rolled back on the failure, which gives back every
        message acknowledged in it with its delivery spent (``RefsOperation.afterRollback``).
        """
        tx = None if self.session is None else self.session.tx
        started = tx is None
        if tx is None:
            tx = TransactionImpl()
        while True:
            if not self.delivering_refs:
                if message_id is None:
                    break
                tx.mark_as_rollback_only()  # ActiveMQIllegalStateException (consumerNoReference)
                if started:
                    tx.rollback()
                return False
            ref = self.delivering_refs.pop(0)
            tx.get_refs_operation().add_ack(self.queue, ref)  # ref.acknowledge(tx, consumer)
            if ref.message_id == message_id:
                break
        if started:
            tx.commit()
        return True

    def get_acked(self) -> list[CoreMessage]:
        """What it acknowledged in its session's open transaction, in order (none outside a transaction)."""
        return [] if self.session is None else self.session.get_acked(self.queue)

    def cancel_refs(self) -> list[CoreMessage]:
        """``ServerConsumerImpl.cancelRefs``: give up every delivering message, in delivery order, each with its
        delivery count lowered again (a clean close or a rollback is no delivery attempt)."""
        refs, self.delivering_refs = self.delivering_refs, []
        return [ref.with_delivery_count(-1) for ref in refs]
