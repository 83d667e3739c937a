"""The audit job: inputs in, divergence and quarantine tables, a report and an accounting out.

Introduction
------------
:func:`run_audit` ties the steps of :mod:`.engine` together for one input:

1. check the input (:mod:`.inputs`) before Spark does anything;
2. read it into rows with their place in the input;
3. replay every history (or address) in order through the spec;
4. judge commits across addresses (streams only);
5. write ``divergences/``, ``quarantine/`` and ``histories/`` (Parquet), a
   trace per history among the listed divergences (:mod:`.listing`), the
   report (``report.md``, ``report.html``, ``plots/``) and ``summary.json``.

Steps 2 to 4 and the tables run on Spark, or, given no session, in this
process (:mod:`.single`); both fill the same :class:`.tables.Tables`.

Accounting: ``rows_in`` is counted from the input on its own (Parquet
metadata, or the non-blank lines of the text files, counted per split by
:func:`.places.count_text_blocks`, which also numbers the lines), ``checked`` and
``quarantined`` by the replay. They must add up; if they do not, the audit
fails rather than report a partial result as whole.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from brokerspec.spec import Profile

from . import engine, single, written
from .inputs import HISTORIES, AuditInput, inspect
from .listing import write_traces
from .places import TextBlocks, count_text_blocks
from .tables import LISTED, Tables

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

HISTORY_MEMBER = r'"history"[ \t\r\n]*:[ \t\r\n]*"([^"\\]*)"'
"""A ``"history": "NAME"`` member with an unescaped name, as a Java regular expression; group 1 is NAME."""


@dataclass
class AuditResult:
    """What an audit found, with its accounting and where the time went."""

    mode: str
    input_format: str
    files: int
    rows_in: int
    checked: int
    quarantined: int
    divergences: int
    groups: int
    divergent_groups: int
    by_rule: dict[str, int]
    by_address: dict[str, int]
    over_history: list[tuple[int, int, int]]
    quarantine_reasons: dict[str, int]
    shuffled: bool
    seconds: dict[str, float] = field(default_factory=dict)
    engine: str = "spark"
    """``spark``, or ``one process`` for an input small enough (:data:`.single.LOCAL_LIMIT_BYTES`)."""
    profiles: dict[str, int] = field(default_factory=dict)
    """Histories per profile named in their headers (histories only: streams use the ``--profile`` given)."""

    @property
    def balanced(self) -> bool:
        """rows in = rows checked + rows quarantined."""
        return self.rows_in == self.checked + self.quarantined

    def to_json(self) -> str:
        """The result as JSON (``summary.json``)."""
        data = asdict(self)
        data["balanced"] = self.balanced
        return json.dumps(data, indent=2, sort_keys=True)


class AccountingError(RuntimeError):
    """The replay's counts do not add up to the input's: a bug in brokerspec, never a broker's fault."""


Progress = Callable[[str], None]


def _count_input(spark: SparkSession, found: AuditInput) -> tuple[int, TextBlocks | None]:
    """Rows in, and for text files their count per split (which numbers the lines later)."""
    if found.format == "parquet":
        return found.parquet_rows, None
    blocks = count_text_blocks(spark, [str(p) for p in found.files])
    return blocks.non_blank, blocks


def replay(spark: SparkSession, found: AuditInput, profile: Profile, partitions: int,
           blocks: TextBlocks | None = None) -> tuple[DataFrame, bool]:
    """The REPLAYED rows for the input, and whether they were shuffled into groups.

    ``blocks`` is the text files' count per split when already counted.
    Presorted Parquet is replayed where it lies, each file whole, and
    materialised here (persisted) while whole files are the setting.
    """
    paths = [str(p) for p in found.files]
    if found.mode == HISTORIES:
        return engine.replay_histories(_keyed_lines(spark, found, blocks), partitions), True
    cache_size = profile.duplicates.id_cache_size
    if found.format == "jsonl":
        rows = engine.parse_stream_lines(engine.read_lines(spark, paths, blocks))
    else:
        rows = engine.read_stream_parquet(spark, paths)
    if found.presorted:
        from pyspark import StorageLevel

        with engine.whole_files(spark):
            replayed = engine.replay_presorted_streams(rows, cache_size).persist(StorageLevel.MEMORY_AND_DISK)
            replayed.count()
            grouped = _is_really_sorted(replayed)
        if grouped:
            return replayed, False
        replayed.unpersist()
    return engine.replay_streams(rows, cache_size, partitions), True


