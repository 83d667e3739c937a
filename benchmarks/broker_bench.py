"""Broker benchmark: brokerspec's STOMP broker and Apache ActiveMQ Artemis, same client, same workload.

Introduction
------------
Both brokers run on this machine at once and are driven by the same client
(stomp.py, STOMP 1.2, one connection) with the same workload, once with
``persistent:true`` messages and once without:

* **Sends.** ``--messages`` sends (default 2,000) of a 1 KiB body to one
  ANYCAST queue (``destination-type:ANYCAST``, created by the first send),
  each with a ``receipt`` header; the client waits for each receipt before
  the next send. Latency is send to receipt. Reported: sends per second and
  the p50 and p99 latency in milliseconds.
* **Consumes.** Then one subscription (``ack:auto``) takes every message
  back; reported: messages per second from the SUBSCRIBE to the last
  MESSAGE.

Each case starts with an untimed warm-up of 200 sends and their consumption
on a queue of its own. The brokers take turns (brokerspec, Artemis,
brokerspec, Artemis... for ``--rounds`` rounds, default 3), each case on a
fresh queue, and the table shows the median of the rounds, then
brokerspec/Artemis for each figure. The ratios are reported, not judged.

brokerspec runs as ``brokerspec broker --port 0 --data DIR``: a persistent
message is in SQLite (WAL, ``synchronous=FULL``) before its receipt.
Artemis runs from its binary distribution (``brokerspec.artemis``; fetched
from Maven Central once, needs Java), with STOMP added to its acceptor, and,
so that a persistent send means the same on both sides, with
``journal-datasync`` on: Artemis answers a receipt after its journal
operations complete, so each persistent send waits for a sync there too;
the JIT is left at its full optimisation. Both stores are on the same file
system. When Artemis cannot run here, the script says why in one line and
prints brokerspec's figures alone.

The last lines name the machine and time a bare 1 KiB write and
``fdatasync`` on the stores' file system: no synced send can be faster, so
read the persistent latencies against it. On a virtual machine that figure
can swing with the load of the other processes.

Usage::

    python benchmarks/broker_bench.py                 # 2,000 messages, 3 rounds
    python benchmarks/broker_bench.py --quick         # 200 messages, 1 round
    python benchmarks/broker_bench.py --no-artemis    # brokerspec only
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import queue
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import stomp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_tables import filesystem_of, render_table  # noqa: E402

BODY = "x" * 1024
WARMUP = 200
WAIT = 30.0
"""Seconds to wait for one receipt or message before the run is declared broken."""

FIGURES = ("sends/s", "p50 ms", "p99 ms", "consumes/s")


class BenchError(RuntimeError):
    """A broker did not answer as the workload needs; the run has no figures."""


@dataclass(frozen=True)
class Figure:
    """One case of one round."""

    sends_per_s: float
    p50_ms: float
    p99_ms: float
    consumes_per_s: float

    def values(self) -> tuple[float, float, float, float]:
        return self.sends_per_s, self.p50_ms, self.p99_ms, self.consumes_per_s


# --- the client ---------------------------------------------------------------------------------


class Client(stomp.ConnectionListener):  # type: ignore[misc]
    """One STOMP 1.2 connection whose receipts and messages land in queues."""

    def __init__(self, port: int) -> None:
        self.receipts: queue.Queue[str] = queue.Queue()
        self.messages: queue.Queue[int] = queue.Queue()
        self.error = ""
        self.connection = stomp.Connection12([("127.0.0.1", port)], auto_content_length=True)
        self.connection.set_listener("", self)
        self.connection.connect(wait=True)

    def on_receipt(self, frame: Any) -> None:
        self.receipts.put(frame.headers["receipt-id"])

    def on_message(self, frame: Any) -> None:
        self.messages.put(len(frame.body))

    def on_error(self, frame: Any) -> None:
        self.error = f"{frame.headers.get('message', '')} {frame.body}".strip()
        self.receipts.put("")
        self.messages.put(-1)

    def _failed(self, what: str) -> BenchError:
        return BenchError(f"{what}: {self.error or 'nothing arrived within ' + str(WAIT) + ' s'}")

    def send_all(self, destination: str, count: int, persistent: bool) -> list[float]:
        """Send ``count`` messages one after the other, each waiting for its receipt; seconds per send."""
        headers = {"destination-type": "ANYCAST", "persistent": "true" if persistent else "false"}
        latencies: list[float] = []
        send, wait, clock = self.connection.send, self.receipts.get, time.perf_counter
        for number in range(count):
            receipt = f"r{number}"
            started = clock()
            send(destination, BODY, headers=headers, receipt=receipt)
            try:
                got = wait(timeout=WAIT)
            except queue.Empty:
                raise self._failed(f"no receipt for send {number} to {destination}") from None
            latencies.append(clock() - started)
            if got != receipt:
                raise self._failed(f"send {number} to {destination} got receipt {got!r}")
        return latencies

    def consume_all(self, destination: str, count: int) -> float:
        """Subscribe with ``ack:auto`` and take ``count`` 1 KiB messages; seconds from SUBSCRIBE to the last."""
        started = time.perf_counter()
        self.connection.subscribe(destination, id="bench", ack="auto", headers={"subscription-type": "ANYCAST"})
        for number in range(count):
            try:
                size = self.messages.get(timeout=WAIT)
            except queue.Empty:
                raise self._failed(f"message {number} of {count} from {destination} never came") from None
            if size != len(BODY):
                raise self._failed(f"message {number} from {destination} has {size} bytes, not {len(BODY)}")
        elapsed = time.perf_counter() - started
        self.connection.unsubscribe("bench")
        return elapsed

    def close(self) -> None:
        if self.connection.is_connected():
            self.connection.disconnect()


def percentile(values: Sequence[float], share: float) -> float:
    """The nearest-rank percentile: the smallest value with at least ``share`` of the values at or below it."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def measure(port: int, queue_name: str, count: int, persistent: bool) -> Figure:
    """One case: warm up on a queue of its own, then time ``count`` sends and their consumption."""
    try:
        client = Client(port)
    except (stomp.exception.StompException, OSError) as why:
        raise BenchError(f"cannot connect to 127.0.0.1:{port}: {why!r}") from None
    try:
        client.send_all(f"{queue_name}.warm", WARMUP, persistent)
        client.consume_all(f"{queue_name}.warm", WARMUP)
        started = time.perf_counter()
        latencies = client.send_all(queue_name, count, persistent)
        sending = time.perf_counter() - started
        consuming = client.consume_all(queue_name, count)
    finally:
        client.close()
    return Figure(count / sending, percentile(latencies, 0.5) * 1e3, percentile(latencies, 0.99) * 1e3,
                  count / consuming)


