"""What ``brokerspec check`` shows while it runs, and how a row names its profile.

Introduction
------------
A check is a list of runs, one per domain and profile, sharing the time
budget. In a terminal a live bar shows the run under way as ``run K of N``
with its scenarios and steps so far, and disappears when it ends. When the
output is a file or a pipe (a CI log, ``make run | tee``) nothing can be
redrawn, so :class:`CheckProgress` prints one plain line per finished run
instead: its place, domain, profile, scenarios, steps, seconds and result.
A long run is then never silent.

A profile-free domain (:attr:`brokerspec.check.domains.Domain.profile_free`:
no profile option changes it, e.g. topologies) is checked once, under the
first profile, but has no profile of its own: :func:`profile_label` names it
``— (profile-free)`` rather than the profile it happened to run under.
"""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from brokerspec.spec import Profile

from .check.domains import DOMAINS
from .check.machine import RunStats
from .check.runner import CheckResult
from .clitools import escaped, literal

PROFILE_FREE = "\u2014 (profile-free)"


def profile_label(domain: str, profile: Profile) -> str:
    """How a result row names the profile of a run of ``domain``.

    >>> from brokerspec.spec import get_profile
    >>> profile_label("addressing", get_profile("seed")), profile_label("topologies", get_profile("seed"))
    ('seed', '— (profile-free)')
    """
    known = DOMAINS.get(domain)
    return PROFILE_FREE if known is not None and known.profile_free else profile.label


def verdict(result: CheckResult) -> str:
    """A run's result in words: ``agree``, or which layer parted at which step."""
    if result.divergence is None:
        return "agree"
    return f"{result.divergence.layer} parted at step {result.divergence.step}"


def finished_line(index: int, total: int, result: CheckResult) -> str:
    """The plain line printed for a finished run when the output is not a terminal."""
    return (f"run {index} of {total}: {result.domain} {profile_label(result.domain, result.profile)}: "
            f"{result.examples} scenarios, {result.steps} steps, {result.seconds:.1f}s, {verdict(result)}")


class CheckProgress:
    """Progress of a check's ``total`` runs on ``console``: a live bar in a terminal, plain lines elsewhere."""

    def __init__(self, console: Console, total: int) -> None:
        self.console = console
        self.total = total
        self.index = 0
        self.bar: Progress | None = None
        self.task: TaskID | None = None
        if console.is_terminal:
            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[status]}"),
                                TimeElapsedColumn(), console=console, transient=True)

    def __enter__(self) -> CheckProgress:
        if self.bar is not None:
            self.bar.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self.bar is not None:
            self.bar.stop()

    def start(self, domain: str, profile: Profile) -> Callable[[RunStats], None] | None:
        """Begin the next run; return the callback that reports its statistics as it goes."""
        self.index += 1
        if self.bar is None:
            return None
        bar = self.bar
        task = self.task = bar.add_task(escaped(f"run {self.index} of {self.total}: {domain} "
                                                f"{profile_label(domain, profile)}"), total=None, status="")

        def show(stats: RunStats) -> None:
            bar.update(task, status=f"{stats.examples} scenarios, {stats.steps} steps")

        return show

    def finish(self, result: CheckResult) -> None:
        """End the run under way: drop its bar, or print its line."""
        if self.bar is not None and self.task is not None:
            self.bar.remove_task(self.task)
            self.task = None
        else:
            self.console.print(literal(finished_line(self.index, self.total, result)))
