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

from . import engine, single
from .inputs import HISTORIES, AuditInput, inspect
from .places import TextBlocks, count_text_blocks
from .listing import write_traces
from .tables import LISTED, Tables, bin_width, binned, ranked

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


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


def _keyed_lines(spark: SparkSession, found: AuditInput, blocks: TextBlocks | None = None) -> DataFrame:
    paths = [str(p) for p in found.files]
    lines = (engine.read_lines(spark, paths, blocks) if found.format == "jsonl"
             else engine.read_history_parquet(spark, paths))
    return engine.key_history_lines(lines, str(found.root) if found.root.is_dir() else "")


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
    order = ("history", "step", "file", "line")
    divergences.orderBy(*order).coalesce(1).write.mode("overwrite").parquet(str(out / "divergences"))
    (engine.quarantine_of(replayed).orderBy("file", "line").coalesce(1).write.mode("overwrite")
     .parquet(str(out / "quarantine")))
    summaries = engine.summaries_of(replayed)
    summaries.orderBy("history").coalesce(1).write.mode("overwrite").parquet(str(out / "histories"))
    seconds["write tables"] = time.perf_counter() - clock

    clock = time.perf_counter()
    say("summarising")
    written = spark.read.parquet(str(out / "divergences"))
    checked, groups = summaries.agg(F.sum("checked"), F.count(F.lit(1))).first() or (0, 0)
    quarantine = spark.read.parquet(str(out / "quarantine"))
    reasons = _counts(quarantine.groupBy(F.substring_index("reason", ":", 1)).count())
    by_rule = _counts(written.select(F.explode("rule_ids").alias("rule")).groupBy("rule").count())
    by_address = _counts(written.groupBy(F.coalesce("address", F.lit("(none)"))).count())
    profiles = _counts(spark.read.parquet(str(out / "histories")).where(F.col("profile") != "")
                       .groupBy("profile").count())
    listed = [row.asDict() for row in written.orderBy(*order).limit(limit).collect()]
    for row in listed:
        row["rule_ids"] = list(row["rule_ids"])
    tables = Tables(rows_in, int(checked or 0), int(groups or 0), written.select("history").distinct().count(),
                    quarantine.count(), ranked(reasons, 20), written.count(), ranked(by_rule),
                    ranked(by_address, 30), _over_history(written), ranked(profiles), listed, shuffled=shuffled)
    if found.mode == HISTORIES and listed:
        wanted = sorted({str(row["history"]) for row in listed})
        for found_line in (_keyed_lines(spark, found, blocks).where(F.col("history").isin(wanted) & F.col("step")
                                                             .isNotNull())
                           .select("history", "step", "file", "line", "text").collect()):
            history, step, file, line, text = found_line
            tables.history_lines.setdefault(str(history), []).append((int(step), str(file), int(line), str(text)))
    replayed.unpersist()
    seconds["summarise"] = time.perf_counter() - clock
    return tables


def _counts(frame: DataFrame) -> dict[str, int]:
    return {str(r[0]): int(r[1]) for r in frame.collect()}


def _over_history(divergences: DataFrame, bins: int = 20) -> list[tuple[int, int, int]]:
    """Divergences by position in their history (step or seq), in up to ``bins`` equal ranges."""
    from pyspark.sql import functions as F

    bounds = divergences.agg(F.min("step"), F.max("step")).first()
    if bounds is None or bounds[0] is None:
        return []
    low, high = int(bounds[0]), int(bounds[1])
    width = bin_width(low, high, bins)
    counted = divergences.groupBy(F.floor((F.col("step") - low) / width).alias("bin")).count().collect()
    return binned(low, high, width, {int(r[0]): int(r[1]) for r in counted})


def describe(result: AuditResult) -> dict[str, Any]:
    """The figures the printed summary shows, in order."""
    return {
        "mode": result.mode, "engine": result.engine, "files": result.files, "rows in": result.rows_in, "rows checked": result.checked,
        "rows quarantined": result.quarantined, "divergences": result.divergences,
        "groups": result.groups, "groups with divergences": result.divergent_groups,
    }
