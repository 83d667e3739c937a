"""Replaying a trace against the spec and the implementations, side by side.

Introduction
------------
``brokerspec replay FILE`` reads a trace and runs its commands through the
spec and through each implementation layer independently (no layer stops
another). For every step it records each layer's outcome, whether the
layer's state still equals the spec's, and the outcome the trace recorded.
The first step where anything parts from the spec is the *first
difference*; the report explains it field by field.

A layer that raises is recorded with its error and stops; the rest go on.
When it raised a :class:`~brokerspec.conform.protocol.SutFailure` (a SUT
that crashed, hung or wrote garbage), the failure's kind is kept, so the
command can tell a SUT that failed (exit code 3) from one that disagreed
(exit code 1): :attr:`ReplayReport.disagrees` ignores what a failed SUT did
not answer, :attr:`ReplayReport.sut_failure` names the failure.

Two choices make a replay answer "does this SUT agree with the spec?"
rather than "does this recording?". ``judge_recorded=False`` keeps the
recorded outcomes for the reader but leaves them out of the verdict: a trace
that ``conform`` or ``fuzz`` wrote records the SUT's wrong outcome, and once
the SUT is fixed the replay must be able to pass. ``permissive`` names the
layers judged as ``conform`` judges a SUT by default: where the rules allow
several outcomes (load balancing), any allowed one agrees, and the layer is
followed from the state its own outcome leads to (the lockstep driver's
permissive mode, :mod:`brokerspec.check.lockstep`).

An outcome in the account of a difference is written as the SUT protocol's
JSON (:func:`~brokerspec.conform.failures.wire_json`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from typing import Any

from brokerspec.spec import Outcome

from .check.domains import get_domain
from .check.fairness import UNFAIR, FairnessWatch
from .check.lockstep import SubjectFactory, format_command, private_problem
from .conform.failures import wire_json
from .conform.protocol import FailureKind, SutFailure
from .trace import Trace


@dataclass(frozen=True)
class LayerStep:
    """One layer's result for one step."""

    outcome: Outcome | None
    error: str | None
    state_matches: bool
    state_difference: tuple[str, ...]
    invariant_problem: str | None = None
    failure: FailureKind | None = None
    """When the layer is a SUT that failed at this step or before: how it failed."""
    stopped: bool = False
    """The layer had already failed, so it was not asked (``error`` says when it failed)."""
    allowed: bool | None = None
    """Judged permissively: whether the rules allow the outcome (None: it must be the spec's own)."""
    unfair: tuple[str, ...] = ()
    """Judged permissively: when this step's choices complete a stretch that never takes turns
    (LB-FAIR-TURNS, :mod:`brokerspec.check.fairness`), the finding in words."""

    def agrees_with(self, expected: Outcome) -> bool:
        """True when this layer's outcome (or an allowed one), state and private invariants all match the spec."""
        outcome_ok = self.outcome == expected if self.allowed is None else self.allowed and not self.unfair
        return self.error is None and outcome_ok and self.state_matches and self.invariant_problem is None


@dataclass(frozen=True)
class ReplayStep:
    """Everything known about one step of a replayed trace."""

    number: int
    command: Any
    recorded: Outcome | None
    spec: Outcome
    layers: dict[str, LayerStep]
    recorded_judged: bool = True
    """Whether the recorded outcome counts in the verdict (it is shown either way)."""

    @property
    def recorded_differs(self) -> bool:
        """True when the trace recorded an outcome other than the spec's."""
        return self.recorded is not None and self.recorded != self.spec

    @property
    def recorded_parts(self) -> bool:
        """True when the recorded outcome differs from the spec's and counts in the verdict."""
        return self.recorded_judged and self.recorded_differs

    @property
    def agrees(self) -> bool:
        """True when the recording (if judged) and every layer match the spec at this step."""
        return not self.recorded_parts and all(l.agrees_with(self.spec) for l in self.layers.values())


