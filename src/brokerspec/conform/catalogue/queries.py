"""Conformance cases that ask queries: state a broker holds, read back without changing it.

Introduction
------------
Every other case can only see a broker through what its operations answer,
so a wrong count, a lost ID or demand held by the wrong broker shows only
when some later operation happens to depend on it. A *query* reads that
state directly: an address query (does the address exist, which routing
types, which queues), a queue query (binding, filter, waiting messages,
consumers), an ID query (is this ID in that cache) and a demand query
(which brokers hold demand for a destination). Each domain's module adds the
cases here to its own; a SUT that speaks protocol version 1 skips them
(``docs/sut-protocol.md``).

Each case puts its queries where the state has just changed in a way the
operations' own outcomes do not show: after a transaction's send and after
its commit, after an ID is pushed out of a full cache and after a restart,
before and after a consumer takes a waiting message, before and after a
consumer's demand spreads further when a TTL grows.
"""

from __future__ import annotations

from brokerspec.spec import addressing as a
from brokerspec.spec import balancing as b
from brokerspec.spec import duplicates as d
from brokerspec.spec import topologies as t

from . import Case

ANYCAST, MULTICAST = a.RoutingType.ANYCAST, a.RoutingType.MULTICAST
Q = "queue://TEST.Q"


def string_id(value: str) -> d.DuplicateId:
    """A ``_AMQ_DUPL_ID`` set as a string property."""
    return d.DuplicateId(d.IdKind.STRING, value)


ADDRESSING: tuple[Case, ...] = (
    Case(
        name="addressing/query-address-lists-routing-types-and-queues",
        summary="An address query names the routing types and the queues (sorted) of an address; an FQQN asks "
                "about its address part; a missing address does not exist; a delete shows at once.",
        commands=(
            a.CreateAddress("orders", frozenset({ANYCAST, MULTICAST})),
            a.CreateQueue("orders", "q2", ANYCAST),
            a.CreateQueue("orders", "q1", MULTICAST),
            a.QueryAddress("orders"),
            a.QueryAddress("orders::q1"),
            a.QueryAddress("invoices"),
            a.DeleteQueue("q1"),
            a.QueryAddress("orders"),
            a.DeleteAddress("orders", True),
            a.QueryAddress("orders"),
        ),
        rules=("ADDR-QUERY-ADDRESS", "ADDR-QUEUE-CREATE", "ADDR-QUEUE-DELETE", "ADDR-ADDRESS-DELETE"),
        source="Artemis ActiveMQServerImpl.addressQuery and bindingQuery (CompositeAddress.extractAddressName); "
               "AddressQueryTest.testAddressQueryOnStaticAddressWithFQQN",
    ),
    Case(
        name="addressing/query-address-sees-what-auto-creation-made",
        summary="What a consumer and sends auto-create is visible to an address query: the address, its routing "
                "types as sends widen them, and the queue; a prefix is removed before the query.",
        commands=(
            a.Consume("jobs", ANYCAST),
            a.QueryAddress("jobs"),
            a.Send("jobs", MULTICAST),
            a.QueryAddress("jobs"),
            a.SetPrefix("multicast://", MULTICAST),
            a.QueryAddress("multicast://jobs"),
        ),
        rules=("ADDR-QUERY-ADDRESS", "ADDR-CONSUME-AUTO-QUEUE", "ADDR-PREFIX-STRIP"),
        source="Artemis ServerSessionImpl.checkAutoCreate and executeAddressQuery (removePrefix)",
    ),
)

