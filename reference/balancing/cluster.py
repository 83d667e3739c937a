"""The cluster: nodes, the bridges between them, and the cluster connection that keeps them informed.

Introduction
------------
A :class:`ClusterNode` is one server (``ActiveMQServerImpl`` with its
``PostOfficeImpl``): it creates and destroys its queues and its consumers'
attachments, and every such change becomes a notification of distance 0
(``SimpleAddressManager.addBinding``; ``ServerConsumerImpl`` announces consumers).

The :class:`ClusterConnection` joins every node to every other, as a
symmetric cluster with ``max-hops`` 1 does, and plays two parts:

* *notifications*: a distance-0 notification of one node reaches every
  other node at once (the spec's notifications are instantaneous, so each
  step ends in a settled cluster). The receiving node does what
  ``ClusterConnectionImpl.MessageFlowRecordImpl`` does:
  ``doBindingAdded`` makes a :class:`~.queue_bindings.RemoteQueueBinding`
  and adds it to its post office; ``doBindingRemoved`` removes it;
  ``doConsumerCreated`` / ``doConsumerClosed`` count the consumer on the
  remote binding (``RemoteQueueBindingImpl.addConsumer``) and pass the notification, one hop older, to the
  post office, where the triggers of ``PostOfficeImpl.onNotification`` look at it.
* *messages*: one :class:`~.bridges.Bridge` per ordered pair of nodes carries the
  messages a node's remote bindings route, each checked in the peer's
  bridge duplicate-ID cache (LB-BRIDGE-DUP, :mod:`.bridges`). Its ``connected`` flag is what a
  remote binding answers to ``isConnected()`` (LB-DISCONNECTED); ``set_link`` flips it.
  Notifications travel regardless of it, and so do messages: the spec
  lands a message routed to a disconnected binding at once, where Artemis
  would hold it in the store-and-forward queue until the bridge is back.

A node that joins learns every queue of the cluster, in creation order, and
every consumer on them, as the queue infos an Artemis node sends a new
member do.
"""

from __future__ import annotations

import dataclasses

from brokerspec.spec import BalancingOptions
from brokerspec.spec.profiles import ReturnOrder, SendAutoCreate
from brokerspec.spec.addressing.names import RoutingType

from .bridges import Bridge
from .consumers import ServerConsumer
from .messages import DeliveryLog, IDGenerator, LogicalClock, create_filter
from .post_office import AddressSettingsRepository, Notification, NotificationType, PostOffice
from .queue_bindings import LocalQueueBinding, RemoteQueueBinding, compute_node_id
from .queues import QueueImpl
from .sessions import ServerSession


