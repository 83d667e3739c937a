"""Where each input row is: its file and line, numbered by Spark in the JVM while files are split across tasks.

Introduction
------------
The quarantine and the divergences name each row's file and line, so the
audit must number every line of every input file. Spark's text source cuts a
large file into byte ranges (splits) and reads each in its own task, which
is what spreads one big file over every core; but no task then knows how
many lines came before its split. This module numbers lines without a
Python pass over the rows, in two steps:

1. **Counting** (:func:`count_text_blocks`), which is also the audit's
   count of the rows in: one cheap JVM aggregation per split, keyed by the
   file and the byte offset where the split starts
   (``input_file_block_start()``), giving its number of lines, its non-blank
   lines, and the smallest ``monotonically_increasing_id()`` of its rows.
   The splits are few (one per 128 MB or so), so the driver collects them
   and computes, per split, how many lines the earlier splits of the same
   file hold (:func:`block_bases`).
2. **Reading** (:func:`numbered_text`): the same scan again, each row's
   line being that count plus its position within its split, the position
   being its ``monotonically_increasing_id()`` less the split's smallest.
   Spark gives the rows of one split consecutive ids, in file order, in one
   task, so the difference is the position. The join with the split table
   is a broadcast hash join in the JVM.

Hadoop's line reader, which the text source uses, gives every line to
exactly one split: a split that starts mid-line skips to the next line, and
a split reads on past its end to finish its last line. Lines end at ``\\n``,
``\\r\\n`` or ``\\r``; blank lines are rows too (they count); a last line
without an ending is still a line. The test
``tests/audit/test_split_places.py`` forces files into many tiny splits and
checks every (file, line) against numbering the unsplit file in one process.

Both steps must see the same splits and the same ids, which holds because
they scan the same files under the same settings
(``spark.default.parallelism`` is fixed by :func:`.engine.start_session`).
The read checks it anyway: a row whose id falls outside its split's range
stops the job with an error naming the file, rather than give wrong lines.

Parquet needs none of this: Spark reports each row's index within its file
(``_metadata.row_index``), whichever split (row group) it was read in.

File names: Spark reports a file as a URI (``file:/x/a%20b.jsonl``); the
tables name it as a plain path, as :func:`local_path` turns it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

BLOCKS = "uri string, block long, file string, base long, first long, last long"
"""Per split: the file's URI and plain path, where the split starts, and how its ids map to lines."""


def local_path(uri: str) -> str:
    """A local file URI as Spark reports it (``file:/x`` or ``file:///x``, percent-encoded) as a plain path."""
    if not uri.startswith("file:"):
        return uri
    from urllib.parse import unquote, urlparse

    return unquote(urlparse(uri).path)


@dataclass(frozen=True)
class BlockCount:
    """One split of one text file as the counting job saw it."""

    uri: str
    block: int
    """The byte offset where the split starts (``input_file_block_start()``)."""
    lines: int
    """Rows the split gave, blank ones included."""
    first: int
    """The smallest ``monotonically_increasing_id()`` of its rows."""
    non_blank: int
    """Rows that are not blank once spaces are trimmed (what counts as a row in)."""


def block_bases(counts: Iterable[BlockCount]) -> list[tuple[str, int, str, int, int, int]]:
    """Per split: (uri, block, plain path, base, first id, last id), where a row's line is its id + base.

    The base is the lines of the file's earlier splits, plus one (lines count
    from 1), less the split's first id.

    >>> block_bases([BlockCount("file:/d/a", 20, 3, 8589934592, 3), BlockCount("file:/d/a", 0, 2, 0, 1)])
    [('file:/d/a', 0, '/d/a', 1, 0, 1), ('file:/d/a', 20, '/d/a', -8589934589, 8589934592, 8589934594)]
    """
    out: list[tuple[str, int, str, int, int, int]] = []
    before: dict[str, int] = {}
    for count in sorted(counts, key=lambda c: (c.uri, c.block)):
        earlier = before.get(count.uri, 0)
        out.append((count.uri, count.block, local_path(count.uri), earlier + 1 - count.first, count.first,
                    count.first + count.lines - 1))
        before[count.uri] = earlier + count.lines
    return out


