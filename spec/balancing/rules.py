"""The rules of the load-balancing domain, with their IDs and sources.

Introduction
------------
Each rule has a stable ID (``LB-...`` for first routing, ``RD-...`` for
redistribution), one sentence of plain words, its source and the profiles
it applies to. A source names the Artemis class and method the rule was
read from (``BindingsImpl`` and ``CopyOnWriteBindings`` under
``artemis-server/.../core/postoffice/impl/``, the cluster classes under
``.../core/server/cluster/impl/``), the Artemis test that pins it, the
JIRA key that changed it, or seed 003 (``003_df6d5e31f642e5ae.txt``), the
walk through ``MessageLoadBalancingType`` and redistribution in 2.11.0.
Outcomes carry the ID of the rule that decided them; the structural rules
shape the state or the choices and no outcome names them.
"""

from __future__ import annotations

from ..addressing.rules import Rule

ALL = ("seed", "artemis-2.11", "artemis-latest")
OLDER = ("seed", "artemis-2.11")

RULES: dict[str, Rule] = {
    r.id: r
    for r in (
        Rule("LB-NODES", "A cluster starts with node n1; nodes join by name; an operation naming an unknown node "
             "is refused.",
             "brokerspec's cluster model, docs/load-balancing.md section 1: each node has its own PostOfficeImpl", ALL),
        Rule("LB-QUEUE-PER-NODE", "A queue name is unique on its node but may repeat on other nodes; every other "
             "node holds a remote binding for it, in creation order.",
             "RemoteQueueBindingImpl (unique name = queue name + node ID), ClusterConnectionImpl.doBindingAdded",
             ALL),
        Rule("LB-GROUPS", "Bindings balance in routing-name groups: all ANYCAST queues of an address form one group, "
             "each MULTICAST queue its own; same-named groups on different nodes merge.",
             "LocalQueueBinding.getRoutingName (ARTEMIS-780)", ALL),
        Rule("LB-ELIGIBLE", "A binding is eligible when its queue filter matches, its routing type is the message's "
             "(if the message has one), and for an FQQN send under 2.43 on its name is the FQQN's queue.",
             "BindingsImpl.matchBinding; ARTEMIS-5597; "
             "OnewayTwoNodeClusterTest.testRoundRobinMultipleQueuesWithFilters", ALL),
        Rule("LB-OFF-REMOTE", "Under OFF and OFF_WITH_REDISTRIBUTION a remote binding is eligible only for a "
             "MULTICAST message: always for OFF_WITH_REDISTRIBUTION, for OFF since 2.29.0; before, never.",
             "BindingsImpl.matchBinding; ARTEMIS-3608, ARTEMIS-4196, ARTEMIS-3188", ALL),
        Rule("LB-ROUND-ROBIN", "Each group routes to at most one binding: the first from the stored position that "
             "is eligible, connected and preferred (or any connected eligible one under STRICT); the position moves "
             "only when a binding is chosen, to just after it, resets when out of range, is forgotten when the "
             "group empties.", "BindingsImpl.getNextBinding (seed 003 shows the same loop in redistribute); "
             "CopyOnWriteBindings.removeBinding; OnewayTwoNodeClusterTest.testBasicRoundRobin", ALL),
        Rule("LB-SINGLE", "A group of one eligible binding receives whatever its consumers and connection.",
             "BindingsImpl.getNextBinding (bindingsCount == 1); "
             "BindingsImplTest.testGetNextBindingWithLoadBalancingOnDemand", ALL),
        Rule("LB-PREFERRED", "A local binding is preferred when a consumer's filter matches; a remote one when it has "
             "consumers, the type is not OFF, and no consumer filter is recorded or one matches.",
             "LocalQueueBinding.isHighAcceptPriority, RemoteQueueBindingImpl.isHighAcceptPriority; ARTEMIS-2473; "
             "RemoteQueueBindImplTest.testIsHighAcceptPriority",
             ALL),
        Rule("LB-FALLBACK", "When no binding is preferred, ON_DEMAND falls back to the last local eligible binding "
             "met in the scan (else the first eligible one); the other types to the first eligible one.",
             "lastLowPriorityBinding in BindingsImpl.getNextBinding; MessageRedistributionTest."
             "testRedistributionWithMultipleQueuesOnTheSameAddress", ALL),
        Rule("LB-DISCONNECTED", "A remote binding whose bridge is down is never a first choice, only a fallback or a "
             "group's only member.", "Binding.isConnected in BindingsImpl.getNextBinding", ALL),
        Rule("LB-TYPES", "The load-balancing types are OFF, STRICT and ON_DEMAND, and OFF_WITH_REDISTRIBUTION "
             "since 2.19.0; configuring a type the version lacks is refused. A type and delay are set per address "
             "on every node or on one node, and each node routes and redistributes under its own.",
             "seed 003 MessageLoadBalancingType; ARTEMIS-1925; ClusterConnectionConfiguration "
             "(message-load-balancing, one per node's cluster connection; the remote bindings it makes carry it, "
             "ARTEMIS-3009)", ALL),
        Rule("LB-CONSUMERS", "A message that lands on a queue goes to one started consumer whose filter matches, in "
             "turn; with none it waits. A paused consumer takes nothing but still counts for routing. A consumer "
             "name is unique in the cluster.", "QueueImpl.deliver, hasMatchingConsumer (a paused consumer counts); "
             "ServerConsumerImpl.handle (BUSY when stopped)",
             ALL),
        Rule("LB-NO-BINDINGS", "A send to an address with no bindings anywhere in the cluster is NO_BINDINGS.",
             "PostOfficeImpl.route", ALL),
        Rule("LB-UNROUTED-STATUS", "A send that no binding accepts although the address has bindings is NO_BINDINGS "
             "up to 2.27 and OK from 2.28.0 to 2.44.0.",
             "PostOfficeImpl.route, simpleRoute; ARTEMIS-4089, ARTEMIS-4911; "
             "FullQualifiedQueueTest.testFilteredQueueNegative", ALL),
        Rule("LB-FQQN-LOCAL", "Before 2.43.0 a send to address::queue goes only to the local queue of that name on "
             "that address, without round robin or remote bindings; its filter is checked from 2.35.0.",
             "BindingsImpl.route (the FQQN branch); ARTEMIS-1867, ARTEMIS-4795", OLDER),
        Rule("LB-QUEUE-ENABLED", "A disabled queue is still chosen by routing (its group's position moves past it) "
             "but drops the message, which counts as routed only if another queue, or a remote binding, took it; "
             "its waiting messages stay and are consumed as before. 2.11 has no such attribute.",
             "QueueImpl.route (queueConfiguration.isEnabled, 2.14.0 on); ActiveMQServerImpl.updateQueue; "
             "Artemis user manual, address-model: disabling all the queues of an address drops every message sent "
             "to it", ALL),
        Rule("LB-PULL", "A consumer of window 0 takes a message only when it receives: the first waiting one its "
             "filter matches. Nothing is pushed to it, yet it counts as a consumer everywhere (it draws messages to "
             "its node and keeps its queue from redistributing).",
             "ServerConsumerImpl.handle (BUSY without credit), ClientConsumerImpl.receiveImmediate (one credit); "
             "QueueImpl.hasMatchingConsumer ignores credit; ConsumerWindowSizeTest.testReceiveImmediateWithZeroWindow, "
             "testSlowConsumerNoBuffer", ALL),
        Rule("LB-ACK", "A consumer whose client acknowledges later holds what it takes; an acknowledgement of a "
             "message it holds acknowledges every earlier one too. One of a message it does not hold fails after "
             "acknowledging all it held in a transaction: its own, rolled back, which gives them back to the queue "
             "with a delivery spent; or the session's, then rollback-only. A queue's message count includes what "
             "its consumers hold.",
             "ServerConsumerImpl.acknowledge (cumulative over deliveringRefs; ActiveMQIllegalStateException when the "
             "ID is not found, after tx.rollback or markAsRollbackOnly; found against Artemis 2.40.0 and 2.11.0); "
             "QueueImpl.getMessageCount (delivering included); "
             "AcknowledgeTest.testReceiveAckLastMessageOnly", ALL),
        Rule("LB-CLOSE-RETURNS", "A consumer that closes gives back what it holds unacknowledged: the messages wait "
             "in its queue again (2.11: at the head, in delivery order; 2.32 on: in arrival order), go to the "
             "queue's other consumers, and redistribute when none is left.",
             "ServerConsumerImpl.close, cancelRefs; QueueImpl.addHead (2.11), addSorted (ARTEMIS-3093, ARTEMIS-4517); "
             "ARTEMIS-4410; MessageRedistributionTest.testRedistributionWhenConsumerIsClosed; "
             "JMSOrderTest.testReceiveSomeThenClose", ALL),
        Rule("LB-TX-SEND", "A send in a transacted session is routed at the send: the bindings are chosen and the "
             "round-robin positions move, a local queue that drops messages drops it, but it reaches its queues only "
             "when the session commits. A session is on one node; sessions and consumers share their names.",
             "PostOfficeImpl.route and processRoute (the references join the transaction); BindingsImpl.route "
             "(the position moves at the send); ServerSessionImpl.send; "
             "TransactionalSendTest.testSendWithCommit", ALL),
        Rule("LB-TX-COMMIT", "A commit delivers the session's sends in order, each to the queues routing chose for it "
             "(a queue deleted since takes its message with it, one made again under the name gets nothing, a "
             "remote queue that now drops messages drops it), and makes its acknowledgements final; a transaction a "
             "failed acknowledgement made rollback-only rolls back instead and the commit fails. A commit or a "
             "rollback of a session nothing opened, or of a consumer that is not transacted, is refused.",
             "AddOperation.afterCommit (QueueImpl.addTail of the routed references); RefsOperation.afterCommit; "
             "ServerSessionImpl.commit; TransactionImpl.commit (ROLLBACK_ONLY: rollback, "
             "ActiveMQTransactionRolledBackException); TransactionalSendTest.testSendWithCommit", ALL),
        Rule("LB-TX-ACK", "A transacted consumer's acknowledgements wait in its session's transaction: what it "
             "acknowledged (at once, or when its client acknowledges) leaves its hands but still counts in its "
             "queue until the commit.",
             "ServerConsumerImpl.acknowledge(tx, ...); QueueImpl.acknowledge(tx, ref) (a RefsOperation); "
             "QueueImpl.getDeliveringCount", ALL),
        Rule("LB-TX-ROLLBACK", "A rollback discards the session's sends without giving back round-robin positions, "
             "and returns what its consumer acknowledged, then what it holds, to the queue as a close returns "
             "messages (a purge-on-no-consumers queue without consumers drops them); the consumer stays and its "
             "queue offers them again. Closing a transacted consumer returns what it holds, then rolls its "
             "session back, whose returns then redistribute when the queue has no consumer left.",
             "ServerSessionImpl.rollback, doRollback, doClose; RefsOperation.afterRollback; QueueImpl.postRollback "
             "(addHead in 2.11, addSorted later); ClientSessionImpl.closeChildren; "
             "JMSOrderTest.testReceiveSomeThenRollback; TransactionalSendTest.testSendWithRollback", ALL),
        Rule("LB-TX-MAX-DELIVERY", "Each rollback of an acknowledged message uses up one delivery of it (a held one "
             "none); a message whose deliveries reach max-delivery-attempts (10) is dropped when the rollback returns "
             "it, there being no dead-letter address. A redistributed copy starts again at 0.",
             "QueueImpl.checkRedelivery; ServerConsumerImpl.cancelRefs (decrementDeliveryCount of the unacknowledged); "
             "AddressSettings.DEFAULT_MAX_DELIVERY_ATTEMPTS; RedeliveryConsumerTest.testDelivery; "
             "DeadLetterAddressTest.testBasicSendWithDLAButNoBinding", ALL),
        Rule("LB-BRIDGE-DUP", "A message that crosses to another node (routed to a remote binding, or a "
             "redistributed copy) carries the bridge duplicate ID (sending node, its own message ID), which the "
             "receiving node checks in its cache of the address and records: one it holds already is dropped, so a "
             "bridge that resends after reconnecting doubles nothing, and a copy, having an ID of its own, goes back "
             "and forth between two nodes without being taken for a duplicate. A node forgets an address's IDs "
             "when the address loses its last binding.",
             "BridgeImpl.beforeForwardingNoCopy and getDuplicateBytes; PostOfficeImpl.checkBridgeDuplicateID "
             "(BRIDGE.<address> cache), removeBinding -> deleteDuplicateCache; "
             "MessageRedistributionTest.testBackAndForth, testBackAndForth2WithDuplicDetection; "
             "BridgeReconnectTest; ARTEMIS-4312", ALL),
        Rule("LB-PURGE-ON-NO-CONSUMERS", "A purge-on-no-consumers queue without consumers is still chosen by routing but "
             "drops the message; when its last consumer closes, what waits in it is dropped before the close can "
             "give it a redistributor.",
             "QueueImpl.route (isPurgeOnNoConsumers, getConsumerCount() == 0), QueueManagerImpl.doIt (purge when the "
             "consumer count reaches 0)", ALL),
        Rule("LB-QUERY-QUEUE", "A queue query changes nothing and gives no redistributor a turn: it reports whether "
             "the queue exists on the node and, if so, its address, routing type, filter, waiting messages and "
             "consumers (paused ones included).",
             "ActiveMQServerImpl.queueQuery (QueueQueryResult: address, routingType, filterString, messageCount, "
             "consumerCount); ClientSession.queueQuery", ALL),
        Rule("LB-DELETE-QUEUE", "A queue with consumers cannot be deleted; deleting one drops its waiting messages.",
             "ActiveMQServerImpl.destroyQueue (consumers present: AMQ229025)", ALL),
        Rule("RD-TRIGGER-CLOSE", "When a queue's last consumer closes, the local queue named like its routing name "
             "gets a redistributor.", "PostOfficeImpl.onNotification CONSUMER_CLOSED", ALL),
        Rule("RD-TRIGGER-REMOTE-CONSUMER", "When a consumer attaches on another node, the local queue named like the "
             "remote queue's routing name gets a redistributor.",
             "PostOfficeImpl.onNotification CONSUMER_CREATED", ALL),
        Rule("RD-TRIGGER-QUEUE-CREATED", "From 2.20.0, a new local queue whose address has a connected remote "
             "binding with consumers gives the local queue named like its routing name a redistributor; before, "
             "a new queue starts nothing.",
             "PostOfficeImpl.onNotification BINDING_ADDED (from 2.20.0, commit 7d129b36e9; "
             "MessageRedistributionTest.testRedistributionToRemoteConsumerFromNewQueueLbOffWithRedistribution)",
             ALL),
        Rule("RD-DELAY", "A redistributor is added unless the delay is -1: after that many ticks of the logical "
             "clock for a positive delay, at once for any other (a delay below -1 is no error), and only to a queue "
             "without consumers or one that flagged a message every consumer refused; a consumer attaching cancels "
             "it.", "QueueImpl.addRedistributor (schedules only a positive delay), cancelRedistributor, "
             "hasUnMatchedPending; ARTEMIS-2007; MessageRedistributionTest.testDelayedRedistributionCancelled",
             ALL),
        Rule("RD-ALLOWED", "Only ON_DEMAND and OFF_WITH_REDISTRIBUTION redistribute; OFF and STRICT never do.",
             "seed 003 BindingsImpl.allowRedistribute / redistribute; Artemis user manual, clusters "
             "(message-load-balancing must be ON_DEMAND or OFF_WITH_REDISTRIBUTION); "
             "MessageRedistributionTest.testNoRedistributionWhenConsumerIsClosedForwardWhenNoConsumersTrue", ALL),
        Rule("RD-TARGET", "A waiting message goes to the first member of its queue's group, from the position, that "
             "has a matching consumer and whose filter matches; the position moves past it; targets take turns.",
             "seed 003 BindingsImpl.redistribute; MessageRedistributionTest.testRedistributionWhenConsumerIsClosed "
             "(targets alternate)", ALL),
        Rule("RD-SKIP-ORIGIN", "Redistribution never picks the queue the message waits in.",
             "seed 003 BindingsImpl.redistribute (binding.getBindable() != originatingQueue)", ALL),
        Rule("RD-GROUPED", "A message with a group ID is never redistributed.",
             "Redistributor.handle; MessageRedistributionTest.testRedistributionWithMessageGroups", ALL),
        Rule("RD-NEW-ID", "A redistributed message is a copy with a new message ID.",
             "seed 003 PostOfficeImpl.redistribute (message.copy(storageManager.generateID()))", ALL),
        Rule("RD-GROUP", "The redistribution group is the queue's name; for an FQQN message held by an ANYCAST queue "
             "it is the FQQN's address from 2.25.0.", "seed 003; BindingsImpl.redistribute (ARTEMIS-3918)", ALL),
        Rule("LB-WILDCARD-MATCH", "An address is words split by the delimiter ('.'); a whole word '#' stands for zero "
             "or more words, a whole word '*' for exactly one; the three characters are configurable. Before 2.17.0 "
             "a '#' followed by more words runs only to the first later word equal to the next one.",
             "AddressPartNode.visitMatchingWildcards (ARTEMIS-3033, 2.17.0); AddressImpl.matches before; "
             "WildcardConfiguration; AddressMapUnitTest, AddressImplTest", ALL),
        Rule("LB-WILDCARD-BINDINGS", "A queue bound to a wild address is also a binding of every plain address the "
             "wild one matches, on every node: it joins that address's routing-name groups, with a round-robin "
             "position per plain address (an ANYCAST queue on 'a.#' forms the group 'a.#').",
             "WildcardAddressManager.getBindingsForRoutingAddress, addBinding, removeBinding; "
             "WildcardAddressManagerUnitTest; Artemis user manual, wildcard-routing.adoc", ALL),
        Rule("LB-WILDCARD-SEND", "A message sent to a wild address reaches only the queues bound to exactly that "
             "address; with none there it is NO_BINDINGS.",
             "WildcardAddressManager.getBindingsForRoutingAddress (the address's own bindings first; before 2.17.0 "
             "nothing else for a wild address)", ALL),
        Rule("RD-TRIGGER-FQQN-CONSUMER", "A consumer attached by an FQQN makes every other node give its own queue "
             "named like the FQQN's queue part a redistributor (from 2.25.0); before, the consumer counts as one "
             "attached by name, whose trigger looks the queue up by routing name.",
             "PostOfficeImpl.onNotification (getBinding of HDR_ADDRESS when it is an FQQN); "
             "ServerSessionImpl.createConsumer (ARTEMIS-3918, 2.25.0)", ALL),
        Rule("LB-PREFIX", "An acceptor prefix (the same on every node) is stripped from a send's address, and the "
             "message takes the prefix's routing type; with an FQQN the queue part is lost from 2.19.0 and the "
             "message routed to the address, while before it still goes to the FQQN's queue.",
             "ServerSessionImpl.doSend (AddressInfo drops the queue part, getAddressAndRoutingType strips the "
             "prefix, the message address is rewritten from 2.19.0: ARTEMIS-1612); PrefixUtil.getAddress; "
             "Artemis user manual, address-model.adoc (Using Prefixes to Determine Routing Type)", ALL),
        Rule("LB-AUTO-CREATE", "From 2.28.0 an ANYCAST send on a node without a queue of its address (2.28.0-2.31.0: "
             "without any binding of it) first makes there a queue named like the address where auto-create-queues "
             "is on, and is refused where it is off; a queue of that name on another address is taken if ANYCAST "
             "and refuses the send if MULTICAST. Before 2.28.0 a send creates nothing.",
             "PostOfficeImpl.simpleRoute and ServerSessionImpl.checkAutoCreate (ARTEMIS-4089, 2.28.0; "
             "hasLocalBinding, ARTEMIS-4450, 2.31.1, tested by AutoDeleteClusteredDestinationTest; the MULTICAST namesake, "
             "ARTEMIS-4512, 2.32.0, which the spec applies in both creating modes)",
             ALL),
        Rule("LB-UPDATE-FILTER", "From 2.14.0 an update_queue, a queue configuration without a filter, leaves the "
             "queue routing without one, on every node (2.32.0 on), while a queue query still reports the filter it "
             "was created with; what waits in it stays. Before, the filter stays.",
             "PostOfficeImpl.updateQueue (ARTEMIS-2797, 2.14.0; BINDING_UPDATED to the other nodes, ARTEMIS-4570, "
             "2.32.0); found fuzzing Artemis 2.40.0", ALL),
        Rule("LB-TYPE-ADOPTED", "A node's bindings of an address route and redistribute under OFF until a remote "
             "binding joins them, then under the configured type until the address has no bindings left; so on a "
             "node that never held a remote binding of it, ON_DEMAND falls back to the first eligible queue from "
             "the position rather than the last local one.",
             "BindingsImpl (messageLoadBalancingType starts as OFF; addBinding takes a RemoteQueueBinding's type, "
             "ARTEMIS-3009); found fuzzing Artemis 2.40.0", ALL),
        Rule("RD-WILDCARD", "A redistributor looks for its target among the bindings of the message's address, so a "
             "message waiting on a wildcard queue may go to any queue of its group that the message's address "
             "reaches; before 2.19.0 among the bindings of the queue's (wild) address.",
             "PostOfficeImpl.redistribute (ARTEMIS-3223, 2.19.0); AmqpBridgeClusterRedistributionTest", ALL),
        Rule("LB-FAIR-TURNS", "Every round robin keeps its own turn (each routing-name group on each node, each "
             "redistribution group, each queue's consumers) and passes it on: where the allowed members stay the same "
             "and the spec would hand the next message to another one, a broker that breaks ties its own way still "
             "does not keep the turn max(2, n) times running in a group of n.",
             "BindingsImpl.getNextBinding (one BindingIndex per routing name in CopyOnWriteBindings, moved past the "
             "binding taken); QueueImpl (consumers in turn); Artemis user manual, clusters.adoc: messages are "
             "distributed round-robin", ALL),
    )
}

STRUCTURAL = frozenset({
    "LB-GROUPS", "LB-ELIGIBLE", "LB-OFF-REMOTE", "LB-SINGLE", "LB-PREFERRED", "LB-FALLBACK", "RD-TRIGGER-CLOSE",
    "RD-TRIGGER-REMOTE-CONSUMER", "RD-TRIGGER-QUEUE-CREATED", "RD-ALLOWED", "RD-TARGET", "RD-SKIP-ORIGIN",
    "RD-GROUPED", "RD-NEW-ID", "RD-GROUP", "LB-FAIR-TURNS", "LB-WILDCARD-MATCH", "LB-WILDCARD-BINDINGS",
    "RD-WILDCARD", "RD-TRIGGER-FQQN-CONSUMER", "LB-UPDATE-FILTER", "LB-TYPE-ADOPTED",
})
"""Rules that shape the state or the choices rather than decide an outcome; no outcome carries their ID."""
