"""Checking a reloaded store against the spec: what a crash after a durable prefix must keep."""

from __future__ import annotations

import dataclasses
import os
import shlex
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from brokerspec.impl.duplicates import FastDuplicatesBroker
from brokerspec.spec import Profile
from brokerspec.spec.duplicates import (
    CacheName,
    Crash,
    DuplicatesCommand,
    DuplicatesState,
    apply,
    describe_key,
    get_ids_in_order,
    initial_state,
)

from .workload import DEFAULT_BROKER, generate_workload, load_broker_class


@dataclass(frozen=True)
class TrialResult:
    """What one trial found. ``matched`` is the prefix the store equals (``done`` or ``done + 1``), else None."""

    seed: int
    profile: Profile
    steps: int
    style: str
    done: int
    matched: int | None
    lost: tuple[str, ...] = ()
    phantom: tuple[str, ...] = ()
    differences: tuple[str, ...] = ()
    error: str = ""
    seconds: float = 0.0
    broker: str = DEFAULT_BROKER
    python_path: tuple[str, ...] = ()
    prepare: bool = True
    """Whether the workload had XA steps (``--no-prepare`` when it had not)."""
    kill_at: tuple[int, int] | None = None
    """The write point (step, action) the child killed itself at, for a write-point trial."""

    @property
    def ok(self) -> bool:
        """Whether the store equals the spec after one of the two possible durable prefixes."""
        return self.matched is not None and not self.error

    def replay_command(self) -> str:
        """The ``brokerspec crash trial`` command that runs this trial again, quoted for a POSIX shell."""
        words = ["brokerspec", "crash", "trial", "--seed", str(self.seed), "--profile", self.profile.name]
        for dotted, value in self.profile.overrides:
            words += ["--set", f"{dotted}={value}"]
        words += ["--steps", str(self.steps)]
        if not self.prepare:
            words.append("--no-prepare")
        if self.kill_at is not None:
            words += ["--kill-at", f"{self.kill_at[0]}:{self.kill_at[1]}"]
        if self.broker != DEFAULT_BROKER:
            words += ["--broker", self.broker]
        path = f"PYTHONPATH={shlex.quote(os.pathsep.join(self.python_path))} " if self.python_path else ""
        return path + shlex.join(words)

    def describe(self) -> str:
        """A few lines for people."""
        where = f"write point {self.kill_at[0]}:{self.kill_at[1]}, " if self.kill_at is not None else ""
        lines = [f"seed {self.seed} ({self.profile.label}, {where}{self.style} kill after {self.done} of "
                 f"{self.steps} steps): " + ("ok" if self.ok else "FAILED")]
        if self.error:
            lines.append(f"  error: {self.error}")
        if self.lost:
            lines.append(f"  lost IDs or messages (in the spec, missing in the store): {', '.join(self.lost)}")
        if self.phantom:
            lines.append(f"  phantom IDs or messages (in the store, not in the spec): {', '.join(self.phantom)}")
        lines.extend(f"  differs: {line}" for line in self.differences)
        if not self.ok:
            lines.append(f"  replay: {self.replay_command()}")
        return "\n".join(lines)


def spec_after_crash(profile: Profile, workload: Sequence[DuplicatesCommand], durable: int) -> DuplicatesState:
    """The spec's state after the first ``durable`` steps, then a crash."""
    state = initial_state(profile)
    for command in workload[:durable]:
        state = apply(state, command)[0]
    return apply(state, Crash())[0]


def compare_ids(expected: DuplicatesState, actual: DuplicatesState) -> tuple[list[str], list[str]]:
    """IDs and messages the spec holds that ``actual`` lacks (lost), and the reverse (phantom).

    IDs per cache, and per prepared transaction (the IDs it holds, to enter
    the cache at its second phase); messages per queue (waiting or held) and
    per prepared transaction (the messages it routes at its commit).
    """
    lost: list[str] = []
    phantom: list[str] = []
    for name in sorted(set(expected.caches) | set(actual.caches)):
        want = Counter(get_ids_in_order(expected.caches[name])) if name in expected.caches else Counter[bytes]()
        have = Counter(get_ids_in_order(actual.caches[name])) if name in actual.caches else Counter[bytes]()
        lost.extend(_name_ids(name, want - have))
        phantom.extend(_name_ids(name, have - want))
    for session in sorted(set(expected.transactions) | set(actual.transactions)):
        want_tx = _held_by(expected, session)
        have_tx = _held_by(actual, session)
        lost.extend(f"{session} (prepared): {item}" for item in sorted((want_tx - have_tx).elements()))
        phantom.extend(f"{session} (prepared): {item}" for item in sorted((have_tx - want_tx).elements()))
    for queue in sorted(set(expected.queues) | set(actual.queues)):
        want_q = Counter(expected.queues[queue].arrived) if queue in expected.queues else Counter[int]()
        have_q = Counter(actual.queues[queue].arrived) if queue in actual.queues else Counter[int]()
        lost.extend(f"{queue}: message {number}" for number in sorted((want_q - have_q).elements()))
        phantom.extend(f"{queue}: message {number}" for number in sorted((have_q - want_q).elements()))
    return lost, phantom