def _scan_text(spark: SparkSession, paths: list[str]) -> DataFrame:
    """Every line of the files as (uri, block, id, text), the id taken right at the scan, before any filter."""
    from pyspark.sql import functions as F

    return spark.read.text(paths).select(F.col("_metadata.file_path").alias("uri"),
                                         F.expr("input_file_block_start()").alias("block"),
                                         F.monotonically_increasing_id().alias("id"), F.col("value").alias("text"))


@dataclass(frozen=True)
class TextBlocks:
    """The splits of a set of text files, counted: the rows in, and what numbering needs."""

    paths: tuple[str, ...]
    counts: tuple[BlockCount, ...]

    @property
    def non_blank(self) -> int:
        """The rows in: lines that are not blank (only spaces), as ``trim`` sees them."""
        return sum(c.non_blank for c in self.counts)

    def frame(self, spark: SparkSession) -> DataFrame:
        """The BLOCKS table as a small DataFrame, to broadcast."""
        return spark.createDataFrame(block_bases(self.counts), BLOCKS)


def count_text_blocks(spark: SparkSession, paths: list[str]) -> TextBlocks:
    """Count the lines of every split of the text files in one JVM aggregation (no Python worker)."""
    from pyspark.sql import functions as F

    scan = _scan_text(spark, paths)
    counted = scan.groupBy("uri", "block").agg(
        F.count(F.lit(1)).alias("lines"), F.min("id").alias("first"),
        F.sum((F.trim(F.col("text")) != "").cast("long")).alias("non_blank")).collect()
    return TextBlocks(tuple(paths), tuple(BlockCount(str(r[0]), int(r[1]), int(r[2]), int(r[3]), int(r[4] or 0))
                                          for r in counted))


def _checked_line(uri: Column, ident: Column, first: Column, last: Column, base: Column) -> Column:
    from pyspark.sql import functions as F

    message = F.concat(F.lit("line numbering of "), uri,
                       F.lit(" changed between counting and reading its lines; the audit cannot name places"))
    return F.when((ident < first) | (ident > last), F.raise_error(message)).otherwise(ident + base)


def numbered_text(spark: SparkSession, blocks: TextBlocks) -> DataFrame:
    """The lines of the counted files as (file, line, text): plain path, line from 1, blank lines included."""
    from pyspark.sql import functions as F

    scan = _scan_text(spark, list(blocks.paths))
    table = F.broadcast(blocks.frame(spark))
    joined = scan.join(table, ["uri", "block"])
    line = _checked_line(F.col("uri"), F.col("id"), F.col("first"), F.col("last"), F.col("base"))
    return joined.select(F.col("file"), line.cast("long").alias("line"), F.col("text"))


def file_paths(frame: DataFrame) -> Column:
    """A column giving the plain path of each row's file (from ``_metadata.file_path``) for a file scan.

    The URIs are the frame's own input files, turned into paths here on the
    driver; a row whose file is not among them stops the job with an error.
    """
    from itertools import chain

    from pyspark.sql import functions as F

    paths: dict[str, str] = {}
    for uri in frame.inputFiles():
        path = local_path(uri)
        rest = uri[len("file:"):].lstrip("/") if uri.startswith("file:") else None
        # The listing may spell a local file file:///x where the rows say file:/x: accept both spellings.
        for spelling in ((uri,) if rest is None else (f"file:/{rest}", f"file:///{rest}")):
            paths[spelling] = path
    mapping = F.create_map(*chain.from_iterable((F.lit(u), F.lit(p)) for u, p in paths.items()))
    listed = F.col("_metadata.file_path")
    return F.coalesce(mapping[listed], F.raise_error(F.concat(F.lit("a row of "), listed,
                                                              F.lit(" comes from a file the scan did not list"))))


def numbered_parquet(spark: SparkSession, paths: list[str], columns: tuple[str, ...]) -> DataFrame:
    """Parquet rows as (file, line, *columns): plain path and the row's number within its file, from 1."""
    from pyspark.sql import functions as F

    frame = spark.read.parquet(*paths)
    return frame.select(file_paths(frame).alias("file"),
                        (F.col("_metadata.row_index") + 1).alias("line"), *columns)
