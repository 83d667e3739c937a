"""Conformance cases for hierarchical topologies: network connectors, TTLs, conduit, suppression and the tree connector.

Introduction
------------
Each case is a short script of broker and client operations whose expected
outcomes the topology spec computes. A broker under test shows nothing but
outcomes, so every case makes demand visible through messages: where a sent
message is delivered and by which brokerPath, where a queue message waits,
where a topic copy is dropped, and which waiting messages a later change of
consumers or settings sets moving. Together the cases cover:

* every scenario of seed 002 (AMQ-2875, the proposed tree connector): leaf,
  branch and root roles and the many-to-one connectors (rules 1 and 2),
  demand climbing from a leaf to the root with no TTL and never passed to a
  sibling (rule 3), a branch consumer reaching up and down its own subtree
  (rule 4), a root consumer reaching every broker (rule 5), the retail
  hierarchy's spillage under network connectors with TTL 1, 2 and 3 beside
  the same hierarchy under the tree connector, moving a store, inserting a
  level, and the two traffic patterns the seed names, HQ to a store and a
  store to HQ, under both designs;
* every measurement brokerspec made on real ActiveMQ 5.17.2 brokers
  (docs/topologies.md section 9): the four-broker tree with networkTTL 1
  and 2, two leaf consumers taking turns, consumerTTL 2 with messageTTL 1
  and decreased priority, the non-duplex chain, and the eight-broker tree
  for a queue and for a topic, and the replayWhenNoConsumers check;
* the steps of ``DemandForwardingBridgeSupport.serviceRemoteConsumerAdvisory``
  one by one (consumerTTL, the loop check, include and exclude filters, the
  brokerPath), conduit subscriptions with and without
  ``conduitNetworkQueueSubscriptions`` (AMQ-6858), duplicate suppression for
  queues and topics, including a higher-priority route replacing a settled
  one, and ``decreaseNetworkConsumerPriority``;
* message forwarding (``NetworkBridgeFilter``): messageTTL per bridge, never
  back to a broker on the path, round robin within a priority, and
  ``ConditionalNetworkBridgeFilter``'s replay back (AMQ-2324);
* removal: closing a consumer or dropping a connector removes every
  subscription it caused, hop by hop, and a conduit subscription only with
  its last member;
* the refusals: unknown or duplicate brokers and clients, self links, a
  second connector between two brokers, mixing the two designs, a second
  tree parent, a leaf with children, a cycle of parents.

Several scripts first strand a message and then change the network: the
step that frees it names every broker the message then passes, so a wrong
subscription anywhere on the way shows in that step's outcome.

Sources. The tree-connector cases follow seed 002 (``002_074d5b59b72b3a55.txt``),
the AMQ-2875 proposal, and cite the numbered rule they exercise. The
network-connector cases follow ActiveMQ Classic 5.17.2: the classes and
methods of its network bridges, brokerspec's own measurements of real
brokers, and the JIRA issues that changed the behaviour (AMQ-2324,
AMQ-4607, AMQ-6858). Where the seed is silent (the root keeps its children
apart, one subscription per tree link, a forest of two roots) or real
brokers depend on timing (which duplicate arrives first, the order of
newcomers in a dispatch list), the case says it pins down a decision of the
spec.
"""

from __future__ import annotations

from brokerspec.spec.topologies import (
    AddBroker,
    AddProducer,
    BridgeConfig,
    Connect,
    Disconnect,
    Move,
    RemoveProducer,
    Role,
    Send,
    SetReplay,
    SetTtl,
    Subscribe,
    TopologyCommand,
    TreeConnect,
    Unsubscribe,
    retail_commands,
)

from . import Case, queries

SEED = "seed 002 (002_074d5b59b72b3a55.txt)"
"""How a case cites the AMQ-2875 tree-connector proposal."""

TABLE = "brokerspec's measurement of real ActiveMQ 5.17.2 brokers (docs/topologies.md section 9)"
"""How a case cites what brokerspec measured on real brokers."""

Q = "queue://TEST.Q"
T = "topic://TEST.T"
OTHER_Q = "queue://OTHER.Q"

BRANCH = Role.BRANCH
LEAF = Role.LEAF


def brokers(*names: str) -> tuple[TopologyCommand, ...]:
    """``add_broker`` for each name, in order."""
    return tuple(AddBroker(name) for name in names)


def ttl(consumer_ttl: int, message_ttl: int | None = None, *, conduit_network_queues: bool = False,
        decrease_priority: bool = False, suppress_duplicate_queues: bool = False,
        suppress_duplicate_topics: bool = True) -> BridgeConfig:
    """Connector settings with the given TTLs (messageTTL defaults to consumerTTL, as networkTTL sets both)."""
    return BridgeConfig(consumer_ttl=consumer_ttl, message_ttl=consumer_ttl if message_ttl is None else message_ttl,
                        conduit_network_queues=conduit_network_queues, decrease_priority=decrease_priority,
                        suppress_duplicate_queues=suppress_duplicate_queues,
                        suppress_duplicate_topics=suppress_duplicate_topics)


def four_tree(config: BridgeConfig) -> tuple[TopologyCommand, ...]:
    """The measured four-broker tree: b1 the root, b2 under it, b3 and b4 under b2, duplex connectors."""
    return brokers("b1", "b2", "b3", "b4") + (
        Connect("b2", "b1", True, config), Connect("b3", "b2", True, config), Connect("b4", "b2", True, config))


def eight_tree(config: BridgeConfig) -> tuple[TopologyCommand, ...]:
    """The measured eight-broker tree: b1 root; b2, b3 under b1; b4, b5, b6 under b2; b7, b8 under b3."""
    edges = (("b2", "b1"), ("b3", "b1"), ("b4", "b2"), ("b5", "b2"), ("b6", "b2"), ("b7", "b3"), ("b8", "b3"))
    return brokers(*(f"b{i}" for i in range(1, 9))) + tuple(Connect(c, p, True, config) for c, p in edges)


def triangle(config: BridgeConfig) -> tuple[TopologyCommand, ...]:
    """Brokers a, b, c joined pairwise by duplex connectors: every broker has two routes to every other."""
    return brokers("a", "b", "c") + (
        Connect("a", "b", True, config), Connect("b", "c", True, config), Connect("c", "a", True, config))


def retail(regions: int, stores: int, design: str, network_ttl: int = 2) -> tuple[TopologyCommand, ...]:
    """Seed 002's retail hierarchy: hq, regions r1.., stores r1-s1..; network connectors use ``network_ttl``."""
    return tuple(retail_commands(regions, stores, design, network_ttl))


def sends(broker: str, count: int, destination: str = Q) -> tuple[TopologyCommand, ...]:
    """``count`` sends of one message each to ``destination`` at ``broker``."""
    return tuple(Send(broker, destination) for _ in range(count))


# --- what brokerspec measured on real ActiveMQ 5.17.2 brokers, replay included -----------------------------

