"""Running trials: a child process runs a workload on a store file and is killed; the parent checks the store."""

from __future__ import annotations

import dataclasses
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from brokerspec.impl.duplicates import FastDuplicatesBroker
from brokerspec.spec import Profile
from brokerspec.spec.duplicates import (
    DuplicatesCommand,
)

from .checks import TrialResult, check_store
from .points import StoreActions, count_store_actions, kill_quietly, write_points
from .workload import DEFAULT_BROKER, DEFAULT_STEPS, generate_workload, load_broker_class


CHILD_TIME_LIMIT = 60.0
"""Seconds after which a child that was never killed by its plan is killed anyway (a hung child)."""


def run_child(store: Path, profile: Profile, seed: int, steps: int, broker: str, prepare: bool = True,
              kill_at: tuple[int, int] | None = None) -> None:
    """Run the workload on a broker at ``store``, writing ``ready``, then ``done <n>`` after each step.

    ``kill_at`` (step, point): the child kills itself with SIGKILL at that
    write point of that step (see :func:`count_store_actions`) instead of
    waiting to be killed.
    """
    workload = generate_workload(seed, steps, prepare)
    subject = load_broker_class(broker)(profile, store)
    points = None
    if kill_at is not None:
        points = StoreActions(subject)
        points.kill_at = kill_at
    out = sys.stdout
    out.write("ready\n")
    out.flush()
    for number, command in enumerate(workload, start=1):
        if points is not None:
            points.begin_step(number)
        subject.execute(command)
        if points is not None:
            points.end_step()
        out.write(f"done {number}\n")
        out.flush()
    out.write("finished\n")
    out.flush()


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


def measure_step_seconds(profile: Profile, steps: int = DEFAULT_STEPS, prepare: bool = True) -> float:
    """How long one workload step takes here, on a store in the temporary folder (it is mostly sync latency)."""
    with tempfile.TemporaryDirectory(prefix="brokerspec-crash-") as name:
        workload = generate_workload(0, steps, prepare)
        with FastDuplicatesBroker(profile, Path(name) / "store.sqlite") as broker:
            started = time.perf_counter()
            for command in workload:
                broker.execute(command)
            return (time.perf_counter() - started) / max(1, steps)


