"""The lockstep state machine: Hypothesis drives spec and implementations together.

Introduction
------------
One thin machine class per profile and set of subjects, run by
:mod:`.engine` (Hypothesis draws its scenarios). Each rule is named after a
broker operation and only builds the command;
:class:`~brokerspec.check.lockstep.Lockstep` does the rest. When a subject
parts from the spec, Hypothesis shrinks the run, and the
:class:`~brokerspec.check.lockstep.DivergenceError` says which step and which
field differed and prints the script in broker verbs.

Machines are made by :func:`make_machine` from a profile and a mapping of
subject factories, so the reference, the fast implementation and every
planted-bug variant run through the same rules (choose implementations
explicitly; never patch one in).

A run can leave operations out (:class:`OpsMachine`): every rule says which
operations it issues (:func:`.engine.issues`), and while a run's ``excluded`` set
holds all of them the rule is not drawn. The set may grow during the run
(``brokerspec fuzz`` adds an operation the SUT answers with an ``error``
reply, ``docs/sut-protocol.md``), so later scenarios stop drawing it at once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from typing import Any, TypeVar, cast

from brokerspec.spec import Profile
from brokerspec.spec.addressing import (
    AddressingCommand,
    Consume,
    CreateAddress,
    CreateQueue,
    DeleteAddress,
    DeleteQueue,
    Lookup,
    QueryAddress,
    RoutingType,
    Send,
    SetAddressSettings,
    SetPrefix,
)

from .draws import booleans
from .domains import ADDRESSING, Domain
from .engine import initialize, issues, rule
from .lockstep import Lockstep, SubjectFactory
from .strategies import Draws as s


class RunStats:
    """Counts what a checker run did: scenarios started, steps taken and the argument values drawn."""

    DISTINCT_LIMIT = 40
    """Distinct values kept per operation argument (more are counted, not kept)."""
    KEPT_LIMIT = 10_000
    """Distinct whole commands remembered as fully noted (a shortcut only; memory stays bounded)."""

    def __init__(self) -> None:
        self.examples = 0
        self.steps = 0
        self.drawn: dict[tuple[str, str], set[object]] = {}
        """(operation, argument) -> the distinct values drawn for it, up to :data:`DISTINCT_LIMIT`."""
        self.more: dict[tuple[str, str], int] = {}
        """(operation, argument) -> draws of values beyond the limit (not all of them new)."""
        self._kept: set[object] = set()
        """Commands all of whose values are kept: noting one again changes nothing but the step count."""

    def note(self, command: object) -> None:
        """Count one step and remember the values of its arguments."""
        self.steps += 1
        try:
            if command in self._kept:
                return  # every value of this very command is kept already: nothing to add or count
        except TypeError:
            command_kept = False
        else:
            command_kept = True
        op = str(getattr(command, "op", type(command).__name__))
        for name in _field_names(type(command)):
            value = getattr(command, name)
            inner = _field_names(type(value))
            if inner:  # a configuration object: its fields one by one, e.g. connect.config.include
                for part in inner:
                    command_kept &= self._remember(op, f"{name}.{part}", getattr(value, part))
            else:
                command_kept &= self._remember(op, name, value)
        if command_kept and len(self._kept) < self.KEPT_LIMIT:
            self._kept.add(command)

    def _remember(self, op: str, name: str, value: object) -> bool:
        """Keep ``value`` if there is room; whether it is kept (now or before)."""
        try:
            hash(value)
        except TypeError:
            value = repr(value)
        values = self.drawn.setdefault((op, name), set())
        if value in values:
            return True
        if len(values) < self.DISTINCT_LIMIT:
            values.add(value)
            return True
        self.more[(op, name)] = self.more.get((op, name), 0) + 1
        return False


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(kind: type) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(kind)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(kind)) if dataclasses.is_dataclass(kind) else ()
        _FIELD_NAMES[kind] = names
    return names


class OpsMachine:
    """A lockstep machine whose runs may leave operations out.

    ``excluded`` is the run's live set of operation names no longer drawn
    (empty unless :func:`with_excluded` gave one). A rule marked with
    :func:`.engine.issues` is drawn only while one of its operations is not
    excluded; a rule that issues several commands (a burst, a stall) skips
    the excluded ones through :meth:`leaves_out`.
    """

    excluded: AbstractSet[str] = frozenset()

    def draws_any(self, ops: tuple[str, ...]) -> bool:
        """Whether one of ``ops`` is still drawn."""
        return any(op not in self.excluded for op in ops)

    def leaves_out(self, command: Any) -> bool:
        """Whether ``command``'s operation is left out of this run (the step is then not taken)."""
        return str(command.op) in self.excluded

    def teardown(self) -> None:
        """Called when a scenario ends, however it ends."""


_Machine = TypeVar("_Machine", bound=OpsMachine)


def with_excluded(machine: type[_Machine], excluded: AbstractSet[str] | None) -> type[_Machine]:
    """``machine`` itself when no operation can be left out (``excluded`` None); else a subclass that leaves out
    the operations in ``excluded``, a set its caller may add to while the run goes on."""
    if excluded is None:
        return machine
    excluding = type(machine.__name__, (machine,), {"excluded": excluded})
    excluding.__qualname__ = machine.__qualname__
    return cast(type[_Machine], excluding)