def _held_by(state: DuplicatesState, session: str) -> Counter[str]:
    """What ``session``'s transaction holds, in words: its IDs and its messages (none when it has none)."""
    tx = state.transactions.get(session)
    if tx is None:
        return Counter()
    ids = (*tx.instant_ids, *tx.before_commit_ids, *tx.after_store_ids)
    return Counter([*(f"{name}:{describe_key(key)}" for name, key in ids),
                    *(f"message {pending.message}" for pending in tx.messages)])


def _name_ids(name: CacheName, keys: Counter[bytes]) -> list[str]:
    return [f"{name}:{describe_key(key)}" for key in sorted(keys.elements())]


def state_differences(expected: DuplicatesState, actual: DuplicatesState) -> list[str]:
    """Every part of two states that differs, in words (caches entry by entry)."""
    lines: list[str] = []
    for part in ("caches", "queues", "transactions", "size_settings"):
        want = getattr(expected, part)
        have = getattr(actual, part)
        for key in sorted(set(want) | set(have), key=str):
            if want.get(key) != have.get(key):
                lines.append(f"{part}[{key}]: spec {want.get(key)!r}, store {have.get(key)!r}")
    for part in ("global_size", "next_message", "options"):
        if getattr(expected, part) != getattr(actual, part):
            lines.append(f"{part}: spec {getattr(expected, part)!r}, store {getattr(actual, part)!r}")
    return lines


def check_store(store: Path, profile: Profile, workload: Sequence[DuplicatesCommand], done: int,
                *, seed: int = 0, style: str = "", in_flight: bool = True, exactly: int | None = None) -> TrialResult:
    """Reload ``store`` in a fresh broker and compare it with the spec after ``done`` or ``done + 1`` steps.

    ``in_flight`` false: no step was in flight, so only ``done`` steps may be
    durable. ``exactly``: only that many steps may be durable (a kill at a
    known write point).
    """
    try:
        with FastDuplicatesBroker(profile, store) as broker:
            actual = broker.snapshot()
            broker.check_valid()
    except Exception as error:  # a store that cannot be reloaded is a finding, not a crash of the harness
        return TrialResult(seed, profile, len(workload), style, done, None, error=f"reload failed: {error!r}")
    candidates = [done] if done >= len(workload) or not in_flight else [done, done + 1]
    if exactly is not None:
        candidates = [exactly]
    expected = {prefix: spec_after_crash(profile, workload, prefix) for prefix in candidates}
    for prefix in candidates:
        if expected[prefix] == actual:
            return TrialResult(seed, profile, len(workload), style, done, prefix)
    findings = []
    for prefix in candidates:
        lost, phantom = compare_ids(expected[prefix], actual)
        differences = state_differences(expected[prefix], actual)
        findings.append((len(lost) + len(phantom) + len(differences), -prefix, lost, phantom, differences))
    # The nearer prefix: fewer differences; on a tie the longer one (the store shows the step in flight began).
    _, negative_prefix, lost, phantom, differences = min(findings)
    prefix = -negative_prefix
    return TrialResult(seed, profile, len(workload), style, done, None, tuple(lost), tuple(phantom),
                       (f"nearest prefix: {prefix} steps", *differences))


def check_prefix(profile: Profile, seed: int, steps: int, durable: int, folder: Path,
                 broker: str = DEFAULT_BROKER, prepare: bool = True) -> TrialResult:
    """Run ``durable`` steps in-process on ``broker``, abandon it without closing it, and check the reload.

    The deterministic half of a trial: no timing, no child, the same store
    content every time.
    """
    workload = generate_workload(seed, steps, prepare)
    store = folder / "store.sqlite"
    abandoned = load_broker_class(broker)(profile, store)
    for command in workload[:durable]:
        abandoned.execute(command)
    result = check_store(store, profile, workload, durable, seed=seed, style="prefix", in_flight=False)
    abandoned.close()
    return dataclasses.replace(result, broker=broker, prepare=prepare)
