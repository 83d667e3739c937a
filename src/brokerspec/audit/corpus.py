"""Writing a generated corpus to its files as it is generated, in bounded memory.

Introduction
------------
:func:`.generate.generate_histories` and :func:`.generate.generate_streams`
return every row in a list, which suits a test's small corpus; a corpus of
millions of rows needs gigabytes that way. :func:`write_histories` and
:func:`write_streams` write the same files while holding only a bounded
part of the corpus:

* histories go to their file (the bucket of their name's CRC-32, as
  :func:`.generate.write_corpus` splits them) as each one is recorded;
* stream groups are interleaved round robin and numbered globally, so row 1
  of the last group comes before row 2 of the first: no row can be written
  before every group is recorded. The groups are spilled to a temporary
  file as they are recorded and read back in the order each format needs.
  JSON lines are written in ``seq`` order: groups are spilled in chunks of
  about :data:`CHUNK_ROWS` rows, each chunk round by round, and the
  rounds are read back chunk after chunk. Parquet files are sorted by
  (address, seq): groups are spilled one by one, and each address's rows
  are read back in address order with the ``seq`` the round robin gives
  them (:class:`RoundRobin`).

Files come out named ``part-NNNNN`` in bucket order of the buckets that got
rows, as before. JSON-lines files are byte for byte the files
:func:`.generate.write_corpus` writes from the lists; so are stream Parquet
files of at most :data:`ROW_GROUP_ROWS` rows, and larger ones hold the same rows in
the same order in row groups of at most that many rows (one row group per
file before), which also lets a reader split the file. History Parquet files
share one buffer of :data:`BUFFERED_ROWS` rows, so theirs are byte for byte
the same while the whole corpus has at most that many rows.
"""

from __future__ import annotations

import json
import os
import pickle
import tempfile
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from brokerspec.spec import Profile

from .generate import (Fault, _bucket, flat_history_line, group_addresses, history_schema, iter_histories,
                       iter_stream_groups, stream_schema)
from .streams import STREAM_VERSION

ROW_GROUP_ROWS = 65536
"""Rows per Parquet row group (and most rows a Parquet file's buffer holds)."""

BUFFERED_ROWS = 65536
"""Most Parquet rows buffered over all files together; past it the fullest buffer is written out."""

CHUNK_ROWS = 65536
"""Stream rows held in memory before a chunk of groups is spilled (JSON lines)."""

_FIELDS = ("address", "op", "duplicate_id", "tx", "observed")


@dataclass(frozen=True)
class Written:
    """What a corpus writer wrote: the rows, the files and the planted faults."""

    rows: int
    files: list[Path]
    faults: list[Fault]


