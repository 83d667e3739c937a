"""Conformance cases for consumers of window 0, acknowledgements, and what a consumer's close gives back.

Introduction
------------
A core consumer created with ``consumerWindowSize=0`` is sent nothing
until its client asks: ``ClientConsumerImpl.receiveImmediate`` grants one
credit, the queue hands over the first waiting message the consumer's
filter matches, and the credits go back to 0 (rule LB-PULL). It is a
consumer all the same: its queue is preferred by routing and gets no
redistributor while it is attached. A consumer whose client acknowledges
later holds what it takes; core acknowledgements are cumulative, so
acknowledging one message acknowledges every earlier one too, and a queue
counts held messages in its message count (LB-ACK). When such a consumer
closes, ``ServerConsumerImpl.close`` cancels what it still holds back to
the queue: before every waiting message in 2.11 (``QueueImpl.addHead``),
among them by message ID from 2.32.0 (``addSorted``, ARTEMIS-4517); the
queue's other consumers get them, and with none left the close's
redistributor moves them to another node
(``MessageRedistributionTest.testRedistributionWhenConsumerIsClosed``).
On a purge-on-no-consumers queue the order of removal and return decides
whether they survive the purge: 2.11 removes the consumer first, so the
purge comes before they return; from 2.31.0 (ARTEMIS-4410) they return
first and are purged with the rest (LB-CLOSE-RETURNS).

Sources: ``ServerConsumerImpl.handle``, ``acknowledge``, ``close`` and
``cancelRefs``; ``ClientConsumerImpl.receiveImmediate``; ``QueueImpl.addHead``,
``addSorted`` and ``getMessageCount``; Artemis's
``ConsumerWindowSizeTest.testReceiveImmediateWithZeroWindow``,
``AcknowledgeTest.testReceiveAckLastMessageOnly`` and
``MessageRedistributionTest.testRedistributionWhenConsumerIsClosed``.
"""

from __future__ import annotations

from brokerspec.spec.addressing import RoutingType
from brokerspec.spec.balancing import (
    Ack,
    AddNode,
    Attach,
    Close,
    Configure,
    CreateQueue,
    LbType,
    QueryQueue,
    Receive,
    Send,
)

from . import Case

ANYCAST = RoutingType.ANYCAST

PULL_SOURCE = ("ClientConsumerImpl.receiveImmediate on a consumer of window 0 (startSlowConsumer: one credit; "
               "resetIfSlowConsumer); ServerConsumerImpl.handle answers BUSY without credit; "
               "ConsumerWindowSizeTest.testReceiveImmediateWithZeroWindow")
ACK_SOURCE = ("ServerConsumerImpl.acknowledge (acknowledges deliveringRefs up to and including the message, in a "
              "transaction it rolls back, giving them all back, when it runs out: ActiveMQIllegalStateException); "
              "QueueImpl.getMessageCount counts delivering "
              "messages; AcknowledgeTest.testReceiveAckLastMessageOnly")
CLOSE_SOURCE = ("ServerConsumerImpl.close and cancelRefs; QueueImpl.addHead (2.11), addSorted (ARTEMIS-3093, "
                "ARTEMIS-4517); ARTEMIS-4410 (2.31.0: refs cancelled before the consumer is removed)")

