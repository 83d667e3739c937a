"""Reference networks of brokers: ActiveMQ Classic bridges and seed 002's tree connector, written to teach.

Introduction
------------
A network of ActiveMQ Classic brokers learns where consumers are from
consumer advisories. A bridge A=>B watches B's advisories and, for every
remote consumer it accepts, keeps a demand subscription on A: a consumer
like any other to A's queues and topics, which forwards what it takes to
B. Each demand subscription fires an advisory of its own, which is how
demand travels further, within consumerTTL and never round a loop.
Messages then follow demand hop by hop, each broker choosing afresh,
within messageTTL. Seed 002 (AMQ-2875) proposes tree connectors instead,
with leaves, branches and a root, where demand goes up with no TTL and
never spills to siblings; it was never built, and is modelled here as a
third kind of bridge.

This package is built from the parts a real broker has, each in its own
module, in reading order: :mod:`.filters` (destination wildcards, the
network bridge filters), :mod:`.advisories` (ConsumerInfo and the advisory
wire), :mod:`.destinations` (queues, topics, subscriptions, the message
store), :mod:`.bridges` (``DemandForwardingBridge``, ``ConduitBridge``, the
tree bridge), :mod:`.connectors`, :mod:`.broker` (one broker),
:mod:`.network` (the network and how it settles) and :mod:`.topology` (the
one entry point, and the network as a spec state). Sources are the network
classes of ActiveMQ Classic 5.17.2 (``DemandForwardingBridgeSupport``,
``ConduitBridge``, ``NetworkBridgeFilter``, ``Queue``), whose rules
``brokerspec.spec.topologies.rules`` cites by file and method, and seed 002;
the spec in ``brokerspec.spec.topologies`` is the semantics this
reproduces.
"""

from .advisories import AdvisoryBroker, AdvisoryWire, ConsumerInfo
from .bridges import (
    ConduitBridge,
    DemandForwardingBridge,
    DemandSubscription,
    RemoteInterest,
    SubscriptionClash,
    TreeBridge,
    create_network_bridge,
)
from .broker import Broker
from .connectors import NetworkConnector, TreeConnector
from .destinations import ActiveMQMessage, ClientSubscription, Destination, MessageStore, Queue, Subscription, Topic
from .filters import ConditionalNetworkBridgeFilter, DestinationFilter, DestinationSelection, NetworkBridgeFilter
from .network import NetworkOfBrokers
from .topology import ReferenceTopologyBroker, render_registration

__all__ = [
    "ActiveMQMessage", "AdvisoryBroker", "AdvisoryWire", "Broker", "ClientSubscription",
    "ConditionalNetworkBridgeFilter", "ConduitBridge", "ConsumerInfo", "DemandForwardingBridge", "DemandSubscription",
    "Destination", "DestinationFilter", "DestinationSelection", "MessageStore", "NetworkBridgeFilter",
    "NetworkConnector", "NetworkOfBrokers", "Queue", "ReferenceTopologyBroker", "RemoteInterest", "Subscription",
    "SubscriptionClash", "Topic", "TreeBridge", "TreeConnector", "create_network_bridge", "render_registration",
]
