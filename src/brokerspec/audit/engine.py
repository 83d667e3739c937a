"""The audit on Spark: a session that fits the machine, and the pipeline as DataFrame -> DataFrame steps.

Introduction
------------
Reading and writing happen at the edges (:func:`read_lines`,
:func:`read_stream_parquet`, :func:`read_history_parquet`); everything in
between is a pure function from DataFrame to DataFrame, so each step can be
tested on a few literal rows. The replay itself runs in Python workers
through ``mapInArrow``: each partition receives whole groups (a history, or
an address), sorted, as Arrow batches, and streams them through the pure
replay of :mod:`.histories` or :mod:`.streams`, which keeps one group's
state across batch boundaries. No per-group object is built, so the cost
does not grow with the number of groups.

Places in the input. Spark splits large files across tasks, so no task
sees a whole file; :mod:`.places` numbers each row's line in the JVM from a
count per split, without a Python pass (the quarantine and the divergences
report that number). Files that say they are already grouped by address
are the exception: they are read whole, one file per partition
(:func:`whole_files`), since an address must not be cut in two.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from .. import jsonin
from . import histories, streams
from .lines import ReadOnce
from .places import TextBlocks, count_text_blocks, local_path, numbered_parquet, numbered_text

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

BIG = str(1 << 40)

# --- the session --------------------------------------------------------------------------


def find_java_home() -> str | None:
    """JAVA_HOME if set, else the JDK that ``java`` on the PATH belongs to."""
    if os.environ.get("JAVA_HOME"):
        return os.environ["JAVA_HOME"]
    java = shutil.which("java")
    if java is None:
        return None
    return str(Path(java).resolve().parent.parent)


def spark_environment() -> dict[str, str]:
    """The environment a local or loopback Spark needs: Java, this Python, and 127.0.0.1 only."""
    env: dict[str, str] = {"SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable,
                           "PYSPARK_DRIVER_PYTHON": sys.executable}
    java_home = find_java_home()
    if java_home is not None:
        env["JAVA_HOME"] = java_home
    return env


def start_session(master: str | None = None, *, partitions: int | None = None, quick_start: bool = False,
                  app: str = "brokerspec audit") -> SparkSession:
    """A Spark session for the audit: local on all cores unless ``master`` names a cluster.

    ``quick_start`` trades peak speed for start-up time (a simpler JIT and
    the serial collector), which suits short test runs.
    """
    os.environ.update(spark_environment())
    if "JAVA_HOME" not in os.environ:
        raise RuntimeError("no Java found: install a JDK 17 (Debian: openjdk-17-jre-headless) or set JAVA_HOME")
    from pyspark.sql import SparkSession

    cores = os.cpu_count() or 2
    shuffle = partitions or 2 * cores
    builder = (SparkSession.builder.appName(app).master(master or f"local[{cores}]")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.driver.memory", "4g")
               .config("spark.sql.shuffle.partitions", str(shuffle))
               .config("spark.default.parallelism", str(shuffle))
               .config("spark.sql.files.minPartitionNum", str(shuffle))
               .config("spark.sql.execution.arrow.maxRecordsPerBatch", "20000")
               .config("spark.sql.session.timeZone", "UTC"))
    if quick_start:
        builder = builder.config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


# --- schemas ------------------------------------------------------------------------------

LINES = "file string, line long, text string"
STREAM_ROWS = ("address string, seq long, op string, duplicate_id string, tx string, observed string, "
               "file string, line long, reason string")
HISTORY_ROWS = "history string, step long, file string, line long, text string, reason string"
REPLAYED = ("kind string, history string, step long, operation string, file string, line long, "
            "expected string, observed string, rule string, address string, reason string, "
            "checked long, divergences long, tx string, doomed boolean, domain string, profile string")
REPLAYED_FIELDS = [part.split()[0] for part in REPLAYED.split(", ")]
DIVERGENCES = ("history string, step long, operation string, expected string, observed string, "
               "rule_ids array<string>, address string, file string, line long")
QUARANTINE = "file string, line long, history string, step long, reason string"
SUMMARIES = "history string, checked long, divergences long, domain string, profile string"

Batches = Iterator[pa.RecordBatch]


def to_batch(rows: list[dict[str, Any]], schema: pa.Schema) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist(rows, schema=schema)


def arrow_schema(ddl: str) -> pa.Schema:
    types = {"string": pa.string(), "long": pa.int64(), "boolean": pa.bool_(),
             "array<string>": pa.list_(pa.string())}
    fields = []
    for part in ddl.split(", "):
        name, kind = part.split(" ", 1)
        fields.append(pa.field(name, types[kind]))
    return pa.schema(fields)


@contextlib.contextmanager
def spark_settings(spark: SparkSession, settings: dict[str, str]) -> Iterator[None]:
    """While inside, the session runs with ``settings``; each is then restored (or unset, if it was unset)."""
    before = {name: spark.conf.get(name, None) for name in settings}
    for name, value in settings.items():
        spark.conf.set(name, value)
    try:
        yield
    finally:
        for name, old in before.items():
            if old is None:
                spark.conf.unset(name)
            else:
                spark.conf.set(name, old)


def whole_files(spark: SparkSession) -> contextlib.AbstractContextManager[None]:
    """While inside, plan file scans with one whole file per partition, never split (then restore the settings).

    For input whose files each hold whole groups (:func:`replay_presorted_streams`):
    a split would cut a group in two.
    """
    return spark_settings(spark, {"spark.sql.files.maxPartitionBytes": BIG, "spark.sql.files.openCostInBytes": BIG})


# --- reading (edges) ----------------------------------------------------------------------


class LineCounter:
    """Numbers rows from 1 within each file, for rows that arrive in file order (the one-process path)."""

    def __init__(self) -> None:
        self.current = ""
        self.count = 0

    def number(self, uri: str) -> tuple[str, int]:
        """The row's file as a plain path and its number within that file."""
        if uri != self.current:
            self.current, self.count = uri, 0
        self.count += 1
        return local_path(uri), self.count

    def columns(self, uris: list[str]) -> tuple[pa.Array, pa.Array]:
        """The file and line columns for a batch's file URIs."""
        numbered = [self.number(uri) for uri in uris]
        return (pa.array([f for f, _ in numbered], pa.string()), pa.array([n for _, n in numbered], pa.int64()))


