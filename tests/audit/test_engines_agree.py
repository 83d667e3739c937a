"""The audit in one process and on Spark write the same tables and figures for the same input.

The corpora carry planted faults and, in the JSON-lines ones, rows the reader refuses, so the divergence,
quarantine and per-history tables all have rows to compare. The Spark session is the one the audit tests share.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow.parquet as pq
import pytest

from brokerspec.audit.generate import generate_histories, generate_streams, write_corpus
from brokerspec.audit.run import AuditResult, run_audit
from brokerspec.audit.single import LOCAL_LIMIT_BYTES
from brokerspec.cli import main
from brokerspec.spec import get_profile

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PROFILE = get_profile("artemis-latest")


def table(out: Path, name: str) -> list[tuple[Any, ...]]:
    rows = pq.read_table(out / name).to_pylist()
    return [tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in sorted(r.items())) for r in rows]


def figures(result: AuditResult) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(result.to_json())
    for key in ("seconds", "engine", "shuffled"):
        data.pop(key)
    return data


def spoil(data: Path) -> None:
    """Break a few lines of the first file: not JSON, a bad field, and a blank line."""
    path = sorted(data.iterdir())[0]
    lines = path.read_text(encoding="utf-8").split("\n")
    lines[5] = "{not json"
    lines[9] = lines[9].replace('"v": 1', '"v": 9', 1)
    lines.insert(12, "")
    path.write_text("\n".join(lines), encoding="utf-8")


@pytest.mark.parametrize(("kind", "fmt"), [("histories", "jsonl"), ("histories", "parquet"), ("streams", "jsonl"),
                                           ("streams", "parquet")])
def test_one_process_and_spark_write_the_same_tables(spark: SparkSession, tmp_path: Path, kind: str,
                                                      fmt: str) -> None:
    if kind == "histories":
        rows, faults = generate_histories(PROFILE, 16, 5, seed=4, steps=30)
    else:
        rows, faults = generate_streams(PROFILE, 8, 4, seed=6, events=120)
    write_corpus(tmp_path / "c", rows, faults, fmt, kind, files=2)
    data = tmp_path / "c" / "data"
    if fmt == "jsonl":
        spoil(data)
    on_spark = run_audit(spark, data, tmp_path / "spark", PROFILE)
    alone = run_audit(None, data, tmp_path / "alone", PROFILE)
    assert (on_spark.engine, alone.engine) == ("spark", "one process")
    assert alone.divergences >= len(faults) - 1 and (fmt == "parquet" or alone.quarantined > 0)
    assert figures(alone) == figures(on_spark)
    for name in ("divergences", "quarantine", "histories"):
        assert table(tmp_path / "alone", name) == table(tmp_path / "spark", name), name
    assert ((tmp_path / "alone" / "report.md").read_text().split("## Where the time went")[0]
            == (tmp_path / "spark" / "report.md").read_text().split("## Where the time went")[0]
            .replace("spark/traces", "alone/traces"))


def test_a_small_input_is_audited_without_starting_spark(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows, faults = generate_histories(PROFILE, 6, 2, seed=1, steps=20)
    write_corpus(tmp_path / "c", rows, faults, "jsonl", "histories", files=1)
    code = main(["audit", str(tmp_path / "c" / "data"), "--out", str(tmp_path / "out"), "--expect",
                 str(tmp_path / "c" / "faults.jsonl")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "auditing in one process" in out and "starting Spark" not in out
    assert f"at most {LOCAL_LIMIT_BYTES:,}" in out and "found: 2, missed: 0" in out
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["engine"] == "one process"


def test_spark_progress_prints_plain_lines_with_the_tasks_done_when_not_a_terminal(spark: SparkSession) -> None:
    import io
    import time

    from rich.console import Console

    from brokerspec.audit.progress import SparkProgress

    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=False, width=200)

    def slow(x: int) -> int:
        time.sleep(0.4)
        return x

    with SparkProgress(spark, console, interval=0.1) as progress:
        progress.say("replaying 6 rows")
        assert spark.sparkContext.parallelize(range(6), 3).map(slow).sum() == 15
    lines = buffer.getvalue().splitlines()
    assert lines[0] == "replaying 6 rows"
    counted = [line for line in lines[1:] if line.startswith("replaying 6 rows: ")]
    assert counted and all("tasks done in 1 running stage" in line for line in counted)
    assert len(counted) == len(set(counted))  # a line only when the count moved
    assert "\x1b" not in buffer.getvalue()
