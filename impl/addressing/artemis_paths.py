"""The fast broker's Artemis paths: management names, server queue creation, core sends, the JMS consumer.

Introduction
------------
Under the ``artemis-*`` profiles a client name is read the way released
Artemis reads it, by several code paths rather than one lookup (see
``brokerspec.spec.addressing.artemis``). These functions give the fast
broker those paths over its own indexes (``_addresses``, ``_by_name``,
``_names``): a queue name bound anywhere is one ``_by_name`` probe, so
``getBinding`` costs a split and a dict lookup. The broker is taken through
a TYPE_CHECKING import, so this module and :mod:`.broker` do not import
each other at run time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brokerspec.spec import SendCreation
from brokerspec.spec.addressing import (
    CATCH_ALL,
    AddressNotFound,
    AddressSettings,
    Attached,
    InvalidName,
    Outcome,
    QueueExists,
    QueueNotFound,
    Rejected,
    Routed,
    RoutingType,
    RoutingTypeNotAllowed,
)

if TYPE_CHECKING:
    from .broker import FastBroker, _Queue

SEP = "::"
ANYCAST = RoutingType.ANYCAST
MULTICAST = RoutingType.MULTICAST


def java_hash_map_order(keys: list[str]) -> tuple[str, ...]:
    """``keys`` (in insertion order) in the iteration order of a Java ``HashMap<SimpleString, _>``."""
    capacity = 16
    while len(keys) > capacity * 0.75:
        capacity <<= 1
    ranked = []
    for position, key in enumerate(keys):
        hashed = 0
        for byte in key.encode("utf-16-le", "surrogatepass"):
            hashed = (hashed * 31 + (byte - 256 if byte >= 128 else byte)) & 0xFFFFFFFF
        ranked.append(((hashed ^ (hashed >> 16)) & (capacity - 1), position, key))
    return tuple(key for _, _, key in sorted(ranked))


def queue_part(name: str) -> str:
    """The part after the first ``::`` (the name itself when there is none)."""
    index = name.find(SEP)
    return name if index < 0 else name[index + 2:]


def address_part(name: str) -> str:
    """The part before the first ``::`` (the name itself when there is none)."""
    index = name.find(SEP)
    return name if index < 0 else name[:index]


def bound(broker: FastBroker, name: str) -> _Queue | None:
    """``getBinding``: the queue named by ``name``'s queue part, wherever it lives."""
    by_address = broker._by_name.get(queue_part(name))
    return None if not by_address else by_address[min(by_address)]


def settings(broker: FastBroker, address: str) -> AddressSettings:
    """The address settings that govern ``address``."""
    return broker._settings.get(address) or broker._settings[CATCH_ALL]


def management_names(broker: FastBroker, address: str, name: str) -> tuple[str, str]:
    """(address, queue) a management ``createQueue`` makes of its arguments (2.11, or ``QueueConfiguration``)."""
    if broker._queue_configuration and SEP in address:
        return address_part(address), queue_part(address)
    return address_part(address), queue_part(name)


def server_create_queue(broker: FastBroker, address: str, name: str, routing_type: RoutingType,
                        may_create_address: bool, auto_created: bool = False,
                        shown: tuple[str, str] | None = None) -> Rejected | None:
    """``ActiveMQServerImpl.createQueue``; a refusal (what it made before stays), or None once the queue is made."""
    from .broker import _Address, _Queue

    if not name:
        return Rejected(InvalidName(shown[1] if shown else name, "AMQ229216"))
    clash = bound(broker, name)
    if clash is not None:  # AMQ229019: the name asked for, the blocking queue's address
        return Rejected(QueueExists(name, clash.address))
    if not address and broker._reads_names and not broker._queue_configuration:  # 2.11: QueueConfig.Builder first
        return Rejected(InvalidName(shown[0] if shown else address, "address can't be null or empty"))
    record = broker._addresses.get(address)
    if may_create_address:
        if record is None:
            record = broker._addresses[address] = _Address(address, {routing_type}, True)
        else:
            record.routing_types.add(routing_type)
    elif record is None:
        return Rejected(AddressNotFound(address))
    elif routing_type not in record.routing_types:
        return Rejected(RoutingTypeNotAllowed(address, routing_type, frozenset(record.routing_types)))
    if not address:
        return Rejected(InvalidName(shown[0] if shown else address, "address can't be null or empty"))
    twin = broker._by_name.get(name)
    if twin:
        first = twin[min(twin)]
        return Rejected(QueueExists(first.name, first.address))
    broker._remember_queue(_Queue(address, name, routing_type, auto_created))
    return None


