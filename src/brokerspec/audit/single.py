"""The whole audit in one process, for inputs too small to be worth starting Spark, in bounded memory.

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
tables; here external sorts (:class:`.spill.ExternalSort`: sorted runs on a
temporary file, merged) and a pass over sorted rows do the same. The test
``test_one_process_and_spark_write_the_same_tables`` compares the tables of
both on the same corpora.

Memory is bounded: the input is read batch by batch into an external sort,
replayed as the merge gives it back, and the replay's rows go straight into
the external sorts of the three tables, which are written batch by batch.
What stays in memory grows with the number of rules, addresses with a
divergence and quarantine reasons, never with the number of rows. The lines
of the histories the report lists are read again from the sorted rows
after the replay.

:data:`LOCAL_LIMIT_BYTES` is where ``brokerspec audit`` stops choosing this
path: inputs whose files add up to more go to Spark, and so does any run
given ``--master``.
"""

from __future__ import annotations

import itertools
import operator
import os
import shutil
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa

from brokerspec.spec import Profile

from . import engine
from .inputs import HISTORIES, AuditInput
from .spill import SPILL_ROWS, ExternalSort, Row
from .tables import HistoryLines, Tables, bin_width, binned, divergence_sort_key, ranked

LOCAL_LIMIT_BYTES = 16 * 1024 * 1024
"""Inputs up to this many bytes (all files together) are audited in one process unless ``--master`` is given."""

BATCH = 20000

DIVERGENCE_FIELDS = engine.arrow_schema(engine.DIVERGENCES).names
QUARANTINE_FIELDS = engine.arrow_schema(engine.QUARANTINE).names


def input_bytes(found: AuditInput) -> int:
    """The size of the input's files together."""
    return sum(path.stat().st_size for path in found.files)


def _batches(rows: Iterable[Row], schema: pa.Schema) -> engine.Batches:
    """Tuples in the schema's field order as record batches of at most BATCH rows."""
    rows = iter(rows)
    while chunk := list(itertools.islice(rows, BATCH)):
        columns = zip(*chunk)
        yield pa.RecordBatch.from_arrays([pa.array(column, field.type) for column, field in zip(columns, schema)],
                                         schema=schema)


def _tuples(batches: engine.Batches) -> Iterator[Row]:
    """The batches' rows as tuples, every row of one file sharing one string for its name.

    A shared name is pickled once per block of a spilled run instead of once per row.
    """
    names: dict[str, str] = {}
    for batch in batches:
        columns = [column.to_pylist() for column in batch.columns]
        where = batch.schema.get_field_index("file")
        if where >= 0:
            columns[where] = [names.setdefault(name, name) if name is not None else None
                              for name in columns[where]]
        yield from zip(*columns)


def text_lines(paths: Iterable[Path]) -> engine.Batches:
    """(file, text) batches of every line of the files, blank ones too, ends as Spark's reader cuts them."""
    schema = pa.schema([("file", pa.string()), ("text", pa.string())])

    def lines() -> Iterator[Row]:
        for path in paths:
            name = os.path.abspath(path)
            # Universal newlines end a line at \n, \r\n or \r, as Hadoop's line reader does.
            with path.open(encoding="utf-8", errors="replace", newline=None) as handle:
                for text in handle:
                    yield name, text[:-1] if text.endswith("\n") else text

    return engine.number_lines(_batches(lines(), schema))


def parquet_batches(paths: Iterable[Path], columns: tuple[str, ...]) -> engine.Batches:
    """The columns of each Parquet file, in file order, after a ``file`` column (its absolute path)."""
    import pyarrow.parquet as pq

    for path in paths:
        name = os.path.abspath(path)
        for batch in pq.ParquetFile(path).iter_batches(batch_size=BATCH, columns=list(columns)):
            files = pa.array([name] * batch.num_rows, pa.string())
            yield pa.RecordBatch.from_arrays([files, *batch.columns], names=["file", *columns])


history_order = operator.itemgetter(0, 1, 2, 3)
"""HISTORY_ROWS that the keyer could read, in replay order: by history, step, file and line."""

stream_order = operator.itemgetter(0, 1, 6, 7)
"""STREAM_ROWS with an address and a seq, in replay order: by address, seq, file and line."""

place_order = operator.itemgetter(2, 3)
"""HISTORY_ROWS by file and line."""


def _split_rows(rows: Iterable[Row], ordered: ExternalSort, aside: ExternalSort,
                goes_aside: Callable[[Row], bool]) -> None:
    """Rows the replay quarantines wherever they come go ``aside``; the others are ``ordered``.

    The replay quarantines a history row the keyer gave a reason (it never reaches the history's
    auditor), and a stream row without an address or a seq (:func:`.streams.check_values`, before any
    address's state is touched). Where such rows come changes none of the replay's outcomes, so they
    need no place in the sort, and the sort's key needs no care for missing values.
    """
    batch: list[Row] = []
    for row in rows:
        if goes_aside(row):
            aside.add(row)
        else:
            batch.append(row)
            if len(batch) >= BATCH:
                ordered.extend(batch)
                batch = []
    ordered.extend(batch)


