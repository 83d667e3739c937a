"""A standalone Spark master and its workers on 127.0.0.1, started from the pyspark package and stopped by PID.

The pyspark package ships ``sbin/spark-daemon.sh`` but not the
``start-master.sh``/``start-worker.sh`` wrappers, so this calls the daemon
script the way those wrappers do. Everything binds to loopback; the PIDs
come from the daemon's PID files, and :meth:`Standalone.stop` kills exactly
those processes (and waits for them), also when the caller failed. Several
workers are instances 1, 2, ... of the worker daemon, as ``start-workers.sh``
numbers them on one host; the benchmark compares one single-core worker
with two.

A worker's ``--cores`` is how many tasks it runs at once, not how much of
the machine it uses: each task's JVM thread reads and serialises while a
Python worker process replays, so a "single-core" worker keeps nearly two
CPUs busy. With ``pin`` each worker daemon starts bound to its own CPUs
(``os.sched_setaffinity``); its executors and their Python workers inherit
the binding, so a single-core worker really is one core of the machine.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from .engine import spark_environment

MASTER = "org.apache.spark.deploy.master.Master"
WORKER = "org.apache.spark.deploy.worker.Worker"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Standalone:
    """A running master and worker: the master URL and the PIDs to stop."""

    url: str
    folder: Path
    pids: list[int] = field(default_factory=list)

    def stop(self) -> None:
        """Kill the master and the worker by PID and wait until they are gone."""
        for pid in self.pids:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
        deadline = time.monotonic() + 20
        for pid in self.pids:
            while is_running(pid) and time.monotonic() < deadline:
                time.sleep(0.2)
            if is_running(pid):
                os.kill(pid, signal.SIGKILL)


def is_running(pid: int) -> bool:
    """Whether a process with this PID still exists."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def start_standalone(folder: Path, cores: int = 2, memory: str = "3g", workers: int = 1,
                     pin: bool = False) -> Standalone:
    """Start a master and ``workers`` workers of ``cores`` cores each on 127.0.0.1, files under ``folder``.

    Returns once every worker has registered with the master, so a job
    started right after sees all their cores. With ``pin`` worker N runs on
    CPUs ``(N-1)*cores`` to ``N*cores - 1`` of those this process may use
    (ValueError when there are fewer).
    """
    allowed = sorted(os.sched_getaffinity(0))
    if pin and workers * cores > len(allowed):
        raise ValueError(f"cannot pin {workers} worker(s) of {cores} core(s) each to their own CPUs: this process "
                         f"may use {len(allowed)} CPU(s)")
    import pyspark

    home = Path(pyspark.__file__).parent
    folder.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, **spark_environment(), SPARK_HOME=str(home), SPARK_MASTER_HOST="127.0.0.1",
               SPARK_LOG_DIR=str(folder / "logs"), SPARK_PID_DIR=str(folder / "pids"),
               SPARK_WORKER_DIR=str(folder / "work"), SPARK_IDENT_STRING="brokerspec")
    daemon = home / "sbin" / "spark-daemon.sh"
    port = free_port()
    url = f"spark://127.0.0.1:{port}"
    cluster = Standalone(url, folder)
    try:
        ui = free_port()
        _start(daemon, env, MASTER, ["--host", "127.0.0.1", "--port", str(port), "--webui-port", str(ui)])
        cluster.pids.append(_pid(folder, MASTER))
        _wait_for_port(port)
        for instance in range(1, workers + 1):
            cpus = set(allowed[(instance - 1) * cores:instance * cores]) if pin else None
            _start(daemon, env, WORKER, ["--host", "127.0.0.1", "--webui-port", str(free_port()), "--cores",
                                         str(cores), "--memory", memory, url], instance, cpus)
            cluster.pids.append(_pid(folder, WORKER, instance))
        _wait_for_workers(ui, workers)
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _start(daemon: Path, env: dict[str, str], klass: str, args: list[str], instance: int = 1,
           cpus: set[int] | None = None) -> None:
    """Run the daemon script (bound to ``cpus`` when given: the JVM it starts, and that JVM's children, inherit it)."""
    subprocess.run(["bash", str(daemon), "start", klass, str(instance), *args], env=env, check=True,
                   capture_output=True, timeout=60,
                   preexec_fn=None if cpus is None else lambda: os.sched_setaffinity(0, cpus))


def _pid(folder: Path, klass: str, instance: int = 1) -> int:
    path = folder / "pids" / f"spark-brokerspec-{klass}-{instance}.pid"
    deadline = time.monotonic() + 10
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    return int(path.read_text().strip())


def _wait_for_port(port: int, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.3)
    raise TimeoutError(f"the Spark master did not listen on 127.0.0.1:{port} within {seconds:.0f}s")


def _wait_for_workers(ui_port: int, workers: int, seconds: float = 60) -> None:
    """Wait until the master's status page (``/json``) lists ``workers`` workers alive."""
    import json
    import urllib.request

    deadline = time.monotonic() + seconds
    alive = 0
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json", timeout=5) as answer:
                status = json.load(answer)
            alive = sum(1 for worker in status.get("workers", []) if worker.get("state") == "ALIVE")
        except OSError:
            alive = 0
        if alive >= workers:
            return
        time.sleep(0.3)
    raise TimeoutError(f"{alive} of {workers} Spark workers registered with the master within {seconds:.0f}s")
