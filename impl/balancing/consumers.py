"""The fast broker's consumer bookkeeping: what a receive takes, what an acknowledgement keeps, where a close's
messages go back to.

Introduction
------------
Three small operations on the records of :mod:`.records`, kept apart from
the broker's routing so that each reads as the rule it implements:

* :func:`take_first_match`: a consumer of window 0 that receives takes the
  first waiting message of its queue that its filter matches, nothing when
  its session is stopped (LB-PULL; ``ClientConsumerImpl.receiveImmediate``
  gives it one credit, ``ConsumerWindowSizeTest.testReceiveImmediateWithZeroWindow``).
  The queue's consumer position does not move.
* :func:`acknowledge`: cumulative, up to and including the message named,
  or everything held; for a message the consumer does not hold it
  acknowledges nothing and says so, and the broker fails the
  acknowledgement (:meth:`.sessions.TransactedSessions._fail_ack`; LB-ACK; ``ServerConsumerImpl.acknowledge``,
  ``AcknowledgeTest.testReceiveAckLastMessageOnly``); a transacted consumer's
  acknowledged messages move to its transaction (LB-TX-ACK).
* :func:`merge_returned`: the waiting list once a closing consumer's
  messages are back: in front, in delivery order, as 2.11's
  ``QueueImpl.addHead`` puts them, or among the waiting ones by message ID
  (``addSorted``, ARTEMIS-3093, ARTEMIS-4517) (LB-CLOSE-RETURNS).

The broker builds the events; these functions only move messages.
"""

from __future__ import annotations

from operator import attrgetter

from .records import ConsumerRecord, Waiting

_by_id = attrgetter("id")


def take_first_match(consumer: ConsumerRecord) -> Waiting | None:
    """Take off ``consumer``'s queue the first waiting message its filter matches; None when it is paused or
    no waiting message matches (LB-PULL)."""
    if consumer.paused:
        return None
    pending = consumer.queue.pending
    for index, message in enumerate(pending):
        if consumer.matches(message.color):
            del pending[index]
            return message
    return None


def acknowledge(consumer: ConsumerRecord, message_id: int | None) -> bool:
    """Acknowledge what ``consumer`` holds up to and including ``message_id`` (everything when None); False, and
    nothing acknowledged yet, when it does not hold that message (LB-ACK). A transacted consumer's acknowledged
    messages wait in its transaction (``ServerConsumerImpl.acknowledge(tx, ...)``; LB-TX-ACK)."""
    held = consumer.held
    count = len(held)
    if message_id is not None:
        count = next((index + 1 for index, message in enumerate(held) if message.id == message_id), 0)
        if not count:
            return False
    if consumer.transacted:
        consumer.acked += held[:count]
    del held[:count]
    return True


def merge_returned(held: list[Waiting], pending: list[Waiting], at_head: bool) -> list[Waiting]:
    """The queue's waiting messages with a closing consumer's ``held`` ones back among them (LB-CLOSE-RETURNS),
    or a rolled-back transaction's (``QueueImpl.postRollback``, LB-TX-ROLLBACK)."""
    if at_head:
        return [*held, *pending]
    return sorted([*held, *pending], key=_by_id)
