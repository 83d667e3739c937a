"""Conformance cases for load balancing and redistribution across a cluster.

Introduction
------------
Each case is a short cluster script whose expected outcomes the load-balancing
spec computes under every profile it names. A broker passes a step when its
outcome is one the rules allow: this domain leaves the tie-breaking of the
round robin to the broker, so the cases are written to show what every
correct broker must do, whichever of the allowed bindings, targets or
consumers it picks. Where Artemis's own order of turns is the point (the
position after a choice, the ON_DEMAND fallback to the *last* local queue),
the case still says so, and only a strict check holds a broker to it.

Together the cases cover:

* the cluster model: nodes joining by name, queue names unique per node but
  repeated across nodes, consumers unique in the cluster, and the refusals
  for unknown nodes, queues and consumers;
* the load-balancing types of ``MessageLoadBalancingType`` (OFF, STRICT,
  ON_DEMAND, and OFF_WITH_REDISTRIBUTION from Artemis 2.19.0), configured per
  address, and how each shapes the first routing: OFF keeps a message on the
  sending node, STRICT deals messages out whatever the consumers, ON_DEMAND
  sends them where a matching consumer is;
* ``BindingsImpl.getNextBinding``: routing-name groups (all ANYCAST queues of
  an address form one, each MULTICAST queue its own), eligibility by queue
  filter and routing type, the preference for bindings with a matching
  consumer, local consumers preferred through the ON_DEMAND fallback, the
  single-member rule, disconnected bridges, and the round-robin position,
  which moves past the chosen binding, restarts at 0 when out of range and is
  forgotten when its group empties;
* the send status: NO_BINDINGS for an address without queues, and the
  version-dependent status of a send no queue accepted; sends to
  ``address::queue`` under the older local rule and the newer balanced one;
* redistribution as ``PostOfficeImpl.redistribute`` and
  ``BindingsImpl.redistribute`` perform it: only under a type whose
  ``allowRedistribute()`` holds, started by the close of a queue's last
  consumer, a consumer on another node or a new queue, after the address's
  redistribution delay on the logical clock, cancelled by a local consumer;
  the target taken by round robin over the group named like the originating
  queue, never the originating queue itself, only where a consumer and the
  target's queue filter match; the moved message a copy under a new ID;
  grouped messages never moved; and the version differences in when a
  queue with consumers gets a redistributor and when the copy's ID is taken.

Sources. Most scenarios follow seed 003 (``003_df6d5e31f642e5ae.txt``), a
walk through ``MessageLoadBalancingType``, ``PostOfficeImpl.redistribute``
and ``BindingsImpl.redistribute`` in Apache ActiveMQ Artemis 2.11.0; each
such case names the method or line it exercises. The others come from the
Artemis methods the spec's rules cite (``BindingsImpl.getNextBinding`` and
``matchBinding`` for first routing, ``PostOfficeImpl.onNotification``,
``QueueImpl.addRedistributor`` and ``BindingsImpl.redistribute`` for
redistribution), from Artemis tests (``OnewayTwoNodeClusterTest``,
``MessageRedistributionTest``, ``BindingsImplTest``, ``AddressingTest``) and
from the JIRA issues that changed the behaviour (ARTEMIS-1925,
ARTEMIS-2007, ARTEMIS-2473, ARTEMIS-3918, ARTEMIS-4089, ARTEMIS-4196,
ARTEMIS-4207, ARTEMIS-5597).

A case restricted to some profiles is so because what it shows exists only
there: the three types and no fourth of 2.11.0; OFF_WITH_REDISTRIBUTION
(2.19.0); the originating queue as a candidate for its own waiting message,
which needs a queue with consumers to get a redistributor for a message none
of them matches (ARTEMIS-2007, 2.19.0) and is unreachable before; and the
two FQQN send rules, to the local queue up to 2.42 and balanced from 2.43.0.
Every other difference between the profiles shows in the outcomes the spec
computes for each.
"""

from __future__ import annotations

from brokerspec.spec.addressing import RoutingType
from brokerspec.spec.balancing import (
    AddNode,
    Attach,
    BalancingCommand,
    Close,
    Configure,
    CreateQueue,
    DeleteQueue,
    LbType,
    Pause,
    Resume,
    Send,
    SetLink,
    Tick,
)

from . import Case, balancing_addresses, balancing_bridges, balancing_consumers, balancing_sends, balancing_tx, queries

SEED = "seed 003 (003_df6d5e31f642e5ae.txt)"
"""How a case cites the seed document that walks through Artemis 2.11.0 load balancing."""

LATEST_ONLY = ("artemis-latest",)
"""The profile with OFF_WITH_REDISTRIBUTION, ARTEMIS-2007 and balanced FQQN sends."""

OLDER = ("seed", "artemis-2.11")
"""The profiles of Artemis 2.11.0: three load-balancing types, and FQQN sends that go to the local queue."""

ANYCAST, MULTICAST = RoutingType.ANYCAST, RoutingType.MULTICAST
OFF, STRICT, ON_DEMAND = LbType.OFF, LbType.STRICT, LbType.ON_DEMAND
OFF_WITH_REDISTRIBUTION = LbType.OFF_WITH_REDISTRIBUTION


def cluster(lb_type: LbType, delay: int = -1, nodes: int = 2) -> tuple[BalancingCommand, ...]:
    """Nodes n1..n``nodes``, each with an ANYCAST queue ``orders`` on the address ``orders``, under ``lb_type``."""
    names = [f"n{i}" for i in range(1, nodes + 1)]
    return (*(AddNode(n) for n in names[1:]), Configure("orders", lb_type, delay),
            *(CreateQueue(n, "orders", "orders", ANYCAST) for n in names))


def send(node: str = "n1", *, routing_type: RoutingType | None = None, color: str | None = None,
         grouped: bool = False, fqqn_queue: str | None = None) -> Send:
    """One send to the address ``orders`` from ``node``."""
    return Send(node, "orders", routing_type, color, grouped, fqqn_queue)


# --- the cluster model ------------------------------------------------------------------------------

