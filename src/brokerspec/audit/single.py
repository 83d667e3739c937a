"""The whole audit in one process, for inputs too small to be worth starting Spark.

Introduction
------------
The Spark job (:mod:`.run`, :mod:`.engine`) spends several seconds starting
a JVM before it reads a line; an input of a few megabytes is replayed in
less time than that. :func:`audit_tables` runs the same audit without
Spark: it feeds the input, as Arrow batches, through the very functions the
Spark job runs in its Python workers (:func:`.engine.number_lines`,
:func:`.engine.history_keyer`, :func:`.engine.replay_history_batches`,
:func:`.engine.stream_replayer` and the rest). What Spark adds is only the
grouping and ordering (all rows of a history or an address together, in
step or ``seq`` order, the header first) and the group-bys that make the
tables; here a sort and a few dictionaries do the same. The test
``test_one_process_and_spark_write_the_same_tables`` compares the tables of
both on the same corpora.

:data:`LOCAL_LIMIT_BYTES` is where ``brokerspec audit`` stops choosing this
path: inputs whose files add up to more go to Spark, and so does any run
given ``--master``.
"""

from __future__ import annotations

import os
import shutil
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa

from brokerspec.spec import Profile

from . import engine
from .inputs import HISTORIES, AuditInput
from .tables import HistoryLines, Tables, divergence_sort_key, over_history, ranked

LOCAL_LIMIT_BYTES = 16 * 1024 * 1024
"""Inputs up to this many bytes (all files together) are audited in one process unless ``--master`` is given."""

BATCH = 20000


def input_bytes(found: AuditInput) -> int:
    """The size of the input's files together."""
    return sum(path.stat().st_size for path in found.files)


def _chunks(rows: Iterable[dict[str, Any]], schema: pa.Schema) -> engine.Batches:
    chunk: list[dict[str, Any]] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) >= BATCH:
            yield engine.to_batch(chunk, schema)
            chunk = []
    if chunk:
        yield engine.to_batch(chunk, schema)


def _rows(batches: engine.Batches) -> Iterator[dict[str, Any]]:
    for batch in batches:
        yield from batch.to_pylist()


def text_lines(paths: Iterable[Path]) -> engine.Batches:
    """(file, text) batches of every line of the files, blank ones too, ends as Spark's reader cuts them."""
    schema = pa.schema([("file", pa.string()), ("text", pa.string())])

    def lines() -> Iterator[dict[str, Any]]:
        for path in paths:
            name = os.path.abspath(path)
            # Universal newlines end a line at \n, \r\n or \r, as Hadoop's line reader does.
            with path.open(encoding="utf-8", errors="replace", newline=None) as handle:
                for text in handle:
                    yield {"file": name, "text": text[:-1] if text.endswith("\n") else text}

    return engine.number_lines(_chunks(lines(), schema))


def parquet_batches(paths: Iterable[Path], columns: tuple[str, ...]) -> engine.Batches:
    """The columns of each Parquet file, in file order, after a ``file`` column (its absolute path)."""
    import pyarrow.parquet as pq

    for path in paths:
        name = os.path.abspath(path)
        for batch in pq.ParquetFile(path).iter_batches(batch_size=BATCH, columns=list(columns)):
            files = pa.array([name] * batch.num_rows, pa.string())
            yield pa.RecordBatch.from_arrays([files, *batch.columns], names=["file", *columns])


def _nulls_first(value: Any) -> tuple[bool, Any]:
    return (value is not None, value if value is not None else 0)


def replay(found: AuditInput, profile: Profile) -> tuple[list[dict[str, Any]], HistoryLines]:
    """The REPLAYED rows of the input, and (histories only) each history's lines as (step, file, line, text)."""
    paths = list(found.files)
    if found.mode == HISTORIES:
        lines = text_lines(paths) if found.format == "jsonl" else engine.history_parquet_lines(
            parquet_batches(paths, engine.HISTORY_PARQUET_COLUMNS))
        keyed = list(_rows(engine.history_keyer(str(found.root) if found.root.is_dir() else "")(lines)))
        keyed.sort(key=lambda r: (r["history"], _nulls_first(r["step"]), r["file"], r["line"]))
        replayed = list(_rows(engine.replay_history_batches(_chunks(keyed, engine.arrow_schema(
            engine.HISTORY_ROWS)))))
        by_history: HistoryLines = {}
        for row in keyed:
            if row["step"] is not None:
                by_history.setdefault(row["history"], []).append((row["step"], row["file"], row["line"], row["text"]))
        return replayed, by_history
    if found.format == "jsonl":
        rows = list(_rows(engine.parse_stream_batches(text_lines(paths))))
    else:
        rows = list(_rows(engine.number_stream_rows(parquet_batches(paths, engine.STREAM_PARQUET_COLUMNS))))
    rows.sort(key=lambda r: (_nulls_first(r["address"]), _nulls_first(r["seq"]), r["file"], r["line"]))
    replayer = engine.stream_replayer(profile.duplicates.id_cache_size)
    return list(_rows(replayer(_chunks(rows, engine.arrow_schema(engine.STREAM_ROWS))))), {}