class _Found:
    """The replay's rows, sorted as each table wants them, plus what a listed history needs."""

    def __init__(self, limit: int) -> None:
        self.divergences = ExternalSort(divergence_order, limit)
        self.quarantine = ExternalSort(lambda r: (r[0], r[1]), limit)
        self.summaries = ExternalSort(lambda r: str(r[0]), limit)
        self.commits = ExternalSort(lambda r: r[0], limit)

    def take(self, replayed: engine.Batches) -> None:
        """Route each REPLAYED row to its table (commit facts wait for :func:`judge_commits`)."""
        for batch in replayed:
            for r in batch.to_pylist():
                kind = r["kind"]
                if kind == "divergence":
                    self.divergences.add((r["history"], r["step"], r["operation"], r["expected"], r["observed"],
                                          [r["rule"]], r["address"], r["file"], r["line"]))
                elif kind == "quarantine":
                    self.quarantine.add((r["file"], r["line"], r["history"], r["step"], r["reason"]))
                elif kind == "summary":
                    self.summaries.add((r["history"], r["checked"], r["divergences"], r["domain"], r["profile"]))
                elif kind == "commit":
                    self.commits.add((r["tx"], r["doomed"], r["observed"], r["history"], r["step"],
                                      r["operation"], r["address"], r["file"], r["line"]))

    def close(self) -> None:
        for table in (self.divergences, self.quarantine, self.summaries, self.commits):
            table.close()


def divergence_order(row: Row) -> tuple[str, int, str, int]:
    """A DIVERGENCES tuple's place in the table: by history, step, file and line."""
    return divergence_sort_key(dict(zip(DIVERGENCE_FIELDS, row)))


def replay(found: AuditInput, profile: Profile, into: _Found, spill_rows: int = SPILL_ROWS) -> tuple[
        ExternalSort, ...]:
    """Replay the input into ``into``; for histories, return its keyed rows (for the listed histories' lines)."""
    paths = list(found.files)
    if found.mode == HISTORIES:
        lines = text_lines(paths) if found.format == "jsonl" else engine.history_parquet_lines(
            parquet_batches(paths, engine.HISTORY_PARQUET_COLUMNS))
        keyed, unread = ExternalSort(history_order, spill_rows), ExternalSort(place_order, spill_rows)
        _split_rows(_tuples(engine.history_keyer(str(found.root) if found.root.is_dir() else "")(lines)), keyed,
                    unread, lambda row: row[5] is not None)
        in_order = itertools.chain(unread, keyed)
        into.take(engine.replay_history_batches(_batches(in_order, engine.arrow_schema(engine.HISTORY_ROWS))))
        return keyed, unread
    if found.format == "jsonl":
        rows = engine.parse_stream_batches(text_lines(paths))
    else:
        rows = engine.number_stream_rows(parquet_batches(paths, engine.STREAM_PARQUET_COLUMNS))
    with ExternalSort(stream_order, spill_rows) as ordered, ExternalSort(operator.itemgetter(6, 7),
                                                                      spill_rows) as unplaced:
        _split_rows(_tuples(rows), ordered, unplaced, lambda row: row[0] is None or row[1] is None)
        replayer = engine.stream_replayer(profile.duplicates.id_cache_size)
        in_order = itertools.chain(unplaced, ordered)
        into.take(replayer(_batches(in_order, engine.arrow_schema(engine.STREAM_ROWS))))
    return ()


def judge_commits(facts: Iterable[Row]) -> Iterator[Row]:
    """DIVERGENCES tuples of the commit rows whose answer is wrong, from commit facts sorted by transaction.

    Facts are (tx, doomed here, observed, history, step, operation, address, file, line). Doomed at any
    address means failed at all (DUP-COMMIT-ROLLBACK-ONLY), else it must succeed (DUP-COMMIT), as the
    Spark join judges them.
    """
    for _, group in itertools.groupby(facts, key=lambda f: f[0]):
        same_tx = list(group)
        doomed = any(f[1] for f in same_tx)
        expected, rule = ("rejected", "DUP-COMMIT-ROLLBACK-ONLY") if doomed else ("accepted", "DUP-COMMIT")
        for _tx, _, observed, history, step, operation, address, file, line in same_tx:
            if observed != expected:
                yield (history, step, operation, expected, observed, [rule], address, file, line)


def _write(rows: Iterable[Row], ddl: str, folder: Path, each: Callable[[Row], None] | None = None) -> None:
    """Write the rows, batch by batch, as ``folder/part-00000.parquet`` (calling ``each`` on every row)."""
    import pyarrow.parquet as pq

    if folder.exists():
        shutil.rmtree(folder)  # what Spark's overwrite mode does
    folder.mkdir(parents=True)
    schema = engine.arrow_schema(ddl)
    with pq.ParquetWriter(folder / "part-00000.parquet", schema) as writer:
        if each is not None:
            rows = _watched(rows, each)
        for batch in _batches(rows, schema):
            writer.write_batch(batch)