@dataclass(frozen=True)
class ReplayReport:
    """A whole replay: every step, and the first where something parted."""

    trace: Trace
    steps: tuple[ReplayStep, ...]
    start_failures: tuple[tuple[str, str, FailureKind | None], ...] = ()
    """Layers that could not be started at all: (name, error, SUT failure kind or None)."""

    @property
    def first_difference(self) -> ReplayStep | None:
        """The first step that does not agree, or None."""
        return next((s for s in self.steps if not s.agrees), None)

    @property
    def disagrees(self) -> bool:
        """Whether anything parted from the spec other than a SUT failing: a recording, an outcome, a state."""
        return (any(kind is None for _, _, kind in self.start_failures)
                or any(step.recorded_parts or any(not layer.agrees_with(step.spec) and layer.failure is None
                                                    for layer in step.layers.values()) for step in self.steps))

    @property
    def sut_failure(self) -> tuple[str, str, FailureKind] | None:
        """The first SUT failure as (layer, error, kind), or None when no SUT failed."""
        for name, error, kind in self.start_failures:
            if kind is not None:
                return name, error, kind
        for step in self.steps:
            for name, layer in step.layers.items():
                if layer.failure is not None and layer.error is not None:
                    return name, layer.error, layer.failure
        return None

    def explain_first_difference(self) -> list[str]:
        """The first difference in words: who disagreed with the spec, and how."""
        starts = [f"  {name} could not be started: {error}" for name, error, _ in self.start_failures]
        step = self.first_difference
        if step is None:
            return [*starts, "every layer agrees with the spec at every step"]
        lines = [*starts, f"first difference at step {step.number}: {format_command(step.command)}",
                 f"  spec:     {wire_json(step.spec)}  (rule {step.spec.rule or '-'})"]
        if step.recorded_differs:
            judged = "" if step.recorded_judged else " (not judged)"
            lines.append(f"  recorded{judged}: {wire_json(step.recorded)}")
        for name, layer in step.layers.items():
            if layer.error is not None:
                lines.append(f"  {name}: {layer.error}" if layer.stopped else f"  {name}: raised {layer.error}")
            elif layer.outcome != step.spec:
                allowed = "" if layer.allowed is None else (" (an outcome the rules allow)" if layer.allowed
                                                            else " (not an outcome the rules allow)")
                lines.append(f"  {name}: {wire_json(layer.outcome)}{allowed}")
            if not layer.state_matches and layer.error is None:
                lines.append(f"  {name} state differs from the spec's:")
                lines.extend(f"    {d}" for d in layer.state_difference)
            if layer.invariant_problem is not None:
                lines.append(f"  {name} broke its private invariants: {layer.invariant_problem}")
            if layer.unfair:
                lines.append(f"  {name}: {UNFAIR}")
                lines.extend(f"    {d}" for d in layer.unfair)
        return lines


def replay(trace: Trace, layers: Mapping[str, SubjectFactory], judge_recorded: bool = True,
           permissive: Collection[str] = ()) -> ReplayReport:
    """Run ``trace`` through the spec and every layer in ``layers``; a layer that raises stops only itself.

    ``judge_recorded=False`` leaves the recorded outcomes out of the verdict; the
    layers named in ``permissive`` may give any outcome the rules allow, when the
    trace's domain allows several (otherwise they are judged as the rest).
    """
    domain = get_domain(trace.domain)
    state = domain.initial_state(trace.profile)
    judge = domain.judge
    followed = {name: state for name in layers if name in permissive and judge is not None}
    fairness = {name: FairnessWatch() for name in followed}
    subjects: dict[str, Any] = {}
    broken: dict[str, tuple[str, FailureKind | None]] = {}
    start_failures: list[tuple[str, str, FailureKind | None]] = []
    for name, factory in layers.items():
        try:
            subjects[name] = factory(trace.profile)
        except Exception as error:  # a SUT that cannot even be started (or greeted) is a finding too
            kind = error.kind if isinstance(error, SutFailure) else None
            start_failures.append((name, f"{type(error).__name__}: {error}", kind))
            broken[name] = (f"{type(error).__name__} before step 1", kind)
    steps: list[ReplayStep] = []
    for number, traced in enumerate(trace.steps, start=1):
        state, expected = domain.apply(state, traced.command)
        results: dict[str, LayerStep] = {}
        for name in layers:
            if name in broken:
                why, kind = broken[name]
                results[name] = LayerStep(None, f"(stopped: {why})", False, (), failure=kind, stopped=True)
                continue
            subject = subjects[name]
            try:
                outcome = subject.execute(traced.command)
                show = getattr(subject, "snapshot", None)
                snapshot = state if show is None else show()  # a SUT shows outcomes only
            except Exception as error:  # a crashing layer is reported, and stops only itself
                kind = error.kind if isinstance(error, SutFailure) else None
                broken[name] = (f"{type(error).__name__} at step {number}", kind)
                results[name] = LayerStep(None, f"{type(error).__name__}: {error}", False, (), failure=kind)
                continue
            if name in followed and judge is not None:
                judgement = judge(followed[name], traced.command, outcome)
                followed[name] = judgement.state
                unfair = fairness[name].observe(number, judgement.choices) if judgement.accepted else None
                difference = () if show is None else tuple(domain.describe_state_difference(
                    judgement.state, snapshot, skip=domain.private_parts))
                results[name] = LayerStep(outcome, None, not difference, difference, private_problem(subject),
                                          allowed=judgement.accepted,
                                          unfair=() if unfair is None else tuple(unfair.describe()))
                continue
            difference = tuple(domain.describe_state_difference(state, snapshot)) if snapshot != state else ()
            results[name] = LayerStep(outcome, None, snapshot == state, difference, private_problem(subject))
        steps.append(ReplayStep(number, traced.command, traced.outcome, expected, results, judge_recorded))
    for subject in subjects.values():
        close = getattr(subject, "close", None)
        if close is not None:
            close()
    return ReplayReport(trace, tuple(steps), tuple(start_failures))
