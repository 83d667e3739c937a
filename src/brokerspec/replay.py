"""Replaying a trace against the spec and the implementations, side by side.

Introduction
------------
``brokerspec replay FILE`` reads a trace and runs its commands through the
spec and through each implementation layer independently (no layer stops
another). For every step it records each layer's outcome, whether the
layer's state still equals the spec's, and the outcome the trace recorded.
The first step where anything parts from the spec is the *first
difference*; the report explains it field by field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from typing import Any

from brokerspec.spec import Outcome

from .check.domains import get_domain
from .check.lockstep import SubjectFactory, format_command, private_problem
from .trace import Trace


@dataclass(frozen=True)
class LayerStep:
    """One layer's result for one step."""

    outcome: Outcome | None
    error: str | None
    state_matches: bool
    state_difference: tuple[str, ...]
    invariant_problem: str | None = None

    def agrees_with(self, expected: Outcome) -> bool:
        """True when this layer's outcome, state and private invariants all match the spec."""
        return (self.error is None and self.outcome == expected and self.state_matches
                and self.invariant_problem is None)


@dataclass(frozen=True)
class ReplayStep:
    """Everything known about one step of a replayed trace."""

    number: int
    command: Any
    recorded: Outcome | None
    spec: Outcome
    layers: dict[str, LayerStep]

    @property
    def recorded_differs(self) -> bool:
        """True when the trace recorded an outcome other than the spec's."""
        return self.recorded is not None and self.recorded != self.spec

    @property
    def agrees(self) -> bool:
        """True when the recording and every layer match the spec at this step."""
        return not self.recorded_differs and all(l.agrees_with(self.spec) for l in self.layers.values())


@dataclass(frozen=True)
class ReplayReport:
    """A whole replay: every step, and the first where something parted."""

    trace: Trace
    steps: tuple[ReplayStep, ...]

    @property
    def first_difference(self) -> ReplayStep | None:
        """The first step that does not agree, or None."""
        return next((s for s in self.steps if not s.agrees), None)

    def explain_first_difference(self) -> list[str]:
        """The first difference in words: who disagreed with the spec, and how."""
        step = self.first_difference
        if step is None:
            return ["every layer agrees with the spec at every step"]
        lines = [f"first difference at step {step.number}: {format_command(step.command)}",
                 f"  spec:     {step.spec!r}  (rule {step.spec.rule})"]
        if step.recorded_differs:
            lines.append(f"  recorded: {step.recorded!r}")
        for name, layer in step.layers.items():
            if layer.error is not None:
                lines.append(f"  {name}: raised {layer.error}")
            elif layer.outcome != step.spec:
                lines.append(f"  {name}: {layer.outcome!r}")
            if not layer.state_matches:
                lines.append(f"  {name} state differs from the spec's:")
                lines.extend(f"    {d}" for d in layer.state_difference)
            if layer.invariant_problem is not None:
                lines.append(f"  {name} broke its private invariants: {layer.invariant_problem}")
        return lines


def replay(trace: Trace, layers: Mapping[str, SubjectFactory]) -> ReplayReport:
    """Run ``trace`` through the spec and every layer in ``layers``."""
    domain = get_domain(trace.domain)
    state = domain.initial_state(trace.profile)
    subjects = {name: factory(trace.profile) for name, factory in layers.items()}
    broken: dict[str, str] = {}
    steps: list[ReplayStep] = []
    for number, traced in enumerate(trace.steps, start=1):
        state, expected = domain.apply(state, traced.command)
        results: dict[str, LayerStep] = {}
        for name, subject in subjects.items():
            if name in broken:
                results[name] = LayerStep(None, f"(stopped: {broken[name]})", False, ())
                continue
            try:
                outcome = subject.execute(traced.command)
                show = getattr(subject, "snapshot", None)
                snapshot = state if show is None else show()  # a SUT shows outcomes only
            except Exception as error:  # a crashing layer is reported, and stops only itself
                broken[name] = f"{type(error).__name__} at step {number}"
                results[name] = LayerStep(None, f"{type(error).__name__}: {error}", False, ())
                continue
            difference = tuple(domain.describe_state_difference(state, snapshot)) if snapshot != state else ()
            results[name] = LayerStep(outcome, None, snapshot == state, difference, private_problem(subject))
        steps.append(ReplayStep(number, traced.command, traced.outcome, expected, results))
    for subject in subjects.values():
        close = getattr(subject, "close", None)
        if close is not None:
            close()
    return ReplayReport(trace, tuple(steps))
