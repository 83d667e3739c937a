"""Local and remote queue bindings: the members of a node's bindings of an address.

Introduction
------------
A node's post office knows every queue of an address in the cluster, each
through a *binding* (LB-QUEUE-PER-NODE):

* a :class:`LocalQueueBinding` for a queue on the node itself;
* a :class:`RemoteQueueBinding` for a queue on another node, made by the
  cluster connection when the queue's ``BINDING_ADDED`` notification
  arrives (``ClusterConnectionImpl.doBindingAdded``). It carries what the
  notification told it: the remote queue's name, routing name, routing type
  and filter (LB-ELIGIBLE), and then counts the remote queue's consumers and records
  their filters as ``CONSUMER_CREATED`` / ``CONSUMER_CLOSED`` arrive (``RemoteQueueBindingImpl.addConsumer``).

Names (LB-QUEUE-PER-NODE). A local binding's *unique name* is the queue name and its
*cluster name* is the queue name followed by the node ID. A remote binding
is known by that cluster name, which is why a queue name may repeat on
other nodes. Node IDs are UUIDs, so ``strip_trailing_uuid`` gives back the
queue name (``UUID.stripTrailingUUID``, used by the FQQN check of LB-ELIGIBLE since
2.43.0). The *routing name* is the address for an ANYCAST queue and the
queue's name for a MULTICAST one (LB-GROUPS, ARTEMIS-780).

What ``getNextBinding`` asks of a member (LB-ROUND-ROBIN, LB-PREFERRED, LB-DISCONNECTED) is the
:class:`Candidate` protocol: is it connected, does it have *high accept
priority* for the message, is it local (Java's ``instanceof
LocalQueueBinding``). A local binding has high priority when a consumer's
filter matches (``QueueImpl.hasMatchingConsumer``); a remote one when it
has consumers, the type is not OFF, and no consumer filter is recorded or
one matches (``RemoteQueueBindingImpl.isHighAcceptPriority``; ARTEMIS-2473:
a consumer without a filter records nothing).

``route`` only names the destination in the :class:`RoutingContext`; the
post office delivers afterwards (``processRoute``). A remote binding names
the remote node, queue and queue ID, where Artemis writes the remote queue's ID into
the message's route-to header and hands it to the bridge's
store-and-forward queue (``RemoteQueueBindingImpl.route``).
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Protocol

from brokerspec.spec.addressing.names import RoutingType
from brokerspec.spec.balancing import LbType

from .messages import CoreMessage, Filter, create_filter

if TYPE_CHECKING:
    from .bridges import Bridge
    from .queues import QueueImpl

NODE_ID_NAMESPACE = uuid.UUID("6f0c1d3e-2a4b-4c5d-8e9f-a0b1c2d3e4f5")
UUID_LENGTH = 36

Destination = tuple[str, str, int]
"""(node, queue name, queue ID): where a routed message is to land; the ID tells a queue made again under the
name from the one routing chose (a transacted send lands only at the commit, :mod:`.sessions`)."""


def compute_node_id(node: str) -> str:
    """The node's ID: a UUID (36 characters), fixed by the node's name so runs repeat."""
    return str(uuid.uuid5(NODE_ID_NAMESPACE, node))


def strip_trailing_uuid(name: str) -> str:
    """``UUID.stripTrailingUUID``: drop a trailing 36-character UUID, if there is one."""
    if len(name) >= UUID_LENGTH:
        try:
            uuid.UUID(name[-UUID_LENGTH:])
        except ValueError:
            return name
        return name[:-UUID_LENGTH]
    return name


def compute_routing_name(address: str, queue_name: str, routing_type: RoutingType) -> str:
    """``LocalQueueBinding.getRoutingName``: the address when ANYCAST, the queue name when MULTICAST (LB-GROUPS)."""
    return address if routing_type is RoutingType.ANYCAST else queue_name


class RoutingContext:
    """``RoutingContextImpl``: the destinations a routing pass chose, delivered afterwards."""

    def __init__(self) -> None:
        self.destinations: list[Destination] = []

    def add_destination(self, node: str, queue_name: str, queue_id: int) -> None:
        """Remember one destination."""
        self.destinations.append((node, queue_name, queue_id))

    def get_destinations(self) -> list[Destination]:
        """The destinations by (node, queue): the order the spec lists first-routing landings in."""
        return sorted(self.destinations)


class Candidate(Protocol):
    """What the round robin of ``getNextBinding`` asks of a group member.

    See LB-ROUND-ROBIN, LB-PREFERRED, LB-DISCONNECTED.
    """

    def is_connected(self) -> bool: ...

    def is_high_accept_priority(self, message: CoreMessage) -> bool: ...

    def is_local(self) -> bool: ...


class Binding(Candidate, Protocol):
    """``Binding``: a member of an address's bindings."""

    def get_unique_name(self) -> str: ...

    def get_cluster_name(self) -> str: ...

    def get_address(self) -> str: ...

    def get_routing_name(self) -> str: ...

    def get_routing_type(self) -> RoutingType: ...

    def get_filter(self) -> Filter | None: ...

    def get_bindable(self) -> object: ...

    def route(self, message: CoreMessage, context: RoutingContext) -> None: ...