MODEL_CASES: tuple[Case, ...] = (
    Case(
        name="balancing/nodes-join-by-name-and-unknown-nodes-are-refused",
        summary="The cluster starts with n1; a node joins once by name, and a queue, consumer, send or link that "
                "names an unknown node is refused.",
        commands=(
            AddNode("n2"),
            AddNode("n2"),
            AddNode("n1"),
            CreateQueue("n3", "orders", "orders", ANYCAST),
            CreateQueue("n2", "orders", "orders", ANYCAST),
            Attach("c3", "n3", "orders"),
            send("n3"),
            SetLink("n1", "n3", False),
            SetLink("n1", "n1", False),
            send("n1"),
        ),
        rules=("LB-NODES", "LB-DISCONNECTED", "LB-SINGLE"),
        source="brokerspec's cluster model: each node has its own post office (RemoteQueueBindingImpl)",
    ),
    Case(
        name="balancing/queue-name-repeats-across-nodes-but-not-on-one",
        summary="A queue name may exist once on every node, each a binding of the others; a second queue of that "
                "name on one node, even on another address, and a delete or attach naming a queue the node lacks, "
                "are refused.",
        commands=(
            AddNode("n2"),
            CreateQueue("n1", "orders", "orders", ANYCAST),
            CreateQueue("n2", "orders", "orders", ANYCAST),
            CreateQueue("n1", "orders", "orders", ANYCAST),
            CreateQueue("n1", "invoices", "orders", MULTICAST),
            DeleteQueue("n2", "invoices"),
            Attach("c2", "n2", "invoices"),
            Attach("c2", "n2", "orders"),
            send("n1"),
        ),
        rules=("LB-QUEUE-PER-NODE", "LB-PREFERRED"),
        source="RemoteQueueBindingImpl (unique name = queue name + node ID) and ClusterConnectionImpl.doBindingAdded",
    ),
    Case(
        name="balancing/consumers-take-turns-and-a-paused-one-takes-nothing",
        summary="Consumers of one queue take messages in turn; a paused consumer is passed over, and when every "
                "matching consumer is paused the message waits until one resumes.",
        commands=(
            CreateQueue("n1", "orders", "orders", ANYCAST),
            Attach("c1", "n1", "orders"),
            Attach("c2", "n1", "orders"),
            send(),
            send(),
            Pause("c1"),
            send(),
            send(),
            Pause("c2"),
            send(),
            Resume("c1"),
        ),
        rules=("LB-CONSUMERS",),
        source="QueueImpl.deliver (consumers in turn); ServerConsumerImpl.handle (BUSY while the session is stopped)",
    ),
    Case(
        name="balancing/consumer-names-are-unique-in-the-cluster",
        summary="A consumer name in use anywhere in the cluster is refused, closing or resuming an unknown "
                "consumer is refused, and a closed consumer's name can attach again on another node.",
        commands=(
            AddNode("n2"),
            CreateQueue("n1", "orders", "orders", ANYCAST),
            CreateQueue("n2", "orders", "orders", ANYCAST),
            Attach("c", "n1", "orders"),
            Attach("c", "n2", "orders"),
            Close("nobody"),
            Resume("nobody"),
            Close("c"),
            Attach("c", "n2", "orders"),
            send("n1"),
        ),
        rules=("LB-CONSUMERS", "LB-PREFERRED"),
        source="brokerspec's cluster model (a consumer name is unique in the cluster while open); "
               "QueueImpl.deliver",
    ),
    Case(
        name="balancing/delete-queue-refused-while-consumed-and-drops-waiting-messages",
        summary="A queue with a consumer cannot be deleted; once it has none, deleting it drops the messages "
                "waiting in it, and a later send to the empty address finds no bindings.",
        commands=(
            CreateQueue("n1", "orders", "orders", ANYCAST),
            Attach("c1", "n1", "orders"),
            Pause("c1"),
            send(),
            DeleteQueue("n1", "orders"),
            Close("c1"),
            DeleteQueue("n1", "orders"),
            send(),
        ),
        rules=("LB-DELETE-QUEUE", "LB-NO-BINDINGS"),
        source="ActiveMQServerImpl.destroyQueue (AMQ229025 while consumers are present)",
    ),
    Case(
        name="balancing/consumers-take-turns-past-the-second",
        summary="Three consumers of one queue take three messages one each, in attach order: the turn moves to "
                "just after the consumer that took the last message.",
        commands=(
            CreateQueue("n1", "orders", "orders", ANYCAST),
            Attach("c1", "n1", "orders"),
            Attach("c2", "n1", "orders"),
            Attach("c3", "n1", "orders"),
            send(),
            send(),
            send(),
        ),
        rules=("LB-CONSUMERS",),
        source="QueueImpl.deliver (consumers in turn, the position just after the one that took the message)",
    ),
    Case(
        name="balancing/consumer-turn-restarts-when-consumers-close",
        summary="When closing consumers leaves a queue's turn beyond its last consumer, the next message goes to "
                "the first consumer again, and a consumer's filter still counts while others with the same filter "
                "close.",
        commands=(
            CreateQueue("n1", "orders", "orders", ANYCAST),
            Attach("c1", "n1", "orders", "red"),
            Attach("c2", "n1", "orders", "red"),
            Attach("c3", "n1", "orders", "red"),
            send(color="red"),
            send(color="red"),
            Close("c2"),
            Close("c3"),
            send(color="red"),
        ),
        rules=("LB-CONSUMERS",),
        source="QueueImpl.deliver (consumers in turn; a turn beyond the last consumer restarts at the first, as "
               "the spec's scan_order does); QueueImpl.hasMatchingConsumer",
    ),
)

# --- the load-balancing types ------------------------------------------------------------------------

TYPE_CASES: tuple[Case, ...] = (
    Case(
        name="balancing/the-three-types-of-2-11-and-no-fourth",
        summary="OFF, STRICT and ON_DEMAND can each be configured on an address, while OFF_WITH_REDISTRIBUTION does "
                "not exist yet and is refused; a redistribution delay below -1 is no error (Artemis takes any long).",
        commands=(
            Configure("a", OFF),
            Configure("b", STRICT),
            Configure("c", ON_DEMAND, 0),
            Configure("d", OFF_WITH_REDISTRIBUTION, 0),
            Configure("c", ON_DEMAND, -2),
        ),
        rules=("LB-TYPES", "RD-DELAY"),
        source=f"{SEED}, MessageLoadBalancingType (OFF, STRICT, ON_DEMAND; getType returns null for any other "
               "name)",
        profiles=OLDER,
    ),
    Case(
        name="balancing/off-with-redistribution-exists-from-2-19",
        summary="OFF_WITH_REDISTRIBUTION can be configured, routes a send to the sending node's queue as OFF does, "
                "and then moves it at once to the node with a consumer.",
        commands=(
            *cluster(OFF_WITH_REDISTRIBUTION, 0),
            Attach("c2", "n2", "orders"),
            send(),
            send(),
        ),
        rules=("LB-TYPES", "LB-OFF-REMOTE", "RD-ALLOWED", "RD-NEW-ID", "RD-TARGET"),
        source="ARTEMIS-1925 (2.19.0, with the 2.20.0 fix); MessageRedistributionTest."
               "testRedistributionOnlyWhenLocalRemovedLbOffWithRedistribution",
        profiles=LATEST_ONLY,
    ),
    Case(
        name="balancing/off-keeps-messages-on-the-sending-node",
        summary="Under OFF a send stays on the sending node's queue although only another node has a consumer, is "
                "never redistributed there, and from a node without a queue of its own reaches no queue at all.",
        commands=(
            *cluster(OFF, 0),
            AddNode("n3"),
            Attach("c2", "n2", "orders"),
            send("n1"),
            send("n1"),
            Tick(),
            send("n3"),
            send("n3", routing_type=ANYCAST),
            send("n2"),
        ),
        rules=("LB-OFF-REMOTE", "RD-ALLOWED", "LB-FALLBACK", "LB-UNROUTED-STATUS"),
        source=f"{SEED}, BindingsImpl.allowRedistribute (false unless ON_DEMAND) and redistribute (returns false "
               "for OFF); BindingsImpl.matchBinding; ARTEMIS-3188, ARTEMIS-4196",
    ),
    Case(
        name="balancing/strict-deals-messages-out-whatever-the-consumers",
        summary="Under STRICT every connected queue takes its turn, so half the sends land on the queue that has "
                "no consumer and wait there.",
        commands=(
            *cluster(STRICT, 0),
            Attach("c1", "n1", "orders"),
            send(),
            send(),
            send(),
            send(),
            Tick(),
        ),
        rules=("LB-ROUND-ROBIN", "RD-ALLOWED"),
        source=f"{SEED}, BindingsImpl.redistribute (returns false for STRICT)",
    ),
    Case(
        name="balancing/on-demand-sends-every-message-where-the-consumer-is",
        summary="Under ON_DEMAND sends from either node go to the one queue that has a consumer, on whichever node "
                "it is.",
        commands=(
            *cluster(ON_DEMAND),
            Attach("c2", "n2", "orders"),
            send("n1"),
            send("n1"),
            send("n2"),
        ),
        rules=("LB-PREFERRED", "LB-ROUND-ROBIN"),
        source="BindingsImpl.getNextBinding; RemoteQueueBindingImpl.isHighAcceptPriority (consumers present)",
    ),
    Case(
        name="balancing/off-forwards-a-multicast-message-from-2-29",
        summary="Under OFF a MULTICAST message reaches a queue that exists only on another node from 2.29.0, and "
                "none before; under OFF_WITH_REDISTRIBUTION it always may.",
        commands=(
            AddNode("n2"),
            Configure("news", OFF),
            CreateQueue("n2", "news", "sub", MULTICAST),
            Send("n1", "news", routing_type=MULTICAST),
            Send("n1", "news"),
            Configure("news", OFF_WITH_REDISTRIBUTION),
            Send("n1", "news", routing_type=MULTICAST),
        ),
        rules=("LB-OFF-REMOTE", "LB-TYPES", "LB-UNROUTED-STATUS"),
        source="ARTEMIS-4196 (2.29.0) and ARTEMIS-3608 (2.21.0)",
    ),
)

