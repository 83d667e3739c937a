"""The network of brokers: brokers, connectors, client consumers, and how the network comes back to rest.

Introduction
------------
:class:`NetworkOfBrokers` owns what no single broker owns: the brokers by
name (in the order they joined), the connectors by (declaring broker,
target), and the client consumers by ID. Everything else lives on the
brokers and bridges themselves.

Theory of operation. After every change to the topology or the consumers
the network *settles* (rule TOPO-SETTLE), in three steps.

1. **Restart the bridges** (:meth:`NetworkOfBrokers.restart_bridges`).
   Every demand subscription is taken down, and the bridges start again:
   each broker replays an advisory for every client consumer it has
   (``AdvisoryBroker.addConsumer``; clients in the order of broker,
   destination and ID), and the :class:`~.advisories.AdvisoryWire` carries
   them a generation at a time. A bridge that creates a demand subscription
   in one generation starts it when the generation is over; only then does
   the subscription's own advisory go out (so a conduit subscription
   announces every remote consumer that joined it in its generation), and
   subscriptions start in the order they were first created. When duplicate
   suppression finds that a started subscription must give way, the
   bridge reports a clash; the network bars that subscription and restarts
   from scratch without it (the barred set only grows, so this ends).
   Starting from scratch makes demand "what the network settles into when
   every advisory is replayed", independent of the history of commands,
   as a real network is after its bridges restart.
2. **Refresh the round robin lists** of every queue whose subscriptions
   changed (:meth:`~.destinations.Queue.refresh_consumer_list`).
3. **Dispatch waiting messages**: brokers in name order, each broker's kept
   messages oldest first; each that may go now goes, and follows its way
   to where it ends.

A send is not a change: it is routed from the sending broker
(:meth:`~.broker.Broker.receive`) and needs no settling.
"""

from __future__ import annotations

from collections.abc import Iterable

from brokerspec.spec.topologies import Event, Waiting

from .advisories import AdvisoryWire
from .bridges import DemandForwardingBridge, DemandSubscription, SubscriptionClash
from .broker import Broker
from .connectors import Connector
from .destinations import ActiveMQMessage, ClientSubscription, Destination, Queue


class NetworkOfBrokers:
    """Every broker, connector and client consumer; the settling of the whole network."""

    def __init__(self) -> None:
        self.brokers: dict[str, Broker] = {}
        self.connectors: dict[tuple[str, str], Connector] = {}
        self.clients: dict[str, ClientSubscription] = {}
        self.demand: list[DemandSubscription] = []
        """Every demand subscription the last restart made (some may have been removed since)."""
        self.changed: set[Destination] = set()
        """Destinations whose subscriptions changed since the network last settled."""
        self.holding: set[str] = set()
        """Brokers whose message store keeps messages."""

    # -- topology and clients ----------------------------------------------------------

    def add_broker(self, name: str) -> Broker:
        """A broker joins, with no connectors."""
        broker = Broker(name)
        self.brokers[name] = broker
        return broker

    def add_connector(self, connector: Connector) -> None:
        """Start a connector; it is filed under (declaring broker, target)."""
        connector.start()
        self.connectors[(connector.source.name, connector.target.name)] = connector

    def remove_connector(self, connector: Connector) -> None:
        """Stop a connector and forget it (its demand subscriptions go with its bridges)."""
        connector.stop()
        del self.connectors[(connector.source.name, connector.target.name)]

    def add_client(self, consumer: ClientSubscription) -> None:
        """A client consumer opens on its broker."""
        destination = self.brokers[consumer.broker].get_destination(consumer.destination_name)
        destination.add_subscription(consumer)
        self.clients[consumer.key] = consumer
        self.note_changes([destination])

    def remove_client(self, consumer: ClientSubscription) -> None:
        """A client consumer closes."""
        destination = self.brokers[consumer.broker].get_destination(consumer.destination_name)
        destination.remove_subscription(consumer)
        del self.clients[consumer.key]
        self.note_changes([destination])

    def note_changes(self, destinations: Iterable[Destination | None]) -> None:
        """Remember destinations whose round robin lists need refreshing."""
        for destination in destinations:
            if destination is not None:
                self.changed.add(destination)

    # -- settling ----------------------------------------------------------------------

    def settle(self) -> list[Event]:
        """Restart the bridges, refresh the round robin lists, dispatch waiting messages; the moves made."""
        self.restart_bridges()
        for destination in self.changed:
            if isinstance(destination, Queue):
                destination.refresh_consumer_list()
        self.changed.clear()
        events: list[Event] = []
        for name in sorted(self.holding):
            self.brokers[name].dispatch_waiting(events)
        self.note_waiting(events)
        self.holding = {name for name in self.holding if self.brokers[name].has_waiting_messages()}
        return events

    def restart_bridges(self) -> None:
        """Take all demand down and replay every client consumer's advisory, barring clashes until none is left."""
        barred_on: list[DemandForwardingBridge] = []
        while True:
            self.take_down_demand()
            clash = self.replay_advisories()
            if clash is None:
                break
            clash.subscription.bridge.bar(clash.subscription)
            barred_on.append(clash.subscription.bridge)
        for bridge in barred_on:
            bridge.barred.clear()

    def take_down_demand(self) -> None:
        """Remove every demand subscription the last replay made (a stopped bridge may have removed some)."""
        for subscription in self.demand:
            self.note_changes([subscription.bridge.local_broker.find_destination(subscription.destination_name)])
            if subscription.active:
                subscription.bridge.remove_demand_subscription(subscription)
        self.demand = []

    def replay_advisories(self) -> SubscriptionClash | None:
        """One replay: each client consumer in arrival order, its advisories generation by generation.

        A clash ends it early."""
        for arrival, client in enumerate(self.clients.values()):
            wire: AdvisoryWire[DemandForwardingBridge] = AdvisoryWire()
            self.brokers[client.broker].advisory_broker.fire_consumer_advisory(client.consumer_info(), wire)
            for generation in wire.generations():
                newcomers: dict[tuple[str, str, str], DemandSubscription] = {}
                for bridge, info in generation:
                    result = bridge.service_remote_consumer_advisory(info, arrival)
                    if isinstance(result, SubscriptionClash):
                        return result
                    if result is not None:
                        self.demand.append(result)
                        newcomers[(bridge.local_name, result.destination_name, result.key)] = result
                for subscription in newcomers.values():
                    if subscription.active:
                        self.start_subscription(subscription, wire)
        return None

    def start_subscription(self, subscription: DemandSubscription, wire: AdvisoryWire[DemandForwardingBridge]) -> None:
        """The subscription starts on its broker, and its advisory goes out."""
        subscription.started = True
        local = subscription.bridge.local_broker
        self.note_changes([local.find_destination(subscription.destination_name)])
        local.advisory_broker.fire_consumer_advisory(subscription.consumer_info(), wire)

    # -- messages ----------------------------------------------------------------------

    def send(self, broker: str, message: ActiveMQMessage) -> list[Event]:
        """A client sends ``message`` at ``broker``; where it (and its copies) ended."""
        events: list[Event] = []
        self.brokers[broker].receive(message, events)
        self.note_waiting(events)
        return events

    def note_waiting(self, events: list[Event]) -> None:
        """Remember the brokers that now keep a message."""
        self.holding.update(event.broker for event in events if isinstance(event, Waiting))