TABLE_CASES: tuple[Case, ...] = (
    Case(
        name="topologies/ttl-1-demand-stops-after-one-hop",
        summary="With networkTTL 1 a consumer on leaf b3 makes demand on b2 only: b2's message is delivered, while "
                "messages sent at the root and at the sibling leaf wait where they were sent.",
        commands=four_tree(ttl(1)) + (
            Subscribe("c", "b3", Q),
            Send("b2", Q), Send("b1", Q), Send("b4", Q),
        ),
        rules=("TOPO-NC-TTL", "TOPO-NC-PATH", "TOPO-MSG-ROUTE", "TOPO-MSG-WAIT"),
        source=f"{TABLE} (4-tree, duplex, networkTTL=1); "
               "DemandForwardingBridgeSupport.serviceRemoteConsumerAdvisory",
    ),
    Case(
        name="topologies/ttl-2-spills-demand-to-the-sibling-leaf",
        summary="With networkTTL 2 the leaf consumer's demand reaches the root and spills to the sibling leaf b4, so "
                "messages sent at b2, b1 and b4 all arrive through b2.",
        commands=four_tree(ttl(2)) + (
            Subscribe("c", "b3", Q),
            Send("b2", Q), Send("b1", Q), Send("b4", Q),
        ),
        rules=("TOPO-NC-TTL", "TOPO-NC-PATH", "TOPO-MSG-ROUTE", "TOPO-MSG-TTL"),
        source=f"{TABLE} (4-tree, networkTTL=2, the sibling spill of AMQ-2875)",
    ),
    Case(
        name="topologies/ttl-2-two-leaf-consumers-take-turns",
        summary="With consumers on both leaves, four messages sent at the root alternate between them by round "
                "robin at b2.",
        commands=four_tree(ttl(2)) + (
            Subscribe("c3", "b3", Q), Subscribe("c4", "b4", Q),
        ) + sends("b1", 4),
        rules=("TOPO-NC-CONDUIT", "TOPO-MSG-ROUTE", "TOPO-SETTLE"),
        source=f"{TABLE} (4-tree, networkTTL=2, consumers on b3 and b4); Queue.doActualDispatch",
    ),
    Case(
        name="topologies/split-ttl-strands-forwarded-messages-one-hop-on",
        summary="With consumerTTL 2, messageTTL 1 and decreased priority, b1 and b4 hold demand but their messages "
                "stop at b2, where a local consumer opening later takes both before the network.",
        commands=four_tree(ttl(2, 1, decrease_priority=True)) + (
            Subscribe("c", "b3", Q),
            Send("b2", Q), Send("b1", Q), Send("b4", Q),
            Subscribe("near", "b2", Q),
            Send("b2", Q),
        ),
        rules=("TOPO-MSG-TTL", "TOPO-NC-PRIORITY", "TOPO-MSG-WAIT", "TOPO-SETTLE"),
        source=f"{TABLE} (consumerTTL=2, messageTTL=1, decreaseNetworkConsumerPriority: priorities -5 and -8, "
               "messages stuck on b2); NetworkBridgeFilter.matchesForwardingFilter; AMQ-4607",
    ),
    Case(
        name="topologies/non-duplex-chain-ignores-demand-routed-through-itself",
        summary="On a chain of non-duplex connector pairs with TTL 2 a consumer on b1 is reached from b3 in two hops "
                "and from b2 in one, and b1 ignores its own demand coming back, so its messages stay local.",
        commands=brokers("b1", "b2", "b3") + (
            Connect("b1", "b2", False, ttl(2)), Connect("b2", "b1", False, ttl(2)),
            Connect("b2", "b3", False, ttl(2)), Connect("b3", "b2", False, ttl(2)),
            Subscribe("c", "b1", Q),
            Send("b3", Q), Send("b2", Q), Send("b1", Q), Send("b1", Q),
        ),
        rules=("TOPO-NC-LOOP", "TOPO-NC-TTL", "TOPO-CONNECTORS", "TOPO-MSG-ROUTE"),
        source=f"{TABLE} (3-chain non-duplex, networkTTL=2: 'Ignoring sub from b2, already routed through this "
               "broker once', 'restricted to 2 network hops')",
    ),
    Case(
        name="topologies/eight-tree-ttl-2-reaches-distance-two-only",
        summary="In the eight-broker tree with networkTTL 2 a consumer on b4 is reached from brokers at distance two "
                "or less; messages sent at b3, b7 and b8 wait where they were sent.",
        commands=eight_tree(ttl(2)) + (
            Subscribe("c", "b4", Q),
            Send("b1", Q), Send("b5", Q), Send("b6", Q), Send("b2", Q),
            Send("b3", Q), Send("b7", Q), Send("b8", Q),
        ),
        rules=("TOPO-NC-TTL", "TOPO-MSG-WAIT", "TOPO-MSG-ROUTE"),
        source=f"{TABLE} (8-tree, networkTTL=2, consumer on b4; distance 3 not delivered)",
    ),
    Case(
        name="topologies/eight-tree-topic-one-copy-per-consumer",
        summary="Two topic consumers on b4 and b5 share one conduit subscription on b1: a publish at b1 or b6 gives "
                "each exactly one copy, and one at b7, which has no demand, is dropped.",
        commands=eight_tree(ttl(2)) + (
            Subscribe("c4", "b4", T), Subscribe("c5", "b5", T),
            Send("b1", T), Send("b6", T), Send("b7", T), Send("b4", T),
        ),
        rules=("TOPO-NC-CONDUIT", "TOPO-MSG-ROUTE", "TOPO-MSG-WAIT", "TOPO-MSG-LOOP"),
        source=f"{TABLE} (8-tree, topic TEST.T, consumers b4 and b5); "
               "ConduitBridge.addToAlreadyInterestedConsumers",
    ),
    Case(
        name="topologies/replay-when-no-consumers-sends-a-message-back",
        summary="A message stranded on b2 by messageTTL 1 goes back to b1 when a consumer opens there, but only once "
                "b2's queue policy has replayWhenNoConsumers; a message from b4, whose path does not hold b1, is "
                "still held by messageTTL.",
        commands=four_tree(ttl(2, 1)) + (
            Subscribe("far", "b3", Q),
            Send("b1", Q),
            Subscribe("near", "b1", Q),
            SetReplay("b2", True),
            Send("b4", Q),
        ),
        rules=("TOPO-MSG-REPLAY", "TOPO-MSG-LOOP", "TOPO-MSG-TTL", "TOPO-SETTLE"),
        source="brokerspec's measurement of real ActiveMQ 5.17.2 brokers (replayWhenNoConsumers); "
               "ConditionalNetworkBridgeFilter.matchesForwardingFilter, messageTTL not checked on the replay "
               "branch; AMQ-2324",
    ),
)

# --- seed 002: the tree connector -------------------------------------------------------------------------