# --- the brokers --------------------------------------------------------------------------------


class BrokerspecBroker:
    """``brokerspec broker`` in a process group of its own, its store in ``folder``."""

    name = "brokerspec"

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.errors = folder / "stderr.log"
        with self.errors.open("wb") as errors:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "brokerspec.cli", "broker", "--port", "0", "--data", str(folder)],
                stdout=subprocess.PIPE, stderr=errors, text=True, start_new_session=True)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if "STOMP 1.2 on" not in line:
            self.stop()
            raise BenchError(f"brokerspec broker did not start: {line.strip()!r} "
                             f"{self.errors.read_text(errors='replace')[-1000:]}")
        self.port = int(line.split("127.0.0.1:")[1].split(",")[0])

    def log_tail(self) -> str:
        return " | ".join(self.errors.read_text(errors="replace").strip().splitlines()[-8:]) or "(no log)"

    def stop(self) -> None:
        """SIGTERM to the process group, SIGKILL after 10 s."""
        if self.process.poll() is None:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(self.process.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    self.process.wait(10)
                    break
                except subprocess.TimeoutExpired:
                    continue
        if self.process.stdout is not None:
            self.process.stdout.close()


class ArtemisStomp:
    """A real Artemis broker with STOMP on its acceptor and synced journal writes."""

    def __init__(self, version: str, folder: Path) -> None:
        from brokerspec.artemis.broker import ArtemisBroker, find_free_port
        from brokerspec.artemis.config import BrokerConfig

        self.version = version
        self.name = f"Artemis {version}"
        self.port = find_free_port()
        self.broker = ArtemisBroker(version, folder / "instance",
                                    BrokerConfig("bench", self.port, str(folder / "probe.jsonl")))
        self.broker.create()
        self._patch()
        self.broker.start()

    def _patch(self) -> None:
        """STOMP on the acceptor, journal-datasync on, and the JIT's full optimisation back (create() limits
        it to the first tier for quick starts). Done on the instance's files between create() and start()."""
        etc = self.broker.folder / "etc"
        replace(etc / "broker.xml", "protocols=CORE,AMQP", "protocols=CORE,AMQP,STOMP")
        replace(etc / "broker.xml", "<journal-datasync>false</journal-datasync>",
                "<journal-datasync>true</journal-datasync>")
        replace(etc / "artemis.profile", "-XX:TieredStopAtLevel=1", "")

    def log_tail(self) -> str:
        return self.broker.log_tail()

    def stop(self) -> None:
        self.broker.stop()


def replace(path: Path, old: str, new: str) -> None:
    """Replace ``old`` by ``new`` in ``path``; BenchError when ``old`` is not there."""
    text = path.read_text(encoding="utf-8")
    if old not in text:
        raise BenchError(f"cannot set up Artemis: {old!r} is not in {path.name}")
    path.write_text(text.replace(old, new), encoding="utf-8")


def start_artemis(version: str, folder: Path) -> tuple[ArtemisStomp | None, str]:
    """The running broker, or None and the reason it cannot run here."""
    from brokerspec.artemis.broker import BrokerFailed
    from brokerspec.artemis.releases import ArtemisUnavailable

    try:
        return ArtemisStomp(version, folder), ""
    except (ArtemisUnavailable, BrokerFailed, BenchError, OSError, subprocess.SubprocessError) as why:
        return None, str(why).splitlines()[0] if str(why) else type(why).__name__


# --- the report ---------------------------------------------------------------------------------


def medians(figures: list[Figure]) -> tuple[float, ...]:
    return tuple(statistics.median(figure.values()[index] for figure in figures) for index in range(len(FIGURES)))


def _rate(value: float) -> str:
    return f"{value:,.0f}"


def _ms(value: float) -> str:
    return f"{value:.2f}" if value < 100 else f"{value:,.0f}"


def cells(values: tuple[float, ...]) -> list[str]:
    return [_rate(values[0]), _ms(values[1]), _ms(values[2]), _rate(values[3])]


def sync_latency(folder: Path, count: int = 100) -> tuple[float, float]:
    """p50 and p99 ms of a 1 KiB overwrite and ``fdatasync`` on a preallocated file in ``folder``: the floor
    of a synced send on this file system, with nothing else of either broker."""
    path = folder / "sync-probe.bin"
    sync = getattr(os, "fdatasync", os.fsync)
    times: list[float] = []
    handle = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        os.write(handle, b"\0" * 1024 * count)
        os.fsync(handle)
        for number in range(count):
            started = time.perf_counter()
            os.pwrite(handle, b"x" * 1024, 1024 * number)
            sync(handle)
            times.append(time.perf_counter() - started)
    finally:
        os.close(handle)
        path.unlink()
    return percentile(times, 0.5) * 1e3, percentile(times, 0.99) * 1e3


def java_version() -> str:
    try:
        done = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    first = (done.stderr or done.stdout).strip().splitlines()
    return first[0].replace('"', "") if first else "unknown"


def report(results: dict[str, dict[bool, list[Figure]]], names: list[str], args: argparse.Namespace) -> None:
    rows = [[f"{name}, {'persistent' if persistent else 'non-persistent'}", *cells(medians(results[name][persistent]))]
            for name in names for persistent in (True, False)]
    print(render_table(f"{args.messages:,} sends of 1 KiB per case, each waiting for its receipt, then consumed "
                       f"(ack:auto); median of {args.rounds} round{'s' if args.rounds > 1 else ''}",
                       ["broker, messages", *FIGURES], rows))
    if len(names) == 2:
        print()
        ours, theirs = names
        ratio_rows = []
        for persistent in (True, False):
            top, bottom = medians(results[ours][persistent]), medians(results[theirs][persistent])
            ratio_rows.append(["persistent" if persistent else "non-persistent",
                               *(f"{a / b:.2f}x" if b > 0 else "-" for a, b in zip(top, bottom))])
        print(render_table(f"{ours} / {theirs} (rates above 1x: brokerspec faster; latencies above 1x: "
                           "brokerspec slower)", ["messages", *FIGURES], ratio_rows))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    from brokerspec.artemis.releases import DEFAULT_RELEASE, RELEASES

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--messages", type=int, default=2000, help="timed sends per case (default 2000)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds, median kept (default 3)")
    parser.add_argument("--quick", action="store_true", help="200 messages, one round")
    parser.add_argument("--no-artemis", action="store_true", help="brokerspec only")
    parser.add_argument("--artemis-version", choices=sorted(RELEASES), default=DEFAULT_RELEASE,
                        help=f"Artemis release (default {DEFAULT_RELEASE})")
    parser.add_argument("--dir", type=Path, default=None,
                        help="folder for both brokers' stores (default: a temporary folder)")
    args = parser.parse_args(argv)
    if args.quick:
        args.messages, args.rounds = 200, 1
    for name in ("messages", "rounds"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    return args


def run(args: argparse.Namespace, root: Path) -> int:
    ours = BrokerspecBroker(root / "brokerspec")
    stops: list[Callable[[], None]] = [ours.stop]
    brokers: list[BrokerspecBroker | ArtemisStomp] = [ours]
    try:
        if args.no_artemis:
            print("Artemis: left out (--no-artemis)")
        else:
            artemis, why = start_artemis(args.artemis_version, root / "artemis")
            if artemis is None:
                print(f"Artemis: unavailable, brokerspec's figures only ({why})")
            else:
                stops.append(artemis.stop)
                brokers.append(artemis)
        results: dict[str, dict[bool, list[Figure]]] = {b.name: {True: [], False: []} for b in brokers}
        for number in range(args.rounds):
            for broker in brokers:
                for persistent in (True, False):
                    name = f"bench.r{number}.{'p' if persistent else 'n'}"
                    try:
                        figure = measure(broker.port, name, args.messages, persistent)
                    except BenchError as why:
                        raise BenchError(f"{broker.name}: {why}; its log: {broker.log_tail()}") from None
                    results[broker.name][persistent].append(figure)
        report(results, [b.name for b in brokers], args)
        print()
        p50, p99 = sync_latency(root)
        artemis_line = next((f"Artemis {b.version} on {java_version()}" for b in brokers
                             if isinstance(b, ArtemisStomp)), "no Artemis")
        print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()} ({platform.system()}), "
              f"{artemis_line}; load average {os.getloadavg()[0]:.1f}")
        print(f"stores on {filesystem_of(root)}; a 1 KiB write and fdatasync there alone: p50 {_ms(p50)} ms, "
              f"p99 {_ms(p99)} ms")
        if len(brokers) == 2:
            print("Artemis set-up: NIO journal, journal-datasync on, STOMP added to the acceptor, full JIT, "
                  "256 MB heap, serial GC; brokerspec: SQLite WAL, synchronous=FULL")
    finally:
        for stop in reversed(stops):
            stop()
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run every case and print the tables; 1 when a broker did not answer as the workload needs."""
    given = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(given)
    started = time.perf_counter()
    try:
        if args.dir is not None:
            args.dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="broker-bench-", dir=args.dir) as folder:
            code = run(args, Path(folder))
    except BenchError as why:
        print(f"error: {why}", file=sys.stderr)
        return 1
    print(f"command: {shlex.join(['python', 'benchmarks/broker_bench.py', *given])}")
    print(f"run time: {time.perf_counter() - started:.1f} s")
    return code


if __name__ == "__main__":
    sys.exit(main())
