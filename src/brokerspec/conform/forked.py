"""Work run in forked children, a few at a time, each with a timeout: how the mutation score runs its trials.

Introduction
------------
Every mutant of :mod:`.mutation` is loaded into a process of its own, so that
the mutated module never leaks into the next trial and a mutant that loops
forever can simply be killed. :func:`run_forked` forks one child per task from
a parent that has already imported the spec, the catalogue and Hypothesis, runs
``jobs`` at a time, and reports each child's verdict (a :data:`Trial`) as it
arrives; a child past its timeout is killed, one that dies without answering is
a crash.
"""

from __future__ import annotations

import multiprocessing
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

Kill = tuple[str, str] | None
"""How the suite killed something and what showed it, or None when it passed."""
Trial = tuple[Kill, str, str]
"""A verdict with the changed line before and after (empty for a planted bug)."""
Task = Callable[[], Trial]
Done = Callable[[int, Trial, float], None]



def _child(conn: Connection, task: Task, scratch: str) -> None:
    os.makedirs(scratch)
    os.chdir(scratch)  # a mutant that writes a stray file (a store named "None", say) writes it here
    started = time.monotonic()
    trial = task()
    conn.send((trial, time.monotonic() - started))
    conn.close()


def run_forked(tasks: Sequence[Task], jobs: int, timeout: float, on_done: Done) -> None:
    """Run every task in a forked child, ``jobs`` at a time; report each verdict as ``on_done(index, verdict,
    seconds)``. A child past ``timeout`` is killed (verdict ``timeout``); one that dies without answering gives
    ``crash`` with its exit code. Each child works in its own empty folder, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="brokerspec-mutation-") as scratch:
        _run_forked(tasks, jobs, timeout, on_done, Path(scratch))


def _run_forked(tasks: Sequence[Task], jobs: int, timeout: float, on_done: Done, scratch: Path) -> None:
    context = multiprocessing.get_context("fork")
    queue = iter(enumerate(tasks))
    running: dict[Connection, tuple[int, Any, float]] = {}
    exhausted = False
    while running or not exhausted:
        while not exhausted and len(running) < jobs:
            item = next(queue, None)
            if item is None:
                exhausted = True
                break
            index, task = item
            receive, send = context.Pipe(duplex=False)
            process = context.Process(target=_child, args=(send, task, str(scratch / str(index))), daemon=True)
            process.start()
            send.close()
            running[receive] = (index, process, time.monotonic())
        for ready in wait(list(running), timeout=0.2):
            assert isinstance(ready, Connection)
            conn = ready
            index, process, started = running.pop(conn)
            trial: Trial
            seconds: float
            try:
                trial, seconds = conn.recv()
            except EOFError:
                process.join(5)
                trial, seconds = (("crash", f"the child died with exit code {process.exitcode}"), "", ""), 0.0
            conn.close()
            process.join(5)
            on_done(index, trial, seconds)
        now = time.monotonic()
        for conn, (index, process, started) in list(running.items()):
            if now - started > timeout:
                process.kill()
                process.join(5)
                conn.close()
                del running[conn]
                on_done(index, (("timeout", f"still running after {timeout:g} s"), "", ""), now - started)
