"""The rules of the topology domain, with their IDs and sources.

Introduction
------------
Each rule has a stable ID (``TOPO-NC-...`` for network connectors,
``TOPO-TREE-...`` for the tree connector, ``TOPO-MSG-...`` for messages),
one sentence of plain words and its source. "Notes" are the project's
researched notes on ActiveMQ Classic networks (5.17.2, the version Debian
12 ships); their sections cite the ActiveMQ class and line each fact was
read from. Seed 002 is AMQ-2875, the tree connector proposal. Rules marked
"decided" fill a gap the sources leave open; ``docs/topologies.md`` says why.
"""

from __future__ import annotations

from ..addressing.rules import Rule

RULES: dict[str, Rule] = {
    r.id: r
    for r in (
        Rule("TOPO-BROKERS", "Brokers join by name; an operation naming an unknown broker is refused.",
             "brokerspec's network model"),
        Rule("TOPO-CONNECTORS", "A connector joins two different brokers that share no other connector, except two "
             "non-duplex network connectors in opposite directions; a network connector A->B makes bridge A=>B, "
             "and B=>A when duplex, both with A's settings.",
             "notes 1.2 (TransportConnection.processBrokerInfo builds the duplex bridge from A's properties)"),
        Rule("TOPO-ONE-DESIGN", "A broker uses network connectors or tree connectors, never both (decided).",
             "decided: keeps every connected part of a topology one design"),
        Rule("TOPO-CLIENTS", "Consumer and producer IDs are unique; closing an unknown one is refused.",
             "brokerspec's network model"),
        Rule("TOPO-SETTLE", "After every operation demand is derived afresh, queue dispatch lists keep survivors in "
             "order and add newcomers at the end by key, and waiting messages that may move do.",
             "notes 1.3 (demand to a fixed point); decided: the order of newcomers"),
        Rule("TOPO-NC-TTL", "A bridge A=>B turns a registration on B into demand on A only while its brokerPath is "
             "shorter than consumerTTL (-1: no limit).",
             "notes 1.2 step 2: DemandForwardingBridgeSupport.serviceRemoteConsumerAdvisory; AMQ-4607"),
        Rule("TOPO-NC-LOOP", "A bridge A=>B ignores a registration whose brokerPath already contains A.",
             "notes 1.2 step 3: serviceRemoteConsumerAdvisory"),
        Rule("TOPO-NC-FILTER", "Excluded destinations are never bridged; a non-empty include list bridges only what "
             "it matches (ActiveMQ wildcards).", "notes 1.2 step 4: isPermissableDestination"),
        Rule("TOPO-NC-PATH", "Demand on A for a registration on B has brokerPath = the registration's path + [B] and "
             "stands for the same client consumers.", "notes 1.2 step 5: addRemoteBrokerToBrokerPath"),
        Rule("TOPO-NC-CONDUIT", "A conduit bridge keeps one subscription per destination for registrations that may "
             "conduit (topics, client consumers, or queue network subscriptions with "
             "conduitNetworkQueueSubscriptions); every other registration gets its own.",
             "notes 1.2: ConduitBridge.addToAlreadyInterestedConsumers, canConduit; AMQ-6858"),
        Rule("TOPO-NC-SUPPRESS", "With duplicate suppression on, a network subscription standing for the same "
             "consumer as an existing one is dropped unless its priority is strictly higher, which replaces the "
             "existing one.", "notes 1.2: duplicateSuppressionIsRequired"),
        Rule("TOPO-NC-PRIORITY", "Demand copies the remote priority, or with decreaseNetworkConsumerPriority is -5 "
             "for a path of one broker and -5-(n+1) for n.", "notes 1.2 step 6: doCreateDemandSubscription"),
        Rule("TOPO-NC-CASCADE", "Removing a registration removes everything created from it; a conduit subscription "
             "goes when its last member goes.", "notes 1.3; ConduitBridge.removeDemandSubscription"),
        Rule("TOPO-NC-ORDER", "Consumers are taken in arrival order, each one's advisories breadth first; a conduit "
             "subscription takes path and priority from its first member to arrive (the earliest consumer's, "
             "then the shortest path, then the smallest key) (decided where timing decides).",
             "ActiveMQ DemandForwardingBridgeSupport.addConsumerInfo (a later consumer joins the conduit "
             "DemandSubscription built from the first); real 5.17 networks subscribed far consumer first"),
        Rule("TOPO-TREE-ROLES", "A broker is a leaf or branch by its one tree connector, else a root; a leaf has no "
             "children and parents form no cycle. More than one root makes a forest whose trees work apart "
             "(decided).", "seed 002 rules 1-2"),
        Rule("TOPO-TREE-UP", "An advisory always travels from a child to its parent, with no TTL.",
             "seed 002 rule 3"),
        Rule("TOPO-TREE-NO-SIBLINGS", "A broker never passes an advisory that came from one child to another child "
             "(decided for the root too: the seed speaks of branches).", "seed 002 rule 3"),
        Rule("TOPO-TREE-DOWN", "A consumer at a branch or the root propagates down to its whole subtree.",
             "seed 002 rules 4-5"),
        Rule("TOPO-TREE-CONDUIT", "A tree link holds one subscription per destination (decided).",
             "decided: the seed's aim is fewer subscriptions (seed 002, resource wastage)"),
        Rule("TOPO-MSG-ROUTE", "A queue message goes to one eligible registration: highest priority, then first in "
             "the dispatch list, which then moves to its end; a topic message is copied to every eligible one.",
             "notes 1.2: Queue.doActualDispatch, Queue.orderedCompare"),
        Rule("TOPO-MSG-LOOP", "A message is never forwarded to a broker on its brokerPath (except by replay).",
             "notes 1.2: NetworkBridgeFilter.matchesForwardingFilter"),
        Rule("TOPO-MSG-TTL", "A message is forwarded only while its brokerPath is shorter than the bridge's "
             "messageTTL (-1: no limit).", "notes 1.2: NetworkBridgeFilter.matchesForwardingFilter; AMQ-4607"),
        Rule("TOPO-MSG-WAIT", "A queue message with no eligible registration waits on its broker until one appears; "
             "a topic copy with none is dropped.", "notes 1.3"),
        Rule("TOPO-MSG-REPLAY", "A broker with replayWhenNoConsumers and no client consumer of the queue may send a "
             "message back to a broker on its path; messageTTL is not checked then.",
             "notes 1.2: ConditionalNetworkBridgeFilter.matchesForwardingFilter; AMQ-2324"),
    )
}
