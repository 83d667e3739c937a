"""The single-process replay of duplicate-detection streams: the global order, and the benchmark's baseline.

Introduction
------------
:func:`replay_globally` replays every row in ``seq`` order with one state
per address, as a broker lived it; :func:`replay_by_address` reads, sorts by
(address, seq), replays and writes, all in one process (the baseline the
Spark benchmark is measured against). Both use the pure replay of
:mod:`.streams`, so any difference from the Spark audit comes from how rows
were grouped and ordered, which is what the tests compare.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from .streams import COMMIT, DIVERGENCE, AddressAuditor, CommitFact, check_values, judge_commits

Verdict = tuple[str, int, str, str, str]
"""A divergence as (address, seq, expected, observed, rule)."""


def commit_fact(result: tuple[object, ...]) -> CommitFact:
    """A ``commit`` output tuple of the per-address replay as a :class:`CommitFact`."""
    _, address, seq, _, file, line, tx, doomed, observed = result
    return CommitFact(str(address), int(str(seq)), str(file), int(str(line)), str(tx), bool(doomed), str(observed))


def replay_globally(rows: Iterable[tuple[object, ...]], cache_size: int) -> set[Verdict]:
    """Divergences of raw rows (address, seq, op, duplicate_id, tx, observed, file, line) taken in seq order."""
    auditors: dict[str, AddressAuditor] = {}
    found: set[Verdict] = set()
    facts: list[CommitFact] = []
    for row in sorted(rows, key=lambda r: (r[1], str(r[0]))):
        if check_values(*row[:6]) is not None:
            continue
        address = str(row[0])
        auditor = auditors.get(address)
        if auditor is None:
            auditor = auditors[address] = AddressAuditor(address, cache_size)
        result = auditor.feed(row)  # type: ignore[arg-type]
        if result is None:
            continue
        if result[0] == DIVERGENCE:
            found.add((address, int(str(result[2])), str(result[6]), str(result[7]), str(result[8])))
        elif result[0] == COMMIT:
            facts.append(commit_fact(result))
    for fact, expected, rule in judge_commits(facts):
        found.add((fact.address, fact.seq, expected, fact.observed, rule))
    return found


def replay_by_address(paths: list[Path], out: Path, cache_size: int) -> tuple[int, int]:
    """Read Parquet stream files, sort by (address, seq), replay, write the divergences; (rows, divergences)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .streams import audit_sorted_rows

    table = pa.concat_tables(pq.read_table(p, columns=["address", "seq", "op", "duplicate_id", "tx", "observed"])
                             for p in paths)
    table = table.sort_by([("address", "ascending"), ("seq", "ascending")])
    columns = [c.to_pylist() for c in table.columns]
    blanks = [""] * table.num_rows
    numbers = range(table.num_rows)
    divergent: list[tuple[object, ...]] = []
    facts: list[CommitFact] = []
    for result in audit_sorted_rows(zip(*columns, blanks, numbers), cache_size):
        if result[0] == DIVERGENCE:
            divergent.append(result[1:9])
        elif result[0] == COMMIT:
            facts.append(commit_fact(result))
    for fact, expected, rule in judge_commits(facts):
        divergent.append((fact.address, fact.seq, "commit", fact.file, fact.line, expected, fact.observed, rule))
    names = ["address", "seq", "op", "file", "line", "expected", "observed", "rule"]
    out.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist([dict(zip(names, d)) for d in divergent]) if divergent
                   else pa.table({n: pa.array([], pa.string()) for n in names}), out)
    return table.num_rows, len(divergent)
