"""Conformance cases for how load balancing reads addresses: wildcards, FQQN consumers, acceptor prefixes.

Introduction
------------
A queue bound to a wildcard address (``news.#``, ``news.*``) receives what
is sent to every plain address the wildcard matches: Artemis's
``WildcardAddressManager`` copies it into the bindings of each such address,
where it balances in its own routing-name group with a round-robin position
kept per plain address. The cases show which addresses match (``#`` any
number of words, none included; ``*`` exactly one), that a send to a wild
address reaches only its own queues, that a wildcard queue on another node
is a remote binding like any other, and the two version differences that
change what a client sees: how ``#`` followed by more words matches before
Artemis 2.17.0 (ARTEMIS-3033), and which bindings a redistributor searches
before 2.19.0 (ARTEMIS-3223).

``FQQN_CONSUMERS`` shows the consumer half of ARTEMIS-3918: a consumer that
attaches by ``address::queue`` lets the other nodes find their own queue of
that name, which an ANYCAST queue named otherwise than its address is never
found by otherwise.

``PREFIXES`` shows acceptor prefixes (``anycastPrefix``, ``multicastPrefix``)
on a cluster: the prefix gives a send its routing type, and with an FQQN
the queue part survives only before 2.19.0 (ARTEMIS-1612).

Sources: ``WildcardAddressManager``, ``AddressMap``/``AddressPartNode``
(2.17.0 on) and ``AddressImpl.matches`` (before), ``PostOfficeImpl.redistribute``,
Artemis's ``WildcardAddressManagerUnitTest``, ``AddressMapUnitTest`` and
the user manual's wildcard-routing chapter.
"""

from __future__ import annotations

from brokerspec.spec.addressing import RoutingType
from brokerspec.spec.balancing import (
    AddNode,
    Attach,
    Close,
    Configure,
    CreateQueue,
    DeleteQueue,
    LbType,
    QueryQueue,
    Send,
    SetPrefix,
    UpdateQueue,
)

from . import Case

ANYCAST, MULTICAST = RoutingType.ANYCAST, RoutingType.MULTICAST

