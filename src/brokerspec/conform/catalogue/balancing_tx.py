"""Conformance cases for transactions in a cluster: sends that wait for a commit, acknowledgements a rollback undoes.

Introduction
------------
A send in a transacted session is routed when it is sent: the binding of
each routing-name group is chosen and the round-robin position moves then
(``BindingsImpl.route``), and ``PostOfficeImpl.processRoute`` adds the
references to the transaction, which ``AddOperation.afterCommit`` puts in
their queues at the commit. A rollback discards them and gives the
positions back to nobody; a queue deleted before the commit takes its
references with it, since they hold the queue object, and a queue made again
under the same name gets nothing (LB-TX-SEND, LB-TX-COMMIT).

A transacted consumer's acknowledgements join its session's transaction
(``RefsOperation``): the queue still counts the messages until the commit
(LB-TX-ACK). ``ServerSessionImpl.rollback`` cancels what the consumer holds
into the transaction after what it acknowledged, and
``RefsOperation.afterRollback`` gives them all back: each acknowledged one
has used up a delivery, and ``QueueImpl.checkRedelivery`` drops one whose
count reaches ``max-delivery-attempts`` (10) when there is no dead-letter
address (LB-TX-MAX-DELIVERY); the rest go back to the queue's head (2.11,
``addHead``) or among the waiting ones by arrival (later, ``addSorted``),
and the queue offers them again (LB-TX-ROLLBACK). Closing a transacted
consumer closes the consumer first (what it holds goes back) and then its
session, whose rollback returns what it acknowledged, which the close's
redistributor then moves to a node with a consumer.

Sources: ``ServerSessionImpl.send``, ``commit``, ``rollback``, ``doRollback``
and ``doClose``; ``ClientSessionImpl.closeChildren``; ``PostOfficeImpl.processRoute``;
``AddOperation.afterCommit``; ``RefsOperation.afterRollback``;
``QueueImpl.postRollback`` and ``checkRedelivery``; Artemis's
``TransactionalSendTest.testSendWithCommit``, ``testSendWithRollback``,
``JMSOrderTest.testReceiveSomeThenRollback``, ``RedeliveryConsumerTest.testDelivery``.
"""

from __future__ import annotations

from brokerspec.spec.addressing import RoutingType
from brokerspec.spec.balancing import (
    MAX_DELIVERY_ATTEMPTS,
    Ack,
    AddNode,
    Attach,
    Close,
    Commit,
    Configure,
    CreateQueue,
    DeleteQueue,
    LbType,
    QueryQueue,
    Receive,
    Rollback,
    Send,
)

from . import Case

ANYCAST = RoutingType.ANYCAST

SEND_SOURCE = ("PostOfficeImpl.route and processRoute (references join the transaction; BindingsImpl.route moves the "
               "position at the send); AddOperation.afterCommit; TransactionalSendTest.testSendWithCommit, "
               "testSendWithRollback")
ACK_SOURCE = ("ServerConsumerImpl.acknowledge(tx); RefsOperation.afterCommit and afterRollback; "
              "ServerSessionImpl.rollback and doRollback (cancelRefs after the acknowledged ones); "
              "QueueImpl.postRollback (addHead in 2.11, addSorted later); JMSOrderTest.testReceiveSomeThenRollback")

