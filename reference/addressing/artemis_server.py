"""The reference broker's Artemis side: its server's queue creation, a core producer and the JMS client's consumer.

Introduction
------------
Released Artemis does not resolve every name through one lookup. This
module writes the steps its code takes, one method per Java method, over
the reference :class:`~.address_manager.AddressManager`:

``binding_for``
    ``SimpleAddressManager.getBinding``: the queue named by the part after
    the first ``::``, on whatever address it lives.
``create_queue``
    ``ActiveMQServerImpl.createQueue``: empty name, a name already bound,
    then the address (created or widened when the caller may, else
    refused), and last the queue factory's refusal of an empty address.
``check_auto_create``
    ``ServerSessionImpl.checkAutoCreate`` for a queue named like an address:
    nothing without a routing type; the address, then for ANYCAST the queue.
``core_send``
    a core producer: before 2.28.0 it only routes; from 2.28.0 the post
    office runs ``checkAutoCreate`` for the address part when the address is
    missing (``checkAddress``) and when it has no queue (``simpleRoute``).
``jms_consumer``
    ``ActiveMQSession.createConsumer``: an address query, a queue created
    when the address lacks it (``AutoCreateUtil.autoCreateQueue``, or
    ``createFQQNSubscription`` for a topic), then ``createConsumer`` through
    ``getBinding``.

A refusal part-way keeps what was made before it, as in the broker.
"""

from __future__ import annotations

from collections.abc import Callable