# --- how a group chooses -----------------------------------------------------------------------------

CHOICE_CASES: tuple[Case, ...] = (
    Case(
        name="balancing/anycast-queues-of-an-address-form-one-group",
        summary="Differently named ANYCAST queues of one address share one round robin, so each send reaches "
                "exactly one of them.",
        commands=(
            CreateQueue("n1", "orders", "q1", ANYCAST),
            CreateQueue("n1", "orders", "q2", ANYCAST),
            Attach("c1", "n1", "q1"),
            Attach("c2", "n1", "q2"),
            send(),
            send(),
            send(),
        ),
        rules=("LB-GROUPS", "LB-ROUND-ROBIN"),
        source="LocalQueueBinding.getRoutingName (the address for ANYCAST, ARTEMIS-780)",
    ),
    Case(
        name="balancing/each-multicast-queue-gets-a-copy-and-same-named-ones-balance",
        summary="Each MULTICAST subscription of an address gets every message, while same-named subscriptions on "
                "two nodes form one group and share the messages.",
        commands=(
            AddNode("n2"),
            CreateQueue("n1", "news", "sub-a", MULTICAST),
            CreateQueue("n1", "news", "sub-b", MULTICAST),
            CreateQueue("n2", "news", "sub-b", MULTICAST),
            Attach("a1", "n1", "sub-a"),
            Attach("b1", "n1", "sub-b"),
            Attach("b2", "n2", "sub-b"),
            Send("n1", "news"),
            Send("n1", "news"),
        ),
        rules=("LB-GROUPS", "LB-ROUND-ROBIN"),
        source="LocalQueueBinding.getRoutingName (a MULTICAST queue's own name)",
    ),
    Case(
        name="balancing/each-routing-name-keeps-its-own-turn",
        summary="Two MULTICAST subscriptions, each on two nodes with a consumer, form two groups; each group keeps "
                "its own turn, so both alternate between the nodes. A broker sharing one turn across the routing "
                "names of an address lands each group on the same node every time.",
        commands=(
            AddNode("n2"),
            CreateQueue("n1", "news", "sub-a", MULTICAST),
            CreateQueue("n2", "news", "sub-a", MULTICAST),
            CreateQueue("n1", "news", "sub-b", MULTICAST),
            CreateQueue("n2", "news", "sub-b", MULTICAST),
            Attach("a1", "n1", "sub-a"),
            Attach("a2", "n2", "sub-a"),
            Attach("b1", "n1", "sub-b"),
            Attach("b2", "n2", "sub-b"),
            Send("n1", "news"),
            Send("n1", "news"),
            Send("n1", "news"),
            Send("n1", "news"),
        ),
        rules=("LB-GROUPS", "LB-ROUND-ROBIN", "LB-FAIR-TURNS"),
        source="BindingsImpl.getNextBinding (one BindingIndex per routing name in CopyOnWriteBindings); "
               "LocalQueueBinding.getRoutingName",
    ),
    Case(
        name="balancing/routing-type-narrows-the-candidates",
        summary="A message whose routing type is set reaches only queues of that type; one without a routing type "
                "reaches a queue in every group.",
        commands=(
            CreateQueue("n1", "orders", "orders", ANYCAST),
            CreateQueue("n1", "orders", "audit", MULTICAST),
            Attach("c1", "n1", "orders"),
            Attach("c2", "n1", "audit"),
            send(routing_type=ANYCAST),
            send(routing_type=MULTICAST),
            send(),
        ),
        rules=("LB-ELIGIBLE", "LB-GROUPS"),
        source="BindingsImpl.matchBinding",
    ),
    Case(
        name="balancing/queue-filter-decides-eligibility-consumer-filter-only-preference",
        summary="A queue whose filter rejects a message is never chosen, while a consumer whose filter rejects it "
                "only makes its queue unpreferred: the message still lands there and waits.",
        commands=(
            CreateQueue("n1", "orders", "reds", ANYCAST, "red"),
            CreateQueue("n1", "orders", "all", ANYCAST),
            Attach("c1", "n1", "all", "red"),
            send(color="blue"),
            send(color="red"),
            send(color="red"),
        ),
        rules=("LB-ELIGIBLE", "LB-PREFERRED", "LB-FALLBACK", "LB-CONSUMERS"),
        source="BindingsImpl.matchBinding and LocalQueueBinding.isHighAcceptPriority",
    ),
    Case(
        name="balancing/queues-with-consumers-alternate-local-first",
        summary="With a consumer on the local and on a remote queue, sends alternate between them starting with "
                "the local one, and a queue without a consumer gets none.",
        commands=(
            *cluster(ON_DEMAND, nodes=3),
            Attach("c1", "n1", "orders"),
            Attach("c2", "n2", "orders"),
            send(),
            send(),
            send(),
            send(),
        ),
        rules=("LB-ROUND-ROBIN", "LB-PREFERRED"),
        source="OnewayTwoNodeClusterTest.testBasicRoundRobin",
    ),
    Case(
        name="balancing/on-demand-keeps-messages-local-when-nobody-consumes",
        summary="Under ON_DEMAND, with no consumer anywhere, every send waits on the sending node's own queue: "
                "local consumers preferred means the local queue is the fallback.",
        commands=(
            *cluster(ON_DEMAND, nodes=3),
            send("n1"),
            send("n1"),
            send("n2"),
            send("n3"),
        ),
        rules=("LB-FALLBACK", "LB-ROUND-ROBIN"),
        source="MessageRedistributionTest.testRedistributionWithMultipleQueuesOnTheSameAddress; "
               "lastLowPriorityBinding in BindingsImpl.getNextBinding",
    ),
    Case(
        name="balancing/on-demand-falls-back-to-the-last-local-queue",
        summary="Under ON_DEMAND, with two local queues and no consumers, Artemis's fallback is the last local "
                "queue the scan meets, the same one every time; any local queue is allowed.",
        commands=(
            AddNode("n2"),
            Configure("orders", ON_DEMAND),
            CreateQueue("n1", "orders", "qa", ANYCAST),
            CreateQueue("n1", "orders", "qb", ANYCAST),
            CreateQueue("n2", "orders", "qc", ANYCAST),
            send(),
            send(),
            send(),
        ),
        rules=("LB-FALLBACK", "LB-ROUND-ROBIN"),
        source="lastLowPriorityBinding in BindingsImpl.getNextBinding (read from the code)",
    ),
    Case(
        name="balancing/off-alternates-local-queues-without-consumers",
        summary="Under OFF the fallback is the first eligible queue from the position, which moves just past it, "
                "so two local queues without consumers take turns and the remote one gets nothing.",
        commands=(
            AddNode("n2"),
            Configure("orders", OFF),
            CreateQueue("n1", "orders", "qa", ANYCAST),
            CreateQueue("n1", "orders", "qb", ANYCAST),
            CreateQueue("n2", "orders", "qc", ANYCAST),
            send(),
            send(),
            send(),
        ),
        rules=("LB-FALLBACK", "LB-ROUND-ROBIN", "LB-OFF-REMOTE"),
        source="AddressingTest.testAnycastRoutingRoundRobin; BindingsImpl.getNextBinding",
    ),
    Case(
        name="balancing/position-restarts-at-zero-when-the-group-shrinks",
        summary="When deleting a queue leaves the stored position beyond the end of its group, the next scan starts "
                "at the first queue again.",
        commands=(
            Configure("orders", OFF),
            CreateQueue("n1", "orders", "qa", ANYCAST),
            CreateQueue("n1", "orders", "qb", ANYCAST),
            CreateQueue("n1", "orders", "qc", ANYCAST),
            send(),
            send(),
            DeleteQueue("n1", "qc"),
            send(),
            send(),
        ),
        rules=("LB-ROUND-ROBIN", "LB-DELETE-QUEUE"),
        source=f"{SEED}, BindingsImpl.redistribute (IndexOutOfBoundsException: pos = 0); "
               "BindingsImpl.getNextBinding (0 when the position is out of range)",
    ),
    Case(
        name="balancing/position-is-forgotten-when-the-group-empties",
        summary="Deleting every queue of a group forgets its position, so recreated queues are scanned from the "
                "first again.",
        commands=(
            Configure("orders", OFF),
            CreateQueue("n1", "orders", "qa", ANYCAST),
            CreateQueue("n1", "orders", "qb", ANYCAST),
            send(),
            DeleteQueue("n1", "qa"),
            DeleteQueue("n1", "qb"),
            CreateQueue("n1", "orders", "qa", ANYCAST),
            CreateQueue("n1", "orders", "qb", ANYCAST),
            send(),
        ),
        rules=("LB-ROUND-ROBIN", "LB-DELETE-QUEUE"),
        source="CopyOnWriteBindings.removeBinding (the routing name's position removed with its last binding)",
    ),
    Case(
        name="balancing/a-single-remote-queue-takes-every-message",
        summary="A group of one takes every message its queue is eligible for, though it has no consumer and the "
                "bridge to its node is down.",
        commands=(
            AddNode("n2"),
            CreateQueue("n2", "orders", "orders", ANYCAST),
            send("n1"),
            SetLink("n1", "n2", False),
            send("n1"),
        ),
        rules=("LB-SINGLE", "LB-DISCONNECTED"),
        source="BindingsImplTest.testGetNextBindingWithLoadBalancingOnDemand; OnewayTwoNodeClusterTest."
               "testRouteWhenNoConsumersFalseNonBalancedQueues",
    ),
    Case(
        name="balancing/a-disconnected-remote-queue-is-only-a-fallback",
        summary="A remote queue whose bridge is down is passed over although it has a consumer; with every bridge "
                "down the local queue is the fallback, and once reconnected the queue takes its turn again.",
        commands=(
            *cluster(ON_DEMAND, nodes=3),
            Attach("c2", "n2", "orders"),
            Attach("c3", "n3", "orders"),
            SetLink("n1", "n2", False),
            send(),
            send(),
            SetLink("n1", "n3", False),
            send(),
            SetLink("n1", "n2", True),
            send(),
        ),
        rules=("LB-DISCONNECTED", "LB-FALLBACK", "LB-ROUND-ROBIN"),
        source="Binding.isConnected in BindingsImpl.getNextBinding",
    ),
    Case(
        name="balancing/strict-passes-over-a-disconnected-queue",
        summary="Under STRICT, from a node without a queue, a remote queue whose bridge is down is passed over for "
                "a connected one even though neither has a consumer.",
        commands=(
            AddNode("n2"),
            AddNode("n3"),
            Configure("orders", STRICT),
            CreateQueue("n2", "orders", "orders", ANYCAST),
            CreateQueue("n3", "orders", "orders", ANYCAST),
            SetLink("n1", "n2", False),
            send("n1"),
            send("n1"),
            SetLink("n1", "n2", True),
            send("n1"),
        ),
        rules=("LB-DISCONNECTED", "LB-ROUND-ROBIN"),
        source="Binding.isConnected in BindingsImpl.getNextBinding",
    ),
    Case(
        name="balancing/remote-preference-records-only-consumer-filters",
        summary="A remote queue whose consumers are one filtered and one unfiltered consumer is preferred only for "
                "what the filter matches, so a message of another colour stays on the sending node.",
        commands=(
            *cluster(ON_DEMAND),
            Attach("red-only", "n2", "orders", "red"),
            Attach("anything", "n2", "orders"),
            send(color="blue"),
            send(color="red"),
        ),
        rules=("LB-PREFERRED", "LB-FALLBACK"),
        source="RemoteQueueBindingImpl.isHighAcceptPriority; ARTEMIS-2473",
    ),
    Case(
        name="balancing/on-demand-without-a-local-queue-falls-back-to-a-remote-one",
        summary="Under ON_DEMAND a send from a node without a queue of its own, where no queue has a consumer, "
                "falls back to the first eligible remote queue from the position, connected or not.",
        commands=(
            AddNode("n2"),
            AddNode("n3"),
            Configure("orders", ON_DEMAND),
            CreateQueue("n2", "orders", "orders", ANYCAST),
            CreateQueue("n3", "orders", "orders", ANYCAST),
            send("n1"),
            SetLink("n1", "n2", False),
            SetLink("n1", "n3", False),
            send("n1"),
        ),
        rules=("LB-FALLBACK", "LB-DISCONNECTED", "LB-ROUND-ROBIN"),
        source="lastLowPriorityBinding in BindingsImpl.getNextBinding (no local binding met: the first eligible "
               "one); Binding.isConnected",
    ),
    Case(
        name="balancing/a-group-of-one-leaves-the-position-at-zero",
        summary="A choice in a group of one stores position 0, so when a second queue joins the group the next "
                "scan starts at the first queue again.",
        commands=(
            Configure("orders", OFF),
            CreateQueue("n1", "orders", "qa", ANYCAST),
            send(),
            CreateQueue("n1", "orders", "qb", ANYCAST),
            send(),
            send(),
        ),
        rules=("LB-SINGLE", "LB-ROUND-ROBIN", "LB-FALLBACK"),
        source="BindingsImpl.getNextBinding (bindingsCount == 1, then the position moves just past the chosen "
               "binding, modulo the group's size)",
    ),
)

