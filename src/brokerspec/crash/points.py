"""Write points: a step's store actions counted, and the process killed at one of them on purpose."""

from __future__ import annotations

import os
import signal
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from brokerspec.impl.duplicates import SqliteStore
from brokerspec.spec import Profile
from brokerspec.spec.duplicates import (
    Commit,
    DuplicatesCommand,
    Prepare,
    Rollback,
    TxState,
    apply,
    initial_state,
)

from .workload import DEFAULT_BROKER, generate_workload, load_broker_class


class StoreActions:
    """Counts a broker's store actions step by step, and kills the process at one of them when told to.

    A step's *store actions* are its SQL writes and its store commit, in
    order (the fast broker writes nothing outside ``SqliteStore._write`` and
    commits once per operation). Its *write points* are the moments before
    each action and the moment after the step returns: ``(step, i)`` kills
    before action ``i`` (0-based), or after the step when ``i`` is its
    number of actions. Before the commit nothing of the step may be durable,
    after it everything: a kill at a write point checks exactly that.
    The broker is reached through its ``_store`` (a
    :class:`~brokerspec.impl.duplicates.SqliteStore`), whose two methods are
    wrapped on the instance.
    """

    def __init__(self, subject: Any) -> None:
        store = getattr(subject, "_store", None)
        if not isinstance(store, SqliteStore):
            raise TypeError(f"{type(subject).__name__} keeps no SqliteStore in _store: it has no write points")
        self.step = 0
        self.actions = 0
        self.counts: dict[int, int] = {}
        self.kill_at: tuple[int, int] | None = None
        write, commit = store._write, store.commit

        def counted_write(sql: str, parameters: tuple[object, ...]) -> None:
            self._act()
            write(sql, parameters)

        def counted_commit() -> None:
            self._act()
            commit()

        setattr(store, "_write", counted_write)
        setattr(store, "commit", counted_commit)

    def begin_step(self, number: int) -> None:
        """Step ``number`` starts."""
        self.step, self.actions = number, 0

    def end_step(self) -> None:
        """The step returned: note its count; kill now if this step's write point is after it."""
        self.counts[self.step] = self.actions
        if self.kill_at is not None and self.kill_at[0] == self.step:
            kill_quietly(os.getpid())

    def _act(self) -> None:
        if self.kill_at == (self.step, self.actions):
            kill_quietly(os.getpid())
        self.actions += 1


def count_store_actions(profile: Profile, workload: Sequence[DuplicatesCommand], broker: str,
                        folder: Path) -> dict[int, int]:
    """Each step's number of store actions, run in-process on ``broker`` with a store in ``folder``."""
    subject = load_broker_class(broker)(profile, folder / "count.sqlite")
    points = StoreActions(subject)
    try:
        for number, command in enumerate(workload, start=1):
            points.begin_step(number)
            subject.execute(command)
            points.end_step()
    finally:
        subject.close()
    return points.counts


def xa_steps(profile: Profile, workload: Sequence[DuplicatesCommand]) -> list[int]:
    """The steps (from 1) that prepare a transaction or end a prepared one (the second phase), per the spec."""
    found: list[int] = []
    state = initial_state(profile)
    for number, command in enumerate(workload, start=1):
        if isinstance(command, Prepare):
            found.append(number)
        elif isinstance(command, (Commit, Rollback)):
            tx = state.transactions.get(command.session)
            if tx is not None and tx.status is TxState.PREPARED:
                found.append(number)
        state = apply(state, command)[0]
    return found


def write_points(profile: Profile, seed: int, steps: int, broker: str = DEFAULT_BROKER, prepare: bool = True,
                 every_step: bool = False) -> list[tuple[int, int]]:
    """Every write point (step, i) of the workload's XA steps that write anything (every step's with
    ``every_step``), in order."""
    workload = generate_workload(seed, steps, prepare)
    with tempfile.TemporaryDirectory(prefix="brokerspec-crash-") as name:
        counts = count_store_actions(profile, workload, broker, Path(name))
    chosen = range(1, len(workload) + 1) if every_step else xa_steps(profile, workload)
    return [(step, point) for step in chosen if counts.get(step, 0) > 1 for point in range(counts[step] + 1)]


def kill_quietly(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
