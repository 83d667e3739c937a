"""Conformance cases for a send that needs a queue of its own on the node it is sent from.

Introduction
------------
From Artemis 2.28.0 a core send of an ANYCAST message runs
``ServerSessionImpl.checkAutoCreate`` before it is routed (ARTEMIS-4089),
and from 2.31.1 it does so whenever the sending node has no queue of the
address, remote queues or not (ARTEMIS-4450). The check makes a queue named
like the address on that node where the address setting
``auto-create-queues`` is on, and refuses the send (AMQ229203) where it is
off, so such a message is never balanced onto remote queues alone. A message
without a routing type, or a MULTICAST one, is routed as it always was;
Artemis 2.11.0 routes every send to what exists (rule LB-AUTO-CREATE).

Sources: ``PostOfficeImpl.simpleRoute``, ``ServerSessionImpl.checkAutoCreate``,
Artemis's ``AutoDeleteClusteredDestinationTest`` (ARTEMIS-4450).
"""

from __future__ import annotations

from brokerspec.spec.addressing import RoutingType
from brokerspec.spec.balancing import AddNode, Attach, Configure, CreateQueue, LbType, QueryQueue, Send

from . import Case

ANYCAST, MULTICAST = RoutingType.ANYCAST, RoutingType.MULTICAST

SOURCE = ("PostOfficeImpl.simpleRoute calls ServerSessionImpl.checkAutoCreate when the node's bindings of the "
          "address hold no local queue (ARTEMIS-4089, 2.28.0; ARTEMIS-4450, 2.31.1)")

AUTO_CREATE: tuple[Case, ...] = (
    Case(
        name="balancing/anycast-send-refused-without-a-local-queue",
        summary="orders has a queue on n1 only and auto-create-queues is off: an ANYCAST message sent on n2 is "
                "refused from 2.28.0 (2.11 routes it to n1), while an untyped one is balanced to n1 and an ANYCAST "
                "one sent on n1 is routed there.",
        commands=(
            AddNode("n2"),
            CreateQueue("n1", "orders", "q1", ANYCAST),
            Attach("c1", "n1", "q1"),
            Send("n2", "orders", ANYCAST),
            Send("n2", "orders"),
            Send("n1", "orders", ANYCAST),
        ),
        rules=("LB-AUTO-CREATE", "LB-ROUND-ROBIN", "LB-CONSUMERS"),
        source=SOURCE,
    ),
    Case(
        name="balancing/anycast-send-makes-its-own-queue",
        summary="With auto-create-queues on, an ANYCAST message sent on n2 first makes n2 a queue named orders, in "
                "the same group as n1's q1; ON_DEMAND then sends it to q1, which has a consumer. A queue query on "
                "n2 finds the new queue, and later sends take turns as usual. 2.11 makes no queue.",
        commands=(
            AddNode("n2"),
            Configure("orders", LbType.ON_DEMAND, auto_create_queues=True),
            CreateQueue("n1", "orders", "q1", ANYCAST),
            Attach("c1", "n1", "q1"),
            Send("n2", "orders", ANYCAST),
            QueryQueue("n2", "orders"),
            Attach("c2", "n2", "orders"),
            Send("n2", "orders", ANYCAST),
            Send("n2", "orders", ANYCAST),
        ),
        rules=("LB-AUTO-CREATE", "LB-PREFERRED", "LB-QUERY-QUEUE", "LB-ROUND-ROBIN"),
        source=SOURCE + "; the queue is QueueConfiguration.of(address): named like the address, ANYCAST",
    ),
    Case(
        name="balancing/multicast-and-untyped-sends-make-no-queue",
        summary="With auto-create-queues on, neither a MULTICAST nor an untyped message sent on n2 makes a queue "
                "there: both reach n1's subscription, and a queue query on n2 finds no news.",
        commands=(
            AddNode("n2"),
            Configure("news", LbType.ON_DEMAND, auto_create_queues=True),
            CreateQueue("n1", "news", "sub", MULTICAST),
            Attach("c1", "n1", "sub"),
            Send("n2", "news", MULTICAST),
            Send("n2", "news"),
            QueryQueue("n2", "news"),
        ),
        rules=("LB-AUTO-CREATE", "LB-PREFERRED", "LB-QUERY-QUEUE"),
        source=SOURCE + "; a null routing type returns EXISTED at once, a MULTICAST one creates no queue",
    ),
    Case(
        name="balancing/queue-named-like-the-address-decides-the-send",
        summary="A MULTICAST queue called orders, bound to audit, makes an ANYCAST send to orders fail even with "
                "auto-create-queues on; an ANYCAST queue called billing, bound to ledger, lets an ANYCAST send to "
                "billing through without making a queue, and with no queue of its own billing has no bindings.",
        commands=(
            Configure("orders", LbType.ON_DEMAND, auto_create_queues=True),
            Configure("billing", LbType.ON_DEMAND, auto_create_queues=True),
            CreateQueue("n1", "audit", "orders", MULTICAST),
            CreateQueue("n1", "ledger", "billing", ANYCAST),
            Send("n1", "orders", ANYCAST),
            Send("n1", "billing", ANYCAST),
            QueryQueue("n1", "orders"),
        ),
        rules=("LB-AUTO-CREATE", "LB-NO-BINDINGS", "LB-QUERY-QUEUE"),
        source=SOURCE + "; ServerSessionImpl.checkAutoCreate locates the queue by the address's name and "
                        "answers NOT_FOUND for one that is not ANYCAST (ARTEMIS-4512, 2.32.0)",
    ),
)