PULL: tuple[Case, ...] = (
    Case(
        name="balancing/pull-consumer-receives-one-message-at-a-time",
        summary="A consumer of window 0 on orders is pushed nothing: two sends wait. Each receive takes the first "
                "waiting message, a third finds none, and a query counts what is left; a consumer that is pushed "
                "to cannot receive this way.",
        commands=(
            CreateQueue("n1", "orders", "orders", ANYCAST),
            Attach("c1", "n1", "orders", pull=True),
            Send("n1", "orders"),
            Send("n1", "orders"),
            Receive("c1"),
            QueryQueue("n1", "orders"),
            Receive("c1"),
            Receive("c1"),
            Attach("c2", "n1", "orders"),
            Receive("c2"),
        ),
        rules=("LB-PULL", "LB-CONSUMERS", "LB-QUERY-QUEUE"),
        source=PULL_SOURCE,
    ),
    Case(
        name="balancing/pull-consumer-takes-the-first-message-its-filter-matches",
        summary="A consumer of window 0 that takes only red messages passes over a waiting blue one and takes the "
                "first red one, then the next red one; the blue one is still there for a consumer without a "
                "filter.",
        commands=(
            CreateQueue("n1", "orders", "orders", ANYCAST),
            Attach("c1", "n1", "orders", filter="red", pull=True),
            Send("n1", "orders", color="blue"),
            Send("n1", "orders", color="red"),
            Send("n1", "orders", color="red"),
            Receive("c1"),
            Receive("c1"),
            Receive("c1"),
            Attach("c2", "n1", "orders"),
        ),
        rules=("LB-PULL", "LB-CONSUMERS"),
        source=PULL_SOURCE + "; QueueImpl.deliver offers the waiting messages in order",
    ),
    Case(
        name="balancing/pull-consumer-draws-messages-to-its-node",
        summary="Under ON_DEMAND with delay 0, a consumer of window 0 on n2 makes n2's queue the preferred one, so "
                "a message sent on n1 goes there and waits until the consumer receives it; a consumer attaching on "
                "n1 then gives n2 no redistributor, since n2 still has a consumer, and the next messages take "
                "turns between the two.",
        commands=(
            AddNode("n2"),
            Configure("orders", LbType.ON_DEMAND, 0),
            CreateQueue("n1", "orders", "orders", ANYCAST),
            CreateQueue("n2", "orders", "orders", ANYCAST),
            Attach("c2", "n2", "orders", pull=True),
            Send("n1", "orders"),
            Attach("c1", "n1", "orders"),
            Send("n1", "orders"),
            Send("n1", "orders"),
            Receive("c2"),
            Receive("c2"),
        ),
        rules=("LB-PULL", "LB-PREFERRED", "RD-DELAY", "LB-ROUND-ROBIN"),
        source=PULL_SOURCE + "; RemoteQueueBindingImpl counts consumers whatever their window "
                             "(QueueImpl.hasMatchingConsumer ignores credit), QueueImpl.addRedistributor",
    ),
)

ACKS: tuple[Case, ...] = (
    Case(
        name="balancing/acknowledgement-is-cumulative",
        summary="A consumer that acknowledges later holds three messages, which a query counts; acknowledging the "
                "second acknowledges the first too, and acknowledging without a message acknowledges the rest.",
        commands=(
            CreateQueue("n1", "orders", "orders", ANYCAST),
            Attach("c1", "n1", "orders", manual_ack=True),
            Send("n1", "orders"),
            Send("n1", "orders"),
            Send("n1", "orders"),
            QueryQueue("n1", "orders"),
            Ack("c1", 2),
            QueryQueue("n1", "orders"),
            Ack("c1"),
            QueryQueue("n1", "orders"),
        ),
        rules=("LB-ACK", "LB-QUERY-QUEUE"),
        source=ACK_SOURCE,
    ),
    Case(
        name="balancing/acknowledging-a-message-not-held-gives-back-what-is-held",
        summary="Once message 1 is acknowledged, acknowledging it again fails, and not quietly: the consumer's "
                "held message 2 goes back to the queue, which hands it to the consumer again. A message it never "
                "took does the same; a consumer that acknowledges on arrival holds nothing, so its acknowledgement "
                "is simply refused.",
        commands=(
            CreateQueue("n1", "orders", "orders", ANYCAST),
            Attach("c1", "n1", "orders", manual_ack=True),
            Send("n1", "orders"),
            Send("n1", "orders"),
            Ack("c1", 1),
            Ack("c1", 1),
            QueryQueue("n1", "orders"),
            Ack("c1", 9),
            Attach("c2", "n1", "orders"),
            Send("n1", "orders"),
            Send("n1", "orders"),
            Ack("c2", 4),
            QueryQueue("n1", "orders"),
        ),
        rules=("LB-ACK", "LB-CONSUMERS", "LB-QUERY-QUEUE"),
        source=ACK_SOURCE,
    ),
)