def _lines(spark: SparkSession, found: AuditInput, blocks: TextBlocks | None = None) -> DataFrame:
    paths = [str(p) for p in found.files]
    return (engine.read_lines(spark, paths, blocks) if found.format == "jsonl"
            else engine.read_history_parquet(spark, paths))


def _keyed_lines(spark: SparkSession, found: AuditInput, blocks: TextBlocks | None = None) -> DataFrame:
    return engine.key_history_lines(_lines(spark, found, blocks), str(found.root) if found.root.is_dir() else "")


def _is_really_sorted(replayed: DataFrame) -> bool:
    from pyspark.sql import functions as F

    if replayed.where(F.col("kind") == "unsorted").limit(1).count():
        return False
    summaries = replayed.where(F.col("kind") == "summary").groupBy("history").count()
    return summaries.where(F.col("count") > 1).limit(1).count() == 0


def run_audit(spark: SparkSession | None, input_path: Path, out: Path, profile: Profile, *, mode: str = "auto",
              partitions: int | None = None, progress: Progress | None = None,
              found: AuditInput | None = None, limit: int = LISTED) -> AuditResult:
    """Audit ``input_path`` under ``profile`` and write the tables and report to ``out``.

    With ``spark`` None the audit runs in this process (:mod:`.single`);
    the tables are the same. ``found`` is the input as
    :func:`.inputs.inspect` saw it, when the caller has already looked;
    ``limit`` is how many divergences the report lists one by one.
    """
    say = progress or (lambda _: None)
    seconds: dict[str, float] = {}
    found = found or inspect(input_path, mode)
    say(f"input: {len(found.files)} {found.format} file(s) of {found.mode}")
    if spark is None:
        clock = time.perf_counter()
        rows_in = single.count_input(found)
        seconds["count input"] = time.perf_counter() - clock
        clock = time.perf_counter()
        tables = single.audit_tables(found, profile, out, rows_in, limit)
        seconds["replay and write tables"] = time.perf_counter() - clock
        say(f"replayed {rows_in:,} rows in one process")
    else:
        tables = _spark_tables(spark, found, profile, out, partitions, say, seconds, limit)
    result = AuditResult(found.mode, found.format, len(found.files), tables.rows_in, tables.checked,
                         tables.quarantined, tables.divergences, tables.groups, tables.divergent_groups,
                         tables.by_rule, tables.by_address, tables.over_history, tables.quarantine_reasons,
                         tables.shuffled, seconds, "spark" if spark is not None else "one process",
                         tables.profiles if found.mode == HISTORIES else {})
    if not result.balanced:
        raise AccountingError(f"rows in ({result.rows_in:,}) != rows checked ({result.checked:,}) + rows "
                              f"quarantined ({result.quarantined:,})")
    listing = write_traces(tables, out, found.mode)
    (out / "summary.json").write_text(result.to_json() + "\n", encoding="utf-8")
    from .report import write_report

    write_report(result, out, profile, listing)
    return result


