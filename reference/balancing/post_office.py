"""The post office of one node: its address manager, routing, redistribution and notifications.

Introduction
------------
Every :class:`~.cluster.ClusterNode` has its own :class:`PostOffice`, as
every Artemis server has its own ``PostOfficeImpl``. It keeps:

* the address manager's maps (``SimpleAddressManager``, ``SimpleAddressManager.addBinding``): ``mappings``,
  address -> :class:`~.bindings.BindingsImpl`, and ``name_map``, unique
  name -> binding. Local queues are filed under their names, remote ones
  under their cluster names (LB-QUEUE-PER-NODE), so :meth:`PostOffice.get_binding` with a
  plain queue name finds a local queue;
* ``queue_infos``: per cluster name, the consumer count the notifications
  report (``QueueInfo``), which decides the close trigger below;
* the address settings (``redistribution-delay`` and, in this model, the
  load-balancing type), shared by all nodes like one ``broker.xml``.

Theory of operation:

1. :meth:`PostOffice.route` (``BindingsImpl.route``, LB-UNROUTED-STATUS): no Bindings for the address is
   NO_BINDINGS; otherwise the Bindings fill a routing context, and a
   context left empty gives the profile's status (ARTEMIS-4089,
   ARTEMIS-4911). :meth:`PostOffice.process_route` then hands the message
   to each destination in (node, queue) order: a local queue takes it at
   once, a remote one receives it over the bridge, straight away (the spec
   delivers at once, even over a bridge that is down).
2. :meth:`PostOffice.redistribute` (``PostOfficeImpl.redistribute``): the Bindings of the *message's*
   address (ARTEMIS-3223; before 2.19.0 its queue's), only when they ``allowRedistribute``.
3. :meth:`PostOffice.send_notification` is the management notification
   service: the node's own :meth:`PostOffice.on_notification` hears every
   notification, and the cluster connection carries those of distance 0
   (this node's queues and consumers) to the other nodes.
4. :meth:`PostOffice.on_notification` keeps the three triggers of ``PostOfficeImpl.onNotification``,
   each finding the local queue *by routing name* (``getBinding(routingName)``,
   as ``spec.balancing.operations`` does) and asking it to add a
   redistributor with its address's delay, unless that is -1:

   * ``BINDING_ADDED`` at distance 0 while a connected remote binding of
     the address has consumers (RD-TRIGGER-QUEUE-CREATED);
   * ``CONSUMER_CREATED`` at distance > 0 (RD-TRIGGER-REMOTE-CONSUMER);
   * ``CONSUMER_CLOSED`` at distance 0 once the binding's consumer count
     is down to 0 (RD-TRIGGER-CLOSE).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from brokerspec.spec import BalancingOptions
from brokerspec.spec.addressing.names import RoutingType
from brokerspec.spec.balancing import MAX_DELIVERY_ATTEMPTS, LbType, RoutingStatus
from brokerspec.spec.balancing.wildcards import address_matches, binds, is_wild

from .bindings import BindingsImpl
from .bridges import DuplicateIDCache
from .messages import CoreMessage, DeliveryLog, IDGenerator, LogicalClock
from .queue_bindings import Binding, LocalQueueBinding, RemoteQueueBinding, RoutingContext
from .queues import QueueImpl
from .sessions import AddOperation, ForwardedReference, QueueReference, TransactionImpl

if TYPE_CHECKING:
    from .cluster import ClusterConnection


class NotificationType(Enum):
    """The ``CoreNotificationType`` values the cluster connection and the post office listen to."""

    BINDING_ADDED = "BINDING_ADDED"
    BINDING_REMOVED = "BINDING_REMOVED"
    CONSUMER_CREATED = "CONSUMER_CREATED"
    CONSUMER_CLOSED = "CONSUMER_CLOSED"


@dataclass(frozen=True)
class Notification:
    """A management notification and the properties this domain reads from it.

    ``distance`` is 0 on the node the queue or consumer is on and grows by
    one per hop (``_AMQ_Distance``). ``filter_string`` is the queue's filter
    for binding notifications and the consumer's for consumer ones.
    """

    type: NotificationType
    address: str
    cluster_name: str
    routing_name: str
    source_node: str
    queue_name: str
    routing_type: RoutingType
    filter_string: str | None = None
    distance: int = 0
    binding_id: int = 0
    """The queue's ID in a binding notification (``_AMQ_Binding_ID``)."""

    def next_hop(self) -> Notification:
        """The notification as the next node receives it."""
        return dataclasses.replace(self, distance=self.distance + 1)