def run_trial(seed: int, profile: Profile, steps: int = DEFAULT_STEPS, broker: str = DEFAULT_BROKER,
              python_path: Sequence[str] = (), step_seconds: float | None = None, prepare: bool = True,
              kill_at: tuple[int, int] | None = None) -> TrialResult:
    """Start a child on a fresh store, kill it as :func:`plan_kill` says, and check what the store kept.

    With ``kill_at`` (a write point, see :class:`StoreActions`) the child
    kills itself there instead, and the store must hold exactly the steps
    before that step, or that step too when the point is after its commit.
    """
    if step_seconds is None and kill_at is None:
        step_seconds = measure_step_seconds(profile, steps, prepare)
    started = time.perf_counter()
    plan = plan_kill(seed, steps, step_seconds or 0.0) if kill_at is None else KillPlan("write")
    workload = generate_workload(seed, steps, prepare)
    with tempfile.TemporaryDirectory(prefix="brokerspec-crash-") as name:
        folder = Path(name)
        store = folder / "store.sqlite"
        command = [sys.executable, "-m", "brokerspec.crash", "child", "--store", str(store),
                   "--profile", profile.name, "--seed", str(seed), "--steps", str(steps), "--broker", broker]
        for dotted, value in profile.overrides:
            command += ["--set", f"{dotted}={value}"]
        if not prepare:
            command.append("--no-prepare")
        if kill_at is not None:
            command += ["--kill-at", f"{kill_at[0]}:{kill_at[1]}"]
        env = dict(os.environ)
        if python_path:
            env["PYTHONPATH"] = os.pathsep.join([*python_path, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        with open(folder / "child.err", "wb") as errors:
            child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errors, env=env)
            watchdog = threading.Timer(CHILD_TIME_LIMIT, kill_quietly, (child.pid,))
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
        elif kill_at is not None and done != kill_at[0] - 1:
            result = TrialResult(seed, profile, steps, plan.style, done, None,
                                 error=f"the child did not die at write point {kill_at[0]}:{kill_at[1]}")
        elif kill_at is not None:
            after = kill_at[1] >= _actions_of(profile, workload, broker, kill_at[0])
            result = check_store(store, profile, workload, done, seed=seed, style=plan.style,
                                 exactly=kill_at[0] if after else done)
        else:
            result = check_store(store, profile, workload, done, seed=seed, style=plan.style)
    return dataclasses.replace(result, seconds=time.perf_counter() - started, broker=broker,
                               python_path=tuple(python_path), prepare=prepare, kill_at=kill_at)


_ACTIONS: dict[tuple[Profile, tuple[DuplicatesCommand, ...], str], dict[int, int]] = {}


_ACTIONS_LOCK = threading.Lock()


def _actions_of(profile: Profile, workload: tuple[DuplicatesCommand, ...], broker: str, step: int) -> int:
    """How many store actions ``step`` of ``workload`` takes (counted once per workload, in-process)."""
    key = (profile, workload, broker)
    with _ACTIONS_LOCK:
        counts = _ACTIONS.get(key)
        if counts is None:
            with tempfile.TemporaryDirectory(prefix="brokerspec-crash-") as name:
                counts = _ACTIONS[key] = count_store_actions(profile, workload, broker, Path(name))
    return counts.get(step, 0)


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
        if plan.style == "write":
            child.wait()  # it kills itself at its write point
        elif plan.style == "lines":
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
        kill_quietly(child.pid)
    child.wait()


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
            f"  reloaded state matched no durable prefix it may hold in {self.mismatches} trials "
            f"(lost IDs or messages in {self.lost}, phantom IDs or messages in {self.phantom}); a child or a reload "
            f"failed outright in {self.errors}",
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
                     broker: str = DEFAULT_BROKER, python_path: Sequence[str] = (), workers: int = 2,
                     prepare: bool = True) -> CrashReport:
    """Run ``trials`` kill-and-reload trials, cycling through ``profiles``; print each failure's seed.

    ``broker`` (``module:Class``) is what the children run; the reload always
    uses :class:`FastDuplicatesBroker`. ``python_path`` is added to the
    children's import path (for a planted variant outside the package).
    ``workers`` trials run at once; ``prepare`` false runs workloads without
    XA steps.
    """
    if not profiles:
        raise ValueError("run_crash_trials needs at least one profile")
    started = time.perf_counter()
    step_seconds = measure_step_seconds(profiles[0], steps, prepare)
    seeds = trial_seeds(trials, seed)
    jobs = [(trial_seed, profiles[number % len(profiles)], None) for number, trial_seed in enumerate(seeds)]
    report = _run_jobs(jobs, on_trial, steps, broker, python_path, workers, prepare, step_seconds)
    report.seconds = time.perf_counter() - started
    return report


def run_write_point_trials(workloads: int, seed: int, profiles: Sequence[Profile],
                           on_trial: Callable[[TrialResult], None] | None = None, *, steps: int = DEFAULT_STEPS,
                           broker: str = DEFAULT_BROKER, python_path: Sequence[str] = (), workers: int = 2,
                           every_step: bool = False) -> CrashReport:
    """Kill a child at every write point of every prepare and second phase of ``workloads`` workloads per profile.

    Each workload's seed is drawn from ``seed``; its write points are
    counted in-process first (:func:`write_points`), then every one is a
    trial whose child kills itself there (:class:`StoreActions`). With
    ``every_step`` every step's write points are trials, not only the XA
    steps'.
    """
    if not profiles:
        raise ValueError("run_write_point_trials needs at least one profile")
    started = time.perf_counter()
    jobs: list[tuple[int, Profile, tuple[int, int] | None]] = []
    for profile in profiles:
        for workload_seed in trial_seeds(workloads, seed):
            jobs.extend((workload_seed, profile, point) for point in write_points(
                profile, workload_seed, steps, broker, every_step=every_step))
    report = _run_jobs(jobs, on_trial, steps, broker, python_path, workers, True, None)
    report.seconds = time.perf_counter() - started
    return report


def _run_jobs(jobs: Sequence[tuple[int, Profile, tuple[int, int] | None]],
              on_trial: Callable[[TrialResult], None] | None, steps: int, broker: str, python_path: Sequence[str],
              workers: int, prepare: bool, step_seconds: float | None) -> CrashReport:
    """Run each (seed, profile, write point or None) trial, ``workers`` at once, and count them."""
    report = CrashReport()
    pool = ThreadPoolExecutor(max_workers=max(1, workers))
    try:
        futures = [pool.submit(run_trial, trial_seed, profile, steps, broker, python_path, step_seconds, prepare,
                               point) for trial_seed, profile, point in jobs]
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
    return report
