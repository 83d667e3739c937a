"""``brokerspec generate`` writes its corpus as it records it: the files of the in-memory path, in bounded memory.

The in-memory path (:func:`generate_histories`/:func:`generate_streams` then :func:`write_corpus`) is the
plain statement of what a corpus is; the streaming writers of :mod:`brokerspec.audit.corpus` must write the
same bytes (and, for Parquet files cut into several row groups, the same rows in the same order).
"""

from __future__ import annotations

import filecmp
import hashlib
import json
import sys
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from brokerspec.audit import corpus
from brokerspec.audit.corpus import RoundRobin, Written, write_histories, write_streams
from brokerspec.audit.generate import (GenerateError, StreamGroup, generate_histories, generate_streams,
                                      group_addresses, write_corpus)
from brokerspec.cli import main
from brokerspec.spec import get_profile

PROFILE = get_profile("artemis-latest")


def digest(folder: Path) -> str:
    """One hash over every file under ``folder``, names and bytes."""
    total = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        total.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return total.hexdigest()


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
@pytest.mark.parametrize("files", [1, 3, 40])
def test_streamed_histories_are_byte_for_byte_the_in_memory_corpus(tmp_path: Path, fmt: str, files: int) -> None:
    rows, faults = generate_histories(PROFILE, 24, 5, seed=3, steps=15)
    old = write_corpus(tmp_path / "old", rows, faults, fmt, "histories", files)
    new = write_histories(tmp_path / "new", PROFILE, 24, 5, 3, 15, fmt, files)
    # 40 buckets for 24 histories leave some empty: the files are numbered over the buckets that got rows.
    assert [p.name for p in new.files] == [p.name for p in old] and (files < 40 or len(old) < 40)
    assert all(filecmp.cmp(a, b, shallow=False) for a, b in zip(old, new.files))
    assert new.rows == len(rows) == 24 * 16 and new.faults == faults and len(faults) == 5
    assert digest(tmp_path / "old") == digest(tmp_path / "new")


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
@pytest.mark.parametrize(("files", "chunk_rows"), [(1, 10 ** 6), (3, 70), (25, 1)])
def test_streamed_streams_are_byte_for_byte_the_in_memory_corpus(tmp_path: Path, fmt: str, files: int,
                                                                  chunk_rows: int) -> None:
    # chunk_rows 70 spills a chunk every two groups of about 50 rows; 1 spills every group on its own.
    rows, faults = generate_streams(PROFILE, 9, 3, seed=6, events=50)
    old = write_corpus(tmp_path / "old", rows, faults, fmt, "streams", files)
    new = write_streams(tmp_path / "new", PROFILE, 9, 3, 6, 50, fmt, files, chunk_rows=chunk_rows)
    assert [p.name for p in new.files] == [p.name for p in old]
    assert all(filecmp.cmp(a, b, shallow=False) for a, b in zip(old, new.files))
    assert new.rows == len(rows) and new.faults == faults and len(faults) == 3
    assert (tmp_path / "old" / "faults.jsonl").read_bytes() == (tmp_path / "new" / "faults.jsonl").read_bytes()


