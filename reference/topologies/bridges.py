"""Bridges: one object per directed bridge, turning remote consumer advisories into local demand.

Introduction
------------
A network connector on broker A towards B makes the bridge A=>B (and, when
duplex, B=>A over the same connection, ``TransportConnection.processBrokerInfo``).
The bridge watches B's consumer advisories and, for each one it accepts,
keeps a :class:`DemandSubscription`: a consumer on A whose messages it
forwards to B. ``NetworkBridgeFactory.createNetworkBridge`` picks the class
by ``conduitSubscriptions``: :class:`ConduitBridge` (the default) or the
plain :class:`DemandForwardingBridge`. Seed 002's tree links are a third
kind, :class:`TreeBridge`.

Theory of operation: ``DemandForwardingBridgeSupport.serviceRemoteConsumerAdvisory``, for one
advisory about a consumer on B, in order:

1. consumerTTL - ignore it when its brokerPath is already consumerTTL long
   ("restricted to N network hops only"; -1: no limit);
2. loop check - ignore it when A is on its brokerPath ("already routed
   through this broker once");
3. ``isPermissableDestination`` - the exclude and include lists
   (:class:`~.filters.DestinationSelection`);
4. ``addConsumerInfo`` - the local consumer's brokerPath is the remote one
   plus B (``addRemoteBrokerToBrokerPath``), and it stands for the same
   client consumers;
5. ``ConduitBridge.addToAlreadyInterestedConsumers`` - a conduit bridge
   that already has a subscription for the destination adds the remote
   consumer to it, and nothing new appears on A. Only consumers that may
   conduit (``canConduit``) merge: topics, client consumers, and queue
   network subscriptions only with ``conduitNetworkQueueSubscriptions``
   (AMQ-6858); each other one gets a subscription of its own;
6. duplicate suppression (``duplicateSuppressionIsRequired``, when enabled
   for the destination's kind): an existing demand subscription on A, from
   any bridge, that stands for one of the same client consumers wins unless
   the newcomer's priority is strictly higher; then the existing one gives
   way. One that has not yet announced itself is simply removed; one that
   has (its advisory is out, and demand may rest on it) cannot be taken
   back in place, so the bridge reports a :class:`SubscriptionClash` and
   the network restarts its bridges with that subscription barred (rule
   TOPO-NC-SUPPRESS);
7. ``doCreateDemandSubscription`` - the priority: the remote one, or with
   ``decreaseNetworkConsumerPriority`` -5 for a brokerPath of one broker and
   -5-(n+1) for n brokers;
8. ``addSubscription`` - the new consumer joins A's destination with a
   network bridge filter from A's destination policy
   (``configureDemandSubscription``). Its own advisory goes out when the
   network starts it (:mod:`.network`).

A demand subscription's key is ``A<B:WHAT``, WHAT being the remote
consumer's key, or ``*`` for a conduit subscription. A conduit
subscription keeps every remote consumer it stands for; its brokerPath and
priority are those of its *lead*, the first to arrive: the interest of the
earliest client consumer (the replay takes clients in arrival order), and
of one client's interests the one with the shortest path (then the smallest
key), which its breadth-first replay brings first (rule TOPO-NC-ORDER).

Tree links (seed 002) replace steps 1-3: an advisory always goes up from a
child to its parent, with no TTL (rule 3); it goes down from a parent to a
child only when it started at the parent and the parent is a branch or the
root (rules 4, 5), or when it came to the parent from the parent's own
parent. A branch never passes one child's advisory to another child. Tree
links conduit everything and suppress nothing, so a broker holds one
subscription per link and destination (rule TOPO-TREE-CONDUIT).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from brokerspec.spec.topologies import BridgeConfig, Event, Role, is_topic

from .advisories import ConsumerInfo
from .destinations import ActiveMQMessage, Destination, Subscription
from .filters import DestinationSelection, NetworkBridgeFilter, create_network_bridge_filter

if TYPE_CHECKING:
    from .broker import Broker

CONSUMER_PRIORITY_BASE = -5
"""``consumerPriorityBase`` of ``doCreateDemandSubscription``."""

TREE_LINK_CONFIGURATION = BridgeConfig(consumer_ttl=-1, message_ttl=-1, conduit=True, conduit_network_queues=True,
                                       decrease_priority=False, suppress_duplicate_queues=False,
                                       suppress_duplicate_topics=False)
"""A tree link's settings: no TTLs, every subscription conduited, no duplicate suppression."""