SENDS: tuple[Case, ...] = (
    Case(
        name="balancing/transacted-send-lands-at-the-commit",
        summary="Two sends in session t1 reach nobody: the consumer gets nothing and a query counts no message. "
                "The commit delivers both, in order; a rollback of the next send leaves nothing behind.",
        commands=(
            CreateQueue("n1", "orders", "orders", ANYCAST),
            Attach("c1", "n1", "orders"),
            Send("n1", "orders", tx="t1"),
            Send("n1", "orders", tx="t1"),
            QueryQueue("n1", "orders"),
            Commit("t1"),
            Send("n1", "orders", tx="t1"),
            Rollback("t1"),
            QueryQueue("n1", "orders"),
        ),
        rules=("LB-TX-SEND", "LB-TX-COMMIT", "LB-TX-ROLLBACK", "LB-QUERY-QUEUE"),
        source=SEND_SOURCE,
    ),
    Case(
        name="balancing/transacted-send-takes-its-turn-at-the-send",
        summary="Two ANYCAST queues on orders take turns. A send in t1 takes the first turn and is rolled back: the "
                "turn is spent, so the next plain send goes to the second queue. Another send in t1 takes the "
                "first queue's turn again, a plain send the second's, and the commit puts the transacted one in "
                "the first queue.",
        commands=(
            CreateQueue("n1", "orders", "q1", ANYCAST),
            CreateQueue("n1", "orders", "q2", ANYCAST),
            Send("n1", "orders", tx="t1"),
            Rollback("t1"),
            Send("n1", "orders"),
            Send("n1", "orders", tx="t1"),
            Send("n1", "orders"),
            Commit("t1"),
            QueryQueue("n1", "q1"),
            QueryQueue("n1", "q2"),
        ),
        rules=("LB-TX-SEND", "LB-ROUND-ROBIN", "LB-TX-COMMIT", "LB-TX-ROLLBACK"),
        source=SEND_SOURCE,
    ),
    Case(
        name="balancing/transacted-send-crosses-the-cluster-at-the-commit",
        summary="Under ON_DEMAND, a consumer on n2 draws n1's sends to n2. A send in t1 on n1 is routed there at "
                "once but arrives only at the commit; a send in t1 from n2 is refused, the session being "
                "connected to n1.",
        commands=(
            AddNode("n2"),
            Configure("orders", LbType.ON_DEMAND, -1),
            CreateQueue("n1", "orders", "orders", ANYCAST),
            CreateQueue("n2", "orders", "orders", ANYCAST),
            Attach("c2", "n2", "orders"),
            Send("n1", "orders", tx="t1"),
            Send("n2", "orders", tx="t1"),
            QueryQueue("n2", "orders"),
            Commit("t1"),
        ),
        rules=("LB-TX-SEND", "LB-TX-COMMIT", "LB-PREFERRED"),
        source=SEND_SOURCE + "; ServerSessionImpl belongs to one connection, so to one node",
    ),
    Case(
        name="balancing/transacted-send-to-a-queue-deleted-before-the-commit",
        summary="A send in t1 is routed to orders; the queue is deleted and made again under the same name before "
                "the commit, which then delivers nothing: the reference belonged to the old queue.",
        commands=(
            CreateQueue("n1", "orders", "orders", ANYCAST),
            Send("n1", "orders", tx="t1"),
            DeleteQueue("n1", "orders"),
            CreateQueue("n1", "orders", "orders", ANYCAST),
            Commit("t1"),
            QueryQueue("n1", "orders"),
        ),
        rules=("LB-TX-SEND", "LB-TX-COMMIT", "LB-DELETE-QUEUE"),
        source=SEND_SOURCE + "; PostOfficeImpl.processRoute binds each reference to the queue object "
                             "(RouteContextList.getDurableQueues), AddOperation adds it there",
    ),
)

