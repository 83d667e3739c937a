"""Reference load balancing and redistribution: an Artemis cluster in miniature, written to teach.

Introduction
------------
Each node of the cluster is built the way an Artemis server is: a post
office whose per-address Bindings hold local and remote queue bindings in
routing-name groups with round-robin positions, queues with consumers and
a redistributor, and a cluster connection that tells every node about the
others' queues and consumers. Sources are seed 003 (``BindingsImpl`` and
``PostOfficeImpl.redistribute`` in 2.11.0) and those Artemis classes with
``RemoteQueueBindingImpl`` and ``QueueImpl``, whose rules
``brokerspec.spec.balancing.rules`` cites one by one; the spec in
``brokerspec.spec.balancing`` is the semantics this reproduces.

Modules, in reading order: :mod:`.messages` (messages, filters, IDs, the
logical clock), :mod:`.consumers` (consumers: credits, what they hold until
acknowledged), :mod:`.queues` (queues and the redistributor),
:mod:`.queue_bindings` (local and remote bindings), :mod:`.bindings`
(``BindingsImpl``: ``getNextBinding``, ``matchBinding``, ``redistribute``),
:mod:`.post_office` (routing and the notification triggers),
:mod:`.bridges` (bridges and their duplicate IDs),
:mod:`.cluster` (nodes, the cluster connection), :mod:`.sessions`
(transacted sessions: their transaction, its sends and acknowledgements),
:mod:`.broker` (the one entry point) and :mod:`.render` (the cluster as a
spec state).
"""

from .bindings import BindingsImpl, choose_from_bits, find_next_binding
from .broker import ReferenceBalancingBroker
from .bridges import Bridge, DuplicateIDCache
from .cluster import ClusterConnection, ClusterNode
from .consumers import HandleStatus, ServerConsumer
from .messages import CoreMessage, DeliveryLog, Filter, IDGenerator, LogicalClock
from .post_office import AddressSettings, Notification, NotificationType, PostOffice
from .queue_bindings import LocalQueueBinding, RemoteQueueBinding, RoutingContext
from .queues import QueueImpl, Redistributor
from .render import render_state
from .sessions import AddOperation, RefsOperation, ServerSession, TransactionImpl

__all__ = [
    "AddressSettings", "BindingsImpl", "Bridge", "ClusterConnection", "ClusterNode", "CoreMessage", "DeliveryLog",
    "DuplicateIDCache", "Filter", "HandleStatus", "IDGenerator", "LocalQueueBinding", "LogicalClock", "Notification",
    "NotificationType", "PostOffice", "QueueImpl", "Redistributor", "ReferenceBalancingBroker",
    "RefsOperation", "RemoteQueueBinding", "RoutingContext", "ServerConsumer", "ServerSession", "TransactionImpl",
    "AddOperation", "choose_from_bits", "find_next_binding", "render_state",
]
