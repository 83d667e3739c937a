"""SIGKILL the broker process under a load of transacted sends: exactly the committed messages and IDs survive.

The load is stomp.py, as a user would connect: each transaction sends two persistent messages with duplicate
IDs and commits with a receipt. The broker is killed (SIGKILL to its process group) while transactions are in
flight, restarted on the same store, and drained. A commit the client saw a receipt for must have survived
whole; one it did not see may have survived or not, but whole or not at all; a message survives exactly once;
and the duplicate IDs that survive are exactly those of the transactions that did.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import stomp

from stomp_running import Client

pytestmark = pytest.mark.xdist_group("stomp-broker-crash")

QUEUE = "crash.orders"


def start(data: Path) -> tuple[subprocess.Popen[str], int]:
    process = subprocess.Popen([sys.executable, "-m", "brokerspec.cli", "broker", "--port", "0", "--data", str(data)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    assert process.stdout is not None
    line = process.stdout.readline()
    if "STOMP 1.2 on" not in line:
        process.kill()
        raise AssertionError(f"the broker did not start: {line!r} {process.stderr.read() if process.stderr else ''}")
    return process, int(line.split("127.0.0.1:")[1].split(",")[0])


def kill(process: subprocess.Popen[str]) -> None:
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(10)


class Load(stomp.ConnectionListener):  # type: ignore[misc]
    """Transactions of two sends each, committed with a receipt, until stopped."""

    def __init__(self, port: int, last: int | None = None) -> None:
        self.last = last
        """Stop after this transaction's commit is answered (None: run until stopped)."""
        self.done = threading.Event()
        self.receipted: set[int] = set()
        self.attempted = 0
        self.stop = threading.Event()
        self.connection = stomp.Connection12([("127.0.0.1", port)], auto_content_length=True)
        self.connection.set_listener("", self)
        self.connection.connect(wait=True)

    def on_receipt(self, frame: stomp.utils.Frame) -> None:
        number = int(frame.headers["receipt-id"].split("-")[1])
        self.receipted.add(number)
        if number == self.last:
            self.done.set()

    def run(self) -> None:
        number = 0
        try:
            while not self.stop.is_set():
                name = f"t{number}"
                self.attempted = number + 1
                self.connection.begin(name)
                for part in ("a", "b"):
                    self.connection.send(QUEUE, f"{number}{part}", transaction=name,
                                         headers={"persistent": "true", "_AMQ_DUPL_ID": f"{number}{part}",
                                                  "destination-type": "ANYCAST"})
                self.connection.commit(name, headers={"receipt": f"c-{number}"})
                if number == self.last:
                    return
                number += 1
        except (stomp.exception.StompException, OSError):
            pass  # the broker died under us: that is the point


@pytest.mark.parametrize(("last", "wait"), [(None, 0.5), (None, 1.0), (30, 0.0), (120, 0.0)],
                         ids=["in-flight", "in-flight-later", "after-receipt-30", "after-receipt-120"])
def test_exactly_the_committed_messages_and_ids_survive_a_sigkill(tmp_path: Path, last: int | None,
                                                                  wait: float) -> None:
    """Killed while transactions are in flight, or the moment a commit's receipt arrives (nothing after it)."""
    process, port = start(tmp_path)
    try:
        admin = Client(port)
        assert admin.manage("createAddress", QUEUE, "ANYCAST")[0]
        assert admin.manage("createQueue", QUEUE, "ANYCAST", QUEUE)[0]
        load = Load(port, last)
        worker = threading.Thread(target=load.run, daemon=True)
        worker.start()
        if last is None:
            time.sleep(wait)
        else:
            assert load.done.wait(30), "the last commit was never answered"
        kill(process)
        load.stop.set()
        worker.join(10)
    finally:
        if process.poll() is None:
            kill(process)
    receipted = set(load.receipted)
    assert receipted, "no commit was answered before the kill: the trial checked nothing"
    process, port = start(tmp_path)
    try:
        reader = Client(port)
        ok, ids = reader.manage("listDuplicateIds", QUEUE)
        assert ok
        reader.connection.subscribe(QUEUE, id="s", ack="auto")
        bodies = [message.body for message in reader.drain()]
        reader.close()
    finally:
        kill(process)
    surviving = {int(value[:-1]) for value in ids}
    assert len(bodies) == len(set(bodies)), "a message survived twice"
    assert sorted(bodies) == sorted(ids), "the surviving messages and IDs disagree"
    assert receipted <= surviving, f"committed and answered, then lost: {sorted(receipted - surviving)[:5]}"
    assert all(f"{n}a" in ids and f"{n}b" in ids for n in surviving), "a transaction survived in part"
    assert max(surviving) < load.attempted
