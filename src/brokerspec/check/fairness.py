"""Fairness over a run: permissive judging may accept any allowed choice, but not the same one forever.

Introduction
------------
Where the rules allow several outcomes (load balancing), permissive judging
accepts any of them at each step: which allowed binding, redistribution
target or consumer takes a message is the broker's tie-breaking. One step
alone cannot show a broker that never takes turns at all: one that always
picks the first allowed binding, or keeps one round-robin turn for all the
routing names of an address, so that each group always lands on the same
member. Artemis keeps one position per routing name
(``BindingsImpl.getNextBinding`` reads and moves the ``BindingIndex`` that
``CopyOnWriteBindings`` holds for each routing name) and one per queue for
its consumers (``QueueImpl``), and its user manual (clusters.adoc,
"Server-Side Message Load Balancing") says messages are distributed
round-robin. Rule ``LB-FAIR-TURNS`` states what a run must show.

Definition. Every choice a step makes is a
:class:`~brokerspec.spec.balancing.ChoicePoint`, read from the stored
position ``key`` (a group on a node, shared by first routing and
redistribution as in ``BindingsImpl``; or a queue's consumers). A choice is
an *opportunity to rotate* when at least two members are allowed and the
spec's round robin, started from just after the member the broker itself
took last at that key (the position the judge follows), would take another
member. The ON_DEMAND fallback to the last local queue never rotates in
Artemis either, so it is never an opportunity. A *stretch* is a choice
followed by opportunities at one key, all with the same kind, candidates
and allowed members; any other choice there (a consumer arriving, a queue
deleted, a redistribution between two sends, a choice that is no
opportunity) starts a new one. A broker is unfair when, within a stretch,
an allowed member goes untaken for more than :func:`threshold` choices in a
row: the spec would have passed the turn on at each of them, and the
broker never passed it to that member. Keeping one member every time, as a
broker without turns does, is the simplest case.

The threshold is ``max(2, n)`` for ``n`` candidates, and no broker that
takes turns can exceed it. Artemis's round robin (and the reference and the
fast implementation, which follow it) moves its turn past the member it
took, so over a stretch it takes each of ``a`` allowed members once every
``a`` choices. A broker with its own order of members, or one whose turn
moves on by one member a message and passes a turn that falls on a member
not allowed to the next allowed one, gives every allowed member a turn
within any ``n`` choices in a row. Either leaves a member out at most
``n - 1`` choices running. A broker that picks at random is not a round
robin and may be told unfair in a long run.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from brokerspec.spec.balancing import RULES, ChoicePoint

FAIR_TURNS = "LB-FAIR-TURNS"
"""The rule an unfair run breaks (``brokerspec.spec.balancing.rules``)."""

UNFAIR = "its choices do not take turns over the run"
"""What a divergence says when a subject's run is unfair (its details are :meth:`Unfairness.describe`)."""


def threshold(candidates: int) -> int:
    """How many choices running an allowed member may go untaken in a stretch of ``n`` candidates: ``max(2, n)``."""
    return max(2, candidates)


@dataclass(frozen=True)
class Unfairness:
    """A stretch in which an allowed member was passed over while the spec would have rotated to it.

    ``steps`` are the steps of the choices in the window (the choice
    before the opportunities first); ``taken`` names who was taken at
    each of them.
    """

    kind: str
    key: tuple[str, ...]
    member: str
    allowed: tuple[str, ...]
    steps: tuple[int, ...]
    taken: tuple[str, ...]
    rule: str = FAIR_TURNS

    def describe(self) -> list[str]:
        """The finding in words: what was unfair, over which steps, and which rule it breaks."""
        if self.kind == "consumer":
            node, queue = self.key
            where = f"the consumers of queue {queue} on node {node}"
        else:
            node, address, name = self.key
            group = "routing-name group" if self.kind == "binding" else "redistribution group"
            where = f"the {group} {name} of address {address} on node {node}"
        rule = RULES[self.rule]
        opportunities = len(self.steps) - 1
        return [
            f"{where}: {self.member} was never taken at steps {_listed(self.steps)}, although "
            f"{_listed(self.allowed)} were allowed each time; taken instead: {_listed(self.taken)}",
            f"at each of those steps but the first, the spec's round robin, going on from the member taken "
            f"before, would have passed the turn on; a broker that takes turns leaves an allowed member out of "
            f"at most {opportunities} choices running here, this one left {self.member} out of {len(self.steps)}",
            f"rule {rule.id}: {rule.summary}",
            f"source: {rule.source}",
        ]


def _listed(items: tuple[object, ...]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    words = [str(i) for i in items]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


@dataclass
class _Stretch:
    context: tuple[str, tuple[str, ...], tuple[int, ...]]
    last: int
    steps: list[int]
    taken: list[int]
    missed: dict[int, int]
    """Per allowed member, how many choices of the stretch in a row went to someone else."""


def _start(context: tuple[str, tuple[str, ...], tuple[int, ...]], point: ChoicePoint, step: int) -> _Stretch:
    return _Stretch(context, point.picked, [step], [point.picked],
                    {i: 0 if i == point.picked else 1 for i in point.allowed})


class FairnessWatch:
    """Follows one subject's choices over a run and reports the first unfair stretch (see the introduction)."""

    def __init__(self) -> None:
        self._stretches: dict[tuple[str, ...], _Stretch] = {}

    def observe(self, step: int, choices: Iterable[ChoicePoint]) -> Unfairness | None:
        """Take the choices of step ``step`` in order; the first unfairness they complete, or None."""
        for point in choices:
            context = (point.kind, point.candidates, point.allowed)
            stretch = self._stretches.get(point.key)
            opportunity = len(point.allowed) >= 2 and stretch is not None and point.strict != stretch.last
            if stretch is None or stretch.context != context or not opportunity:
                self._stretches[point.key] = _start(context, point, step)
                continue
            stretch.last = point.picked
            stretch.steps.append(step)
            stretch.taken.append(point.picked)
            for member in stretch.missed:
                stretch.missed[member] = 0 if member == point.picked else stretch.missed[member] + 1
            limit = threshold(len(point.candidates))
            starved = [m for m, missed in stretch.missed.items() if missed > limit]
            if starved:
                window = limit + 1
                return Unfairness(point.kind, point.key, point.candidates[starved[0]],
                                  tuple(point.candidates[i] for i in point.allowed), tuple(stretch.steps[-window:]),
                                  tuple(dict.fromkeys(point.candidates[i] for i in stretch.taken[-window:])))
        return None


__all__ = ["FAIR_TURNS", "UNFAIR", "FairnessWatch", "Unfairness", "threshold"]