TREE_CASES: tuple[Case, ...] = (
    Case(
        name="topologies/tree-rule-1-undeclared-brokers-are-roots-and-two-make-a-forest",
        summary="hq and x declare no tree connector and so are roots, each reached from its own leaves; a second "
                "root is not refused, but demand never crosses between the two trees.",
        commands=retail(1, 1, "tree") + brokers("x", "y") + (
            TreeConnect("y", "x", LEAF),
            Subscribe("h", "hq", "queue://HQ.IN"), Subscribe("c", "y", Q),
            Send("r1-s1", "queue://HQ.IN"), Send("y", "queue://HQ.IN"),
            Send("hq", Q), Send("r1-s1", Q), Send("x", Q),
        ),
        rules=("TOPO-TREE-ROLES", "TOPO-TREE-DOWN", "TOPO-MSG-WAIT"),
        source=f"{SEED}, rule 1 ('If a broker has not been identified as either leaf or branch then it should "
               "consider itself to be the root'; 'There should only ever be one root'); decided: a second root "
               "makes a forest",
    ),
    Case(
        name="topologies/tree-rule-2-connectors-are-many-to-one",
        summary="A broker declares one tree connector: a second parent, a parent that is a leaf, a leaf with "
                "children, a self link, a link already made from the other side and a cycle are all refused, and "
                "the tree still works.",
        commands=retail(2, 1, "tree") + brokers("x") + (
            TreeConnect("r1-s1", "r2", LEAF),
            TreeConnect("x", "r1-s1", LEAF),
            TreeConnect("hq", "x", LEAF),
            TreeConnect("x", "x", BRANCH),
            TreeConnect("hq", "r1", BRANCH),
            TreeConnect("x", "r2", BRANCH),
            TreeConnect("hq", "x", BRANCH),
            Subscribe("c", "r2-s1", Q),
            Send("hq", Q), Send("x", Q),
        ),
        rules=("TOPO-TREE-ROLES", "TOPO-CONNECTORS"),
        source=f"{SEED}, rules 1-2 (leaf, branch, root; 'many to one': leaves to their branch, branches to the root)",
    ),
    Case(
        name="topologies/tree-rule-3-leaf-demand-climbs-to-the-root-with-no-ttl",
        summary="A leaf four levels below the root is reached from every ancestor, the root's message crossing four "
                "links, with no TTL to tune.",
        commands=brokers("hq", "a", "b", "c", "s") + (
            TreeConnect("a", "hq", BRANCH), TreeConnect("b", "a", BRANCH), TreeConnect("c", "b", BRANCH),
            TreeConnect("s", "c", LEAF),
            Subscribe("x", "s", Q),
            Send("hq", Q), Send("a", Q), Send("c", Q),
        ),
        rules=("TOPO-TREE-UP", "TOPO-MSG-ROUTE"),
        source=f"{SEED}, rule 3 ('the consumer advisory travels up the tree, all the way to root: the concept of "
               "networkTTL is ignored')",
    ),
    Case(
        name="topologies/tree-rule-3-branch-keeps-a-childs-demand-from-its-other-children",
        summary="A store consumer makes demand on its region and HQ only: HQ's message arrives, while a sibling "
                "store, the other region and its store keep their messages.",
        commands=retail(2, 2, "tree") + (
            Subscribe("c", "r1-s1", Q),
            Send("hq", Q), Send("r1", Q), Send("r1-s2", Q), Send("r2", Q), Send("r2-s1", Q),
        ),
        rules=("TOPO-TREE-NO-SIBLINGS", "TOPO-TREE-UP", "TOPO-MSG-WAIT"),
        source=f"{SEED}, rule 3 ('Branches do not pass advisory messages from children to their other child "
               "nodes'); decided: the root keeps its children apart too",
    ),
    Case(
        name="topologies/tree-rule-4-branch-consumer-reaches-up-and-down-its-subtree",
        summary="A consumer at region r1 is reached from HQ and from r1's own stores, but not from the other region "
                "or its stores.",
        commands=retail(2, 2, "tree") + (
            Subscribe("c", "r1", Q),
            Send("hq", Q), Send("r1-s1", Q), Send("r1-s2", Q), Send("r2", Q), Send("r2-s2", Q),
        ),
        rules=("TOPO-TREE-DOWN", "TOPO-TREE-UP", "TOPO-TREE-NO-SIBLINGS"),
        source=f"{SEED}, rule 4 ('the branch broker will send the advisory downwards to its children')",
    ),
    Case(
        name="topologies/tree-rule-5-root-consumer-reaches-every-broker",
        summary="A consumer at HQ is reached from every region and every store, each message climbing the tree.",
        commands=retail(2, 2, "tree") + (
            Subscribe("c", "hq", Q),
            Send("r1-s1", Q), Send("r1-s2", Q), Send("r2-s1", Q), Send("r2-s2", Q), Send("r1", Q), Send("r2", Q),
        ),
        rules=("TOPO-TREE-DOWN",),
        source=f"{SEED}, rule 5 ('If a consumer connects to the root, then the consumer advisory is filtered "
               "downwards to all children')",
    ),
    Case(
        name="topologies/tree-link-holds-one-subscription-per-destination",
        summary="Two store consumers under one region give HQ one subscription over the tree link, so HQ's messages "
                "alternate between its own consumer and the link, and the region alternates between its stores.",
        commands=retail(1, 2, "tree") + (
            Subscribe("s1", "r1-s1", Q), Subscribe("s2", "r1-s2", Q), Subscribe("h", "hq", Q),
        ) + sends("hq", 5),
        rules=("TOPO-TREE-CONDUIT", "TOPO-MSG-ROUTE"),
        source=f"{SEED}, 'Resource wastage'; decided: a tree link conduits every subscription",
    ),
    Case(
        name="topologies/tree-hq-to-store",
        summary="HQ writes to each store's own queue and each message goes down through that store's region, while "
                "a store queue with no consumer, and a store writing to its sibling's queue, keep their messages.",
        commands=retail(2, 2, "tree") + (
            Subscribe("in-r1-s2", "r1-s2", "queue://STORE.r1-s2"),
            Subscribe("in-r2-s1", "r2-s1", "queue://STORE.r2-s1"),
            Send("hq", "queue://STORE.r1-s2"), Send("hq", "queue://STORE.r2-s1"),
            Send("hq", "queue://STORE.r2-s2"),
            Send("r1-s1", "queue://STORE.r1-s2"),
        ),
        rules=("TOPO-TREE-UP", "TOPO-TREE-NO-SIBLINGS", "TOPO-MSG-ROUTE", "TOPO-MSG-WAIT"),
        source=f"{SEED}, 'When HQ wants to send a message to a store, it should be able to write a message to the "
               "store's queue and have it dynamically routed to the store via the regional broker'",
    ),
    Case(
        name="topologies/tree-store-to-hq",
        summary="Every store writes to HQ's queue locally and the message climbs through its region to HQ.",
        commands=retail(2, 2, "tree") + (
            Subscribe("hq-in", "hq", "queue://HQ.IN"),
            Send("r1-s1", "queue://HQ.IN"), Send("r1-s2", "queue://HQ.IN"), Send("r2-s1", "queue://HQ.IN"),
            Send("r2-s2", "queue://HQ.IN"),
        ),
        rules=("TOPO-TREE-DOWN", "TOPO-MSG-ROUTE"),
        source=f"{SEED}, 'if a store wants to send a message to HQ, it should be able to write to a local queue in "
               "the store and have the message dynamically routed to HQ'",
    ),
    Case(
        name="topologies/tree-moving-a-store-needs-no-retuning",
        summary="A store moved to another region keeps its role and its demand follows it: HQ's messages now go "
                "through the new region, the old region's message waits until the store moves back, and moving "
                "under a store is refused.",
        commands=retail(2, 2, "tree") + (
            Subscribe("c", "r1-s1", Q),
            Move("r1-s1", "r2"),
            Send("hq", Q), Send("r1", Q), Send("r2", Q),
            Move("r1-s1", "r2-s1"),
            Move("r1-s1", "r1"),
        ),
        rules=("TOPO-TREE-ROLES", "TOPO-TREE-UP", "TOPO-SETTLE", "TOPO-MSG-WAIT"),
        source=f"{SEED}, 'a later reconfiguration of the network could result in this setting being too low'; "
               "decided: Move keeps the role",
    ),
    Case(
        name="topologies/tree-adding-a-level-needs-no-retuning",
        summary="A new branch inserted between HQ and a region lengthens HQ's path to the store to three links and "
                "changes nothing else.",
        commands=retail(2, 2, "tree") + brokers("emea") + (
            Subscribe("c", "r1-s1", Q),
            Send("hq", Q),
            TreeConnect("emea", "hq", BRANCH),
            Move("r1", "emea"),
            Send("hq", Q), Send("emea", Q), Send("r2", Q),
        ),
        rules=("TOPO-TREE-UP", "TOPO-TREE-ROLES", "TOPO-MSG-ROUTE"),
        source=f"{SEED}, 'Sensitivity to networkTTL' and 'trees can self organize without too much intervention'",
    ),
    Case(
        name="topologies/tree-move-refusals",
        summary="Only a broker with a tree connector can move, never under itself, its own descendant, a leaf, or a "
                "broker it is already linked to from below.",
        commands=retail(1, 2, "tree") + brokers("mid", "low") + (
            TreeConnect("mid", "r1", BRANCH), TreeConnect("low", "mid", BRANCH),
            Move("hq", "r1"),
            Move("r1", "mid"),
            Move("r1", "low"),
            Move("r1", "r1"),
            Move("mid", "r1-s1"),
            Move("r1", "nowhere"),
            Subscribe("c", "mid", Q),
            Send("hq", Q), Send("r1-s1", Q),
        ),
        rules=("TOPO-TREE-ROLES", "TOPO-CONNECTORS", "TOPO-BROKERS"),
        source=f"{SEED}, rules 1-2; decided: the root declares nothing and so cannot move",
    ),
    Case(
        name="topologies/tree-refusals-see-a-link-from-either-end",
        summary="A parent may not declare a tree connector to its own child, nor a broker move under its child: "
                "both are refused as already connected whichever name sorts first, and a tree connector or "
                "disconnect naming an unknown broker is refused whichever end it is.",
        commands=brokers("p", "c", "z", "m", "a") + (
            TreeConnect("c", "p", BRANCH),
            TreeConnect("p", "c", BRANCH),
            TreeConnect("p", "nowhere", LEAF),
            Disconnect("p", "nowhere"),
            TreeConnect("m", "z", BRANCH), TreeConnect("a", "m", BRANCH),
            Move("m", "a"),
        ),
        rules=("TOPO-CONNECTORS", "TOPO-BROKERS", "TOPO-TREE-ROLES"),
        source=f"{SEED}, rule 2 (many to one); brokerspec's network model (one connector between two brokers)",
    ),
)