def test_large_parquet_files_hold_the_same_rows_in_row_groups(tmp_path: Path) -> None:
    rows, faults = generate_streams(PROFILE, 6, 2, seed=2, events=40)
    old = write_corpus(tmp_path / "old", rows, faults, "parquet", "streams", 2)
    new = write_streams(tmp_path / "new", PROFILE, 6, 2, 2, 40, "parquet", 2, row_group_rows=16)
    for before, after in zip(old, new.files):
        assert pq.ParquetFile(before).metadata.num_row_groups == 1
        groups = pq.ParquetFile(after).metadata.num_row_groups
        assert groups == -(-pq.ParquetFile(before).metadata.num_rows // 16) > 1  # rows / 16, rounded up
        assert pq.read_table(after).equals(pq.read_table(before))
        assert pq.ParquetFile(after).schema_arrow.metadata == pq.ParquetFile(before).schema_arrow.metadata


def test_the_round_robin_numbers_rows_as_the_interleave_does() -> None:
    lengths = [3, 1, 4, 4, 2, 0, 3]
    expected: dict[tuple[int, int], int] = {}
    for index in range(max(lengths)):  # round by round, each group still going, in group order
        for group, length in enumerate(lengths):
            if index < length:
                expected[(group, index)] = len(expected) + 1
    order = RoundRobin(lengths)
    assert {place: order.seq(*place) for place in expected} == expected


def test_each_planted_stream_fault_names_the_row_at_its_seq(tmp_path: Path) -> None:
    written = write_streams(tmp_path / "c", PROFILE, 12, 5, 9, 60, "jsonl", 3, chunk_rows=100)
    by_seq = {}
    for path in written.files:
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            by_seq[row["seq"]] = row
    assert sorted(by_seq) == list(range(1, written.rows + 1))  # every seq once, none missing
    assert len(written.faults) == 5
    for fault in written.faults:
        assert (by_seq[fault.step]["address"], by_seq[fault.step]["op"]) == (fault.history, fault.op)


def test_the_same_seed_writes_the_same_corpus_and_another_seed_does_not(tmp_path: Path) -> None:
    for name, seed in (("a", 4), ("b", 4), ("c", 5)):
        main(["generate", "--histories", "6", "--faults", "2", "--kind", "streams", "--format", "parquet",
              "--steps", "30", "--seed", str(seed), "--out", str(tmp_path / name)])
    assert digest(tmp_path / "a") == digest(tmp_path / "b") != digest(tmp_path / "c")


def test_a_failed_generate_leaves_no_half_written_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from brokerspec.audit import generate

    def failing(domain: str, *args: object) -> object:
        raise GenerateError(f"no planted bug of {domain} showed")

    monkeypatch.setattr(generate, "_faulty_history", failing)
    with pytest.raises(GenerateError):
        write_histories(tmp_path / "c", PROFILE, 8, 3, 1, 5, "jsonl", 2)
    assert list((tmp_path / "c" / "data").iterdir()) == [] and not (tmp_path / "c" / "faults.jsonl").exists()


def synthetic_groups(groups: int, events: int) -> Callable[..., Iterator[StreamGroup]]:
    """Stand-in for recording groups from the impl: rows of the same shape, made in microseconds."""
    def groups_of(*_: object) -> Iterator[StreamGroup]:
        for group in range(groups):
            addresses = group_addresses(group)
            yield [{"address": addresses[n % 2], "op": "send", "duplicate_id": f"m{group}-{n}", "tx": None,
                    "observed": "accepted"} for n in range(events)], None
    return groups_of


def synthetic_histories(histories: int, steps: int) -> Callable[..., Iterator[list[dict[str, Any]]]]:
    def histories_of(*_: object) -> Iterator[list[dict[str, Any]]]:
        for index in range(histories):
            name = f"h{index:06d}"
            yield [{"v": 1, "type": "header", "history": name, "domain": "duplicates", "profile": "artemis-latest",
                    "overrides": {}}] + [
                {"v": 1, "type": "step", "history": name, "step": n, "op": "begin", "args": {"session": "s1"},
                 "outcome": {"type": "done"}} for n in range(1, steps + 1)]
    return histories_of


def peak_bytes(write: Callable[[Path], Written], folder: Path) -> tuple[int, Written]:
    """The writer's peak of traced memory, after a first run has done the imports and filled the caches."""
    write(folder / "warm-up")
    tracemalloc.start()
    try:
        written = write(folder / "c")
        return tracemalloc.get_traced_memory()[1], written
    finally:
        tracemalloc.stop()


ROWS = 20_000
"""Rows of the memory tests: holding them all would take at least ROWS row dicts, about 5 MB."""


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_writing_streams_holds_a_chunk_of_rows_not_the_corpus(tmp_path: Path, fmt: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    groups, events = 100, ROWS // 100
    monkeypatch.setattr(corpus, "iter_stream_groups", synthetic_groups(groups, events))
    row = {"v": 1, "address": "g00001-a", "seq": 1, "op": "send", "duplicate_id": "m1-1", "tx": None,
           "observed": "accepted"}
    at_least_materialised = ROWS * sys.getsizeof(row)
    peak, written = peak_bytes(lambda out: write_streams(out, PROFILE, groups, 0, 1, events, fmt, 2,
                                                         chunk_rows=1000, row_group_rows=1000), tmp_path)
    assert written.rows == ROWS and len(written.files) == 2
    assert peak < at_least_materialised / 4, (peak, at_least_materialised)


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_writing_histories_holds_a_history_and_a_row_group_not_the_corpus(tmp_path: Path, fmt: str,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    histories, steps = ROWS // 40, 39
    monkeypatch.setattr(corpus, "iter_histories", synthetic_histories(histories, steps))
    line = {"v": 1, "type": "step", "history": "h000001", "step": 1, "op": "begin", "args": {}, "outcome": {}}
    at_least_materialised = ROWS * sys.getsizeof(line)
    peak, written = peak_bytes(lambda out: write_histories(out, PROFILE, histories, 0, 1, steps, fmt, 2,
                                                           row_group_rows=1000), tmp_path)
    assert written.rows == ROWS
    assert peak < at_least_materialised / 4, (peak, at_least_materialised)