DUPLICATES: tuple[Case, ...] = (
    Case(
        name="duplicates/query-id-shows-an-id-only-after-its-commit",
        summary="An ID sent in a transaction is not in the cache until the commit; a rolled-back one never is; "
                "each address and the bridge cache answer for their own IDs.",
        commands=(
            d.CreateQueue("orders", "q1"),
            d.Begin("tx"),
            d.Send("tx", "orders", string_id("a")),
            d.QueryId("orders", string_id("a")),
            d.Commit("tx"),
            d.QueryId("orders", string_id("a")),
            d.QueryId("invoices", string_id("a")),
            d.Begin("tx"),
            d.Send("tx", "orders", string_id("b")),
            d.Rollback("tx"),
            d.QueryId("orders", string_id("b")),
            d.Send("bridge", "orders", None, "0a0b0c"),
            d.QueryId("orders", None, "0a0b0c"),
            d.QueryId("invoices", None, "0a0b0c"),
        ),
        rules=("DUP-QUERY-ID", "DUP-TX-HELD", "DUP-CACHE-PER-ADDRESS", "DUP-BRIDGE-FIRST"),
        source="Artemis DuplicateIDCache.contains; PostOfficeImpl.checkDuplicateID (seed 001); "
               "DuplicateDetectionTest.testDuplicateIDCacheMemoryRetentionForTransactions",
    ),
    Case(
        name="duplicates/query-id-after-the-cache-wraps-and-a-restart",
        summary="A full cache forgets its oldest ID, which a query shows without sending it again; what the "
                "cache held survives a restart and a crash.",
        commands=(
            d.Restart(2),
            d.CreateQueue("orders", "q1"),
            d.Send("p", "orders", string_id("1")),
            d.Send("p", "orders", string_id("2")),
            d.Send("p", "orders", string_id("3")),
            d.QueryId("orders", string_id("1")),
            d.QueryId("orders", string_id("3")),
            d.Restart(),
            d.QueryId("orders", string_id("2")),
            d.Crash(),
            d.QueryId("orders", string_id("3")),
            d.QueryId("orders", string_id("1")),
        ),
        rules=("DUP-QUERY-ID", "DUP-RING-FIFO"),
        source="Artemis DuplicateIDCacheImpl.addToCacheInMemory (the ring), PostOfficeImpl reload of stored IDs",
    ),
    Case(
        name="duplicates/query-id-after-an-id-loses-one-of-its-two-slots",
        summary="An ID a transaction sent twice takes two slots; when the next ID overwrites one of them the cache "
                "no longer finds it, though the other slot still holds it: the query says absent and a resend is "
                "routed.",
        commands=(
            d.Restart(2),
            d.CreateQueue("orders", "q1"),
            d.Send("p", "orders", string_id("a")),
            d.Begin("tx"),
            d.Send("tx", "orders", string_id("x")),
            d.Send("tx", "orders", string_id("x")),
            d.Commit("tx"),
            d.QueryId("orders", string_id("x")),
            d.Send("p", "orders", string_id("b")),
            d.QueryId("orders", string_id("x")),
            d.Send("p", "orders", string_id("x")),
        ),
        rules=("DUP-QUERY-ID", "DUP-SAME-ID-IN-TX", "DUP-RING-FIFO"),
        source="Artemis PersistentDuplicateIDCache.addToCacheInMemory (cache.remove of the overwritten slot's ID, "
               "whatever other slot holds it) and contains (the lookup map, not the slots); found running the "
               "XA cases against Artemis 2.40.0",
    ),
)