# --- seed 002's retail hierarchy under network connectors --------------------------------------------------

RETAIL_CASES: tuple[Case, ...] = (
    Case(
        name="topologies/retail-network-ttl-1-strands-hq-messages",
        summary="In the retail hierarchy with networkTTL 1 a store consumer's demand stops at its region, so HQ's "
                "message waits at HQ.",
        commands=retail(2, 2, "network", 1) + (
            AddProducer("p", "hq", Q),
            Subscribe("c", "r1-s1", Q),
            Send("hq", Q), Send("r1", Q), Send("r1-s2", Q),
        ),
        rules=("TOPO-NC-TTL", "TOPO-MSG-WAIT"),
        source=f"{SEED}, 'Sensitivity to networkTTL' (too low: 'messages won't go the distance'); "
               "DemandForwardingBridgeSupport.serviceRemoteConsumerAdvisory (reachability in a duplex tree)",
    ),
    Case(
        name="topologies/retail-network-ttl-2-spills-to-sibling-stores",
        summary="With networkTTL 2 the store consumer's demand reaches HQ and spills to its sibling stores, whose "
                "messages now arrive, while the other region has none.",
        commands=retail(2, 3, "network", 2) + (
            AddProducer("p", "hq", Q),
            Subscribe("c", "r1-s1", Q),
            Send("hq", Q), Send("r1-s2", Q), Send("r1-s3", Q), Send("r2", Q), Send("r2-s1", Q),
        ),
        rules=("TOPO-NC-TTL", "TOPO-NC-PATH", "TOPO-MSG-ROUTE", "TOPO-MSG-WAIT"),
        source=f"{SEED}, 'Spillage of consumer advisories' (sent to the regional broker, HQ, and the peers); "
               "DemandForwardingBridgeSupport.serviceRemoteConsumerAdvisory (every broker within consumerTTL "
               "hops)",
    ),
    Case(
        name="topologies/retail-network-ttl-3-spills-into-other-regions",
        summary="With networkTTL 3 the demand also reaches the other region through HQ, whose message arrives in "
                "three hops, but not that region's stores.",
        commands=retail(2, 2, "network", 3) + (
            Subscribe("c", "r1-s1", Q),
            Send("r2", Q), Send("r2-s1", Q), Send("r1-s2", Q), Send("hq", Q),
        ),
        rules=("TOPO-NC-TTL", "TOPO-MSG-TTL", "TOPO-MSG-WAIT"),
        source=f"{SEED}, 'too high (which means you get inadvertent spillage)'; "
               "DemandForwardingBridgeSupport.serviceRemoteConsumerAdvisory (TTL 3 reaches the other regions, "
               "TTL 4 every store)",
    ),
    Case(
        name="topologies/retail-tree-the-same-consumer-without-spill",
        summary="The scenario of the TTL 2 spill under the tree connector: HQ's message arrives, and the sibling "
                "stores and the other region, which hold no demand, keep theirs.",
        commands=retail(2, 3, "tree") + (
            AddProducer("p", "hq", Q),
            Subscribe("c", "r1-s1", Q),
            Send("hq", Q), Send("r1-s2", Q), Send("r1-s3", Q), Send("r2", Q), Send("r2-s1", Q),
        ),
        rules=("TOPO-TREE-UP", "TOPO-TREE-NO-SIBLINGS", "TOPO-MSG-WAIT"),
        source=f"{SEED}, rule 3 and 'In this way, we reduce spillage of advisory messages'",
    ),
    Case(
        name="topologies/network-moving-a-store-releases-its-waiting-message",
        summary="A store re-homed from one region to another under networkTTL 2 loses its demand while unplugged, "
                "so HQ's message waits, and gets it back through the new region, which carries the message on.",
        commands=retail(2, 2, "network", 2) + (
            Subscribe("c", "r1-s1", Q),
            Disconnect("r1-s1", "r1"),
            Send("hq", Q), Send("r1-s2", Q),
            Connect("r1-s1", "r2", True, ttl(2)),
            Send("r2-s1", Q),
        ),
        rules=("TOPO-NC-CASCADE", "TOPO-SETTLE", "TOPO-NC-TTL", "TOPO-MSG-WAIT"),
        source=f"{SEED}, moving a store; DemandForwardingBridgeSupport.serviceRemoteConsumerAdvisory (a removed "
               "consumer removes the demand made for it, hop by hop)",
    ),
    Case(
        name="topologies/network-adding-a-level-needs-every-connector-retuned",
        summary="A level inserted above a region under networkTTL 2 strands HQ's message at HQ; retuning the "
                "connectors to 3 one by one moves it as far as each allows until the last one delivers it.",
        commands=retail(2, 2, "network", 2) + brokers("emea") + (
            Connect("emea", "hq", True, ttl(2)), Disconnect("r1", "hq"), Connect("r1", "emea", True, ttl(2)),
            Subscribe("c", "r1-s1", Q),
            Send("hq", Q),
            SetTtl("emea", "hq", 3, 3),
            SetTtl("r1", "emea", 3, 3),
            SetTtl("r1-s1", "r1", 3, 3),
            Send("hq", Q),
        ),
        rules=("TOPO-NC-TTL", "TOPO-MSG-TTL", "TOPO-SETTLE", "TOPO-MSG-WAIT"),
        source=f"{SEED}, 'you need to set the networkTTL on each broker to the distance between the broker and the "
               "root'; AMQ-4607 (consumerTTL and messageTTL)",
    ),
    Case(
        name="topologies/network-store-to-hq-needs-ttl-2",
        summary="Under networkTTL 1 a store's message to HQ waits at the store; raising the store's TTL alone moves "
                "it to the region, raising the region's frees it to HQ, and the other region's stores still wait.",
        commands=retail(2, 2, "network", 1) + (
            Subscribe("hq-in", "hq", "queue://HQ.IN"),
            Send("r1-s1", "queue://HQ.IN"), Send("r1", "queue://HQ.IN"),
            SetTtl("r1-s1", "r1", 2, 2),
            SetTtl("r1", "hq", 2, 2),
            Send("r2-s1", "queue://HQ.IN"),
        ),
        rules=("TOPO-NC-TTL", "TOPO-MSG-TTL", "TOPO-SETTLE"),
        source=f"{SEED}, store to HQ; DemandForwardingBridgeSupport.serviceRemoteConsumerAdvisory (mixed TTLs: "
               "the i-th hop needs i-1 < consumerTTL of its bridge)",
    ),
)

