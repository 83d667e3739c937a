"""The address manager: where the broker keeps its addresses and bindings.

Introduction
------------
This is the reference counterpart of Artemis's ``SimpleAddressManager`` as
seed 000 proposes to extend it for fully qualified queue names:

``address_info_map``
    address name -> :class:`AddressInfo` (the address and its routing types).
``name_map``
    :class:`BindingKey` (address, queue name) -> :class:`Binding`. Because the
    address is part of the key, two queues called ``q1`` on different
    addresses are two entries.
``unique_name_map``
    queue name -> on how many addresses a queue of that name is bound. The
    seed calls it the map that keeps "the number of addresses a binding is
    bound to"; it is what detects ambiguity.

Looking up a queue (seed 000's three scenarios):

1. a bare name whose count is 1 resolves to its one binding;
2. an FQQN goes straight to ``name_map`` with its (address, queue) key, and
   is never ambiguous;
3. a bare name whose count is 2 or more is ambiguous: the broker cannot
   tell which queue is meant.

Two indexes keep the broker from scanning ``name_map`` (the seed's PR did,
which is linear in the number of queues):

``keys_by_name``
    queue name -> the keys under which that name is bound (a bare name finds
    its candidates directly).
``bindings_by_address``
    address -> its bindings by queue name (Artemis's per-address ``Bindings``,
    which routing and address deletion walk).

All four maps change together whenever a binding is added or removed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from brokerspec.spec.addressing import Ambiguous, LookupOutcome, NotFound, Resolved, RoutingType

from .names import SEPARATOR, split_fqqn


@dataclass(frozen=True)
class BindingKey:
    """The composite key of ``name_map``: the address takes part in hashing and equality."""

    address: str
    queue: str

    def fqqn(self) -> str:
        """The key written as a fully qualified queue name."""
        return self.address + SEPARATOR + self.queue


@dataclass
class Binding:
    """A queue bound to an address."""

    address: str
    name: str
    routing_type: RoutingType
    auto_created: bool = False


@dataclass
class AddressInfo:
    """An address and the routing types it allows."""

    name: str
    routing_types: set[RoutingType] = field(default_factory=set)
    auto_created: bool = False


class AddressManager:
    """The broker's registry of addresses and queue bindings (seed 000's design)."""

    def __init__(self) -> None:
        self.address_info_map: dict[str, AddressInfo] = {}
        self.name_map: dict[BindingKey, Binding] = {}
        self.unique_name_map: dict[str, int] = {}
        self.keys_by_name: dict[str, list[BindingKey]] = {}
        self.bindings_by_address: dict[str, dict[str, Binding]] = {}

    # -- addresses ---------------------------------------------------------------

    def add_address_info(self, info: AddressInfo) -> bool:
        """Register an address; False if one of that name is already there."""
        if info.name in self.address_info_map:
            return False
        self.address_info_map[info.name] = info
        return True

    def remove_address_info(self, name: str) -> AddressInfo | None:
        """Forget an address (its bindings must be gone already)."""
        return self.address_info_map.pop(name, None)

    def get_address_info(self, name: str) -> AddressInfo | None:
        """The address called ``name``, if any."""
        return self.address_info_map.get(name)

    # -- bindings ----------------------------------------------------------------

    def add_binding(self, binding: Binding) -> None:
        """Bind a queue: one new ``name_map`` entry, and one more address for its name."""
        key = BindingKey(binding.address, binding.name)
        self.name_map[key] = binding
        self.unique_name_map[binding.name] = self.unique_name_map.get(binding.name, 0) + 1
        self.keys_by_name.setdefault(binding.name, []).append(key)
        self.bindings_by_address.setdefault(binding.address, {})[binding.name] = binding

    def remove_binding(self, binding: Binding) -> None:
        """Unbind a queue: drop its entry, and count one address fewer for its name."""
        key = BindingKey(binding.address, binding.name)
        del self.name_map[key]
        remaining = self.unique_name_map[binding.name] - 1
        if remaining:
            self.unique_name_map[binding.name] = remaining
            self.keys_by_name[binding.name].remove(key)
        else:
            del self.unique_name_map[binding.name]
            del self.keys_by_name[binding.name]
        on_address = self.bindings_by_address[binding.address]
        del on_address[binding.name]
        if not on_address:
            del self.bindings_by_address[binding.address]

    def bindings_named(self, queue_name: str) -> list[Binding]:
        """Every binding whose queue is called ``queue_name``, in FQQN order."""
        keys = sorted(self.keys_by_name.get(queue_name, []), key=BindingKey.fqqn)
        return [self.name_map[key] for key in keys]

    def bindings_of(self, address: str) -> list[Binding]:
        """Every binding on ``address``, in FQQN order."""
        found = self.bindings_by_address.get(address, {})
        return [found[name] for name in sorted(found)]

    def get_binding(self, name: str, check_fqqn_address: bool) -> LookupOutcome:
        """Find the queue a (prefix-free) client name refers to.

        With ``check_fqqn_address`` off the broker behaves like Artemis's core
        protocol: the address part of an FQQN is thrown away and the queue
        part is looked up as if it were a bare name.
        """
        is_fqqn, address, queue = split_fqqn(name)
        if is_fqqn and check_fqqn_address:
            binding = self.name_map.get(BindingKey(address, queue))
            if binding is None:
                return NotFound(name)
            return Resolved(binding.address, binding.name, binding.routing_type)
        count = self.unique_name_map.get(queue, 0)
        if count == 0:
            return NotFound(name)
        candidates = self.bindings_named(queue)
        if count > 1:
            return Ambiguous(name, tuple(BindingKey(b.address, b.name).fqqn() for b in candidates))
        only = candidates[0]
        return Resolved(only.address, only.name, only.routing_type)

    def get_routing_targets(self, address: str, queue: str | None,
                            routing_type: RoutingType | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The FQQNs a message to ``address`` is copied to and the ANYCAST ones it may go to (``LocalQueueBinding``).

        With ``queue`` (an FQQN's queue part) only that queue, and only if its
        routing type matches; else every MULTICAST queue takes a copy and one
        ANYCAST queue the message, a message without a routing type doing both.
        """
        if queue is not None:
            target = self.name_map.get(BindingKey(address, queue))
            if target is None or routing_type not in (None, target.routing_type):
                return (), ()
            return (BindingKey(address, queue).fqqn(),), ()
        copies: list[str] = []
        anycast: list[str] = []
        bindings = self.bindings_of(address)
        # grouped by routing name (BindingsImpl): a MULTICAST queue named like its address is in the ANYCAST group
        joined = routing_type is None and any(b.routing_type is RoutingType.ANYCAST for b in bindings)
        for binding in bindings:
            fqqn = BindingKey(binding.address, binding.name).fqqn()
            grouped = binding.routing_type is RoutingType.ANYCAST or (joined and binding.name == address)
            if not grouped and routing_type is not RoutingType.ANYCAST:
                copies.append(fqqn)
            if grouped and routing_type is not RoutingType.MULTICAST:
                anycast.append(fqqn)
        return tuple(copies), tuple(anycast)

