"""Crash consistency of the fast duplicate-detection broker's store, checked by killing it.

Introduction
------------
The spec says what a crash keeps: ``process_restart`` applied to the state
after the last operation that completed (``PersistentDuplicateIDCache``,
``PostOfficeJournalLoader.handleDuplicateIds``). This module checks that
the fast broker's SQLite store keeps exactly that when the process really
dies, with SIGKILL, at a random moment:

1. A *child* process (``python -m brokerspec.crash child ...``) builds a
   deterministic workload from a seed (:func:`generate_workload`: plain and
   transactional sends over a few addresses and sessions, IDs from a tiny
   alphabet so duplicates are common, bridge IDs, commits, rollbacks,
   receives, queue creates and deletes; never a restart or a crash), runs it
   step by step on a :class:`~brokerspec.impl.duplicates.FastDuplicatesBroker`
   whose store is a file, and after each step has returned (so its store
   transaction is durable) writes ``done <n>`` to stdout and flushes.
2. The parent kills the child by its PID with SIGKILL, either after reading
   a random number of ``done`` lines or after a random delay, then reads
   what the pipe still holds: ``k`` lines in all.
3. The parent opens the store in-process with a fresh broker, which reloads
   it, and compares that broker's state with the spec's state after
   ``crash`` applied to the spec state after the first ``k`` steps, or the
   first ``k + 1`` (the step in flight may have committed before its line
   was written). One of the two must match exactly. Otherwise the trial
   reports *lost* IDs (in the spec's reloaded caches, missing from the
   store's) and *phantom* IDs (in the store's, not in the spec's) against
   the nearer prefix, and any other difference (queues, counters).

:func:`run_crash_trials` runs many trials and returns a :class:`CrashReport`;
each failing trial's seed is printed with the command that replays it::

    brokerspec crash run --trials 200 --seed 1
    brokerspec crash trial --seed 12345 --profile artemis-latest --set duplicates.id_cache_size=3
    brokerspec crash prefix --seed 12345 --profile artemis-latest --durable 17

``trial`` repeats one trial's workload and kill plan (where a delay lands
depends on timing, so a delay trial is repeated in spirit, not to the
microsecond); ``prefix`` runs the first ``--durable`` steps in-process,
abandons the store without closing it, and checks the reload: the
deterministic half of a trial. Every trial uses its own temporary folder,
removed afterwards, and a child still running when its trial ends for any
reason is killed.

``--broker MODULE:CLASS`` (default
``brokerspec.impl.duplicates:FastDuplicatesBroker``) names the broker the
children run: a class built as ``CLASS(profile, store_path)`` that keeps its
durable state in a store at ``store_path``, takes duplicates-domain commands
through ``execute(command)``, and has ``close()``; the parent reloads the
store with the same class and compares its ``snapshot()`` with the spec's
state. It is how a planted-bug store (``brokerspec.planted.duplicates_bugs``)
or a store of your own is put through the same trials. The module is
imported as the children import it, with the working folder first on the
path.

The options are checked before anything runs: a profile, a ``--set`` or a
``--broker`` that does not exist, or a count below one, is a usage error
(exit code 2, one line).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import os
import random
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from brokerspec.impl.duplicates import FastDuplicatesBroker
from brokerspec.clitools import at_least, clean, parse_setting
from brokerspec.spec import PROFILES, BrokerspecError, Profile, get_profile
from brokerspec.spec.duplicates import (
    Begin,
    CacheName,
    Commit,
    Crash,
    CreateQueue,
    DeleteId,
    DeleteQueue,
    DuplicateId,
    DuplicatesCommand,
    DuplicatesState,
    IdKind,
    Receive,
    Rollback,
    Send,
    SetIdCacheSize,
    apply,
    describe_key,
    get_ids_in_order,
    initial_state,
)

DEFAULT_BROKER = "brokerspec.impl.duplicates:FastDuplicatesBroker"
DEFAULT_STEPS = 60
CHILD_TIME_LIMIT = 60.0
"""Seconds after which a child that was never killed by its plan is killed anyway (a hung child)."""

SESSIONS = ("s1", "s2", "s3")
ADDRESSES = ("a1", "a2", "a3")
QUEUES = ("q1", "q2", "q3", "q4")
IDS = (
    DuplicateId(IdKind.STRING, "x"), DuplicateId(IdKind.STRING, "y"), DuplicateId(IdKind.STRING, "z"),
    DuplicateId(IdKind.BYTES, "7800"), DuplicateId(IdKind.BYTES, "78"), DuplicateId(IdKind.SIMPLE_STRING, "y"),
)
LONG_ID = DuplicateId(IdKind.LONG, "5")
BRIDGE_IDS = ("01", "02", "03")


# --- the workload ---------------------------------------------------------------------------


def generate_workload(seed: int, steps: int) -> tuple[DuplicatesCommand, ...]:
    """``steps`` commands drawn from ``seed``: the same seed always gives the same workload.

    The first two steps bind a queue on each of two addresses; the rest are
    weighted towards sends (about half), transactions and receives, with
    queue churn, ID deletes and size settings now and then.
    """
    rng = random.Random(seed)
    opening: list[DuplicatesCommand] = [CreateQueue("a1", "q1"), CreateQueue("a2", "q2")]
    commands = opening[:steps]
    while len(commands) < steps:
        session = rng.choice(SESSIONS)
        roll = rng.random()
        if roll < 0.48:
            commands.append(_random_send(rng, session))
        elif roll < 0.60:
            commands.append(Begin(session))
        elif roll < 0.71:
            commands.append(Commit(session))
        elif roll < 0.75:
            commands.append(Rollback(session))
        elif roll < 0.86:
            commands.append(Receive(session, rng.choice(QUEUES)))
        elif roll < 0.91:
            commands.append(CreateQueue(rng.choice(ADDRESSES), rng.choice(QUEUES)))
        elif roll < 0.94:
            commands.append(DeleteQueue(rng.choice(QUEUES)))
        elif roll < 0.97:
            commands.append(DeleteId(rng.choice(ADDRESSES), rng.choice(IDS)))
        else:
            commands.append(SetIdCacheSize(rng.choice(ADDRESSES), rng.randint(0, 3)))
    return tuple(commands)


def _random_send(rng: random.Random, session: str) -> Send:
    duplicate_id = None
    roll = rng.random()
    if roll < 0.02:
        duplicate_id = LONG_ID
    elif roll < 0.75:
        duplicate_id = rng.choice(IDS)
    bridge_id = rng.choice(BRIDGE_IDS) if rng.random() < 0.15 else None
    return Send(session, rng.choice(ADDRESSES), duplicate_id, bridge_id,
                reject_duplicates=rng.random() < 0.95, address_full=rng.random() < 0.05)


# --- the child ---------------------------------------------------------------------------------


def load_broker_class(spec: str) -> Callable[[Profile, Path], Any]:
    """The broker class named ``module:Class`` (the fast broker, or a planted variant of it)."""
    module_name, _, class_name = spec.partition(":")
    return getattr(importlib.import_module(module_name), class_name)  # type: ignore[no-any-return]


def run_child(store: Path, profile: Profile, seed: int, steps: int, broker: str) -> None:
    """Run the workload on a broker at ``store``, writing ``ready``, then ``done <n>`` after each step."""
    workload = generate_workload(seed, steps)
    subject = load_broker_class(broker)(profile, store)
    out = sys.stdout
    out.write("ready\n")
    out.flush()
    for number, command in enumerate(workload, start=1):
        subject.execute(command)
        out.write(f"done {number}\n")
        out.flush()
    out.write("finished\n")
    out.flush()


# --- checking a store against the spec -----------------------------------------------------------


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
        if self.broker != DEFAULT_BROKER:
            words += ["--broker", self.broker]
        path = f"PYTHONPATH={shlex.quote(os.pathsep.join(self.python_path))} " if self.python_path else ""
        return path + shlex.join(words)

    def describe(self) -> str:
        """A few lines for people."""
        lines = [f"seed {self.seed} ({self.profile.label}, {self.style} kill after {self.done} of {self.steps} "
                 f"steps): " + ("ok" if self.ok else "FAILED")]
        if self.error:
            lines.append(f"  error: {self.error}")
        if self.lost:
            lines.append(f"  lost IDs (in the spec, missing in the store): {', '.join(self.lost)}")
        if self.phantom:
            lines.append(f"  phantom IDs (in the store, not in the spec): {', '.join(self.phantom)}")
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
    """IDs the spec's caches hold that ``actual`` lacks (lost), and the reverse (phantom), per cache."""
    lost: list[str] = []
    phantom: list[str] = []
    for name in sorted(set(expected.caches) | set(actual.caches)):
        want = Counter(get_ids_in_order(expected.caches[name])) if name in expected.caches else Counter[bytes]()
        have = Counter(get_ids_in_order(actual.caches[name])) if name in actual.caches else Counter[bytes]()
        lost.extend(_name_ids(name, want - have))
        phantom.extend(_name_ids(name, have - want))
    return lost, phantom


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
                *, seed: int = 0, style: str = "", in_flight: bool = True) -> TrialResult:
    """Reload ``store`` in a fresh broker and compare it with the spec after ``done`` or ``done + 1`` steps.

    ``in_flight`` false: no step was in flight, so only ``done`` steps may be durable.
    """
    try:
        with FastDuplicatesBroker(profile, store) as broker:
            actual = broker.snapshot()
            broker.check_valid()
    except Exception as error:  # a store that cannot be reloaded is a finding, not a crash of the harness
        return TrialResult(seed, profile, len(workload), style, done, None, error=f"reload failed: {error!r}")
    candidates = [done] if done >= len(workload) or not in_flight else [done, done + 1]
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
                 broker: str = DEFAULT_BROKER) -> TrialResult:
    """Run ``durable`` steps in-process on ``broker``, abandon it without closing it, and check the reload.

    The deterministic half of a trial: no timing, no child, the same store
    content every time.
    """
    workload = generate_workload(seed, steps)
    store = folder / "store.sqlite"
    abandoned = load_broker_class(broker)(profile, store)
    for command in workload[:durable]:
        abandoned.execute(command)
    result = check_store(store, profile, workload, durable, seed=seed, style="prefix", in_flight=False)
    abandoned.close()
    return dataclasses.replace(result, broker=broker)