def number_lines(batches: Batches) -> Batches:
    """(file, text) in file order -> (file, line, text), numbering lines from 1 within each file."""
    schema = arrow_schema(LINES)
    counter = LineCounter()
    for batch in batches:
        files, lines = counter.columns(batch.column(0).to_pylist())
        yield pa.RecordBatch.from_arrays([files, lines, batch.column(1)], schema=schema)


def read_lines(spark: SparkSession, paths: list[str], blocks: TextBlocks | None = None) -> DataFrame:
    """Text files as LINES, blank lines included (they still count in line numbers), files split across tasks.

    ``blocks`` is the files' count per split (:func:`.places.count_text_blocks`),
    when the caller has already counted them.
    """
    return numbered_text(spark, blocks if blocks is not None else count_text_blocks(spark, paths))


STREAM_PARQUET_COLUMNS = ("address", "seq", "op", "duplicate_id", "tx", "observed")


def number_stream_rows(batches: Batches) -> Batches:
    """(file, address, seq, op, duplicate_id, tx, observed) in file order -> STREAM_ROWS, rows numbered per file."""
    schema = arrow_schema(STREAM_ROWS)
    counter = LineCounter()
    for batch in batches:
        files, lines = counter.columns(batch.column(0).to_pylist())
        columns = [batch.column(i) for i in range(1, 7)]
        yield pa.RecordBatch.from_arrays([*columns, files, lines, pa.nulls(batch.num_rows, pa.string())],
                                         schema=schema)


def read_stream_parquet(spark: SparkSession, paths: list[str]) -> DataFrame:
    """Stream rows from Parquet as STREAM_ROWS (the row number within its file as ``line``), all in the JVM."""
    from pyspark.sql import functions as F

    frame = numbered_parquet(spark, paths, STREAM_PARQUET_COLUMNS)
    return frame.select(*STREAM_PARQUET_COLUMNS, "file", "line", F.lit(None).cast("string").alias("reason"))


