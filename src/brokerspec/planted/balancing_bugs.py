"""Wrong load-balancing implementations, kept to prove the checkers catch them.

Introduction
------------
Each class is the fast broker with one plausible mistake, made by
overriding one of its documented seams (see
``brokerspec.impl.balancing.broker`` and ``brokerspec.impl.balancing.choice``).
``PLANTED`` lists them with the profiles under which the mistake can show
and, for the four that live in the pure binding choice (``BindingsImpl.getNextBinding``), the pair of
functions ``crosshair diffbehavior`` compares: the fast broker's
``choose_from_bits`` and the same entry point run through the planted
class's rules. Four are in eligibility or redistribution, which no
three-member bit pattern reaches; each says why. Two make only choices
the rules allow, one step at a time, and never take turns over a run
(``always-first-allowed-binding``, ``one-turn-for-all-routing-names``):
strict judging catches them at once, permissive judging by its fairness
check (``brokerspec.check.fairness``, LB-FAIR-TURNS). One is wrong only in
what a queue query reports, which nothing else shows; one lets a disabled
queue keep what routing brings it; one loses what a closing consumer held
unacknowledged. Three more, in the cluster bridge's duplicate IDs and in
transactions, are in :mod:`brokerspec.planted.balancing_tx_bugs`, and
listed here too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TypeVar

from brokerspec.planted.balancing_tx_bugs import PLANTED as BRIDGE_AND_TX_BUGS
from brokerspec.planted.registry import ALL, PlantedBug

from brokerspec.impl.balancing import ConsumerRecord, FastBalancingBroker, QueueRecord, Waiting, choose_from_bits_on
from brokerspec.impl.balancing.wildcards import WildcardIndex
from brokerspec.spec import Profile
from brokerspec.spec.profiles import SendAutoCreate
from brokerspec.spec.addressing.names import RoutingType
from brokerspec.spec.balancing import Attach, BalancingOutcome, Event, LbType, QueryQueue, QueueQueried, Send

Member = TypeVar("Member")

# --- the mistakes -------------------------------------------------------------------


class PositionAdvancedOnSkip(FastBalancingBroker):
    """The position moves past every eligible binding the scan looked at, not just past the chosen one.

    After a fallback the stored position is just after the last eligible
    binding the scan passed over (against LB-ROUND-ROBIN: "the position
    moves only when a binding is chosen, to just after it").
    """

    def _position_after(self, chosen: int, last_eligible: int, size: int) -> int:
        return (last_eligible + 1) % size


class OriginNotSkipped(FastBalancingBroker):
    """Redistribution may pick the queue the message waits in (against RD-SKIP-ORIGIN).

    It shows only when the originating queue is itself preferred, that is
    when a paused consumer of it matches the waiting message; a queue with
    consumers has a redistributor only where the profile has ARTEMIS-2007
    (2.19.0), which hides the mistake under the older profiles.
    """

    def _is_origin(self, candidate: QueueRecord, origin: QueueRecord) -> bool:
        return False


class TargetFilterIgnored(FastBalancingBroker):
    """Redistribution moves a message to a queue whose filter does not match it (against RD-TARGET)."""

    def _target_filter_matches(self, candidate: QueueRecord, message: Waiting) -> bool:
        return True


class StrictPrefersConsumers(FastBalancingBroker):
    """STRICT chooses a binding as ON_DEMAND does (against LB-ROUND-ROBIN under STRICT).

    It takes a binding on sight only when a consumer matches, and failing
    that falls back to the last local binding, where STRICT takes the next
    connected eligible binding whatever its consumers.
    """

    def _choice_type(self, lb_type: LbType) -> LbType:
        return LbType.ON_DEMAND if lb_type is LbType.STRICT else lb_type


class OffForwardsAnycast(FastBalancingBroker):
    """OFF lets any message reach a remote binding once the profile lets OFF forward at all.

    ARTEMIS-4196 (2.29.0) lets OFF forward only a MULTICAST message; this
    reads it as "OFF forwards" (against LB-OFF-REMOTE). Profiles
    without ARTEMIS-4196 never forward under OFF, which hides the mistake.
    """

    def _forwards_remotely(self, lb_type: LbType, routing_type: RoutingType | None) -> bool:
        if lb_type is LbType.OFF:
            return self._off_forwards_multicast
        return super()._forwards_remotely(lb_type, routing_type)


class PositionNotReset(FastBalancingBroker):
    """A position beyond the end (its group or consumer list shrank) is clamped to the last index, not reset to 0.

    Against ``BindingsImpl.getNextBinding`` (position 0 when it is out of
    range) and the spec's ``scan_order``; every scan (bindings, redistribution
    targets, consumers) starts there.
    """

    def _scan_start(self, position: int, size: int) -> int:
        return min(position, size - 1) if size else 0


class FallbackToFirstLocal(FastBalancingBroker):
    """ON_DEMAND falls back to the first local eligible binding met, not the last (against LB-FALLBACK)."""

    def _fallback(self, lb_type: LbType, first_eligible: int, first_local: int, last_local: int) -> int:
        if lb_type is LbType.ON_DEMAND and first_local >= 0:
            return first_local
        return first_eligible


class GroupedRedistributed(FastBalancingBroker):
    """A waiting message with a group ID is redistributed like any other (against RD-GROUPED)."""

    def _is_redistributable(self, message: Waiting) -> bool:
        return True


class AlwaysFirstAllowedBinding(FastBalancingBroker):
    """Every routing-name group is scanned from its first binding, whatever its stored position.

    So a group with several bindings a message may take always gives it to
    the first of them: each choice is one the rules allow, but the turn
    never passes on (against LB-ROUND-ROBIN, ``BindingsImpl.getNextBinding``,
    and, in permissive judging, LB-FAIR-TURNS).
    """

    def _pick(self, members: Sequence[Member], position: int, lb_type: LbType,
              flags: Callable[[Member], int]) -> tuple[int, int]:
        return super()._pick(members, 0, lb_type, flags)


class OneTurnForAllRoutingNames(FastBalancingBroker):
    """A node keeps one round-robin turn per address, shared by all its routing-name groups.

    Artemis keeps one position per routing name (``CopyOnWriteBindings``
    holds one ``BindingIndex`` for each). With two same-named MULTICAST subscriptions on two nodes each,
    one send moves the shared turn twice, so each group lands on the same
    member every time (against LB-ROUND-ROBIN and LB-FAIR-TURNS).
    """

    def __init__(self, profile: Profile) -> None:
        super().__init__(profile)
        self._turns: dict[tuple[str, str], int] = {}
        self._sending_node = ""

    def _send(self, command: Send) -> BalancingOutcome:
        self._sending_node = command.node
        return super()._send(command)

    def _pick(self, members: Sequence[Member], position: int, lb_type: LbType,
              flags: Callable[[Member], int]) -> tuple[int, int]:
        turn = (self._sending_node, str(getattr(members[0], "queue").address))
        index, stored = super()._pick(members, self._turns.get(turn, 0), lb_type, flags)
        if index >= 0:
            self._turns[turn] = stored
        return index, stored


# --- closed entry points for CrossHair --------------------------------------------------


def choose_from_bits_position_advanced_on_skip(m0: int, m1: int, m2: int, size: int, position: int,
                                               lb_type: LbType) -> tuple[int, int]:
    """``choose_from_bits`` through :class:`PositionAdvancedOnSkip`.

    pre: 0 <= m0 < 16 and 0 <= m1 < 16 and 0 <= m2 < 16
    pre: 1 <= size <= 3
    pre: 0 <= position <= 4
    """
    return choose_from_bits_on(PositionAdvancedOnSkip, m0, m1, m2, size, position, lb_type)


def choose_from_bits_strict_prefers_consumers(m0: int, m1: int, m2: int, size: int, position: int,
                                              lb_type: LbType) -> tuple[int, int]:
    """``choose_from_bits`` through :class:`StrictPrefersConsumers`.

    pre: 0 <= m0 < 16 and 0 <= m1 < 16 and 0 <= m2 < 16
    pre: 1 <= size <= 3
    pre: 0 <= position <= 4
    """
    return choose_from_bits_on(StrictPrefersConsumers, m0, m1, m2, size, position, lb_type)


def choose_from_bits_position_not_reset(m0: int, m1: int, m2: int, size: int, position: int,
                                        lb_type: LbType) -> tuple[int, int]:
    """``choose_from_bits`` through :class:`PositionNotReset`.

    pre: 0 <= m0 < 16 and 0 <= m1 < 16 and 0 <= m2 < 16
    pre: 1 <= size <= 3
    pre: 0 <= position <= 4
    """
    return choose_from_bits_on(PositionNotReset, m0, m1, m2, size, position, lb_type)


def choose_from_bits_fallback_to_first_local(m0: int, m1: int, m2: int, size: int, position: int,
                                             lb_type: LbType) -> tuple[int, int]:
    """``choose_from_bits`` through :class:`FallbackToFirstLocal`.

    pre: 0 <= m0 < 16 and 0 <= m1 < 16 and 0 <= m2 < 16
    pre: 1 <= size <= 3
    pre: 0 <= position <= 4
    """
    return choose_from_bits_on(FallbackToFirstLocal, m0, m1, m2, size, position, lb_type)






class PausedConsumersUncounted(FastBalancingBroker):
    """A queue query counts only the consumers taking messages, not the paused ones (against LB-QUERY-QUEUE).

    Nothing but a query shows it: routing and redistribution treat a paused consumer exactly as before.
    """

    def _query_queue(self, command: QueryQueue) -> BalancingOutcome:
        found = super()._query_queue(command)
        if isinstance(found, QueueQueried) and found.exists:
            queue = self._queues[(command.node, command.queue)]
            return dataclasses.replace(found, consumers=sum(not c.paused for c in queue.consumers))
        return found


class DisabledQueueDelivers(FastBalancingBroker):
    """A disabled queue takes what routing chooses it for, as if it were enabled (against LB-QUEUE-ENABLED)."""

    def _routed_to(self, queue: QueueRecord, message: Waiting, events: list[Event]) -> bool:
        if not queue.enabled and not (queue.purge_on_no_consumers and not queue.consumers):
            self._land(queue, message, events)
            return True
        return super()._routed_to(queue, message, events)


class GreedySingleWordIndex(WildcardIndex):
    """A wildcard index whose single-word wildcard also stands for several words (against LB-WILDCARD-MATCH)."""

    def matches(self, pattern: str, address: str) -> bool:
        options = self.options
        widened = pattern.replace(options.wildcard_single_word, options.wildcard_any_words)
        return super().matches(pattern, address) or (
            address.count(options.wildcard_delimiter) >= pattern.count(options.wildcard_delimiter)
            and super().matches(widened, address))


class SingleWordMatchesMany(FastBalancingBroker):
    """``a1.*`` takes what is sent to ``a1.x.y`` as well: ``*`` read as one or more words (LB-WILDCARD-MATCH)."""

    def __init__(self, profile: Profile) -> None:
        super().__init__(profile)
        self._wildcards = GreedySingleWordIndex(profile.balancing)


class FqqnConsumerIgnored(FastBalancingBroker):
    """A consumer that came by FQQN triggers as one that came by name: the other nodes look their queue up by the
    routing name, so an ANYCAST queue named otherwise than its address never redistributes to it (against
    RD-TRIGGER-FQQN-CONSUMER, ARTEMIS-3918)."""

    def _trigger_name(self, command: Attach, queue: QueueRecord) -> str:
        return queue.routing_name


class RemoteBindingsSuffice(FastBalancingBroker):
    """An ANYCAST send on a node without a queue of its address is balanced onto the other nodes' queues, as it
    was from 2.28.0 to 2.31.0, whatever the profile says (against LB-AUTO-CREATE, ARTEMIS-4450: ``simpleRoute``
    asks for a local binding)."""

    def __init__(self, profile: Profile) -> None:
        super().__init__(profile)
        self._send_auto_create = SendAutoCreate.WITHOUT_BINDINGS


class UnackedDeliveryNotReturned(FastBalancingBroker):
    """A closing consumer's unacknowledged messages are dropped, not given back to its queue (against
    LB-CLOSE-RETURNS: ``ServerConsumerImpl.close`` cancels them back, ``cancelRefs``).

    They vanish without an event, so the queue's other consumers never see them, nothing redistributes them,
    and a queue query counts them no more.
    """

    def _return_held(self, queue: QueueRecord, consumer: ConsumerRecord, events: list[Event]) -> None:
        consumer.held = []


# --- the registry ---------------------------------------------------------------------------


IMPL = "brokerspec.impl.balancing.choice.choose_from_bits"
ME = "brokerspec.planted.balancing_bugs"
RUN_OF_CHOICES = ("each choice is one the rules allow, and diffbehavior would find it differs from Artemis's as any "
                  "other order of turns does; the mistake is that a run of choices never rotates, which one call "
                  "cannot show")
REDISTRIBUTION = ("the mistake is in redistribution, a scan over a queue's group with its consumers and waiting "
                  "messages; choose_from_bits covers only first routing's choice")

PLANTED: tuple[PlantedBug, ...] = (
    PlantedBug("position-advanced-on-skip", PositionAdvancedOnSkip, ALL,
               (IMPL, f"{ME}.choose_from_bits_position_advanced_on_skip")),
    PlantedBug("redistribution-origin-not-skipped", OriginNotSkipped, ("artemis-latest",), None, REDISTRIBUTION),
    PlantedBug("redistribution-ignores-queue-filter", TargetFilterIgnored, ALL, None, REDISTRIBUTION),
    PlantedBug("strict-prefers-consumers", StrictPrefersConsumers, ALL,
               (IMPL, f"{ME}.choose_from_bits_strict_prefers_consumers")),
    PlantedBug("off-forwards-anycast-remotely", OffForwardsAnycast, ("artemis-latest",), None,
               "the mistake decides a binding's eligible bit from the message and the profile; choose_from_bits "
               "takes that bit as given"),
    PlantedBug("position-not-reset-when-out-of-range", PositionNotReset, ALL,
               (IMPL, f"{ME}.choose_from_bits_position_not_reset")),
    PlantedBug("on-demand-falls-back-to-first-local", FallbackToFirstLocal, ALL, None,
               "the difference needs two eligible local members without consumers under ON_DEMAND (about 1% of "
               "the inputs), which diffbehavior did not reach in a minute; the exhaustive walk of every input "
               "finds it"),
    PlantedBug("grouped-message-redistributed", GroupedRedistributed, ALL, None,
               "the mistake is in which waiting messages a redistributor offers, across a send, a trigger and a "
               "delivery attempt; choose_from_bits covers only first routing's choice"),
    PlantedBug("always-first-allowed-binding", AlwaysFirstAllowedBinding, ALL, None, RUN_OF_CHOICES),
    PlantedBug("one-turn-for-all-routing-names", OneTurnForAllRoutingNames, ALL, None,
               "the mistake joins the turns of several groups; choose_from_bits chooses in one group"),
    PlantedBug("query-leaves-out-paused-consumers", PausedConsumersUncounted, ALL, None,
               "the mistake is in what a queue query reports of a whole queue; choose_from_bits covers only first "
               "routing's choice"),
    PlantedBug("disabled-queue-still-delivers", DisabledQueueDelivers, ("artemis-latest",), None,
               "the mistake is in whether a chosen queue keeps the message, after the choice choose_from_bits makes"),
    PlantedBug("fqqn-consumer-redistribution-missed", FqqnConsumerIgnored, ("artemis-latest",), None,
               "the mistake is in which queue a consumer's arrival gives a redistributor; choose_from_bits covers "
               "only first routing's choice"),
    PlantedBug("wildcard-single-word-matches-many", SingleWordMatchesMany, ALL, None,
               "the mistake is in which queues are bindings of an address at all, before choose_from_bits chooses "
               "among them"),
    PlantedBug("remote-only-anycast-send-balanced", RemoteBindingsSuffice, ("artemis-latest",), None,
               "the mistake is in whether a send may be routed at all, before choose_from_bits chooses"),
    PlantedBug("unacked-delivery-not-returned-on-close", UnackedDeliveryNotReturned, ALL, None,
               "the mistake is in what a consumer's close does with the messages it holds; choose_from_bits covers "
               "only first routing's choice"),
    *BRIDGE_AND_TX_BUGS,
)
