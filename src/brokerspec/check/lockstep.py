"""Running one scenario through the spec and the implementations, step by step.

Introduction
------------
A *subject* is anything that executes commands and can show its state as a
spec state: the reference broker, the fast broker, a planted-bug variant.
:class:`Lockstep` applies each command to the spec and to every subject, and
after every step compares

1. each subject's outcome with the spec's outcome,
2. each subject's snapshot with the spec's state,
3. each subject's private invariants (``check_valid``, when it has one),
4. the spec state's own invariants (a broken one is a bug in the spec).

The first disagreement becomes a :class:`Divergence`, which says in words
which step, which layer, and what differed, field by field. The Hypothesis
state machine and ``brokerspec replay`` both use this class, so a failure
found by one is reproduced exactly by the other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from brokerspec.impl import FastBroker
from brokerspec.reference import ReferenceBroker
from brokerspec.spec import BrokerspecError, Profile
from brokerspec.spec.addressing import (
    AddressingCommand,
    AddressingState,
    Outcome,
    apply,
    initial_state,
    invariant_violations,
)

from ..codec import encode_command


class Subject(Protocol):
    """What the lockstep driver needs from an implementation."""

    def execute(self, command: AddressingCommand) -> Outcome: ...

    def snapshot(self) -> AddressingState: ...


SubjectFactory = Callable[[Profile], Subject]

LAYERS: dict[str, SubjectFactory] = {"reference": ReferenceBroker, "impl": FastBroker}


class DivergenceError(AssertionError):
    """Raised inside a checker when a step diverges; carries the :class:`Divergence`."""

    def __init__(self, divergence: Divergence) -> None:
        super().__init__(divergence.explain())
        self.divergence = divergence


@dataclass(frozen=True)
class Divergence:
    """Where a subject first parted from the spec."""

    step: int
    command: AddressingCommand
    layer: str
    what: str
    details: tuple[str, ...]
    commands: tuple[AddressingCommand, ...] = field(default=())
    observed: tuple[Outcome | None, ...] = field(default=())

    def explain(self) -> str:
        """A readable account: the script up to the failing step, then what differed."""
        lines = [f"{self.layer} parted from the spec at step {self.step}: {self.what}", "", "script:"]
        for number, command in enumerate(self.commands, start=1):
            marker = "  <-- here" if number == self.step else ""
            lines.append(f"  {number:>3}. {format_command(command)}{marker}")
        lines.append("")
        lines.extend(f"  {d}" for d in self.details)
        return "\n".join(lines)


def format_command(command: AddressingCommand) -> str:
    """A command as a broker verb with its arguments, e.g. ``create_queue(address='a1', ...)``."""
    args = ", ".join(f"{k}={v!r}" for k, v in encode_command(command).items())
    return f"{command.op}({args})"


def describe_state_difference(expected: AddressingState, actual: AddressingState) -> list[str]:
    """Every entry in which two address-model states differ, in words."""
    lines: list[str] = []
    for part in ("addresses", "queues", "name_counts", "settings", "prefixes"):
        want: Mapping[object, object] = getattr(expected, part)
        have: Mapping[object, object] = getattr(actual, part)
        for key in sorted(set(want) | set(have), key=repr):
            if want.get(key) != have.get(key):
                lines.append(f"{part}[{key!r}]: spec {want.get(key)!r}, got {have.get(key)!r}")
    if expected.options != actual.options:
        lines.append(f"options: spec {expected.options!r}, got {actual.options!r}")
    return lines


def private_problem(subject: object) -> str | None:
    """What ``subject.check_valid()`` reports, or None (also when it has no such check)."""
    check_valid = getattr(subject, "check_valid", None)
    if check_valid is None:
        return None
    try:
        check_valid()
    except BrokerspecError as error:
        return str(error)
    return None


class Lockstep:
    """The spec and some subjects, advanced one command at a time."""

    def __init__(self, profile: Profile, subjects: Mapping[str, SubjectFactory]) -> None:
        self.profile = profile
        self.state = initial_state(profile)
        self.subjects = {name: factory(profile) for name, factory in subjects.items()}
        self.commands: list[AddressingCommand] = []
        self.outcomes: list[Outcome] = []
        self.observed: dict[str, list[Outcome | None]] = {name: [] for name in self.subjects}

    def step(self, command: AddressingCommand) -> Outcome:
        """Apply ``command`` everywhere; raise :class:`DivergenceError` at the first disagreement."""
        self.commands.append(command)
        number = len(self.commands)
        self.state, expected = apply(self.state, command)
        self.outcomes.append(expected)
        broken = invariant_violations(self.state)
        if broken:
            self._fail(number, command, "spec", "the spec broke its own invariants", broken)
        for name, subject in self.subjects.items():
            try:
                actual = subject.execute(command)
            except Exception as error:  # a crash in a subject is a finding, not a harness error
                self.observed[name].append(None)
                self._fail(number, command, name, "it raised an exception",
                           [f"{type(error).__name__}: {error}"])
            self.observed[name].append(actual)
            if actual != expected:
                self._fail(number, command, name, "the outcomes differ",
                           [f"spec: {expected!r}  (rule {expected.rule})", f"{name}: {actual!r}"])
            snapshot = subject.snapshot()
            if snapshot != self.state:
                self._fail(number, command, name, "the states differ after the step",
                           describe_state_difference(self.state, snapshot))
            problem = private_problem(subject)
            if problem is not None:
                self._fail(number, command, name, "its private invariants broke", [problem])
        return expected

    def _fail(self, number: int, command: AddressingCommand, layer: str, what: str, details: list[str]) -> None:
        observed = tuple(self.observed.get(layer, self.outcomes))
        raise DivergenceError(
            Divergence(number, command, layer, what, tuple(details), tuple(self.commands), observed)
        )
