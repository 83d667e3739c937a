"""A pure entry point into the reference lookup, shaped for symbolic execution.

``lookup_after`` builds a fresh broker from a short explicit list of
bindings, optionally deletes some names, and looks one name up. It has no
state of its own, so CrossHair can compare it with the fast implementation's
function of the same signature (``crosshair diffbehavior``).
"""

from __future__ import annotations

from brokerspec.spec import AddressingOptions, Profile, QueueNameScope
from brokerspec.spec.addressing import LookupOutcome, RoutingType

from .broker import ReferenceBroker


def lookup_after(bindings: list[tuple[str, str]], deletes: list[str], name: str,
                 per_address_names: bool, check_fqqn_address: bool) -> LookupOutcome:
    """Bind each (address, queue) as ANYCAST, delete each name in ``deletes``, then look ``name`` up."""
    scope = QueueNameScope.ADDRESS if per_address_names else QueueNameScope.BROKER
    options = AddressingOptions(name_scope=scope, fqqn_checks_address=check_fqqn_address)
    broker = ReferenceBroker(Profile("lookup", "symbolic lookup", options))
    for address, queue in bindings:
        broker.create_address(address, {RoutingType.ANYCAST})
        broker.create_queue(address, queue, RoutingType.ANYCAST)
    for doomed in deletes:
        broker.destroy_queue(doomed)
    return broker.queue_query(name)