BALANCING: tuple[Case, ...] = (
    Case(
        name="balancing/query-queue-counts-waiting-messages-and-consumers",
        summary="A queue query reports a queue's address, routing type, filter, waiting messages and consumers "
                "(a paused one counts); it asks one node, so a queue elsewhere does not exist here.",
        commands=(
            b.AddNode("n2"),
            b.CreateQueue("n1", "orders", "q1", ANYCAST, "red"),
            b.Send("n1", "orders", ANYCAST, "red"),
            b.QueryQueue("n1", "q1"),
            b.QueryQueue("n2", "q1"),
            b.Attach("c1", "n1", "q1"),
            b.QueryQueue("n1", "q1"),
            b.Pause("c1"),
            b.Send("n1", "orders", ANYCAST, "red"),
            b.Send("n1", "orders", ANYCAST, "blue"),
            b.QueryQueue("n1", "q1"),
            b.Resume("c1"),
            b.QueryQueue("n1", "q1"),
            b.QueryQueue("n3", "q1"),
        ),
        rules=("LB-QUERY-QUEUE", "LB-QUEUE-PER-NODE", "LB-NODES"),
        source="Artemis ActiveMQServerImpl.queueQuery (QueueQueryResult: messageCount, consumerCount, "
               "filterString)",
    ),
    Case(
        name="balancing/query-queue-sees-a-redistributed-message-leave",
        summary="A message waits on n1 until a consumer attaches on n2; the queue queries show it leave n1's "
                "queue and n2's consumer take it.",
        commands=(
            b.AddNode("n2"),
            b.Configure("orders", b.LbType.ON_DEMAND, 0),
            b.CreateQueue("n1", "orders", "orders", ANYCAST),
            b.CreateQueue("n2", "orders", "orders", ANYCAST),
            b.Send("n1", "orders", ANYCAST),
            b.QueryQueue("n1", "orders"),
            b.Attach("c2", "n2", "orders"),
            b.QueryQueue("n1", "orders"),
            b.QueryQueue("n2", "orders"),
        ),
        rules=("LB-QUERY-QUEUE", "RD-TRIGGER-REMOTE-CONSUMER"),
        source="Artemis RedistributorImpl, PostOfficeImpl.onNotification CONSUMER_CREATED; "
               "ActiveMQServerImpl.queueQuery",
    ),
)

ATTRIBUTE_CASES: tuple[Case, ...] = (
    Case(
        name="balancing/disabled-queue-is-chosen-and-drops-the-message",
        summary="A disabled queue is still chosen in its turn, so the message sent to it vanishes rather than going "
                "to the group's other queue; the queue query shows the attribute; enabled again it takes messages, "
                "and what waited in it stays throughout.",
        commands=(
            b.AddNode("n2"),
            b.Configure("orders", b.LbType.ON_DEMAND),
            b.CreateQueue("n1", "orders", "orders", ANYCAST),
            b.CreateQueue("n2", "orders", "orders", ANYCAST),
            b.Send("n1", "orders", ANYCAST),
            b.UpdateQueue("n1", "orders", enabled=False),
            b.QueryQueue("n1", "orders"),
            b.Send("n1", "orders", ANYCAST),
            b.Send("n1", "orders", ANYCAST),
            b.QueryQueue("n1", "orders"),
            b.Attach("c1", "n1", "orders"),
            b.UpdateQueue("n1", "orders", enabled=True),
            b.Send("n1", "orders", ANYCAST),
        ),
        rules=("LB-QUEUE-ENABLED", "LB-UNROUTED-STATUS", "LB-QUERY-QUEUE"),
        source="Artemis QueueImpl.route (isEnabled, 2.14.0 on), ActiveMQServerImpl.updateQueue; Artemis user manual, "
               "address-model (a disabled queue drops what is sent to it)",
        profiles=("artemis-latest",),
    ),
    Case(
        name="balancing/purge-on-no-consumers-drops-until-a-consumer-and-purges-on-the-last-close",
        summary="A purge-on-no-consumers queue drops what routing brings it while it has no consumer, keeps what "
                "arrives for a paused one, and drops that too when its last consumer closes.",
        commands=(
            b.CreateQueue("n1", "jobs", "jobs", ANYCAST, None, True, True),
            b.Send("n1", "jobs", ANYCAST),
            b.QueryQueue("n1", "jobs"),
            b.Attach("c1", "n1", "jobs"),
            b.Pause("c1"),
            b.Send("n1", "jobs", ANYCAST),
            b.Send("n1", "jobs", ANYCAST),
            b.QueryQueue("n1", "jobs"),
            b.Close("c1"),
            b.QueryQueue("n1", "jobs"),
            b.UpdateQueue("n1", "jobs", purge_on_no_consumers=False),
            b.Send("n1", "jobs", ANYCAST),
            b.QueryQueue("n1", "jobs"),
        ),
        rules=("LB-PURGE-ON-NO-CONSUMERS", "LB-UNROUTED-STATUS", "LB-QUERY-QUEUE"),
        source="Artemis QueueImpl.route (isPurgeOnNoConsumers), QueueManagerImpl.doIt (purge when the consumer "
               "count reaches 0); ActiveMQServerControl.updateQueue",
    ),
    Case(
        name="balancing/no-enabled-attribute-before-2.14",
        summary="Before Artemis 2.14 a queue has no enabled attribute: making or updating one disabled is refused, "
                "and nothing else about the queue changes.",
        commands=(
            b.CreateQueue("n1", "orders", "orders", ANYCAST, None, False),
            b.CreateQueue("n1", "orders", "orders", ANYCAST),
            b.UpdateQueue("n1", "orders", enabled=False, purge_on_no_consumers=True),
            b.UpdateQueue("n1", "orders", enabled=True),
            b.Send("n1", "orders", ANYCAST),
            b.QueryQueue("n1", "orders"),
        ),
        rules=("LB-QUEUE-ENABLED", "LB-QUERY-QUEUE"),
        source="Artemis QueueImpl.route: 2.11.0 checks only isPurgeOnNoConsumers, the enabled attribute came in 2.14.0",
        profiles=("seed", "artemis-2.11"),
    ),
)