@dataclass(frozen=True)
class AddressSettings:
    """One address's settings: ``redistribution-delay`` in ticks (default -1, never;
    ``PostOfficeImpl.onNotification``), the load-balancing type (default ON_DEMAND,
    the cluster connection's default; LB-TYPES), ``auto-create-queues`` (off in
    this domain unless configured; LB-AUTO-CREATE) and ``max-delivery-attempts``
    (``AddressSettings.DEFAULT_MAX_DELIVERY_ATTEMPTS``, never configured here;
    LB-TX-MAX-DELIVERY)."""

    redistribution_delay: int = -1
    load_balancing_type: LbType = LbType.ON_DEMAND
    auto_create_queues: bool = False
    max_delivery_attempts: int = MAX_DELIVERY_ATTEMPTS


class AddressSettingsRepository:
    """``HierarchicalRepository<AddressSettings>`` without wildcards: explicit entries, else the defaults.

    A node's own repository has the cluster's as its ``parent``: what the node was configured with alone comes
    first, then what every node was (each Artemis node reads its own ``broker.xml``; LB-TYPES).
    """

    def __init__(self, parent: AddressSettingsRepository | None = None) -> None:
        self.matches: dict[str, AddressSettings] = {}
        self.parent = parent

    def add_match(self, address: str, settings: AddressSettings) -> None:
        self.matches[address] = settings

    def get_match(self, address: str) -> AddressSettings:
        found = self.matches.get(address)
        if found is not None:
            return found
        return self.parent.get_match(address) if self.parent is not None else AddressSettings()


class QueueInfo:
    """``QueueInfo``: what the notifications said about one binding, here its consumer count."""

    def __init__(self, distance: int) -> None:
        self.distance = distance
        self.consumer_count = 0