class ClusterNode:
    """One server of the cluster, with its own post office."""

    def __init__(self, name: str, cluster: ClusterConnection) -> None:
        self.name = name
        self.node_id = compute_node_id(name)
        self.cluster = cluster
        self.address_settings = AddressSettingsRepository(parent=cluster.address_settings)
        """This node's own settings, before the cluster-wide ones (LB-TYPES)."""
        self.post_office = PostOffice(name, self.node_id, cluster.options, self.address_settings, cluster.clock,
                                      cluster.log, cluster.message_ids, cluster)

    def get_local_queues(self) -> list[QueueImpl]:
        """This node's queues."""
        return [b.queue for b in self.post_office.name_map.values() if isinstance(b, LocalQueueBinding)]

    # -- what the server does on a client's or an administrator's behalf -------------

    def create_queue(self, queue_id: int, name: str, address: str, routing_type: RoutingType,
                     filter_string: str | None, enabled: bool = True, purge_on_no_consumers: bool = False) -> QueueImpl:
        """``ActiveMQServerImpl.createQueue``: a queue and its local binding, announced by the post office."""
        queue = QueueImpl(queue_id, name, address, routing_type, create_filter(filter_string), self.name,
                          self.post_office, self.cluster.clock, self.cluster.log)
        queue.enabled, queue.purge_on_no_consumers = enabled, purge_on_no_consumers
        self.post_office.add_binding(LocalQueueBinding(queue, self.node_id))
        return queue

    def check_auto_create(self, address: str, routing_type: RoutingType | None, queue_ids: IDGenerator) -> bool:
        """``ServerSessionImpl.checkAutoCreate`` as ``PostOfficeImpl.simpleRoute`` runs it before routing a send;
        False where it answers NOT_FOUND, which refuses the send (AMQ229203; LB-AUTO-CREATE). The queue
        :meth:`auto_create_verdict` calls for is made here."""
        verdict = self.auto_create_verdict(address, routing_type)
        if verdict is None:
            self.create_queue(queue_ids.generate_id(), address, address, RoutingType.ANYCAST, None)
        return verdict is not False

    def auto_create_verdict(self, address: str, routing_type: RoutingType | None) -> bool | None:
        """What ``checkAutoCreate`` decides, before it changes anything: True the send passes, False it is
        refused, None a queue is to be made for it.

        A message without a routing type passes unchecked, and so does a
        MULTICAST one (the domain's addresses have both routing types).
        From 2.28.0 (ARTEMIS-4089) the check runs when the address has no
        Bindings, from 2.31.1 also when they hold no local queue
        (ARTEMIS-4450). A local queue named like the address passes if it
        is ANYCAST (ARTEMIS-4512); else a queue of that name is made where
        ``auto-create-queues`` allows it.
        """
        mode = self.cluster.options.send_auto_create
        if mode is SendAutoCreate.NEVER or routing_type is not RoutingType.ANYCAST:
            return True
        bindings = self.post_office.get_bindings_for_routing_address(address)
        if bindings is not None and (mode is SendAutoCreate.WITHOUT_BINDINGS or bindings.has_local_binding()):
            return True
        located = self.post_office.get_local_queue(address)
        if located is not None:
            return located.routing_type is RoutingType.ANYCAST
        if not self.address_settings.get_match(address).auto_create_queues:
            return False
        return None

    def destroy_queue(self, queue: QueueImpl) -> None:
        """``ActiveMQServerImpl.destroyQueue`` of a queue without consumers: its messages go with it, and so do
        the references open transactions hold for it (``queueDestroyed``; LB-TX-COMMIT)."""
        queue.delete_messages()
        queue.queue_destroyed = True
        self.post_office.remove_binding(queue.name)

    def create_consumer(self, name: str, queue: QueueImpl, filter_string: str | None,
                        fqqn_address: str | None = None, pull: bool = False,
                        manual_ack: bool = False, session: ServerSession | None = None) -> ServerConsumer:
        """``ServerSessionImpl.createConsumer``: attach, then announce ``CONSUMER_CREATED``; a consumer that came by
        the FQQN ``fqqn_address::queue`` puts the FQQN in the notification's address (ARTEMIS-3918, 2.25.0).

        A consumer of window 0 (``pull``) is announced like any other: the notification carries no credits, so
        it draws messages to its node and keeps its queue from redistributing (LB-PULL)."""
        consumer = ServerConsumer(name, queue, create_filter(filter_string), pull, manual_ack, session)
        queue.add_consumer(consumer)
        notification = self.consumer_notification(NotificationType.CONSUMER_CREATED, consumer)
        if fqqn_address is not None and self.cluster.options.fqqn_consumer_redistributes:
            notification = dataclasses.replace(notification, address=f"{fqqn_address}::{queue.name}")
        self.post_office.send_notification(notification)
        return consumer

    def close_consumer(self, consumer: ServerConsumer) -> None:
        """``ServerConsumerImpl.close``: the held messages go back to the queue, the consumer leaves it (the last
        consumer of a purge-on-no-consumers queue purges it, ``QueueManagerImpl.doIt``), then ``CONSUMER_CLOSED``
        is announced (LB-CLOSE-RETURNS, RD-TRIGGER-CLOSE).

        2.11 removes the consumer (``removeItself``) before it cancels what it held (``cancelRefs``), so a purge
        comes first and the messages come back after it, at the head of the queue (``QueueImpl.addHead``),
        through ``QueueImpl.postRollback``, which finds a purge-on-no-consumers queue without consumers and
        purges them too (``purgeAfterRollback``; found against Artemis 2.11.0). From 2.31.0 (ARTEMIS-4410) the
        messages are cancelled first, sorted in among the waiting ones (``addSorted``), and the purge that the
        removal sets off drops them with the rest. Either way they are offered only to the consumers that stay:
        the closing one is stopped and takes none of them back
        (``MessageRedistributionTest.testRedistributionWhenConsumerIsClosed``).
        """
        queue = consumer.queue
        refs = consumer.cancel_refs()
        queue.remove_consumer(consumer)
        at_head = self.cluster.options.close_return_order is ReturnOrder.HEAD
        if at_head:
            self.purge_if_unconsumed(queue)
        if refs and at_head:
            queue.post_rollback(refs)
        elif refs:
            queue.cancel(refs, at_head)
        if not at_head:
            self.purge_if_unconsumed(queue)
        self.post_office.send_notification(self.consumer_notification(NotificationType.CONSUMER_CLOSED, consumer))

    @staticmethod
    def purge_if_unconsumed(queue: QueueImpl) -> None:
        """A purge-on-no-consumers queue whose last consumer went drops what waits in it (``QueueManagerImpl.doIt``)."""
        if queue.purge_on_no_consumers and not queue.get_consumer_count():
            queue.purge()

    def consumer_notification(self, kind: NotificationType, consumer: ServerConsumer) -> Notification:
        """A consumer notification of distance 0, naming the consumer's binding and filter."""
        binding = self.post_office.name_map[consumer.queue.name]
        return Notification(kind, binding.get_address(), binding.get_cluster_name(), binding.get_routing_name(),
                            self.name, consumer.queue.name, consumer.queue.routing_type,
                            consumer.get_filter_string())

    # -- the receiving end of the cluster connection (MessageFlowRecordImpl) ---------

    def on_cluster_notification(self, notification: Notification, bridge: Bridge) -> None:
        """A notification from another node, arriving over ``bridge``'s cluster connection."""
        kind = notification.type
        if kind is NotificationType.BINDING_ADDED:
            self.do_binding_added(notification, bridge)
        elif kind is NotificationType.BINDING_REMOVED:
            self.post_office.remove_binding(notification.cluster_name)
        else:
            binding = self.post_office.get_binding(notification.cluster_name)
            if isinstance(binding, RemoteQueueBinding):
                if kind is NotificationType.CONSUMER_CREATED:
                    binding.add_consumer(notification.filter_string)
                else:
                    binding.remove_consumer(notification.filter_string)
            self.post_office.send_notification(notification.next_hop())

    def do_binding_added(self, notification: Notification, bridge: Bridge) -> None:
        """``doBindingAdded``: a remote binding for the announced queue, with its filter.

        See LB-QUEUE-PER-NODE, LB-ELIGIBLE.
        """
        binding = RemoteQueueBinding(notification.cluster_name, notification.address, notification.queue_name,
                                     notification.routing_name, notification.routing_type,
                                     notification.filter_string, notification.source_node, bridge,
                                     notification.binding_id)
        self.post_office.add_binding(binding)