# --- the send status and FQQN sends ------------------------------------------------------------------

STATUS_CASES: tuple[Case, ...] = (
    Case(
        name="balancing/send-to-an-address-without-queues-finds-no-bindings",
        summary="A send to an address that has no queue anywhere in the cluster is NO_BINDINGS, whichever node "
                "it comes from.",
        commands=(
            AddNode("n2"),
            CreateQueue("n2", "orders", "orders", ANYCAST),
            Send("n1", "invoices"),
            Send("n2", "invoices"),
            send("n1"),
        ),
        rules=("LB-NO-BINDINGS", "LB-SINGLE"),
        source="PostOfficeImpl.route",
    ),
    Case(
        name="balancing/a-send-no-queue-accepts-has-the-version-status",
        summary="A send that the address's only queue filters out reaches nothing: NO_BINDINGS before 2.28.0, "
                "OK from then on.",
        commands=(
            CreateQueue("n1", "orders", "orders", ANYCAST, "red"),
            send(color="blue"),
            send(color="red"),
        ),
        rules=("LB-UNROUTED-STATUS", "LB-ELIGIBLE"),
        source="PostOfficeImpl.route; ARTEMIS-4089 (2.28.0), ARTEMIS-4911",
    ),
    Case(
        name="balancing/fqqn-send-goes-to-the-local-queue-before-2-43",
        summary="A send to address::queue goes to the sending node's queue of that name, past its filter and "
                "past a consumer on another node, while a plain send is balanced.",
        commands=(
            AddNode("n2"),
            CreateQueue("n1", "orders", "q", ANYCAST, "red"),
            CreateQueue("n2", "orders", "q", ANYCAST),
            Attach("c2", "n2", "q"),
            send(color="blue", fqqn_queue="q"),
            send(color="red", fqqn_queue="q"),
            send(color="blue"),
            Send("n2", "orders", fqqn_queue="missing"),
        ),
        rules=("LB-FQQN-LOCAL", "LB-UNROUTED-STATUS"),
        source="ARTEMIS-1867 (2.7.0), ARTEMIS-4795 (2.35.0)",
        profiles=OLDER,
    ),
    Case(
        name="balancing/fqqn-send-checks-the-queue-filter-from-2-35",
        summary="From 2.35 to 2.42 a send to address::queue still goes to the sending node's queue of that name, "
                "but only when the queue's filter matches, and never to a queue of that name on another address.",
        commands=(
            AddNode("n2"),
            CreateQueue("n1", "orders", "q", ANYCAST, "red"),
            CreateQueue("n2", "orders", "q", ANYCAST),
            CreateQueue("n1", "invoices", "inv", ANYCAST),
            Attach("c2", "n2", "q"),
            send(color="blue", fqqn_queue="q"),
            send(color="red", fqqn_queue="q"),
            send(fqqn_queue="inv"),
        ),
        rules=("LB-FQQN-LOCAL", "LB-UNROUTED-STATUS"),
        source="ARTEMIS-4795 (2.35.0)",
        profiles=OLDER,
        overrides=(("balancing.fqqn_send", "LOCAL"),),
    ),
    Case(
        name="balancing/fqqn-send-is-balanced-from-2-43",
        summary="A send to address::queue is balanced among the queues of that name on every node, so it reaches "
                "the consumer on another node, and never a queue of another name.",
        commands=(
            AddNode("n2"),
            CreateQueue("n1", "orders", "q", ANYCAST, "red"),
            CreateQueue("n2", "orders", "q", ANYCAST),
            CreateQueue("n1", "orders", "other", ANYCAST),
            Attach("c2", "n2", "q"),
            Attach("c1", "n1", "other"),
            send(color="blue", fqqn_queue="q"),
            send(color="red", fqqn_queue="q"),
            send(color="blue"),
        ),
        rules=("LB-ELIGIBLE", "LB-ROUND-ROBIN"),
        source="ARTEMIS-5597 (2.43.0)",
        profiles=LATEST_ONLY,
    ),
    Case(
        name="balancing/fqqn-send-needs-the-exact-address-and-filter",
        summary="From 2.35 to 2.42 a send to address::queue reaches the local queue only when the queue is on that "
                "very address and its filter equals the message's colour, whatever the names sort like.",
        commands=(
            CreateQueue("n1", "orders", "q", ANYCAST, "blue"),
            CreateQueue("n1", "payments", "pay", ANYCAST),
            send(color="red", fqqn_queue="q"),
            send(fqqn_queue="pay"),
            send(color="blue", fqqn_queue="q"),
        ),
        rules=("LB-FQQN-LOCAL", "LB-UNROUTED-STATUS"),
        source="ARTEMIS-4795 (2.35.0)",
        profiles=OLDER,
        overrides=(("balancing.fqqn_send", "LOCAL"),),
    ),
)