@dataclass(frozen=True)
class RemoteInterest:
    """One remote consumer a demand subscription stands for, as the local brokerPath and priority it gives."""

    remote_key: str
    broker_path: tuple[str, ...]
    priority: int
    consumer_ids: frozenset[str]
    arrival: int = 0
    """The replay pass it came in: the rank of its client consumer in arrival order."""


class DemandSubscription(Subscription):
    """A bridge's consumer on its local broker; what it takes is forwarded to the remote broker.

    ``started`` becomes True when the network starts it and its advisory
    goes out; ``active`` becomes False when it is removed.
    """

    def __init__(self, bridge: DemandForwardingBridge, destination_name: str, key: str, conduit: bool,
                 network_bridge_filter: NetworkBridgeFilter) -> None:
        self.bridge = bridge
        self.destination_name = destination_name
        self.key = key
        self.conduit = conduit
        self.network_bridge_filter = network_bridge_filter
        self.remote_interests: dict[str, RemoteInterest] = {}
        self.started = False
        self.active = True

    @property
    def via(self) -> str | None:
        return self.bridge.remote_name

    def add_interest(self, interest: RemoteInterest) -> None:
        """One more remote consumer this subscription stands for."""
        self.remote_interests[interest.remote_key] = interest

    def get_lead(self) -> RemoteInterest:
        """The remote consumer whose path and priority the subscription shows: the first to arrive.

        The earliest pass, then the shortest path, then the smallest key."""
        return min(self.remote_interests.values(), key=lambda i: (i.arrival, len(i.broker_path), i.remote_key))

    @property
    def priority(self) -> int:
        return self.get_lead().priority

    def consumer_info(self) -> ConsumerInfo:
        """The local consumer's info: the lead's path and priority, every remote consumer's client IDs."""
        lead = self.get_lead()
        ids = frozenset().union(*(i.consumer_ids for i in self.remote_interests.values()))
        return ConsumerInfo(self.key, self.bridge.local_name, self.destination_name, lead.broker_path,
                            lead.priority, ids, True)

    def matches(self, message: ActiveMQMessage, destination: Destination) -> bool:
        """The network bridge filter is the whole selector."""
        return self.network_bridge_filter.matches_forwarding_filter(message, destination)

    def take(self, message: ActiveMQMessage, events: list[Event]) -> None:
        """Forward the message over the bridge."""
        self.bridge.forward(message, events)


@dataclass(frozen=True)
class SubscriptionClash:
    """A started demand subscription that a candidate with a strictly higher priority must replace."""

    subscription: DemandSubscription


