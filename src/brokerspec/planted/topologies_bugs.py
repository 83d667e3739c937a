"""Wrong topology implementations, kept to prove the checkers catch them.

Introduction
------------
Each class is the fast topology broker with one plausible mistake, made by
overriding one of its documented seams (``brokerspec.impl.topologies``).
``PLANTED`` lists them; the three that live in a pure rule also name the
function pair ``crosshair diffbehavior`` compares (the spec's rule and the
planted one), the others say why no pure function shows them.
"""

from __future__ import annotations

from brokerspec.planted.registry import PlantedBug

from brokerspec.impl.topologies import DemandTable, FastTopologyBroker, Link, Reg
from brokerspec.spec.topologies import BridgeConfig, is_within_consumer_ttl, is_within_message_ttl

TOPOLOGY = ("artemis-latest",)
"""The topology domain has no profile options, so one profile shows every mistake."""


class ConsumerTtlOffByOne(FastTopologyBroker):
    """A registration becomes demand while its path is *no longer than* consumerTTL (against TOPO-NC-TTL)."""

    def within_consumer_ttl(self, ttl: int, path: tuple[str, ...]) -> bool:
        return ttl == -1 or len(path) <= ttl


class LoopCheckMissing(FastTopologyBroker):
    """A bridge accepts a registration whose brokerPath already holds its own broker (against TOPO-NC-LOOP)."""

    def is_loop(self, local: str, path: tuple[str, ...]) -> bool:
        return False


class BranchTellsSiblings(FastTopologyBroker):
    """A tree broker passes a child's advisory down to its other children (against TOPO-TREE-NO-SIBLINGS)."""

    def tree_forwarded(self, link: Link, remote: Reg) -> bool:
        return True


class ConduitMergesQueueNetworkSubs(FastTopologyBroker):
    """A conduit bridge merges queue network subscriptions too, as if conduitNetworkQueueSubscriptions were set
    (against TOPO-NC-CONDUIT)."""

    def can_conduit(self, config: BridgeConfig, destination: str, remote_is_network: bool) -> bool:
        return config.conduit


class _ShallowRemoval(DemandTable):
    def remove_consumer(self, client: Reg) -> None:
        for place in [p for p in self.regs if p[1] == client.destination]:
            table = self.regs[place]
            for key in [k for k, reg in table.items() if reg.origins == {client.key} and len(reg.path) <= 1]:
                del table[key]
            if not table:
                del self.regs[place]


class RemovalNotCascading(FastTopologyBroker):
    """Closing a consumer removes it and the subscriptions one hop away, not what those caused
    (against TOPO-NC-CASCADE)."""

    def _make_table(self) -> DemandTable:
        return _ShallowRemoval(self)


class MessageTtlIgnored(FastTopologyBroker):
    """Messages are forwarded however many bridges they crossed (against TOPO-MSG-TTL)."""

    def within_message_ttl(self, ttl: int, path: tuple[str, ...]) -> bool:
        return True


def _check_ttl(ttl: int) -> None:
    """The domain guard every free rule function shares (``crosshair diffbehavior`` ignores ``pre:``)."""
    if ttl < -1 or ttl == 0:
        raise ValueError(f"a TTL is -1 or at least 1, not {ttl}")


def spec_consumer_ttl(ttl: int, path: tuple[str, ...]) -> bool:
    """The spec's consumerTTL rule (TOPO-NC-TTL) as a function of the TTL alone."""
    _check_ttl(ttl)
    return is_within_consumer_ttl(BridgeConfig(consumer_ttl=ttl), path)


def correct_consumer_ttl(ttl: int, path: tuple[str, ...]) -> bool:
    """The fast broker's consumerTTL rule."""
    _check_ttl(ttl)
    return FastTopologyBroker.within_consumer_ttl(FastTopologyBroker(), ttl, path)


def consumer_ttl_off_by_one(ttl: int, path: tuple[str, ...]) -> bool:
    """The planted consumerTTL rule."""
    _check_ttl(ttl)
    return ConsumerTtlOffByOne.within_consumer_ttl(ConsumerTtlOffByOne(), ttl, path)


def spec_message_ttl(ttl: int, path: tuple[str, ...]) -> bool:
    """The spec's messageTTL rule (TOPO-MSG-TTL) as a function of the TTL alone."""
    _check_ttl(ttl)
    return is_within_message_ttl(BridgeConfig(message_ttl=ttl), path)


def correct_message_ttl(ttl: int, path: tuple[str, ...]) -> bool:
    """The fast broker's messageTTL rule."""
    _check_ttl(ttl)
    return FastTopologyBroker.within_message_ttl(FastTopologyBroker(), ttl, path)


def message_ttl_ignored(ttl: int, path: tuple[str, ...]) -> bool:
    """The planted messageTTL rule."""
    _check_ttl(ttl)
    return MessageTtlIgnored.within_message_ttl(MessageTtlIgnored(), ttl, path)


def correct_loop_check(local: str, path: tuple[str, ...]) -> bool:
    """The fast broker's loop check."""
    return FastTopologyBroker.is_loop(FastTopologyBroker(), local, path)


def loop_check_missing(local: str, path: tuple[str, ...]) -> bool:
    """The planted loop check."""
    return LoopCheckMissing.is_loop(LoopCheckMissing(), local, path)


_HERE = "brokerspec.planted.topologies_bugs."

PLANTED: tuple[PlantedBug, ...] = (
    PlantedBug("consumer-ttl-off-by-one", ConsumerTtlOffByOne, TOPOLOGY,
               (_HERE + "correct_consumer_ttl", _HERE + "consumer_ttl_off_by_one")),
    PlantedBug("loop-check-missing", LoopCheckMissing, TOPOLOGY,
               (_HERE + "correct_loop_check", _HERE + "loop_check_missing")),
    PlantedBug("branch-tells-siblings", BranchTellsSiblings, TOPOLOGY, None,
               "the mistake needs a tree: a parent, its role and where an advisory came from, which no "
               "free function of plain values holds"),
    PlantedBug("conduit-merges-queue-network-subs", ConduitMergesQueueNetworkSubs, TOPOLOGY, None,
               "a plain-boolean rule whose mistake CrossHair would find, but it only matters inside a "
               "propagation pass; the lockstep machine and the examples catch it"),
    PlantedBug("removal-not-cascading", RemovalNotCascading, TOPOLOGY, None,
               "the mistake is in removing registrations from a table, a stateful step"),
    PlantedBug("message-ttl-ignored", MessageTtlIgnored, TOPOLOGY,
               (_HERE + "correct_message_ttl", _HERE + "message_ttl_ignored")),
)
