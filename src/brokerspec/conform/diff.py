"""``brokerspec diff``: the shortest scripts on which two versions of the semantics give different outcomes.

Introduction
------------
A *side* (:mod:`.diff_sides`) is a profile of this spec or a git revision of
the spec. Both sides become one subject, a :class:`Pair`, which runs every
command on both and raises :class:`Distinguished` when their outcomes
differ. Per domain, :func:`diff` looks for differences in two ways, within
the domain's share of the budget:

1. **One step.** Every operation on a fresh broker, its arguments from a
   small alphabet (:mod:`.one_step`). Each that the sides answer differently
   is a one-step script, the shortest there is.
2. **Search.** The checker's state machine drives the pair, so Hypothesis
   searches for a distinguishing script, which is then cut until it is
   1-minimal (:mod:`brokerspec.check.minimal`). Hypothesis's own shrinking is
   off here: with scenarios passed over (below) it made little progress and
   could run for minutes past the budget (over 300 s on one duplicates
   search), while the 1-minimal cut takes milliseconds.

A *behaviour* is what the sides do at the step where they part: the
operation and the rule each side applied (outcomes carry their rule's ID).
One script is kept per behaviour: the search discards every scenario that
parts on a behaviour already found, so it spends its time on new ones. Each
kept script is played once more on both sides, which records every step's
two outcomes (a :class:`Finding`), and is written as a trace of both sides
(:class:`~brokerspec.trace.DiffSide`) that ``brokerspec explain`` shows side
by side. The note and every printed line say only what happened: the
outcomes each side gave, or that a side raised, when it did.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis.errors import Unsatisfiable, UnsatisfiedAssumption

from brokerspec.spec import Outcome, Profile

from ..check.domains import get_domain
from ..check.lockstep import Divergence, SubjectFactory, SubjectFailure
from ..check.machine import RunStats
from ..check.minimal import lockstep_replay, one_minimal
from ..check.runner import BATCH_EXAMPLES, run_machine
from ..trace import DiffSide, Trace, TraceStep, write_new_trace
from .diff_sides import DiffUsageError, Side, extract_revision, make_side, option_differences
from .failures import wire_json
from .one_step import one_step_commands
from .sut import Sut

MAX_BEHAVIOURS = 8
"""Scripts kept per domain: one per behaviour, at most this many."""

Behaviour = tuple[str, str, str]
"""(operation, rule of the from side, rule of the to side) at the step where the sides part."""


class Distinguished(Exception):
    """The two sides gave different outcomes for one command."""

    def __init__(self, command: Any, source: Outcome, target: Outcome) -> None:
        super().__init__(f"the sides part on {command.op}: from gives {wire_json(source)} (rule {source.rule or '-'})"
                         f", to gives {wire_json(target)} (rule {target.rule or '-'})")
        self.command = command
        self.source = source
        self.target = target

    @property
    def behaviour(self) -> Behaviour:
        """The operation and the rule each side applied."""
        return self.command.op, self.source.rule, self.target.rule


class Pair:
    """Two SUTs reset together; a command whose outcomes differ raises :class:`Distinguished`.

    A difference whose behaviour is in ``known`` discards the scenario instead
    (Hypothesis's ``UnsatisfiedAssumption``), so a search looks elsewhere.
    """

    judges_itself = True

    def __init__(self, source: Sut, target: Sut, domain: str, source_profile: Profile,
                 target_profile: Profile, known: frozenset[Behaviour] | set[Behaviour] = frozenset()) -> None:
        self.source = source
        self.target = target
        self.known = known
        source.reset(domain, source_profile)
        target.reset(domain, target_profile)

    def execute(self, command: Any) -> Outcome:
        """Run on both; the *from* side's outcome when they agree."""
        first = self.source.execute(command)
        second = self.target.execute(command)
        if first != second:
            parted = Distinguished(command, first, second)
            if parted.behaviour in self.known:
                raise UnsatisfiedAssumption()
            raise parted
        return first


@dataclass(frozen=True)
class Finding:
    """A script the sides part on, with both sides' outcome at every step (the last step is where they part)."""

    commands: tuple[Any, ...]
    source_outcomes: tuple[Outcome | None, ...]
    target_outcomes: tuple[Outcome | None, ...]
    raised: tuple[str, str] = ("", "")
    """What each side raised at the last step instead of answering ('' when it answered)."""
    found_by: str = "search"
    """``one step`` (the enumeration) or ``search`` (Hypothesis, then cut to a 1-minimal script)."""
    trace: Path | None = None

    @property
    def behaviour(self) -> Behaviour:
        """The operation and each side's rule at the last step ('' for a side that raised)."""
        last = self.commands[-1]
        return (last.op, _rule(self.source_outcomes[-1]), _rule(self.target_outcomes[-1]))

    def describe(self, source: str, target: str) -> str:
        """One line saying what each side did at the last step: its outcome and rule, or what it raised."""
        return (f"{source} and {target} part at step {len(self.commands)}: "
                f"{_did(source, self.source_outcomes[-1], self.raised[0])}; "
                f"{_did(target, self.target_outcomes[-1], self.raised[1])}")


def _rule(outcome: Outcome | None) -> str:
    return "" if outcome is None else outcome.rule


def _did(name: str, outcome: Outcome | None, raised: str) -> str:
    if raised:
        return f"{name} raised {raised}"
    assert outcome is not None
    return f"{name} gives {wire_json(outcome)} (rule {outcome.rule or '-'})"


@dataclass(frozen=True)
class DomainDiff:
    """What one domain's search found: a script per differing behaviour, or none within its budget."""

    domain: str
    seconds: float
    examples: int
    one_step_tried: int
    findings: tuple[Finding, ...] = field(default=())
    limited: bool = False
    """True when the search stopped at the limit of behaviours per domain: there may be more."""

    @property
    def divergence(self) -> Divergence | None:
        """The first finding as the checker's divergence (its script and the from side's outcomes)."""
        if not self.findings:
            return None
        first = self.findings[0]
        return Divergence(len(first.commands), first.commands[-1], "to side", "the sides' outcomes differ",
                          (), first.commands, first.source_outcomes, self.domain)

    @property
    def trace(self) -> Path | None:
        """The first finding's trace file."""
        return self.findings[0].trace if self.findings else None


def play_both(source: Side, target: Side, domain: str, commands: Sequence[Any]) -> Finding | None:
    """Play ``commands`` on fresh brokers of both sides until they part; None when they never do."""
    source.sut.reset(domain, source.profile)
    target.sut.reset(domain, target.profile)
    firsts: list[Outcome | None] = []
    seconds: list[Outcome | None] = []
    for number, command in enumerate(commands, start=1):
        answers: list[Outcome | None] = []
        raised: list[str] = []
        for side in (source, target):
            try:
                answers.append(side.sut.execute(command))
                raised.append("")
            except SubjectFailure:  # a side that cannot be run at all: the caller says so
                raise
            except Exception as error:  # a spec that raises is a difference, reported as such
                answers.append(None)
                raised.append(f"{type(error).__name__}: {error}")
        firsts.append(answers[0])
        seconds.append(answers[1])
        if answers[0] != answers[1] or any(raised):
            return Finding(tuple(commands[:number]), tuple(firsts), tuple(seconds), (raised[0], raised[1]))
    return None


def diff(source: Side, target: Side, domains: tuple[str, ...], seconds: float, out_dir: Path,
         run_seed: int | None = None, on_batch: Callable[[str, RunStats], None] | None = None,
         max_behaviours: int = MAX_BEHAVIOURS) -> list[DomainDiff]:
    """Per domain, one script per behaviour on which the sides part, within a share of ``seconds`` each."""
    return [diff_domain(source, target, name, seconds / len(domains), out_dir, run_seed, on_batch, max_behaviours)
            for name in domains]


def diff_domain(source: Side, target: Side, name: str, share: float, out_dir: Path, run_seed: int | None,
                on_batch: Callable[[str, RunStats], None] | None, max_behaviours: int) -> DomainDiff:
    """One domain: the one-step scripts, then the search for the rest of ``share`` seconds."""
    started = time.monotonic()
    domain = get_domain(name)
    known: set[Behaviour] = set()

    def pair(profile: Profile) -> Pair:
        return Pair(source.sut, target.sut, name, source.profile, target.profile, known)

    subjects: dict[str, SubjectFactory] = {"difference": pair}
    findings: list[Finding] = []

    def keep(commands: Sequence[Any], found_by: str) -> None:
        found = play_both(source, target, name, commands)
        if found is None:
            raise RuntimeError(f"{name}: a script the sides parted on in the search gave equal outcomes when "
                               f"played again, so one side is not deterministic: {list(commands)!r}")
        if found.behaviour not in known:
            known.add(found.behaviour)
            findings.append(found_with_trace(found, found_by, source, target, name, out_dir))

    commands = one_step_commands(name)
    for command in commands:
        if len(findings) >= max_behaviours:
            break
        found = play_both(source, target, name, [command])
        if found is not None and found.behaviour not in known:
            known.add(found.behaviour)
            findings.append(found_with_trace(found, "one step", source, target, name, out_dir))
    replay = lockstep_replay(source.profile, subjects, domain)
    stats = RunStats()
    batch = 0
    while len(findings) < max_behaviours and ((batch == 0 and share > 0) or time.monotonic() - started < share):
        # at least one batch when there is any budget, however long the one-step scripts took
        batch_seed = None if run_seed is None else run_seed + batch
        batch += 1
        try:
            divergence = run_machine(source.profile, subjects, BATCH_EXAMPLES, batch_seed, stats, domain,
                                     shrink=False)
        except Unsatisfiable:  # every scenario reached a known behaviour
            divergence = None
        if on_batch is not None:
            on_batch(name, stats)
        if divergence is not None:
            keep(one_minimal(divergence, replay).commands, "search")
    return DomainDiff(name, time.monotonic() - started, stats.examples, len(commands), tuple(findings),
                      len(findings) >= max_behaviours)


def found_with_trace(found: Finding, found_by: str, source: Side, target: Side, domain: str,
                     out_dir: Path) -> Finding:
    """``found``, written as a trace of both sides; with how it was found and where the trace is."""
    steps = tuple(TraceStep(c, a, b) for c, a, b in zip(found.commands, found.source_outcomes,
                                                       found.target_outcomes))
    sides = (DiffSide(source.name, source.profile, source.revision),
             DiffSide(target.name, target.profile, target.revision))
    trace = Trace(source.profile, steps, domain, found.describe(source.name, target.name), sides=sides)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = out_dir / f"{domain}-{_safe(source.name)}-vs-{_safe(target.name)}-{stamp}.jsonl"
    return Finding(found.commands, found.source_outcomes, found.target_outcomes, found.raised, found_by,
                   write_new_trace(path, trace))


def _safe(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-._" else "_" for ch in text)


def make_workdir() -> Path:
    """A temporary folder for extracted revisions (the caller removes it)."""
    import tempfile

    return Path(tempfile.mkdtemp(prefix="brokerspec-diff-"))


__all__ = ["MAX_BEHAVIOURS", "Behaviour", "DiffUsageError", "Distinguished", "DomainDiff", "Finding", "Pair", "Side",
           "diff", "diff_domain", "extract_revision", "make_side", "make_workdir", "option_differences", "play_both"]
