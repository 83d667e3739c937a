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
* the transacted sessions by name (:mod:`.sessions`): producer sessions
  that a transacted send opened, and transacted consumers' own sessions,
  named like them (LB-TX-SEND);
* the two ID generators (messages, queues) and the logical clock
  (:mod:`.messages`);
* the :class:`~.messages.DeliveryLog` the outcome's events are read from.

:meth:`ReferenceBalancingBroker.execute` runs one command and returns the
outcome the spec's ``apply`` returns (without the rule ID). A refused
command changes nothing: every check comes before the first change; a
failed one (an acknowledgement of a message not held, a commit of a
rollback-only transaction) has changed what its events say. After every
command that was not refused each queue with an active redistributor
gets one delivery attempt, queues in creation order (RD-GROUPED; the spec's
``deliver``), which is Artemis's delivery loop offering the waiting
messages to the redistributor, one round per step.
:meth:`ReferenceBalancingBroker.snapshot` shows the cluster as a spec state
(:func:`~.render.render_state`), reading the objects without changing
anything.

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

from brokerspec.spec import Outcome, PrefixMatch, Profile
from brokerspec.spec.addressing.names import RoutingType, strip_prefix
from brokerspec.spec.balancing import (
    FIRST_NODE,
    Ack,
    AddNode,
    Attach,
    BalancingCommand,
    BalancingState,
    Close,
    Commit,
    Configure,
    CreateQueue,
    DeleteQueue,
    Done,
    Failed,
    LbType,
    Pause,
    QueryQueue,
    QueueQueried,
    Receive,
    Refusal,
    Refused,
    Resend,
    Resume,
    Rollback,
    Send,
    Sent,
    SetLink,
    SetPrefix,
    Tick,
    UpdateQueue,
)

