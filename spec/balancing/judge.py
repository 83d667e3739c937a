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

Each verdict also carries the choices (:class:`~.choice.ChoicePoint`) that
lead to the accepted outcome, so a caller can judge fairness over a whole
run, which no single step can show (``brokerspec.check.fairness``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from .choice import ChoicePoint
from .commands import BalancingCommand
from .model import BalancingState
from .operations import apply_recording
from .step import STRICT
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
    return [(s, o) for s, o, _ in allowed_choices(state, command)]


def allowed_choices(state: BalancingState, command: BalancingCommand
                    ) -> list[tuple[BalancingState, BalancingOutcome, tuple[ChoicePoint, ...]]]:
    """:func:`allowed_outcomes` with the choices that lead to each outcome.

    Where several choice sequences lead to one outcome (a message dropped by whichever disabled queue of a
    group took it leaves no trace of which did), the one that follows Artemis's own round robin at the most
    choice points stands for them: an outcome that cannot tell the choices apart is not taken as evidence
    that a broker kept a turn (LB-FAIR-TURNS).
    """
    results: dict[BalancingOutcome, tuple[BalancingState, tuple[ChoicePoint, ...]]] = {}
    pending: list[tuple[int, ...]] = [()]
    branches = 0
    while pending:
        script = pending.pop()
        branches += 1
        if branches > MAX_BRANCHES:
            raise RuntimeError(f"more than {MAX_BRANCHES} ways to carry out {command!r}")
        chooser = ScriptedChooser(script)
        next_state, outcome, choices = apply_recording(state, command, chooser)
        known = results.get(outcome)
        if known is None or _followed(choices) > _followed(known[1]):
            results[outcome] = (next_state, choices)
        for point in range(len(script), len(chooser.fanout)):
            prefix = script + (0,) * (point - len(script))
            pending.extend(prefix + (alternative,) for alternative in range(1, chooser.fanout[point]))
    return [(s, o, c) for o, (s, c) in results.items()]


def _followed(choices: tuple[ChoicePoint, ...]) -> int:
    """At how many choice points the pick is Artemis's own."""
    return sum(1 for choice in choices if choice.picked == choice.strict)


@dataclass(frozen=True)
class Verdict:
    """The judgement of one observed outcome.

    ``accepted``: whether the mode allows it. ``state``: the state to
    continue from (the observed outcome's when accepted, else the strict
    one's). ``expected``: the strict outcome. ``allowed``: how many distinct
    outcomes the rules allow, counted only when a permissive judgement had
    to enumerate them (an observation equal to the strict outcome, or any
    strict judgement, reports 1 without counting). ``choices``: the choices
    that lead to the accepted outcome (the strict ones when it is refused).
    """

    accepted: bool
    state: BalancingState
    expected: BalancingOutcome
    allowed: int
    choices: tuple[ChoicePoint, ...] = ()


StrictStep = tuple[BalancingState, BalancingOutcome, tuple[ChoicePoint, ...]]
"""What ``apply_recording(state, command, STRICT)`` returns: the strict next state, outcome and choices."""


def judge(state: BalancingState, command: BalancingCommand, observed: BalancingOutcome, mode: Mode,
          strict: StrictStep | None = None) -> Verdict:
    """Judge ``observed`` as the outcome of ``command`` in ``state``.

    ``strict`` is ``apply_recording(state, command, STRICT)`` when the caller has it already (the checker
    applies the strict step for the spec's own state); None computes it here.
    """
    strict_state, expected, strict_choices = strict if strict is not None else apply_recording(state, command,
                                                                                               STRICT)
    if observed == expected:
        return Verdict(True, strict_state, expected, 1, strict_choices)
    if mode is Mode.STRICT:
        return Verdict(False, strict_state, expected, 1, strict_choices)
    options = allowed_choices(state, command)
    for next_state, outcome, choices in options:
        if outcome == observed:
            return Verdict(True, next_state, expected, len(options), choices)
    return Verdict(False, strict_state, expected, len(options), strict_choices)