class BucketFiles:
    """The corpus files by bucket, each opened at its first row and named in bucket order when closed."""

    def __init__(self, data: Path, count: int, fmt: str, schema: Any = None,
                 row_group_rows: int = ROW_GROUP_ROWS, buffered_rows: int = BUFFERED_ROWS) -> None:
        self.data, self.count, self.fmt, self.schema = data, max(1, count), fmt, schema
        self.row_group_rows, self.buffered_rows = row_group_rows, buffered_rows
        self.handles: dict[int, Any] = {}
        self.buffers: dict[int, list[dict[str, Any]]] = {}
        self.buffered = 0
        self.rows = 0

    def _partial(self, bucket: int) -> Path:
        return self.data / f".part-{bucket:05d}.{self.fmt}.partial"

    def add(self, bucket: int, row: dict[str, Any]) -> None:
        """Write one row (a JSON-lines object, or a Parquet row of ``schema``) to the bucket's file."""
        self.rows += 1
        if self.fmt == "jsonl":
            handle = self.handles.get(bucket)
            if handle is None:
                handle = self.handles[bucket] = self._partial(bucket).open("w", encoding="utf-8",
                                                                           buffering=1 << 16)
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            return
        buffer = self.buffers.setdefault(bucket, [])
        buffer.append(row)
        self.buffered += 1
        if len(buffer) >= self.row_group_rows:
            self.flush(bucket)
        elif self.buffered >= self.buffered_rows:
            self.flush(max(self.buffers, key=lambda b: (len(self.buffers[b]), -b)))

    def flush(self, bucket: int) -> None:
        """Write the bucket's buffered Parquet rows as a row group."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        buffer = self.buffers.pop(bucket, [])
        if not buffer:
            return
        self.buffered -= len(buffer)
        writer = self.handles.get(bucket)
        if writer is None:
            writer = self.handles[bucket] = pq.ParquetWriter(self._partial(bucket), self.schema)
        writer.write_table(pa.Table.from_pylist(buffer, schema=self.schema))

    def abort(self) -> None:
        """Close and remove the files written so far (generating failed: no half corpus is left)."""
        for bucket, handle in self.handles.items():
            handle.close()
            self._partial(bucket).unlink(missing_ok=True)
        self.handles.clear()
        self.buffers.clear()

    def close(self) -> list[Path]:
        """Write what is buffered, close every file and give the files their names."""
        for bucket in sorted(self.buffers):
            self.flush(bucket)
        written = []
        for number, bucket in enumerate(sorted(self.handles)):
            self.handles[bucket].close()
            path = self.data / f"part-{number:05d}.{self.fmt}"
            os.replace(self._partial(bucket), path)
            written.append(path)
        self.handles.clear()
        return written


def _prepare(out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    data = out / "data"
    data.mkdir(exist_ok=True)
    return data


def _finish(out: Path, faults: list[Fault]) -> None:
    (out / "faults.jsonl").write_text("".join(json.dumps(f.__dict__) + "\n" for f in faults), encoding="utf-8")


def write_histories(out: Path, profile: Profile, histories: int, faults: int, seed: int, steps: int, fmt: str,
                    files: int, row_group_rows: int = ROW_GROUP_ROWS) -> Written:
    """Record ``histories`` histories and write each to its file as it is recorded.

    JSON lines hold one history in memory; Parquet also buffers up to ``row_group_rows`` rows (over all
    files) for a row group.
    """
    data = _prepare(out)
    planted: list[Fault] = []
    sink = BucketFiles(data, files, fmt, history_schema() if fmt == "parquet" else None, row_group_rows,
                       min(row_group_rows, BUFFERED_ROWS))
    try:
        for lines in iter_histories(profile, histories, faults, seed, steps, planted):
            bucket = _bucket(str(lines[0]["history"]), sink.count)
            for line in lines:
                sink.add(bucket, line if fmt == "jsonl" else flat_history_line(line))
    except BaseException:
        sink.abort()
        raise
    written = sink.close()
    _finish(out, planted)
    return Written(sink.rows, written, planted)


class RoundRobin:
    """The ``seq`` of row ``index`` of group ``group`` when groups of these lengths are interleaved round robin.

    Round ``i`` takes row ``i`` of every group still going, in group order, so
    ``seq = (rows of the rounds before i) + (groups before this one still going in round i) + 1``.
    The first count is kept per round; the second is ``group`` itself while every group is going, and after
    that is read from a prefix count per distinct length (lengths differ by a row or so, so there are few).

    >>> RoundRobin([2, 1, 2]).seq(2, 1)
    5
    """

    def __init__(self, lengths: Sequence[int]) -> None:
        self.shortest = min(lengths, default=0)
        longest = max(lengths, default=0)
        counts: dict[int, int] = {}
        for length in lengths:
            counts[length] = counts.get(length, 0) + 1
        self.before = [sum(n * min(length, i) for length, n in counts.items()) for i in range(longest + 1)]
        self.thresholds = sorted(length for length in counts if length > self.shortest)
        self.prefix: dict[int, array[int]] = {}
        for threshold in self.thresholds:
            running, prefix = 0, array("q", [0])
            for length in lengths:
                running += length >= threshold
                prefix.append(running)
            self.prefix[threshold] = prefix

    def seq(self, group: int, index: int) -> int:
        """The global ``seq`` (from 1) of the group's row ``index`` (from 0)."""
        if index < self.shortest:
            return self.before[index] + group + 1
        threshold = next(t for t in self.thresholds if t > index)
        return self.before[index] + self.prefix[threshold][group] + 1


def _row(row: tuple[Any, ...], seq: int) -> dict[str, Any]:
    """A spilled (address, op, duplicate_id, tx, observed) row as the stream row with its ``seq``."""
    address, op, duplicate_id, tx, observed = row
    return {"v": STREAM_VERSION, "address": address, "seq": seq, "op": op, "duplicate_id": duplicate_id, "tx": tx,
            "observed": observed}


