"""Audit benchmark: events per second, local Spark on all cores vs one process, on the same files.

Introduction
------------
For each size (default 1M and 5M events) this script writes one corpus of
duplicate-detection stream rows (1,000 events per address, about 7 % of IDs
re-used, transactions, 0.1 % of answers flipped so divergences exist) in
two layouts:

``grouped``
    one Parquet file per 2 x cores address buckets, sorted by (address,
    seq) and saying so in its metadata, as ``brokerspec generate`` writes:
    the audit replays each file where it lies, with no shuffle;
``shuffled``
    the same rows in random order over as many files: the audit must
    repartition by address and sort within partitions.

It then times, in one run:

* **single process**: :func:`brokerspec.audit.local.replay_by_address`
  reads the grouped files, sorts by (address, seq), replays and writes the
  divergences (the baseline);
* **Spark**: :func:`brokerspec.audit.run.run_audit` on each layout in one
  warm session (the session's start-up is reported apart), plus the parts of
  the shuffled pipeline on their own: the JVM alone (read, repartition, sort,
  no Python), the same plus the Arrow round trip through Python workers
  doing nothing, and the full replay.

Every figure is events per second of wall time, with ratios against the
single process of the same run. The issue's target is Spark at
0.8 x cores x the single-process rate at 5M. Usage::

    python benchmarks/audit_bench.py [--sizes 1000000,5000000] [--quick]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from brokerspec.audit.inputs import SORTED_KEY
from brokerspec.audit.streams import AddressAuditor

SCHEMA = pa.schema([("v", pa.int32()), ("address", pa.string()), ("seq", pa.int64()), ("op", pa.string()),
                    ("duplicate_id", pa.string()), ("tx", pa.string()), ("observed", pa.string())])


def make_rows(events: int, per_address: int, seed: int) -> dict[str, list[Any]]:
    """Stream rows whose answers are the rules' own, with 0.1 % flipped; columns as lists."""
    rng = random.Random(seed)
    columns: dict[str, list[Any]] = {name: [] for name in SCHEMA.names}
    addresses = max(1, events // per_address)
    seq = 0
    for number in range(addresses):
        address = f"queue-{number:07d}"
        auditor = AddressAuditor(address, 2000)
        open_tx: str | None = None
        tx_count = 0
        recent: list[str] = []
        for index in range(per_address):
            seq += 1
            pick = rng.random()
            key: str | None = None
            tx = None
            if open_tx is not None and pick < 0.05:
                op, tx = ("commit" if rng.random() < 0.8 else "rollback"), open_tx
                open_tx = None
            else:
                op = "send"
                if open_tx is None and pick < 0.1:
                    tx_count += 1
                    open_tx = f"{address}-t{tx_count}"
                tx = open_tx if rng.random() < 0.5 else None
                if recent and rng.random() < 0.07:
                    key = rng.choice(recent[-1500:])
                else:
                    key = f"{address}-{index}"
                    recent.append(key)
            row = (address, seq, op, key, tx, "accepted", "", 0)
            result = auditor.feed(row)
            observed = "accepted"
            if result is not None and result[0] == "divergence":
                observed = str(result[6])
            if rng.random() < 0.001:
                observed = "rejected" if observed == "accepted" else "accepted"
            for name, value in zip(SCHEMA.names, (1, address, seq, op, key, tx, observed)):
                columns[name].append(value)
    return columns


def write_layouts(columns: dict[str, list[Any]], folder: Path, files: int, seed: int) -> tuple[Path, Path]:
    """The grouped and the shuffled layout of the same rows."""
    table = pa.table(columns, schema=SCHEMA)
    grouped, shuffled = folder / "grouped", folder / "shuffled"
    grouped.mkdir(parents=True)
    shuffled.mkdir(parents=True)
    addresses = table.column("address").to_pylist()
    buckets = pa.array([hash(a) % files for a in addresses])
    sorted_schema = SCHEMA.with_metadata({SORTED_KEY: b"address,seq"})
    import pyarrow.compute as pc

    for bucket in range(files):
        part = table.filter(pc.equal(buckets, bucket)).sort_by([("address", "ascending"), ("seq", "ascending")])
        pq.write_table(part.cast(sorted_schema), grouped / f"part-{bucket:05d}.parquet")
    order = list(range(table.num_rows))
    random.Random(seed).shuffle(order)
    mixed = table.take(pa.array(order))
    step = -(-mixed.num_rows // files)
    for bucket in range(files):
        pq.write_table(mixed.slice(bucket * step, step), shuffled / f"part-{bucket:05d}.parquet")
    return grouped, shuffled


def time_it(action: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    value = action()
    return time.perf_counter() - started, value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--sizes", default="1000000,5000000", help="comma-separated event counts")
    parser.add_argument("--per-address", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="20,000 events, for a smoke run")
    args = parser.parse_args(argv)
    sizes = [20_000] if args.quick else [int(s) for s in args.sizes.split(",")]
    cores = os.cpu_count() or 2
    files = 2 * cores
    from brokerspec.audit.engine import REPLAYED, read_stream_parquet, start_session, stream_replayer
    from brokerspec.audit.local import replay_by_address
    from brokerspec.audit.run import run_audit
    from brokerspec.spec import get_profile

    profile = get_profile("artemis-latest").with_option("duplicates.id_cache_size", "2000")
    startup, spark = time_it(lambda: start_session(partitions=files))
    print(f"Spark session start (JVM, local[{cores}]): {startup:.1f}s; {files} files and shuffle partitions")
    lines = []
    scratch = Path(tempfile.mkdtemp(prefix="audit-bench-"))
    try:
        for size in sizes:
            folder = scratch / str(size)
            made, columns = time_it(lambda: make_rows(size, args.per_address, size))
            grouped, shuffled = write_layouts(columns, folder, files, 1)
            del columns
            print(f"\n{size:,} events: corpus made in {made:.1f}s", flush=True)
            single, (rows, divergent) = time_it(lambda: replay_by_address(
                sorted(grouped.glob("*.parquet")), folder / "single.parquet", 2000))
            assert rows == size
            figures: list[tuple[str, float]] = [("single process: read, sort, replay, write", single)]
            for name, layout in (("grouped", grouped), ("shuffled", shuffled)):
                cold, result = time_it(lambda: run_audit(spark, layout, folder / f"out-{name}", profile))
                warm, result = time_it(lambda: run_audit(spark, layout, folder / f"out-{name}", profile))
                assert result.divergences == divergent, (name, result.divergences, divergent)
                figures.append((f"Spark {name}, first run (job warm-up)", cold))
                figures.append((f"Spark {name}, warm: whole audit", warm))
                figures.append((f"Spark {name}, warm: replay phase only", result.seconds["replay"]))
            frame = read_stream_parquet(spark, [str(p) for p in sorted(shuffled.glob("*.parquet"))])
            grouped_rows = frame.repartition(files, "address").sortWithinPartitions("address", "seq")
            jvm, _ = time_it(lambda: grouped_rows.write.format("noop").mode("overwrite").save())
            figures.append(("  part: read + number rows + shuffle + sort (no replay)", jvm))

            def passthrough(batches: Any) -> Any:
                for batch in batches:
                    yield batch

            arrow, _ = time_it(lambda: grouped_rows.mapInArrow(passthrough, frame.schema).write.format("noop")
                               .mode("overwrite").save())
            figures.append(("  part: the same + Arrow round trip through Python", arrow))
            full, _ = time_it(lambda: grouped_rows.mapInArrow(stream_replayer(2000), REPLAYED).write.format("noop")
                              .mode("overwrite").save())
            figures.append(("  part: the same + replay", full))
            print(f"{'what':58} {'seconds':>8} {'events/s':>11} {'x single':>9}")
            for what, seconds in figures:
                print(f"{what:58} {seconds:8.2f} {size / seconds:11,.0f} {single / seconds:9.2f}")
            best = min(s for w, s in figures if "warm: whole audit" in w)
            lines.append((size, single, best))
    finally:
        spark.stop()
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"\ntarget: Spark >= 0.8 x {cores} cores x single process = {0.8 * cores:.1f}x at the largest size")
    for size, single, best in lines:
        print(f"{size:>10,} events: best warm Spark audit {single / best:.2f}x the single process "
              f"({size / best:,.0f} vs {size / single:,.0f} events/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
