"""Wrong address-resolution implementations, kept to prove the checkers catch them.

Each class below is the fast broker with one plausible mistake, made by
overriding one of its documented seams. ``PLANTED`` lists them with the
profiles under which the mistake is observable and, where the mistake lives
in a function CrossHair can analyse, the pair of functions to compare.
"""

from __future__ import annotations

from brokerspec.planted.registry import ALL, PlantedBug
from collections.abc import Callable

from brokerspec.impl.addressing import FastBroker
from brokerspec.impl.addressing.broker import _Queue
from brokerspec.impl.addressing.lookup import lookup_two_on
from brokerspec.spec import Profile
from brokerspec.spec.addressing import LookupOutcome, NotFound, Resolved, RoutingType
from brokerspec.spec.addressing.samples import SampleAddress, SampleName, SampleQueue

# --- the mistakes -------------------------------------------------------------------


class CountKeptOnDelete(FastBroker):
    """Deleting a queue does not decrement its name's per-address count."""

    def _forget_queue(self, queue: _Queue) -> None:
        del self._addresses[queue.address].queues[queue.name]
        if self._check_fqqn:
            del self._names[queue.fqqn]
        # The mistake: _by_name (whose size is the count) and the bare-name entry are left alone.

    def _resolve_queue(self, name: str) -> _Queue | LookupOutcome:
        """The stale index still names a deleted queue; the queue itself is gone, so it is not found there."""
        found = self._lookup_stripped(name)
        if not isinstance(found, Resolved):
            return found
        address = self._addresses.get(found.address)
        queue = address.queues.get(found.queue) if address is not None else None
        return queue if queue is not None else NotFound(name)


def split_at_last(name: str) -> tuple[bool, str, str]:
    """Splits an FQQN at the last '::' instead of the first."""
    index = name.rfind("::")
    if index < 0:
        return False, name, name
    return True, name[:index], name[index + 2:]


class SplitAtLast(FastBroker):
    """Parses ``a::b::c`` as address ``a::b``, queue ``c``."""

    _split = staticmethod(split_at_last)


class FirstMatchNotAmbiguous(FastBroker):
    """A bare name bound on several addresses resolves to the first instead of being ambiguous."""

    def _bare_outcome(self, name: str, by_address: dict[str, _Queue]) -> LookupOutcome:
        return by_address[min(by_address)].resolved


class FqqnAddressIgnored(FastBroker):
    """Always discards the address part of an FQQN, even when the profile checks it."""

    def __init__(self, profile: Profile) -> None:
        super().__init__(profile)
        self._check_fqqn = False


class DeleteTakesTwin(FastBroker):
    """Deleting ``a1::q1`` also deletes the same-named ``a2::q1``."""

    def _forget_queue(self, queue: _Queue) -> None:
        for twin in list(self._by_name.get(queue.name, {}).values()):
            super()._forget_queue(twin)


class StaleParseAfterDelete(FastBroker):
    """The cached FQQN resolution outlives the deleted queue."""

    def _forget_queue(self, queue: _Queue) -> None:
        cached = self._names.get(queue.fqqn)
        super()._forget_queue(queue)
        if cached is not None:
            self._names[queue.fqqn] = cached


class ShortestPrefixWins(FastBroker):
    """Of two matching prefixes, strips the shorter one."""

    def set_prefix(self, prefix: str, routing_type: RoutingType | None) -> object:  # type: ignore[override]
        outcome = super().set_prefix(prefix, routing_type)
        self._prefix_order = tuple(sorted(self._prefixes, key=len))
        return outcome

    def check_valid(self) -> None:
        """The mistake is in the order itself, so skip the order check to let outcomes reveal it."""
        saved = self._prefix_order
        self._prefix_order = tuple(sorted(self._prefixes, key=len, reverse=True))
        try:
            super().check_valid()
        finally:
            self._prefix_order = saved


class ColonAddressFqqnIndexed(FastBroker):
    """Indexes ``a:`` + ``::q`` = ``a:::q`` as an FQQN, though clients mean address ``a``, queue ``:q`` by it."""

    def _remember_queue(self, queue: _Queue) -> None:
        queue.fqqn_parses_back = True
        super()._remember_queue(queue)


# --- pure entry points for CrossHair ---------------------------------------------------


def _on(broker: type[FastBroker]) -> Callable[..., LookupOutcome]:
    def lookup_two(address1: SampleAddress, queue1: SampleQueue, address2: SampleAddress, queue2: SampleQueue,
                   deleted: SampleName, name: SampleName, per_address_names: bool,
                   check_fqqn_address: bool) -> LookupOutcome:
        return lookup_two_on(broker, address1, queue1, address2, queue2, deleted, name, per_address_names,
                             check_fqqn_address)

    lookup_two.__doc__ = f"``lookup_two`` on :class:`{broker.__name__}`."
    return lookup_two


lookup_two_count_kept = _on(CountKeptOnDelete)
lookup_two_first_match = _on(FirstMatchNotAmbiguous)
lookup_two_fqqn_ignored = _on(FqqnAddressIgnored)
lookup_two_twin = _on(DeleteTakesTwin)
lookup_two_stale = _on(StaleParseAfterDelete)
lookup_two_colon = _on(ColonAddressFqqnIndexed)


IMPL = "brokerspec.impl.addressing"
ME = "brokerspec.planted.addressing_bugs"

PLANTED: tuple[PlantedBug, ...] = (
    PlantedBug("count-not-decremented-on-delete", CountKeptOnDelete, ALL,
               (f"{IMPL}.lookup_two", f"{ME}.lookup_two_count_kept")),
    PlantedBug("split-at-last-separator", SplitAtLast, ALL, (f"{IMPL}.split_fqqn", f"{ME}.split_at_last")),
    PlantedBug("first-match-instead-of-ambiguous", FirstMatchNotAmbiguous, ("seed",),
               (f"{IMPL}.lookup_two", f"{ME}.lookup_two_first_match")),
    PlantedBug("fqqn-address-part-ignored", FqqnAddressIgnored, ("seed",),
               (f"{IMPL}.lookup_two", f"{ME}.lookup_two_fqqn_ignored")),
    PlantedBug("delete-removes-same-named-twin", DeleteTakesTwin, ("seed",),
               (f"{IMPL}.lookup_two", f"{ME}.lookup_two_twin")),
    PlantedBug("stale-cached-parse-after-delete", StaleParseAfterDelete, ("seed",),
               (f"{IMPL}.lookup_two", f"{ME}.lookup_two_stale")),
    PlantedBug("fqqn-index-for-address-ending-in-colon", ColonAddressFqqnIndexed, ("seed",),
               (f"{IMPL}.lookup_two", f"{ME}.lookup_two_colon")),
    PlantedBug("shortest-prefix-wins", ShortestPrefixWins, ALL, None,
               "lives in the order of a list kept across set_prefix calls: no pure function takes a name "
               "and a prefix set and returns a result, so there is nothing for diffbehavior to compare"),
)