def write_streams(out: Path, profile: Profile, groups: int, faults: int, seed: int, events: int, fmt: str,
                  files: int, chunk_rows: int = CHUNK_ROWS, row_group_rows: int = ROW_GROUP_ROWS) -> Written:
    """Record ``groups`` address groups, spill them, and write the interleaved rows (bounded memory)."""
    data = _prepare(out)
    lengths: array[int] = array("q")
    pending: list[tuple[int, int, str, str, str]] = []
    with tempfile.TemporaryFile(prefix="brokerspec-generate-") as spill:
        chunks: list[tuple[int, int]] = []  # (offset, rounds) of each spilled chunk (JSON lines)
        offsets: array[int] = array("q")  # offset of each group (Parquet)
        held: list[list[tuple[Any, ...]]] = []
        held_rows = 0
        for group, (rows, fault) in enumerate(iter_stream_groups(profile, groups, faults, seed, events)):
            compact = [tuple(row[name] for name in _FIELDS) for row in rows]
            lengths.append(len(compact))
            if fault is not None:
                index, bug = fault
                pending.append((group, index, compact[index][0], compact[index][1], bug))
            if fmt == "parquet":
                offsets.append(spill.tell())
                pickle.dump(compact, spill, protocol=pickle.HIGHEST_PROTOCOL)
                continue
            held.append(compact)
            held_rows += len(compact)
            if held_rows >= chunk_rows:
                chunks.append(_spill_rounds(held, spill))
                held, held_rows = [], 0
        if held:
            chunks.append(_spill_rounds(held, spill))
        order = RoundRobin(lengths)
        if fmt == "jsonl":
            sink = BucketFiles(data, files, fmt)
            for row, seq in _rounds(spill, chunks):
                sink.add(_bucket(row[0], sink.count), _row(row, seq))
            written, count = sink.close(), sink.rows
        else:
            written, count = _write_sorted(data, files, spill, offsets, order, row_group_rows)
    planted = [Fault(address, order.seq(group, index), op, bug) for group, index, address, op, bug in pending]
    _finish(out, planted)
    return Written(count, written, planted)


def _spill_rounds(held: list[list[tuple[Any, ...]]], spill: IO[bytes]) -> tuple[int, int]:
    """Spill a chunk of groups round by round: row 0 of each, then row 1 of each still going, ..."""
    offset = spill.tell()
    rounds = max(len(rows) for rows in held)
    for index in range(rounds):
        pickle.dump([rows[index] for rows in held if len(rows) > index], spill, protocol=pickle.HIGHEST_PROTOCOL)
    return offset, rounds


def _rounds(spill: IO[bytes], chunks: list[tuple[int, int]]) -> Iterator[tuple[tuple[Any, ...], int]]:
    """Every row in round robin order with its ``seq``: round by round, each chunk's part of the round in turn."""
    places = [offset for offset, _ in chunks]
    seq = 0
    for index in range(max((rounds for _, rounds in chunks), default=0)):
        for number, (_, rounds) in enumerate(chunks):
            if index >= rounds:
                continue
            spill.seek(places[number])
            block = pickle.load(spill)
            places[number] = spill.tell()
            for row in block:
                seq += 1
                yield row, seq


def _write_sorted(data: Path, files: int, spill: IO[bytes], offsets: array[int], order: RoundRobin,
                  row_group_rows: int) -> tuple[list[Path], int]:
    """Each Parquet file's rows in (address, seq) order, one file at a time, read back group by group."""
    sink = BucketFiles(data, files, "parquet", stream_schema(), row_group_rows, row_group_rows)
    for bucket in range(sink.count):
        addresses = sorted((address, group) for group in range(len(offsets))
                           for address in group_addresses(group)
                           if _bucket(address, sink.count) == bucket)
        loaded: tuple[int, dict[str, list[tuple[int, tuple[Any, ...]]]]] = (-1, {})
        for address, group in addresses:
            if loaded[0] != group:  # the group's rows by address, each with its index in the group
                spill.seek(offsets[group])
                by_address: dict[str, list[tuple[int, tuple[Any, ...]]]] = {}
                for index, row in enumerate(pickle.load(spill)):
                    by_address.setdefault(row[0], []).append((index, row))
                loaded = (group, by_address)
            for index, row in loaded[1].get(address, []):
                sink.add(bucket, _row(row, order.seq(group, index)))
        sink.flush(bucket)
    return sink.close(), sink.rows