# --- redistribution ---------------------------------------------------------------------------------

REDISTRIBUTION_CASES: tuple[Case, ...] = (
    Case(
        name="balancing/on-demand-redistributes-waiting-messages-as-copies",
        summary="Messages waiting where nobody consumes move, each as a copy under a new message ID, to the node "
                "where a consumer attaches.",
        commands=(
            *cluster(ON_DEMAND, 0),
            send(),
            send(),
            Attach("c2", "n2", "orders"),
        ),
        rules=("RD-TRIGGER-REMOTE-CONSUMER", "RD-ALLOWED", "RD-TARGET", "RD-NEW-ID"),
        source=f"{SEED}, PostOfficeImpl.redistribute (allowRedistribute, message.copy(storageManager.generateID())) "
               "and BindingsImpl.redistribute",
    ),
    Case(
        name="balancing/off-and-strict-never-redistribute",
        summary="Under OFF and under STRICT a message waiting on a node without a consumer stays there when a "
                "consumer attaches elsewhere and the clock moves on.",
        commands=(
            *cluster(OFF, 0),
            send(),
            Attach("c2", "n2", "orders"),
            Tick(),
            Configure("orders", STRICT, 0),
            Close("c2"),
            Attach("c2", "n2", "orders"),
            Tick(),
        ),
        rules=("RD-ALLOWED",),
        source=f"{SEED}, BindingsImpl.allowRedistribute (true only for ON_DEMAND) and redistribute (returns false "
               "for STRICT and OFF)",
    ),
    Case(
        name="balancing/redistribution-targets-take-turns",
        summary="Waiting messages are redistributed by round robin over the queues of their group that have "
                "consumers, so two remote consumers receive them in turn.",
        commands=(
            *cluster(ON_DEMAND, 2, nodes=3),
            send(),
            send(),
            send(),
            Attach("c2", "n2", "orders"),
            Attach("c3", "n3", "orders"),
            Tick(2),
        ),
        rules=("RD-TARGET", "RD-DELAY", "RD-NEW-ID"),
        source=f"{SEED}, BindingsImpl.redistribute (routingNamePositions, incrementPos); MessageRedistributionTest."
               "testRedistributionWhenConsumerIsClosed",
    ),
    Case(
        name="balancing/redistribution-requires-the-target-queue-filter-to-match",
        summary="A waiting message the target queue's filter accepts is moved to that queue's consumer, while one "
                "the filter rejects stays where it is, although its colour sorts after the filter's and the "
                "target's consumer takes anything.",
        commands=(
            AddNode("n2"),
            Configure("orders", ON_DEMAND, 0),
            CreateQueue("n1", "orders", "orders", ANYCAST),
            CreateQueue("n2", "orders", "orders", ANYCAST, "blue"),
            send(color="blue"),
            send(color="red"),
            Attach("c2", "n2", "orders"),
            Tick(),
        ),
        rules=("RD-TARGET", "LB-ELIGIBLE"),
        source=f"{SEED}, BindingsImpl.redistribute ((filter == null || filter.match(message)))",
    ),
    Case(
        name="balancing/redistribution-requires-a-matching-consumer-filter",
        summary="A waiting message moves only to a remote queue whose consumer filter matches it; one of another "
                "colour stays, and blocks the messages behind it.",
        commands=(
            *cluster(ON_DEMAND),
            send(color="blue"),
            send(color="red"),
            Configure("orders", ON_DEMAND, 0),
            Attach("c2", "n2", "orders", "red"),
            Close("c2"),
            Attach("c2", "n2", "orders", "blue"),
        ),
        rules=("RD-TARGET", "LB-PREFERRED", "RD-NEW-ID"),
        source=f"{SEED}, BindingsImpl.redistribute (binding.isHighAcceptPriority(message)); "
               "RemoteQueueBindingImpl.isHighAcceptPriority",
    ),
    Case(
        name="balancing/redistribution-skips-the-originating-queue",
        summary="A message waiting for a paused consumer that matches it is moved to another node, never back to "
                "its own queue, even when the scan starts there; an unmatched message that arrived while the "
                "consumer was still started gave the queue the flag that lets it have a redistributor.",
        commands=(
            AddNode("n2"),
            Configure("orders", ON_DEMAND, 0),
            CreateQueue("n2", "orders", "orders", ANYCAST),
            CreateQueue("n1", "orders", "orders", ANYCAST),
            Attach("a", "n1", "orders", "red"),
            send("n1", color="blue"),
            Pause("a"),
            send("n2", color="red"),
            Attach("b", "n2", "orders"),
        ),
        rules=("RD-SKIP-ORIGIN", "RD-TARGET"),
        source=f"{SEED}, BindingsImpl.redistribute (the scan from routingNamePositions and "
               "binding.getBindable() != originatingQueue); QueueImpl.deliver sets hasUnMatchedPending only when "
               "every consumer answers NO_MATCH, and ServerConsumerImpl.handle answers BUSY while stopped, so the "
               "blue message must arrive before the pause (checked against Artemis 2.40.0)",
        profiles=LATEST_ONLY,
    ),
    Case(
        name="balancing/grouped-messages-are-never-redistributed",
        summary="A waiting message with a group ID stays where it is while the ungrouped message beside it moves "
                "to the new consumer.",
        commands=(
            *cluster(ON_DEMAND, 0),
            send(grouped=True),
            send(),
            Attach("c2", "n2", "orders"),
            Tick(),
        ),
        rules=("RD-GROUPED", "RD-TARGET"),
        source="Redistributor.handle; MessageRedistributionTest.testRedistributionWithMessageGroups",
    ),
    Case(
        name="balancing/last-consumer-closing-starts-redistribution",
        summary="Messages waiting beside a paused consumer move to another node's consumer when that last local "
                "consumer closes.",
        commands=(
            *cluster(ON_DEMAND, 0),
            Attach("c1", "n1", "orders"),
            Pause("c1"),
            send(),
            send(),
            Attach("c2", "n2", "orders"),
            Close("c1"),
        ),
        rules=("RD-TRIGGER-CLOSE", "RD-TARGET", "RD-NEW-ID"),
        source="PostOfficeImpl.onNotification (CONSUMER_CLOSED); "
               "MessageRedistributionTest.testRedistributionWhenConsumerIsClosed",
    ),
    Case(
        name="balancing/a-new-queue-starts-redistribution",
        summary="From 2.20.0, creating a queue on a node while another node's queue of the address has a consumer "
                "gives the node's queue named like the address a redistributor, which moves its waiting messages; "
                "in 2.11.0 nothing moves.",
        commands=(
            *cluster(ON_DEMAND),
            send(),
            Attach("c2", "n2", "orders"),
            Configure("orders", ON_DEMAND, 0),
            CreateQueue("n1", "orders", "extra", ANYCAST),
        ),
        rules=("RD-TRIGGER-QUEUE-CREATED", "RD-TARGET"),
        source="PostOfficeImpl.onNotification (BINDING_ADDED), from 2.20.0 (commit 7d129b36e9, "
               "MessageRedistributionTest.testRedistributionToRemoteConsumerFromNewQueueLbOffWithRedistribution); "
               "checked against Artemis 2.11.0 and 2.40.0",
    ),
    Case(
        name="balancing/redistribution-waits-for-the-delay",
        summary="With a redistribution delay of two ticks a waiting message moves only once the clock has advanced "
                "twice after the trigger.",
        commands=(
            *cluster(ON_DEMAND, 2),
            send(),
            Attach("c2", "n2", "orders"),
            Tick(),
            send(),
            Tick(),
        ),
        rules=("RD-DELAY", "RD-TARGET"),
        source="QueueImpl.addRedistributor",
    ),
    Case(
        name="balancing/a-local-consumer-cancels-a-pending-redistributor",
        summary="A consumer that attaches to the waiting queue before the delay runs out cancels its "
                "redistributor, so nothing moves even after the delay.",
        commands=(
            *cluster(ON_DEMAND, 2),
            send(color="blue"),
            Attach("c2", "n2", "orders"),
            Attach("c1", "n1", "orders", "red"),
            Tick(3),
        ),
        rules=("RD-DELAY", "RD-TRIGGER-REMOTE-CONSUMER"),
        source="QueueImpl.cancelRedistributor; MessageRedistributionTest.testDelayedRedistributionCancelled; "
               "QueueImpl.addRedistributor",
    ),
    Case(
        name="balancing/delay-minus-one-never-redistributes",
        summary="With the default delay of -1 a waiting message never moves; a delay below -1 is no error and, "
                "like 0, redistributes at the next trigger; a tick of zero is refused.",
        commands=(
            *cluster(ON_DEMAND),
            send(),
            Attach("c2", "n2", "orders"),
            Tick(5),
            Configure("orders", ON_DEMAND, -2),
            Attach("c3", "n2", "orders"),
            Tick(0),
        ),
        rules=("RD-DELAY",),
        source="redistribution-delay default -1 (AddressSettings); PostOfficeImpl."
               "onNotification adds a redistributor for any delay but -1 and QueueImpl.addRedistributor schedules "
               "only a positive one (checked against Artemis 2.40.0)",
    ),
    Case(
        name="balancing/an-unmatched-message-beside-a-consumer-is-redistributed-from-2-19",
        summary="A message no local consumer's filter matches moves to a remote consumer from 2.19.0, and stays "
                "put before, since only a queue without consumers got a redistributor.",
        commands=(
            *cluster(ON_DEMAND, 0),
            Attach("c1", "n1", "orders", "red"),
            send(color="blue"),
            Attach("c2", "n2", "orders"),
        ),
        rules=("RD-DELAY", "RD-TRIGGER-REMOTE-CONSUMER", "RD-TARGET"),
        source="QueueImpl.addRedistributor and hasUnMatchedPending; ARTEMIS-2007 (2.19.0)",
    ),
    Case(
        name="balancing/a-failed-redistribution-uses-up-an-id-before-2-29",
        summary="A redistribution attempt that finds no target still takes a message ID for its copy before "
                "2.29.0, so the next send's ID shows how many attempts failed; from 2.29.0 it takes none.",
        commands=(
            *cluster(ON_DEMAND, 0),
            send(color="blue"),
            Attach("c2", "n2", "orders", "red"),
            Tick(),
            send(),
        ),
        rules=("RD-NEW-ID", "RD-TARGET"),
        source=f"{SEED}, PostOfficeImpl.redistribute (message.copy(storageManager.generateID()) before "
               "bindings.redistribute); ARTEMIS-4207 (2.29.0)",
    ),
    Case(
        name="balancing/an-anycast-queue-named-unlike-its-address-is-never-redistributed",
        summary="The triggers look the local queue up by the address's name, so messages waiting in an ANYCAST "
                "queue of another name stay although a remote consumer is waiting for them.",
        commands=(
            AddNode("n2"),
            Configure("orders", ON_DEMAND, 0),
            CreateQueue("n1", "orders", "orders-1", ANYCAST),
            CreateQueue("n2", "orders", "orders-2", ANYCAST),
            send(),
            Attach("c2", "n2", "orders-2"),
            Tick(),
            send(),
        ),
        rules=("RD-TRIGGER-REMOTE-CONSUMER", "RD-GROUP"),
        source="PostOfficeImpl.onNotification (queue looked up by routing name; read from the code)",
    ),
    Case(
        name="balancing/no-group-named-like-the-queue-means-no-redistribution",
        summary="A queue that gets a redistributor through a subscription of the same name on another address "
                "moves nothing, since its own address has no group of that name, though a consumer waits "
                "elsewhere; before 2.29.0 each attempt still takes a message ID.",
        commands=(
            AddNode("n2"),
            Configure("orders", ON_DEMAND, 0),
            CreateQueue("n1", "orders", "q", ANYCAST),
            CreateQueue("n2", "orders", "orders", ANYCAST),
            CreateQueue("n2", "news", "q", MULTICAST),
            send(),
            Attach("c2", "n2", "orders"),
            Attach("cq", "n2", "q"),
            Tick(),
            send(),
        ),
        rules=("RD-GROUP", "RD-TARGET", "RD-TRIGGER-REMOTE-CONSUMER", "RD-NEW-ID"),
        source=f"{SEED}, BindingsImpl.redistribute (routingNameBindingMap.get(routingName) == null: return false); "
               "PostOfficeImpl.onNotification (the local queue looked up by name)",
    ),
    Case(
        name="balancing/redistribution-group-is-the-queue-name",
        summary="A message waiting in a queue is redistributed within the group named like the queue, except that "
                "from 2.25.0 one sent to an FQQN and held by an ANYCAST queue uses its address's group.",
        commands=(
            AddNode("n2"),
            AddNode("n3"),
            Configure("orders", ON_DEMAND, 0),
            CreateQueue("n1", "orders", "q", ANYCAST),
            CreateQueue("n2", "orders", "q", MULTICAST),
            CreateQueue("n3", "orders", "orders", ANYCAST),
            send(routing_type=ANYCAST, fqqn_queue="q"),
            send(routing_type=ANYCAST),
            Attach("c3", "n3", "orders"),
            Attach("c2", "n2", "q"),
        ),
        rules=("RD-GROUP", "RD-TARGET", "RD-TRIGGER-REMOTE-CONSUMER"),
        source=f"{SEED}, BindingsImpl.redistribute (routingName = originatingQueue.getName()); ARTEMIS-3918 "
               "(2.25.0)",
    ),
    Case(
        name="balancing/redistribution-to-a-remote-queue-follows-its-recorded-consumer-filters",
        summary="A remote queue whose consumers are one filtered and one unfiltered consumer is not a "
                "redistribution target for a message of another colour: only the recorded filter counts.",
        commands=(
            *cluster(ON_DEMAND, 0),
            send(color="blue"),
            Attach("red-only", "n2", "orders", "red"),
            Attach("anything", "n2", "orders"),
            Tick(),
        ),
        rules=("RD-TARGET", "LB-PREFERRED"),
        source=f"{SEED}, BindingsImpl.redistribute (binding.isHighAcceptPriority(message)); "
               "RemoteQueueBindingImpl.isHighAcceptPriority; ARTEMIS-2473",
    ),
    Case(
        name="balancing/a-busy-redistributor-waits-for-a-prompt",
        summary="A redistributor that found no target tries again only when its queue is prompted: the remote "
                "filtered consumer closing makes the remote queue a target but prompts nothing, nor does a send "
                "that lands elsewhere; the next remote consumer's arrival does, and the message moves.",
        commands=(
            *cluster(ON_DEMAND, 0),
            send(color="blue"),
            Attach("red-only", "n2", "orders", "red"),
            Attach("anything", "n2", "orders"),
            Close("red-only"),
            send(color="red"),
            Attach("late", "n2", "orders"),
        ),
        rules=("RD-DELAY", "RD-TRIGGER-REMOTE-CONSUMER", "RD-TARGET"),
        source="QueueImpl.addRedistributor (a redistributor in place: \"just prompt delivery\"), QueueImpl.deliver "
               "runs on deliverAsync only; PostOfficeImpl.onNotification (CONSUMER_CLOSED of a remote consumer adds "
               "no redistributor); found fuzzing Artemis 2.40.0",
    ),
    Case(
        name="balancing/an-unconfigured-address-never-redistributes",
        summary="An address without address settings has the default redistribution delay of -1, so a waiting "
                "message stays although a consumer attaches on another node and the clock moves on.",
        commands=(
            AddNode("n2"),
            CreateQueue("n1", "orders", "orders", ANYCAST),
            CreateQueue("n2", "orders", "orders", ANYCAST),
            send(),
            Attach("c2", "n2", "orders"),
            Tick(),
            send(),
        ),
        rules=("RD-DELAY", "RD-TRIGGER-REMOTE-CONSUMER"),
        source="AddressSettings (redistribution-delay default -1); QueueImpl.addRedistributor",
    ),
    Case(
        name="balancing/redistribution-delay-counts-from-the-trigger",
        summary="A redistributor added when the clock already reads 1 waits its one-tick delay from then: the "
                "message moves at the next tick, not at once.",
        commands=(
            *cluster(ON_DEMAND, 1),
            Tick(),
            send(),
            Attach("c2", "n2", "orders"),
            Tick(),
        ),
        rules=("RD-DELAY", "RD-TARGET"),
        source="QueueImpl.addRedistributor (scheduled redistribution-delay after the trigger)",
    ),
    Case(
        name="balancing/redistributors-run-in-queue-creation-order",
        summary="When several queues' redistributors are active in one step they move their messages in the "
                "order the queues were created, each copy taking the next message ID in that order, whether all "
                "start at one tick or a send fills two of them at once.",
        commands=(
            AddNode("n2"),
            Configure("news", ON_DEMAND, 1),
            CreateQueue("n1", "news", "s1", MULTICAST),
            CreateQueue("n1", "news", "s2", MULTICAST, "red"),
            CreateQueue("n1", "news", "s3", MULTICAST, "blue"),
            CreateQueue("n1", "news", "s4", MULTICAST, "green"),
            CreateQueue("n2", "news", "s1", MULTICAST),
            CreateQueue("n2", "news", "s2", MULTICAST, "red"),
            CreateQueue("n2", "news", "s3", MULTICAST, "blue"),
            CreateQueue("n2", "news", "s4", MULTICAST, "green"),
            Send("n1", "news", color="red"),
            Send("n1", "news", color="blue"),
            Send("n1", "news", color="green"),
            Attach("x1", "n2", "s1"),
            Attach("x2", "n2", "s2"),
            Attach("x3", "n2", "s3"),
            Attach("x4", "n2", "s4"),
            Tick(),
            SetLink("n1", "n2", False),
            Send("n1", "news", color="red"),
            Send("n1", "news", color="blue"),
            Send("n1", "news", color="green"),
        ),
        rules=("RD-TARGET", "RD-NEW-ID", "RD-DELAY", "LB-DISCONNECTED", "LB-FALLBACK"),
        source="brokerspec's delivery step: each active redistributor makes one attempt, queues in creation "
               "order; BindingsImpl.redistribute (the target's bridge is not checked)",
    ),
    Case(
        name="balancing/redistribution-moves-the-position-past-its-target",
        summary="A message redistributed to the first queue of the group moves the group's position just past it, "
                "so the next send from that node starts its scan at the second queue.",
        commands=(
            AddNode("n2"),
            AddNode("n3"),
            Configure("orders", ON_DEMAND, 0),
            CreateQueue("n2", "orders", "orders", ANYCAST),
            CreateQueue("n1", "orders", "orders", ANYCAST),
            CreateQueue("n3", "orders", "orders", ANYCAST),
            send(),
            Attach("c2", "n2", "orders"),
            Attach("c3", "n3", "orders"),
            send(),
        ),
        rules=("RD-TARGET", "LB-ROUND-ROBIN"),
        source=f"{SEED}, BindingsImpl.redistribute (routingNamePositions shared with getNextBinding, "
               "incrementPos)",
    ),
    Case(
        name="balancing/redistribution-to-the-last-member-wraps-the-position",
        summary="A message redistributed to the last queue of the group wraps the group's position to 0, so the "
                "next send starts its scan at the first queue, even after a queue has joined the group.",
        commands=(
            AddNode("n2"),
            AddNode("n3"),
            Configure("orders", ON_DEMAND, 0),
            CreateQueue("n2", "orders", "orders", ANYCAST),
            CreateQueue("n1", "orders", "orders", ANYCAST),
            CreateQueue("n3", "orders", "orders", ANYCAST),
            send(),
            Attach("c3", "n3", "orders"),
            Attach("c2", "n2", "orders"),
            CreateQueue("n1", "orders", "extra", ANYCAST),
            Attach("cx", "n1", "extra"),
            send(),
        ),
        rules=("RD-TARGET", "LB-ROUND-ROBIN"),
        source=f"{SEED}, BindingsImpl.redistribute (incrementPos wraps to 0 at the group's size)",
    ),
    Case(
        name="balancing/a-missing-group-ends-the-attempt-at-the-first-message",
        summary="A redistributor whose queue has no group of its name on the address gives up at the first "
                "waiting message, so before 2.29.0 each attempt uses up one message ID, not one per message.",
        commands=(
            AddNode("n2"),
            Configure("orders", ON_DEMAND, 0),
            CreateQueue("n1", "orders", "q", ANYCAST),
            CreateQueue("n2", "orders", "orders", ANYCAST),
            CreateQueue("n2", "news", "q", MULTICAST),
            send(),
            send(),
            Attach("cq", "n2", "q"),
            send(),
        ),
        rules=("RD-GROUP", "RD-NEW-ID", "RD-TRIGGER-REMOTE-CONSUMER"),
        source=f"{SEED}, BindingsImpl.redistribute (routingNameBindingMap.get(routingName) == null: return false, "
               "the Redistributor's BUSY); ARTEMIS-4207 (2.29.0)",
    ),
)

CASES: tuple[Case, ...] = (*MODEL_CASES, *TYPE_CASES, *CHOICE_CASES, *STATUS_CASES, *REDISTRIBUTION_CASES,
                          *queries.BALANCING, *queries.ATTRIBUTE_CASES,
                          *balancing_addresses.WILDCARDS, *balancing_addresses.FQQN_CONSUMERS,
                          *balancing_addresses.PREFIXES, *balancing_addresses.PER_NODE,
                          *balancing_addresses.UPDATES, *balancing_addresses.TYPE_ADOPTION,
                          *balancing_sends.AUTO_CREATE, *balancing_consumers.CONSUMERS,
                          *balancing_tx.TRANSACTIONS, *balancing_bridges.BRIDGES)
"""Every load-balancing case, grouped by topic."""
