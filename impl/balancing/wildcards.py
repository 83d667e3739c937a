"""The fast broker's wildcard index: which plain addresses' groups hold the queues of which wild addresses.

Introduction
------------
Artemis's ``WildcardAddressManager`` gives a plain address's bindings a copy
of every binding of each wild address matching it, when the plain address
first gets bindings (a queue of its own, or the first routing to it) and
from then on as wild bindings come and go (rule LB-WILDCARD-BINDINGS). The
fast broker does the same with one index:

* ``wild``: each wild address that has queues, with them in creation order;
* ``plain``: each plain address that has groups, with the wild addresses
  (those that have queues) matching it, so a new wild queue finds the plain
  addresses to join without matching every address again on every send.

A match is decided by the spec's own
:func:`~brokerspec.spec.balancing.wildcards.address_matches` (cached there),
so the matching rule has one definition; :meth:`WildcardIndex.matches` is the
one place that asks it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brokerspec.spec import BalancingOptions
from brokerspec.spec.balancing.wildcards import address_matches, is_wild

if TYPE_CHECKING:
    from .records import QueueRecord


class WildcardIndex:
    """The wild addresses with queues, and the plain addresses with groups that they match."""

    __slots__ = ("options", "enabled", "wild", "plain", "_wildness")

    def __init__(self, options: BalancingOptions) -> None:
        self.options = options
        self.enabled = options.wildcard_routing
        self.wild: dict[str, list[QueueRecord]] = {}
        """Wild address -> its queues in creation order."""
        self.plain: dict[str, list[str]] = {}
        """Plain address with groups -> the wild addresses with queues that match it."""
        self._wildness: dict[str, bool] = {}

    def is_wild(self, address: str) -> bool:
        """``WildcardConfiguration.isWild``, remembered per address."""
        known = self._wildness.get(address)
        if known is None:
            known = self._wildness[address] = is_wild(self.options, address)
        return known

    def matches(self, pattern: str, address: str) -> bool:
        """Whether the wild ``pattern`` matches the plain ``address`` (LB-WILDCARD-MATCH; a seam for planted bugs)."""
        return address_matches(self.options, pattern, address)

    def matching(self, address: str) -> list[str]:
        """The wild addresses with queues that match the plain ``address``."""
        return [w for w in self.wild if self.matches(w, address)]

    def copies_for(self, address: str) -> list[QueueRecord]:
        """The wild queues a plain address's new groups take in, in creation order (LB-WILDCARD-BINDINGS)."""
        if not self.enabled or self.is_wild(address):
            return []
        queues = [queue for wild in self.matching(address) for queue in self.wild[wild]]
        queues.sort(key=lambda queue: queue.serial)
        return queues

    def add_plain(self, address: str) -> None:
        """``address`` (plain) now has groups: remember the wild addresses it takes copies from."""
        if self.enabled:
            self.plain[address] = self.matching(address)

    def drop_plain(self, address: str) -> None:
        """``address`` lost its last group (``bindingsEmpty``)."""
        self.plain.pop(address, None)

    def add_wild_queue(self, queue: QueueRecord) -> list[str]:
        """A queue of a wild address appeared; the plain addresses with groups it joins."""
        address = queue.address
        queues = self.wild.get(address)
        if queues is None:
            queues = self.wild[address] = []
            for plain, wilds in self.plain.items():
                if self.matches(address, plain):
                    wilds.append(address)
        queues.append(queue)
        return [plain for plain, wilds in self.plain.items() if address in wilds]

    def remove_wild_queue(self, queue: QueueRecord) -> list[str]:
        """A queue of a wild address went; the plain addresses whose groups held it."""
        address = queue.address
        holders = [plain for plain, wilds in self.plain.items() if address in wilds]
        queues = self.wild[address]
        queues.remove(queue)
        if not queues:
            del self.wild[address]
            for plain in holders:
                self.plain[plain].remove(address)
        return holders

    def binds(self, queue_address: str, address: str) -> bool:
        """Whether a queue of ``queue_address`` is a binding of ``address`` (the spec's ``binds``)."""
        if queue_address == address:
            return True
        return self.enabled and self.is_wild(queue_address) and not self.is_wild(address) \
            and self.matches(queue_address, address)