def judge_commits(replayed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The commit rows whose answer is wrong: doomed at any address means failed at all (as the Spark join)."""
    facts = [r for r in replayed if r["kind"] == "commit"]
    doomed = {r["tx"] for r in facts if r["doomed"]}
    wrong = []
    for r in facts:
        expected, rule = (("rejected", "DUP-COMMIT-ROLLBACK-ONLY") if r["tx"] in doomed
                          else ("accepted", "DUP-COMMIT"))
        if r["observed"] != expected:
            wrong.append({"history": r["history"], "step": r["step"], "operation": r["operation"],
                          "expected": expected, "observed": r["observed"], "rule_ids": [rule],
                          "address": r["address"], "file": r["file"], "line": r["line"]})
    return wrong


def _write(rows: list[dict[str, Any]], ddl: str, folder: Path) -> None:
    import pyarrow.parquet as pq

    if folder.exists():
        shutil.rmtree(folder)  # what Spark's overwrite mode does
    folder.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=engine.arrow_schema(ddl)), folder / "part-00000.parquet")


def audit_tables(found: AuditInput, profile: Profile, out: Path, count_input: int, limit: int) -> Tables:
    """Replay ``found`` in this process, write the three tables under ``out``, and return their figures."""
    replayed, lines = replay(found, profile)
    divergences = [{"history": r["history"], "step": r["step"], "operation": r["operation"],
                    "expected": r["expected"], "observed": r["observed"], "rule_ids": [r["rule"]],
                    "address": r["address"], "file": r["file"], "line": r["line"]}
                   for r in replayed if r["kind"] == "divergence"]
    if found.mode != HISTORIES:
        divergences += judge_commits(replayed)
    divergences.sort(key=divergence_sort_key)
    quarantine = sorted(({k: r[k] for k in ("file", "line", "history", "step", "reason")}
                         for r in replayed if r["kind"] == "quarantine"),
                        key=lambda r: (r["file"], r["line"]))
    summaries: dict[str, dict[str, Any]] = {}
    for r in replayed:
        if r["kind"] != "summary":
            continue
        summary = summaries.setdefault(r["history"], {"history": r["history"], "checked": 0, "divergences": 0,
                                                      "domain": r["domain"], "profile": r["profile"]})
        summary["checked"] += r["checked"]
        summary["divergences"] += r["divergences"]
    out.mkdir(parents=True, exist_ok=True)
    _write(divergences, engine.DIVERGENCES, out / "divergences")
    _write(quarantine, engine.QUARANTINE, out / "quarantine")
    _write(sorted(summaries.values(), key=lambda s: str(s["history"])), engine.SUMMARIES, out / "histories")
    listed = divergences[:limit]
    wanted = {d["history"] for d in listed}
    return Tables(
        rows_in=count_input,
        checked=sum(s["checked"] for s in summaries.values()),
        groups=len(summaries),
        divergent_groups=len({d["history"] for d in divergences}),
        quarantined=len(quarantine),
        quarantine_reasons=ranked(Counter(str(q["reason"]).split(":", 1)[0] for q in quarantine), 20),
        divergences=len(divergences),
        by_rule=ranked(Counter(rule for d in divergences for rule in d["rule_ids"])),
        by_address=ranked(Counter(d["address"] if d["address"] is not None else "(none)" for d in divergences),
                          30),
        over_history=over_history(Counter(d["step"] for d in divergences)),
        profiles=ranked(Counter(s["profile"] for s in summaries.values() if s["profile"])),
        listed=listed,
        history_lines={h: lines[h] for h in wanted if h in lines},
        shuffled=False,
    )


def count_input(found: AuditInput) -> int:
    """Rows in, counted from the input alone: Parquet row counts, or the text lines not blank.

    A line is blank as Spark's ``trim`` sees it (nothing but spaces), so both engines count alike.
    """
    if found.format == "parquet":
        return found.parquet_rows
    return sum(1 for batch in text_lines(found.files) for text in batch.column(2).to_pylist()
               if text.strip(" "))