def _watched(rows: Iterable[Row], each: Callable[[Row], None]) -> Iterator[Row]:
    for row in rows:
        each(row)
        yield row


def _merged_summaries(rows: Iterable[Row]) -> Iterator[Row]:
    """Summary rows sorted by history, one per history (checked and divergences added up, as Spark's group-by)."""
    for history, group in itertools.groupby(rows, key=lambda r: r[0]):
        first, *rest = group
        yield (history, first[1] + sum(r[1] for r in rest), first[2] + sum(r[2] for r in rest), first[3], first[4])


def _over_history(folder: Path, low: int | None, high: int | None, bins: int = 20) -> list[tuple[int, int, int]]:
    """Divergences by step (or seq) in up to ``bins`` ranges, read back from the written table."""
    import pyarrow.parquet as pq

    if low is None or high is None:
        return []
    width = bin_width(low, high, bins)
    counts: Counter[int] = Counter()
    for batch in pq.ParquetFile(folder / "part-00000.parquet").iter_batches(batch_size=BATCH, columns=["step"]):
        counts.update((step - low) // width for step in batch.column(0).to_pylist())
    return binned(low, high, width, counts)


def audit_tables(found: AuditInput, profile: Profile, out: Path, count_input: int, limit: int,
                 spill_rows: int = SPILL_ROWS) -> Tables:
    """Replay ``found`` in this process, write the three tables under ``out``, and return their figures.

    ``spill_rows`` is how many rows each external sort holds before it spills a run to disk.
    """
    into = _Found(spill_rows)
    keyed: tuple[ExternalSort, ...] = ()
    try:
        keyed = replay(found, profile, into, spill_rows)
        into.divergences.extend(judge_commits(into.commits))
        out.mkdir(parents=True, exist_ok=True)
        seen = _Tally(limit)
        _write(into.divergences, engine.DIVERGENCES, out / "divergences", seen.divergence)
        _write(into.quarantine, engine.QUARANTINE, out / "quarantine", seen.quarantined)
        _write(_merged_summaries(into.summaries), engine.SUMMARIES, out / "histories", seen.summary)
        wanted = {str(d["history"]) for d in seen.listed}
        lines: HistoryLines = {}
        if wanted:
            for history, step, file, line, text, _ in itertools.chain(*keyed):
                if step is not None and history in wanted:
                    lines.setdefault(history, []).append((step, file, line, text))
    finally:
        into.close()
        for rows in keyed:
            rows.close()
    return Tables(
        rows_in=count_input, checked=seen.checked, groups=seen.groups, divergent_groups=seen.divergent_groups,
        quarantined=seen.quarantine_count, quarantine_reasons=ranked(seen.reasons, 20),
        divergences=seen.divergence_count, by_rule=ranked(seen.by_rule), by_address=ranked(seen.by_address, 30),
        over_history=_over_history(out / "divergences", seen.low, seen.high), profiles=ranked(seen.profiles),
        listed=seen.listed, history_lines=lines, shuffled=False)


class _Tally:
    """The figures of the tables, counted as their rows are written."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.listed: list[dict[str, Any]] = []
        self.divergence_count = self.divergent_groups = self.quarantine_count = self.checked = self.groups = 0
        self.by_rule: Counter[str] = Counter()
        self.by_address: Counter[str] = Counter()
        self.reasons: Counter[str] = Counter()
        self.profiles: Counter[str] = Counter()
        self.last_history: object = None
        self.low: int | None = None
        self.high: int | None = None

    def divergence(self, row: Row) -> None:
        history, step, _, _, _, rule_ids, address, _, _ = row
        self.divergence_count += 1
        if len(self.listed) < self.limit:
            self.listed.append(dict(zip(DIVERGENCE_FIELDS, row)))
        if self.divergence_count == 1 or history != self.last_history:
            self.divergent_groups += 1
            self.last_history = history
        self.by_rule.update(rule_ids)
        self.by_address[address if address is not None else "(none)"] += 1
        if step is not None:
            self.low = step if self.low is None else min(self.low, step)
            self.high = step if self.high is None else max(self.high, step)

    def quarantined(self, row: Row) -> None:
        self.quarantine_count += 1
        self.reasons[str(row[4]).split(":", 1)[0]] += 1

    def summary(self, row: Row) -> None:
        self.groups += 1
        self.checked += row[1]
        if row[4]:
            self.profiles[row[4]] += 1


def count_input(found: AuditInput) -> int:
    """Rows in, counted from the input alone: Parquet row counts, or the text lines not blank.

    A line is blank as Spark's ``trim`` sees it (nothing but spaces), so both engines count alike.
    """
    if found.format == "parquet":
        return found.parquet_rows
    return sum(1 for batch in text_lines(found.files) for text in batch.column(2).to_pylist()
               if text.strip(" "))