CLOSES: tuple[Case, ...] = (
    Case(
        name="balancing/close-returns-held-messages-to-the-other-consumers",
        summary="A consumer that acknowledges later holds two messages when it closes: both come back to the queue "
                "and go to its two other consumers in turn.",
        commands=(
            CreateQueue("n1", "orders", "orders", ANYCAST),
            Attach("c1", "n1", "orders", manual_ack=True),
            Send("n1", "orders"),
            Send("n1", "orders"),
            Attach("c2", "n1", "orders"),
            Attach("c3", "n1", "orders"),
            Close("c1"),
            QueryQueue("n1", "orders"),
        ),
        rules=("LB-CLOSE-RETURNS", "LB-CONSUMERS", "LB-QUERY-QUEUE"),
        source=CLOSE_SOURCE + "; JMSOrderTest.testReceiveSomeThenClose",
    ),
    Case(
        name="balancing/close-return-order-2.11-head-latest-arrival",
        summary="A red-only consumer holds messages 1 and 3 while blue message 2 waits beside a consumer of window "
                "0. When the red one closes, 2.11 puts 1 and 3 back before 2 and the receives take 1, 3, 2; from "
                "2.32 they go back in arrival order and the receives take 1, 2, 3.",
        commands=(
            CreateQueue("n1", "orders", "orders", ANYCAST),
            Attach("c1", "n1", "orders", filter="red", manual_ack=True),
            Attach("c2", "n1", "orders", pull=True),
            Send("n1", "orders", color="red"),
            Send("n1", "orders", color="blue"),
            Send("n1", "orders", color="red"),
            Close("c1"),
            Receive("c2"),
            Receive("c2"),
            Receive("c2"),
        ),
        rules=("LB-CLOSE-RETURNS", "LB-PULL"),
        source=CLOSE_SOURCE + "; the 2.32.0 order is message-ID order here, messages reaching a queue in ID order",
    ),
    Case(
        name="balancing/returned-messages-redistribute-when-no-consumer-is-left",
        summary="Under ON_DEMAND with delay 0, sends from n1 take turns between c1 on n1, which holds what it "
                "takes, and c2 on n2. When c1 closes, its two messages come back to n1's queue, which has no "
                "consumer left: its redistributor moves both to n2, where c2 takes the copies.",
        commands=(
            AddNode("n2"),
            Configure("orders", LbType.ON_DEMAND, 0),
            CreateQueue("n1", "orders", "orders", ANYCAST),
            CreateQueue("n2", "orders", "orders", ANYCAST),
            Attach("c1", "n1", "orders", manual_ack=True),
            Attach("c2", "n2", "orders"),
            Send("n1", "orders"),
            Send("n1", "orders"),
            Send("n1", "orders"),
            Close("c1"),
            QueryQueue("n1", "orders"),
        ),
        rules=("LB-CLOSE-RETURNS", "RD-TRIGGER-CLOSE", "RD-TARGET", "RD-NEW-ID", "LB-ROUND-ROBIN"),
        source=CLOSE_SOURCE + "; MessageRedistributionTest.testRedistributionWhenConsumerIsClosed",
    ),
    Case(
        name="balancing/purge-on-no-consumers-and-returned-messages",
        summary="A purge-on-no-consumers queue's only consumer takes only red messages and holds red message 1 "
                "while blue message 2 waits. When it closes, 2.11 purges message 2 first and message 1 comes back "
                "after, so it survives for the next consumer; from 2.31 message 1 comes back first and the purge "
                "drops both.",
        commands=(
            CreateQueue("n1", "jobs", "jobs", ANYCAST, purge_on_no_consumers=True),
            Attach("c1", "n1", "jobs", filter="red", manual_ack=True),
            Send("n1", "jobs", color="red"),
            Send("n1", "jobs", color="blue"),
            Close("c1"),
            QueryQueue("n1", "jobs"),
            Attach("c2", "n1", "jobs"),
        ),
        rules=("LB-CLOSE-RETURNS", "LB-PURGE-ON-NO-CONSUMERS", "LB-QUERY-QUEUE"),
        source=CLOSE_SOURCE + "; QueueManagerImpl.doIt (the purge when the consumer count reaches 0)",
    ),
)

CONSUMERS: tuple[Case, ...] = (*PULL, *ACKS, *CLOSES)
