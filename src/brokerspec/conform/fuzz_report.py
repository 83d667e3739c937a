"""What a fuzzing run found: a row per domain and profile, what each left out, and the verdict's parts.

:func:`brokerspec.conform.fuzz.fuzz` fills a :class:`FuzzReport` with one
:class:`DomainRun` per domain under each profile (once for a profile-free
domain), including the domains the SUT does not offer and those not run, so
the result table never hides one. :meth:`FuzzReport.nothing_checked` says
in one line why no step was judged, so such a run is never reported as a pass.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from brokerspec.spec import Profile

from ..check.runner import CheckResult
from .protocol import Hello, SutFailure


@dataclass
class Dropped:
    """An operation a run stopped drawing because the SUT answered it with an ``error`` reply."""

    op: str
    message: str
    """What the SUT said."""
    scenarios: int = 0
    """Scenarios discarded because of it."""
    steps: int = 0
    """Steps those scenarios had taken, the refused one included."""


class Status(Enum):
    """How one domain's run under one profile ended."""

    RAN = "ran"
    SUT_FAILED = "sut-failed"
    NOT_OFFERED = "not-offered"
    NOT_RUN = "not-run"


@dataclass
class DomainRun:
    """One row of the report: a domain under a profile (any profile, for a profile-free domain)."""

    domain: str
    profile: Profile
    profile_free: bool
    status: Status
    why: str = ""
    """For a run that did not happen, why not."""
    result: CheckResult | None = None
    examples: int = 0
    steps: int = 0
    seconds: float = 0.0
    failure: SutFailure | None = None
    failure_trace: Path | None = None
    excluded: tuple[str, ...] = ()
    """Operations left out from the start (``--exclude-op``)."""
    unasked: dict[str, str] = field(default_factory=dict)
    """Operations left out from the start because the SUT's protocol version lacks them (queries before version 2,
    ``prepare`` before version 3): each with why."""
    dropped: dict[str, Dropped] = field(default_factory=dict)
    unsupported: dict[str, int] = field(default_factory=dict)
    judged: int = 0

    @property
    def where(self) -> str:
        """The domain, with its profile unless the domain has none: ``addressing (seed)``."""
        return self.domain if self.profile_free else f"{self.domain} ({self.profile.label})"


@dataclass
class FuzzReport:
    """What a fuzzing run found: one :class:`DomainRun` per domain and profile."""

    sut: str
    profiles: tuple[Profile, ...]
    hellos: dict[str, Hello] = field(default_factory=dict)
    runs: list[DomainRun] = field(default_factory=list)

    @property
    def profile(self) -> Profile:
        """The first profile asked for."""
        return self.profiles[0]

    @property
    def hello(self) -> Hello | None:
        """The SUT's first handshake, if it shook hands."""
        return next(iter(self.hellos.values()), None)

    @property
    def results(self) -> list[CheckResult]:
        """The check results of the runs that finished."""
        return [r.result for r in self.runs if r.result is not None]

    @property
    def divergences(self) -> list[CheckResult]:
        """The runs where the SUT gave a wrong outcome."""
        return [r for r in self.results if r.divergence is not None]

    @property
    def failures(self) -> list[DomainRun]:
        """The runs the SUT's failure stopped."""
        return [r for r in self.runs if r.failure is not None]

    @property
    def failure(self) -> SutFailure | None:
        """The SUT's first failure."""
        return self.failures[0].failure if self.failures else None

    @property
    def failure_trace(self) -> Path | None:
        """The script up to the SUT's first failure, as a trace file."""
        return self.failures[0].failure_trace if self.failures else None

    @property
    def skipped(self) -> list[str]:
        """Domains the SUT does not offer (under some profile asked for)."""
        return list(dict.fromkeys(r.domain for r in self.runs if r.status is Status.NOT_OFFERED))

    @property
    def unsupported(self) -> dict[str, int]:
        """Scenarios discarded because the SUT could not perform an operation, by reason, over every run."""
        merged: dict[str, int] = {}
        for run in self.runs:
            for why, count in run.unsupported.items():
                merged[why] = merged.get(why, 0) + count
        return merged

    def nothing_checked(self) -> str | None:
        """Why no step was judged, in one line (None when some was, or something was found)."""
        if self.failures or self.divergences or any(r.judged for r in self.runs):
            return None
        ran = [r for r in self.runs if r.status is Status.RAN]
        if not ran:
            offered = sorted({d for hello in self.hellos.values() for d in hello.domains}) or ["no domain"]
            profiles = ", ".join(p.name for p in self.profiles)
            asked = ", ".join(dict.fromkeys(r.domain for r in self.runs)) or "the domains asked for"
            left_out = [r.where for r in self.runs if r.status is Status.NOT_RUN]
            because = f"; left out: {', '.join(left_out)}" if left_out else ""
            return (f"nothing was checked: the SUT offers {', '.join(offered)} under {profiles}, none of "
                    f"{asked}{because}")
        discarded = sum(self.unsupported.values())
        if discarded:
            return (f"nothing was checked: every scenario ({discarded}) was discarded at its first step because "
                    "the SUT could not play it (see the reasons above)")
        dropped = sorted({op for r in ran for op in r.dropped})
        return ("nothing was checked: the SUT answered every operation it was sent with an error reply "
                f"({', '.join(dropped) or 'none sent'}), so each was dropped")
