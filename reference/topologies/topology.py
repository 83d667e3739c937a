"""The reference topology: one entry point over a network of brokers, and the network as a spec state.

Introduction
------------
:class:`ReferenceTopologyBroker` runs the commands of the topology domain
against a :class:`~.network.NetworkOfBrokers` built the way ActiveMQ
Classic builds one, and returns the outcome the spec's ``apply`` returns
(without the rule ID). Beside the network it keeps what belongs to the
clients: the producers (they only shape a metric) and the next message ID.

Every check comes before the first change, so a refused command changes
nothing; the refusals and their order follow the spec's operations. A
command that changes the topology, a replay policy or the consumers ends
with the network settling (:meth:`~.network.NetworkOfBrokers.settle`),
and its outcome lists the waiting messages that moved. Adding a broker or a
producer changes no demand and settles nothing.

:meth:`ReferenceTopologyBroker.snapshot` reads the objects and writes the
spec's :class:`~brokerspec.spec.topologies.TopologyState` field by field
without changing anything: every subscription of every destination as a
registration (a client consumer stands for itself, a demand subscription
shows its lead's path and priority and every client it stands for), each
queue's round robin list, and each broker's store.

A store's consumer two brokers from headquarters, with networkTTL 2: the
message from headquarters goes through the region.

>>> from brokerspec.spec.topologies import retail_commands, Subscribe, Send
>>> broker = ReferenceTopologyBroker()
>>> for command in retail_commands(2, 3, "network", 2):
...     _ = broker.execute(command)
>>> _ = broker.execute(Subscribe("c1", "r1-s1", "queue://ORDERS"))
>>> broker.execute(Send("hq", "queue://ORDERS")).events
(Delivered(message=1, consumer='c1', broker='r1-s1', path=('hq', 'r1')),)
>>> sorted({r.broker for r in broker.snapshot().demand})
['hq', 'r1', 'r1-s1', 'r1-s2', 'r1-s3']
"""

from __future__ import annotations

from brokerspec.spec import FrozenMap, Profile
from brokerspec.spec.topologies import (
    AddBroker,
    AddProducer,
    Applied,
    DemandQueried,
    Holding,
    Connect,
    Disconnect,
    Message,
    Move,
    Producer,
    Refusal,
    Refused,
    Registration,
    RemoveProducer,
    Role,
    Send,
    SetReplay,
    SetTtl,
    Sent,
    QueryDemand,
    Subscribe,
    TopologyCommand,
    TopologyOutcome,
    TopologyState,
    TreeConnect,
    Unsubscribe,
)
from brokerspec.spec.topologies import Consumer as ConsumerValue

from .bridges import DemandSubscription
from .broker import Broker
from .connectors import NETWORK_DESIGN, TREE_DESIGN, NetworkConnector, TreeConnector, is_clashing
from .destinations import ActiveMQMessage, ClientSubscription, Queue, Subscription
from .network import NetworkOfBrokers


