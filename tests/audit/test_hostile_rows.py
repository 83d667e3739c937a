"""One hostile row never aborts the audit: it is quarantined with its reason, and the counts still reconcile.

The rows are the reader attacks (deep nesting, integers beyond 64 bits, lone surrogates, duplicate keys) in
JSON-lines stream rows and history lines, and in a Parquet history table's JSON ``args`` column.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from brokerspec.audit.engine import parquet_record
from brokerspec.audit.generate import generate_histories, write_corpus
from brokerspec.audit.histories import COLUMN_ERROR, step_key
from brokerspec.audit.run import run_audit
from brokerspec.spec import get_profile

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PROFILE = get_profile("artemis-latest")
NESTED = "[" * 100_000 + "]" * 100_000
GOOD = {"v": 1, "address": "a", "seq": 1, "op": "send", "duplicate_id": "x", "tx": None, "observed": "accepted"}


def quarantine_of(spark: SparkSession, out: Path) -> list[tuple[str, str, int, str]]:
    rows = spark.read.parquet(str(out / "quarantine")).select("history", "file", "line", "reason").collect()
    return sorted((str(r[0]), Path(str(r[1])).name, int(r[2]), str(r[3])) for r in rows)


def test_step_key_and_parquet_records_name_the_history_of_a_row_they_cannot_read() -> None:
    assert "nested more than 64" in str(step_key(NESTED)[2])
    assert "appears twice" in str(step_key('{"history": "h", "history": "g", "type": "header"}')[2])
    record = parquet_record({"v": 1, "history": "h7", "type": "step", "step": 3, "op": "lookup",
                             "args": "{not json", "outcome": None})
    assert record["history"] == "h7" and record["step"] == 3 and "args: not valid JSON" in record[COLUMN_ERROR]
    assert step_key(json.dumps(record)) == ("h7", 3, record[COLUMN_ERROR])


def test_hostile_stream_rows_are_quarantined_and_the_counts_reconcile(spark: SparkSession, tmp_path: Path) -> None:
    source = tmp_path / "in" / "rows.jsonl"
    source.parent.mkdir()
    lines = [json.dumps(GOOD), NESTED, json.dumps({**GOOD, "seq": 2}).replace('"seq": 2', '"seq": ' + "9" * 30),
             json.dumps({**GOOD, "seq": 3}).replace('"a"', '"\\ud800"'), '{"v": 1, "v": 1}',
             json.dumps({**GOOD, "seq": 4}).replace('"seq": 4', '"seq": ' + "1" * 5000),
             json.dumps({**GOOD, "seq": 5, "duplicate_id": "y"})]
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = run_audit(spark, source.parent, tmp_path / "out", PROFILE)
    assert (result.rows_in, result.checked, result.quarantined) == (7, 2, 5)
    reasons = [r[3] for r in quarantine_of(spark, tmp_path / "out")]
    for fragment in ("nested more than 64", "does not fit in 64 bits", "lone surrogate", "appears twice",
                     "thousands of digits"):
        assert any(fragment in reason for reason in reasons), (fragment, reasons)
    assert "| rows quarantined | 5 |" in (tmp_path / "out" / "report.md").read_text()


def test_hostile_history_lines_are_quarantined_with_their_history(spark: SparkSession, tmp_path: Path) -> None:
    rows, _ = generate_histories(PROFILE, 3, 0, seed=5, steps=6)
    write_corpus(tmp_path / "c", rows, [], "jsonl", "histories", files=1)
    path = next((tmp_path / "c" / "data").glob("*.jsonl"))
    lines = path.read_text(encoding="utf-8").splitlines()
    victim = json.loads(lines[3])
    lines[3] = json.dumps(victim).replace('"args": {', '"args": {"deep": ' + "[" * 70 + "]" * 70 + ", ")
    lines.append(NESTED)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = run_audit(spark, path.parent, tmp_path / "out", PROFILE)
    assert result.rows_in == len(lines) and result.rows_in == result.checked + result.quarantined
    quarantined = quarantine_of(spark, tmp_path / "out")
    # A line that cannot be read has no history to name: it goes under its file's, and the rest of the
    # history it broke follows it into quarantine (the spec's state after a missing step is unknown).
    assert (path.name, path.name, 4) in {r[:3] for r in quarantined}
    later = [n for n, text in enumerate(lines[4:], start=5) if f'"history": "{victim["history"]}"' in text]
    assert later and {(victim["history"], path.name, n) for n in later} <= {r[:3] for r in quarantined}
    assert any(r[2] == len(lines) and "nested more than 64" in r[3] for r in quarantined)


def test_a_parquet_row_whose_args_are_not_json_is_quarantined_under_its_history(spark: SparkSession,
                                                                              tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows, _ = generate_histories(PROFILE, 3, 0, seed=6, steps=6)
    write_corpus(tmp_path / "c", rows, [], "parquet", "histories", files=1)
    path = next((tmp_path / "c" / "data").glob("*.parquet"))
    table = pq.read_table(path)
    records = table.to_pylist()
    steps = [i for i, r in enumerate(records) if r["type"] == "step"]
    records[steps[1]]["args"] = "{not json"
    records[steps[4]]["args"] = NESTED
    pq.write_table(pa.Table.from_pylist(records, schema=table.schema), path)
    result = run_audit(spark, path.parent, tmp_path / "out", PROFILE)
    assert result.rows_in == len(records) == result.checked + result.quarantined
    quarantined = {r[0]: r[3] for r in quarantine_of(spark, tmp_path / "out") if r[3].startswith("args:")}
    assert records[steps[1]]["history"] in quarantined and records[steps[4]]["history"] in quarantined
    assert "nested more than 64" in quarantined[records[steps[4]]["history"]]
