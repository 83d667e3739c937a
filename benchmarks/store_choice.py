"""Store choice benchmark: persisted duplicate-ID commits per second, three ways to be durable.

Introduction
------------
The fast duplicate-detection broker (``brokerspec.impl.duplicates``) must
make each accepted ID durable before the send returns, in the same store
transaction as the message it guards (Artemis writes the ``DUPLICATE_ID``
record inside the message's journal transaction, ``PostOfficeImpl.storeDuplicateIDTransactional``). Two designs were
candidates: SQLite in WAL mode with ``synchronous=FULL``, and an append-only
journal file with a checksum per record and an ``fsync`` per commit, which is
what Artemis itself does. This script measures both, in one run, on the same
file system, against plain SQLite as a floor:

``sqlite WAL+FULL, broker send``
    the chosen store as the broker uses it: ``FastDuplicatesBroker.execute``
    of a non-transactional send with a new ID to an address with one queue.
    One store transaction writes the ID record, the message row and the
    message counter; the figure includes the whole broker.
``sqlite WAL+FULL, ID record``
    the chosen store alone: one ``INSERT OR REPLACE`` of an ID record and a
    ``COMMIT`` per ID, with the pragmas the broker sets.
``journal + CRC32 + fsync``
    a minimal append-only journal (below): each record is its length, a
    CRC32 of its body and the body (address, key), appended with one
    ``write`` and made durable with ``os.fsync``. It has no index, no
    compaction and no torn-tail recovery, so it is a lower bound on what a
    hand-written journal costs per commit.
``sqlite default, insert+commit``
    the baseline: ``sqlite3.connect`` with the module's defaults (rollback
    journal, ``synchronous=FULL``), one ``INSERT`` and ``commit()`` per ID.

Each case runs for ``--seconds`` in all (default 10; ``--quick``: 1), split
over ``--rounds`` rounds (default 3; ``--quick``: 1) that take the cases in
turn, so that a noisy moment on a shared machine spreads over every case;
the table reports commits, elapsed time, commits per second, and the ratio
to the baseline and to the journal. Every commit waits for the disk, so the figures mostly
measure the file system's sync latency; run it where the broker's store
will live (``--dir``; default: a temporary folder). The script prints
figures and asserts nothing about them.

Usage::

    python benchmarks/store_choice.py            # about 45 s
    python benchmarks/store_choice.py --quick    # about 5 s
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import struct
import tempfile
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from brokerspec.impl.duplicates import FastDuplicatesBroker
from brokerspec.spec import get_profile
from brokerspec.spec.duplicates import CreateQueue, DuplicateId, IdKind, Send

ADDRESS = "orders"
HEADER = struct.Struct("<II")


@dataclass(frozen=True)
class Figure:
    """One case's result."""

    case: str
    commits: int
    seconds: float

    @property
    def rate(self) -> float:
        """Commits per second."""
        return self.commits / self.seconds if self.seconds else 0.0


def key_of(number: int) -> bytes:
    """The cache key of the ``number``-th ID, as the broker would store the string ``id-<number>``."""
    return f"id-{number}".encode("utf-16-le")


def timed(case: str, seconds: float, commit: Callable[[int], None]) -> Figure:
    """Call ``commit(0), commit(1), ...`` until ``seconds`` have passed."""
    number = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        commit(number)
        number += 1
        if number % 8 == 0 and time.perf_counter() >= deadline:
            break
    return Figure(case, number, time.perf_counter() - start)


# --- the cases -------------------------------------------------------------------------


def run_broker(folder: Path, seconds: float) -> Figure:
    """(a) the broker's own path: a send with a new ID, committed with its message."""
    broker = FastDuplicatesBroker(get_profile("artemis-latest"), folder / "broker.sqlite")
    try:
        broker.execute(CreateQueue(ADDRESS, "q1"))

        def send(number: int) -> None:
            broker.execute(Send("s1", ADDRESS, DuplicateId(IdKind.STRING, f"id-{number}")))

        return timed("sqlite WAL+FULL, broker send", seconds, send)
    finally:
        broker.close()


