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

A subject without ``snapshot`` (a system under test, :mod:`brokerspec.conform`)
is held to its outcomes only: 2 and 3 are skipped for it. A subject may also
have ``snapshot_like(state)``: its snapshot, with each part that equals the
part of ``state`` being that very part (equality decides, field by field, so
the result equals ``snapshot()``). Step 2 passes it the spec's state, and the
comparison then finds the equal parts by identity instead of walking them.

*Deferred comparison* (``window`` above 1) is for one such subject alone
when it can take a batch of commands (``execute_many``, e.g. a SUT that pipelines
its requests). Only the spec decides what is drawn next, so the subject
need not answer before the next step: the spec runs each step at once, the
subject's commands are queued, and the queue is flushed through
``execute_many`` when ``window`` commands wait, before the spec's own
failure is reported, and when the scenario ends (:meth:`Lockstep.finish`).
The replies are then compared in order, exactly as step by step: the first
that differs raises the same :class:`Divergence` (the same step number,
script and observed outcomes) as the step-by-step driver would, and a
subject that fails at step *k* is judged as failing at step *k* once the
replies before it have all agreed. A subject with
``judges_itself`` set compares two specs with each other (``brokerspec
diff``) and raises when they part; the driver does not compare it at all.

In *permissive* mode (for a domain whose rules allow several outcomes, such
as load balancing) step 1 accepts any outcome the rules allow, and each
subject is followed from the state its own observed outcome leads to; step 2
then leaves out the parts that only record tie-breaking (round-robin
positions). The choices behind each accepted outcome are also watched over
the run (:mod:`.fairness`): a subject that keeps taking the same member
where the spec's round robin would pass the turn on fails there, though
every step alone was allowed. Strict mode, the default, demands the spec's
exact outcome.

The first disagreement becomes a :class:`Divergence`, which says in words
which step, which layer, and what differed, field by field. The Hypothesis
state machine and ``brokerspec replay`` both use this class, so a failure
found by one is reproduced exactly by the other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hypothesis.errors import UnsatisfiedAssumption

from brokerspec.spec import BrokerspecError, Outcome, Profile

from ..codec import encode_command
from .domains import ADDRESSING, Domain, Subject, SubjectFactory
from .fairness import UNFAIR, FairnessWatch

__all__ = ["LAYERS", "Divergence", "DivergenceError", "Lockstep", "Subject", "SubjectFactory", "SubjectFailure",
           "format_command", "private_problem"]

LAYERS: Mapping[str, SubjectFactory] = ADDRESSING.layers
"""The address-resolution layers (kept for callers that predate other domains)."""


class SubjectFailure(Exception):
    """A subject could not answer at all (a SUT that crashed or hung): raised through, never a divergence."""


class DivergenceError(AssertionError):
    """Raised inside a checker when a step diverges; carries the :class:`Divergence`."""

    def __init__(self, divergence: Divergence) -> None:
        super().__init__(divergence.explain())
        self.divergence = divergence


@dataclass(frozen=True)
class Divergence:
    """Where a subject first parted from the spec."""

    step: int
    command: Any
    layer: str
    what: str
    details: tuple[str, ...]
    commands: tuple[Any, ...] = field(default=())
    observed: tuple[Outcome | None, ...] = field(default=())
    domain: str = "addressing"

    def explain(self) -> str:
        """A readable account: the script up to the failing step, then what differed."""
        lines = [f"{self.layer} parted from the spec at step {self.step}: {self.what}", "", "script:"]
        for number, command in enumerate(self.commands, start=1):
            marker = "  <-- here" if number == self.step else ""
            lines.append(f"  {number:>3}. {format_command(command)}{marker}")
        lines.append("")
        lines.extend(f"  {d}" for d in self.details)
        return "\n".join(lines)


def format_command(command: Any) -> str:
    """A command as a broker verb with its arguments, e.g. ``create_queue(address='a1', ...)``."""
    args = ", ".join(f"{k}={v!r}" for k, v in encode_command(command).items())
    return f"{command.op}({args})"


def private_problem(subject: object) -> str | None:
    """What ``subject.check_valid()`` reports, or None (also when it has no such check)."""
    return _reported(getattr(subject, "check_valid", None))


def _reported(check_valid: Callable[[], object] | None) -> str | None:
    """What a ``check_valid`` method reports, or None (also for no method)."""
    if check_valid is None:
        return None
    try:
        check_valid()
    except BrokerspecError as error:
        return str(error)
    return None