# --- one trial --------------------------------------------------------------------------------


@dataclass(frozen=True)
class KillPlan:
    """When a trial kills its child: after ``lines`` done lines, or ``delay`` seconds after it is ready."""

    style: str
    lines: int = 0
    delay: float = 0.0


def plan_kill(seed: int, steps: int, step_seconds: float) -> KillPlan:
    """The kill plan of trial ``seed``: half the trials count lines, half wait a random delay.

    Delays spread over the workload's expected run time, ``steps`` times
    ``step_seconds`` (see :func:`measure_step_seconds`).
    """
    rng = random.Random(f"kill:{seed}")
    if rng.random() < 0.5:
        return KillPlan("lines", lines=rng.randint(0, steps))
    return KillPlan("delay", delay=rng.uniform(0.0, steps * step_seconds))


def measure_step_seconds(profile: Profile, steps: int = DEFAULT_STEPS) -> float:
    """How long one workload step takes here, on a store in the temporary folder (it is mostly sync latency)."""
    with tempfile.TemporaryDirectory(prefix="brokerspec-crash-") as name:
        workload = generate_workload(0, steps)
        with FastDuplicatesBroker(profile, Path(name) / "store.sqlite") as broker:
            started = time.perf_counter()
            for command in workload:
                broker.execute(command)
            return (time.perf_counter() - started) / max(1, steps)