class ClusterConnection:
    """``ClusterConnectionImpl`` for the whole cluster: the nodes, their bridges, their notifications."""

    def __init__(self, options: BalancingOptions, clock: LogicalClock, log: DeliveryLog,
                 message_ids: IDGenerator) -> None:
        self.options = options
        self.clock = clock
        self.log = log
        self.message_ids = message_ids
        self.address_settings = AddressSettingsRepository()
        self.nodes: dict[str, ClusterNode] = {}
        self.bridges: dict[tuple[str, str], Bridge] = {}

    def add_node(self, name: str) -> ClusterNode:
        """A node joins: bridges both ways to every member, then it learns every queue and consumer."""
        node = ClusterNode(name, self)
        for peer in self.nodes:
            self.bridges[(name, peer)] = Bridge(name, peer, self)
            self.bridges[(peer, name)] = Bridge(peer, name, self)
        existing = sorted((q for member in self.nodes.values() for q in member.get_local_queues()),
                          key=lambda q: q.id)
        self.nodes[name] = node
        for queue in existing:
            owner = self.nodes[queue.node]
            binding = owner.post_office.name_map[queue.name]
            bridge = self.bridges[(name, queue.node)]
            node.on_cluster_notification(owner.post_office.binding_notification(
                NotificationType.BINDING_ADDED, binding), bridge)
            for consumer in queue.consumers:
                node.on_cluster_notification(owner.consumer_notification(
                    NotificationType.CONSUMER_CREATED, consumer), bridge)
        return node

    def propagate(self, source: str, notification: Notification) -> None:
        """Carry ``source``'s notification to every other node."""
        for name, node in self.nodes.items():
            if name != source:
                node.on_cluster_notification(notification, self.bridges[(name, source)])

    def get_bridge(self, source: str, target: str) -> Bridge:
        """The bridge from ``source`` to ``target``, which carries what ``source`` routes to ``target``'s queues."""
        return self.bridges[(source, target)]

    def set_link(self, node: str, peer: str, connected: bool) -> None:
        """Bring the bridge from ``node`` to ``peer`` up or down (LB-DISCONNECTED)."""
        self.bridges[(node, peer)].connected = connected

    def get_down_links(self) -> frozenset[tuple[str, str]]:
        """The bridges that are down, as (node, peer)."""
        return frozenset(key for key, bridge in self.bridges.items() if not bridge.connected)