# --- network connectors, rule by rule ---------------------------------------------------------------------

NETWORK_CASES: tuple[Case, ...] = (
    Case(
        name="topologies/consumer-ttl-unlimited-reaches-the-whole-chain",
        summary="With consumerTTL and messageTTL -1 a consumer at one end of a five-broker chain is reached from "
                "the other end in four hops.",
        commands=brokers("b1", "b2", "b3", "b4", "b5") + tuple(
            Connect(f"b{i + 1}", f"b{i}", True, ttl(-1)) for i in range(1, 5)) + (
            Subscribe("c", "b5", Q),
            Send("b1", Q), Send("b3", Q),
        ),
        rules=("TOPO-NC-TTL", "TOPO-MSG-TTL", "TOPO-NC-LOOP"),
        source="AMQ-4607 (-1 = unlimited); NetworkBridgeConfiguration, consumerTTL and messageTTL",
    ),
    Case(
        name="topologies/consumer-ttl-counts-the-brokers-on-the-path",
        summary="On a chain with consumerTTL 3 a consumer on b5 makes demand on b4, b3 and b2 but not on b1, whose "
                "message waits until its connector's consumerTTL is raised to 4.",
        commands=brokers("b1", "b2", "b3", "b4", "b5") + tuple(
            Connect(f"b{i + 1}", f"b{i}", True, ttl(3, -1)) for i in range(1, 5)) + (
            Subscribe("c", "b5", Q),
            Send("b2", Q), Send("b1", Q),
            SetTtl("b2", "b1", 4, -1),
        ),
        rules=("TOPO-NC-TTL", "TOPO-NC-PATH", "TOPO-SETTLE"),
        source="DemandForwardingBridgeSupport.serviceRemoteConsumerAdvisory (an advisory whose brokerPath is "
               "consumerTTL long or longer is ignored)",
    ),
    Case(
        name="topologies/message-ttl-is-checked-on-every-bridge",
        summary="Each bridge checks messageTTL with its own setting: a message from x crosses x=>y (TTL 2) but stops "
                "at y, whose bridge to z has TTL 1, until that connector is retuned.",
        commands=brokers("x", "y", "z") + (
            Connect("y", "x", True, ttl(2)), Connect("z", "y", True, ttl(2, 1)),
            Subscribe("c", "z", Q),
            Send("x", Q), Send("y", Q),
            SetTtl("z", "y", 2, 2),
        ),
        rules=("TOPO-MSG-TTL", "TOPO-CONNECTORS", "TOPO-SETTLE"),
        source="NetworkBridgeFilter.matchesForwardingFilter (nothing is forwarded once the brokerPath is "
               "messageTTL long); AMQ-4607",
    ),
    Case(
        name="topologies/message-ttl-counts-every-broker-on-the-path",
        summary="On a chain w-x-y-z whose last bridge has messageTTL 1, a message from w reaches y with a path of two "
                "brokers, longer than that TTL and not just equal to it, and waits at y like x's message.",
        commands=brokers("w", "x", "y", "z") + (
            Connect("x", "w", True, ttl(3, -1)), Connect("y", "x", True, ttl(3, -1)),
            Connect("z", "y", True, ttl(3, 1)),
            Subscribe("c", "z", Q),
            Send("w", Q), Send("x", Q),
        ),
        rules=("TOPO-MSG-TTL", "TOPO-MSG-WAIT"),
        source="NetworkBridgeFilter.matchesForwardingFilter (nothing is forwarded once the brokerPath is "
               "messageTTL long)",
    ),
    Case(
        name="topologies/consumer-ttl-1-ignores-demand-from-further-away",
        summary="A bridge with consumerTTL 1 ignores a registration whose path has two brokers, not only one of "
                "exactly one: a consumer two hops beyond b makes demand on b but not on a, whose message waits.",
        commands=brokers("a", "b", "c", "d") + (
            Connect("b", "a", True, ttl(1, -1)), Connect("c", "b", True, ttl(3, -1)),
            Connect("d", "c", True, ttl(3, -1)),
            Subscribe("x", "d", Q),
            Send("a", Q), Send("b", Q),
        ),
        rules=("TOPO-NC-TTL", "TOPO-NC-PATH", "TOPO-MSG-WAIT"),
        source="DemandForwardingBridgeSupport.serviceRemoteConsumerAdvisory (an advisory whose brokerPath is "
               "consumerTTL long or longer is ignored)",
    ),
    Case(
        name="topologies/duplex-reverse-bridge-uses-the-declaring-brokers-settings",
        summary="A duplex connector declared by b gives the reverse bridge b's TTL 2 as well, so demand crosses both "
                "of b's links and a's message reaches c.",
        commands=brokers("a", "b", "c") + (
            Connect("b", "a", True, ttl(2)), Connect("b", "c", True, ttl(2)),
            Subscribe("x", "c", Q),
            Send("a", Q),
        ),
        rules=("TOPO-CONNECTORS", "TOPO-NC-TTL"),
        source="TransportConnection.processBrokerInfo (builds the duplex bridge from the initiator's "
               "networkProperties; consumerTTL and messageTTL are sent)",
    ),
    Case(
        name="topologies/loop-check-stops-demand-circling-a-triangle",
        summary="In a triangle with TTL 3 demand never comes back to the consumer's broker, so its messages stay "
                "local, while the other two, with queue duplicates not suppressed by default, take the direct and "
                "the indirect route by turns.",
        commands=triangle(ttl(3)) + (
            Subscribe("x", "a", Q),
        ) + sends("a", 3) + sends("b", 2) + sends("c", 2),
        rules=("TOPO-NC-LOOP", "TOPO-MSG-LOOP", "TOPO-MSG-ROUTE", "TOPO-NC-PATH"),
        source="DemandForwardingBridgeSupport.serviceRemoteConsumerAdvisory (the loop check: 'already routed "
               "through this broker once'; one registration per simple path); NetworkBridgeConfiguration "
               "(suppressDuplicateQueueSubscriptions false)",
    ),
    Case(
        name="topologies/include-and-exclude-filters",
        summary="A connector that includes queue://ORDERS.> and queue://TEST.* but excludes ORDERS.SECRET carries "
                "demand for ORDERS.EU and TEST.Q only: the excluded queue, TEST.Q.X (two name parts for one '*'), "
                "a queue outside the list and a topic of an included name all stay behind.",
        commands=brokers("a", "b") + (
            Connect("a", "b", True, BridgeConfig(include=("queue://ORDERS.>", "queue://TEST.*"),
                                                 exclude=("queue://ORDERS.SECRET",))),
            Subscribe("eu", "b", "queue://ORDERS.EU"),
            Subscribe("secret", "b", "queue://ORDERS.SECRET"),
            Subscribe("stock", "b", "queue://STOCK"),
            Subscribe("news", "b", "topic://ORDERS.EU"),
            Subscribe("test", "b", Q), Subscribe("test-x", "b", "queue://TEST.Q.X"),
            Send("a", "queue://ORDERS.EU"), Send("a", "queue://ORDERS.SECRET"), Send("a", "queue://STOCK"),
            Send("a", "topic://ORDERS.EU"), Send("a", Q), Send("a", "queue://TEST.Q.X"),
        ),
        rules=("TOPO-NC-FILTER", "TOPO-MSG-WAIT"),
        source="DemandForwardingBridgeSupport.isPermissableDestination (excludes first, then "
               "dynamicallyIncludedDestinations); ActiveMQ DestinationFilter wildcards ('*' one name part, '>' "
               "the rest)",
    ),
    Case(
        name="topologies/queue-network-subscriptions-are-not-conduited",
        summary="With consumers on both leaves and one on the root, the root holds one subscription per leaf, so "
                "its own consumer gets one message in three.",
        commands=four_tree(ttl(2)) + (
            Subscribe("c3", "b3", Q), Subscribe("c4", "b4", Q), Subscribe("c1", "b1", Q),
        ) + sends("b1", 6),
        rules=("TOPO-NC-CONDUIT", "TOPO-MSG-ROUTE", "TOPO-SETTLE"),
        source=f"{TABLE} (4-tree, consumers on b3 and b4: b1 holds one subscription per leaf); "
               "ConduitBridge.canConduit",
    ),
    Case(
        name="topologies/conduit-network-queue-subscriptions-merges-them",
        summary="With conduitNetworkQueueSubscriptions the root's two leaf subscriptions merge into one, so its own "
                "consumer gets every other message.",
        commands=four_tree(ttl(2, conduit_network_queues=True)) + (
            Subscribe("c3", "b3", Q), Subscribe("c4", "b4", Q), Subscribe("c1", "b1", Q),
        ) + sends("b1", 6),
        rules=("TOPO-NC-CONDUIT", "TOPO-MSG-ROUTE"),
        source="AMQ-6858 (conduitNetworkQueueSubscriptions); ConduitBridge.canConduit",
    ),
    Case(
        name="topologies/conduit-off-gives-each-client-consumer-its-own-subscription",
        summary="Two consumers behind one bridge share one subscription when conduit is on, so a local consumer "
                "gets every other message, and have one each when it is off, so the local one gets one in three.",
        commands=brokers("a", "b", "c", "d") + (
            Connect("a", "b", True, BridgeConfig(conduit=False)),
            Connect("c", "d", True, BridgeConfig(conduit=True)),
            Subscribe("b1", "b", Q), Subscribe("b2", "b", Q), Subscribe("a1", "a", Q),
            Subscribe("d1", "d", Q), Subscribe("d2", "d", Q), Subscribe("c1", "c", Q),
        ) + sends("a", 3) + sends("c", 3),
        rules=("TOPO-NC-CONDUIT", "TOPO-MSG-ROUTE", "TOPO-SETTLE"),
        source="NetworkBridgeFactory (conduitSubscriptions=true selects ConduitBridge, false "
               "DemandForwardingBridge); NetworkBridgeConfiguration",
    ),
    Case(
        name="topologies/queue-suppression-keeps-one-route-per-consumer",
        summary="With suppressDuplicateQueueSubscriptions and equal priorities b keeps the route it heard of first, "
                "the direct one, and every message takes it; when the direct link goes, the route through c returns.",
        commands=triangle(ttl(2, suppress_duplicate_queues=True)) + (
            Subscribe("x", "a", Q),
        ) + sends("b", 3) + (
            Disconnect("a", "b"),
        ) + sends("b", 2),
        rules=("TOPO-NC-SUPPRESS", "TOPO-NC-ORDER", "TOPO-NC-CASCADE"),
        source="DemandForwardingBridgeSupport.duplicateSuppressionIsRequired (an existing registration of "
               "equal or higher priority drops the candidate); decided: breadth first, and demand re-derived "
               "after the winner goes",
    ),
    Case(
        name="topologies/topic-suppression-gives-one-copy-per-consumer",
        summary="In a triangle a topic consumer gets one copy of each message with the default topic suppression "
                "and two, one per route, when a connector turns it off.",
        commands=triangle(ttl(2)) + brokers("p", "q", "r") + (
            Connect("p", "q", True, ttl(2, suppress_duplicate_topics=False)),
            Connect("q", "r", True, ttl(2, suppress_duplicate_topics=False)),
            Connect("r", "p", True, ttl(2, suppress_duplicate_topics=False)),
            Subscribe("x", "a", T), Subscribe("y", "p", T),
            Send("b", T), Send("q", T),
        ),
        rules=("TOPO-NC-SUPPRESS", "TOPO-NC-CONDUIT", "TOPO-MSG-LOOP"),
        source="NetworkBridgeConfiguration (suppressDuplicateTopicSubscriptions defaults to true); "
               "DemandForwardingBridgeSupport.duplicateSuppressionIsRequired",
    ),
    Case(
        name="topologies/suppression-lets-a-higher-priority-route-replace-a-settled-one",
        summary="When the direct bridge decreases priority and the other bridges do not, the indirect route's "
                "priority 0 beats the direct -5 and replaces it, so b's messages go round by c.",
        commands=brokers("a", "b", "c") + (
            Connect("b", "a", True, ttl(2, decrease_priority=True, suppress_duplicate_queues=True)),
            Connect("b", "c", True, ttl(2, suppress_duplicate_queues=True)),
            Connect("c", "a", True, ttl(2, suppress_duplicate_queues=True)),
            Subscribe("x", "a", Q),
        ) + sends("b", 2),
        rules=("TOPO-NC-SUPPRESS", "TOPO-NC-PRIORITY", "TOPO-NC-ORDER"),
        source="DemandForwardingBridgeSupport.duplicateSuppressionIsRequired (else the worse registration "
               "goes, with the demand made from it, and the candidate stays)",
    ),
    Case(
        name="topologies/decreased-priority-local-consumer-beats-the-network",
        summary="With decreaseNetworkConsumerPriority b2's own consumer always wins over the network subscription, "
                "while in a second network with the 5.17 default y's consumer and the network share y's messages by "
                "turns.",
        commands=four_tree(ttl(2, decrease_priority=True)) + brokers("x", "y", "z") + (
            Connect("y", "x", True, ttl(2)), Connect("z", "y", True, ttl(2)),
            Subscribe("far", "b3", Q), Subscribe("near", "b2", Q),
            Subscribe("far2", "z", Q), Subscribe("near2", "y", Q),
        ) + sends("b2", 3) + sends("y", 3),
        rules=("TOPO-NC-PRIORITY", "TOPO-MSG-ROUTE"),
        source="DemandForwardingBridgeSupport.doCreateDemandSubscription (consumerPriorityBase -5); "
               "decreaseNetworkConsumerPriority (default false in 5.17.2, true from 5.18, AMQ-5137)",
    ),
    Case(
        name="topologies/decreased-priority-prefers-the-nearer-remote-consumer",
        summary="With decreaseNetworkConsumerPriority on every bridge, a's messages all go to the consumer one hop "
                "away (priority -5) rather than the one two hops away (-8), until the near one closes.",
        commands=brokers("a", "b", "c", "d") + (
            Connect("b", "a", True, ttl(3, decrease_priority=True)),
            Connect("c", "a", True, ttl(3, decrease_priority=True)),
            Connect("d", "c", True, ttl(3, decrease_priority=True)),
            Subscribe("near", "b", Q), Subscribe("far", "d", Q),
        ) + sends("a", 3) + (Unsubscribe("near"),) + sends("a", 2),
        rules=("TOPO-NC-PRIORITY", "TOPO-MSG-ROUTE"),
        source="DemandForwardingBridgeSupport.doCreateDemandSubscription (priority -5 minus the hops beyond "
               "the first)",
    ),
    Case(
        name="topologies/network-subscription-copies-the-remote-priority",
        summary="Without the decrease a demand subscription copies its consumer's priority, so a remote consumer of "
                "priority 5 takes every message from local ones of priority 0 and 3.",
        commands=four_tree(ttl(2)) + (
            Subscribe("far", "b3", Q, 5), Subscribe("near", "b2", Q, 0), Subscribe("root", "b1", Q, 3),
        ) + sends("b2", 2) + sends("b1", 2),
        rules=("TOPO-NC-PRIORITY", "TOPO-MSG-ROUTE"),
        source="DemandForwardingBridgeSupport.doCreateDemandSubscription (without the decrease the remote "
               "priority is kept); Queue.orderedCompare",
    ),
    Case(
        name="topologies/closing-a-consumer-removes-demand-hop-by-hop",
        summary="When the leaf consumer closes, every subscription it caused goes, two hops away included: later "
                "messages wait where they were sent, and move when a consumer opens again.",
        commands=four_tree(ttl(2)) + (
            Subscribe("c", "b3", Q),
            Unsubscribe("c"),
            Send("b1", Q), Send("b4", Q), Send("b2", Q),
            Subscribe("again", "b3", Q),
        ),
        rules=("TOPO-NC-CASCADE", "TOPO-MSG-WAIT", "TOPO-SETTLE"),
        source="DemandForwardingBridgeSupport.serviceRemoteConsumerAdvisory (a removed consumer removes the "
               "demand made for it, hop by hop)",
    ),
    Case(
        name="topologies/each-destination-keeps-its-own-demand",
        summary="Demand is per destination: consumers of two queues and a topic on one leaf each draw their own "
                "messages, and closing the consumer of one queue takes away that queue's route only.",
        commands=four_tree(ttl(3)) + (
            Subscribe("cq", "b3", Q), Subscribe("co", "b3", OTHER_Q), Subscribe("ct", "b3", T),
            Send("b1", Q), Send("b4", OTHER_Q), Send("b1", T),
            Unsubscribe("co"),
            Send("b1", OTHER_Q), Send("b4", Q), Send("b4", T),
            Unsubscribe("cq"),
            Send("b1", Q), Send("b1", T),
        ),
        rules=("TOPO-NC-CASCADE", "TOPO-MSG-WAIT", "TOPO-SETTLE"),
        source="DemandForwardingBridgeSupport.doCreateDemandSubscription (one destination per demand "
               "subscription; removal follows each one)",
    ),
    Case(
        name="topologies/a-second-destination-spreads-demand-of-its-own",
        summary="A consumer of a second queue at another leaf spreads demand for that queue alone: each queue's "
                "messages go to its own consumer, whichever leaf they are sent at, and to no other.",
        commands=four_tree(ttl(3)) + (
            Subscribe("cq", "b3", Q), Send("b4", OTHER_Q),
            Subscribe("co", "b4", OTHER_Q),
            Send("b3", OTHER_Q), Send("b4", Q), Send("b1", OTHER_Q), Send("b1", Q),
            Unsubscribe("cq"), Send("b1", Q), Send("b2", OTHER_Q),
        ),
        rules=("TOPO-NC-CASCADE", "TOPO-MSG-WAIT", "TOPO-SETTLE"),
        source="DemandForwardingBridgeSupport.doCreateDemandSubscription (one destination per demand "
               "subscription)",
    ),
    Case(
        name="topologies/conduit-subscription-stays-until-its-last-member-goes",
        summary="Two consumers on one leaf share a conduit subscription: closing one leaves the route to the other, "
                "closing both removes it, and the message then waiting at the root moves when one reopens.",
        commands=four_tree(ttl(2)) + (
            Subscribe("c1", "b3", Q), Subscribe("c2", "b3", Q),
            Unsubscribe("c1"),
            Send("b1", Q), Send("b4", Q),
            Unsubscribe("c2"),
            Send("b1", Q),
            Subscribe("c3", "b3", Q),
        ),
        rules=("TOPO-NC-CASCADE", "TOPO-NC-CONDUIT", "TOPO-SETTLE"),
        source="ConduitBridge.removeDemandSubscription (the local subscription goes when no member is left)",
    ),
    Case(
        name="topologies/topic-conduit-takes-the-shortest-members-path",
        summary="A topic conduit subscription on b that merges a one-hop and a two-hop consumer takes the one-hop "
                "path, so under consumerTTL 2 a reaches both although the far one subscribed first; when the near "
                "one closes the path lengthens, a loses its demand and drops its copy.",
        commands=brokers("a", "b", "c", "d") + (
            Connect("b", "a", True, ttl(2, -1)), Connect("c", "b", True, ttl(2, -1)),
            Connect("d", "c", True, ttl(2, -1)),
            Subscribe("far", "d", T), Subscribe("near", "c", T),
            Send("a", T),
            Unsubscribe("near"),
            Send("a", T),
        ),
        rules=("TOPO-NC-ORDER", "TOPO-NC-CONDUIT", "TOPO-NC-TTL"),
        source="decided: a conduit subscription takes path and priority from its shortest member (ActiveMQ "
               "keeps the first to arrive); ConduitBridge.addToAlreadyInterestedConsumers",
    ),
    Case(
        name="topologies/dispatch-list-keeps-arrival-order",
        summary="A queue's dispatch list keeps consumers in the order they opened, not by name, and one that reopens "
                "joins at the end.",
        commands=brokers("a") + (
            Subscribe("zed", "a", Q), Subscribe("amy", "a", Q),
        ) + sends("a", 3) + (
            Unsubscribe("zed"), Subscribe("zed", "a", Q), Subscribe("bob", "a", Q),
        ) + sends("a", 3),
        rules=("TOPO-SETTLE", "TOPO-MSG-ROUTE"),
        source="Queue.doActualDispatch rotates the chosen consumer to the end; decided: newcomers join at the "
               "end by key",
    ),
    Case(
        name="topologies/waiting-messages-move-in-broker-then-send-order",
        summary="Three messages waiting at a and one at b all move when a consumer opens at c: a's go first, in the "
                "order they were sent, then b's.",
        commands=brokers("a", "b", "c") + (
            Connect("a", "c", True, ttl(2)), Connect("b", "c", True, ttl(2)),
        ) + sends("a", 3) + sends("b", 1) + (
            Subscribe("x", "c", Q),
        ),
        rules=("TOPO-SETTLE", "TOPO-MSG-WAIT", "TOPO-MSG-ROUTE"),
        source="DemandForwardingBridgeSupport.serviceRemoteConsumerAdvisory (demand settles once no advisory "
               "is left); decided: waiting messages move one at a time, by broker name, then oldest first",
    ),
    Case(
        name="topologies/replay-back-and-forth-stops-at-the-hop-limit",
        summary="Two brokers that both replay and have no consumer of their own, each held back from its far side by "
                "messageTTL 1, send a message back and forth until its path has 32 brokers; it then waits.",
        commands=brokers("b0", "b1", "b2", "b3") + (
            Connect("b1", "b0", True, ttl(3, 1)), Connect("b2", "b1", True, ttl(3, -1)),
            Connect("b3", "b2", True, ttl(3, 1)),
            Subscribe("c0", "b0", Q), Subscribe("c3", "b3", Q),
            SetReplay("b1", True), SetReplay("b2", True),
        ) + sends("b1", 2),
        rules=("TOPO-MSG-REPLAY", "TOPO-MSG-LOOP", "TOPO-MSG-TTL", "TOPO-MSG-WAIT"),
        source="AMQ-2324 (replayWhenNoConsumers); ConditionalNetworkBridgeFilter; decided: a spec guard of 32 "
               "brokers on a path (MAX_HOPS) bounds replay",
    ),
    Case(
        name="topologies/topic-consumer-with-a-shorter-path-extends-the-conduits-reach",
        summary="Without topic suppression a near consumer joining a far one's conduit subscription on b shortens its "
                "path to one broker, so a, which consumerTTL 2 kept from the far consumer alone, now sends a copy "
                "to each.",
        commands=brokers("a", "b", "c", "d") + (
            Connect("b", "a", True, ttl(2, -1, suppress_duplicate_topics=False)),
            Connect("c", "b", True, ttl(2, -1, suppress_duplicate_topics=False)),
            Connect("d", "c", True, ttl(2, -1, suppress_duplicate_topics=False)),
            Subscribe("far", "d", T),
            Send("a", T),
            Subscribe("near", "c", T),
            Send("a", T),
        ),
        rules=("TOPO-NC-ORDER", "TOPO-NC-CONDUIT", "TOPO-NC-TTL"),
        source="decided: a conduit subscription takes path and priority from its shortest member; "
               "ConduitBridge.addToAlreadyInterestedConsumers",
    ),
    Case(
        name="topologies/conduit-subscription-carries-its-lead-members-priority",
        summary="Consumers of priority 0 and 5 on b3 share one conduit subscription on b2, led by a2, the smaller "
                "key of two equally long paths: b1's subscription copies its priority 5 and beats b1's own consumer "
                "of priority 3.",
        commands=brokers("b1", "b2", "b3") + (
            Connect("b2", "b1", True, ttl(2)), Connect("b3", "b2", True, ttl(2)),
            Subscribe("local", "b1", Q, 3), Subscribe("y1", "b3", Q, 0), Subscribe("a2", "b3", Q, 5),
        ) + sends("b1", 2),
        rules=("TOPO-NC-ORDER", "TOPO-NC-CONDUIT", "TOPO-NC-PRIORITY", "TOPO-MSG-ROUTE"),
        source="decided: a conduit subscription takes path and priority from its member with the shortest "
               "path, then the smallest key; DemandForwardingBridgeSupport.doCreateDemandSubscription (the "
               "remote priority is kept)",
    ),
    Case(
        name="topologies/suppression-replacing-a-settled-route-takes-its-demand-along",
        summary="When the route through c replaces b's direct subscription for x, demand derived from the direct one "
                "goes too: d, whose consumerTTL 2 admits the direct path but not the longer one, holds no demand, so "
                "its message waits while b's goes round by c.",
        commands=brokers("a", "b", "c", "d") + (
            Connect("b", "a", True, ttl(2, decrease_priority=True, suppress_duplicate_queues=True)),
            Connect("b", "c", True, ttl(2, suppress_duplicate_queues=True)),
            Connect("c", "a", True, ttl(2, suppress_duplicate_queues=True)),
            Connect("d", "b", True, ttl(2)),
            Subscribe("x", "a", Q),
            Send("d", Q), Send("b", Q),
        ),
        rules=("TOPO-NC-SUPPRESS", "TOPO-NC-CASCADE", "TOPO-NC-TTL", "TOPO-MSG-WAIT"),
        source="DemandForwardingBridgeSupport.duplicateSuppressionIsRequired (else the worse registration "
               "goes, with the demand made from it, and the candidate stays)",
    ),
    Case(
        name="topologies/closing-a-consumer-lets-a-suppressed-route-return",
        summary="z's conduit subscription on p, led by z at priority 0, also carries y, so topic suppression replaces "
                "it with y's own route through r at priority 5; when z closes, demand is derived afresh and y's "
                "route through q, heard first, is kept instead.",
        commands=brokers("p", "q", "r", "s") + (
            Connect("q", "s", False, ttl(3)), Connect("r", "s", False, ttl(3)),
            Connect("p", "q", False, ttl(3)), Connect("p", "r", False, ttl(3)),
            Subscribe("z", "q", T, 0), Subscribe("y", "s", T, 5),
            Send("p", T),
            Unsubscribe("z"),
            Send("p", T),
        ),
        rules=("TOPO-NC-SUPPRESS", "TOPO-NC-ORDER", "TOPO-NC-CASCADE", "TOPO-SETTLE"),
        source="DemandForwardingBridgeSupport.duplicateSuppressionIsRequired; "
               "DemandForwardingBridgeSupport.serviceRemoteConsumerAdvisory (a removed consumer removes the "
               "demand made for it, hop by hop); decided: demand is derived afresh after every change",
    ),
)