def run_trial(seed: int, profile: Profile, steps: int = DEFAULT_STEPS, broker: str = DEFAULT_BROKER,
              python_path: Sequence[str] = (), step_seconds: float | None = None) -> TrialResult:
    """Start a child on a fresh store, kill it as :func:`plan_kill` says, and check what the store kept."""
    if step_seconds is None:
        step_seconds = measure_step_seconds(profile, steps)
    started = time.perf_counter()
    plan = plan_kill(seed, steps, step_seconds)
    workload = generate_workload(seed, steps)
    with tempfile.TemporaryDirectory(prefix="brokerspec-crash-") as name:
        folder = Path(name)
        store = folder / "store.sqlite"
        command = [sys.executable, "-m", "brokerspec.crash", "child", "--store", str(store),
                   "--profile", profile.name, "--seed", str(seed), "--steps", str(steps), "--broker", broker]
        for dotted, value in profile.overrides:
            command += ["--set", f"{dotted}={value}"]
        env = dict(os.environ)
        if python_path:
            env["PYTHONPATH"] = os.pathsep.join([*python_path, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        with open(folder / "child.err", "wb") as errors:
            child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errors, env=env)
            watchdog = threading.Timer(CHILD_TIME_LIMIT, _kill_quietly, (child.pid,))
            watchdog.start()
            try:
                lines = _drive(child, plan)
            finally:
                watchdog.cancel()
                _kill(child)
        done = sum(1 for line in lines if line.startswith("done "))
        if "ready" not in lines or ("finished" not in lines and child.returncode != -signal.SIGKILL):
            error = (folder / "child.err").read_text(errors="replace").strip().splitlines()[-5:]
            result = TrialResult(seed, profile, steps, plan.style, done, None,
                                 error=f"child exited with {child.returncode}: " + " | ".join(error))
        else:
            result = check_store(store, profile, workload, done, seed=seed, style=plan.style)
    return dataclasses.replace(result, seconds=time.perf_counter() - started, broker=broker,
                               python_path=tuple(python_path))


def _drive(child: subprocess.Popen[bytes], plan: KillPlan) -> list[str]:
    """Wait for ``ready``, kill the child when the plan says, and return every complete line it wrote."""
    stdout = child.stdout
    if stdout is None:  # pragma: no cover - Popen was given stdout=PIPE
        raise RuntimeError("the child has no stdout pipe")
    lines: list[str] = []
    first = stdout.readline().decode()
    if first.endswith("\n"):
        lines.append(first.strip())
    if lines == ["ready"]:
        if plan.style == "lines":
            while sum(1 for line in lines if line.startswith("done ")) < plan.lines:
                raw = stdout.readline().decode()
                if not raw.endswith("\n"):
                    break
                lines.append(raw.strip())
        else:
            time.sleep(plan.delay)
    _kill(child)
    rest = stdout.read().decode()
    lines.extend(line for line in rest.split("\n")[:-1])
    return lines


def _kill(child: subprocess.Popen[bytes]) -> None:
    """SIGKILL the child by its own PID if it still runs, and reap it."""
    if child.poll() is None:
        _kill_quietly(child.pid)
    child.wait()


def _kill_quietly(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


# --- many trials ---------------------------------------------------------------------------------


@dataclass
class CrashReport:
    """Counts over many trials, and every failing trial.

    ``mismatches`` counts trials whose reloaded state equals neither durable
    prefix; ``lost`` and ``phantom`` count those of them with lost or
    phantom IDs; ``errors`` counts trials whose child died on its own or
    whose store could not be reloaded. ``in_flight_durable`` counts trials
    whose store already held the step in flight (it matched ``done + 1``),
    ``finished`` those whose child completed every step before the kill.
    """

    trials: int = 0
    lost: int = 0
    phantom: int = 0
    mismatches: int = 0
    errors: int = 0
    in_flight_durable: int = 0
    finished: int = 0
    seconds: float = 0.0
    failures: list[TrialResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether every trial's store matched the spec."""
        return not self.failures

    @property
    def failed_seeds(self) -> list[int]:
        """The seeds of the failing trials."""
        return [failure.seed for failure in self.failures]

    def add(self, result: TrialResult) -> None:
        """Count one trial."""
        self.trials += 1
        if result.matched is not None and result.matched > result.done:
            self.in_flight_durable += 1
        if result.done >= result.steps:
            self.finished += 1
        if result.ok:
            return
        self.failures.append(result)
        if result.error:
            self.errors += 1
        else:
            self.mismatches += 1
        if result.lost:
            self.lost += 1
        if result.phantom:
            self.phantom += 1

    def summary(self) -> str:
        """A readable account: the counts, then each failure with its replay command."""
        lines = [
            f"crash trials: {self.trials} in {self.seconds:.1f} s; "
            f"{self.trials - len(self.failures)} matched the spec, {len(self.failures)} failed",
            f"  reloaded state matched neither durable prefix in {self.mismatches} trials "
            f"(lost IDs in {self.lost}, phantom IDs in {self.phantom}); a child or a reload failed outright in "
            f"{self.errors}",
            f"  the step in flight was already durable in {self.in_flight_durable} trials; "
            f"{self.finished} children finished before the kill",
        ]
        lines.extend(failure.describe() for failure in self.failures)
        return "\n".join(lines)


def trial_seeds(trials: int, seed: int) -> list[int]:
    """The seed of each trial, drawn from the run's ``seed``."""
    rng = random.Random(seed)
    return [rng.getrandbits(32) for _ in range(trials)]


def run_crash_trials(trials: int, seed: int, profiles: Sequence[Profile],
                     on_trial: Callable[[TrialResult], None] | None = None, *, steps: int = DEFAULT_STEPS,
                     broker: str = DEFAULT_BROKER, python_path: Sequence[str] = (), workers: int = 2) -> CrashReport:
    """Run ``trials`` kill-and-reload trials, cycling through ``profiles``; print each failure's seed.

    ``broker`` (``module:Class``) is what the children run; the reload always
    uses :class:`FastDuplicatesBroker`. ``python_path`` is added to the
    children's import path (for a planted variant outside the package).
    ``workers`` trials run at once.
    """
    if not profiles:
        raise ValueError("run_crash_trials needs at least one profile")
    started = time.perf_counter()
    step_seconds = measure_step_seconds(profiles[0], steps)
    report = CrashReport()
    seeds = trial_seeds(trials, seed)
    jobs = [(trial_seed, profiles[number % len(profiles)]) for number, trial_seed in enumerate(seeds)]
    pool = ThreadPoolExecutor(max_workers=max(1, workers))
    try:
        futures = [pool.submit(run_trial, trial_seed, profile, steps, broker, python_path, step_seconds)
                   for trial_seed, profile in jobs]
        for future in futures:
            result = future.result()
            report.add(result)
            if not result.ok:
                print(f"crash trial failed: seed {result.seed}; replay: {result.replay_command()}", flush=True)
            if on_trial is not None:
                on_trial(result)
    finally:
        # On an error here, trials not yet started are dropped; those running kill their children as they end.
        pool.shutdown(wait=True, cancel_futures=True)
    report.seconds = time.perf_counter() - started
    return report


# --- the command line -------------------------------------------------------------------------------


def broker_name(text: str) -> str:
    """An argument type for ``--broker``: ``module:Class``, importable as the children will import it."""
    module_name, sep, class_name = text.partition(":")
    if not sep or not module_name or not class_name:
        raise argparse.ArgumentTypeError(f"expected module:Class, got {clean(text)!r}")
    folder = os.getcwd()  # a child runs ``python -m``, which puts the working folder first on its path
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        module = importlib.import_module(module_name)
    except Exception as error:
        raise argparse.ArgumentTypeError(f"cannot import {clean(module_name)!r}: {clean(error)}") from None
    finally:
        if added:
            sys.path.remove(folder)
    if not isinstance(getattr(module, class_name, None), type):
        raise argparse.ArgumentTypeError(f"{clean(module_name)} has no class {clean(class_name)!r}")
    return text


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``run``, ``trial``, ``prefix`` and ``child``; every value is checked as it is parsed."""
    parser = argparse.ArgumentParser(prog="brokerspec crash", description="crash-consistency trials")
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("run", "trial", "prefix", "child"):
        sub = commands.add_parser(name)
        if name == "run":
            sub.add_argument("--profile", action="append", choices=sorted(PROFILES),
                             help="repeat for several (default: every profile)")
        else:
            sub.add_argument("--profile", default="artemis-latest", choices=sorted(PROFILES))
        sub.add_argument("--set", default=[], action="append", type=parse_setting, metavar="DOMAIN.OPTION=VALUE")
        sub.add_argument("--seed", type=int, default=1)
        sub.add_argument("--steps", type=at_least(1), default=DEFAULT_STEPS)
        sub.add_argument("--broker", type=broker_name, default=DEFAULT_BROKER, metavar="MODULE:CLASS")
    commands.choices["run"].add_argument("--trials", type=at_least(1), default=200)
    commands.choices["run"].add_argument("--workers", type=at_least(1), default=2)
    commands.choices["prefix"].add_argument("--durable", type=at_least(0), required=True)
    commands.choices["child"].add_argument("--store", type=Path, required=True)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``run``, ``trial``, ``prefix`` and ``child`` (what ``run`` and ``trial`` start)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    python_path = tuple(filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep)))
    try:
        names = (args.profile or list(PROFILES)) if args.command == "run" else [args.profile]
        profiles = [get_profile(name, tuple(args.set)) for name in names]
    except BrokerspecError as error:
        print(f"brokerspec crash: error: {clean(error)}", file=sys.stderr)
        return 2
    if args.command == "prefix" and args.durable > args.steps:
        print(f"brokerspec crash: error: --durable {args.durable} is more than --steps {args.steps}", file=sys.stderr)
        return 2
    if args.command == "child":
        run_child(args.store, profiles[0], args.seed, args.steps, args.broker)
        return 0
    if args.command == "trial":
        result = run_trial(args.seed, profiles[0], args.steps, args.broker, python_path)
        print(result.describe())
        return 0 if result.ok else 1
    if args.command == "prefix":
        with tempfile.TemporaryDirectory(prefix="brokerspec-crash-") as name:
            result = check_prefix(profiles[0], args.seed, args.steps, args.durable, Path(name), args.broker)
        print(result.describe())
        return 0 if result.ok else 1
    report = run_crash_trials(args.trials, args.seed, profiles, steps=args.steps, broker=args.broker,
                              python_path=python_path, workers=args.workers)
    print(report.summary())
    return 0 if report.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
