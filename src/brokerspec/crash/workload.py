"""The crash trials' workloads: deterministic scripts of duplicate-detection steps drawn from a seed."""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from brokerspec.spec import Profile
from brokerspec.spec.duplicates import (
    Begin,
    Commit,
    CreateQueue,
    DeleteId,
    DeleteQueue,
    DuplicateId,
    DuplicatesCommand,
    IdKind,
    Prepare,
    Receive,
    Rollback,
    Send,
    SetIdCacheSize,
)



DEFAULT_BROKER = "brokerspec.impl.duplicates:FastDuplicatesBroker"


DEFAULT_STEPS = 60


SESSIONS = ("s1", "s2", "s3")


ADDRESSES = ("a1", "a2", "a3")


QUEUES = ("q1", "q2", "q3", "q4")


IDS = (
    DuplicateId(IdKind.STRING, "x"), DuplicateId(IdKind.STRING, "y"), DuplicateId(IdKind.STRING, "z"),
    DuplicateId(IdKind.BYTES, "7800"), DuplicateId(IdKind.BYTES, "78"), DuplicateId(IdKind.SIMPLE_STRING, "y"),
)


LONG_ID = DuplicateId(IdKind.LONG, "5")


BRIDGE_IDS = ("01", "02", "03")


AUTO_CREATE_SHARE = 0.15
"""The share of sends that make their queue when the address has none (under profiles that auto-create)."""


XA_SHARE = 1 / 4
"""The share of a workload's steps drawn to work XA transactions (when prepares are on)."""


def generate_workload(seed: int, steps: int, prepare: bool = True) -> tuple[DuplicatesCommand, ...]:
    """``steps`` commands drawn from ``seed``: the same seed always gives the same workload.

    The first two steps bind a queue on each of two addresses; the rest are
    weighted towards sends (about half), transactions and receives, with
    queue churn, ID deletes and size settings now and then.

    With ``prepare`` (the default) about one step in four is drawn instead
    from a second generator seeded apart, to work XA two-phase commits: it
    begins a transaction, gives one that is open a send or a receive,
    prepares one that has work, or commits or rolls back one it prepared
    (the second phase). Without it the workload is exactly what it was
    before prepares existed.
    """
    rng = random.Random(seed)
    xa = random.Random(f"prepare:{seed}") if prepare else None
    sessions = _Sessions()
    opening: list[DuplicatesCommand] = [CreateQueue("a1", "q1"), CreateQueue("a2", "q2")]
    commands = opening[:steps]
    while len(commands) < steps:
        if xa is not None and xa.random() < XA_SHARE:
            command = _xa_step(xa, sessions)
        else:
            command = _plain_step(rng)
        sessions.follow(command)
        commands.append(command)
    return tuple(commands)


class _Sessions:
    """Roughly which sessions have a transaction open, with work, or prepared: where to aim the XA steps.

    A transaction doomed or rolled back by the broker is missed; the steps
    aimed at it are then refused, which is fine.
    """

    def __init__(self) -> None:
        self.opened: set[str] = set()
        self.worked: set[str] = set()
        self.prepared: set[str] = set()

    def follow(self, command: DuplicatesCommand) -> None:
        session = getattr(command, "session", None)
        if isinstance(command, Begin):
            self.opened.add(command.session)
        elif isinstance(command, (Commit, Rollback)):
            self.opened.discard(command.session)
            self.worked.discard(command.session)
            self.prepared.discard(command.session)
        elif isinstance(command, Prepare) and command.session in self.opened:
            self.prepared.add(command.session)
        elif isinstance(command, (Send, Receive)) and session in self.opened:
            self.worked.add(command.session)


def _plain_step(rng: random.Random) -> DuplicatesCommand:
    session = rng.choice(SESSIONS)
    roll = rng.random()
    if roll < 0.48:
        return _random_send(rng, session)
    if roll < 0.60:
        return Begin(session)
    if roll < 0.71:
        return Commit(session)
    if roll < 0.75:
        return Rollback(session)
    if roll < 0.86:
        return Receive(session, rng.choice(QUEUES))
    if roll < 0.91:
        return CreateQueue(rng.choice(ADDRESSES), rng.choice(QUEUES))
    if roll < 0.94:
        return DeleteQueue(rng.choice(QUEUES))
    if roll < 0.97:
        return DeleteId(rng.choice(ADDRESSES), rng.choice(IDS))
    return SetIdCacheSize(rng.choice(ADDRESSES), rng.randint(0, 3))


def _xa_step(xa: random.Random, sessions: _Sessions) -> DuplicatesCommand:
    """End a prepared transaction (the second phase), prepare one with work, work in an open one, or begin one."""
    waiting = sorted(sessions.prepared)
    ready = sorted(sessions.worked - sessions.prepared)
    idle = sorted(sessions.opened - sessions.worked - sessions.prepared)
    roll = xa.random()
    if waiting and (roll < 0.35 or not (ready or idle)):
        session = xa.choice(waiting)
        return Commit(session) if xa.random() < 0.7 else Rollback(session)
    if ready and (roll < 0.7 or not idle):
        return Prepare(xa.choice(ready))
    if idle or ready:
        session = xa.choice(idle or ready)
        return _random_send(xa, session) if xa.random() < 0.75 else Receive(session, xa.choice(QUEUES[:2]))
    return Begin(xa.choice(SESSIONS))


def _random_send(rng: random.Random, session: str) -> Send:
    duplicate_id = None
    roll = rng.random()
    if roll < 0.02:
        duplicate_id = LONG_ID
    elif roll < 0.75:
        duplicate_id = rng.choice(IDS)
    bridge_id = rng.choice(BRIDGE_IDS) if rng.random() < 0.15 else None
    reject_duplicates = rng.random() < 0.95
    # now and then an ANYCAST send that makes its queue (DUP-AUTO-CREATE): the queue is written outside the
    # transaction, so a kill between it and the send's own records must leave both consistent
    auto_create = reject_duplicates and rng.random() < AUTO_CREATE_SHARE
    return Send(session, rng.choice(ADDRESSES), duplicate_id, bridge_id, reject_duplicates=reject_duplicates,
                address_full=rng.random() < 0.05, auto_create=auto_create)


def load_broker_class(spec: str) -> Callable[[Profile, Path], Any]:
    """The broker class named ``module:Class`` (the fast broker, or a planted variant of it)."""
    module_name, _, class_name = spec.partition(":")
    return getattr(importlib.import_module(module_name), class_name)  # type: ignore[no-any-return]
