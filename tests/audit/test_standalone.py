"""The same audit on a standalone master and worker on 127.0.0.1, stopped by PID whatever happens."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from brokerspec.audit.cluster import is_running, start_standalone
from brokerspec.audit.generate import generate_streams, write_corpus
from brokerspec.spec import get_profile


@pytest.mark.cluster
def test_the_audit_on_a_standalone_cluster_finds_what_local_spark_finds(tmp_path: Path) -> None:
    profile = get_profile("artemis-latest")
    rows, faults = generate_streams(profile, 10, 4, seed=8, events=100)
    write_corpus(tmp_path / "c", rows, faults, "jsonl", "streams", files=2)
    cluster = start_standalone(tmp_path / "spark")
    try:
        done = subprocess.run(
            [sys.executable, "-m", "brokerspec.cli", "audit", str(tmp_path / "c" / "data"), "--out",
             str(tmp_path / "out"), "--master", cluster.url, "--expect", str(tmp_path / "c" / "faults.jsonl")],
            capture_output=True, text=True, timeout=240, check=False)
    finally:
        cluster.stop()
    assert not any(is_running(pid) for pid in cluster.pids)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert f"on {cluster.url}" in done.stdout
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["divergences"] == len(faults) == 4 and summary["balanced"]


def test_pinning_more_workers_than_cpus_is_refused_before_anything_starts(tmp_path: Path) -> None:
    import os

    cpus = len(os.sched_getaffinity(0))
    with pytest.raises(ValueError, match=f"may use {cpus} CPU"):
        start_standalone(tmp_path / "spark", cores=1, workers=cpus + 1, pin=True)
    assert not (tmp_path / "spark" / "pids").exists(), "no daemon was started"


@pytest.mark.cluster
def test_a_pinned_worker_runs_on_its_own_cpu(tmp_path: Path) -> None:
    import os

    first = min(os.sched_getaffinity(0))
    cluster = start_standalone(tmp_path / "spark", cores=1, memory="1g", workers=1, pin=True)
    try:
        master, worker = cluster.pids
        assert os.sched_getaffinity(worker) == {first}
        assert os.sched_getaffinity(master) == os.sched_getaffinity(0), "the master is not bound"
    finally:
        cluster.stop()
