"""Bindings: the small state changes every address operation is made of.

Introduction
------------
Adding or removing a queue keeps the per-name address count of seed 000 in
step with the queues (rules ADDR-QUEUE-CREATE, ADDR-QUEUE-DELETE); finding
the queue that blocks a new one depends on where names must be unique
(ADDR-QUEUE-EXISTS). Both the seed's operations (:mod:`.operations`) and
Artemis's server and client steps (:mod:`.artemis`) are built from these.
"""

from __future__ import annotations

from ..frozen import replace
from ..profiles import QueueNameScope
from .model import Address, AddressingState, Queue, get_queues_named, get_queues_of
from .outcomes import Routed
from .names import RoutingType


def find_existing_queue(state: AddressingState, address: str, queue: str) -> Queue | None:
    """The queue that blocks creating ``address::queue``, if any (rule ADDR-QUEUE-EXISTS).

    Broker-wide scope (released Artemis, ``ActiveMQServerImpl.createQueue``,
    AMQ229019): any queue of that name, on any address. Per-address scope
    (seed 000's ``BindingKey``): only a queue of that name on that address.
    """
    if state.options.name_scope is QueueNameScope.BROKER:
        same_name = get_queues_named(state, queue)
        return same_name[0] if same_name else None
    return state.queues.get((address, queue))


def add_queue(state: AddressingState, queue: Queue) -> AddressingState:
    """Bind ``queue`` and increment its name's address count (rule ADDR-QUEUE-CREATE)."""
    count = state.name_counts.get(queue.name, 0)
    return replace(
        state,
        queues=state.queues.set((queue.address, queue.name), queue),
        name_counts=state.name_counts.set(queue.name, count + 1),
    )


def remove_queue(state: AddressingState, queue: Queue) -> AddressingState:
    """Unbind ``queue`` and decrement its name's count, dropping a zero (rule ADDR-QUEUE-DELETE)."""
    count = state.name_counts[queue.name] - 1
    counts = state.name_counts.set(queue.name, count) if count else state.name_counts.remove(queue.name)
    return replace(state, queues=state.queues.remove((queue.address, queue.name)), name_counts=counts)


def put_address(state: AddressingState, name: str, routing_types: frozenset[RoutingType],
                auto_created: bool = False) -> AddressingState:
    """``state`` with address ``name`` allowing ``routing_types`` (created, or widened if it exists)."""
    existing = state.addresses.get(name)
    address = (Address(name, routing_types, auto_created) if existing is None
               else replace(existing, routing_types=existing.routing_types | routing_types))
    return replace(state, addresses=state.addresses.set(name, address))


def route_message(state: AddressingState, address: str, queue: str | None, routing_type: RoutingType | None,
                  created_address: str | None, created_queue: str | None) -> Routed:
    """Where a send to ``address`` (``queue``: an FQQN's queue part, else None) may go, and what it created.

    Rules ADDR-SEND-FQQN (that one queue, if its routing type matches, else
    nowhere) and ADDR-SEND-ROUTE (copies to the MULTICAST queues, one of the
    ANYCAST ones; a message without a routing type does both).
    """
    if queue is not None:
        target = state.queues.get((address, queue))
        hit = target is not None and routing_type in (None, target.routing_type)
        reached: tuple[str, ...] = (target.fqqn,) if target is not None and hit else ()
        return Routed(address, reached, (), created_address, created_queue, rule="ADDR-SEND-FQQN")
    queues = get_queues_of(state, address)
    # BindingsImpl groups bindings by routing name: an ANYCAST queue's is its address, a MULTICAST queue's its
    # own name. A MULTICAST queue named like its address so joins the ANYCAST queues' group, and a message
    # without a routing type goes to one member of it, not a copy to it as well (found fuzzing Artemis 2.40.0).
    joined = routing_type is None and any(q.routing_type is RoutingType.ANYCAST for q in queues)

    def is_anycast(q: Queue) -> bool:
        return q.routing_type is RoutingType.ANYCAST or (joined and q.name == address)

    copies = tuple(q.fqqn for q in queues if not is_anycast(q) and routing_type is not RoutingType.ANYCAST)
    anycast = tuple(q.fqqn for q in queues if is_anycast(q) and routing_type is not RoutingType.MULTICAST)
    return Routed(address, copies, anycast, created_address, created_queue, rule="ADDR-SEND-ROUTE")

