"""The reference broker: server operations and session operations over the address manager.

Introduction
------------
A real broker splits address handling in two. The *server* offers
management operations (create or delete an address or a queue) and checks
them in a fixed order. The *session* serves clients: it strips acceptor
prefixes from the names clients send, auto-creates addresses and queues when
the address settings allow (Artemis ``ServerSessionImpl.checkAutoCreate``),
and then sends or attaches a consumer. Both use the :class:`AddressManager`.

This class plays both parts, one method per operation, each written as the
steps a broker takes. A step that finds a problem returns a ``Rejected``
outcome before anything has changed, so a refused operation leaves no trace.
:meth:`ReferenceBroker.execute` runs any command; :meth:`ReferenceBroker.snapshot`
renders the broker as a spec state so the two can be compared.
"""

from __future__ import annotations

from brokerspec.spec import ConsumerModel, FrozenMap, NameParsing, PrefixMatch, Profile, QueueNameScope, SendCreation
from brokerspec.spec.addressing import (
    CATCH_ALL,
    Address,
    AddressCreated,
    AddressDeleted,
    AddressExists,
    AddressHasQueues,
    AddressingCommand,
    AddressingState,
    AddressNotFound,
    AddressQueried,
    AddressSettings,
    Ambiguous,
    AmbiguousName,
    Attached,
    Configured,
    Consume,
    CreateAddress,
    CreateQueue,
    DeleteAddress,
    DeleteQueue,
    InvalidName,
    Lookup,
    LookupOutcome,
    NotFound,
    Outcome,
    QueryAddress,
    Queue,
    QueueCreated,
    QueueDeleted,
    QueueExists,
    QueueNotFound,
    QueueRoutingTypeMismatch,
    Rejected,
    Resolved,
    Routed,
    RoutingType,
    RoutingTypeNotAllowed,
    Send,
    SetAddressSettings,
    SetPrefix,
)

from .address_manager import AddressInfo, AddressManager, Binding, BindingKey
from .artemis_server import ArtemisServer
from .names import check_name, extract_address_name, extract_queue_name, remove_prefix, split_fqqn