class LocalQueueBinding:
    """``LocalQueueBinding``: a queue on this node, as its post office binds it."""

    def __init__(self, queue: QueueImpl, node_id: str) -> None:
        self.queue = queue
        self.cluster_name = queue.name + node_id

    def get_unique_name(self) -> str:
        return self.queue.name

    def get_cluster_name(self) -> str:
        return self.cluster_name

    def get_address(self) -> str:
        return self.queue.address

    def get_routing_name(self) -> str:
        return compute_routing_name(self.queue.address, self.queue.name, self.queue.routing_type)

    def get_routing_type(self) -> RoutingType:
        return self.queue.routing_type

    def get_filter(self) -> Filter | None:
        return self.queue.filter

    def get_bindable(self) -> object:
        return self.queue

    def is_local(self) -> bool:
        return True

    def is_connected(self) -> bool:
        """A local binding is always connected (LB-DISCONNECTED)."""
        return True

    def is_high_accept_priority(self, message: CoreMessage) -> bool:
        """LB-PREFERRED: some consumer of the queue has a filter that matches."""
        return self.queue.has_matching_consumer(message)

    def route(self, message: CoreMessage, context: RoutingContext) -> None:
        context.add_destination(self.queue.node, self.queue.name, self.queue.id)


class RemoteQueueBinding:
    """``RemoteQueueBindingImpl``: a queue on another node, with its consumers counted.

    See ``RemoteQueueBindingImpl.addConsumer``.
    """

    def __init__(self, cluster_name: str, address: str, queue_name: str, routing_name: str,
                 routing_type: RoutingType, filter_string: str | None, remote_node: str, bridge: Bridge,
                 remote_queue_id: int) -> None:
        self.cluster_name = cluster_name
        self.address = address
        self.queue_name = queue_name
        self.routing_name = routing_name
        self.routing_type = routing_type
        self.filter = create_filter(filter_string)
        self.remote_node = remote_node
        self.bridge = bridge
        self.remote_queue_id = remote_queue_id
        """``remoteQueueID``: the remote queue's ID, from the notification's ``_AMQ_Binding_ID``."""
        self.consumer_count = 0
        self.filter_counts: dict[str, int] = {}
        self.filters: dict[str, Filter] = {}
        self.message_load_balancing_type = LbType.OFF

    def get_unique_name(self) -> str:
        return self.cluster_name

    def get_cluster_name(self) -> str:
        return self.cluster_name

    def get_address(self) -> str:
        return self.address

    def get_routing_name(self) -> str:
        return self.routing_name

    def get_routing_type(self) -> RoutingType:
        return self.routing_type

    def get_filter(self) -> Filter | None:
        return self.filter

    def get_filter_string(self) -> str | None:
        """The remote queue's filter as the notification carried it."""
        return None if self.filter is None else self.filter.filter_string

    def get_bindable(self) -> object:
        """The bridge's store-and-forward queue stands behind a remote binding; the bridge plays it here."""
        return self.bridge

    def is_local(self) -> bool:
        return False

    def is_connected(self) -> bool:
        """Whether the bridge to the remote node is up (LB-DISCONNECTED)."""
        return self.bridge.connected

    def add_consumer(self, filter_string: str | None) -> None:
        """A consumer appeared on the remote queue: count it, and record its filter if it has one.

        See ``RemoteQueueBindingImpl.addConsumer``.
        """
        self.consumer_count += 1
        if filter_string is not None:
            self.filter_counts[filter_string] = self.filter_counts.get(filter_string, 0) + 1
            self.filters[filter_string] = Filter(filter_string)

    def remove_consumer(self, filter_string: str | None) -> None:
        """A consumer left; the count never goes below 0 (ARTEMIS-4527)."""
        self.consumer_count = max(0, self.consumer_count - 1)
        if filter_string is not None and filter_string in self.filter_counts:
            self.filter_counts[filter_string] -= 1
            if self.filter_counts[filter_string] == 0:
                del self.filter_counts[filter_string]
                del self.filters[filter_string]

    def is_high_accept_priority(self, message: CoreMessage) -> bool:
        """LB-PREFERRED: consumers, a type other than OFF, and no recorded filter or one that matches."""
        if self.consumer_count <= 0 or self.message_load_balancing_type is LbType.OFF:
            return False
        if not self.filters:
            return True
        return any(f.match(message) for f in self.filters.values())

    def route(self, message: CoreMessage, context: RoutingContext) -> None:
        context.add_destination(self.remote_node, self.queue_name, self.remote_queue_id)