WILDCARDS: tuple[Case, ...] = (
    Case(
        name="balancing/wildcard-queue-receives-from-every-matching-address",
        summary="A queue on news.# receives what is sent to news, news.eu and news.eu.fr; one on news.* only what "
                "is sent to a one-word child such as news.eu; an address no wildcard matches has no bindings.",
        commands=(
            CreateQueue("n1", "news.#", "all", MULTICAST),
            CreateQueue("n1", "news.*", "children", MULTICAST),
            CreateQueue("n1", "news.eu", "eu", MULTICAST),
            Send("n1", "news.eu"),
            Send("n1", "news.eu.fr"),
            Send("n1", "news"),
            Send("n1", "sport.eu"),
            QueryQueue("n1", "all"),
            QueryQueue("n1", "children"),
        ),
        rules=("LB-WILDCARD-MATCH", "LB-WILDCARD-BINDINGS", "LB-NO-BINDINGS"),
        source="WildcardAddressManager.getBindingsForRoutingAddress; AddressMapUnitTest; Artemis user manual, "
               "wildcard-syntax.adoc ('#' matches any sequence of zero or more words)",
    ),
    Case(
        name="balancing/anycast-wildcard-queues-form-their-own-group-with-a-turn-per-address",
        summary="ANYCAST queues on orders.# form the group orders.#, apart from the queue of orders.eu itself, so a "
                "message to orders.eu reaches one of each; under STRICT the wildcard group keeps one turn for "
                "orders.eu and another for orders.us.",
        commands=(
            Configure("orders.eu", LbType.STRICT),
            Configure("orders.us", LbType.STRICT),
            Configure("orders.#", LbType.STRICT),
            CreateQueue("n1", "orders.eu", "eu", ANYCAST),
            CreateQueue("n1", "orders.#", "w1", ANYCAST),
            CreateQueue("n1", "orders.#", "w2", ANYCAST),
            Send("n1", "orders.eu"),
            Send("n1", "orders.eu"),
            Send("n1", "orders.us"),
            Send("n1", "orders.eu"),
            QueryQueue("n1", "w1"),
            QueryQueue("n1", "w2"),
        ),
        rules=("LB-WILDCARD-BINDINGS", "LB-GROUPS", "LB-ROUND-ROBIN"),
        source="WildcardAddressManager.addBinding (a wildcard binding joins each matching address's Bindings); "
               "LocalQueueBinding.getRoutingName; CopyOnWriteBindings (one BindingIndex per routing name)",
    ),
    Case(
        name="balancing/send-to-a-wildcard-address-reaches-only-its-own-queues",
        summary="A message sent to the wild address news.# itself goes to the queues bound to news.#, not to those "
                "of news.* or news.eu; once its queue is gone such a send finds no bindings.",
        commands=(
            CreateQueue("n1", "news.#", "all", MULTICAST),
            CreateQueue("n1", "news.*", "children", MULTICAST),
            CreateQueue("n1", "news.eu", "eu", MULTICAST),
            Send("n1", "news.#"),
            DeleteQueue("n1", "all"),
            Send("n1", "news.eu"),
            QueryQueue("n1", "children"),
        ),
        rules=("LB-WILDCARD-SEND", "LB-WILDCARD-BINDINGS", "LB-DELETE-QUEUE"),
        source="WildcardAddressManager.getBindingsForRoutingAddress (an address's own bindings come first), "
               "removeBinding (a wildcard binding leaves every matching address)",
    ),
    Case(
        name="balancing/wildcard-queue-on-another-node-takes-messages-on-demand",
        summary="A queue on news.# on n2 with a consumer is a remote binding of news.eu on n1: under ON_DEMAND a "
                "message sent to news.eu on n1 goes to n2's consumer rather than to n1's idle wildcard queue.",
        commands=(
            AddNode("n2"),
            CreateQueue("n1", "news.#", "all", ANYCAST),
            CreateQueue("n2", "news.#", "all", ANYCAST),
            Attach("c2", "n2", "all"),
            Send("n1", "news.eu"),
            Send("n1", "news.eu"),
            QueryQueue("n1", "all"),
        ),
        rules=("LB-WILDCARD-BINDINGS", "LB-PREFERRED", "LB-QUEUE-PER-NODE"),
        source="WildcardAddressManager.addBinding (remote bindings are added like local ones); "
               "RemoteQueueBindingImpl.isHighAcceptPriority",
    ),
    Case(
        name="balancing/any-words-wildcard-before-a-word",
        summary="#.eu matches eu.eu (the '#' standing for the first eu) from 2.17.0; before, '#' runs to the first "
                "eu and the rest cannot match, so nothing is bound. Both match fr.eu and eu.",
        commands=(
            CreateQueue("n1", "#.eu", "europe", MULTICAST),
            Send("n1", "eu.eu"),
            Send("n1", "fr.eu"),
            Send("n1", "eu"),
            QueryQueue("n1", "europe"),
        ),
        rules=("LB-WILDCARD-MATCH", "LB-NO-BINDINGS"),
        source="AddressPartNode.visitPathTailMatch (ARTEMIS-3033, 2.17.0); AddressImpl.matches before it",
    ),
    Case(
        name="balancing/wildcard-queue-redistributes-within-the-message-address",
        summary="n1's queue w is bound to news.# and n2's queue w to news.eu: a message sent to news.eu waits on "
                "n1 (ON_DEMAND, no consumer) and, when a consumer attaches to n2's w, moves there from 2.19.0, "
                "where the redistributor searches news.eu's bindings; before, it searches news.#'s, which lack "
                "n2's queue, and the message stays.",
        commands=(
            AddNode("n2"),
            Configure("news.eu", LbType.ON_DEMAND, 0),
            Configure("news.#", LbType.ON_DEMAND, 0),
            CreateQueue("n1", "news.#", "w", MULTICAST),
            CreateQueue("n2", "news.eu", "w", MULTICAST),
            Send("n1", "news.eu", MULTICAST),
            Attach("c2", "n2", "w"),
            QueryQueue("n1", "w"),
        ),
        rules=("RD-WILDCARD", "RD-TRIGGER-REMOTE-CONSUMER", "LB-WILDCARD-BINDINGS"),
        source="PostOfficeImpl.redistribute (ARTEMIS-3223, 2.19.0: the message's address, not the queue's)",
    ),
)

