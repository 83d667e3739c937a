"""The reference cluster as a spec state: reading the objects, writing the value field by field.

Introduction
------------
:func:`render_state` is what :meth:`.broker.ReferenceBalancingBroker.snapshot`
returns. It changes nothing; it reads:

* ``nodes``: the cluster connection's members in joining order;
* ``queues``: every node's local queues, each with its ID as the creation
  serial, its consumers' names in attach order, its waiting messages and
  the tick its redistributor becomes active at (RD-DELAY);
* ``consumers``: by name, with node, queue, filter, whether the
  consumer's session is stopped (paused), whether it has window 0
  (``pull``) and acknowledges later (``manual_ack``), the messages it
  holds unacknowledged (its delivering references, in delivery order),
  whether its session is transacted and what that session's transaction
  holds acknowledged (LB-TX-ACK);
* ``positions``: each node's Bindings' ``routing_name_positions``, keyed
  (node, address, routing name); a group never routed to has none;
* ``consumer_positions``: each queue's ``pos`` once used, keyed (node, queue);
* ``settings``: the explicitly configured addresses only;
* ``down_links``: the bridges that are down;
* ``sessions``: the transacted sessions by name, each with its node and the
  sends its transaction holds (:mod:`.sessions`);
* ``bridge_ids``: each node's bridge duplicate-ID caches, by address;
  ``forwarded``: what each bridge forwarded last (:mod:`.bridges`);
* the clock and the next message and queue numbers.

A message's ``deliveries`` is its reference's delivery count, less the
delivery under way for one a consumer holds or its transaction acknowledged
(:meth:`.messages.CoreMessage.to_spec`).

Given ``seen`` (``snapshot_like``: the spec's state a lockstep check is about to
compare with), each value equal to ``seen``'s value in the same place is that
value, not a new one (:class:`~brokerspec.spec.frozen.Maker`): the result is
equal to the one rendered without it, and a state that agrees is compared by
identity. Reading it, ``QUEUE.like(seen, ...)`` is ``QueueState(...)``.
"""

from __future__ import annotations

from collections.abc import Mapping

from brokerspec.spec import BalancingOptions
from brokerspec.spec.addressing.names import RoutingType
from brokerspec.spec.balancing import AddressBalancing, BalancingState, Consumer, Message, QueueState
from brokerspec.spec.frozen import Maker, each_like, map_like

from .cluster import ClusterConnection
from .consumers import ServerConsumer
from .messages import CoreMessage
from .queues import QueueImpl
from .sessions import ServerSession


STATE = Maker(BalancingState)
QUEUE = Maker(QueueState)
CONSUMER = Maker(Consumer)
"""The spec's values from every field in field order (:class:`~brokerspec.spec.frozen.Maker`): a lockstep check
renders the cluster after every step, and hands in the spec's state it will compare with as ``seen``, whose
equal parts are used as they are."""


_NOTHING_SEEN = BalancingState(nodes=(), options=BalancingOptions())
"""What a snapshot without ``seen`` pairs its parts with: empty maps, so every value is built."""


def render_messages(messages: list[CoreMessage], seen: tuple[Message, ...], in_flight: bool = False
                    ) -> tuple[Message, ...]:
    """Messages as the spec writes them, ``seen`` itself when they equal it one by one."""
    return each_like(seen, messages, lambda old, message: message.to_spec(in_flight, old))


def render_queue(queue: QueueImpl, seen: QueueState | None = None) -> QueueState:
    """One queue as the spec writes it."""
    return QUEUE.like(
        seen,
        queue.node,
        queue.name,
        queue.address,
        queue.routing_type,
        None if queue.filter is None else queue.filter.filter_string,
        queue.id,  # serial
        tuple([consumer.name for consumer in queue.consumers]) if queue.consumers else (),
        render_messages(queue.messages, seen.pending if seen is not None else ()),  # pending
        None if queue.redistributor is None else queue.redistributor.active_at,
        queue.unmatched,
        queue.enabled,
        queue.purge_on_no_consumers,
        queue.configured_filter,
    )


def render_consumer(consumer: ServerConsumer, seen: Consumer | None = None) -> Consumer:
    """One consumer as the spec writes it; what it holds and what its transaction holds acknowledged are in
    flight (their delivery counts include the delivery under way)."""
    return CONSUMER.like(
        seen,
        consumer.name,
        consumer.queue.node,
        consumer.queue.name,
        consumer.get_filter_string(),
        not consumer.started,  # paused
        consumer.pull,
        consumer.manual_ack,
        render_messages(consumer.delivering_refs, seen.held if seen is not None else (), in_flight=True),
        consumer.session is not None,  # transacted
        render_messages(consumer.get_acked(), seen.acked if seen is not None else (), in_flight=True),
    )


def render_state(options: BalancingOptions, cluster: ClusterConnection, consumers: Mapping[str, ServerConsumer],
                 clock: int, next_message: int, next_serial: int,
                 prefixes: Mapping[str, RoutingType] | None = None,
                 sessions: Mapping[str, ServerSession] | None = None,
                 seen: BalancingState | None = None) -> BalancingState:
    """The whole cluster as a spec state (``seen``'s parts where they are equal)."""
    was = seen if seen is not None else _NOTHING_SEEN
    queues: dict[tuple[str, str], QueueState] = {}
    consumer_positions: dict[tuple[str, str], int] = {}
    positions: dict[tuple[str, str, str], int] = {}
    node_settings: dict[tuple[str, str], AddressBalancing] = {}
    bridge_ids: dict[tuple[str, str], tuple[tuple[str, int], ...]] = {}
    typed: set[tuple[str, str]] = set()
    for name, node in cluster.nodes.items():
        for queue in node.get_local_queues():
            queues[(name, queue.name)] = render_queue(queue, was.queues.get((name, queue.name)))
            if queue.pos is not None:
                consumer_positions[(name, queue.name)] = queue.pos
        post_office = node.post_office
        for address, bindings in post_office.mappings.items():
            for routing_name, position in bindings.routing_name_positions.items():
                positions[(name, address, routing_name)] = position
        for address, entry in node.address_settings.matches.items():
            node_settings[(name, address)] = AddressBalancing(entry.load_balancing_type, entry.redistribution_delay,
                                                              entry.auto_create_queues)
        for address, cache in post_office.duplicate_id_caches.items():
            bridge_ids[(name, address)] = tuple(cache.ids)
        typed.update((name, address) for address in post_office.typed)
    settings = {
        address: AddressBalancing(entry.load_balancing_type, entry.redistribution_delay, entry.auto_create_queues)
        for address, entry in cluster.address_settings.matches.items()
    }
    rendered = {name: render_consumer(c, was.consumers.get(name)) for name, c in consumers.items()}
    kept = {name: session.to_spec() for name, session in (sessions or {}).items()}
    forwarded = {key: forward for key, bridge in cluster.bridges.items() if (forward := bridge.to_spec()) is not None}
    return STATE.like(
        seen,
        tuple(cluster.nodes),
        options,
        map_like(was.queues, queues),
        map_like(was.consumers, rendered),
        map_like(was.positions, positions),
        map_like(was.consumer_positions, consumer_positions),
        map_like(was.settings, settings),
        map_like(was.node_settings, node_settings),
        cluster.get_down_links(),
        frozenset(typed),
        map_like(was.prefixes, prefixes or {}),
        map_like(was.sessions, kept),
        map_like(was.bridge_ids, bridge_ids),
        map_like(was.forwarded, forwarded),
        clock,
        next_message,
        next_serial,
    )
