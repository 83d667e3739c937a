"""Progress while Spark works: the audit's phase and the tasks done in Spark's running stages.

Introduction
------------
A Spark job over a large input runs for minutes between two lines of the
audit's own output. :class:`SparkProgress` watches Spark's status tracker
(``SparkContext.statusTracker()``: the stages running now, and for each the
tasks it has and the tasks done) from a background thread. In a terminal it
keeps one live status line (a Rich spinner); when the output is a file or a
pipe (a CI log, ``make run | tee``) it prints a plain line at most every
``interval`` seconds, and only when the count moved, so logs stay short.
The phase lines the audit prints itself go through :meth:`SparkProgress.say`.
"""

from __future__ import annotations

import threading
import time
from types import TracebackType
from typing import TYPE_CHECKING, Any

from rich.console import Console

from ..clitools import literal

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PLAIN_INTERVAL = 10.0
"""Seconds between two plain progress lines when the output is not a terminal."""


def task_counts(tracker: Any) -> tuple[int, int, int]:
    """(tasks done, tasks in all, stages) over the stages running now, from a Spark status tracker."""
    done = total = stages = 0
    for stage_id in tracker.getActiveStageIds():
        info = tracker.getStageInfo(stage_id)
        if info is None:  # the stage ended between the two calls
            continue
        stages += 1
        done += int(info.numCompletedTasks)
        total += int(info.numTasks)
    return done, total, stages


def describe(phase: str, counts: tuple[int, int, int], seconds: float) -> str:
    """One progress line.

    >>> describe("replaying 10 rows", (3, 8, 2), 12.4)
    'replaying 10 rows: 3 of 8 tasks done in 2 running stages (12s)'
    >>> describe("summarising", (0, 0, 0), 1.0)
    'summarising (1s)'
    """
    done, total, stages = counts
    if not stages:
        return f"{phase} ({seconds:.0f}s)"
    return (f"{phase}: {done:,} of {total:,} tasks done in {stages} running stage{'s' if stages != 1 else ''} "
            f"({seconds:.0f}s)")


class SparkProgress:
    """A context manager showing the audit's progress on ``console`` while Spark runs its jobs."""

    def __init__(self, spark: SparkSession, console: Console, interval: float | None = None) -> None:
        self.tracker = spark.sparkContext.statusTracker()
        self.console = console
        self.terminal = console.is_terminal
        self.interval = interval if interval is not None else (0.5 if self.terminal else PLAIN_INTERVAL)
        self.phase = "starting"
        self.started = time.monotonic()
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._watch, name="brokerspec-spark-progress", daemon=True)
        self.status: Any = None

    def say(self, text: str) -> None:
        """Print a phase line of the audit and show it as the current phase."""
        with self.lock:
            self.phase = text
        self.console.print(literal(text))

    def __enter__(self) -> SparkProgress:
        if self.terminal:
            self.status = self.console.status(literal(self.phase))
            self.status.start()
        self.thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stopped.set()
        self.thread.join()
        if self.status is not None:
            self.status.stop()

    def _watch(self) -> None:
        last: tuple[int, int, int] | None = None
        while not self.stopped.wait(self.interval):
            try:
                counts = task_counts(self.tracker)
            except Exception:  # the context is stopping; progress is not worth failing the audit for  # noqa: BLE001
                return
            with self.lock:
                line = describe(self.phase, counts, time.monotonic() - self.started)
            if self.status is not None:
                self.status.update(literal(line))
            elif counts[2] and counts != last:
                self.console.print(literal(line))
            last = counts