from brokerspec.spec import AddressingOptions, NameParsing, SendCreation
from brokerspec.spec.addressing import (
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

from .address_manager import AddressInfo, AddressManager, Binding, BindingKey
from .names import extract_address_name, extract_queue_name, is_fully_qualified


class ArtemisServer:
    """Artemis's server and client steps over one address manager."""

    def __init__(self, manager: AddressManager, options: AddressingOptions,
                 settings_for: Callable[[str], AddressSettings]) -> None:
        self.manager = manager
        self.options = options
        self.settings_for = settings_for

    def binding_for(self, name: str) -> Binding | None:
        """``getBinding``: the queue called ``name``'s queue part, wherever it is bound."""
        found = self.manager.bindings_named(extract_queue_name(name))
        return found[0] if found else None

    def create_queue(self, address: str, name: str, routing_type: RoutingType, may_create_address: bool,
                     auto_created: bool = False, shown: tuple[str, str] | None = None) -> Rejected | None:
        """``ActiveMQServerImpl.createQueue`` with names already read; a refusal, or None once the queue exists."""
        shown_address, shown_name = shown or (address, name)
        if not name:
            return Rejected(InvalidName(shown_name, "AMQ229216: Invalid queue name"))
        clash = self.binding_for(name)
        if clash is not None:  # AMQ229019 names the queue asked for, on the blocking queue's address
            return Rejected(QueueExists(name, clash.address))
        if not address and self.options.name_parsing is NameParsing.SPLIT:  # 2.11: QueueConfig.Builder first
            return Rejected(InvalidName(shown_address, "address can't be null or empty!"))
        info = self.manager.get_address_info(address)
        if may_create_address:
            if info is None:
                self.manager.add_address_info(AddressInfo(address, {routing_type}, auto_created=True))
            else:
                info.routing_types.add(routing_type)
        elif info is None:
            return Rejected(AddressNotFound(address))
        elif routing_type not in info.routing_types:
            return Rejected(RoutingTypeNotAllowed(address, routing_type, frozenset(info.routing_types)))
        if not address:
            return Rejected(InvalidName(shown_address, "address can't be null or empty!"))
        twins = self.manager.bindings_named(name)  # the name map's putIfAbsent (AMQ229018)
        if twins:
            return Rejected(QueueExists(twins[0].name, twins[0].address))
        self.manager.add_binding(Binding(address, name, routing_type, auto_created))
        return None

    def check_auto_create(self, address: str, routing_type: RoutingType | None) -> Rejected | None:
        """``checkAutoCreate`` for a queue named ``address`` with ``routing_type``; NOT_FOUND is a missing address."""
        if routing_type is None:
            return None  # Artemis answers EXISTED at once for a message without a routing type
        settings = self.settings_for(address)
        info = self.manager.get_address_info(address)
        if info is None or routing_type not in info.routing_types:
            if not settings.auto_create_addresses:
                return Rejected(AddressNotFound(address))
            if info is None:
                self.manager.add_address_info(AddressInfo(address, {routing_type}, auto_created=True))
            else:
                info.routing_types.add(routing_type)
        if routing_type is not RoutingType.ANYCAST:
            return None
        located = self.manager.bindings_named(address)
        if located:
            return None if located[0].routing_type is RoutingType.ANYCAST else Rejected(AddressNotFound(address))
        if self.manager.bindings_of(address) and self.options.send_reuses_existing_queue:
            return None
        if not settings.auto_create_queues:
            return Rejected(AddressNotFound(address))
        return self.create_queue(address, address, RoutingType.ANYCAST, True, auto_created=True)

    def core_send(self, name: str, routing_type: RoutingType | None) -> Outcome:
        """A core producer's send of a message with ``routing_type`` to ``name`` (prefix already stripped)."""
        address = extract_address_name(name)
        addresses_before = set(self.manager.address_info_map)
        queues_before = set(self.manager.name_map)
        if self.options.send_creation is SendCreation.ROUTING_TIME:
            if self.manager.get_address_info(address) is None and not self.manager.bindings_of(address):
                refused = self.check_auto_create(address, routing_type)  # PostOfficeImpl.checkAddress
                if refused is not None:
                    return refused
            if not self.manager.bindings_of(address):
                refused = self.check_auto_create(address, routing_type)  # PostOfficeImpl.simpleRoute
                if refused is not None:
                    return refused
        created_address = address if address not in addresses_before and address in self.manager.address_info_map \
            else None
        made = [key.fqqn() for key in self.manager.name_map if key not in queues_before]
        created_queue = made[0] if made else None
        queue = extract_queue_name(name) if is_fully_qualified(name) else None
        copies, anycast = self.manager.get_routing_targets(address, queue, routing_type)
        return Routed(address, copies, anycast, created_address, created_queue)

    def jms_consumer(self, name: str, prefix_type: RoutingType | None, consumer_type: RoutingType | None,
                     given: str) -> Outcome:
        """``ActiveMQSession.createConsumer`` for a JMS queue (ANYCAST or none) or an FQQN topic (MULTICAST)."""
        topic = consumer_type is RoutingType.MULTICAST
        address = extract_address_name(name)
        queue = extract_queue_name(name)
        settings = self.settings_for(address)  # the address query answers for the address part
        addresses_before = set(self.manager.address_info_map)
        queues_before = set(self.manager.name_map)
        if topic and self.manager.get_address_info(address) is None:
            if not settings.auto_create_addresses:
                return Rejected(QueueNotFound(given))  # "Topic ... does not exist"
            self.manager.add_address_info(AddressInfo(address, {RoutingType.MULTICAST}, auto_created=True))
        held = {b.name: b for b in self.manager.bindings_of(address)}
        if extract_queue_name(given) not in held:  # AutoCreateUtil looks for the name given, prefix and all
            if not settings.auto_create_queues:
                return Rejected(QueueNotFound(given))
            # QueueConfiguration.of(queue).setAddress(name) on the client; the server reads the name once more.
            refused = self.create_queue(address, extract_queue_name(queue),
                                        prefix_type or (RoutingType.MULTICAST if topic else RoutingType.ANYCAST),
                                        settings.auto_create_addresses, auto_created=True, shown=(given, given))
            if refused is not None and not isinstance(refused.reason, QueueExists):
                return refused
        elif (self.options.anycast_consume_rejects_multicast_queue and not topic and not is_fully_qualified(name)
              and held[queue].routing_type is not RoutingType.ANYCAST):
            return Rejected(QueueNotFound(given))  # "does not support JMS queue semantics", reported as missing
        if topic and self.binding_for(queue) is None:  # the subscription's queue query
            return Rejected(QueueNotFound(given))
        binding = self.binding_for(queue if topic else name)
        if binding is None:
            return Rejected(QueueNotFound(given))
        key = BindingKey(binding.address, binding.name)
        fresh = key not in queues_before
        created = address if address not in addresses_before and address in self.manager.address_info_map else None
        return Attached(binding.address, binding.name, created, key.fqqn() if fresh else None)