class DemandForwardingBridge:
    """The bridge ``local=>remote`` with ``conduitSubscriptions=false``: one subscription per remote consumer."""

    def __init__(self, local_broker: Broker, remote_broker: Broker, configuration: BridgeConfig) -> None:
        self.local_broker = local_broker
        self.remote_broker = remote_broker
        self.configuration = configuration
        self.selection = DestinationSelection(configuration.include, configuration.exclude)
        self.subscriptions: dict[tuple[str, str], DemandSubscription] = {}
        """(destination, key) -> this bridge's demand subscriptions."""
        self.barred: set[tuple[str, str]] = set()
        """(destination, key) of subscriptions this restart of the network must not make again."""

    @property
    def local_name(self) -> str:
        return self.local_broker.name

    @property
    def remote_name(self) -> str:
        return self.remote_broker.name

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.local_name}=>{self.remote_name})"

    # -- lifecycle ---------------------------------------------------------------------

    def start(self) -> None:
        """Join both brokers: watch the remote advisories, and be the local way to the remote broker."""
        self.remote_broker.advisory_broker.add_advisory_consumer(self)
        self.local_broker.bridges[self.remote_name] = self

    def stop(self) -> None:
        """Leave both brokers, taking every demand subscription down."""
        self.remote_broker.advisory_broker.remove_advisory_consumer(self)
        if self.local_broker.bridges.get(self.remote_name) is self:
            del self.local_broker.bridges[self.remote_name]
        for subscription in list(self.subscriptions.values()):
            self.remove_demand_subscription(subscription)

    def bar(self, subscription: DemandSubscription) -> None:
        """Remember not to make ``subscription`` again until the network has settled."""
        self.barred.add((subscription.destination_name, subscription.key))

    # -- advisories --------------------------------------------------------------------

    def service_remote_consumer_advisory(self, info: ConsumerInfo,
                                         arrival: int = 0) -> DemandSubscription | SubscriptionClash | None:
        """Handle one remote consumer advisory of replay pass ``arrival``; the subscription it creates, a clash, or None."""
        if not self.accepts(info):
            return None
        return self.add_consumer_info(info, arrival)

    def accepts(self, info: ConsumerInfo) -> bool:
        """Steps 1-3: consumerTTL, the loop check, the destination lists."""
        consumer_ttl = self.configuration.consumer_ttl
        if consumer_ttl > -1 and len(info.broker_path) >= consumer_ttl:
            return False
        if self.local_name in info.broker_path:
            return False
        return self.selection.is_permissable_destination(info.destination)

    def add_consumer_info(self, info: ConsumerInfo, arrival: int = 0) -> DemandSubscription | SubscriptionClash | None:
        """Steps 4-8 for an accepted advisory."""
        broker_path = info.broker_path + (self.remote_name,)
        interest = RemoteInterest(info.consumer_id, broker_path,
                                  self.compute_priority(broker_path, info.priority), info.network_consumer_ids,
                                  arrival)
        conduit = self.can_conduit(info)
        key = f"{self.local_name}<{self.remote_name}:{'*' if conduit else info.consumer_id}"
        if (info.destination, key) in self.barred:
            return None
        if conduit and self.add_to_already_interested_consumers(info.destination, key, interest):
            return None
        if self.duplicate_suppression_is_required(info.destination):
            verdict = self.suppress_duplicates(info.destination, interest)
            if verdict is not None:
                return verdict if isinstance(verdict, SubscriptionClash) else None
        return self.add_subscription(info.destination, key, conduit, interest)

    def can_conduit(self, info: ConsumerInfo) -> bool:
        """A plain bridge conduits nothing."""
        return False

    def add_to_already_interested_consumers(self, destination: str, key: str, interest: RemoteInterest) -> bool:
        """A plain bridge has no conduit subscriptions to add to."""
        return False

    def duplicate_suppression_is_required(self, destination: str) -> bool:
        """``suppressDuplicateTopicSubscriptions`` for topics, ``suppressDuplicateQueueSubscriptions`` for queues."""
        if is_topic(destination):
            return self.configuration.suppress_duplicate_topics
        return self.configuration.suppress_duplicate_queues

    def suppress_duplicates(self, destination_name: str, interest: RemoteInterest) -> SubscriptionClash | bool | None:
        """Step 6 against the local destination's demand subscriptions, oldest first.

        None: the candidate goes ahead. False: an existing one at least as
        strong keeps its place and the candidate is dropped. A clash: a
        started one must give way.
        """
        destination = self.local_broker.find_destination(destination_name)
        if destination is None:
            return None
        for existing in destination.get_network_subscriptions():
            if not isinstance(existing, DemandSubscription):
                continue
            shown = existing.consumer_info()
            if not shown.network_consumer_ids & interest.consumer_ids:
                continue
            if shown.priority >= interest.priority:
                return False
            if existing.started:
                return SubscriptionClash(existing)
            existing.bridge.remove_demand_subscription(existing)
        return None

    def compute_priority(self, broker_path: tuple[str, ...], remote_priority: int) -> int:
        """Step 7 (``doCreateDemandSubscription``)."""
        if not self.configuration.decrease_priority:
            return remote_priority
        priority = CONSUMER_PRIORITY_BASE
        if len(broker_path) > 1:
            priority -= len(broker_path) + 1
        return priority

    def add_subscription(self, destination_name: str, key: str, conduit: bool,
                         interest: RemoteInterest) -> DemandSubscription:
        """Step 8: the new demand subscription joins the local destination."""
        bridge_filter = create_network_bridge_filter(self.remote_name, self.configuration.message_ttl,
                                                     self.local_broker.replay_when_no_consumers)
        subscription = DemandSubscription(self, destination_name, key, conduit, bridge_filter)
        subscription.add_interest(interest)
        self.subscriptions[(destination_name, key)] = subscription
        self.local_broker.get_destination(destination_name).add_subscription(subscription)
        return subscription

    def remove_demand_subscription(self, subscription: DemandSubscription) -> None:
        """The subscription leaves the bridge and the local destination."""
        if self.subscriptions.get((subscription.destination_name, subscription.key)) is subscription:
            del self.subscriptions[(subscription.destination_name, subscription.key)]
        destination = self.local_broker.find_destination(subscription.destination_name)
        if destination is not None:
            destination.remove_subscription(subscription)
        subscription.active = False

    # -- messages ----------------------------------------------------------------------

    def forward(self, message: ActiveMQMessage, events: list[Event]) -> None:
        """``serviceLocalCommand``: the copy, with the local broker on its path, is a fresh send on the remote."""
        self.remote_broker.receive(message.copy_for_forwarding(self.local_name), events)


