"""Files split across many Spark tasks keep every row's place: the same (file, line) as numbering them unsplit.

Spark's text source cuts a file into byte ranges read by separate tasks; :mod:`brokerspec.audit.places`
numbers the lines from a count per range. These tests force tiny ranges (``spark.sql.files.maxPartitionBytes``
of a few dozen bytes, so a range often starts or ends mid-line, between a ``\\r`` and its ``\\n``, or inside a
blank run) and compare with numbering the whole file in one process.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from brokerspec.audit import engine, single
from brokerspec.audit.generate import generate_histories, write_corpus
from brokerspec.audit.places import BlockCount, block_bases, count_text_blocks, local_path, numbered_text
from brokerspec.audit.run import run_audit
from brokerspec.spec import get_profile

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PROFILE = get_profile("artemis-latest")
SPLIT = ("spark.sql.files.maxPartitionBytes", "spark.sql.files.openCostInBytes")


@pytest.fixture
def tiny_splits(spark: SparkSession) -> Iterator[SparkSession]:
    """The shared session with files cut into ranges of 48 bytes while the test runs (a test may narrow or
    widen them; every setting is restored afterwards)."""
    with engine.spark_settings(spark, {SPLIT[0]: "48", SPLIT[1]: "1"}):
        yield spark


def row(address: str, seq: int, key: str | None, observed: str = "accepted", **extra: Any) -> str:
    values = {"v": 1, "address": address, "seq": seq, "op": "send", "duplicate_id": key, "tx": None,
              "observed": observed, **extra}
    return json.dumps(values)


def awkward_stream_file(path: Path) -> None:
    """Stream rows with CRLF and lone CR endings, blank runs, bad rows, and a last line without an ending.

    Lines (numbered by hand): 1 a/1, 2 blank, 3 a/2 duplicate (divergence), 4 not JSON (quarantine),
    5 blank (spaces), 6 b/3, 7 a/4 unknown field (quarantine), 8 b/5, 9 blank, 10 b/6 duplicate of b/5's ID
    (divergence), 11 a/7 op zap (quarantine), 12 b/8 with no line ending.
    """
    text = (row("a", 1, "x") + "\r\n" + "\r\n" + row("a", 2, "x") + "\n" + "{not json at all" + "\r"
            + "   \n" + row("b", 3, "y") + "\r\n" + row("a", 4, "z", colour="red") + "\n"
            + row("b", 5, "w") + "\r" + "\n" + "\r\n" + row("b", 6, "w") + "\r\n"
            + json.dumps({"v": 1, "address": "a", "seq": 7, "op": "zap", "duplicate_id": None, "tx": None,
                          "observed": "accepted"}) + "\n" + row("b", 8, "q"))
    path.write_bytes(text.encode())


def unsplit(paths: list[Path]) -> list[tuple[str, int, str]]:
    """(file, line, text) of every line, numbered by reading each whole file in this process."""
    return [(str(f), int(n), str(t)) for batch in single.text_lines(paths)
            for f, n, t in zip(*(c.to_pylist() for c in batch.columns))]


def test_block_bases_number_each_split_after_the_lines_of_the_earlier_ones() -> None:
    counts = [BlockCount("file:/d/b%20c.jsonl", 0, 4, 100, 3), BlockCount("file:/d/a.jsonl", 96, 5, 7, 5),
              BlockCount("file:/d/a.jsonl", 0, 2, 40, 2), BlockCount("file:/d/a.jsonl", 48, 3, 0, 1)]
    bases = {(uri, block): (path, base, first, last) for uri, block, path, base, first, last in block_bases(counts)}
    # a.jsonl: the split at 0 holds lines 1-2, at 48 lines 3-5, at 96 lines 6-10; b c.jsonl lines 1-4.
    assert bases[("file:/d/a.jsonl", 0)] == ("/d/a.jsonl", 1 - 40, 40, 41)
    assert bases[("file:/d/a.jsonl", 48)] == ("/d/a.jsonl", 3 - 0, 0, 2)
    assert bases[("file:/d/a.jsonl", 96)] == ("/d/a.jsonl", 6 - 7, 7, 11)
    assert bases[("file:/d/b%20c.jsonl", 0)] == ("/d/b c.jsonl", 1 - 100, 100, 103)
    assert local_path("file:///d/x%25y.jsonl") == "/d/x%y.jsonl" and local_path("/d/plain") == "/d/plain"


def test_split_text_files_number_every_line_as_the_unsplit_files(tiny_splits: SparkSession, tmp_path: Path) -> None:
    folder = tmp_path / "in put"  # a space, so the URI Spark reports is percent-encoded
    folder.mkdir()
    awkward_stream_file(folder / "a.jsonl")
    (folder / "b.jsonl").write_text("\n".join(row("c", n, f"k{n % 3}") for n in range(1, 30)) + "\n\n")
    (folder / "empty.jsonl").write_text("")
    paths = sorted(folder.iterdir())
    blocks = count_text_blocks(tiny_splits, [str(p) for p in paths])
    assert len(blocks.counts) > 20, "the files were cut into many splits"
    lines = numbered_text(tiny_splits, blocks)
    assert lines.rdd.getNumPartitions() > 20
    got = sorted((str(f), int(n), str(t)) for f, n, t in lines.collect())
    expected = sorted(unsplit(paths))
    assert len(expected) == 12 + 30
    assert got == expected
    assert blocks.non_blank == sum(1 for _, _, t in expected if t.strip(" "))


def test_the_quarantine_and_divergences_of_split_streams_name_the_unsplit_lines(tiny_splits: SparkSession,
                                                                                tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    awkward_stream_file(tmp_path / "in" / "a.jsonl")
    tiny_splits.conf.set(SPLIT[0], "150")  # 9 splits, most starting mid-line: fewer tasks than 48 bytes
    result = run_audit(tiny_splits, tmp_path / "in", tmp_path / "out", PROFILE, partitions=3)
    assert (result.rows_in, result.checked, result.quarantined, result.divergences) == (9, 6, 3, 2)
    quarantine = pq.read_table(tmp_path / "out" / "quarantine").to_pylist()
    assert [(Path(q["file"]).name, q["line"], q["reason"].split(":")[0]) for q in quarantine] == [
        ("a.jsonl", 4, "not valid JSON"), ("a.jsonl", 7, "unknown field 'colour'; a stream row has v, address, seq, "
                                                         "op, duplicate_id, tx, observed"),
        ("a.jsonl", 11, "op")]
    divergences = pq.read_table(tmp_path / "out" / "divergences").to_pylist()
    assert [(d["history"], d["step"], d["line"]) for d in divergences] == [("a", 2, 3), ("b", 6, 10)]
    assert all(q["file"] == str((tmp_path / "in" / "a.jsonl").resolve()) for q in quarantine)


def tables(out: Path) -> dict[str, list[dict[str, Any]]]:
    return {name: pq.read_table(out / name).to_pylist() for name in ("divergences", "quarantine", "histories")}


def test_split_histories_give_the_tables_of_the_one_process_audit(tiny_splits: SparkSession, tmp_path: Path) -> None:
    rows, faults = generate_histories(PROFILE, 4, 2, seed=3, steps=10)
    write_corpus(tmp_path / "c", rows, faults, "jsonl", "histories", files=2)
    data = tmp_path / "c" / "data"
    first = sorted(data.iterdir())[0]
    lines = first.read_text().split("\n")
    lines[4] = "{broken"  # quarantines the rest of its history (the file's name when no history is readable)
    lines.insert(8, "")
    first.write_bytes("\r\n".join(lines).rstrip("\r\n").encode())
    tiny_splits.conf.set(SPLIT[0], "900")  # still several splits a file, in fewer tasks
    on_spark = run_audit(tiny_splits, data, tmp_path / "spark", PROFILE, partitions=3)
    alone = run_audit(None, data, tmp_path / "alone", PROFILE)
    assert on_spark.quarantined > 0 and on_spark.divergences > 0
    assert tables(tmp_path / "spark") == tables(tmp_path / "alone")
    assert on_spark.rows_in == alone.rows_in == on_spark.checked + on_spark.quarantined


def test_split_parquet_rows_keep_their_row_number(tiny_splits: SparkSession, tmp_path: Path) -> None:
    count = 500
    columns = {"v": [1] * count, "address": [f"q{n % 7}" for n in range(count)], "seq": list(range(1, count + 1)),
               "op": ["send"] * count, "duplicate_id": [f"id{n % 40}" for n in range(count)], "tx": [None] * count,
               "observed": ["accepted"] * count}
    table = pa.table(columns, schema=pa.schema([("v", pa.int32()), ("address", pa.string()), ("seq", pa.int64()),
                                                ("op", pa.string()), ("duplicate_id", pa.string()),
                                                ("tx", pa.string()), ("observed", pa.string())]))
    path = tmp_path / "rows.parquet"
    pq.write_table(table, path, row_group_size=50)
    tiny_splits.conf.set(SPLIT[0], "600")
    frame = engine.read_stream_parquet(tiny_splits, [str(path)])
    assert frame.rdd.getNumPartitions() > 2
    got = sorted((r["seq"], r["line"], r["file"]) for r in frame.collect())
    assert got == [(n, n, str(path)) for n in range(1, count + 1)]


def test_the_traces_of_listed_histories_hold_the_lines_the_one_process_audit_gives(spark: SparkSession,
                                                                                  tmp_path: Path) -> None:
    """The JVM filter that picks the listed histories' lines keeps every one of them.

    One history is named by its file (its lines carry no ``history``), one spells its name with a JSON
    escape in one line, so neither shows its name as plain text on every line, and one is written without
    spaces after its colons, as other writers do.
    """
    rows, faults = generate_histories(PROFILE, 4, 4, seed=8, steps=10)
    names = sorted({str(r["history"]) for r in rows})
    data = tmp_path / "data"
    data.mkdir()
    solo = [json.dumps({k: v for k, v in r.items() if k != "history"}) for r in rows if r["history"] == names[0]]
    (data / "solo.jsonl").write_text("\n".join(solo) + "\n")
    escaped = names[1][:-1] + "\\u%04x" % ord(names[1][-1])
    rest = [json.dumps(r, separators=(",", ":") if r["history"] == names[2] else None)
            for r in rows if r["history"] != names[0]]
    rest = [line.replace(f'"{names[1]}"', f'"{escaped}"') if '"step": 3,' in line else line for line in rest]
    assert sum(escaped in line for line in rest) == 1
    (data / "corpus.jsonl").write_text("\n".join(rest) + "\n")
    on_spark = run_audit(spark, data, tmp_path / "spark", PROFILE)
    run_audit(None, data, tmp_path / "alone", PROFILE)
    assert on_spark.divergent_groups == 4
    traces = {p.name: p.read_text() for p in (tmp_path / "spark" / "traces").iterdir()}
    assert traces == {p.name: p.read_text() for p in (tmp_path / "alone" / "traces").iterdir()}
    assert {"solo.jsonl.jsonl", f"{names[1]}.jsonl", f"{names[2]}.jsonl"} <= set(traces)
