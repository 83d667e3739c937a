"""Fuzzing a SUT: the lockstep state machines of the checker, with the SUT as the only subject.

Introduction
------------
:func:`fuzz` gives each domain the SUT offers a share of the budget and runs
that domain's Hypothesis state machine (:mod:`brokerspec.check.machine`)
with the SUT in lockstep against the spec. A wrong outcome is shrunk by
Hypothesis to a minimal broker script and written as a trace file, which
``brokerspec replay TRACE --sut CMD`` plays again.

A SUT that *fails* (crashes, hangs, writes garbage) cannot be shrunk the
same way: every attempt would wait for a timeout or a restart. So the SUT is
wrapped in a :class:`FirstFailure` guard: the first failure is kept with
the commands sent since the last reset, and every later call fails at
once, which ends the search quickly (Hypothesis may call that flaky; the
kept failure is what is reported). That script is written as a trace too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis.errors import UnsatisfiedAssumption

from brokerspec.spec import Outcome, Profile

from ..check.domains import get_domain
from ..check.lockstep import Divergence
from ..check.machine import RunStats
from ..check.runner import CheckResult, check_for
from ..trace import Trace, TraceStep, write_new_trace
from .protocol import Hello, SutFailure, Unsupported
from .sut import Sut, subject_factory


class FirstFailure:
    """A SUT that remembers its first failure, and the script that led to it, and fails at once afterwards."""

    def __init__(self, sut: Sut) -> None:
        self.sut = sut
        self.label = sut.label
        self.failure: SutFailure | None = None
        self.script: list[Any] = []
        self.domain = ""
        self.unsupported: dict[str, int] = {}
        """Scenarios discarded because the SUT could not perform an operation: the reason's first words -> count."""

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
        outcome: Outcome = self._guard(lambda: self.sut.execute(command), discard=True)
        return outcome

    def close(self) -> None:
        """Close the SUT."""
        self.sut.close()

    def _refuse(self) -> None:
        if self.failure is not None:
            raise self.failure

    def _guard(self, call: Callable[[], Any], discard: bool = False) -> Any:
        try:
            return call()
        except Unsupported as unsupported:
            if not discard:
                self.failure = unsupported
                raise
            why = unsupported.message.split(" at step ", 1)[0]
            self.unsupported[why] = self.unsupported.get(why, 0) + 1
            # This scenario cannot be played on this SUT: Hypothesis draws another. Raised directly rather than
            # through hypothesis.reject(), which warns when a script is replayed outside a search (minimal.py).
            raise UnsatisfiedAssumption() from None
        except SutFailure as failure:
            self.failure = failure
            raise


@dataclass
class FuzzReport:
    """What a fuzzing run found, per domain."""

    sut: str
    profile: Profile
    hello: Hello | None
    results: list[CheckResult] = field(default_factory=list)
    failure: SutFailure | None = None
    failure_trace: Path | None = None
    skipped: list[str] = field(default_factory=list)
    unsupported: dict[str, int] = field(default_factory=dict)
    """Scenarios discarded because the SUT could not perform an operation, by reason."""

    @property
    def divergences(self) -> list[CheckResult]:
        """The domains where the SUT gave a wrong outcome."""
        return [r for r in self.results if r.divergence is not None]

    def nothing_checked(self) -> str | None:
        """Why no scenario was judged, in one line (None when some was): no domain offered, or every
        scenario discarded because the SUT could not play it."""
        if self.failure is not None or self.divergences:
            return None
        if not self.results:
            offered = ", ".join(self.hello.domains) if self.hello is not None and self.hello.domains else "no domain"
            return (f"nothing was checked: the SUT offers {offered} under {self.profile.name}, none of "
                    f"{', '.join(self.skipped) or 'the domains asked for'}")
        discarded = sum(self.unsupported.values())
        judged = sum(r.steps for r in self.results) - discarded  # each discard ends its scenario at one step
        if judged <= 0:
            return (f"nothing was checked: every scenario ({discarded}) was discarded at its first step because "
                    "the SUT could not play it (see the reasons above)")
        return None


def fuzz(sut: Sut, profile: Profile, domains: tuple[str, ...], seconds: float, out_dir: Path,
         run_seed: int | None = None, strict: bool = False,
         on_batch: Callable[[str, RunStats], None] | None = None) -> FuzzReport:
    """Fuzz ``sut`` in each of ``domains`` it offers for a share of ``seconds``; stop at the first finding."""
    guard = FirstFailure(sut)
    try:
        hello = guard.hello(profile, domains)
    except SutFailure as failure:
        return FuzzReport(sut.label, profile, None, failure=failure)
    report = FuzzReport(sut.label, profile, hello)
    offered = [d for d in domains if hello.offers(d, profile.name)]
    report.skipped = [d for d in domains if d not in offered]
    for name in offered:
        domain = get_domain(name)
        permissive = domain.judge is not None and not strict

        def show(stats: RunStats, name: str = name) -> None:
            if on_batch is not None:
                on_batch(name, stats)

        try:
            result = check_for(profile, {"sut": subject_factory(guard, name)}, seconds / len(offered), out_dir,
                               run_seed, show, domain, permissive)
        except Exception:  # the SUT failure itself, or Hypothesis calling the guarded replays flaky
            first = guard.failure
            if first is None:
                raise
            report.failure = first
            note = f"the SUT failed: {first}"
            steps = tuple(TraceStep(c, None) for c in guard.script)
            report.failure_trace = write_new_trace(out_dir / f"{name}-sut-failure.jsonl",
                                               Trace(profile, steps, domain=name, note=note))
            break
        report.results.append(result)
        if result.divergence is not None:
            break
    report.unsupported = dict(guard.unsupported)
    return report
