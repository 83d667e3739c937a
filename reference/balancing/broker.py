"""The reference load-balancing broker: one entry point over a cluster of nodes.

Introduction
------------
:class:`ReferenceBalancingBroker` is a whole cluster built from the parts
the other modules describe: a :class:`~.cluster.ClusterConnection` with a
:class:`~.cluster.ClusterNode` per node (starting with ``n1``), each node
with its own :class:`~.post_office.PostOffice`, Bindings and queues. Beside
them it keeps what belongs to no one node:

* the consumers by name (a consumer name is unique in the cluster, rule
  LB-CONSUMERS), the way sessions know their consumers;
* the two ID generators (messages, queues) and the logical clock
  (:mod:`.messages`);
* the :class:`~.queues.DeliveryLog` the outcome's events are read from.

:meth:`ReferenceBalancingBroker.execute` runs one command and returns the
outcome the spec's ``apply`` returns (without the rule ID). A refused
command changes nothing: every check comes before the first change. After
every command that was not refused each queue with an active redistributor
gets one delivery attempt, queues in creation order (RD-GROUPED; the spec's
``deliver``), which is Artemis's delivery loop offering the waiting
messages to the redistributor, one round per step.
:meth:`ReferenceBalancingBroker.snapshot` shows the cluster as a spec state
(:func:`render_state`), reading the objects and writing the value field by
field without changing anything:

* ``nodes``: the cluster connection's members in joining order;
* ``queues``: every node's local queues, each with its ID as the creation
  serial, its consumers' names in attach order, its waiting messages and
  the tick its redistributor becomes active at (RD-DELAY);
* ``consumers``: by name, with node, queue, filter, whether the
  consumer's session is stopped (paused), whether it has window 0
  (``pull``) and acknowledges later (``manual_ack``), and the messages it
  holds unacknowledged (its delivering references, in delivery order);
* ``positions``: each node's Bindings' ``routing_name_positions``, keyed
  (node, address, routing name); a group never routed to has none;
* ``consumer_positions``: each queue's ``pos`` once used, keyed (node, queue);
* ``settings``: the explicitly configured addresses only;
* ``down_links``: the bridges that are down;
* the clock and the next message and queue numbers.

Two nodes, each with an anycast queue of ``a1`` and a consumer on it: the
sends from ``n1`` take turns between the local and the remote queue (LB-ROUND-ROBIN,
``OnewayTwoNodeClusterTest.testBasicRoundRobin``):

>>> from brokerspec.spec import get_profile
>>> from brokerspec.spec.addressing.names import RoutingType
>>> broker = ReferenceBalancingBroker(get_profile("artemis-latest"))
>>> for command in (AddNode("n2"), CreateQueue("n1", "a1", "a1", RoutingType.ANYCAST),
...                 CreateQueue("n2", "a1", "a1", RoutingType.ANYCAST), Attach("c1", "n1", "a1"),
...                 Attach("c2", "n2", "a1")):
...     _ = broker.execute(command)
>>> [event.node for _ in range(3) for event in broker.execute(Send("n1", "a1")).events]
['n1', 'n2', 'n1']
>>> broker.snapshot().positions
FrozenMap({('n1', 'a1', 'a1'): 1})
"""

from __future__ import annotations

from collections.abc import Mapping

from brokerspec.spec import BalancingOptions, FrozenMap, Outcome, PrefixMatch, Profile
from brokerspec.spec.addressing.names import RoutingType, strip_prefix
from brokerspec.spec.balancing import (
    FIRST_NODE,
    Ack,
    AddNode,
    AddressBalancing,
    Attach,
    BalancingCommand,
    BalancingState,
    Close,
    Configure,
    Consumer,
    CreateQueue,
    DeleteQueue,
    Done,
    LbType,
    Pause,
    QueryQueue,
    QueueQueried,
    QueueState,
    Receive,
    Refusal,
    Refused,
    Resume,
    Send,
    Sent,
    SetLink,
    SetPrefix,
    Tick,
    UpdateQueue,
)

from .cluster import ClusterConnection
from .consumers import ServerConsumer
from .messages import GROUP_ID, CoreMessage, IDGenerator, LogicalClock
from .post_office import AddressSettings
from .queue_bindings import RemoteQueueBinding
from .queues import DeliveryLog, QueueImpl


