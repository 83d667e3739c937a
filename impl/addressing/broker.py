"""The fast address model: indexed, incremental, and free of parsing on the hot path.

Introduction
------------
Seed 000 worries that FQQN support costs string work on every request
(``concat()`` and conversions). This implementation does that work once, when
a queue is created, and never when it is looked up:

``_names``
    client name -> the lookup outcome for that name, already built. Two
    kinds of key share the one dict, and cannot collide because a queue
    name never contains ``::`` while an FQQN always does:

    - a bare queue name -> ``Resolved`` when one address binds it,
      ``Ambiguous`` (sorted candidates) when several do; names bound
      nowhere are absent;
    - ``"address::queue"`` -> that queue's ``Resolved``. The FQQN string is
      concatenated once, at create time, so an FQQN lookup is one
      ``dict.get`` on the string the client sent, with no split. These keys
      exist only when the profile checks an FQQN's address part: when it is
      ignored (core protocol), ``a1::q1`` means the bare name ``q1``, which
      may be ambiguous, and such lookups take the slow path. Nor do they
      exist for an address whose name ends in ``:``: ``"a:" + "::q"`` is
      ``"a:::q"``, which a client means as address ``a``, queue ``:q``.
``_by_name``
    queue name -> {address -> queue record}; its length is the per-name
    address count of seed 000.
``_addresses``
    address name -> address record, which holds its queues by name.

A lookup is therefore one ``_names.get(name)``; only a miss (a name nobody bound, or the core protocol's address-blind FQQN mode)
takes the slow path that parses. Every create and delete updates the four
indexes for the one name it touches. :meth:`FastBroker.check_valid` checks
that the indexes agree; :meth:`FastBroker.snapshot` renders spec state.

The methods named ``_remember_queue``, ``_forget_queue``, ``_bare_outcome``
and ``_split`` are the seams the planted-bug fixtures override.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from brokerspec.spec import (
    ConsumerModel,
    FrozenMap,
    InvariantBroken,
    NameParsing,
    PrefixMatch,
    Profile,
    QueueNameScope,
    SendCreation,
)
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

from . import artemis_paths

SEP = "::"
ANYCAST = RoutingType.ANYCAST
MULTICAST = RoutingType.MULTICAST
EMPTY_NAME = "the name is empty"
SEPARATOR_IN_NAME = "the name contains the FQQN separator '::'"


def split_fqqn(name: str) -> tuple[bool, str, str]:
    """(is FQQN, address part, queue part), splitting at the first ``::``."""
    index = name.find(SEP)
    if index < 0:
        return False, name, name
    return True, name[:index], name[index + 2:]


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot name an address or queue, else None."""
    if not name:
        return EMPTY_NAME
    if SEP in name:
        return SEPARATOR_IN_NAME
    return None


class _Queue:
    __slots__ = ("address", "name", "routing_type", "auto_created", "fqqn", "fqqn_parses_back", "resolved")

    def __init__(self, address: str, name: str, routing_type: RoutingType, auto_created: bool) -> None:
        self.address = address
        self.name = name
        self.routing_type = routing_type
        self.auto_created = auto_created
        self.fqqn = address + SEP + name
        # "a:" + "::" + "q" is "a:::q", which parses as address "a": such an FQQN names another queue.
        self.fqqn_parses_back = not address.endswith(":")
        self.resolved = Resolved(address, name, routing_type)


class _Address:
    __slots__ = ("name", "routing_types", "auto_created", "queues")

    def __init__(self, name: str, routing_types: set[RoutingType], auto_created: bool) -> None:
        self.name = name
        self.routing_types = routing_types
        self.auto_created = auto_created
        self.queues: dict[str, _Queue] = {}