HISTORY_PARQUET_COLUMNS = ("v", "history", "type", "step", "op", "args", "outcome", "domain", "profile",
                           "overrides", "note")


def parquet_record(row: dict[str, Any]) -> dict[str, Any]:
    """A Parquet history row back as the JSON object of a trace line (null columns left out).

    A JSON column (``args``, ``outcome``, ``overrides``) that :func:`brokerspec.jsonin.loads` refuses
    leaves only the row's history, type and step, with the reason under
    :data:`~.histories.COLUMN_ERROR`, so the row is quarantined under its own history.
    """
    record: dict[str, Any] = {}
    for name in HISTORY_PARQUET_COLUMNS:
        value = row.get(name)
        if value is None:
            continue
        if name in ("args", "outcome", "overrides"):
            try:
                value = jsonin.loads(value)
            except jsonin.JsonInputError as error:
                kept = {key: row.get(key) for key in ("history", "type", "step") if row.get(key) is not None}
                return {**kept, histories.COLUMN_ERROR: f"{name}: {error}"}
        record[name] = value
    return record


def history_parquet_lines(batches: Batches) -> Batches:
    """(file, *HISTORY_PARQUET_COLUMNS) in file order -> LINES: each row as the JSON text of its trace line."""
    import json

    schema = arrow_schema(LINES)
    counter = LineCounter()
    for batch in batches:
        out = []
        for row in batch.to_pylist():
            file, line = counter.number(row.pop("file"))
            text = json.dumps(parquet_record(row), ensure_ascii=False)
            out.append({"file": file, "line": line, "text": text})
        yield to_batch(out, schema)


def numbered_history_parquet_lines(batches: Batches) -> Batches:
    """(file, line, *HISTORY_PARQUET_COLUMNS), already numbered -> LINES: each row as its trace line's JSON."""
    import json

    schema = arrow_schema(LINES)
    for batch in batches:
        out = []
        for row in batch.to_pylist():
            file, line = row.pop("file"), row.pop("line")
            out.append({"file": file, "line": line, "text": json.dumps(parquet_record(row), ensure_ascii=False)})
        yield to_batch(out, schema)


def read_history_parquet(spark: SparkSession, paths: list[str]) -> DataFrame:
    """History rows from Parquet as LINES: each row becomes the JSON text of its trace line."""
    frame = numbered_parquet(spark, paths, HISTORY_PARQUET_COLUMNS)
    return frame.mapInArrow(numbered_history_parquet_lines, LINES)


# --- pure steps: streams ------------------------------------------------------------------


def parse_stream_batches(batches: Batches) -> Batches:
    """LINES -> STREAM_ROWS, batch by batch; a line that is no stream row keeps only its place and the reason."""
    schema = arrow_schema(STREAM_ROWS)
    for batch in batches:
        out = []
        for file, line, text in zip(*(c.to_pylist() for c in batch.columns)):
            if not text.strip():
                continue
            try:
                result = streams.validate_record(jsonin.loads(text))
            except jsonin.JsonInputError as error:
                result = str(error)
            if isinstance(result, str):
                out.append({"file": file, "line": line, "reason": result})
            else:
                address, seq, op, duplicate_id, tx, observed = result
                out.append({"address": address, "seq": seq, "op": op, "duplicate_id": duplicate_id, "tx": tx,
                            "observed": observed, "file": file, "line": line, "reason": None})
        yield to_batch(out, schema)


def parse_stream_lines(lines: DataFrame) -> DataFrame:
    """LINES -> STREAM_ROWS; a line that is no stream row keeps only its place and the reason."""
    return lines.mapInArrow(parse_stream_batches, STREAM_ROWS)


def _replayed(kind: str, **values: Any) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(REPLAYED_FIELDS)
    row["kind"] = kind
    row.update(values)
    return row


