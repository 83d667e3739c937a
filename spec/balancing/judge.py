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
    """:func:`allowed_outcomes` with the choices that lead to each (state, outcome).

    Where several choice sequences lead to one state and outcome, the one that follows Artemis's own round
    robin at the most choice points stands for them. One outcome may lead to several states when a choice
    does not show in it (a message dropped by whichever disabled queue of a group took it; the binding of a
    transacted send, which shows at the commit): each is listed, the most Artemis-like first, and an outcome
    that cannot tell the choices apart is not taken as evidence that a broker kept a turn (LB-FAIR-TURNS).
    """
    results: dict[tuple[BalancingOutcome, BalancingState], tuple[ChoicePoint, ...]] = {}
    pending: list[tuple[int, ...]] = [()]
    branches = 0
    while pending:
        script = pending.pop()
        branches += 1
        if branches > MAX_BRANCHES:
            raise RuntimeError(f"more than {MAX_BRANCHES} ways to carry out {command!r}")
        chooser = ScriptedChooser(script)
        next_state, outcome, choices = apply_recording(state, command, chooser)
        known = results.get((outcome, next_state))
        if known is None or _followed(choices) > _followed(known):
            results[(outcome, next_state)] = choices
        for point in range(len(script), len(chooser.fanout)):
            prefix = script + (0,) * (point - len(script))
            pending.extend(prefix + (alternative,) for alternative in range(1, chooser.fanout[point]))
    # the most Artemis-like first: the state a judge follows when one outcome leads to several (a transacted
    # send's binding shows only at its commit)
    ranked = sorted(results.items(), key=lambda item: -_followed(item[1]))
    return [(s, o, c) for (o, s), c in ranked]


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
    state: BalancingState | Beliefs
    expected: BalancingOutcome
    allowed: int
    choices: tuple[ChoicePoint, ...] = ()


StrictStep = tuple[BalancingState, BalancingOutcome, tuple[ChoicePoint, ...]]
"""What ``apply_recording(state, command, STRICT)`` returns: the strict next state, outcome and choices."""


def judge(state: BalancingState | Beliefs, command: BalancingCommand, observed: BalancingOutcome, mode: Mode,
          strict: StrictStep | None = None) -> Verdict:
    """Judge ``observed`` as the outcome of ``command`` in ``state`` (or in any of the states of
    :class:`Beliefs`, which the verdict's ``state`` may then be too).

    ``strict`` is ``apply_recording(state, command, STRICT)`` when the caller has it already (the checker
    applies the strict step for the spec's own state); None computes it here.
    """
    if isinstance(state, Beliefs):
        if mode is Mode.PERMISSIVE:
            return _judge_beliefs(state, command, observed, mode)
        state = state.primary  # strict judging follows Artemis's own choices only
    strict_state, expected, strict_choices = strict if strict is not None else apply_recording(state, command,
                                                                                               STRICT)
    if observed == expected and not (mode is Mode.PERMISSIVE and hides_a_choice(command)):
        return Verdict(True, strict_state, expected, 1, strict_choices)
    if mode is Mode.STRICT:
        return Verdict(False, strict_state, expected, 1, strict_choices)
    options = allowed_choices(state, command)
    distinct = len({outcome for _, outcome, _ in options})
    matching = [(next_state, choices) for next_state, outcome, choices in options if outcome == observed]
    if matching:
        return Verdict(True, believe(tuple(s for s, _ in matching)), expected, distinct, matching[0][1])
    return Verdict(False, strict_state, expected, distinct, strict_choices)


MAX_BELIEFS = 64
"""The most states a permissive judge keeps apart besides the one it follows."""


@dataclass(frozen=True)
class Beliefs:
    """The states a permissive judge cannot tell apart yet: one outcome allowed several, as a transacted send
    does, whose binding shows only at the commit (:func:`hides_a_choice`).

    The judge follows ``primary``, the most Artemis-like, step by step (its attributes are the beliefs' own);
    the others wait in ``behind``, each with the index of the first step of ``history`` it has yet to take, and
    are brought up to date only when ``primary`` cannot explain an outcome, so that a broker that keeps Artemis's
    turns pays for no alternative it never needed.
    """

    primary: BalancingState
    behind: tuple[tuple[BalancingState, int], ...] = ()
    history: tuple[tuple[BalancingCommand, BalancingOutcome], ...] = ()

    def __getattr__(self, name: str) -> object:
        if name.startswith("__") or name == "primary":  # copying and pickling look before primary is set
            raise AttributeError(name)
        return getattr(self.primary, name)


def believe(states: tuple[BalancingState, ...]) -> BalancingState | Beliefs:
    """One state, or the :class:`Beliefs` that follow the first of several (without repeats)."""
    unique = tuple(dict.fromkeys(states))
    if len(unique) == 1:
        return unique[0]
    return Beliefs(unique[0], tuple((other, 0) for other in unique[1:MAX_BELIEFS + 1]))


def primary(state: BalancingState | Beliefs) -> BalancingState:
    """The state that stands for ``state``'s beliefs (``state`` itself when it is one)."""
    return state.primary if isinstance(state, Beliefs) else state


def every_state(state: BalancingState | Beliefs) -> tuple[BalancingState, ...]:
    """Every state ``state`` believes in, each brought up to date (the followed one first)."""
    if not isinstance(state, Beliefs):
        return (state,)
    return tuple(dict.fromkeys((state.primary, *_caught_up(state.behind, state.history))))


def hides_a_choice(command: BalancingCommand) -> bool:
    """Whether ``command``'s outcome may not show a choice it made: a transacted send (LB-TX-SEND)."""
    return getattr(command, "tx", None) is not None


def _spread(state: BalancingState | Beliefs) -> tuple[BalancingState, ...]:
    """A verdict's state and the alternatives it just opened (none of them behind yet)."""
    return (state.primary, *(s for s, _ in state.behind)) if isinstance(state, Beliefs) else (state,)


def _caught_up(behind: tuple[tuple[BalancingState, int], ...],
               history: tuple[tuple[BalancingCommand, BalancingOutcome], ...]) -> list[BalancingState]:
    """The states left behind, each taken through the steps of ``history`` it missed (branching where a step
    allows several, dropping those a step refutes)."""
    survivors: list[BalancingState] = []
    for state, start in behind:
        current = [state]
        for command, observed in history[start:]:
            current = [s for c in current for verdict in (judge(c, command, observed, Mode.PERMISSIVE),)
                       if verdict.accepted for s in _spread(verdict.state)]
        survivors.extend(current)
    return list(dict.fromkeys(survivors))


def _judge_beliefs(beliefs: Beliefs, command: BalancingCommand, observed: BalancingOutcome,
                   mode: Mode) -> Verdict:
    """Judge ``observed`` from the followed state; only if it cannot explain it, from the others as well."""
    verdict = judge(beliefs.primary, command, observed, mode)
    history = (*beliefs.history, (command, observed))
    if verdict.accepted:
        opened = _spread(verdict.state)
        behind = (*beliefs.behind, *((other, len(history)) for other in opened[1:]))[:MAX_BELIEFS]
        followed = Beliefs(opened[0], behind, history) if behind else opened[0]
        return Verdict(True, followed, verdict.expected, verdict.allowed, verdict.choices)
    survivors = _caught_up(beliefs.behind, history)
    if not survivors:
        return verdict
    followed_state = believe(tuple(survivors[:MAX_BELIEFS + 1]))
    return Verdict(True, followed_state, verdict.expected, verdict.allowed, ())
