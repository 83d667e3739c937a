"""The report's figures from the tables the Spark audit wrote, read back on the driver with Arrow.

Introduction
------------
Once ``divergences/``, ``quarantine/`` and ``histories/`` are written, every
figure of the report is a count over them: rows checked, groups, reasons,
rules, addresses, the spread over steps, the first divergences. Counting
them with Spark took a dozen small jobs, each a fixed cost of scheduling
that does not shrink with the input; Arrow's compute functions count the
same columns in this process in far less time than one job's start. Only
the columns a figure needs are read, so a large divergence table costs its
few columns, not its text.

The figures are the ones :mod:`.single` computes from its rows and the
Spark aggregations computed before (``substring_index`` of the reason up to
its first ``:``, ``coalesce(address, '(none)')``, ``distinct`` histories,
profiles other than empty, divergences in (history, step, file, line)
order with nulls first); ``test_one_process_and_spark_write_the_same_tables``
compares them with the one-process audit's.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .tables import Tables, over_history, ranked

ORDER = ("history", "step", "file", "line")


def _read(folder: Path, columns: list[str] | None = None) -> pa.Table:
    """A table Spark wrote (its part files; ``_SUCCESS`` and checksums are skipped)."""
    return pq.read_table(folder, columns=columns)


def _value_counts(array: pa.Array | pa.ChunkedArray) -> dict[str, int]:
    """How often each value occurs, keyed by its text (a null as ``None``, as ``str`` would name it)."""
    counts: dict[str, int] = {}
    for item in pc.value_counts(array).to_pylist():
        key = str(item["values"])
        counts[key] = counts.get(key, 0) + int(item["counts"])
    return counts


def reason_kinds(reasons: pa.Array | pa.ChunkedArray) -> dict[str, int]:
    """Quarantined rows per reason, the reason cut at its first ``:``.

    >>> reason_kinds(pa.array(["op: bad", "op: worse", "not valid JSON: x", "no colon"]))
    {'op': 2, 'not valid JSON': 1, 'no colon': 1}
    """
    heads = pc.list_element(pc.split_pattern(reasons, ":", max_splits=1), 0)
    return _value_counts(heads)


def listed_divergences(divergences: pa.Table, limit: int) -> list[dict[str, Any]]:
    """The first ``limit`` divergences in table order: (history, step, file, line), nulls first."""
    if divergences.num_rows == 0 or limit <= 0:
        return []
    try:  # newer pyarrow takes the null placement per key, and warns when it is given for all keys
        indices = pc.sort_indices(divergences, sort_keys=[(name, "ascending", "at_start") for name in ORDER])
    except (TypeError, ValueError):
        indices = pc.sort_indices(divergences, sort_keys=[(name, "ascending") for name in ORDER],
                                  null_placement="at_start")
    rows: list[dict[str, Any]] = divergences.take(indices[:limit]).to_pylist()
    for row in rows:
        row["rule_ids"] = list(row["rule_ids"] or [])
    return rows


def tables_from(out: Path, rows_in: int, limit: int, shuffled: bool) -> Tables:
    """The figures of the three tables under ``out`` (history lines are added by the caller)."""
    summaries = _read(out / "histories", ["checked", "profile"])
    checked = pc.sum(summaries.column("checked")).as_py() or 0
    profile = summaries.column("profile")
    named = pc.filter(profile, pc.fill_null(pc.not_equal(profile, ""), False))
    quarantine = _read(out / "quarantine", ["reason"])
    divergences = _read(out / "divergences")
    steps = pc.drop_null(divergences.column("step"))
    return Tables(
        rows_in=rows_in,
        checked=int(checked),
        groups=summaries.num_rows,
        divergent_groups=pc.count_distinct(divergences.column("history"), mode="all").as_py(),
        quarantined=quarantine.num_rows,
        quarantine_reasons=ranked(reason_kinds(quarantine.column("reason")), 20),
        divergences=divergences.num_rows,
        by_rule=ranked(_value_counts(pc.list_flatten(divergences.column("rule_ids")))),
        by_address=ranked(_value_counts(pc.fill_null(divergences.column("address"), "(none)")), 30),
        over_history=over_history(Counter({int(k): v for k, v in _value_counts(steps).items()})),
        profiles=ranked(_value_counts(named)),
        listed=listed_divergences(divergences, limit),
        shuffled=shuffled,
    )
