"""The address model: addresses, queues, settings, and the invariants they keep.

Introduction
------------
A broker holds *addresses* and *queues*. An address has a name and a set of
routing types it allows (ANYCAST, MULTICAST, both, or none). A queue belongs
to exactly one address and has one routing type that its address allows
(Artemis ``address-model`` manual; rule ADDR-MODEL).

The state also holds what governs client-facing operations: routing-type
prefixes configured on the acceptor, and per-address settings for
auto-creation (Artemis ``address-settings``). Settings are matched exactly by
address name, falling back to the catch-all entry ``#``; Artemis's wildcard
matching of setting keys is out of scope.

Alongside the queues, the state keeps the *per-name address count* of seed 000
(its ``uniqueNameMap``): for every queue name, on how many addresses it is
bound. The count is what makes a bare name ambiguous, so the spec keeps it
explicitly and states as an invariant that it always equals the number of
addresses binding the name. Under released Artemis every count is 0 or 1.

Invariants (checked by :func:`invariant_violations`):

- every queue's address exists;
- every queue's routing type is allowed by its address;
- a queue is stored under the key ``(its address, its name)``;
- every address and queue name is valid: non-empty and without ``::`` under
  the seed's strict names; under Artemis's reading of names (``name_parsing``
  not STRICT) a queue name is non-empty and an address name holds no ``::``
  (it may be empty: ``AddressInfo`` accepts that);
- the per-name count equals the number of addresses binding that name,
  and no name has a zero count;
- with broker-wide name scope, no count exceeds 1;
- the catch-all settings entry ``#`` is always present.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..frozen import FrozenMap
from ..profiles import AddressingOptions, NameParsing, Profile, QueueNameScope
from .names import FQQN_SEPARATOR, RoutingType, name_problem, to_fully_qualified

CATCH_ALL = "#"


@dataclass(frozen=True)
class Address:
    """An address: its name, the routing types it allows, whether it was auto-created."""

    name: str
    routing_types: frozenset[RoutingType]
    auto_created: bool = False


@dataclass(frozen=True)
class Queue:
    """A queue bound to one address, with one routing type."""

    address: str
    name: str
    routing_type: RoutingType
    auto_created: bool = False

    @property
    def fqqn(self) -> str:
        """The queue's fully qualified name ``address::name``."""
        return to_fully_qualified(self.address, self.name)


@dataclass(frozen=True)
class AddressSettings:
    """Auto-creation settings for one address match (Artemis ``address-settings``).

    Defaults as Artemis: auto-create addresses and queues on, both default
    routing types MULTICAST (``AddressSettings`` defaults; rule ADDR-SETTINGS).
    """

    auto_create_addresses: bool = True
    auto_create_queues: bool = True
    default_address_routing_type: RoutingType = RoutingType.MULTICAST
    default_queue_routing_type: RoutingType = RoutingType.MULTICAST


QueueKey = tuple[str, str]


@dataclass(frozen=True)
class AddressingState:
    """The whole address model of one broker, as an immutable value."""

    options: AddressingOptions
    addresses: FrozenMap[str, Address]
    queues: FrozenMap[QueueKey, Queue]
    name_counts: FrozenMap[str, int]
    settings: FrozenMap[str, AddressSettings]
    prefixes: FrozenMap[str, RoutingType]


def initial_state(profile: Profile) -> AddressingState:
    """The empty broker for ``profile``: no addresses, default settings, no prefixes."""
    return AddressingState(
        options=profile.addressing,
        addresses=FrozenMap(),
        queues=FrozenMap(),
        name_counts=FrozenMap(),
        settings=FrozenMap({CATCH_ALL: AddressSettings()}),
        prefixes=FrozenMap(),
    )


def get_settings(state: AddressingState, address: str) -> AddressSettings:
    """The settings that govern ``address``: its exact entry, else the catch-all."""
    return state.settings.get(address, state.settings[CATCH_ALL])


def get_queues_named(state: AddressingState, name: str) -> tuple[Queue, ...]:
    """Every queue called ``name``, on any address, ordered by FQQN."""
    return tuple(sorted((q for q in state.queues.values() if q.name == name), key=lambda q: q.fqqn))


def get_queues_of(state: AddressingState, address: str) -> tuple[Queue, ...]:
    """Every queue bound to ``address``, ordered by FQQN."""
    return tuple(sorted((q for q in state.queues.values() if q.address == address), key=lambda q: q.fqqn))


def compute_name_count(state: AddressingState, name: str) -> int:
    """The number of addresses on which a queue called ``name`` is bound (by definition)."""
    return len({q.address for q in state.queues.values() if q.name == name})


def invariant_violations(state: AddressingState) -> list[str]:
    """Every invariant the state breaks, in words; empty when the state is valid."""
    problems: list[str] = []
    strict = state.options.name_parsing is NameParsing.STRICT
    for key, queue in state.queues.items():
        if key != (queue.address, queue.name):
            problems.append(f"queue {queue.fqqn} is stored under key {key!r}")
        address = state.addresses.get(queue.address)
        if address is None:
            problems.append(f"queue {queue.fqqn} is bound to missing address {queue.address!r}")
        elif queue.routing_type not in address.routing_types:
            problems.append(f"queue {queue.fqqn} is {queue.routing_type.value} but its address allows only "
                            f"{sorted(t.value for t in address.routing_types)}")
        if (name_problem(queue.name) is not None) if strict else queue.name == "":
            problems.append(f"queue name {queue.name!r} is invalid")
    for name, address in state.addresses.items():
        invalid = name_problem(name) is not None if strict else FQQN_SEPARATOR in name
        if name != address.name or invalid:
            problems.append(f"address {name!r} is invalid or stored under another name")
    names = {q.name for q in state.queues.values()} | set(state.name_counts)
    for name in sorted(names):
        expected = compute_name_count(state, name)
        recorded = state.name_counts.get(name, 0)
        if name in state.name_counts and recorded == 0:
            problems.append(f"name {name!r} has a zero count entry")
        if recorded != expected:
            problems.append(f"name {name!r} has count {recorded} but is bound on {expected} addresses")
        if state.options.name_scope is QueueNameScope.BROKER and expected > 1:
            problems.append(f"name {name!r} is bound on {expected} addresses under broker-wide names")
    if CATCH_ALL not in state.settings:
        problems.append("the catch-all settings entry '#' is missing")
    return problems


def is_valid_state(state: AddressingState) -> bool:
    """True when ``state`` keeps every invariant of the address model."""
    return not invariant_violations(state)