def check_auto_create(broker: FastBroker, address: str, routing_type: RoutingType | None) -> Rejected | None:
    """``checkAutoCreate`` for a queue named like ``address``; a refusal keeps the address it made."""
    from .broker import _Address

    if routing_type is None:
        return None
    rules = settings(broker, address)
    record = broker._addresses.get(address)
    if record is None or routing_type not in record.routing_types:
        if not rules.auto_create_addresses:
            return Rejected(AddressNotFound(address))
        if record is None:
            record = broker._addresses[address] = _Address(address, {routing_type}, True)
        else:
            record.routing_types.add(routing_type)
    if routing_type is not ANYCAST:
        return None
    located = broker._by_name.get(address)
    if located:
        return None if located[min(located)].routing_type is ANYCAST else Rejected(AddressNotFound(address))
    if record.queues and broker._send_reuses_queue:
        return None
    if not rules.auto_create_queues:
        return Rejected(AddressNotFound(address))
    return server_create_queue(broker, address, address, ANYCAST, True, True)


def core_send(broker: FastBroker, name: str, routing_type: RoutingType | None) -> Outcome:
    """A core producer: routing-time creation from 2.28.0, never before; then the routing."""
    index = name.find(SEP)
    address = name if index < 0 else name[:index]
    known = address in broker._addresses
    made: list[str] = []
    if broker._send_creation is SendCreation.ROUTING_TIME:
        before = set(broker._by_name)
        for _ in range(2):  # PostOfficeImpl.checkAddress, then simpleRoute
            record = broker._addresses.get(address)
            if record is None or not record.queues:
                refused = check_auto_create(broker, address, routing_type)
                if refused is not None:
                    return refused
        made = [q.fqqn for n in set(broker._by_name) - before for q in broker._by_name[n].values()]
    record = broker._addresses.get(address)
    created_address = address if not known and record is not None else None
    created_queue = made[0] if made else None
    if record is None:
        return Routed(address, (), (), created_address, created_queue)
    if index >= 0:
        target = record.queues.get(name[index + 2:])
        if target is None or (routing_type is not None and routing_type is not target.routing_type):
            return Routed(address, (), (), created_address, created_queue)
        return Routed(address, (target.fqqn,), (), created_address, created_queue)
    # a MULTICAST queue named like its address shares the ANYCAST group's routing name (BindingsImpl)
    joined = routing_type is None and any(q.routing_type is ANYCAST for q in record.queues.values())
    grouped = {name: q.routing_type is ANYCAST or (joined and name == address) for name, q in record.queues.items()}
    copies = tuple(q.fqqn for name, q in sorted(record.queues.items())
                   if not grouped[name] and routing_type is not ANYCAST)
    anycast = tuple(q.fqqn for name, q in sorted(record.queues.items())
                    if grouped[name] and routing_type is not MULTICAST)
    return Routed(address, copies, anycast, created_address, created_queue)


def jms_consumer(broker: FastBroker, name: str, prefix_type: RoutingType | None,
                 consumer_type: RoutingType | None, given: str) -> Outcome:
    """Artemis's JMS client: a queue consumer (ANYCAST or none) or an FQQN topic consumer (MULTICAST)."""
    from .broker import _Address

    topic = consumer_type is MULTICAST
    address, queue = address_part(name), queue_part(name)
    rules = settings(broker, address)
    known = address in broker._addresses
    before = set(broker._by_name)
    if topic and not known:
        if not rules.auto_create_addresses:
            return Rejected(QueueNotFound(given))
        broker._addresses[address] = _Address(address, {MULTICAST}, True)
    record = broker._addresses.get(address)
    held = record.queues.get(queue_part(given)) if record is not None else None  # the name given, prefix and all
    if held is None:
        if not rules.auto_create_queues:
            return Rejected(QueueNotFound(given))
        refused = server_create_queue(broker, address, queue_part(queue), prefix_type or (MULTICAST if topic else ANYCAST),
                                      rules.auto_create_addresses, True, (given, given))
        if refused is not None and not isinstance(refused.reason, QueueExists):
            return refused
    elif (broker._refuse_anycast_on_multicast and not topic and SEP not in name
          and held.routing_type is not ANYCAST):
        return Rejected(QueueNotFound(given))
    target = bound(broker, queue) if topic else bound(broker, name)
    if target is None:
        return Rejected(QueueNotFound(given))
    fresh = target.name not in before
    created = address if not known and address in broker._addresses else None
    return Attached(target.address, target.name, created, target.fqqn if fresh else None)
