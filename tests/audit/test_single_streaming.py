"""The one-process audit in bounded memory: external sorts that spill give the tables of one in-memory sort.

``spill_rows`` caps the rows each sort of :func:`brokerspec.audit.single.audit_tables` holds; with a cap of a
few rows nearly every row goes through a sorted run on disk and the merge, so comparing with a cap larger
than the input checks the spilling path against plain sorting. The agreement with Spark is
``test_engines_agree.py``'s.
"""

from __future__ import annotations

import random
import sys
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from brokerspec.audit import corpus, single, spill
from brokerspec.audit.cli import found_divergences, read_expected
from brokerspec.audit.generate import StreamGroup, group_addresses
from brokerspec.audit.inputs import inspect
from brokerspec.audit.spill import ExternalSort
from brokerspec.audit.tables import LISTED, Tables
from brokerspec.spec import get_profile

PROFILE = get_profile("artemis-latest")


@pytest.mark.parametrize("fan_in", [64, 3])
def test_an_external_sort_gives_what_sorted_gives_stable_and_twice(fan_in: int,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spill, "FAN_IN", fan_in)
    rng = random.Random(7)
    rows = [(rng.randrange(40), n) for n in range(5000)]  # many equal keys: order among them must stay
    with ExternalSort(lambda r: r[0], limit=97) as ordered:
        ordered.extend(rows)
        # 51 runs of 97 rows. Merged by threes, runs stay as the digits of 51 in base 3 (1220): one run of 27,
        # two of 9, two of 3 and none of 1 are left, five in all.
        assert ordered.spilled == (51 if fan_in == 64 else 5) and ordered.count == 5000
        assert list(ordered) == sorted(rows, key=lambda r: r[0])
        assert list(ordered) == sorted(rows, key=lambda r: r[0])  # the runs stay readable until closed
    with ExternalSort(lambda r: r[0], limit=97) as empty:
        assert list(empty) == [] and empty.spilled == 0


def spoil(data: Path) -> None:
    """Break a few lines of the first file: not JSON, a bad field, and a blank line."""
    path = sorted(data.iterdir())[0]
    lines = path.read_text(encoding="utf-8").split("\n")
    lines[5] = "{not json"
    lines[9] = lines[9].replace('"v": 1', '"v": 9', 1)
    lines.insert(12, "")
    path.write_text("\n".join(lines), encoding="utf-8")


def tables(out: Path) -> dict[str, list[dict[str, Any]]]:
    return {name: pq.read_table(out / name).to_pylist() for name in ("divergences", "quarantine", "histories")}


def audit(data: Path, out: Path, spill_rows: int) -> Tables:
    found = inspect(data)
    return single.audit_tables(found, PROFILE, out, single.count_input(found), LISTED, spill_rows)


@pytest.mark.parametrize(("kind", "fmt"), [("histories", "jsonl"), ("histories", "parquet"), ("streams", "jsonl"),
                                           ("streams", "parquet")])
def test_spilling_sorts_write_the_tables_of_in_memory_sorts(tmp_path: Path, kind: str, fmt: str) -> None:
    if kind == "histories":
        written = corpus.write_histories(tmp_path / "c", PROFILE, 16, 5, 4, 30, fmt, 2)
    else:
        written = corpus.write_streams(tmp_path / "c", PROFILE, 8, 4, 6, 120, fmt, 2)
    data = tmp_path / "c" / "data"
    if fmt == "jsonl":
        spoil(data)
    in_memory = audit(data, tmp_path / "memory", 10 ** 9)
    spilled = audit(data, tmp_path / "spilled", 7)
    assert spilled == in_memory
    assert tables(tmp_path / "spilled") == tables(tmp_path / "memory")
    assert in_memory.rows_in == in_memory.checked + in_memory.quarantined == written.rows
    assert (fmt == "parquet") == (in_memory.quarantined == 0)
    if fmt == "parquet":  # nothing spoiled: exactly the planted faults are found
        assert found_divergences(tmp_path / "spilled") == read_expected(tmp_path / "c" / "faults.jsonl")
    else:
        assert in_memory.divergences >= len(written.faults) - 1


def test_the_listed_histories_lines_come_back_after_a_spilling_replay(tmp_path: Path) -> None:
    corpus.write_histories(tmp_path / "c", PROFILE, 12, 4, 2, 20, "jsonl", 3)
    result = audit(tmp_path / "c" / "data", tmp_path / "out", 5)
    listed = {str(d["history"]) for d in result.listed}
    assert len(listed) == 4 and set(result.history_lines) == listed
    for history in listed:  # the header and every step, each once
        assert sorted(step for step, *_ in result.history_lines[history]) == list(range(21))


def synthetic_groups(groups: int, events: int) -> Callable[..., Iterator[StreamGroup]]:
    """Stream groups of sends, with a committed transaction across both addresses now and then (no broker run).

    Commits are rare (2 rows in 100) because the replay's output batch holds up to 20,000 of them as it goes
    (:func:`brokerspec.audit.engine.stream_replayer`): a bounded amount, but not small beside this input.
    """
    def groups_of(*_: object) -> Iterator[StreamGroup]:
        for group in range(groups):
            a, b = group_addresses(group)
            rows: list[dict[str, Any]] = []
            while len(rows) < events:
                n, tx = len(rows), f"g{group}-t{len(rows)}"
                rows += [{"address": a, "op": "send", "duplicate_id": f"m{n + k}", "tx": None,
                          "observed": "accepted"} for k in range(96)]
                rows += [{"address": b, "op": "send", "duplicate_id": f"m{n}", "tx": tx, "observed": "accepted"},
                         {"address": a, "op": "send", "duplicate_id": f"n{n}", "tx": tx, "observed": "accepted"},
                         {"address": a, "op": "commit", "duplicate_id": None, "tx": tx, "observed": "accepted"},
                         {"address": b, "op": "commit", "duplicate_id": None, "tx": tx, "observed": "accepted"}]
            yield rows[:events], None
    return groups_of


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_the_one_process_audit_holds_a_bounded_part_of_its_input(tmp_path: Path, fmt: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    rows_in = 30_000
    monkeypatch.setattr(corpus, "iter_stream_groups", synthetic_groups(150, rows_in // 150))
    monkeypatch.setattr(single, "BATCH", 500)  # batches, sorts and merges that hold far less than the input
    monkeypatch.setattr(spill, "BLOCK_ROWS", 16)
    written = corpus.write_streams(tmp_path / "c", PROFILE, 150, 0, 1, rows_in // 150, fmt, 2)
    audit(tmp_path / "c" / "data", tmp_path / "warm-up", 1000)  # the imports and caches, before measuring
    # Holding every row would take at least its tuple and its duplicate ID's string.
    row = ("g00001-a", 1, "send", "m1", None, "accepted", "/some/where/part-00000.jsonl", 1, None)
    at_least_materialised = written.rows * (sys.getsizeof(row) + sys.getsizeof("m100"))
    tracemalloc.start()
    try:
        result = audit(tmp_path / "c" / "data", tmp_path / "out", 1000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert written.rows == rows_in and result.checked == rows_in and result.divergences == 0
    assert peak < at_least_materialised / 2, (peak, at_least_materialised)
