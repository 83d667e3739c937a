"""The rules of the topology domain, with their IDs and sources.

Introduction
------------
Each rule has a stable ID (``TOPO-NC-...`` for network connectors,
``TOPO-TREE-...`` for the tree connector, ``TOPO-MSG-...`` for messages),
one sentence of plain words and its source. Network-connector rules cite
the ActiveMQ Classic source they were read from, at tag activemq-5.17.2
(the version Debian 12 ships): the file's path in the apache/activemq
repository and the method, with the JIRA key where one changed the
behaviour. Seed 002 (``002_074d5b59b72b3a55.txt``) is the text of
AMQ-2875, the tree connector proposal. Rules marked "decided" fill a gap
the sources leave open; section 5 of ``docs/topologies.md`` says why.
"""

from __future__ import annotations

from ..addressing.rules import Rule

_ACTIVEMQ = "activemq-broker/src/main/java/org/apache/activemq/"
_BRIDGE = _ACTIVEMQ + "network/DemandForwardingBridgeSupport.java"
_CONDUIT = _ACTIVEMQ + "network/ConduitBridge.java"
_QUEUE = _ACTIVEMQ + "broker/region/Queue.java"
_FILTER = "activemq-client/src/main/java/org/apache/activemq/command/NetworkBridgeFilter.java"
_DECIDED = "brokerspec decision, docs/topologies.md section 5"