def make_machine(
    profile: Profile, subjects: Mapping[str, SubjectFactory], stats: RunStats | None = None,
    domain: Domain = ADDRESSING, permissive: bool = False, excluded: AbstractSet[str] | None = None,
    wide: bool = False, window: int = 1,
) -> type[OpsMachine]:
    """A state machine class that runs ``subjects`` in lockstep with the spec of ``domain`` under ``profile``.

    ``permissive`` accepts any outcome the rules allow (domains with a judge only). ``excluded``, when given,
    holds the operations the run leaves out (see :class:`OpsMachine`); the caller may add to it as it goes.
    ``wide`` asks for the domain's wide alphabet where it has one (duplicate detection: larger caches, more IDs;
    load balancing: more addresses, queues and consumers; topologies: more brokers, destinations and consumers).
    ``window`` above 1 defers the comparison of a single batching subject (see :class:`.lockstep.Lockstep`).
    """
    counts = stats if stats is not None else RunStats()
    if domain.name == "balancing":
        from .balancing_machine import make_balancing_machine

        return with_excluded(make_balancing_machine(profile, subjects, counts, permissive, window, wide), excluded)
    if permissive:
        raise ValueError(f"the {domain.name} domain allows exactly one outcome per step; it has no permissive mode")
    if domain.name == "duplicates":
        from .duplicates_machine import make_duplicates_machine

        return with_excluded(make_duplicates_machine(profile, subjects, counts, wide, window), excluded)
    if domain.name == "topologies":
        from .topologies_machine import make_topologies_machine

        return with_excluded(make_topologies_machine(profile, subjects, counts, window, wide), excluded)

    class AddressingLockstep(OpsMachine):
        """Spec and subjects in lockstep over the address model."""

        def __init__(self) -> None:
            super().__init__()
            self.lockstep = Lockstep(profile, subjects, window=window)
            counts.examples += 1

        def teardown(self) -> None:
            try:
                self.lockstep.finish()  # deferred replies are compared before the scenario ends
            finally:
                self.lockstep.close()

        def run(self, command: AddressingCommand) -> None:
            if self.leaves_out(command):
                return
            counts.note(command)
            self.lockstep.step(command)

        @initialize(addresses=s.starting_addresses, queues=s.starting_queues)
        def populate(self, addresses: list[str], queues: list[tuple[str, str, RoutingType]]) -> None:
            """Start from a few addresses allowing both routing types and some (often same-named) queues."""
            for address in addresses:
                self.run(CreateAddress(address, frozenset(RoutingType)))
            for address, queue, routing_type in queues:
                self.run(CreateQueue(address, queue, routing_type))

        @issues("create_address")
        @rule(address=s.address_names, routing_types=s.routing_type_sets)
        def create_address(self, address: str, routing_types: frozenset[RoutingType]) -> None:
            self.run(CreateAddress(address, routing_types))

        @issues("delete_address")
        @rule(address=s.address_names, force=booleans())
        def delete_address(self, address: str, force: bool) -> None:
            self.run(DeleteAddress(address, force))

        @issues("create_queue")
        @rule(address=s.address_names, queue=s.queue_names, routing_type=s.routing_types)
        def create_queue(self, address: str, queue: str, routing_type: RoutingType) -> None:
            self.run(CreateQueue(address, queue, routing_type))

        @issues("delete_queue")
        @rule(name=s.client_names)
        def delete_queue(self, name: str) -> None:
            self.run(DeleteQueue(name))

        @issues("lookup")
        @rule(name=s.client_names)
        def lookup(self, name: str) -> None:
            self.run(Lookup(name))

        @issues("send")
        @rule(name=s.client_names, routing_type=s.optional_routing_types)
        def send(self, name: str, routing_type: RoutingType | None) -> None:
            self.run(Send(name, routing_type))

        @issues("consume")
        @rule(name=s.client_names, routing_type=s.optional_routing_types)
        def consume(self, name: str, routing_type: RoutingType | None) -> None:
            self.run(Consume(name, routing_type))

        @issues("query_address")
        @rule(address=s.client_names)
        def query_address(self, address: str) -> None:
            self.run(QueryAddress(address))

        @issues("set_prefix")
        @rule(prefix=s.prefixes, routing_type=s.optional_routing_types)
        def set_prefix(self, prefix: str, routing_type: RoutingType | None) -> None:
            self.run(SetPrefix(prefix, routing_type))

        @issues("set_address_settings")
        @rule(match=s.settings_matches, auto_create_addresses=booleans(), auto_create_queues=booleans(),
              default_address_routing_type=s.routing_types, default_queue_routing_type=s.routing_types)
        def set_address_settings(self, match: str, auto_create_addresses: bool, auto_create_queues: bool,
                                 default_address_routing_type: RoutingType,
                                 default_queue_routing_type: RoutingType) -> None:
            self.run(SetAddressSettings(match, auto_create_addresses, auto_create_queues,
                                        default_address_routing_type, default_queue_routing_type))

    AddressingLockstep.__name__ = f"AddressingLockstep[{profile.label}]"
    AddressingLockstep.__qualname__ = AddressingLockstep.__name__
    return with_excluded(AddressingLockstep, excluded)
