"""A pure entry point into the fast lookup, with the same signature as the reference's.

``lookup_after`` builds a fresh broker from a short explicit list of bindings,
deletes some names, and looks one name up, so CrossHair's ``diffbehavior``
can compare it with :func:`brokerspec.reference.addressing.lookup_after`.
"""

from __future__ import annotations

from brokerspec.spec import AddressingOptions, Profile, QueueNameScope
from brokerspec.spec.addressing import LookupOutcome, RoutingType

from .broker import FastBroker


def lookup_after(bindings: list[tuple[str, str]], deletes: list[str], name: str,
                 per_address_names: bool, check_fqqn_address: bool) -> LookupOutcome:
    """Bind each (address, queue) as ANYCAST, delete each name in ``deletes``, then look ``name`` up."""
    return lookup_after_on(FastBroker, bindings, deletes, name, per_address_names, check_fqqn_address)


def lookup_after_on(broker_type: type[FastBroker], bindings: list[tuple[str, str]], deletes: list[str], name: str,
                    per_address_names: bool, check_fqqn_address: bool) -> LookupOutcome:
    """:func:`lookup_after` on any :class:`FastBroker` class (the planted bugs use it)."""
    scope = QueueNameScope.ADDRESS if per_address_names else QueueNameScope.BROKER
    options = AddressingOptions(name_scope=scope, fqqn_checks_address=check_fqqn_address)
    broker = broker_type(Profile("lookup", "symbolic lookup", options))
    anycast = frozenset({RoutingType.ANYCAST})
    for address, queue in bindings:
        broker.create_address(address, anycast)
        broker.create_queue(address, queue, RoutingType.ANYCAST)
    for doomed in deletes:
        broker.delete_queue(doomed)
    return broker.lookup(name)