def stream_replayer(cache_size: int, presorted: bool = False) -> Callable[[Batches], Batches]:
    """The mapInArrow function replaying STREAM_ROWS sorted by (address, seq) with the given cache size.

    With ``presorted`` the rows come straight from files that say they are
    sorted and partitioned by address; the function then also reports
    (``kind = 'unsorted'``) any sign that they are not, and the caller falls
    back to shuffling.
    """
    schema = arrow_schema(REPLAYED)

    def rows(batches: Batches, out: list[dict[str, Any]]) -> Iterator[tuple[object, ...]]:
        seen: set[object] = set()
        last_address: object = None
        last_seq: object = None
        for batch in batches:
            columns = [c.to_pylist() for c in batch.columns]
            for row in zip(*columns):
                if row[8] is not None:  # quarantined while parsing
                    out.append(_replayed("quarantine", file=row[6], line=row[7], reason=row[8],
                                         history=row[0], step=row[1]))
                    continue
                if presorted:
                    address, seq = row[0], row[1]
                    if address != last_address:
                        if address in seen:
                            out.append(_replayed("unsorted", address=str(address)))
                        seen.add(address)
                        last_address = address
                    elif isinstance(seq, int) and isinstance(last_seq, int) and seq <= last_seq:
                        out.append(_replayed("unsorted", address=str(address)))
                    last_seq = seq
                yield row[:8]

    def replay(batches: Batches) -> Batches:
        out: list[dict[str, Any]] = []
        for result in streams.audit_sorted_rows(rows(batches, out), cache_size):
            out.append(_stream_result(result))
            if len(out) >= 20000:
                yield to_batch(out, schema)
                out.clear()
        if out:
            yield to_batch(out, schema)

    return replay


def _stream_result(result: tuple[object, ...]) -> dict[str, Any]:
    kind = result[0]
    if kind == streams.SUMMARY:
        _, address, checked, divergences = result
        return _replayed("summary", history=address, address=address, checked=checked, divergences=divergences,
                         domain="duplicates")
    address, seq, op, file, line = result[1:6]
    base = {"history": address, "address": address, "step": seq, "operation": op, "file": file, "line": line}
    if kind == streams.DIVERGENCE:
        expected, observed, rule, tx = result[6:10]
        return _replayed("divergence", expected=expected, observed=observed, rule=rule, tx=tx, **base)
    if kind == streams.QUARANTINE:
        return _replayed("quarantine", reason=result[6], **base)
    tx, doomed, observed = result[6:9]
    return _replayed("commit", tx=tx, doomed=doomed, observed=observed, **base)


def replay_streams(rows: DataFrame, cache_size: int, partitions: int) -> DataFrame:
    """STREAM_ROWS -> REPLAYED: group by address, order by seq, replay each address."""
    grouped = rows.repartition(partitions, "address").sortWithinPartitions("address", "seq", "file", "line")
    return grouped.mapInArrow(stream_replayer(cache_size), REPLAYED)


def replay_presorted_streams(rows: DataFrame, cache_size: int) -> DataFrame:
    """STREAM_ROWS already partitioned by address and sorted -> REPLAYED, without a shuffle."""
    return rows.mapInArrow(stream_replayer(cache_size, presorted=True), REPLAYED)


def judge_commits(replayed: DataFrame) -> DataFrame:
    """REPLAYED -> DIVERGENCES for commit rows: a transaction doomed at any address fails everywhere."""
    from pyspark.sql import functions as F

    facts = replayed.where(F.col("kind") == "commit")
    doomed = facts.groupBy("tx").agg(F.max(F.col("doomed").cast("int")).alias("doomed_any"))
    judged = facts.join(doomed, "tx").withColumn(
        "expected", F.when(F.col("doomed_any") == 1, F.lit("rejected")).otherwise(F.lit("accepted")))
    wrong = judged.where(F.col("observed") != F.col("expected"))
    rule = F.when(F.col("doomed_any") == 1, F.lit("DUP-COMMIT-ROLLBACK-ONLY")).otherwise(F.lit("DUP-COMMIT"))
    return wrong.select("history", "step", "operation", "expected", "observed", F.array(rule).alias("rule_ids"),
                        "address", "file", "line")