class ReferenceBalancingBroker:
    """A cluster's load balancing and redistribution, built the way Artemis builds it."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.options = profile.balancing
        self.clock = LogicalClock()
        self.log = DeliveryLog()
        self.message_ids = IDGenerator()
        self.queue_ids = IDGenerator()
        self.cluster = ClusterConnection(self.options, self.clock, self.log, self.message_ids)
        self.cluster.add_node(FIRST_NODE)
        self.consumers: dict[str, ServerConsumer] = {}
        self.prefixes: dict[str, RoutingType] = {}
        """Every node's acceptor prefixes (``AbstractProtocolManager.prefixes``): prefix -> routing type."""

    # -- the one entry point -----------------------------------------------------------

    def execute(self, command: BalancingCommand) -> Outcome:
        """Run one command, then the redistributors' delivery round; return the outcome."""
        self.log.drain()
        since = self.clock.now
        for queue in self.get_queues():
            queue.prompted = False
        if isinstance(command, QueryQueue):
            return self.queue_query(command)  # a query changes nothing: no delivery round follows it
        outcome = self.perform(command)
        if isinstance(outcome, Refused):
            return outcome
        self.deliver_to_redistributors(since)
        events = self.log.drain()
        if isinstance(outcome, Sent):
            return Sent(outcome.message, outcome.status, events)
        return Done(events)

    def perform(self, command: BalancingCommand) -> Sent | Done | Refused:
        """The command itself."""
        if isinstance(command, AddNode):
            return self.add_node(command)
        if isinstance(command, CreateQueue):
            return self.create_queue(command)
        if isinstance(command, DeleteQueue):
            return self.delete_queue(command)
        if isinstance(command, Attach):
            return self.attach_consumer(command)
        if isinstance(command, Close):
            return self.close_consumer(command)
        if isinstance(command, Pause):
            return self.pause_consumer(command)
        if isinstance(command, Resume):
            return self.resume_consumer(command)
        if isinstance(command, Receive):
            return self.receive(command)
        if isinstance(command, Ack):
            return self.acknowledge(command)
        if isinstance(command, Send):
            return self.send(command)
        if isinstance(command, Configure):
            return self.configure(command)
        if isinstance(command, SetLink):
            return self.set_link(command)
        if isinstance(command, Tick):
            return self.tick(command)
        if isinstance(command, UpdateQueue):
            return self.update_queue(command)
        if isinstance(command, SetPrefix):
            return self.set_prefix(command)
        raise TypeError(f"not a load-balancing command: {command!r}")  # pragma: no cover - the union is closed

    def deliver_to_redistributors(self, since: int) -> None:
        """One delivery attempt for every active, prompted redistributor, queues in creation order (RD-GROUPED)."""
        for queue in sorted(self.get_queues(), key=lambda q: q.id):
            queue.deliver_to_redistributor(since)

    def get_queues(self) -> list[QueueImpl]:
        """Every queue of the cluster."""
        return [queue for node in self.cluster.nodes.values() for queue in node.get_local_queues()]

    # -- the commands ------------------------------------------------------------------

    def add_node(self, command: AddNode) -> Done | Refused:
        """A node joins and learns the cluster's queues (LB-NODES)."""
        if command.node in self.cluster.nodes:
            return Refused(Refusal.NODE_EXISTS)
        self.cluster.add_node(command.node)
        return Done()

    def create_queue(self, command: CreateQueue) -> Done | Refused:
        """A queue on one node; queue names are unique per node only (LB-QUEUE-PER-NODE)."""
        node = self.cluster.nodes.get(command.node)
        if node is None:
            return Refused(Refusal.UNKNOWN_NODE)
        if node.post_office.get_local_queue(command.queue) is not None:
            return Refused(Refusal.QUEUE_EXISTS)
        if not command.enabled and not self.options.queue_enabled:
            return Refused(Refusal.NOT_SUPPORTED)
        node.create_queue(self.queue_ids.generate_id(), command.queue, command.address, command.routing_type,
                          command.filter, command.enabled, command.purge_on_no_consumers)
        return Done()

    def find_queue(self, node_name: str, name: str) -> QueueImpl | Refused | None:
        """Queue ``name`` of node ``node_name``; None when that node has none, a refusal when there is no such node."""
        node = self.cluster.nodes.get(node_name)
        if node is None:
            return Refused(Refusal.UNKNOWN_NODE)
        return node.post_office.get_local_queue(name)

    def update_queue(self, command: UpdateQueue) -> Done | Refused:
        """``ActiveMQServerImpl.updateQueue``: new attributes; the waiting messages stay (LB-QUEUE-ENABLED)."""
        queue = self.find_queue(command.node, command.queue)
        if queue is None:
            return Refused(Refusal.QUEUE_NOT_FOUND)
        if isinstance(queue, Refused):
            return queue
        if command.enabled is False and not self.options.queue_enabled:
            return Refused(Refusal.NOT_SUPPORTED)
        if command.enabled is not None:
            queue.enabled = command.enabled
        if command.purge_on_no_consumers is not None:
            queue.purge_on_no_consumers = command.purge_on_no_consumers
        if self.options.update_clears_filter and queue.filter is not None:
            # PostOfficeImpl.updateQueue: the configuration's filter (none) replaces the queue's, and the other
            # nodes hear of it (BINDING_UPDATED, ARTEMIS-4570) (LB-UPDATE-FILTER)
            queue.filter = None
            for node in self.cluster.nodes.values():
                binding = node.post_office.get_binding(queue.name + self.cluster.nodes[command.node].node_id)
                if isinstance(binding, RemoteQueueBinding):
                    binding.filter = None
        return Done()

    def delete_queue(self, command: DeleteQueue) -> Done | Refused:
        """Refused while the queue has consumers (AMQ229025); otherwise it goes with its messages."""
        node = self.cluster.nodes.get(command.node)
        queue = None if node is None else node.post_office.get_local_queue(command.queue)
        if node is None or queue is None:
            return Refused(Refusal.QUEUE_NOT_FOUND)
        if queue.get_consumer_count() > 0:
            return Refused(Refusal.QUEUE_IN_USE)
        node.destroy_queue(queue)
        return Done()

    def queue_query(self, command: QueryQueue) -> QueueQueried | Refused:
        """``ActiveMQServerImpl.queueQuery`` on one node: the queue's binding, filter and counts (LB-QUERY-QUEUE)."""
        queue = self.find_queue(command.node, command.queue)
        if queue is None:
            return QueueQueried(False)
        if isinstance(queue, Refused):
            return queue
        return QueueQueried(True, queue.address, queue.routing_type, queue.configured_filter,
                            queue.get_message_count(), queue.get_consumer_count(), queue.enabled,
                            queue.purge_on_no_consumers)

    def attach_consumer(self, command: Attach) -> Done | Refused:
        """A consumer attaches to a queue on its node (LB-CONSUMERS, RD-TRIGGER-REMOTE-CONSUMER)."""
        node = self.cluster.nodes.get(command.node)
        if node is None:
            return Refused(Refusal.UNKNOWN_NODE)
        queue = node.post_office.get_local_queue(command.queue)
        if queue is None:
            return Refused(Refusal.QUEUE_NOT_FOUND)
        if command.consumer in self.consumers:
            return Refused(Refusal.CONSUMER_EXISTS)
        self.consumers[command.consumer] = node.create_consumer(command.consumer, queue, command.filter,
                                                                command.fqqn_address, command.pull,
                                                                command.manual_ack)
        return Done()

    def close_consumer(self, command: Close) -> Done | Refused:
        """A consumer closes; what it held goes back to its queue (LB-CLOSE-RETURNS, RD-TRIGGER-CLOSE)."""
        consumer = self.consumers.pop(command.consumer, None)
        if consumer is None:
            return Refused(Refusal.CONSUMER_NOT_FOUND)
        self.cluster.nodes[consumer.queue.node].close_consumer(consumer)
        return Done()

    def pause_consumer(self, command: Pause) -> Done | Refused:
        """The consumer's session stops: it takes nothing, but stays attached and counted (LB-CONSUMERS)."""
        consumer = self.consumers.get(command.consumer)
        if consumer is None:
            return Refused(Refusal.CONSUMER_NOT_FOUND)
        consumer.set_started(False)
        return Done()

    def resume_consumer(self, command: Resume) -> Done | Refused:
        """The consumer's session starts again; its queue offers the waiting messages once more."""
        consumer = self.consumers.get(command.consumer)
        if consumer is None:
            return Refused(Refusal.CONSUMER_NOT_FOUND)
        consumer.set_started(True)
        consumer.queue.deliver_waiting()
        return Done()

    def receive(self, command: Receive) -> Done | Refused:
        """``ClientConsumerImpl.receiveImmediate`` on a consumer of window 0: one credit, a forced delivery, the
        credits reset (LB-PULL). A consumer to which messages are pushed has nothing to receive this way here."""
        consumer = self.consumers.get(command.consumer)
        if consumer is None:
            return Refused(Refusal.CONSUMER_NOT_FOUND)
        if not consumer.pull:
            return Refused(Refusal.NOT_PULLING)
        consumer.receive_credits(1)
        consumer.queue.force_delivery(consumer)
        consumer.receive_credits(0)
        return Done()

    def acknowledge(self, command: Ack) -> Done | Refused:
        """``ClientMessage.acknowledge`` of a held message, cumulative as ``ServerConsumerImpl.acknowledge`` is, or
        of everything the consumer holds (LB-ACK)."""
        consumer = self.consumers.get(command.consumer)
        if consumer is None:
            return Refused(Refusal.CONSUMER_NOT_FOUND)
        if not consumer.acknowledge(command.message):
            return Refused(Refusal.NOT_DELIVERED)
        return Done()

    def send(self, command: Send) -> Sent | Refused:
        """A producer on a node sends one message; it gets the next message ID (F)."""
        node = self.cluster.nodes.get(command.node)
        if node is None:
            return Refused(Refusal.UNKNOWN_NODE)
        address, routing_type, fqqn_queue = command.address, command.routing_type, command.fqqn_queue
        # ServerSessionImpl.doSend: the acceptor's prefix goes, its routing type comes; from 2.19.0 the message's own
        # address is rewritten from an AddressInfo that has dropped the FQQN's queue part (ARTEMIS-1612)
        address, prefix_type = strip_prefix(address, self.prefixes, PrefixMatch.HASH_MAP)
        if prefix_type is not None:
            routing_type = prefix_type
            if not self.options.prefix_keeps_fqqn:
                fqqn_queue = None
        if not node.check_auto_create(address, routing_type, self.queue_ids):
            return Refused(Refusal.ADDRESS_DOES_NOT_EXIST)
        message = CoreMessage(self.message_ids.generate_id(), address, routing_type, command.color,
                              GROUP_ID if command.grouped else None, fqqn_queue)
        status = node.post_office.route(message)
        return Sent(message.message_id, status)

    def configure(self, command: Configure) -> Done | Refused:
        """Set an address's type and delay on every node, or on one (LB-TYPES, RD-DELAY)."""
        if command.node is not None and command.node not in self.cluster.nodes:
            return Refused(Refusal.UNKNOWN_NODE)
        if command.lb_type is LbType.OFF_WITH_REDISTRIBUTION and not self.options.off_with_redistribution:
            return Refused(Refusal.NOT_SUPPORTED)
        settings = AddressSettings(command.redistribution_delay, command.lb_type, command.auto_create_queues)
        if command.node is not None:
            node = self.cluster.nodes[command.node]
            node.address_settings.add_match(command.address, settings)
            node.post_office.update_message_load_balancing_type(command.address)
            return Done()
        self.cluster.address_settings.add_match(command.address, settings)
        for node in self.cluster.nodes.values():
            node.address_settings.matches.pop(command.address, None)  # every node's broker.xml says it now
            node.post_office.update_message_load_balancing_type(command.address)
        return Done()

    def set_prefix(self, command: SetPrefix) -> Done:
        """Give every acceptor a routing-type prefix, or take it away (LB-PREFIX)."""
        if command.routing_type is None:
            self.prefixes.pop(command.prefix, None)
        else:
            self.prefixes[command.prefix] = command.routing_type
        return Done()

    def set_link(self, command: SetLink) -> Done | Refused:
        """Bring a bridge up or down (LB-DISCONNECTED)."""
        if command.node not in self.cluster.nodes or command.peer not in self.cluster.nodes:
            return Refused(Refusal.UNKNOWN_NODE)
        if command.node == command.peer:
            return Refused(Refusal.BAD_VALUE)
        self.cluster.set_link(command.node, command.peer, command.connected)
        return Done()

    def tick(self, command: Tick) -> Done | Refused:
        """Let time pass; delayed redistributors may become active (RD-DELAY)."""
        if command.ticks < 1:
            return Refused(Refusal.BAD_VALUE)
        self.clock.advance(command.ticks)
        return Done()

    # -- observation -------------------------------------------------------------------

    def snapshot(self) -> BalancingState:
        """The cluster rendered as a spec state."""
        return render_state(self.options, self.cluster, self.consumers, self.clock.now, self.message_ids.next_id,
                            self.queue_ids.next_id, self.prefixes)