class ReferenceTopologyBroker:
    """A network of ActiveMQ Classic brokers (or seed 002's tree), driven one command at a time."""

    def __init__(self, profile: Profile | None = None) -> None:
        self.profile = profile
        self.network = NetworkOfBrokers()
        self.producers: dict[str, Producer] = {}
        self.next_message = 1

    # -- the one entry point -----------------------------------------------------------

    def execute(self, command: TopologyCommand) -> TopologyOutcome:
        """Run one command; the outcome."""
        if isinstance(command, AddBroker):
            return self.add_broker(command)
        if isinstance(command, Connect):
            return self.connect(command)
        if isinstance(command, TreeConnect):
            return self.tree_connect(command)
        if isinstance(command, Disconnect):
            return self.disconnect(command)
        if isinstance(command, Move):
            return self.move(command)
        if isinstance(command, SetTtl):
            return self.set_ttl(command)
        if isinstance(command, SetReplay):
            return self.set_replay(command)
        if isinstance(command, Subscribe):
            return self.subscribe(command)
        if isinstance(command, Unsubscribe):
            return self.unsubscribe(command)
        if isinstance(command, AddProducer):
            return self.add_producer(command)
        if isinstance(command, RemoveProducer):
            return self.remove_producer(command)
        if isinstance(command, Send):
            return self.send(command)
        if isinstance(command, QueryDemand):
            return self.query_demand(command)
        raise TypeError(f"not a topology command: {command!r}")

    def query_demand(self, command: QueryDemand) -> DemandQueried:
        """Every broker whose destination has a subscription: a consumer or a demand subscription (TOPO-QUERY-DEMAND)."""
        holdings: list[Holding] = []
        for broker in self.network.brokers.values():
            found = broker.destinations.get(command.destination)
            for subscription in [] if found is None else found.subscriptions.values():
                info = subscription.consumer_info()  # what its consumer advisory carries
                holdings.append(Holding(info.broker, info.broker_path, info.priority))
        holdings.sort(key=lambda h: (h.broker, h.path, h.priority))
        return DemandQueried(command.destination, tuple(sorted({h.broker for h in holdings})), tuple(holdings))

    def settled(self) -> Applied:
        """The network comes back to rest; the waiting messages that moved."""
        return Applied(tuple(self.network.settle()))

    def find_brokers(self, *names: str) -> list[Broker] | None:
        """The named brokers, or None when one is unknown."""
        brokers = [self.network.brokers.get(name) for name in names]
        return None if any(b is None for b in brokers) else [b for b in brokers if b is not None]

    # -- topology ----------------------------------------------------------------------

    def add_broker(self, command: AddBroker) -> TopologyOutcome:
        """A broker starts with no connectors."""
        if command.broker in self.network.brokers:
            return Refused(Refusal.BROKER_EXISTS)
        self.network.add_broker(command.broker)
        return Applied()

    def connect(self, command: Connect) -> TopologyOutcome:
        """A network connector that makes no second bridge in either direction, between network brokers."""
        brokers = self.find_brokers(command.source, command.target)
        if brokers is None:
            return Refused(Refusal.UNKNOWN_BROKER)
        source, target = brokers
        if source is target:
            return Refused(Refusal.SELF_LINK)
        if is_clashing(source, target, command.duplex):
            return Refused(Refusal.ALREADY_CONNECTED)
        if TREE_DESIGN in (source.get_design(), target.get_design()):
            return Refused(Refusal.MIXED_DESIGNS)
        self.network.add_connector(NetworkConnector(source, target, command.duplex, command.config))
        return self.settled()

    def tree_connect(self, command: TreeConnect) -> TopologyOutcome:
        """A broker hangs itself under a parent as a leaf or a branch (seed 002 rules 1-2)."""
        brokers = self.find_brokers(command.source, command.target)
        if brokers is None:
            return Refused(Refusal.UNKNOWN_BROKER)
        source, target = brokers
        if source.tree_connector is not None:
            return Refused(Refusal.HAS_PARENT)
        if source is not target and source.is_linked_to(target.name):
            return Refused(Refusal.ALREADY_CONNECTED)
        refusal = self.get_tree_refusal(source, target, command.role)
        if refusal is not None:
            return Refused(refusal)
        self.network.add_connector(TreeConnector(source, target, command.role))
        return self.settled()

    def get_tree_refusal(self, broker: Broker, parent: Broker, role: Role) -> Refusal | None:
        """Why ``broker`` may not hang under ``parent`` as ``role`` (its own tree connector left aside), or None."""
        if broker is parent:
            return Refusal.SELF_LINK
        if NETWORK_DESIGN in (broker.get_design(), parent.get_design()):
            return Refusal.MIXED_DESIGNS
        if parent.get_role() is Role.LEAF or (role is Role.LEAF and broker.children):
            return Refusal.PARENT_IS_LEAF
        ancestor: str | None = parent.name
        while ancestor is not None:
            if ancestor == broker.name:
                return Refusal.CYCLE
            ancestor = self.network.brokers[ancestor].get_parent()
        return None

    def disconnect(self, command: Disconnect) -> TopologyOutcome:
        """The declaring broker drops its connector; the demand over it goes."""
        brokers = self.find_brokers(command.source, command.target)
        if brokers is None:
            return Refused(Refusal.UNKNOWN_BROKER)
        connector = brokers[0].get_declared_connector(command.target)
        if connector is None:
            return Refused(Refusal.NOT_CONNECTED)
        self.network.remove_connector(connector)
        return self.settled()

    def move(self, command: Move) -> TopologyOutcome:
        """A tree broker re-points its tree connector, keeping its role."""
        brokers = self.find_brokers(command.broker, command.parent)
        if brokers is None:
            return Refused(Refusal.UNKNOWN_BROKER)
        broker, parent = brokers
        old = broker.tree_connector
        if old is None:
            return Refused(Refusal.NOT_IN_TREE)
        if parent is not old.target and broker.is_linked_to(parent.name):
            return Refused(Refusal.ALREADY_CONNECTED)
        refusal = self.get_tree_refusal(broker, parent, old.role)
        if refusal is not None:
            return Refused(refusal)
        self.network.remove_connector(old)
        self.network.add_connector(TreeConnector(broker, parent, old.role))
        return self.settled()

    def set_ttl(self, command: SetTtl) -> TopologyOutcome:
        """New TTLs on a network connector; its bridges restart."""
        brokers = self.find_brokers(command.source, command.target)
        if brokers is None:
            return Refused(Refusal.UNKNOWN_BROKER)
        connector = brokers[0].get_declared_connector(command.target)
        if not isinstance(connector, NetworkConnector):
            return Refused(Refusal.NOT_CONNECTED)
        connector.set_ttl(command.consumer_ttl, command.message_ttl)
        return self.settled()

    def set_replay(self, command: SetReplay) -> TopologyOutcome:
        """The broker's queue policy turns ``replayWhenNoConsumers`` on or off."""
        brokers = self.find_brokers(command.broker)
        if brokers is None:
            return Refused(Refusal.UNKNOWN_BROKER)
        brokers[0].replay_when_no_consumers = command.enabled
        return self.settled()

    # -- clients -----------------------------------------------------------------------

    def subscribe(self, command: Subscribe) -> TopologyOutcome:
        """A client consumer opens; its advisory spreads when the network settles."""
        if self.find_brokers(command.broker) is None:
            return Refused(Refusal.UNKNOWN_BROKER)
        if command.consumer in self.network.clients:
            return Refused(Refusal.CONSUMER_EXISTS)
        self.network.add_client(ClientSubscription(command.consumer, command.broker, command.destination,
                                                   command.priority))
        return self.settled()

    def unsubscribe(self, command: Unsubscribe) -> TopologyOutcome:
        """A client consumer closes."""
        consumer = self.network.clients.get(command.consumer)
        if consumer is None:
            return Refused(Refusal.CONSUMER_NOT_FOUND)
        self.network.remove_client(consumer)
        return self.settled()

    def add_producer(self, command: AddProducer) -> TopologyOutcome:
        """A producer opens (no demand changes)."""
        if self.find_brokers(command.broker) is None:
            return Refused(Refusal.UNKNOWN_BROKER)
        if command.producer in self.producers:
            return Refused(Refusal.PRODUCER_EXISTS)
        self.producers[command.producer] = Producer(command.producer, command.broker, command.destination)
        return Applied()

    def remove_producer(self, command: RemoveProducer) -> TopologyOutcome:
        """A producer closes."""
        if self.producers.pop(command.producer, None) is None:
            return Refused(Refusal.PRODUCER_NOT_FOUND)
        return Applied()

    def send(self, command: Send) -> TopologyOutcome:
        """One message from a client at ``broker``, with the next message ID."""
        if self.find_brokers(command.broker) is None:
            return Refused(Refusal.UNKNOWN_BROKER)
        message = ActiveMQMessage(self.next_message, command.destination)
        self.next_message += 1
        return Sent(message.message_id, tuple(self.network.send(command.broker, message)))

    # -- observation -------------------------------------------------------------------

    def snapshot(self) -> TopologyState:
        """The network as a spec state."""
        network = self.network
        demand: list[Registration] = []
        dispatch: dict[tuple[str, str], tuple[str, ...]] = {}
        waiting: dict[str, tuple[Message, ...]] = {}
        for broker in network.brokers.values():
            for destination in broker.destinations.values():
                demand.extend(render_registration(sub) for sub in destination.subscriptions.values())
                if isinstance(destination, Queue) and destination.subscriptions:
                    dispatch[(broker.name, destination.name)] = tuple(destination.consumers)
            if broker.has_waiting_messages():
                waiting[broker.name] = tuple(m.to_spec() for _, m in broker.message_store.get_messages())
        demand.sort(key=lambda r: (r.broker, r.destination, r.key))
        return TopologyState(
            brokers=tuple(network.brokers),
            connectors=FrozenMap({key: c.to_spec() for key, c in network.connectors.items()}),
            replay=frozenset(name for name, b in network.brokers.items() if b.replay_when_no_consumers),
            consumers=FrozenMap({cid: ConsumerValue(c.key, c.broker, c.destination_name, c.priority)
                                 for cid, c in network.clients.items()}),
            producers=FrozenMap(self.producers),
            demand=tuple(demand),
            dispatch=FrozenMap(dispatch),
            waiting=FrozenMap(waiting),
            next_message=self.next_message,
        )


def render_registration(subscription: Subscription) -> Registration:
    """One subscription as the spec writes a registration."""
    info = subscription.consumer_info()
    conduit = isinstance(subscription, DemandSubscription) and subscription.conduit
    return Registration(info.broker, info.destination, info.consumer_id, subscription.via, info.broker_path,
                        info.network_consumer_ids, info.priority, info.network_subscription, conduit)
