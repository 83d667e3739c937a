"""``BindingsImpl``: one node's bindings of one address, and the round robin that picks among them.

Introduction
------------
For each address a node's post office keeps a :class:`BindingsImpl`
holding every binding of that address in the cluster, local and remote,
shaped as in 2.11.0 (``routingNameBindingMap`` and ``routingNamePositions``,
which ``CopyOnWriteBindings`` replaced in 2.18.0, ARTEMIS-3219):

* ``routing_name_binding_map``: routing name -> the bindings of that
  routing-name group in the order they were added (creation order, since
  notifications are instantaneous). A group is made by its first binding
  and dropped, with its position, when its last one goes
  (``BindingsImpl.addBinding``, ``PostOfficeImpl.removeBinding``; 2.11.0
  kept the stale position, HEAD's ``CopyOnWriteBindings`` drops it);
* ``routing_name_positions``: routing name -> the round-robin index, a raw
  index that removals do not adjust (``CopyOnWriteBindings``);
* ``bindings_name_map``: unique name -> binding;
* ``message_load_balancing_type``: the address's type (LB-TYPES).

Theory of operation:

1. :meth:`BindingsImpl.route` is ``simpleRouting`` (``BindingsImpl.route`` step 6): each group
   gives the message to at most one binding, picked by
   :meth:`BindingsImpl.get_next_binding`. Before 2.43.0 a send to an FQQN
   skips this and goes to the local queue of that name alone (LB-FQQN-LOCAL).
2. :meth:`BindingsImpl.match_binding` is ``matchBinding`` (LB-ELIGIBLE): routing
   type, the OFF rule for remote bindings (ARTEMIS-3188, ARTEMIS-3608,
   ARTEMIS-4196), the FQQN's queue name (2.43.0, ARTEMIS-5597) and the
   queue filter (LB-ELIGIBLE).
3. :func:`find_next_binding` is the loop of ``getNextBinding`` (LB-ROUND-ROBIN): from
   the stored index once around the group, take the first eligible member
   that is alone in its group or connected and (STRICT or high priority);
   otherwise remember ``lastLowPriorityBinding``: the first eligible one,
   overwritten under ON_DEMAND by every local one. The index becomes the
   chosen position plus one; with nothing eligible it is not written. (2.11.0
   skipped the write when the value was unchanged; the spec
   write it on every choice, so a group routed to once has a position.)
4. :meth:`BindingsImpl.redistribute` is the loop seed 003 shows: the group
   named like the originating queue (or the FQQN's address, RD-GROUP), from the
   stored index, the first member with high priority, not the originating
   queue, whose filter matches (RD-TARGET). The index moves past each inspected
   member; as in HEAD it is stored only when a target was found (RD-TARGET step 4),
   and only then is the copy made (ARTEMIS-4207).

:func:`choose_from_bits` runs :func:`find_next_binding` over members given
as bits, the fixed-arity form ``crosshair diffbehavior`` compares with the
spec's ``choose_from_bits``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

from brokerspec.spec import BalancingOptions, FqqnSend
from brokerspec.spec.addressing.names import RoutingType
from brokerspec.spec.balancing import REDISTRIBUTING, LbType, check_bits_domain

from .messages import CoreMessage, IDGenerator, matches
from .queue_bindings import Binding, Candidate, LocalQueueBinding, RemoteQueueBinding, RoutingContext, \
    strip_trailing_uuid

if TYPE_CHECKING:
    from .queues import QueueImpl

C = TypeVar("C", bound=Candidate)


def increment_pos(pos: int, length: int) -> int:
    """``BindingsImpl.incrementPos``: the next index, wrapping to 0 at the end."""
    pos += 1
    return 0 if pos >= length else pos


def find_next_binding(bindings: Sequence[C], position: int, lb_type: LbType, message: CoreMessage,
                      is_match: Callable[[C], bool]) -> tuple[int | None, int]:
    """The loop of ``getNextBinding`` (LB-ROUND-ROBIN): (chosen index or None, the index to store).

    ``is_match`` is ``matchBinding`` for the member. An index outside the
    group counts as 0 (``CopyOnWriteBindings``: ``if (nextPosition >= bindingsCount) nextPosition = 0``).
    """
    length = len(bindings)
    if length == 0:
        return None, position
    pos = position if 0 <= position < length else 0
    start_pos = pos
    the_binding: int | None = None
    last_low_priority_binding = -1
    while True:
        binding = bindings[pos]
        if is_match(binding):
            # A group of one needs no consumer check (LB-ROUND-ROBIN, LB-SINGLE); otherwise a connected member
            # that STRICT takes anyway or that has a matching consumer (LB-PREFERRED, LB-DISCONNECTED).
            if length == 1 or (binding.is_connected() and (
                    lb_type is LbType.STRICT or binding.is_high_accept_priority(message))):
                the_binding = pos
                break
            # HORNETQ-1254: under ON_DEMAND a local queue has priority over the secondary bindings (LB-FALLBACK).
            if last_low_priority_binding == -1 or (lb_type is LbType.ON_DEMAND and binding.is_local()):
                last_low_priority_binding = pos
        pos = increment_pos(pos, length)
        if pos == start_pos:
            if last_low_priority_binding != -1:
                the_binding = last_low_priority_binding
            break
    if the_binding is None:
        return None, position
    return the_binding, increment_pos(the_binding, length)


class BindingsImpl:
    """The bindings of ``address`` on one node, grouped by routing name, with their positions."""

    def __init__(self, address: str, options: BalancingOptions, lb_type: LbType) -> None:
        self.address = address
        self.options = options
        self.message_load_balancing_type = lb_type
        self.routing_name_binding_map: dict[str, list[Binding]] = {}
        self.routing_name_positions: dict[str, int] = {}
        self.bindings_name_map: dict[str, Binding] = {}

    # -- bookkeeping (``BindingsImpl.addBinding``, ``PostOfficeImpl.removeBinding``) ---------------------------

    def add_binding(self, binding: Binding) -> None:
        """Append ``binding`` to its routing-name group, making the group on first use (``BindingsImpl.addBinding``)."""
        group = self.routing_name_binding_map.setdefault(binding.get_routing_name(), [])
        if binding not in group:
            group.append(binding)
        self.bindings_name_map[binding.get_unique_name()] = binding
        if isinstance(binding, RemoteQueueBinding):
            binding.message_load_balancing_type = self.message_load_balancing_type

    def sort_groups(self, order: dict[str, int]) -> None:
        """Put every group in creation order (``order``: unique name -> place), after wildcard bindings were copied
        in all at once (LB-WILDCARD-BINDINGS: Artemis copies them in an unspecified order; the spec keeps
        creation order)."""
        for group in self.routing_name_binding_map.values():
            group.sort(key=lambda binding: order[binding.get_unique_name()])

    def remove_binding(self, binding: Binding) -> None:
        """Take ``binding`` out; an emptied group goes, with its position.

        See ``PostOfficeImpl.removeBinding``, LB-ROUND-ROBIN.
        """
        routing_name = binding.get_routing_name()
        group = self.routing_name_binding_map[routing_name]
        group.remove(binding)
        if not group:
            del self.routing_name_binding_map[routing_name]
            self.routing_name_positions.pop(routing_name, None)
        del self.bindings_name_map[binding.get_unique_name()]

    def has_local_binding(self) -> bool:
        """Whether a queue of this node is among the bindings (``BindingsImpl.hasLocalBinding``, ARTEMIS-4450)."""
        return any(binding.is_local() for binding in self.bindings_name_map.values())

    def is_empty(self) -> bool:
        """No bindings left: the address manager then drops this object (``PostOfficeImpl.removeBinding``)."""
        return not self.bindings_name_map

    def set_message_load_balancing_type(self, lb_type: LbType) -> None:
        """Take a new type and hand it to the remote bindings (``updateMessageLoadBalancingTypeForAddress``,
        ARTEMIS-1680; each ``RemoteQueueBindingImpl`` has its own copy)."""
        self.message_load_balancing_type = lb_type
        for binding in self.bindings_name_map.values():
            if isinstance(binding, RemoteQueueBinding):
                binding.message_load_balancing_type = lb_type

    # -- first routing (F) -----------------------------------------------------------

    def route(self, message: CoreMessage, context: RoutingContext) -> None:
        """Put the message's destinations in ``context``: the FQQN's local queue (LB-FQQN-LOCAL) or one per group.

        See ``BindingsImpl.route``.
        """
        if message.fqqn_queue is not None and self.options.fqqn_send is not FqqnSend.BALANCED:
            self.route_to_fqqn_queue(message, message.fqqn_queue, context)
            return
        for routing_name, bindings in self.routing_name_binding_map.items():
            binding = self.get_next_binding(message, routing_name, bindings)
            if binding is not None:
                binding.route(message, context)

    def route_to_fqqn_queue(self, message: CoreMessage, queue_name: str, context: RoutingContext) -> None:
        """LB-FQQN-LOCAL (2.7.0, ARTEMIS-1867): ``bindingsNameMap.get(queue)``, no round robin, no remote bindings;
        the queue filter is checked from 2.35.0 (LB-FQQN-LOCAL, ARTEMIS-4795); the routing type as in LB-ELIGIBLE."""
        binding = self.bindings_name_map.get(queue_name)
        if not isinstance(binding, LocalQueueBinding):
            return
        if message.routing_type is not None and message.routing_type is not binding.get_routing_type():
            return
        if self.options.fqqn_send is FqqnSend.LOCAL and not matches(binding.get_filter(), message):
            return
        binding.route(message, context)

    def match_binding(self, message: CoreMessage, binding: Binding, lb_type: LbType) -> bool:
        """``matchBinding`` (LB-ELIGIBLE): may ``binding`` take ``message`` at all?"""
        if message.routing_type is not None and message.routing_type is not binding.get_routing_type():
            return False
        if not binding.is_local() and lb_type in (LbType.OFF, LbType.OFF_WITH_REDISTRIBUTION):
            # OFF_WITH_REDISTRIBUTION lets MULTICAST messages through (ARTEMIS-3608), OFF since 2.29.0
            # (ARTEMIS-4196); before that a remote binding never took a message under OFF (ARTEMIS-3188).
            forwards = lb_type is LbType.OFF_WITH_REDISTRIBUTION or self.options.off_forwards_multicast
            if not (forwards and message.routing_type is RoutingType.MULTICAST):
                return False
        if message.fqqn_queue is not None and strip_trailing_uuid(binding.get_cluster_name()) != message.fqqn_queue:
            return False
        return matches(binding.get_filter(), message)

    def get_next_binding(self, message: CoreMessage, routing_name: str, bindings: list[Binding]) -> Binding | None:
        """``getNextBinding`` (LB-ROUND-ROBIN): the group's choice for ``message``, moving the group's position."""
        lb_type = self.message_load_balancing_type
        position = self.routing_name_positions.get(routing_name, 0)
        index, stored = find_next_binding(bindings, position, lb_type, message,
                                          lambda binding: self.match_binding(message, binding, lb_type))
        if index is None:
            return None
        self.routing_name_positions[routing_name] = stored
        return bindings[index]

    # -- redistribution (seed 003, RD-TARGET) -----------------------------------------------

    def allow_redistribute(self) -> bool:
        """``allowRedistribute``: ON_DEMAND (seed 003) and OFF_WITH_REDISTRIBUTION (RD-ALLOWED)."""
        return self.message_load_balancing_type in REDISTRIBUTING

    def get_redistribution_group(self, message: CoreMessage, originating_queue: QueueImpl) -> str:
        """The originating queue's name (seed 003), or the FQQN's address for an FQQN message on an
        ANYCAST queue (RD-GROUP, ARTEMIS-3918, 2.25.0)."""
        if message.is_fully_qualified() and originating_queue.routing_type is RoutingType.ANYCAST \
                and self.options.fqqn_redistribution_group:
            return message.address
        return originating_queue.name

    def redistribute(self, message: CoreMessage, originating_queue: QueueImpl, context: RoutingContext,
                     ids: IDGenerator, early: CoreMessage | None = None) -> CoreMessage | None:
        """Seed 003's ``redistribute`` loop: route a copy of ``message`` to the next target, or None.

        ``early`` is the copy the post office already made (before 2.29.0).
        """
        if self.message_load_balancing_type in (LbType.STRICT, LbType.OFF):
            return None
        routing_name = self.get_redistribution_group(message, originating_queue)
        bindings = self.routing_name_binding_map.get(routing_name)
        if bindings is None:
            return None
        length = len(bindings)
        pos = self.routing_name_positions.get(routing_name, 0)
        if pos >= length:
            pos = 0  # the seed's IndexOutOfBoundsException branch: start again at 0
        start_pos = pos
        the_binding: Binding | None = None
        while True:
            binding = bindings[pos]
            pos = increment_pos(pos, length)
            high_prior = binding.is_high_accept_priority(message)
            if high_prior and binding.get_bindable() is not originating_queue \
                    and matches(binding.get_filter(), message):
                the_binding = binding
                break
            if pos == start_pos:
                break
        if the_binding is None:
            return None
        self.routing_name_positions[routing_name] = pos
        copy = early if early is not None else message.copy(ids.generate_id())  # ARTEMIS-4207: only now
        the_binding.route(copy, context)
        return copy


class BitsMember:
    """A group member described by four bits (1 eligible, 2 preferred, 4 connected, 8 local)."""

    def __init__(self, bits: int) -> None:
        self.eligible = bool(bits & 1)
        self.preferred = bool(bits & 2)
        self.connected = bool(bits & 4)
        self.local = bool(bits & 8)

    def is_connected(self) -> bool:
        return self.connected

    def is_high_accept_priority(self, message: CoreMessage) -> bool:
        return self.preferred

    def is_local(self) -> bool:
        return self.local


def choose_from_bits(m0: int, m1: int, m2: int, size: int, position: int, lb_type: LbType) -> tuple[int, int]:
    """:func:`find_next_binding` over up to three members given as bits; -1 for no choice.

    The same signature and meaning as ``brokerspec.spec.balancing.choose_from_bits``,
    computed by this module's own loop, for ``crosshair diffbehavior``.
    Under ON_DEMAND a remote member with a consumer (7) beats a local one
    without (13); without any consumers the local one is the fallback,
    wherever the scan starts (LB-ROUND-ROBIN):

    >>> choose_from_bits(13, 7, 0, 2, 0, LbType.ON_DEMAND)
    (1, 0)
    >>> choose_from_bits(5, 13, 0, 2, 0, LbType.ON_DEMAND)
    (1, 0)
    >>> choose_from_bits(5, 13, 0, 2, 0, LbType.OFF)
    (0, 1)
    >>> choose_from_bits(0, 0, 0, 3, 2, LbType.STRICT)
    (-1, 2)

    pre: 0 <= m0 < 16 and 0 <= m1 < 16 and 0 <= m2 < 16
    pre: 1 <= size <= 3
    pre: 0 <= position <= 4
    post: -1 <= __return__[0] < size
    """
    check_bits_domain(m0, m1, m2, size, position)
    members = [BitsMember(bits) for bits in (m0, m1, m2)[:size]]
    index, stored = find_next_binding(members, position, lb_type, CoreMessage(0, ""),
                                      lambda member: member.eligible)
    return (-1 if index is None else index), stored