class Lockstep:
    """The spec and some subjects, advanced one command at a time (the subjects' replies compared at once, or
    with a deferred ``window``: see the module's introduction)."""

    def __init__(self, profile: Profile, subjects: Mapping[str, SubjectFactory],
                 domain: Domain = ADDRESSING, permissive: bool = False, window: int = 1) -> None:
        if permissive and domain.judge is None:
            raise ValueError(f"the {domain.name} domain allows exactly one outcome per step; it has no permissive mode")
        self.profile = profile
        self.domain = domain
        self.permissive = permissive
        self.state = domain.initial_state(profile)
        self.subjects: dict[str, Subject] = {name: factory(profile) for name, factory in subjects.items()}
        self.followed: dict[str, Any] = {name: self.state for name in self.subjects}
        self.commands: list[Any] = []
        self.outcomes: list[Outcome] = []
        self.observed: dict[str, list[Outcome | None]] = {name: [] for name in self.subjects}
        self.fairness: dict[str, FairnessWatch] = {name: FairnessWatch() for name in self.subjects}
        if window < 1:
            raise ValueError(f"a deferred window holds at least one command, not {window}")
        # One subject only: with several, step by step compares them in turn at each step, and a batch per
        # subject could report a later step of the first before an earlier step of the second.
        deferrable = len(self.subjects) == 1 and all(
            callable(getattr(s, "execute_many", None)) and getattr(s, "snapshot", None) is None
            and not getattr(s, "judges_itself", False) for s in self.subjects.values())
        self.window = window if deferrable else 1
        self._looks: dict[str, tuple[bool, Any, Any, Any]] = {
            name: (bool(getattr(s, "judges_itself", False)), getattr(s, "snapshot", None),
                   getattr(s, "snapshot_like", None), getattr(s, "check_valid", None))
            for name, s in self.subjects.items()}
        """Per subject, what step 2 and 3 use (looked up once: a missing attribute costs an exception each time):
        ``judges_itself``, ``snapshot``, ``snapshot_like`` and ``check_valid``."""
        """Commands queued before the subjects are asked (1: every step at once; see the introduction)."""
        self.pending: list[int] = []
        """Numbers (from 1) of the steps the spec has run and the subjects have not yet answered."""

    def step(self, command: Any) -> Outcome:
        """Apply ``command`` everywhere; raise :class:`DivergenceError` at the first disagreement."""
        self.commands.append(command)
        number = len(self.commands)
        before = self.state
        self.state, expected = self.domain.apply(before, command)
        self.outcomes.append(expected)
        # a step that leaves the spec state the same object (a lookup, a refusal) cannot break its invariants
        broken = self.domain.invariant_violations(self.state) if self.state is not before or number == 1 else []
        if broken:
            self.finish()  # a subject that parted at an earlier step is reported first, as step by step
            self._fail(number, command, "spec", "the spec broke its own invariants", broken)
        if self.window > 1:
            self.pending.append(number)
            if len(self.pending) >= self.window:
                self.finish()
            return expected
        for name, subject in self.subjects.items():
            try:
                actual = subject.execute(command)
            except (SubjectFailure, UnsatisfiedAssumption):  # the latter: the fuzzer discards a scenario
                raise
            except Exception as error:  # a crash in a subject is a finding, not a harness error
                self.observed[name].append(None)
                self._fail(number, command, name, "it raised an exception",
                           [f"{type(error).__name__}: {error}"])
            self.observed[name].append(actual)
            judges_itself, show, like, check_valid = self._looks[name]
            if judges_itself:
                continue  # a pair of specs compared with each other (brokerspec diff), not with this one
            if self.permissive:
                self._judge_permissively(number, command, name, subject, actual)
                continue
            if actual != expected:
                self._fail(number, command, name, "the outcomes differ",
                           [f"spec: {expected!r}  (rule {expected.rule})", f"{name}: {actual!r}"])
            if show is None:
                continue  # a system under test shows outcomes only
            snapshot = show() if like is None else like(self.state)  # equal parts shared: see the introduction
            if snapshot is not self.state and snapshot != self.state:
                self._fail(number, command, name, "the states differ after the step",
                           self.domain.describe_state_difference(self.state, snapshot))
            problem = _reported(check_valid)
            if problem is not None:
                self._fail(number, command, name, "its private invariants broke", [problem])
        return expected

    def finish(self) -> None:
        """Ask the subjects the queued commands (deferred comparison) and compare their replies in order."""
        if not self.pending:
            return
        numbers, self.pending = self.pending, []
        commands = [self.commands[n - 1] for n in numbers]
        for name, subject in self.subjects.items():
            try:
                replies: list[Outcome] = subject.execute_many(commands)  # type: ignore[attr-defined]
                failure: BaseException | None = None
            except Exception as error:  # where the batch stopped: the failing command and the replies before it
                stop = getattr(error, "batch_stop", None)
                replies = list(getattr(stop, "completed", ()))
                failure = error
            for number, actual in zip(numbers, replies):
                self._compare(number, self.commands[number - 1], name, subject, actual)
            if failure is not None:
                number = numbers[min(len(replies), len(numbers) - 1)]
                self._failed(number, self.commands[number - 1], name, subject, failure)
            elif len(replies) != len(numbers):
                self._failed(numbers[min(len(replies), len(numbers) - 1)], commands[-1], name, subject,
                             SubjectFailure(f"{len(replies)} replies to a batch of {len(numbers)} commands"))

    def _compare(self, number: int, command: Any, name: str, subject: Subject, actual: Outcome) -> None:
        """Judge one deferred reply, as :meth:`step` judges a subject without a snapshot."""
        self.observed[name].append(actual)
        if self.permissive:
            self._judge_permissively(number, command, name, subject, actual)
        elif actual != self.outcomes[number - 1]:
            expected = self.outcomes[number - 1]
            self._fail(number, command, name, "the outcomes differ",
                       [f"spec: {expected!r}  (rule {expected.rule})", f"{name}: {actual!r}"])

    def _failed(self, number: int, command: Any, name: str, subject: Subject, failure: BaseException) -> None:
        """A subject that could not answer step ``number`` of a batch: judged as if it had failed that step alone.

        A subject with ``failed_at`` (the fuzzer's guard) raises its own judgement of the failure (it
        drops an operation, discards the scenario or keeps the failure); a failure to answer is raised
        through, and any other exception is a finding at that step.
        """
        try:
            settle = getattr(subject, "failed_at", None)
            if settle is not None:
                settle(failure, command)
            raise failure
        except (SubjectFailure, UnsatisfiedAssumption):
            raise
        except Exception as error:
            self.observed[name].append(None)
            self._fail(number, command, name, "it raised an exception", [f"{type(error).__name__}: {error}"])

    def _judge_permissively(self, number: int, command: Any, name: str, subject: Subject, actual: Outcome) -> None:
        judge = self.domain.judge
        if judge is None:  # pragma: no cover - refused in __init__
            raise RuntimeError(f"the {self.domain.name} domain has no permissive mode")
        judgement = judge(self.followed[name], command, actual)
        if not judgement.accepted:
            self._fail(number, command, name, "the outcome is not one the rules allow",
                       [f"spec (strict): {judgement.expected!r}  (rule {judgement.expected.rule})",
                        f"outcomes the rules allow: {judgement.allowed}", f"{name}: {actual!r}"])
        unfair = self.fairness[name].observe(number, judgement.choices)
        if unfair is not None:  # before the subject is followed past the step, as for a refused outcome
            self._fail(number, command, name, UNFAIR, unfair.describe())
        self.followed[name] = judgement.state
        _, show, _, check_valid = self._looks[name]
        if show is None:
            return
        difference = self.domain.describe_state_difference(judgement.state, show(),
                                                           skip=self.domain.private_parts)
        if difference:
            self._fail(number, command, name, "the states differ after the step", difference)
        problem = _reported(check_valid)
        if problem is not None:
            self._fail(number, command, name, "its private invariants broke", [problem])

    def close(self) -> None:
        """Close every subject that holds resources (a store, a temporary folder)."""
        for subject in self.subjects.values():
            close = getattr(subject, "close", None)
            if close is not None:
                close()

    def _fail(self, number: int, command: Any, layer: str, what: str, details: list[str]) -> None:
        observed = tuple(self.observed.get(layer, self.outcomes))
        raise DivergenceError(
            Divergence(number, command, layer, what, tuple(details), tuple(self.commands[:number]), observed,
                       self.domain.name)
        )
