"""The ordering rules of the SUT author guide: how every list in an outcome is ordered, checked against the spec.

A list in an outcome is compared in order, so a SUT must write it in the
spec's order. Each :class:`OrderingRule` says, in words, how one list is
ordered and where that order comes from, and gives the key the list must be
sorted by. :func:`check_rules` runs every rule over outcomes the spec produced
(the guide feeds it every outcome of the catalogue and of the check-order
probes) and raises :class:`OrderingError` when a list is out of order, or when
a rule never met a list of two or more items and so was never tested: the
guide prints only orders the spec was seen to keep.

>>> from brokerspec.spec.addressing import Ambiguous
>>> checked = check_rules([("addressing", Ambiguous("q", ("a::q", "b::q")))], RULES[:1])
>>> checked[RULES[0]]
1
>>> check_rules([("addressing", Ambiguous("q", ("b::q", "a::q")))], RULES[:1])
Traceback (most recent call last):
...
brokerspec.sutguide_order.OrderingError: ambiguous.candidates is not in the order the guide states: ['b::q', 'a::q']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from brokerspec.spec import Outcome
from brokerspec.spec import balancing as lb


class OrderingError(ValueError):
    """An ordering rule the spec's outcomes contradict, or one they never test."""


@dataclass(frozen=True)
class OrderingRule:
    """How one list of one outcome is ordered, with its source, and how to read that list from an outcome."""

    domain: str
    where: str
    order: str
    source: str
    lists: Callable[[Outcome], list[Sequence[Any]]] | None
    """The lists to check in an outcome; None for an order that is described, not sorted (nothing to check)."""
    key: Callable[[Any], Any] = lambda item: item


def _field(kind: str, name: str, reason: str = "") -> Callable[[Outcome], list[Sequence[Any]]]:
    """The list ``name`` of outcomes of type ``kind`` (of their reason of type ``reason`` when given)."""
    def lists(outcome: Outcome) -> list[Sequence[Any]]:
        if outcome.kind != kind:
            return []
        holder: Any = getattr(outcome, "reason") if reason else outcome
        if reason and getattr(holder, "kind", None) != reason:
            return []
        return [getattr(holder, name)]
    return lists


def _first_routing(outcome: Outcome) -> list[Sequence[Any]]:
    """The ``delivered`` events a balancing send starts with: its own message's first routing."""
    if not isinstance(outcome, lb.Sent):
        return []
    first = []
    for event in outcome.events:
        if not (isinstance(event, lb.Delivered) and event.message == outcome.message):
            break
        first.append(event)
    return [first]


FQQN_ORDER = "sorted by FQQN (`address::queue`), by Unicode code point"
RULES: tuple[OrderingRule, ...] = (
    OrderingRule("addressing", "ambiguous.candidates", FQQN_ORDER, "ADDR-LOOKUP-BARE-MANY (seed 000 scenario 3)",
                 _field("ambiguous", "candidates")),
    OrderingRule("addressing", "ambiguous_name.candidates", FQQN_ORDER,
                 "ADDR-QUEUE-DELETE-AMBIGUOUS, ADDR-CONSUME-AMBIGUOUS (as a lookup's candidates)",
                 _field("rejected", "candidates", "ambiguous_name")),
    OrderingRule("addressing", "address_deleted.removed_queues", FQQN_ORDER,
                 "ADDR-ADDRESS-DELETE (the address's queues, as listed by spec/addressing/model.py get_queues_of)",
                 _field("address_deleted", "removed_queues")),
    OrderingRule("addressing", "address_has_queues.queues", FQQN_ORDER,
                 "ADDR-ADDRESS-DELETE-HAS-QUEUES", _field("rejected", "queues", "address_has_queues")),
    OrderingRule("addressing", "routed.copies", FQQN_ORDER, "ADDR-SEND-ROUTE", _field("routed", "copies")),
    OrderingRule("addressing", "routed.anycast_candidates", FQQN_ORDER, "ADDR-SEND-ROUTE",
                 _field("routed", "anycast_candidates")),
    OrderingRule("duplicates", "sent.queues", "sorted by queue name, by Unicode code point",
                 "DUP-ROUTED (spec/duplicates/model.py get_queues_of)", _field("sent", "queues")),
    OrderingRule("duplicates", "committed.messages", "in the order the transaction sent them (ascending numbers)",
                 "DUP-COMMIT", _field("committed", "messages")),
    OrderingRule("balancing", "sent.events",
                 "the `delivered` events of the message's own routing come first, sorted by (`node`, `queue`); "
                 "the events the send caused afterwards follow in the order they happened",
                 "spec/balancing/outcomes.py (the order in which a broker visits groups is not part of the semantics)",
                 _first_routing, lambda event: (event.node, event.queue)),
    OrderingRule("topologies", "sent.events, applied.events",
                 "in the order things happen: a message is followed from broker to broker until it is delivered, "
                 "waits or is dropped; a topic's copies one after another, in the order of the registrations' keys; "
                 "the waiting messages an operation sets moving broker by broker in name order, oldest first",
                 "TOPO-SETTLE; spec/topologies/routing.py route and settle", None),
)
"""Every list in an outcome whose order the spec fixes by sorting."""


def check_rules(outcomes: Iterable[tuple[str, Outcome]],
                rules: Sequence[OrderingRule] = RULES) -> dict[OrderingRule, int]:
    """How many lists of two or more items each sorted rule was checked on; raises OrderingError as described above.

    Rules without ``lists`` describe an order that no sort key states; they are not in the result.
    """
    seen = list(outcomes)
    tested: dict[OrderingRule, int] = {}
    for rule in rules:
        if rule.lists is None:
            continue
        count = 0
        for domain, outcome in seen:
            if domain != rule.domain:
                continue
            for items in rule.lists(outcome):
                keys = [rule.key(item) for item in items]
                if keys != sorted(keys):
                    raise OrderingError(f"{rule.where} is not in the order the guide states: {list(items)}")
                count += len(keys) >= 2
        if count == 0:
            raise OrderingError(f"{rule.where}: no outcome has two or more items, so its order was never checked")
        tested[rule] = count
    return tested
