"""A pure entry point into the fast lookup, with the same signature as the reference's.

``lookup_two`` builds a fresh broker holding two bindings, optionally deletes
one name, and looks one name up. Its inputs are a handful of plain strings
and flags with no lists and no loops, the shape CrossHair's symbolic
execution explores well, so ``crosshair diffbehavior`` can compare it with
:func:`brokerspec.reference.addressing.lookup_two`.
"""

from __future__ import annotations

from dataclasses import replace

from brokerspec.spec import PROFILES, Profile, QueueNameScope
from brokerspec.spec.addressing import LookupOutcome, RoutingType
from brokerspec.spec.addressing.samples import SampleAddress, SampleName, SampleQueue

from .broker import FastBroker

ANYCAST_ONLY = frozenset({RoutingType.ANYCAST})


def lookup_two(address1: SampleAddress, queue1: SampleQueue, address2: SampleAddress, queue2: SampleQueue,
               deleted: SampleName, name: SampleName,
               per_address_names: bool, check_fqqn_address: bool) -> LookupOutcome:
    """Bind ``address1::queue1`` and ``address2::queue2`` (ANYCAST), delete ``deleted`` unless empty, look up ``name``.

    Names come from the small alphabets of :mod:`brokerspec.spec.addressing.samples`."""
    return lookup_two_on(FastBroker, address1, queue1, address2, queue2, deleted, name, per_address_names,
                         check_fqqn_address)


def lookup_two_on(broker_type: type[FastBroker], address1: SampleAddress, queue1: SampleQueue,
                  address2: SampleAddress, queue2: SampleQueue, deleted: SampleName, name: SampleName, per_address_names: bool, check_fqqn_address: bool) -> LookupOutcome:
    """:func:`lookup_two` on any :class:`FastBroker` class (the planted bugs use it)."""
    scope = QueueNameScope.ADDRESS if per_address_names else QueueNameScope.BROKER
    # The seed's strict names and creation; the flag picks the seed's lookup or Artemis's queue query.
    options = replace(PROFILES["seed"].addressing, name_scope=scope, fqqn_checks_address=check_fqqn_address)
    broker = broker_type(Profile("lookup", "symbolic lookup", options))
    broker.create_address(address1.value, ANYCAST_ONLY)
    broker.create_address(address2.value, ANYCAST_ONLY)
    broker.create_queue(address1.value, queue1.value, RoutingType.ANYCAST)
    broker.create_queue(address2.value, queue2.value, RoutingType.ANYCAST)
    if deleted.value:
        broker.delete_queue(deleted.value)
    return broker.lookup(name.value)
