"""A pure entry point into the reference lookup, shaped for symbolic execution.

``lookup_two`` builds a fresh broker holding two bindings, optionally deletes
one name, and looks one name up. It has no state of its own and takes only
a few strings and flags, so CrossHair can compare it with the fast
implementation's function of the same signature (``crosshair diffbehavior``).
"""

from __future__ import annotations

from dataclasses import replace

from brokerspec.spec import PROFILES, Profile, QueueNameScope
from brokerspec.spec.addressing import LookupOutcome, RoutingType
from brokerspec.spec.addressing.samples import SampleAddress, SampleName, SampleQueue

from .broker import ReferenceBroker


def lookup_two(address1: SampleAddress, queue1: SampleQueue, address2: SampleAddress, queue2: SampleQueue,
               deleted: SampleName, name: SampleName,
               per_address_names: bool, check_fqqn_address: bool) -> LookupOutcome:
    """Bind ``address1::queue1`` and ``address2::queue2`` (ANYCAST), delete ``deleted`` unless empty, look up ``name``.

    Names come from the small alphabets of :mod:`brokerspec.spec.addressing.samples`."""
    scope = QueueNameScope.ADDRESS if per_address_names else QueueNameScope.BROKER
    # The seed's strict names and creation; the flag picks the seed's lookup or Artemis's queue query.
    options = replace(PROFILES["seed"].addressing, name_scope=scope, fqqn_checks_address=check_fqqn_address)
    broker = ReferenceBroker(Profile("lookup", "symbolic lookup", options))
    broker.create_address(address1.value, {RoutingType.ANYCAST})
    broker.create_address(address2.value, {RoutingType.ANYCAST})
    broker.create_queue(address1.value, queue1.value, RoutingType.ANYCAST)
    broker.create_queue(address2.value, queue2.value, RoutingType.ANYCAST)
    if deleted.value:
        broker.destroy_queue(deleted.value)
    return broker.queue_query(name.value)
