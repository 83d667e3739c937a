"""The audit on local Spark: accounting, partitioning that agrees with one global replay, planted faults found."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from brokerspec.audit.generate import generate_histories, generate_streams, write_corpus
from brokerspec.audit.inputs import InputError, inspect
from brokerspec.audit.local import replay_globally
from brokerspec.audit.run import run_audit
from brokerspec.spec import get_profile

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PROFILE = get_profile("artemis-latest")


def found(spark: SparkSession, out: Path) -> set[tuple[str, int]]:
    return {(str(r[0]), int(r[1])) for r in spark.read.parquet(str(out / "divergences")).select("history", "step")
            .collect()}


def faults_of(path: Path) -> set[tuple[str, int]]:
    return {(f["history"], f["step"]) for f in map(json.loads, path.read_text().splitlines())}


def test_literal_stream_rows_balance_and_bad_rows_are_quarantined_with_their_place(spark: SparkSession,
                                                                                   tmp_path: Path) -> None:
    lines: list[dict[str, object] | str] = [
        {"v": 1, "address": "a", "seq": 1, "op": "send", "duplicate_id": "x", "tx": None, "observed": "accepted"},
        {"v": 1, "address": "a", "seq": 2, "op": "send", "duplicate_id": "x", "tx": None, "observed": "accepted"},
        "",
        "{not json",
        {"v": 1, "address": "b", "seq": 3, "op": "zap", "duplicate_id": None, "tx": "t", "observed": "accepted"},
        {"v": 2, "address": "b", "seq": 4, "op": "send", "duplicate_id": None, "tx": None, "observed": "accepted"},
        {"v": 1, "address": "b", "seq": 5, "op": "send", "duplicate_id": None, "tx": None, "observed": "accepted"},
    ]
    source = tmp_path / "in" / "rows.jsonl"
    source.parent.mkdir()
    source.write_text("\n".join(json.dumps(x) if isinstance(x, dict) else x for x in lines) + "\n")
    result = run_audit(spark, source.parent, tmp_path / "out", PROFILE)
    assert (result.rows_in, result.checked, result.quarantined, result.divergences) == (6, 3, 3, 1)
    quarantine = sorted(spark.read.parquet(str(tmp_path / "out" / "quarantine")).select("file", "line", "reason")
                        .collect())
    assert [(Path(r[0]).name, r[1]) for r in quarantine] == [("rows.jsonl", 4), ("rows.jsonl", 5),
                                                              ("rows.jsonl", 6)]
    assert quarantine[0][2].startswith("not valid JSON") and quarantine[1][2].startswith("op:")
    assert quarantine[2][2].startswith("v: unsupported stream version 2")
    divergence = spark.read.parquet(str(tmp_path / "out" / "divergences")).collect()[0]
    assert (divergence.history, divergence.step, divergence.expected, divergence.observed,
            list(divergence.rule_ids), divergence.line) == ("a", 2, "rejected", "accepted",
                                                            ["DUP-NONTX-DUPLICATE"], 2)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["balanced"] and summary["rows_in"] == 6
    report = (tmp_path / "out" / "report.md").read_text()
    assert "| rows quarantined | 3 |" in report and "DUP-NONTX-DUPLICATE" in report
    assert (tmp_path / "out" / "plots" / "by-rule.png").stat().st_size > 1000
    assert "data:image/png;base64," in (tmp_path / "out" / "report.html").read_text()


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_per_address_partitioning_gives_the_verdicts_of_one_global_replay(spark: SparkSession, tmp_path: Path,
                                                                          fmt: str) -> None:
    rows, faults = generate_streams(PROFILE, 24, 8, seed=11, events=120)
    write_corpus(tmp_path / "c", rows, faults, fmt, "streams", files=3)
    result = run_audit(spark, tmp_path / "c" / "data", tmp_path / "out", PROFILE)
    table = spark.read.parquet(str(tmp_path / "out" / "divergences")).collect()
    spark_verdicts = {(r.history, r.step, r.expected, r.observed, r.rule_ids[0]) for r in table}
    raw = [(r["address"], r["seq"], r["op"], r["duplicate_id"], r["tx"], r["observed"], "", 0) for r in rows]
    assert spark_verdicts == replay_globally(raw, PROFILE.duplicates.id_cache_size)
    assert {(h, s) for h, s, *_ in spark_verdicts} == faults_of(tmp_path / "c" / "faults.jsonl")
    assert result.shuffled == (fmt == "jsonl")  # sorted Parquet from generate needs no shuffle
    assert result.balanced and result.rows_in == len(rows)


def test_files_that_claim_to_be_grouped_but_are_not_fall_back_to_the_shuffle(spark: SparkSession,
                                                                             tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    rows, faults = generate_streams(PROFILE, 6, 3, seed=5, events=100)
    write_corpus(tmp_path / "c", rows, faults, "parquet", "streams", files=1)
    data = tmp_path / "c" / "data"
    table = pq.read_table(data / "part-00000.parquet")
    half = table.num_rows // 2 + 7  # one address now sits in two files, both still claiming to be grouped
    pq.write_table(table.slice(0, half), data / "part-00000.parquet")
    pq.write_table(table.slice(half), data / "part-00001.parquet")
    result = run_audit(spark, data, tmp_path / "out", PROFILE)
    assert result.shuffled
    assert found(spark, tmp_path / "out") == faults_of(tmp_path / "c" / "faults.jsonl")


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_the_audit_finds_exactly_the_faults_planted_in_histories(spark: SparkSession, tmp_path: Path,
                                                                 fmt: str) -> None:
    rows, faults = generate_histories(PROFILE, 30, 7, seed=2 if fmt == "jsonl" else 9, steps=40)
    assert len(faults) == 7
    write_corpus(tmp_path / "c", rows, faults, fmt, "histories", files=2)
    result = run_audit(spark, tmp_path / "c" / "data", tmp_path / "out", PROFILE)
    assert found(spark, tmp_path / "out") == faults_of(tmp_path / "c" / "faults.jsonl")
    assert (result.rows_in, result.quarantined, result.groups, result.divergent_groups) == (len(rows), 0, 30, 7)


def test_a_clean_corpus_has_no_divergence(spark: SparkSession, tmp_path: Path) -> None:
    rows, faults = generate_histories(get_profile("seed"), 12, 0, seed=4, steps=50)
    write_corpus(tmp_path / "c", rows, faults, "jsonl", "histories", files=1)
    result = run_audit(spark, tmp_path / "c" / "data", tmp_path / "out", get_profile("seed"))
    assert (result.divergences, result.checked) == (0, len(rows))


def test_an_unknown_schema_version_is_refused_before_any_work(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").write_text(json.dumps({"v": 7, "type": "header"}) + "\n")
    with pytest.raises(InputError, match=r"t.jsonl:1: v: unsupported trace format version 7"):
        inspect(tmp_path)
    done = subprocess.run([sys.executable, "-m", "brokerspec.cli", "audit", str(tmp_path), "--out",
                           str(tmp_path / "out")], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and "unsupported trace format version 7" in done.stderr
    assert "starting Spark" not in done.stdout and not (tmp_path / "out").exists()


def test_inputs_that_cannot_be_audited_are_named(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        inspect(tmp_path / "missing")
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(InputError, match=r"notes.txt: not an input file"):
        inspect(tmp_path)
    (tmp_path / "notes.txt").unlink()
    (tmp_path / "a.jsonl").write_text(json.dumps({"hello": 1}) + "\n")
    with pytest.raises(InputError, match="neither a trace line"):
        inspect(tmp_path)


def test_generate_says_when_no_planted_bug_can_show(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "brokerspec.cli", "generate", "--histories", "2", "--faults", "2",
                           "--steps", "1", "--kind", "streams", "--out", str(tmp_path)], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 2 and "no planted bug showed" in done.stderr and "try more --steps" in done.stderr