class PostOffice:
    """``PostOfficeImpl`` of node ``node``."""

    def __init__(self, node: str, node_id: str, options: BalancingOptions, settings: AddressSettingsRepository,
                 clock: LogicalClock, log: DeliveryLog, message_ids: IDGenerator,
                 cluster: ClusterConnection) -> None:
        self.node = node
        self.node_id = node_id
        self.options = options
        self.address_settings = settings
        self.clock = clock
        self.log = log
        self.message_ids = message_ids
        self.cluster = cluster
        self.mappings: dict[str, BindingsImpl] = {}
        self.name_map: dict[str, Binding] = {}
        self.typed: set[str] = set()
        """Addresses whose bindings on this node have taken the configured type from a remote binding; the others
        route under OFF (``BindingsImpl``, ARTEMIS-3009; LB-TYPE-ADOPTED)."""
        self.creation_order: dict[str, int] = {}
        self.next_order = 0
        """Unique name -> the place of its binding in the order this node learnt of them: creation order,
        since every node hears of a queue the moment it is made."""
        self.queue_infos: dict[str, QueueInfo] = {}
        self.duplicate_id_caches: dict[str, DuplicateIDCache] = {}
        """Address -> the cache ``BRIDGE.<address>`` of the bridge duplicate IDs taken in (LB-BRIDGE-DUP)."""

    # -- the address manager (``SimpleAddressManager.addBinding``, ``PostOfficeImpl.removeBinding``) ------------

    def get_binding(self, name: str) -> Binding | None:
        """``getBinding(name)``: the binding filed under that unique name."""
        return self.name_map.get(name)

    def get_local_queue(self, name: str) -> QueueImpl | None:
        """The local queue called ``name``, if there is one."""
        binding = self.name_map.get(name)
        return binding.queue if isinstance(binding, LocalQueueBinding) else None

    def get_bindings_for_routing_address(self, address: str) -> BindingsImpl | None:
        """The address's Bindings, or None when it has no bindings (``PostOfficeImpl.removeBinding``).

        A plain address without Bindings of its own gets them here when some wild address matching it has
        bindings: a copy of those, kept from then on (``WildcardAddressManager.getBindingsForRoutingAddress``,
        LB-WILDCARD-BINDINGS). A wild address has only its own (LB-WILDCARD-SEND).
        """
        bindings = self.mappings.get(address)
        if bindings is None and self.wildcards_route() and not is_wild(self.options, address):
            created = self.new_bindings(address)
            self.copy_wildcard_bindings(address, created)
            if not created.is_empty():
                bindings = self.mappings[address] = created
        return bindings

    def wildcards_route(self) -> bool:
        """Whether this post office is a ``WildcardAddressManager`` (``wildcard-addresses/routing-enabled``)."""
        return self.options.wildcard_routing

    def new_bindings(self, address: str) -> BindingsImpl:
        """An empty Bindings for ``address``, with its configured load-balancing type."""
        return BindingsImpl(address, self.options, self.address_settings.get_match(address).load_balancing_type)

    def copy_wildcard_bindings(self, address: str, bindings: BindingsImpl) -> None:
        """Add the bindings of every wild address matching the plain ``address`` to its ``bindings``."""
        for other, source in list(self.mappings.items()):
            if is_wild(self.options, other) and address_matches(self.options, other, address):
                for binding in list(source.bindings_name_map.values()):
                    bindings.add_binding(binding)
        bindings.sort_groups(self.creation_order)

    def add_binding(self, binding: Binding) -> None:
        """``PostOfficeImpl.addBinding``: file it, add it to its address's Bindings, announce it.

        See ``SimpleAddressManager.addBinding``, ``BindingsImpl.addBinding``. With wildcard routing a binding of
        a wild address also joins the Bindings of every plain address it matches, and a plain address's new
        Bindings take in the bindings of the wild addresses matching it (``WildcardAddressManager.addBinding``).
        """
        name = binding.get_unique_name()
        self.name_map[name] = binding
        self.creation_order[name] = self.next_order  # a name made again goes last, as its new queue does
        self.next_order += 1
        address = binding.get_address()
        bindings = self.mappings.get(address)
        created = bindings is None
        if bindings is None:
            bindings = self.mappings[address] = self.new_bindings(address)
        bindings.add_binding(binding)
        if self.wildcards_route():
            if is_wild(self.options, address):
                for other, target in self.mappings.items():
                    if not is_wild(self.options, other) and address_matches(self.options, address, other):
                        target.add_binding(binding)
            elif created:
                self.copy_wildcard_bindings(address, bindings)
        self.record_types(address)
        self.send_notification(self.binding_notification(NotificationType.BINDING_ADDED, binding))

    def binds(self, binding: Binding, address: str) -> bool:
        """Whether ``binding`` is one of ``address``'s bindings here (its own, or a matching wildcard's)."""
        return binds(self.options, binding.get_address(), address)

    def record_types(self, address: str) -> None:
        """A binding of ``address`` arrived: every address whose bindings it joins, its own and for a wild one
        each address of some queue it matches, takes the configured type if a remote binding is among them."""
        joined = {address}
        if self.wildcards_route() and is_wild(self.options, address):
            joined |= {b.get_address() for b in self.name_map.values() if binds(self.options, address, b.get_address())}
        for each in joined:
            if any(isinstance(b, RemoteQueueBinding) and self.binds(b, each) for b in self.name_map.values()):
                self.typed.add(each)

    def type_of(self, address: str) -> LbType:
        """The type this node routes ``address`` under: the configured one once its bindings took it, else OFF."""
        if address in self.typed or any(isinstance(b, RemoteQueueBinding) and self.binds(b, address)
                                        for b in self.name_map.values()):
            return self.address_settings.get_match(address).load_balancing_type
        return LbType.OFF

    def remove_binding(self, unique_name: str) -> None:
        """``PostOfficeImpl.removeBinding``: the reverse; an emptied Bindings goes.

        See ``PostOfficeImpl.removeBinding``; a wild address's binding leaves every plain address's Bindings
        too (``WildcardAddressManager.removeBinding``).
        """
        binding = self.name_map.pop(unique_name)
        address = binding.get_address()
        holders = [address]
        if self.wildcards_route() and is_wild(self.options, address):
            holders += [other for other, held in self.mappings.items()
                        if other != address and unique_name in held.bindings_name_map]
        for holder in holders:
            bindings = self.mappings[holder]
            bindings.remove_binding(binding)
            if bindings.is_empty():
                del self.mappings[holder]
        self.typed = {each for each in self.typed if any(self.binds(b, each) for b in self.name_map.values())}
        if not any(self.binds(b, address) for b in self.name_map.values()):
            # deleteDuplicateCache once getBindingsForRoutingAddress finds none: a wildcard binding keeps it
            self.duplicate_id_caches.pop(address, None)
        self.send_notification(self.binding_notification(NotificationType.BINDING_REMOVED, binding))

    def binding_notification(self, kind: NotificationType, binding: Binding) -> Notification:
        """The notification announcing ``binding``; a remote binding's is one hop old already."""
        if isinstance(binding, RemoteQueueBinding):
            return Notification(kind, binding.address, binding.cluster_name, binding.routing_name,
                                binding.remote_node, binding.queue_name, binding.routing_type,
                                binding.get_filter_string(), distance=1, binding_id=binding.remote_queue_id)
        filter = binding.get_filter()
        return Notification(kind, binding.get_address(), binding.get_cluster_name(), binding.get_routing_name(),
                            self.node, binding.get_unique_name(), binding.get_routing_type(),
                            None if filter is None else filter.filter_string,
                            binding_id=binding.queue.id if isinstance(binding, LocalQueueBinding) else 0)

    def update_message_load_balancing_type(self, address: str) -> None:
        """Push the address's configured type onto its Bindings, if it has any (ARTEMIS-1680)."""
        bindings = self.mappings.get(address)
        if bindings is not None:
            bindings.set_message_load_balancing_type(self.address_settings.get_match(address).load_balancing_type)

    # -- routing (F) -----------------------------------------------------------------

    def route(self, message: CoreMessage, tx: TransactionImpl | None = None) -> RoutingStatus:
        """``PostOfficeImpl.route``: find the destinations, then deliver, or in a transaction ``tx`` put the
        references in it for the commit (LB-TX-SEND).

        See ``BindingsImpl.route``, LB-UNROUTED-STATUS.
        """
        bindings = self.get_bindings_for_routing_address(message.address)
        if bindings is None:
            return RoutingStatus.NO_BINDINGS
        bindings.set_message_load_balancing_type(self.type_of(message.address))  # LB-TYPE-ADOPTED
        context = RoutingContext()
        bindings.route(message, context)
        taken = self.process_route(message, context) if tx is None else self.process_route_in(tx, message, context)
        if not taken:
            return RoutingStatus(self.options.unrouted_status.value)
        return RoutingStatus.OK

    def process_route_in(self, tx: TransactionImpl, message: CoreMessage, context: RoutingContext) -> bool:
        """``processRoute`` with a transaction: one reference per destination, in (node, queue) order, joins it
        in an ``AddOperation``, to reach its queue after the commit (:mod:`.sessions`, LB-TX-SEND).

        A local queue that would drop the message now (``QueueImpl.route``) gets no reference; a remote
        destination's goes to the bridge's store-and-forward queue, bound to the remote queue's ID.
        """
        refs: list[QueueReference | ForwardedReference] = []
        for node, queue_name, queue_id in context.get_destinations():
            if node != self.node:
                refs.append(ForwardedReference(self.cluster.get_bridge(self.node, node), queue_name, queue_id))
                continue
            queue = self.get_local_queue(queue_name)
            if queue is not None and queue.is_routable():
                refs.append(QueueReference(message, queue))
        if refs:
            tx.add_operation(AddOperation(message, refs))
        return bool(refs)

    def process_route(self, message: CoreMessage, context: RoutingContext) -> bool:
        """``processRoute``: each destination in (node, queue) order; remote ones over the bridge, which carries
        the message once for all of its peer's queues.

        Whether any took the message: a remote one always does (the store-and-forward queue takes it, whatever
        the remote queue then does); a local queue may drop it (``QueueImpl.route``).
        """
        taken = False
        destinations = context.get_destinations()
        for index, (node, queue_name, _) in enumerate(destinations):
            if node == self.node:
                taken = self.route_from_cluster(message, queue_name) or taken
                continue
            taken = True
            if index == 0 or destinations[index - 1][0] != node:  # one crossing per node (LB-BRIDGE-DUP)
                self.cluster.get_bridge(self.node, node).forward(
                    message, [(name, queue_id) for peer, name, queue_id in destinations if peer == node])
        return taken

    def route_from_cluster(self, message: CoreMessage, queue_name: str) -> bool:
        """A message for one of this node's queues, by name (``routeFromCluster``, ``BindingsImpl.route`` step 3);
        whether the queue took it."""
        queue = self.get_local_queue(queue_name)
        return queue is not None and queue.route(message)

    def route_from_bridge(self, message: CoreMessage, bridge_id: tuple[str, int],
                          destinations: tuple[tuple[str, int], ...]) -> None:
        """A message the cluster bridge brought: ``checkBridgeDuplicateID`` in the cache ``BRIDGE.<address>`` (one
        seen already is dropped without a word, LB-BRIDGE-DUP), then each queue whose ID it carries routes it
        (``_AMQ_ROUTE_TO``, ``BindingsImpl.routeFromCluster`` looks the bindings up by ID): a queue made again
        under the name since is another queue, and takes nothing."""
        cache = self.duplicate_id_caches.setdefault(message.address, DuplicateIDCache())
        if cache.contains(bridge_id):
            return
        cache.add_to_cache(bridge_id)
        for queue_name, queue_id in destinations:
            queue = self.get_local_queue(queue_name)
            if queue is not None and queue.id == queue_id:
                queue.route(message)

    def redistribute(self, message: CoreMessage, queue: QueueImpl) -> tuple[CoreMessage, RoutingContext] | None:
        """``PostOfficeImpl.redistribute``: the copy and where it goes, or None (the redistributor is BUSY)."""
        address = message.address if self.options.redistribute_by_message_address else queue.address
        bindings = self.get_bindings_for_routing_address(address)
        if bindings is None:
            return None
        # the Bindings route under OFF until a remote binding joined them (LB-TYPE-ADOPTED); a wildcard's remote
        # binding sits in several Bindings and is judged under the type of the one routing now
        bindings.set_message_load_balancing_type(self.type_of(address))
        if not bindings.allow_redistribute():
            return None
        context = RoutingContext()
        # Before 2.29.0 the copy, with its new ID, is made before a target is looked for (seed 003).
        early = message.copy(self.message_ids.generate_id()) if self.options.copy_before_target else None
        copy = bindings.redistribute(message, queue, context, self.message_ids, early)
        # the copy is addressed to the address searched: before ARTEMIS-3223 its queue's, maybe a wildcard
        return None if copy is None else (dataclasses.replace(copy, address=address), context)

    # -- notifications (``PostOfficeImpl.onNotification``) ----------------------------------------------------------

    def send_notification(self, notification: Notification) -> None:
        """The notification service: this post office hears it; the cluster carries this node's own ones."""
        self.on_notification(notification)
        if notification.distance == 0:
            self.cluster.propagate(self.node, notification)

    def on_notification(self, notification: Notification) -> None:
        """``PostOfficeImpl.onNotification``: keep the queue infos, fire the redistribution triggers."""
        kind = notification.type
        if kind is NotificationType.BINDING_ADDED:
            self.queue_infos[notification.cluster_name] = QueueInfo(notification.distance)
            if self.options.new_queue_redistributes and notification.distance < 1 \
                    and self.has_remote_demand(notification.address):  # from 2.20.0 (7d129b36e9)
                self.add_redistributor(notification.routing_name)
        elif kind is NotificationType.BINDING_REMOVED:
            self.queue_infos.pop(notification.cluster_name, None)
        elif kind is NotificationType.CONSUMER_CREATED:
            self.queue_infos[notification.cluster_name].consumer_count += 1
            if notification.distance > 0:  # getBinding(fqqn) finds the local queue by the FQQN's queue part
                fqqn = "::" in notification.address
                self.add_redistributor(notification.address.split("::", 1)[1] if fqqn else notification.routing_name)
        elif kind is NotificationType.CONSUMER_CLOSED:
            info = self.queue_infos[notification.cluster_name]
            info.consumer_count -= 1
            if notification.distance == 0 and info.consumer_count <= 0:
                self.add_redistributor(notification.routing_name)

    def has_remote_demand(self, address: str) -> bool:
        """Some connected remote binding of ``address`` has consumers.

        See ``PostOfficeImpl.onNotification``, the BINDING_ADDED trigger.
        """
        bindings = self.get_bindings_for_routing_address(address)
        return bindings is not None and any(
            isinstance(b, RemoteQueueBinding) and b.consumer_count > 0 and b.is_connected()
            for b in bindings.bindings_name_map.values()
        )

    def add_redistributor(self, routing_name: str) -> None:
        """Look the local queue up by routing name and give it a redistributor, unless the delay is -1.

        See ``PostOfficeImpl.onNotification``, RD-DELAY.

        Because the lookup uses the routing name, an ANYCAST queue named
        otherwise than its address is not found (read from
        ``PostOfficeImpl.onNotification``; no Artemis test covers it).
        """
        queue = self.get_local_queue(routing_name)
        if queue is None:
            return
        delay = self.address_settings.get_match(queue.address).redistribution_delay
        if delay != -1:
            queue.add_redistributor(delay)