# --- pure steps: histories ----------------------------------------------------------------


def history_keyer(root: str = "") -> Callable[[Batches], Batches]:
    """The function LINES -> HISTORY_ROWS, batch by batch: each line's history (its field, else its file)."""
    schema = arrow_schema(HISTORY_ROWS)

    def key(batches: Batches) -> Batches:
        seen: ReadOnce[bool] = ReadOnce()
        for batch in batches:
            out = []
            for file, line, text in zip(*(c.to_pylist() for c in batch.columns)):
                if not text.strip():
                    continue
                history, step, reason = histories.step_key(text, seen)
                if history is None:
                    history = os.path.relpath(file, root) if root else file
                out.append({"history": history, "step": step, "file": file, "line": line, "text": text,
                            "reason": reason})
            yield to_batch(out, schema)

    return key


def key_history_lines(lines: DataFrame, root: str = "") -> DataFrame:
    """LINES -> HISTORY_ROWS: each line's history (its ``history`` field, else its file) and step."""
    return lines.mapInArrow(history_keyer(root), HISTORY_ROWS)


def _history_result(result: tuple[object, ...]) -> dict[str, Any]:
    kind = result[0]
    if kind == histories.SUMMARY:
        _, history, checked, divergences, domain, profile = result
        return _replayed("summary", history=history, checked=checked, divergences=divergences, domain=domain,
                         profile=profile)
    history, step, op, file, line = result[1:6]
    base = {"history": history, "step": step, "operation": op or None, "file": file, "line": line}
    if kind == histories.DIVERGENCE:
        expected, observed, rule, address = result[6:10]
        return _replayed("divergence", expected=expected, observed=observed, rule=rule, address=address, **base)
    return _replayed("quarantine", reason=result[6], **base)


def replay_history_batches(batches: Batches) -> Batches:
    """HISTORY_ROWS sorted by (history, step, file, line) -> REPLAYED, batch by batch."""
    schema = arrow_schema(REPLAYED)
    out: list[dict[str, Any]] = []

    def keyed() -> Iterator[histories.HistoryRow]:
        for batch in batches:
            for history, step, file, line, text, reason in zip(*(c.to_pylist() for c in batch.columns)):
                if reason is not None:
                    out.append(_replayed("quarantine", history=history, file=file, line=line, reason=reason))
                    continue
                yield history, step, file, line, text

    for result in histories.audit_history_rows(keyed()):
        out.append(_history_result(result))
        if len(out) >= 20000:
            yield to_batch(out, schema)
            out.clear()
    if out:
        yield to_batch(out, schema)


def replay_histories(rows: DataFrame, partitions: int) -> DataFrame:
    """HISTORY_ROWS -> REPLAYED: group by history, order by step (header first), replay through the spec."""
    grouped = rows.repartition(partitions, "history").sortWithinPartitions("history", "step", "file", "line")
    return grouped.mapInArrow(replay_history_batches, REPLAYED)


# --- pure steps: the tables ---------------------------------------------------------------


def divergences_of(replayed: DataFrame) -> DataFrame:
    """REPLAYED -> DIVERGENCES (the rows the replay itself judged wrong)."""
    from pyspark.sql import functions as F

    return replayed.where(F.col("kind") == "divergence").select(
        "history", "step", "operation", "expected", "observed", F.array("rule").alias("rule_ids"), "address",
        "file", "line")


def quarantine_of(replayed: DataFrame) -> DataFrame:
    """REPLAYED -> QUARANTINE."""
    from pyspark.sql import functions as F

    return replayed.where(F.col("kind") == "quarantine").select("file", "line", "history", "step", "reason")


def summaries_of(replayed: DataFrame) -> DataFrame:
    """REPLAYED -> SUMMARIES: per history (or address), lines checked and divergences found by the replay."""
    from pyspark.sql import functions as F

    return replayed.where(F.col("kind") == "summary").groupBy("history").agg(
        F.sum("checked").alias("checked"), F.sum("divergences").alias("divergences"),
        F.first("domain").alias("domain"), F.first("profile").alias("profile"))