# -- the cluster as a spec state --------------------------------------------------------


def render_queue(queue: QueueImpl) -> QueueState:
    """One queue as the spec writes it."""
    return QueueState(
        node=queue.node,
        name=queue.name,
        address=queue.address,
        routing_type=queue.routing_type,
        filter=None if queue.filter is None else queue.filter.filter_string,
        serial=queue.id,
        consumers=tuple(consumer.name for consumer in queue.consumers),
        pending=tuple(message.to_spec() for message in queue.messages),
        redistributor=None if queue.redistributor is None else queue.redistributor.active_at,
        unmatched=queue.unmatched,
        enabled=queue.enabled,
        purge_on_no_consumers=queue.purge_on_no_consumers,
        configured_filter=queue.configured_filter,
    )


def render_consumer(consumer: ServerConsumer) -> Consumer:
    """One consumer as the spec writes it."""
    return Consumer(consumer.name, consumer.queue.node, consumer.queue.name, consumer.get_filter_string(),
                    paused=not consumer.started, pull=consumer.pull, manual_ack=consumer.manual_ack,
                    held=tuple(message.to_spec() for message in consumer.delivering_refs))


def render_state(options: BalancingOptions, cluster: ClusterConnection, consumers: Mapping[str, ServerConsumer],
                 clock: int, next_message: int, next_serial: int,
                 prefixes: Mapping[str, RoutingType] | None = None) -> BalancingState:
    """The whole cluster as a spec state."""
    queues: dict[tuple[str, str], QueueState] = {}
    consumer_positions: dict[tuple[str, str], int] = {}
    positions: dict[tuple[str, str, str], int] = {}
    for name, node in cluster.nodes.items():
        for queue in node.get_local_queues():
            queues[(name, queue.name)] = render_queue(queue)
            if queue.pos is not None:
                consumer_positions[(name, queue.name)] = queue.pos
        for address, bindings in node.post_office.mappings.items():
            for routing_name, position in bindings.routing_name_positions.items():
                positions[(name, address, routing_name)] = position
    settings = {
        address: AddressBalancing(entry.load_balancing_type, entry.redistribution_delay, entry.auto_create_queues)
        for address, entry in cluster.address_settings.matches.items()
    }
    node_settings = {
        (name, address): AddressBalancing(entry.load_balancing_type, entry.redistribution_delay, entry.auto_create_queues)
        for name, node in cluster.nodes.items() for address, entry in node.address_settings.matches.items()
    }
    return BalancingState(
        nodes=tuple(cluster.nodes),
        options=options,
        queues=FrozenMap(queues),
        consumers=FrozenMap({name: render_consumer(c) for name, c in consumers.items()}),
        positions=FrozenMap(positions),
        consumer_positions=FrozenMap(consumer_positions),
        settings=FrozenMap(settings),
        node_settings=FrozenMap(node_settings),
        down_links=cluster.get_down_links(),
        prefixes=FrozenMap(prefixes or {}),
        typed=frozenset((name, address) for name, node in cluster.nodes.items() for address in node.post_office.typed),
        clock=clock,
        next_message=next_message,
        next_serial=next_serial,
    )
