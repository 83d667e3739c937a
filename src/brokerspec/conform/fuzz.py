"""Fuzzing a SUT: the lockstep state machines of the checker, with the SUT as the only subject.

Introduction
------------
:func:`fuzz` runs, under each profile asked for, each domain the SUT offers
(a domain no profile option changes, such as topologies, once only), every
run taking a share of one budget. Each run is that domain's Hypothesis state
machine (:mod:`brokerspec.check.machine`) with the SUT in lockstep against
the spec. A wrong outcome is shrunk by Hypothesis to a minimal broker script
and written as a trace file, which ``brokerspec replay TRACE --sut CMD``
plays again. A finding ends its own run only: the other runs go on, so the
report has a row for every domain under every profile.

A SUT that *fails* (crashes, hangs, writes garbage) cannot be shrunk the
same way: every attempt would wait for a timeout or a restart. So the SUT is
wrapped in a :class:`FirstFailure` guard: the first failure is kept with
the commands sent since the last reset, and every later call fails at
once, which ends the run quickly (Hypothesis may call that flaky; the
kept failure is what is reported). That script is written as a trace too.

A partial SUT answers an operation it does not implement with an ``error``
reply (``docs/sut-protocol.md``). The first time an operation is answered
so, before the SUT ever answered it with an outcome in this run, the guard
*drops* it: the scenario is discarded, the operation joins the run's
excluded set, the state machine stops drawing it, and the run goes on. An
``error`` reply to an operation the SUT has answered before is a SUT failure,
as any other. Operations can also be left out from the start (``fuzz
--exclude-op``), and an operation the SUT's protocol version lacks (a query
for version 1, ``prepare`` before version 3) is never drawn, the report
saying why (:func:`unasked_ops`). An in-process SUT that cannot express one scenario
(:class:`~.protocol.Unsupported`, e.g. a name a real broker's API cannot
carry) only has that scenario discarded, and counted. What the runs found
is a :class:`~.fuzz_report.FuzzReport`.

A SUT whose hello announces pipelining (``SubprocessSut.in_flight`` above
1) is not asked step by step: its commands are queued while the spec runs
and sent :data:`DEFERRED_WINDOW` at a time through ``execute_many``, and the
replies are compared in order (deferred comparison,
:class:`~brokerspec.check.lockstep.Lockstep`). A divergence names the same
step as step by step would; a failure inside a batch is judged by the guard
only once every reply before it has agreed, so the drop rule above holds
for an operation first answered with an ``error`` inside a batch, and a
failure after a diverging reply is never kept.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

from hypothesis.errors import UnsatisfiedAssumption

from brokerspec.spec import Outcome, Profile, is_query

from ..check.domains import get_domain
from ..check.machine import RunStats
from ..check.runner import check_for
from ..codec import COMMANDS
from ..trace import Trace, TraceStep, write_new_trace
from .fuzz_report import Dropped, DomainRun, FuzzReport, Status
from .protocol import FailureKind, Hello, SutFailure, Unsupported, batch_stop, why_not_asked
from .sut import Sut, SutSubject, execute_many

__all__ = ["DEFERRED_WINDOW", "DomainRun", "Dropped", "FirstFailure", "FuzzReport", "GuardedSubject", "Status",
           "fuzz", "unasked_ops"]

DEFERRED_WINDOW = 32
"""Commands queued for a pipelining SUT before their replies are compared (and at the end of every scenario)."""


class FirstFailure:
    """A SUT that remembers its first failure, and the script that led to it, and fails at once afterwards.

    It also drops what the SUT does not implement (see the module's introduction): ``excluded`` is the run's live
    set of operations left out, which the state machine consults.
    """

    def __init__(self, sut: Sut, excluded: AbstractSet[str] = frozenset()) -> None:
        self.sut = sut
        self.label = sut.label
        self.failure: SutFailure | None = None
        self.script: list[Any] = []
        self.domain = ""
        self.unsupported: dict[str, int] = {}
        """Scenarios discarded because the SUT could not perform an operation: the reason's first words -> count."""
        self.excluded: set[str] = set(excluded)
        self.answered: set[str] = set()
        """Operations the SUT has answered with an outcome in this run."""
        self.dropped: dict[str, Dropped] = {}
        self.judged = 0
        """Steps the SUT answered with an outcome, each judged against the spec."""

    def hello(self, profile: Profile, domains: tuple[str, ...]) -> Hello:
        """Pass the handshake through."""
        return self.sut.hello(profile, domains)

    def reset(self, domain: str, profile: Profile) -> None:
        """Reset, unless a failure has been seen."""
        self._refuse()
        self.script = []
        self.domain = domain
        self._guard(lambda: self.sut.reset(domain, profile))

    def execute(self, command: Any) -> Outcome:
        """Execute, unless a failure has been seen."""
        self._refuse()
        self.script.append(command)
        outcome: Outcome = self._guard(lambda: self.sut.execute(command), command)
        self.answered.add(command.op)
        self.judged += 1
        return outcome

    def execute_many(self, commands: Sequence[Any]) -> list[Outcome]:
        """Execute a batch, unless a failure has been seen; a failure inside it is raised as the SUT raised it.

        The guard does not judge that failure here: the lockstep first compares the replies before it, and
        calls :meth:`failed_at` only when they all agree (a failure after a diverging reply is not kept).
        """
        self._refuse()
        try:
            outcomes = execute_many(self.sut, commands)
        except Exception as error:
            stop = batch_stop(error)
            done = 0 if stop is None else stop.index
            self._answered(commands[:done])
            self.script.extend(commands[:done + 1])
            raise
        self._answered(commands)
        self.script.extend(commands)
        return outcomes

    def failed_at(self, error: BaseException, command: Any) -> None:
        """Judge a failure of a batch at ``command`` as :meth:`execute` judges one of ``command`` alone (raises)."""

        def fail() -> None:
            raise error

        self._guard(fail, command)

    def close(self) -> None:
        """Close the SUT."""
        self.sut.close()

    def _answered(self, commands: Sequence[Any]) -> None:
        self.answered.update(command.op for command in commands)
        self.judged += len(commands)

    def _refuse(self) -> None:
        if self.failure is not None:
            raise self.failure

    def _guard(self, call: Callable[[], Any], command: Any = None) -> Any:
        try:
            return call()
        except Unsupported as unsupported:
            if command is None:
                self.failure = unsupported
                raise
            why = unsupported.message.split(" at step ", 1)[0]
            self.unsupported[why] = self.unsupported.get(why, 0) + 1
            # This scenario cannot be played on this SUT: Hypothesis draws another. Raised directly rather than
            # through hypothesis.reject(), which warns when a script is replayed outside a search (minimal.py).
            raise UnsatisfiedAssumption() from None
        except SutFailure as failure:
            op = getattr(command, "op", None)
            if failure.kind is FailureKind.ERROR_REPLY and op is not None and op not in self.answered:
                dropped = self.dropped.setdefault(op, Dropped(op, failure.message))
                dropped.scenarios += 1
                dropped.steps += len(self.script)
                self.excluded.add(op)
                raise UnsatisfiedAssumption() from None
            self.failure = failure
            raise


QUERY_OPS: dict[str, frozenset[str]] = {
    domain: frozenset(op for op, kind in commands.items() if is_query(kind)) for domain, commands in COMMANDS.items()}
"""Each domain's queries: what a SUT that speaks protocol version 1 is never asked."""


def unasked_ops(domain: str, version: int) -> dict[str, str]:
    """The operations of ``domain`` a SUT whose session speaks ``version`` is never asked, each with why, by name.

    >>> unasked_ops("duplicates", 2)
    {'prepare': 'the SUT speaks protocol version 2, and prepare needs version 3 (docs/sut-protocol.md)'}
    >>> sorted(unasked_ops("duplicates", 1)), unasked_ops("duplicates", 3)
    (['prepare', 'query_id'], {})
    """
    return {op: why for op, kind in sorted(COMMANDS[domain].items())
            if (why := why_not_asked(kind, version)) is not None}


def fuzz(sut: Sut, profile: Profile | Sequence[Profile], domains: tuple[str, ...], seconds: float, out_dir: Path,
         run_seed: int | None = None, strict: bool = False,
         on_batch: Callable[[str, RunStats], None] | None = None,
         excluded: Mapping[str, AbstractSet[str]] | None = None) -> FuzzReport:
    """Fuzz ``sut`` in each of ``domains`` it offers, under each profile, sharing ``seconds`` between the runs.

    ``excluded`` maps a domain to the operations left out of its runs from the start. ``on_batch`` hears,
    after every batch, the run's name (``domain`` or ``domain profile``) and its counts.
    """
    profiles = (profile,) if isinstance(profile, Profile) else tuple(profile)
    report = FuzzReport(sut.label, profiles)
    deadline = time.monotonic() + seconds
    free = [d for d in domains if get_domain(d).profile_free]
    bound_left = len(profiles) * (len(domains) - len(free))
    free_left = list(free)
    for index, chosen in enumerate(profiles):
        try:
            hello = sut.hello(chosen, domains)
        except SutFailure as failure:
            report.runs.append(DomainRun("(handshake)", chosen, False, Status.SUT_FAILED, failure=failure))
            for later in profiles[index:]:
                report.runs.extend(DomainRun(d, later, d in free, Status.NOT_RUN, why="the SUT failed its handshake")
                                   for d in domains if d not in free or d in free_left)
                free_left = [d for d in free_left if d not in domains]
            break
        report.hellos[chosen.name] = hello
        last = index == len(profiles) - 1
        for name in domains:
            is_free = name in free
            if is_free and name not in free_left:
                continue  # already run under an earlier profile
            offered = hello.offers(name, chosen.name)
            if not offered:
                if not is_free:
                    bound_left -= 1
                    report.runs.append(DomainRun(name, chosen, False, Status.NOT_OFFERED))
                elif last:
                    free_left.remove(name)
                    report.runs.append(DomainRun(name, chosen, True, Status.NOT_OFFERED))
                continue
            share = max(0.0, deadline - time.monotonic()) / max(1, bound_left + len(free_left))
            if is_free:
                free_left.remove(name)
            else:
                bound_left -= 1
            left_out = frozenset((excluded or {}).get(name, frozenset()))
            unasked = {op: why for op, why in unasked_ops(name, hello.version).items() if op not in left_out}
            report.runs.append(_run_domain(sut, chosen, name, is_free, share, out_dir, run_seed, strict, on_batch,
                                           left_out, unasked))
    return report


def _run_domain(sut: Sut, profile: Profile, name: str, profile_free: bool, seconds: float, out_dir: Path,
                run_seed: int | None, strict: bool, on_batch: Callable[[str, RunStats], None] | None,
                left_out: frozenset[str], unasked: Mapping[str, str] | None = None) -> DomainRun:
    """One domain's run under one profile, with a guard of its own; ``unasked`` are the operations the SUT's
    protocol version lacks, each with why."""
    unasked = dict(unasked or {})
    run = DomainRun(name, profile, profile_free, Status.RAN, excluded=tuple(sorted(left_out)), unasked=unasked)
    if set(COMMANDS[name]) <= left_out | set(unasked):
        run.status, run.why = Status.NOT_RUN, "every operation is left out (--exclude-op)"
        return run
    domain = get_domain(name)
    permissive = domain.judge is not None and not strict
    guard = FirstFailure(sut, left_out | set(unasked))
    stats = RunStats()
    label = name if profile_free else f"{name} {profile.label}"

    def show(counts: RunStats) -> None:
        if on_batch is not None:
            on_batch(label, counts)

    started = time.monotonic()
    try:
        window = DEFERRED_WINDOW if getattr(sut, "in_flight", 1) > 1 else 1
        result = check_for(profile, {"sut": guarded_factory(guard, name)}, seconds, out_dir, run_seed, show, domain,
                           permissive, stats=stats, excluded=guard.excluded, window=window)
    except Exception:  # the SUT failure itself, or Hypothesis calling the guarded replays flaky
        first = guard.failure
        if first is None:
            raise
        run.status, run.failure = Status.SUT_FAILED, first
        steps = tuple(TraceStep(c, None) for c in guard.script)
        safe = "".join(ch if ch.isalnum() or ch in "-._" else "_" for ch in profile.label)
        run.failure_trace = write_new_trace(out_dir / f"{name}-{safe}-sut-failure.jsonl",
                                            Trace(profile, steps, domain=name, note=f"the SUT failed: {first}"))
        run.examples, run.steps, run.seconds = stats.examples, stats.steps, time.monotonic() - started
    else:
        run.result = result
        run.examples, run.steps, run.seconds = result.examples, result.steps, result.seconds
    run.dropped, run.unsupported, run.judged = guard.dropped, guard.unsupported, guard.judged
    return run


class GuardedSubject(SutSubject):
    """The guarded SUT as a lockstep subject (:class:`~.sut.SutSubject`), which also judges a failed batch."""

    def __init__(self, guard: FirstFailure, domain: str, profile: Profile) -> None:
        super().__init__(guard, domain, profile)
        self.guard = guard

    def failed_at(self, error: BaseException, command: Any) -> None:
        """The guard's judgement of a batch that failed at ``command`` (raises)."""
        self.guard.failed_at(error, command)


def guarded_factory(guard: FirstFailure, domain: str) -> Callable[[Profile], GuardedSubject]:
    """A lockstep subject factory: each new scenario resets the guarded SUT to ``domain``."""
    return lambda profile: GuardedSubject(guard, domain, profile)
