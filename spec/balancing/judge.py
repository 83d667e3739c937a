"""Judging an observed outcome: strict (our exact round robin) or permissive (any allowed choice).

Introduction
------------
A broker's tie-breaking need not be ours. For each step the spec states the
*set* of outcomes the rules allow: every combination of allowed choices at
the step's choice points (which binding in each group, which consumer,
which redistribution target). :func:`judge` accepts an observed outcome

* in :attr:`Mode.STRICT` only when it equals the outcome of Artemis's own
  choices (how the reference and the fast implementation are checked);
* in :attr:`Mode.PERMISSIVE` when it equals any allowed outcome, and then
  continues from the state *that* outcome leads to, so later steps are
  judged against what the broker actually did.

The allowed outcomes are enumerated depth first by re-running the step with
a scripted :class:`~.operations.Chooser`; each step has few choice points
(one per group, consumer landing and move), so the enumeration is small,
and it is capped (:data:`MAX_BRANCHES`) so it can never run away.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from .commands import BalancingCommand
from .model import BalancingState
from .operations import apply, apply_choosing
from .outcomes import BalancingOutcome

MAX_BRANCHES = 20000
"""The most choice sequences one step may enumerate before the judge gives up."""


class Mode(Enum):
    """How strictly an observed outcome is judged."""

    STRICT = "strict"
    PERMISSIVE = "permissive"


class ScriptedChooser:
    """Follows a script of choice indexes, then takes the first allowed choice; records the fan-out."""

    def __init__(self, script: tuple[int, ...]) -> None:
        self.script = script
        self.fanout: list[int] = []

    def pick(self, allowed: tuple[int, ...], strict: int) -> int:
        point = len(self.fanout)
        self.fanout.append(len(allowed))
        return allowed[self.script[point] if point < len(self.script) else 0]


def allowed_outcomes(state: BalancingState,
                     command: BalancingCommand) -> list[tuple[BalancingState, BalancingOutcome]]:
    """Every (state, outcome) the rules allow for ``command``, strict one included, without repeats.

    Raises RuntimeError when there are more than :data:`MAX_BRANCHES`
    choice sequences (no step of a small cluster comes near).
    """
    results: dict[BalancingOutcome, BalancingState] = {}
    pending: list[tuple[int, ...]] = [()]
    branches = 0
    while pending:
        script = pending.pop()
        branches += 1
        if branches > MAX_BRANCHES:
            raise RuntimeError(f"more than {MAX_BRANCHES} ways to carry out {command!r}")
        chooser = ScriptedChooser(script)
        next_state, outcome = apply_choosing(state, command, chooser)
        results.setdefault(outcome, next_state)
        for point in range(len(script), len(chooser.fanout)):
            prefix = script + (0,) * (point - len(script))
            pending.extend(prefix + (alternative,) for alternative in range(1, chooser.fanout[point]))
    return [(s, o) for o, s in results.items()]


@dataclass(frozen=True)
class Verdict:
    """The judgement of one observed outcome.

    ``accepted``: whether the mode allows it. ``state``: the state to
    continue from (the observed outcome's when accepted, else the strict
    one's). ``expected``: the strict outcome. ``allowed``: how many distinct
    outcomes the rules allow, counted only when a permissive judgement had
    to enumerate them (an observation equal to the strict outcome, or any
    strict judgement, reports 1 without counting).
    """

    accepted: bool
    state: BalancingState
    expected: BalancingOutcome
    allowed: int


def judge(state: BalancingState, command: BalancingCommand, observed: BalancingOutcome, mode: Mode) -> Verdict:
    """Judge ``observed`` as the outcome of ``command`` in ``state``."""
    strict_state, expected = apply(state, command)
    if observed == expected:
        return Verdict(True, strict_state, expected, 1)
    if mode is Mode.STRICT:
        return Verdict(False, strict_state, expected, 1)
    options = allowed_outcomes(state, command)
    for next_state, outcome in options:
        if outcome == observed:
            return Verdict(True, next_state, expected, len(options))
    return Verdict(False, strict_state, expected, len(options))