TOPOLOGIES: tuple[Case, ...] = (
    Case(
        name="topologies/query-demand-spreads-as-far-as-the-ttl",
        summary="A consumer on b3 of the chain b1-b2-b3 is demand on b3 and, with consumerTTL 1, on b2 only; "
                "with TTL 2 on both connectors b1 holds demand too; when it closes no broker does.",
        commands=(
            t.AddBroker("b1"), t.AddBroker("b2"), t.AddBroker("b3"),
            t.Connect("b1", "b2"), t.Connect("b2", "b3"),
            t.Subscribe("c", "b3", Q),
            t.QueryDemand(Q),
            t.QueryDemand("queue://OTHER"),
            t.SetTtl("b1", "b2", 2, 2), t.SetTtl("b2", "b3", 2, 2),
            t.QueryDemand(Q),
            t.Unsubscribe("c"),
            t.QueryDemand(Q),
        ),
        rules=("TOPO-QUERY-DEMAND",),
        source="ActiveMQ 5.17 DemandForwardingBridgeSupport.serviceRemoteConsumerAdvisory (consumerTTL), "
               "AdvisoryBroker.addConsumer",
    ),
    Case(
        name="topologies/query-demand-shows-paths-and-decreased-priorities",
        summary="With decreaseNetworkConsumerPriority, the demand query shows each subscription's brokerPath and "
                "priority: -5 one broker away, -8 two away (-5-(n+1) for n brokers), the client consumer's own "
                "priority at home.",
        commands=(
            t.AddBroker("b1"), t.AddBroker("b2"), t.AddBroker("b3"),
            t.Connect("b1", "b2", True, t.BridgeConfig(consumer_ttl=2, message_ttl=2, decrease_priority=True)),
            t.Connect("b2", "b3", True, t.BridgeConfig(consumer_ttl=2, message_ttl=2, decrease_priority=True)),
            t.Subscribe("c", "b3", Q, 3),
            t.QueryDemand(Q),
            t.Subscribe("d", "b1", Q),
            t.QueryDemand(Q),
        ),
        rules=("TOPO-QUERY-DEMAND",),
        source="ActiveMQ 5.17 DemandForwardingBridgeSupport.addConsumerInfo (decreaseNetworkConsumerPriority: -5, "
               "then -5-(n+1)); AdvisoryBroker.addConsumer",
    ),
)