# --- refusals ---------------------------------------------------------------------------------------------

REFUSAL_CASES: tuple[Case, ...] = (
    Case(
        name="topologies/broker-and-connector-refusals",
        summary="A taken broker name, an unknown broker, a self link, a second connector in either direction "
                "(except two non-duplex ones) and dropping or retuning a connector that was not declared are all "
                "refused and change nothing.",
        commands=brokers("a", "b", "c") + (
            AddBroker("a"),
            Connect("a", "a"),
            Connect("a", "nowhere"),
            Connect("a", "b", False, ttl(2)),
            Connect("a", "b"),
            Connect("b", "a", True),
            Connect("b", "a", False, ttl(2)),
            Connect("b", "c"),
            Disconnect("c", "b"),
            SetTtl("c", "b", 2, 2),
            SetTtl("b", "nowhere", 2, 2),
            Send("nowhere", Q),
            SetReplay("nowhere", True),
            Subscribe("x", "a", Q),
            Send("c", Q),
        ),
        rules=("TOPO-BROKERS", "TOPO-CONNECTORS"),
        source="brokerspec's network model; brokerspec's measurement of real ActiveMQ 5.17.2 brokers (two "
               "non-duplex connectors in opposite directions)",
    ),
    Case(
        name="topologies/one-design-per-broker",
        summary="A broker with a tree connector may not take a network connector and one with network connectors "
                "may not join a tree, in either direction.",
        commands=retail(1, 1, "tree") + brokers("n1", "n2") + (
            Connect("n1", "n2"),
            Connect("r1-s1", "n1"),
            Connect("n1", "hq"),
            TreeConnect("n1", "hq", LEAF),
            TreeConnect("hq", "n1", BRANCH),
            Subscribe("c", "n2", Q),
            Send("n1", Q), Send("hq", Q),
        ),
        rules=("TOPO-ONE-DESIGN",),
        source="decided: a broker uses network connectors or tree connectors, never both",
    ),
    Case(
        name="topologies/one-design-lasts-until-the-last-connector-goes",
        summary="A broker keeps its design while any connector of it is left: a, down to one network connector, "
                "still may not join a tree; once that goes it may, and then takes no network connector until its "
                "tree connector goes too.",
        commands=brokers("a", "b", "c", "r") + (
            Connect("a", "b"), Connect("a", "c"),
            Disconnect("a", "b"),
            TreeConnect("a", "r", LEAF),
            Disconnect("a", "c"),
            TreeConnect("a", "r", LEAF),
            Connect("a", "b"),
            Disconnect("a", "r"),
            Connect("a", "b"),
        ),
        rules=("TOPO-ONE-DESIGN", "TOPO-CONNECTORS"),
        source="decided: a broker uses network connectors or tree connectors, never both (a broker with no "
               "connector left has no design)",
    ),
    Case(
        name="topologies/client-ids-are-unique",
        summary="Consumer and producer IDs are unique, closing an unknown one is refused, and a refused subscribe "
                "adds no demand.",
        commands=brokers("a", "b") + (
            Connect("a", "b"),
            Subscribe("c", "b", Q),
            Subscribe("c", "a", Q),
            Subscribe("d", "nowhere", Q),
            Unsubscribe("ghost"),
            AddProducer("p", "a", Q),
            AddProducer("p", "b", Q),
            AddProducer("p2", "nowhere", Q),
            RemoveProducer("p"),
            RemoveProducer("p"),
            Send("a", Q), Send("b", Q),
            Unsubscribe("c"),
            Unsubscribe("c"),
            Send("a", Q),
        ),
        rules=("TOPO-CLIENTS", "TOPO-BROKERS"),
        source="brokerspec's network model",
    ),
)

CASES: tuple[Case, ...] = (TABLE_CASES + TREE_CASES + RETAIL_CASES + NETWORK_CASES + REFUSAL_CASES
                          + queries.TOPOLOGIES)
"""Every topology case: the real-broker measurements, seed 002's tree, its retail hierarchy, network rules, refusals."""