RULES: dict[str, Rule] = {
    r.id: r
    for r in (
        Rule("TOPO-BROKERS", "Brokers join by name; an operation naming an unknown broker is refused.",
             f"{_ACTIVEMQ}broker/BrokerService.java setBrokerName (a broker is known by its name); "
             "brokerspec's network model, docs/topologies.md section 2"),
        Rule("TOPO-CONNECTORS", "A connector joins two different brokers that share no other connector, except two "
             "non-duplex network connectors in opposite directions; a network connector A->B makes bridge A=>B, "
             "and B=>A when duplex, both with A's settings.",
             f"{_ACTIVEMQ}broker/TransportConnection.java processBrokerInfo (the duplex bridge is built from A's "
             f"networkProperties); {_BRIDGE} startRemoteBridge (A sends its settings, networkTTL removed)"),
        Rule("TOPO-ONE-DESIGN", "A broker uses network connectors or tree connectors, never both (decided).",
             f"{_DECIDED}: keeps every connected part of a topology one design"),
        Rule("TOPO-QUERY-DEMAND", "A demand query changes nothing: it names, sorted, the brokers that hold a "
             "client consumer or a demand subscription for the destination, and each such registration with its "
             "broker, brokerPath and priority.",
             f"{_ACTIVEMQ}advisory/AdvisoryBroker.java addConsumer (every consumer, a demand subscription too, is "
             f"advised with its ConsumerInfo: brokerPath, priority); {_BRIDGE} addConsumerInfo"),
        Rule("TOPO-CLIENTS", "Consumer and producer IDs are unique; closing an unknown one is refused.",
             "brokerspec's network model, docs/topologies.md section 2"),
        Rule("TOPO-SETTLE", "After every operation demand is derived afresh, queue dispatch lists keep survivors in "
             "order and add newcomers at the end by key, and waiting messages that may move do.",
             f"{_BRIDGE} addConsumerInfo (a demand subscription is a consumer, advised in turn, so demand spreads "
             f"to a fixed point); {_ACTIVEMQ}advisory/AdvisoryBroker.java addConsumer (existing consumers are "
             f"replayed to a new bridge); {_DECIDED}: the order of newcomers"),
        Rule("TOPO-NC-TTL", "A bridge A=>B turns a registration on B into demand on A only while its brokerPath is "
             "shorter than consumerTTL (-1: no limit).",
             f"{_BRIDGE} serviceRemoteConsumerAdvisory ('restricted to N network hops'); AMQ-4607; AMQ4607Test"),
        Rule("TOPO-NC-LOOP", "A bridge A=>B ignores a registration whose brokerPath already contains A.",
             f"{_BRIDGE} serviceRemoteConsumerAdvisory ('already routed through this broker once')"),
        Rule("TOPO-NC-FILTER", "Excluded destinations are never bridged; a non-empty include list bridges only what "
             "it matches (ActiveMQ wildcards).", f"{_BRIDGE} isPermissableDestination"),
        Rule("TOPO-NC-PATH", "Demand on A for a registration on B has brokerPath = the registration's path + [B] and "
             "stands for the same client consumers.",
             f"{_BRIDGE} addConsumerInfo, addRemoteBrokerToBrokerPath; "
             "activemq-client/src/main/java/org/apache/activemq/command/ConsumerInfo.java networkConsumerIds"),
        Rule("TOPO-NC-CONDUIT", "A conduit bridge keeps one subscription per destination for registrations that may "
             "conduit (topics, client consumers, or queue network subscriptions with "
             "conduitNetworkQueueSubscriptions); every other registration gets its own.",
             f"{_CONDUIT} addToAlreadyInterestedConsumers, canConduit; AMQ-6858"),
        Rule("TOPO-NC-SUPPRESS", "With duplicate suppression on, a network subscription standing for the same "
             "consumer as an existing one is dropped unless its priority is strictly higher, which replaces the "
             "existing one.", f"{_BRIDGE} duplicateSuppressionIsRequired"),
        Rule("TOPO-NC-PRIORITY", "Demand copies the remote priority, or with decreaseNetworkConsumerPriority is -5 "
             "for a path of one broker and -5-(n+1) for n.",
             f"{_BRIDGE} doCreateDemandSubscription; {_ACTIVEMQ}network/NetworkBridgeConfiguration.java "
             "consumerPriorityBase (-5)"),
        Rule("TOPO-NC-CASCADE", "Removing a registration removes everything created from it; a conduit subscription "
             "goes when its last member goes.",
             f"{_BRIDGE} serviceRemoteConsumerAdvisory (a RemoveInfo removes the demand subscription, whose own "
             f"removal is advised in turn); {_CONDUIT} removeDemandSubscription"),
        Rule("TOPO-NC-ORDER", "Consumers are taken in arrival order, each one's advisories breadth first; a conduit "
             "subscription takes path and priority from its first member to arrive (the earliest consumer's, "
             "then the shortest path, then the smallest key) (decided where timing decides).",
             f"{_BRIDGE} addConsumerInfo, {_CONDUIT} addToAlreadyInterestedConsumers (a later consumer joins the "
             "conduit DemandSubscription built from the first); real 5.17 networks subscribed far consumer first "
             f"(tests/topologies/test_real_brokers.py); {_DECIDED}"),
        Rule("TOPO-TREE-ROLES", "A broker is a leaf or branch by its one tree connector, else a root; a leaf has no "
             "children and parents form no cycle. More than one root makes a forest whose trees work apart "
             "(decided).", f"seed 002 rules 1-2; {_DECIDED}"),
        Rule("TOPO-TREE-UP", "An advisory always travels from a child to its parent, with no TTL.",
             "seed 002 rule 3"),
        Rule("TOPO-TREE-NO-SIBLINGS", "A broker never passes an advisory that came from one child to another child "
             "(decided for the root too: the seed speaks of branches).", f"seed 002 rule 3; {_DECIDED}"),
        Rule("TOPO-TREE-DOWN", "A consumer at a branch or the root propagates down to its whole subtree.",
             "seed 002 rules 4-5"),
        Rule("TOPO-TREE-CONDUIT", "A tree link holds one subscription per destination (decided).",
             f"{_DECIDED}: the seed's aim is fewer subscriptions (seed 002, resource wastage)"),
        Rule("TOPO-MSG-ROUTE", "A queue message goes to one eligible registration: highest priority, then first in "
             "the dispatch list, which then moves to its end; a topic message is copied to every eligible one.",
             f"{_QUEUE} doActualDispatch, orderedCompare"),
        Rule("TOPO-MSG-LOOP", "A message is never forwarded to a broker on its brokerPath (except by replay).",
             f"{_FILTER} matchesForwardingFilter"),
        Rule("TOPO-MSG-TTL", "A message is forwarded only while its brokerPath is shorter than the bridge's "
             "messageTTL (-1: no limit).", f"{_FILTER} matchesForwardingFilter; AMQ-4607"),
        Rule("TOPO-MSG-WAIT", "A queue message with no eligible registration waits on its broker until one appears; "
             "a topic copy with none is dropped.",
             f"{_QUEUE} doActualDispatch (what no consumer takes stays pending); {_ACTIVEMQ}broker/region/Topic.java "
             "dispatch (onMessageWithNoConsumers)"),
        Rule("TOPO-MSG-REPLAY", "A broker with replayWhenNoConsumers and no client consumer of the queue may send a "
             "message back to a broker on its path; messageTTL is not checked then.",
             f"{_ACTIVEMQ}network/ConditionalNetworkBridgeFilterFactory.java ConditionalNetworkBridgeFilter."
             "matchesForwardingFilter; AMQ-2324"),
    )
}