from .cluster import ClusterConnection
from .consumers import ServerConsumer
from .messages import GROUP_ID, CoreMessage, DeliveryLog, IDGenerator, LogicalClock
from .post_office import AddressSettings
from .queue_bindings import RemoteQueueBinding
from .queues import QueueImpl
from .render import render_state
from .sessions import ServerSession, check_send_session, find_session


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
        self.sessions: dict[str, ServerSession] = {}
        """The transacted sessions by name (LB-TX-SEND)."""
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
        if isinstance(outcome, Failed):
            return Failed(outcome.reason, events)
        return Done(events)

    def perform(self, command: BalancingCommand) -> Sent | Done | Refused | Failed:
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
        if isinstance(command, Commit):
            return self.commit(command)
        if isinstance(command, Rollback):
            return self.rollback(command)
        if isinstance(command, Resend):
            return self.resend(command)
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
        for queue in sorted((q for q in self.get_queues() if q.redistributor is not None), key=lambda q: q.id):
            queue.deliver_to_redistributor(since)  # a queue without one has nothing to deliver to

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
        if command.consumer in self.sessions:
            return Refused(Refusal.SESSION_EXISTS)  # sessions and consumers share their names (LB-TX-SEND)
        session = None
        if command.transacted:  # its own session, there before the queue offers it anything (LB-TX-ACK)
            session = self.sessions[command.consumer] = ServerSession(command.consumer, command.node)
        consumer = node.create_consumer(command.consumer, queue, command.filter, command.fqqn_address,
                                        command.pull, command.manual_ack, session)
        if session is not None:
            session.consumer = consumer
        self.consumers[command.consumer] = consumer
        return Done()

    def close_consumer(self, command: Close) -> Done | Refused:
        """A consumer closes; what it held goes back to its queue (LB-CLOSE-RETURNS, RD-TRIGGER-CLOSE). A
        transacted consumer's session closes after it (``ClientSessionImpl.closeChildren``), rolling its
        transaction back (``ServerSessionImpl.doClose``; LB-TX-ROLLBACK)."""
        consumer = self.consumers.pop(command.consumer, None)
        if consumer is None:
            return Refused(Refusal.CONSUMER_NOT_FOUND)
        self.cluster.nodes[consumer.queue.node].close_consumer(consumer)
        if consumer.session is not None:
            del self.sessions[consumer.name]
            consumer.session.rollback()
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

    def acknowledge(self, command: Ack) -> Done | Refused | Failed:
        """``ClientMessage.acknowledge`` of a held message, cumulative as ``ServerConsumerImpl.acknowledge`` is, or
        of everything the consumer holds (LB-ACK).

        One of a message it does not hold fails (``ActiveMQIllegalStateException``) after giving back what it
        held, or marking its session's transaction rollback-only; only a consumer outside a transaction that
        holds nothing changes nothing, and is refused.
        """
        consumer = self.consumers.get(command.consumer)
        if consumer is None:
            return Refused(Refusal.CONSUMER_NOT_FOUND)
        changes = consumer.session is not None or bool(consumer.delivering_refs)
        if not consumer.acknowledge(command.message):
            return Failed(Refusal.NOT_DELIVERED) if changes else Refused(Refusal.NOT_DELIVERED)
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
        verdict = node.auto_create_verdict(address, routing_type)
        if verdict is False:
            return Refused(Refusal.ADDRESS_DOES_NOT_EXIST)
        if command.tx is not None:
            refusal = check_send_session(self.sessions, self.consumers, command.tx, command.node)
            if refusal is not None:
                return refusal
        if verdict is None:
            node.check_auto_create(address, routing_type, self.queue_ids)
        session = None
        if command.tx is not None:  # the first send naming a session opens it on its node (LB-TX-SEND)
            session = self.sessions.setdefault(command.tx, ServerSession(command.tx, command.node))
        message = CoreMessage(self.message_ids.generate_id(), address, routing_type, command.color,
                              GROUP_ID if command.grouped else None, fqqn_queue)
        status = node.post_office.route(message, None if session is None else session.tx)
        return Sent(message.message_id, status)

    def commit(self, command: Commit) -> Done | Refused | Failed:
        """``ServerSessionImpl.commit``: the session's sends reach their queues, its acknowledgements are final
        (LB-TX-COMMIT); a rollback-only transaction rolls back instead, and the commit fails (ROLLBACK_ONLY)."""
        session = find_session(self.sessions, self.consumers, command.session)
        if isinstance(session, Refused):
            return session
        if not session.commit():
            return Failed(Refusal.ROLLBACK_ONLY)
        return Done()

    def rollback(self, command: Rollback) -> Done | Refused:
        """``ServerSessionImpl.rollback``: the sends are gone, what its consumer acknowledged or holds goes back
        (LB-TX-ROLLBACK, LB-TX-MAX-DELIVERY)."""
        session = find_session(self.sessions, self.consumers, command.session)
        if isinstance(session, Refused):
            return session
        session.rollback()
        return Done()

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

    def resend(self, command: Resend) -> Done | Refused:
        """The bridge from a node to a peer reconnects and sends its last message again (LB-BRIDGE-DUP)."""
        if command.node not in self.cluster.nodes or command.peer not in self.cluster.nodes:
            return Refused(Refusal.UNKNOWN_NODE)
        if command.node == command.peer:
            return Refused(Refusal.BAD_VALUE)
        self.cluster.get_bridge(command.node, command.peer).resend()
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
                            self.queue_ids.next_id, self.prefixes, self.sessions)

    def snapshot_like(self, seen: BalancingState) -> BalancingState:
        """:meth:`snapshot` with ``seen``'s parts wherever they are equal (a lockstep check passes the spec's state
        it is about to compare with, and then finds the equal parts by identity); a subclass that overrides
        :meth:`snapshot` is shown its own way."""
        if type(self).snapshot is not ReferenceBalancingBroker.snapshot:
            return self.snapshot()
        return render_state(self.options, self.cluster, self.consumers, self.clock.now, self.message_ids.next_id,
                            self.queue_ids.next_id, self.prefixes, self.sessions, seen)