def run_sqlite_wal(folder: Path, seconds: float) -> Figure:
    """(a') the chosen store alone: one ID record per transaction, WAL, synchronous=FULL."""
    conn = sqlite3.connect(str(folder / "wal.sqlite"), isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("CREATE TABLE ids(bridge INTEGER, address TEXT, slot INTEGER, stamp INTEGER, key BLOB,"
                     " PRIMARY KEY(bridge, address, slot)) WITHOUT ROWID")

        def commit(number: int) -> None:
            conn.execute("BEGIN")
            conn.execute("INSERT OR REPLACE INTO ids VALUES (0, ?, ?, ?, ?)",
                         (ADDRESS, number % 20000, number, key_of(number)))
            conn.execute("COMMIT")

        return timed("sqlite WAL+FULL, ID record", seconds, commit)
    finally:
        conn.close()


class Journal:
    """A minimal append-only journal: length, CRC32, body per record; ``fsync`` per commit."""

    def __init__(self, path: Path) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.address = ADDRESS.encode()

    def append(self, key: bytes) -> None:
        """Append one ID record and wait until it is on disk."""
        body = struct.pack("<H", len(self.address)) + self.address + key
        os.write(self.fd, HEADER.pack(len(body), zlib.crc32(body)) + body)
        os.fsync(self.fd)

    def close(self) -> None:
        """Close the file."""
        os.close(self.fd)


def read_journal(path: Path) -> int:
    """How many intact records the journal holds (checks every checksum)."""
    data = path.read_bytes()
    offset = count = 0
    while offset + HEADER.size <= len(data):
        length, checksum = HEADER.unpack_from(data, offset)
        body = data[offset + HEADER.size:offset + HEADER.size + length]
        if len(body) < length or zlib.crc32(body) != checksum:
            break
        offset += HEADER.size + length
        count += 1
    return count


def run_journal(folder: Path, seconds: float) -> Figure:
    """(b) the append-only checksummed journal."""
    path = folder / "ids.journal"
    journal = Journal(path)
    try:
        figure = timed("journal + CRC32 + fsync", seconds, lambda number: journal.append(key_of(number)))
    finally:
        journal.close()
    if read_journal(path) != figure.commits:
        raise RuntimeError("the journal does not read back every record it committed")
    return figure


def run_sqlite_default(folder: Path, seconds: float) -> Figure:
    """(c) the baseline: sqlite3 with its defaults, insert and commit per message."""
    conn = sqlite3.connect(str(folder / "default.sqlite"))
    try:
        conn.execute("CREATE TABLE ids(address TEXT, key BLOB)")
        conn.commit()

        def commit(number: int) -> None:
            conn.execute("INSERT INTO ids VALUES (?, ?)", (ADDRESS, key_of(number)))
            conn.commit()

        return timed("sqlite default, insert+commit", seconds, commit)
    finally:
        conn.close()


CASES: tuple[Callable[[Path, float], Figure], ...] = (run_broker, run_sqlite_wal, run_journal, run_sqlite_default)


def render(figures: list[Figure]) -> str:
    """The table: commits per second and ratios to the baseline (last case) and to the journal."""
    baseline = figures[-1].rate
    journal = next(f.rate for f in figures if f.case.startswith("journal"))
    lines = [f"{'store':<32} {'commits':>8} {'seconds':>8} {'commits/s':>10} {'x baseline':>11} {'x journal':>10}"]
    for figure in figures:
        lines.append(f"{figure.case:<32} {figure.commits:>8} {figure.seconds:>8.2f} {figure.rate:>10.0f} "
                     f"{figure.rate / baseline if baseline else 0.0:>11.2f} "
                     f"{figure.rate / journal if journal else 0.0:>10.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run every case, interleaved over ``--rounds`` rounds, and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="one second per case, one round")
    parser.add_argument("--seconds", type=float, default=None, help="seconds per case (default 10, quick 1)")
    parser.add_argument("--rounds", type=int, default=None, help="rounds the seconds are split over (default 3)")
    parser.add_argument("--dir", type=Path, default=None, help="where the files go (default: a temporary folder)")
    args = parser.parse_args(argv)
    seconds = args.seconds if args.seconds is not None else (1.0 if args.quick else 10.0)
    rounds = max(1, args.rounds if args.rounds is not None else (1 if args.quick else 3))
    totals: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="store-choice-", dir=args.dir) as name:
        for round_number in range(rounds):
            for case in CASES:
                folder = Path(name) / f"{case.__name__}-{round_number}"
                folder.mkdir()
                figure = case(folder, seconds / rounds)
                commits, elapsed = totals.setdefault(figure.case, [0.0, 0.0])
                totals[figure.case] = [commits + figure.commits, elapsed + figure.seconds]
        print(f"persisted ID commits per second: {seconds:g} s per case over {rounds} interleaved round(s), "
              f"files under {Path(name).parent}")
        print(render([Figure(case, int(commits), elapsed) for case, (commits, elapsed) in totals.items()]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