class ConduitBridge(DemandForwardingBridge):
    """The default bridge: remote consumers that may conduit share one subscription per destination."""

    def can_conduit(self, info: ConsumerInfo) -> bool:
        """``canConduit``: topics, client consumers, and queue network subscriptions only with AMQ-6858's option."""
        return (is_topic(info.destination) or not info.network_subscription
                or self.configuration.conduit_network_queues)

    def add_to_already_interested_consumers(self, destination: str, key: str, interest: RemoteInterest) -> bool:
        """Add the remote consumer to this bridge's conduit subscription, if there is one."""
        existing = self.subscriptions.get((destination, key))
        if existing is None:
            return False
        existing.add_interest(interest)
        return True


class TreeBridge(ConduitBridge):
    """A tree link in one direction (seed 002 rules 3-5): demand moves by role, with no TTL."""

    def __init__(self, local_broker: Broker, remote_broker: Broker) -> None:
        super().__init__(local_broker, remote_broker, TREE_LINK_CONFIGURATION)

    def accepts(self, info: ConsumerInfo) -> bool:
        """Up from a child always; down from a parent only what started there or came from above."""
        sender = self.remote_broker
        if sender.get_parent() == self.local_name:
            passes = True
        elif info.last_hop is None:
            passes = sender.get_role() is not Role.LEAF
        else:
            passes = info.last_hop == sender.get_parent()
        return passes and self.local_name not in info.broker_path


def create_network_bridge(local_broker: Broker, remote_broker: Broker,
                          configuration: BridgeConfig) -> DemandForwardingBridge:
    """``NetworkBridgeFactory.createNetworkBridge``: a conduit bridge unless conduit subscriptions are off."""
    if configuration.conduit:
        return ConduitBridge(local_broker, remote_broker, configuration)
    return DemandForwardingBridge(local_broker, remote_broker, configuration)