def _spark_tables(spark: SparkSession, found: AuditInput, profile: Profile, out: Path, partitions: int | None,
                  say: Progress, seconds: dict[str, float], limit: int) -> Tables:
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    clock = time.perf_counter()
    parts = partitions or int(spark.conf.get("spark.sql.shuffle.partitions") or 4)
    say("counting the input rows")
    rows_in, blocks = _count_input(spark, found)
    seconds["count input"] = time.perf_counter() - clock

    clock = time.perf_counter()
    say(f"replaying {rows_in:,} rows")
    replayed, shuffled = replay(spark, found, profile, parts, blocks)
    replayed = replayed.persist(StorageLevel.MEMORY_AND_DISK)
    replayed.count()
    seconds["replay"] = time.perf_counter() - clock
    say(f"replayed {rows_in:,} rows" + ("" if shuffled else " (input already grouped by address: no shuffle)"))

    clock = time.perf_counter()
    say("writing the tables")
    divergences = engine.divergences_of(replayed)
    if found.mode != HISTORIES:
        divergences = divergences.unionByName(engine.judge_commits(replayed))
    out.mkdir(parents=True, exist_ok=True)
    # One sorted task per table (coalesce, then sort): a global orderBy would add a sampling job and a shuffle.
    _write_sorted(divergences, written.ORDER, out / "divergences")
    _write_sorted(engine.quarantine_of(replayed), ("file", "line"), out / "quarantine")
    _write_sorted(engine.summaries_of(replayed), ("history",), out / "histories")
    seconds["write tables"] = time.perf_counter() - clock

    clock = time.perf_counter()
    say("summarising")
    tables = written.tables_from(out, rows_in, limit, shuffled)
    if found.mode == HISTORIES and tables.listed:
        wanted = sorted({str(row["history"]) for row in tables.listed})
        lines = _candidate_lines(_lines(spark, found, blocks), found, wanted)
        keyed = engine.key_history_lines(lines, str(found.root) if found.root.is_dir() else "")
        for found_line in (keyed.where(F.col("history").isin(wanted) & F.col("step").isNotNull())
                           .select("history", "step", "file", "line", "text").collect()):
            history, step, file, line, text = found_line
            tables.history_lines.setdefault(str(history), []).append((int(step), str(file), int(line), str(text)))
    replayed.unpersist()
    seconds["summarise"] = time.perf_counter() - clock
    return tables


def _write_sorted(frame: DataFrame, order: tuple[str, ...], folder: Path) -> None:
    """Write ``frame`` as one Parquet file sorted by ``order`` (ascending, nulls first, as ``orderBy``)."""
    frame.coalesce(1).sortWithinPartitions(*order).write.mode("overwrite").parquet(str(folder))


def _candidate_lines(lines: DataFrame, found: AuditInput, wanted: list[str]) -> DataFrame:
    """LINES that may belong to the ``wanted`` histories: a cheap JVM filter before the exact Python keying.

    A line belongs to a history named in its ``history`` field, else to the one its
    file names. Every line of a wanted history passes: it holds a backslash (an
    escape may spell the name otherwise), or sits in a file whose name is a wanted
    history, or one of its ``"history": "..."`` members names a wanted history
    (a line without a backslash has its own ``history`` member among them). The
    members are found with one regular expression a line, whatever the number of
    histories wanted (a substring search per wanted name took 72 s of 154 at 5M
    lines and 50 names). The keying then keeps exactly the wanted ones, as it
    would have from all lines.
    """
    import os

    from pyspark.sql import functions as F

    root = str(found.root) if found.root.is_dir() else ""
    files = [os.path.abspath(p) for p in found.files
             if (os.path.relpath(os.path.abspath(p), root) if root else os.path.abspath(p)) in wanted]
    named = F.regexp_extract_all(F.col("text"), F.lit(HISTORY_MEMBER), F.lit(1))
    keep = (F.col("text").contains("\\") | F.col("file").isin(files)
            | F.arrays_overlap(named, F.array(*(F.lit(name) for name in wanted))))
    return lines.where(keep)


def describe(result: AuditResult) -> dict[str, Any]:
    """The figures the printed summary shows, in order."""
    return {
        "mode": result.mode, "engine": result.engine, "files": result.files, "rows in": result.rows_in, "rows checked": result.checked,
        "rows quarantined": result.quarantined, "divergences": result.divergences,
        "groups": result.groups, "groups with divergences": result.divergent_groups,
    }