ACKS: tuple[Case, ...] = (
    Case(
        name="balancing/transacted-consumer-acknowledgements-wait-for-the-commit",
        summary="A transacted consumer that acknowledges each message as it takes it takes two; a query still "
                "counts them, since the acknowledgements wait in the transaction. After the commit they are gone.",
        commands=(
            CreateQueue("n1", "orders", "orders", ANYCAST),
            Attach("c1", "n1", "orders", transacted=True),
            Send("n1", "orders"),
            Send("n1", "orders"),
            QueryQueue("n1", "orders"),
            Commit("c1"),
            QueryQueue("n1", "orders"),
        ),
        rules=("LB-TX-ACK", "LB-TX-COMMIT", "LB-QUERY-QUEUE"),
        source=ACK_SOURCE + "; QueueImpl.getDeliveringCount",
    ),
    Case(
        name="balancing/rollback-returns-what-was-acknowledged-then-what-is-held",
        summary="A transacted consumer of window 0 that takes only red messages receives two red ones and "
                "acknowledges the first; a blue one waits. The rollback gives back the acknowledged one, then the "
                "held one: before the blue one under 2.11, among the waiting ones by arrival later, which the "
                "order a new consumer takes them in shows.",
        commands=(
            CreateQueue("n1", "orders", "orders", ANYCAST),
            Attach("c1", "n1", "orders", filter="red", pull=True, manual_ack=True, transacted=True),
            Send("n1", "orders", color="blue"),
            Send("n1", "orders", color="red"),
            Send("n1", "orders", color="red"),
            Receive("c1"),
            Receive("c1"),
            Ack("c1", 2),
            Rollback("c1"),
            QueryQueue("n1", "orders"),
            Attach("c2", "n1", "orders", pull=True),
            Receive("c2"),
            Receive("c2"),
            Receive("c2"),
        ),
        rules=("LB-TX-ROLLBACK", "LB-TX-ACK", "LB-PULL"),
        source=ACK_SOURCE,
    ),
    Case(
        name="balancing/rolled-back-messages-redistribute-when-the-consumer-closes",
        summary="Under ON_DEMAND with delay 0, a transacted consumer on n1 takes two messages; a consumer attaches "
                "on n2. Closing the n1 consumer rolls its session back: the messages return to n1's queue, which "
                "has no consumer left, and the close's redistributor moves them to n2.",
        commands=(
            AddNode("n2"),
            Configure("orders", LbType.ON_DEMAND, 0),
            CreateQueue("n1", "orders", "orders", ANYCAST),
            CreateQueue("n2", "orders", "orders", ANYCAST),
            Attach("c1", "n1", "orders", transacted=True),
            Send("n1", "orders"),
            Send("n1", "orders"),
            Attach("c2", "n2", "orders"),
            Close("c1"),
        ),
        rules=("LB-TX-ROLLBACK", "RD-TRIGGER-CLOSE", "RD-TARGET"),
        source=ACK_SOURCE + "; ClientSessionImpl.closeChildren (the consumer closes before the session); "
                            "ServerSessionImpl.doClose rolls the transaction back; "
                            "MessageRedistributionTest.testRedistributionWhenConsumerIsClosed",
    ),
    Case(
        name="balancing/rollbacks-spend-a-message-s-deliveries",
        summary=f"A transacted consumer takes a message and rolls back {MAX_DELIVERY_ATTEMPTS} times; each rollback "
                "gives the message back and the consumer takes it again, until the last rollback finds its "
                "deliveries spent and drops it (no dead-letter address).",
        commands=(
            CreateQueue("n1", "orders", "orders", ANYCAST),
            Attach("c1", "n1", "orders", transacted=True),
            Send("n1", "orders"),
            *(Rollback("c1") for _ in range(MAX_DELIVERY_ATTEMPTS)),
            QueryQueue("n1", "orders"),
        ),
        rules=("LB-TX-MAX-DELIVERY", "LB-TX-ROLLBACK"),
        source="QueueImpl.checkRedelivery (deliveryCount >= maxDeliveries: sendToDeadLetterAddress, which drops the "
               "message without a dead-letter address); AddressSettings.DEFAULT_MAX_DELIVERY_ATTEMPTS; "
               "RedeliveryConsumerTest.testDelivery; DeadLetterAddressTest.testBasicSendWithDLAButNoBinding",
    ),
    Case(
        name="balancing/failed-acknowledgement-makes-the-transaction-rollback-only",
        summary="A transacted consumer of window 0 that acknowledges later receives two messages and acknowledges "
                "one it never took: the acknowledgement fails, both messages are acknowledged in the transaction, "
                "which is now rollback-only, so the commit fails and gives them back; a new commit succeeds.",
        commands=(
            CreateQueue("n1", "orders", "orders", ANYCAST),
            Attach("c1", "n1", "orders", pull=True, manual_ack=True, transacted=True),
            Send("n1", "orders"),
            Send("n1", "orders"),
            Receive("c1"),
            Receive("c1"),
            Ack("c1", 9),
            QueryQueue("n1", "orders"),
            Commit("c1"),
            Commit("c1"),
            QueryQueue("n1", "orders"),
        ),
        rules=("LB-ACK", "LB-TX-COMMIT", "LB-TX-ROLLBACK"),
        source=ACK_SOURCE + "; ServerConsumerImpl.acknowledge marks the session's transaction rollback-only "
                            "(tx.markAsRollbackOnly) when the message is not there; TransactionImpl.commit rolls a "
                            "rollback-only transaction back (ActiveMQTransactionRolledBackException)",
    ),
    Case(
        name="balancing/consume-and-send-in-one-transaction",
        summary="A transacted consumer on in takes a message and sends one to out in its own session. The rollback "
                "gives the message back to in (and the consumer takes it again) and out gets nothing; the commit "
                "of a second send delivers it to out.",
        commands=(
            CreateQueue("n1", "in", "in", ANYCAST),
            CreateQueue("n1", "out", "out", ANYCAST),
            Attach("c1", "n1", "in", transacted=True),
            Send("n1", "in"),
            Send("n1", "out", tx="c1"),
            Rollback("c1"),
            QueryQueue("n1", "out"),
            Send("n1", "out", tx="c1"),
            Commit("c1"),
            QueryQueue("n1", "in"),
            QueryQueue("n1", "out"),
        ),
        rules=("LB-TX-SEND", "LB-TX-ROLLBACK", "LB-TX-COMMIT"),
        source=ACK_SOURCE + "; " + SEND_SOURCE,
    ),
    Case(
        name="balancing/transaction-refusals",
        summary="A commit of a session nothing opened, a commit and a transacted send naming a consumer that is "
                "not transacted, and an attach under a producer session's name are refused.",
        commands=(
            CreateQueue("n1", "orders", "orders", ANYCAST),
            Commit("t1"),
            Attach("c1", "n1", "orders"),
            Rollback("c1"),
            Send("n1", "orders", tx="c1"),
            Send("n1", "orders", tx="t2"),
            Attach("t2", "n1", "orders"),
            Rollback("t2"),
        ),
        rules=("LB-TX-COMMIT", "LB-TX-SEND"),
        source="brokerspec's naming of sessions, bookkeeping as consumer names are: a session is transacted when a "
               "transacted send or consumer opened it (ClientSessionFactory.createSession(autoCommitSends=false, "
               "autoCommitAcks=false)), and sessions and consumers share one set of names",
    ),
)

TRANSACTIONS: tuple[Case, ...] = (*SENDS, *ACKS)
"""Every transaction case."""
