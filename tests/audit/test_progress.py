"""The Spark progress display without Spark: a stand-in status tracker whose counts move."""

from __future__ import annotations

import io
import time
from types import SimpleNamespace
from typing import Any, cast

from rich.console import Console

from brokerspec.audit.progress import SparkProgress, task_counts


class Tracker:
    """Two stages; the second ends between the listing and the lookup, as a real one can."""

    def __init__(self) -> None:
        self.done = 0

    def getActiveStageIds(self) -> list[int]:  # noqa: N802 - Spark's name
        self.done = min(self.done + 1, 4)
        return [1, 2]

    def getStageInfo(self, stage: int) -> Any:  # noqa: N802 - Spark's name
        return SimpleNamespace(numCompletedTasks=self.done, numTasks=4) if stage == 1 else None


def fake_spark(tracker: Tracker) -> Any:
    return SimpleNamespace(sparkContext=SimpleNamespace(statusTracker=lambda: tracker))


def test_a_stage_that_ended_meanwhile_is_left_out_of_the_counts() -> None:
    assert task_counts(Tracker()) == (1, 4, 1)


def test_in_a_terminal_the_status_line_is_redrawn_and_the_phase_printed() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=100)
    with SparkProgress(cast(Any, fake_spark(Tracker())), console, interval=0.02) as progress:
        progress.say("writing the tables")
        time.sleep(0.3)
        assert progress.status is not None
    text = buffer.getvalue()
    assert "writing the tables" in text and "of 4 tasks done in 1 running stage" in text


def test_in_a_log_a_line_is_printed_only_when_the_count_moved() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=False, width=100)
    progress = SparkProgress(cast(Any, fake_spark(Tracker())), console, interval=0.02)
    progress.say("replaying")  # before the watcher starts, so its first line already has this phase
    with progress:
        time.sleep(0.4)
    lines = buffer.getvalue().splitlines()
    counted = [line.split(" (")[0] for line in lines if line.startswith("replaying: ")]
    assert counted == [f"replaying: {n} of 4 tasks done in 1 running stage" for n in range(1, 5)]