class ReferenceBroker:
    """One broker's address model, built the way a broker is built."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.options = profile.addressing
        self.manager = AddressManager()
        self.address_settings: dict[str, AddressSettings] = {CATCH_ALL: AddressSettings()}
        self.prefixes: dict[str, RoutingType] = {}
        self.artemis = ArtemisServer(self.manager, self.options, self.settings_for)
        self.reads_names = self.options.name_parsing is not NameParsing.STRICT

    # -- the one entry point ----------------------------------------------------------

    def execute(self, command: AddressingCommand) -> Outcome:
        """Run one command and return its outcome."""
        if isinstance(command, CreateAddress):
            return self.create_address(command.address, set(command.routing_types))
        if isinstance(command, DeleteAddress):
            return self.delete_address(command.address, command.force)
        if isinstance(command, CreateQueue):
            return self.create_queue(command.address, command.queue, command.routing_type)
        if isinstance(command, DeleteQueue):
            return self.destroy_queue(command.name)
        if isinstance(command, Lookup):
            return self.queue_query(command.name)
        if isinstance(command, Send):
            return self.send(command.name, command.routing_type)
        if isinstance(command, Consume):
            return self.create_consumer(command.name, command.routing_type)
        if isinstance(command, SetPrefix):
            return self.set_prefix(command.prefix, command.routing_type)
        if isinstance(command, QueryAddress):
            return self.address_query(command.address)
        return self.set_address_settings(command)

    # -- server: management operations ------------------------------------------------

    def strip(self, client_name: str) -> tuple[str, RoutingType | None]:
        """The client name without its acceptor prefix, the way this broker matches prefixes."""
        return remove_prefix(client_name, self.prefixes, self.options.prefix_match is PrefixMatch.HASH_MAP)

    def create_address(self, name: str, routing_types: set[RoutingType]) -> Outcome:
        """Create an address, unless the name is unusable or taken (Artemis reads no name as unusable)."""
        if self.reads_names:
            name = extract_address_name(name)  # the AddressInfo constructor
        else:
            problem = check_name(name)
            if problem:
                return Rejected(InvalidName(name, problem))
        if not self.manager.add_address_info(AddressInfo(name, set(routing_types))):
            return Rejected(AddressExists(name))
        return AddressCreated(name)

    def delete_address(self, given: str, force: bool) -> Outcome:
        """Delete an address; with ``force`` its queues are destroyed first."""
        name = extract_address_name(given) if self.reads_names else given
        if self.manager.get_address_info(name) is None:
            return Rejected(AddressNotFound(given))
        bindings = self.manager.bindings_of(name)
        fqqns = tuple(BindingKey(b.address, b.name).fqqn() for b in bindings)
        if bindings and not force:
            return Rejected(AddressHasQueues(given, fqqns))
        for binding in bindings:
            self.manager.remove_binding(binding)
        self.manager.remove_address_info(name)
        return AddressDeleted(name, fqqns)

    def create_queue(self, address: str, name: str, routing_type: RoutingType) -> Outcome:
        """Create a queue, checking name, clash, address and routing type in that order."""
        if self.reads_names:
            return self.create_queue_by_management(address, name, routing_type)
        problem = check_name(name)
        if problem:
            return Rejected(InvalidName(name, problem))
        clash = self.existing_queue(address, name)
        if clash is not None:
            return Rejected(QueueExists(clash.name, clash.address))
        info = self.manager.get_address_info(address)
        if info is None:
            return Rejected(AddressNotFound(address))
        if routing_type not in info.routing_types:
            return Rejected(RoutingTypeNotAllowed(address, routing_type, frozenset(info.routing_types)))
        self.manager.add_binding(Binding(address, name, routing_type))
        return QueueCreated(address, name)

    def create_queue_by_management(self, address: str, name: str, routing_type: RoutingType) -> Outcome:
        """Artemis's management ``createQueue``: names read as 2.11 or ``QueueConfiguration`` does, then the server."""
        real_address, real_name = extract_address_name(address), extract_queue_name(name)
        if self.options.name_parsing is NameParsing.QUEUE_CONFIGURATION and split_fqqn(address)[0]:
            real_name = extract_queue_name(address)  # setAddress(FQQN) after setName
        refused = self.artemis.create_queue(real_address, real_name, routing_type, False, shown=(address, name))
        return refused or QueueCreated(real_address, real_name)

    def existing_queue(self, address: str, name: str) -> Binding | None:
        """The queue that stops ``name`` being created on ``address``, if any.

        Released Artemis keeps queue names unique in the whole broker; the
        seed's design only within one address.
        """
        if self.options.name_scope is QueueNameScope.BROKER:
            same_name = self.manager.bindings_named(name)
            return same_name[0] if same_name else None
        return self.manager.name_map.get(BindingKey(address, name))

    def destroy_queue(self, client_name: str) -> Outcome:
        """Destroy the queue a client name resolves to, exactly as a lookup resolves it."""
        name, _ = self.strip(client_name)
        found = self.manager.get_binding(name, self.options.fqqn_checks_address)
        if isinstance(found, NotFound):
            return Rejected(QueueNotFound(client_name))
        if isinstance(found, Ambiguous):
            return Rejected(AmbiguousName(client_name, found.candidates))
        binding = self.manager.name_map[BindingKey(found.address, found.queue)]
        self.manager.remove_binding(binding)
        info = self.manager.get_address_info(binding.address)
        if (self.options.delete_queue_removes_auto_created_address and info is not None and info.auto_created
                and not self.manager.bindings_of(binding.address)):
            self.manager.remove_address_info(binding.address)  # ARTEMIS-3541: forceAutoDeleteAddress
        return QueueDeleted(binding.address, binding.name)

    def address_query(self, client_name: str) -> AddressQueried:
        """What the broker holds for the address a client name's address part names.

        As ``ServerSessionImpl.executeAddressQuery``: the prefix goes, then ``addressQuery`` keeps the
        address part of an FQQN; the queues come from the address's bindings.
        """
        name, _ = self.strip(client_name)
        address = extract_address_name(name)
        info = self.manager.get_address_info(address)
        if info is None:
            return AddressQueried(address, False)
        queues = tuple(sorted(binding.name for binding in self.manager.bindings_of(address)))
        return AddressQueried(address, True, frozenset(info.routing_types), queues)

    def queue_query(self, client_name: str) -> LookupOutcome:
        """Which queue does this client name refer to?

        Without the address check this is Artemis's ``queueQuery``: it takes
        the queue part and asks ``getBinding``, which takes the queue part
        again; a miss names the part it looked for, and 2.11 names a find so.
        """
        name, _ = self.strip(client_name)
        if self.options.fqqn_checks_address:
            return self.manager.get_binding(name, True)
        looked_up = extract_queue_name(name)
        found = self.manager.get_binding(looked_up, False)
        if isinstance(found, NotFound):  # 2.40 on names what getBinding looked for (ARTEMIS-5302)
            return NotFound(looked_up if self.options.lookup_reports_query_name else extract_queue_name(looked_up))
        if isinstance(found, Resolved) and self.options.lookup_reports_query_name:
            return Resolved(found.address, looked_up, found.routing_type)
        if isinstance(found, Ambiguous):
            return Ambiguous(name, found.candidates)
        return found

    # -- configuration ----------------------------------------------------------------

    def set_prefix(self, prefix: str, routing_type: RoutingType | None) -> Outcome:
        """Configure an acceptor prefix, or remove it when no routing type is given."""
        if not prefix and self.options.prefix_match is PrefixMatch.LONGEST:
            return Rejected(InvalidName("", "the prefix is empty"))
        if routing_type is None:
            self.prefixes.pop(prefix, None)
        else:
            self.prefixes[prefix] = routing_type
        return Configured()

    def set_address_settings(self, command: SetAddressSettings) -> Outcome:
        """Record the auto-creation settings for one address match."""
        if not command.match:
            return Rejected(InvalidName("", "the settings match is empty"))
        self.address_settings[command.match] = AddressSettings(
            command.auto_create_addresses, command.auto_create_queues,
            command.default_address_routing_type, command.default_queue_routing_type,
        )
        return Configured()

    def settings_for(self, address: str) -> AddressSettings:
        """The settings entry for ``address``, or the catch-all."""
        return self.address_settings.get(address, self.address_settings[CATCH_ALL])

    # -- session: auto-creation ------------------------------------------------------

    def plan_address(self, address: str, routing_type: RoutingType,
                     settings: AddressSettings) -> Rejected | str | None:
        """Decide what must happen to the address before a send or consume.

        Returns a rejection, ``"create"`` (the address is missing and may be
        auto-created), ``"widen"`` (it lacks the routing type, which may be
        added), or ``None`` (it is fine as it is). Nothing changes yet.
        """
        info = self.manager.get_address_info(address)
        if info is None:
            return "create" if settings.auto_create_addresses else Rejected(AddressNotFound(address))
        if routing_type in info.routing_types:
            return None
        if not settings.auto_create_addresses:
            return Rejected(RoutingTypeNotAllowed(address, routing_type, frozenset(info.routing_types)))
        return "widen"

    def apply_address_plan(self, address: str, routing_type: RoutingType, plan: str | None) -> bool:
        """Carry out a plan from :meth:`plan_address`; True when the address was created."""
        if plan == "create":
            self.manager.add_address_info(AddressInfo(address, {routing_type}, auto_created=True))
            return True
        if plan == "widen":
            info = self.manager.get_address_info(address)
            if info is not None:
                info.routing_types.add(routing_type)
        return False

    def auto_create_queue(self, address: str, queue: str, routing_type: RoutingType, plan: str | None) -> bool:
        """Create ``address::queue`` after a successful check; True when the address was created too."""
        created_address = self.apply_address_plan(address, routing_type, plan)
        self.manager.add_binding(Binding(address, queue, routing_type, auto_created=True))
        return created_address

    # -- session: send and consume ---------------------------------------------------

    def send(self, client_name: str, message_type: RoutingType | None) -> Outcome:
        """Send a message: strip the prefix, auto-create, then work out its destinations."""
        name, prefix_type = self.strip(client_name)
        routing_type = prefix_type or message_type
        if self.options.send_creation is not SendCreation.ON_SEND:
            return self.artemis.core_send(name, routing_type)
        is_fqqn, address, queue = split_fqqn(name)
        problem = check_name(address) or (check_name(queue) if is_fqqn else None)
        if problem:
            return Rejected(InvalidName(address if check_name(address) else queue, problem))
        settings = self.settings_for(address)
        address_type = routing_type or settings.default_address_routing_type
        plan: str | None = None
        if routing_type is not None or self.manager.get_address_info(address) is None:
            # A send without a routing type leaves an existing address as it is (checkAutoCreate: EXISTED).
            decided = self.plan_address(address, address_type, settings)
            if isinstance(decided, Rejected):
                return decided
            plan = decided
        wanted = self.queue_wanted_by_send(is_fqqn, address, queue, routing_type, plan == "create")
        queue_plan: str | None = None
        if wanted is not None and settings.auto_create_queues:
            queue_type = routing_type or settings.default_queue_routing_type
            # The address plan is made for the address's own routing type; the queue may need another.
            decided = self.plan_after_address(address, plan, address_type, queue_type, settings)
            if isinstance(decided, Rejected):
                return decided
            queue_plan = decided
        created_address = self.apply_address_plan(address, address_type, plan)
        created_queue = None
        if wanted is not None and settings.auto_create_queues:
            queue_type = routing_type or settings.default_queue_routing_type
            self.apply_address_plan(address, queue_type, queue_plan)
            self.manager.add_binding(Binding(address, wanted, queue_type, auto_created=True))
            created_queue = BindingKey(address, wanted).fqqn()
        created = address if created_address else None
        copies, anycast = self.manager.get_routing_targets(address, queue if is_fqqn else None, routing_type)
        return Routed(address, copies, anycast, created, created_queue)

    def plan_after_address(self, address: str, address_plan: str | None, address_type: RoutingType,
                           queue_type: RoutingType, settings: AddressSettings) -> Rejected | str | None:
        """The address plan for the queue's routing type, once the address plan has been carried out."""
        if address_plan == "create":
            return None if queue_type is address_type else "widen"
        info = self.manager.get_address_info(address)
        allowed = set(info.routing_types) if info is not None else set()
        if address_plan == "widen":
            allowed.add(address_type)
        if queue_type in allowed:
            return None
        if not settings.auto_create_addresses:
            return Rejected(RoutingTypeNotAllowed(address, queue_type, frozenset(allowed)))
        return "widen"

    def queue_wanted_by_send(self, is_fqqn: bool, address: str, queue: str,
                             routing_type: RoutingType | None, address_is_new: bool) -> str | None:
        """The queue a send would like to auto-create, if any.

        A queue whose name is already taken is never wanted: the broker finds
        it and creates nothing (``checkAutoCreate`` with ``locateQueue``). A
        message without a routing type never asks for one.
        """
        if routing_type is None:
            return None
        if is_fqqn:
            wanted = queue
        elif routing_type is not RoutingType.ANYCAST:
            return None
        elif (not address_is_new and self.options.send_reuses_existing_queue
              and self.manager.bindings_of(address)):
            return None
        else:
            wanted = address
        return None if self.existing_queue(address, wanted) is not None else wanted

    def core_consumer(self, name: str, client_name: str) -> Outcome:
        """``ServerSessionImpl.createConsumer``: ``getBinding`` by the queue part; nothing is created."""
        found = self.manager.get_binding(name, False)
        if isinstance(found, Resolved):
            return Attached(found.address, found.queue)
        if isinstance(found, Ambiguous):
            return Rejected(AmbiguousName(client_name, found.candidates))
        return Rejected(QueueNotFound(client_name))

    def create_consumer(self, client_name: str, consumer_type: RoutingType | None) -> Outcome:
        """Attach a consumer, auto-creating its queue when the settings allow."""
        name, prefix_type = self.strip(client_name)
        if self.options.consumer is ConsumerModel.CORE:
            return self.core_consumer(name, client_name)
        if self.options.consumer is ConsumerModel.JMS and (consumer_type is not RoutingType.MULTICAST
                                                             or split_fqqn(name)[0]):
            return self.artemis.jms_consumer(name, prefix_type, consumer_type, client_name)
        routing_type = prefix_type or consumer_type
        is_fqqn, address, queue = split_fqqn(name)
        found = self.manager.get_binding(name, self.options.fqqn_checks_address)
        if isinstance(found, Resolved):
            if (self.options.anycast_consume_rejects_multicast_queue and not is_fqqn
                    and routing_type is RoutingType.ANYCAST and found.routing_type is RoutingType.MULTICAST):
                return Rejected(QueueRoutingTypeMismatch(found.address, found.queue, found.routing_type,
                                                         routing_type))
            return Attached(found.address, found.queue)
        if isinstance(found, Ambiguous):
            return Rejected(AmbiguousName(client_name, found.candidates))
        if queue and self.existing_queue(address, queue) is not None:
            # An FQQN naming a queue that lives on another address: "no such queue for that address".
            return Rejected(QueueNotFound(client_name))
        for part in (address, queue):
            problem = check_name(part)
            if problem:
                return Rejected(InvalidName(part, problem))
        settings = self.settings_for(address)
        if not settings.auto_create_queues:
            return Rejected(QueueNotFound(client_name))
        queue_type = routing_type or settings.default_queue_routing_type
        plan = self.plan_address(address, queue_type, settings)  # the queue's name is known to be free
        if isinstance(plan, Rejected):
            return plan
        created_address = self.auto_create_queue(address, queue, queue_type, plan)
        return Attached(address, queue, address if created_address else None, BindingKey(address, queue).fqqn())

    # -- observation -----------------------------------------------------------------

    def snapshot(self) -> AddressingState:
        """The broker rendered as a spec state."""
        return AddressingState(
            options=self.options,
            addresses=FrozenMap({
                name: Address(name, frozenset(info.routing_types), info.auto_created)
                for name, info in self.manager.address_info_map.items()
            }),
            queues=FrozenMap({
                (key.address, key.queue): Queue(b.address, b.name, b.routing_type, b.auto_created)
                for key, b in self.manager.name_map.items()
            }),
            name_counts=FrozenMap(self.manager.unique_name_map),
            settings=FrozenMap(self.address_settings),
            prefixes=FrozenMap(self.prefixes),
        )