class FastBroker:
    """The address model of one broker, built for speed and checked against the spec."""

    _split: Callable[[str], tuple[bool, str, str]] = staticmethod(split_fqqn)

    def __init__(self, profile: Profile) -> None:
        options = profile.addressing
        self.profile = profile
        self._broker_scope = options.name_scope is QueueNameScope.BROKER
        self._check_fqqn = options.fqqn_checks_address
        self._refuse_anycast_on_multicast = options.anycast_consume_rejects_multicast_queue
        self._send_reuses_queue = options.send_reuses_existing_queue
        self._drops_auto_created_address = options.delete_queue_removes_auto_created_address
        self._reads_names = options.name_parsing is not NameParsing.STRICT
        self._queue_configuration = options.name_parsing is NameParsing.QUEUE_CONFIGURATION
        self._query_name = options.lookup_reports_query_name
        self._send_creation = options.send_creation
        self._jms = options.consumer is ConsumerModel.JMS
        self._core = options.consumer is ConsumerModel.CORE
        self._hash_prefixes = options.prefix_match is PrefixMatch.HASH_MAP
        self._addresses: dict[str, _Address] = {}
        self._by_name: dict[str, dict[str, _Queue]] = {}
        self._names: dict[str, LookupOutcome] = {}
        self._prefixes: dict[str, RoutingType] = {}
        self._prefix_order: tuple[str, ...] = ()
        self._settings: dict[str, AddressSettings] = {CATCH_ALL: AddressSettings()}
        self._dispatch: dict[type[Any], Callable[[Any], Outcome]] = {
            CreateAddress: lambda c: self.create_address(c.address, c.routing_types),
            DeleteAddress: lambda c: self.delete_address(c.address, c.force),
            CreateQueue: lambda c: self.create_queue(c.address, c.queue, c.routing_type),
            DeleteQueue: lambda c: self.delete_queue(c.name),
            Lookup: lambda c: self.lookup(c.name),
            Send: lambda c: self.send(c.name, c.routing_type),
            Consume: lambda c: self.consume(c.name, c.routing_type),
            SetPrefix: lambda c: self.set_prefix(c.prefix, c.routing_type),
            SetAddressSettings: self.set_address_settings,
            QueryAddress: lambda c: self.query_address(c.address),
        }

    def execute(self, command: AddressingCommand) -> Outcome:
        """Run any addressing command."""
        return self._dispatch[type(command)](command)

    # -- lookup: the hot path --------------------------------------------------------

    def lookup(self, name: str) -> LookupOutcome:
        """Resolve a client name: one dict probe unless it misses."""
        if self._prefix_order:
            name = self._strip(name)[0]
        if not self._check_fqqn:
            return self._query(name)
        hit = self._names.get(name)
        return hit if hit is not None else self._resolve_miss(name)

    def _query(self, name: str) -> LookupOutcome:
        """Artemis's ``queueQuery``: the queue part, stripped once more by ``getBinding``."""
        if SEP not in name:
            hit = self._names.get(name)
            return hit if hit is not None else NotFound(name)
        looked_up = self._split(name)[2]
        bare = self._split(looked_up)[2]
        hit = self._names.get(bare)
        if hit is None:
            return NotFound(looked_up if self._query_name else bare)
        if isinstance(hit, Ambiguous):
            return Ambiguous(name, hit.candidates)
        if self._query_name and isinstance(hit, Resolved):
            return Resolved(hit.address, looked_up, hit.routing_type)
        return hit

    def _resolve_miss(self, name: str) -> LookupOutcome:
        is_fqqn, _, queue = self._split(name)
        if not is_fqqn or self._check_fqqn:
            return NotFound(name)
        hit = self._names.get(queue)
        if hit is None:
            return NotFound(name)
        if isinstance(hit, Ambiguous):
            return Ambiguous(name, hit.candidates)
        return hit

    def _strip(self, name: str) -> tuple[str, RoutingType | None]:
        for prefix in self._prefix_order:
            if name.startswith(prefix):
                return name[len(prefix):], self._prefixes[prefix]
        return name, None

    # -- index maintenance ---------------------------------------------------------------

    def _bare_outcome(self, name: str, by_address: dict[str, _Queue]) -> LookupOutcome:
        if len(by_address) == 1:  # equivalent mutants (Eq_LtE): both callers pass a non-empty map
            return next(iter(by_address.values())).resolved
        return Ambiguous(name, tuple(sorted(q.fqqn for q in by_address.values())))

    def _remember_queue(self, queue: _Queue) -> None:
        self._addresses[queue.address].queues[queue.name] = queue
        by_address = self._by_name.get(queue.name)
        if by_address is None:
            self._by_name[queue.name] = {queue.address: queue}
            self._names[queue.name] = queue.resolved
        else:
            by_address[queue.address] = queue
            self._names[queue.name] = self._bare_outcome(queue.name, by_address)
        if self._check_fqqn and queue.fqqn_parses_back:
            self._names[queue.fqqn] = queue.resolved

    def _forget_queue(self, queue: _Queue) -> None:
        del self._addresses[queue.address].queues[queue.name]
        by_address = self._by_name[queue.name]
        del by_address[queue.address]
        if by_address:
            self._names[queue.name] = self._bare_outcome(queue.name, by_address)
        else:
            del self._by_name[queue.name]
            del self._names[queue.name]
        if self._check_fqqn and queue.fqqn_parses_back:
            del self._names[queue.fqqn]

    def _blocking_queue(self, address: str, name: str) -> _Queue | None:
        by_address = self._by_name.get(name)
        if by_address is None:
            return None
        if self._broker_scope:
            return by_address[min(by_address)]
        return by_address.get(address)

    def _resolve_queue(self, name: str) -> _Queue | LookupOutcome:
        """The queue record a name resolves to, or the NotFound / Ambiguous outcome."""
        found = self._lookup_stripped(name)
        if isinstance(found, Resolved):
            return self._addresses[found.address].queues[found.queue]
        return found

    # -- management ------------------------------------------------------------------

    def create_address(self, name: str, routing_types: frozenset[RoutingType]) -> Outcome:
        """Create an address (Artemis keeps an FQQN's address part and refuses no name)."""
        if self._reads_names:
            name = self._split(name)[1]
        else:
            problem = name_problem(name)
            if problem is not None:
                return Rejected(InvalidName(name, problem))
        if name in self._addresses:
            return Rejected(AddressExists(name))
        self._addresses[name] = _Address(name, set(routing_types), False)
        return AddressCreated(name)

    def delete_address(self, given: str, force: bool) -> Outcome:
        """Delete an address, with its queues when forced."""
        name = self._split(given)[1] if self._reads_names else given
        address = self._addresses.get(name)
        if address is None:
            return Rejected(AddressNotFound(given))
        doomed = [address.queues[q] for q in sorted(address.queues)]
        fqqns = tuple(q.fqqn for q in doomed)
        if doomed and not force:
            return Rejected(AddressHasQueues(given, fqqns))
        for queue in doomed:
            self._forget_queue(queue)
        del self._addresses[name]
        return AddressDeleted(name, fqqns)

    def create_queue(self, address: str, name: str, routing_type: RoutingType) -> Outcome:
        """Create a queue on an existing address."""
        if self._reads_names:
            real_address, real_name = artemis_paths.management_names(self, address, name)
            refused = artemis_paths.server_create_queue(self, real_address, real_name, routing_type, False,
                                                        shown=(address, name))
            return refused if refused is not None else QueueCreated(real_address, real_name)
        if not name or SEP in name:
            return Rejected(InvalidName(name, EMPTY_NAME if not name else SEPARATOR_IN_NAME))
        if name in self._by_name:
            blocking = self._blocking_queue(address, name)
            if blocking is not None:
                return Rejected(QueueExists(name, blocking.address))
        record = self._addresses.get(address)
        if record is None:
            return Rejected(AddressNotFound(address))
        if routing_type not in record.routing_types:
            return Rejected(RoutingTypeNotAllowed(address, routing_type, frozenset(record.routing_types)))
        self._remember_queue(_Queue(address, name, routing_type, False))
        return QueueCreated(address, name)

    def delete_queue(self, client_name: str) -> Outcome:
        """Delete the queue a client name resolves to."""
        name = self._strip(client_name)[0] if self._prefix_order else client_name
        found = self._resolve_queue(name)
        if isinstance(found, _Queue):
            self._forget_queue(found)
            address = self._addresses[found.address]
            if self._drops_auto_created_address and address.auto_created and not address.queues:
                del self._addresses[found.address]  # ARTEMIS-3541
            return QueueDeleted(found.address, found.name)
        if isinstance(found, Ambiguous):
            return Rejected(AmbiguousName(client_name, found.candidates))
        return Rejected(QueueNotFound(client_name))

    # -- configuration ---------------------------------------------------------------

    def set_prefix(self, prefix: str, routing_type: RoutingType | None) -> Outcome:
        """Configure or remove an acceptor prefix."""
        if not prefix and not self._hash_prefixes:
            return Rejected(InvalidName("", "the prefix is empty"))
        if routing_type is None:
            self._prefixes.pop(prefix, None)
        else:
            self._prefixes[prefix] = routing_type
        self._prefix_order = self._order_prefixes()
        return Configured()

    def _order_prefixes(self) -> tuple[str, ...]:
        """The order prefixes are tried in: Artemis's HashMap order, or longest first."""
        if self._hash_prefixes:
            keys = [p for p, t in self._prefixes.items() if t is ANYCAST] + [
                p for p, t in self._prefixes.items() if t is MULTICAST]
            return artemis_paths.java_hash_map_order(keys)
        return tuple(sorted(self._prefixes, key=len, reverse=True))

    def set_address_settings(self, command: SetAddressSettings) -> Outcome:
        """Set auto-creation settings for one match."""
        if not command.match:
            return Rejected(InvalidName("", "the settings match is empty"))
        self._settings[command.match] = AddressSettings(
            command.auto_create_addresses, command.auto_create_queues,
            command.default_address_routing_type, command.default_queue_routing_type,
        )
        return Configured()

    # -- auto-creation ---------------------------------------------------------------

    def _address_change(self, name: str, routing_type: RoutingType, allowed: set[RoutingType] | None,
                        settings: AddressSettings) -> Rejected | None:
        """Whether ``routing_type`` may be had on address ``name`` whose types are ``allowed`` (None: missing)."""
        if allowed is None:
            return None if settings.auto_create_addresses else Rejected(AddressNotFound(name))
        if routing_type in allowed or settings.auto_create_addresses:
            return None
        return Rejected(RoutingTypeNotAllowed(name, routing_type, frozenset(allowed)))

    def _auto_create(self, address: str, address_type: RoutingType | None, queue: str | None,
                     queue_type: RoutingType, settings: AddressSettings) -> Rejected | bool:
        """Check, then make, what a send or consume needs; True when the address is new.

        The checks run in the spec's order: the address for the send's own
        routing type (``address_type``; None for a consume, which has only the
        queue's), then a clashing queue name, then the queue's routing type.
        Nothing changes until every check has passed.
        """
        record = self._addresses.get(address)
        allowed = None if record is None else record.routing_types
        after = allowed
        if address_type is not None:
            refusal = self._address_change(address, address_type, allowed, settings)
            if refusal is not None:
                return refusal
            after = {address_type} if allowed is None else allowed | {address_type}  # equivalent mutants (BitAnd): a queue here is a typed send's, of this very type
        if queue is not None:
            blocking = self._blocking_queue(address, queue)
            if blocking is not None:
                return Rejected(QueueExists(queue, blocking.address))
            refusal = self._address_change(address, queue_type, after, settings)
            if refusal is not None:
                return refusal
        first_type = queue_type if address_type is None else address_type
        created = record is None
        if record is None:
            record = self._addresses[address] = _Address(address, {first_type}, True)
        else:
            record.routing_types.add(first_type)
        if queue is not None:
            record.routing_types.add(queue_type)
            self._remember_queue(_Queue(address, queue, queue_type, True))
        return created

    def send(self, client_name: str, message_type: RoutingType | None) -> Outcome:
        """Send: auto-create what the settings allow, then report the destinations."""
        name, prefix_type = self._strip(client_name) if self._prefix_order else (client_name, None)
        routing_type = prefix_type or message_type
        if self._send_creation is not SendCreation.ON_SEND:
            return artemis_paths.core_send(self, name, routing_type)
        is_fqqn, address, queue = self._split(name)
        problem = name_problem(address)
        if problem is not None:
            return Rejected(InvalidName(address, problem))
        if is_fqqn:
            problem = name_problem(queue)
            if problem is not None:
                return Rejected(InvalidName(queue, problem))
        settings = self._settings.get(address) or self._settings[CATCH_ALL]
        record = self._addresses.get(address)
        wanted: str | None = None
        if routing_type is None:
            pass  # an untyped send creates no queue (checkAutoCreate: EXISTED)
        elif is_fqqn:
            if record is None or queue not in record.queues:
                wanted = queue
        elif routing_type is ANYCAST:
            if record is None:
                wanted = address
            elif self._send_reuses_queue:
                wanted = None if record.queues else address
            elif address not in record.queues:
                wanted = address
        if wanted is not None and (not settings.auto_create_queues
                                   or (wanted in self._by_name and self._blocking_queue(address, wanted))):
            wanted = None
        # An untyped send leaves an existing address as it is; only a missing one is made.
        address_type = (routing_type or settings.default_address_routing_type
                        if routing_type is not None or record is None else None)
        if address_type is None and wanted is None:
            outcome: Rejected | bool = False
        else:
            outcome = self._auto_create(address, address_type, wanted,
                                        routing_type or settings.default_queue_routing_type, settings)
        if isinstance(outcome, Rejected):
            return outcome
        created_address = address if outcome else None
        created_queue = address + SEP + wanted if wanted is not None else None
        queues = self._addresses[address].queues
        if is_fqqn:
            target = queues.get(queue)
            if target is None or (routing_type is not None and routing_type is not target.routing_type):
                return Routed(address, (), (), created_address, created_queue)
            return Routed(address, (target.fqqn,), (), created_address, created_queue)
        copies: list[str] = []
        anycast: list[str] = []
        # a MULTICAST queue named like its address shares the ANYCAST group's routing name (BindingsImpl)
        joined = routing_type is None and any(q.routing_type is ANYCAST for q in queues.values())
        for queue_name in sorted(queues):
            target = queues[queue_name]
            if target.routing_type is MULTICAST and not (joined and queue_name == address):
                if routing_type is not ANYCAST:
                    copies.append(target.fqqn)
            elif routing_type is not MULTICAST:
                anycast.append(target.fqqn)
        return Routed(address, tuple(copies), tuple(anycast), created_address, created_queue)

    def _core_consumer(self, name: str, client_name: str) -> Outcome:
        """A core-client consumer: the queue part alone decides, and nothing is created (ADDR-CONSUME-CORE)."""
        by_address = self._by_name.get(self._split(name)[2])
        if not by_address:
            return Rejected(QueueNotFound(client_name))
        if len(by_address) > 1:
            return Rejected(AmbiguousName(client_name, tuple(sorted(q.fqqn for q in by_address.values()))))
        queue = next(iter(by_address.values()))
        return Attached(queue.address, queue.name)

    def consume(self, client_name: str, consumer_type: RoutingType | None) -> Outcome:
        """Attach a consumer, auto-creating its queue when allowed."""
        name, prefix_type = self._strip(client_name) if self._prefix_order else (client_name, None)
        if self._core:
            return self._core_consumer(name, client_name)
        if self._jms and (consumer_type is not MULTICAST or SEP in name):
            return artemis_paths.jms_consumer(self, name, prefix_type, consumer_type, client_name)
        routing_type = prefix_type or consumer_type
        found = self._lookup_stripped(name)
        is_fqqn, address, queue = self._split(name)
        if isinstance(found, Resolved):
            if (self._refuse_anycast_on_multicast and routing_type is ANYCAST and not is_fqqn
                    and found.routing_type is MULTICAST):
                return Rejected(QueueRoutingTypeMismatch(found.address, found.queue, MULTICAST, ANYCAST))
            return Attached(found.address, found.queue)
        if isinstance(found, Ambiguous):
            return Rejected(AmbiguousName(client_name, found.candidates))
        if queue and self._blocking_queue(address, queue) is not None:
            return Rejected(QueueNotFound(client_name))
        problem = name_problem(address)
        if problem is not None:
            return Rejected(InvalidName(address, problem))
        problem = name_problem(queue)
        if problem is not None:
            return Rejected(InvalidName(queue, problem))
        settings = self._settings.get(address) or self._settings[CATCH_ALL]
        if not settings.auto_create_queues:
            return Rejected(QueueNotFound(client_name))
        queue_type = routing_type or settings.default_queue_routing_type
        outcome = self._auto_create(address, None, queue, queue_type, settings)
        if isinstance(outcome, Rejected):
            return outcome
        return Attached(address, queue, address if outcome else None, address + SEP + queue)

    def query_address(self, name: str) -> AddressQueried:
        """An address query: the address part of the prefix-free name, its routing types and its queues."""
        if self._prefix_order:
            name = self._strip(name)[0]
        address = self._split(name)[1]
        found = self._addresses.get(address)
        if found is None:
            return AddressQueried(address, False)
        return AddressQueried(address, True, frozenset(found.routing_types), tuple(sorted(found.queues)))

    def _lookup_stripped(self, name: str) -> LookupOutcome:
        hit = self._names.get(name) if self._check_fqqn or SEP not in name else None
        return hit if hit is not None else self._resolve_miss(name)

    # -- observation -----------------------------------------------------------------

    def snapshot(self) -> AddressingState:
        """The broker as a spec state."""
        return AddressingState(
            options=self.profile.addressing,
            addresses=FrozenMap({
                a.name: Address(a.name, frozenset(a.routing_types), a.auto_created) for a in self._addresses.values()
            }),
            queues=FrozenMap({
                (q.address, q.name): Queue(q.address, q.name, q.routing_type, q.auto_created)
                for a in self._addresses.values() for q in a.queues.values()
            }),
            name_counts=FrozenMap({name: len(by_address) for name, by_address in self._by_name.items()}),
            settings=FrozenMap(self._settings),
            prefixes=FrozenMap(self._prefixes),
        )

    def check_valid(self) -> None:
        """Raise :class:`InvariantBroken` unless every private index agrees with the others."""
        fail = _Checker()
        all_queues = {(q.address, q.name): q for a in self._addresses.values() for q in a.queues.values()}
        for (address, name), queue in all_queues.items():
            fail.unless(queue.address == address and queue.name == name, f"queue {queue.fqqn} filed under {address!r}")
            fail.unless(self._by_name.get(name, {}).get(address) is queue, f"{queue.fqqn} missing from _by_name")
            if self._check_fqqn and queue.fqqn_parses_back:
                fail.unless(self._names.get(queue.fqqn) is queue.resolved, f"{queue.fqqn} missing from _names")
            fail.unless(queue.routing_type in self._addresses[address].routing_types,
                        f"{queue.fqqn} has a routing type its address does not allow")
        indexed = {(a, n) for n, by_address in self._by_name.items() for a in by_address}
        fail.unless(indexed == set(all_queues), f"_by_name lists {sorted(indexed ^ set(all_queues))} wrongly")
        fqqn_keys = {key for key in self._names if SEP in key} if self._check_fqqn else set()
        expected_fqqns = {q.fqqn for q in all_queues.values() if q.fqqn_parses_back} if self._check_fqqn else set()
        fail.unless(fqqn_keys == expected_fqqns, f"_names has stale or missing FQQNs {sorted(fqqn_keys ^ expected_fqqns)}")
        fail.unless(set(self._names) - fqqn_keys == set(self._by_name), "_names and _by_name disagree on bound names")
        for name, by_address in self._by_name.items():
            fail.unless(bool(by_address), f"empty _by_name entry for {name!r}")
            fail.unless(self._names.get(name) == self._bare_outcome(name, by_address),
                        f"stale _names entry for {name!r}")
            fail.unless(not self._broker_scope or len(by_address) == 1, f"{name!r} bound twice under broker scope")
        fail.unless(self._prefix_order == self._order_prefixes(), "stale prefix order")
        fail.raise_if_any()


class _Checker:
    """Collects broken invariants and raises them together."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def unless(self, holds: bool, problem: str) -> None:
        if not holds:
            self.problems.append(problem)

    def raise_if_any(self) -> None:
        if self.problems:
            raise InvariantBroken("; ".join(self.problems))