FQQN_CONSUMERS: tuple[Case, ...] = (
    Case(
        name="balancing/fqqn-consumer-arms-redistribution-of-a-queue-named-apart-from-its-address",
        summary="q1 is an ANYCAST queue of orders on n1 and n2; a message sent to orders::q1 waits on n1. A "
                "consumer attaching to n2's q1 by the FQQN orders::q1 makes n1 find its own q1 from 2.25.0, and "
                "the message, redistributed in the group of the FQQN's address, moves to it; one attaching by "
                "name makes n1 look for a queue named orders, finds none, and the next message stays.",
        commands=(
            AddNode("n2"),
            Configure("orders", LbType.ON_DEMAND, 0),
            CreateQueue("n1", "orders", "q1", ANYCAST),
            CreateQueue("n2", "orders", "q1", ANYCAST),
            Send("n1", "orders", fqqn_queue="q1"),
            Attach("c2", "n2", "q1", fqqn_address="orders"),
            Close("c2"),
            Send("n1", "orders", fqqn_queue="q1"),
            Attach("c3", "n2", "q1"),
            QueryQueue("n1", "q1"),
        ),
        rules=("RD-TRIGGER-FQQN-CONSUMER", "RD-TRIGGER-REMOTE-CONSUMER", "RD-GROUP", "LB-CONSUMERS"),
        source="PostOfficeImpl.onNotification (CONSUMER_CREATED: getBinding of HDR_ADDRESS when it is an FQQN); "
               "ServerSessionImpl.createConsumer puts the FQQN there (ARTEMIS-3918, 2.25.0)",
    ),
)

PREFIXES: tuple[Case, ...] = (
    Case(
        name="balancing/acceptor-prefix-gives-the-send-its-routing-type",
        summary="With the prefixes any: (ANYCAST) and multi: (MULTICAST) on every acceptor, a send to any:orders "
                "reaches only the ANYCAST queue of orders, one to multi:orders only the MULTICAST one, and a plain "
                "send both; a removed prefix is part of the address again.",
        commands=(
            SetPrefix("any:", ANYCAST),
            SetPrefix("multi:", MULTICAST),
            CreateQueue("n1", "orders", "orders", ANYCAST),
            CreateQueue("n1", "orders", "audit", MULTICAST),
            Send("n1", "any:orders"),
            Send("n1", "multi:orders"),
            Send("n1", "orders"),
            SetPrefix("multi:", None),
            Send("n1", "multi:orders"),
        ),
        rules=("LB-PREFIX", "LB-ELIGIBLE", "LB-NO-BINDINGS"),
        source="ServerSessionImpl.doSend (getAddressAndRoutingType); PrefixUtil.getAddress; Artemis user manual, "
               "address-model.adoc (Using Prefixes to Determine Routing Type)",
    ),
    Case(
        name="balancing/prefix-with-an-fqqn-loses-the-queue-from-2.19",
        summary="A send to any:orders::q2 goes to q2 before 2.19.0; from 2.19.0 the prefix is stripped from the "
                "message's address by way of an address that has already dropped ::q2, so the message is "
                "routed to orders like any ANYCAST send and STRICT round robin gives it to q1 first.",
        commands=(
            SetPrefix("any:", ANYCAST),
            Configure("orders", LbType.STRICT),
            CreateQueue("n1", "orders", "q1", ANYCAST),
            CreateQueue("n1", "orders", "q2", ANYCAST),
            Send("n1", "any:orders", fqqn_queue="q2"),
            Send("n1", "any:orders", fqqn_queue="q2"),
            QueryQueue("n1", "q1"),
        ),
        rules=("LB-PREFIX", "LB-FQQN-LOCAL", "LB-ROUND-ROBIN"),
        source="ServerSessionImpl.doSend: message.setAddress(art.getName()) from 2.19.0 (ARTEMIS-1612); "
               "AddressInfo(SimpleString, RoutingType) keeps only CompositeAddress.extractAddressName",
    ),
)

PER_NODE: tuple[Case, ...] = (
    Case(
        name="balancing/each-node-routes-under-its-own-load-balancing-type",
        summary="orders is STRICT on every node, then OFF on n2 alone: a message sent on n1 still takes turns "
                "between n1's and n2's queue, while one sent on n2 stays on n2, whose cluster connection keeps "
                "ANYCAST messages local under OFF.",
        commands=(
            AddNode("n2"),
            Configure("orders", LbType.STRICT),
            Configure("orders", LbType.OFF, node="n2"),
            CreateQueue("n1", "orders", "orders", ANYCAST),
            CreateQueue("n2", "orders", "orders", ANYCAST),
            Send("n1", "orders"),
            Send("n1", "orders"),
            Send("n2", "orders"),
            Send("n2", "orders"),
            Configure("orders", LbType.STRICT, node="n3"),
        ),
        rules=("LB-TYPES", "LB-OFF-REMOTE", "LB-ROUND-ROBIN", "LB-NODES"),
        source="ClusterConnectionConfiguration message-load-balancing (one per node's cluster connection); "
               "RemoteQueueBindingImpl takes its cluster connection's type (ARTEMIS-3009); BindingsImpl.matchBinding",
    ),
)

UPDATES: tuple[Case, ...] = (
    Case(
        name="balancing/update-queue-takes-the-routing-filter-away",
        summary="From 2.14.0 an update_queue (a queue configuration without a filter) leaves q1 routing without its "
                "filter red, so a blue message may reach it, while a queue query still reports red; 2.11's update "
                "keeps the filter.",
        commands=(
            Configure("a1", LbType.STRICT),
            CreateQueue("n1", "a1", "q1", ANYCAST, "red"),
            CreateQueue("n1", "a1", "a1", ANYCAST),
            UpdateQueue("n1", "q1", purge_on_no_consumers=False),
            Send("n1", "a1", color="blue"),
            Send("n1", "a1", color="red"),
            QueryQueue("n1", "q1"),
        ),
        rules=("LB-UPDATE-FILTER", "LB-ELIGIBLE", "LB-ROUND-ROBIN", "LB-QUERY-QUEUE"),
        source="PostOfficeImpl.updateQueue (a missing filter string is the empty filter, which replaces the "
               "queue's: ARTEMIS-2797, 2.14.0); found fuzzing Artemis 2.40.0",
    ),
)

TYPE_ADOPTION: tuple[Case, ...] = (
    Case(
        name="balancing/a-lone-node-round-robins-whatever-the-type",
        summary="Two queues of orders on n1 alone, no consumers, ON_DEMAND: n1's bindings are still OFF, so the "
                "messages take turns; once n2 has a queue of orders they take its type and ON_DEMAND's fallback "
                "to the last local queue scanned begins.",
        commands=(
            Configure("orders", LbType.ON_DEMAND),
            CreateQueue("n1", "orders", "qa", ANYCAST),
            CreateQueue("n1", "orders", "qb", ANYCAST),
            Send("n1", "orders"),
            Send("n1", "orders"),
            Send("n1", "orders"),
            AddNode("n2"),
            CreateQueue("n2", "orders", "qc", ANYCAST),
            Send("n1", "orders"),
            Send("n1", "orders"),
        ),
        rules=("LB-TYPE-ADOPTED", "LB-FALLBACK", "LB-ROUND-ROBIN"),
        source="BindingsImpl (messageLoadBalancingType starts as OFF, addBinding adopts a RemoteQueueBinding's "
               "type, ARTEMIS-3009); AddressingTest.testAnycastRoutingRoundRobin (one broker round-robins); "
               "found fuzzing Artemis 2.40.0",
    ),
)
