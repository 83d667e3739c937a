"""Audit benchmark: events per second of the Spark audit against the one-process audit, on the same files.

Introduction
------------
For each size and kind this script writes one input and audits it several
ways, each way in a child process of its own (so no way inherits another's
memory or JVM; one Spark session audits every kind of a size), and checks
that every way finds the same rows in, rows checked, rows quarantined and
divergences as the single process (exit 1 otherwise):

``streams``
    duplicate-detection stream rows (1,000 events per address, about 7 % of
    IDs re-used, transactions, 0.1 % of answers flipped so divergences
    exist), as ONE Parquet file in shuffled order (row groups of 100,000
    rows; addresses mixed within each million rows), so the audit must
    split the file, shuffle by address and sort;
``histories``
    recorded histories from ``brokerspec.audit.generate`` (40 steps each,
    both domains, one planted fault in 4 % of them), copied under new
    history names until the size is reached, as ONE JSON-lines file; the
    expected divergences are the planted faults times the copies.

The ways, timed as wall seconds of the audit (``run_audit``), Spark's
session start reported apart:

* **single process**: ``brokerspec audit`` without ``--master`` on an input of
  any size (``run_audit(None, ...)``), the baseline of every ratio; its peak
  resident memory is printed too;
* **local[2]**: Spark on two local cores, a first run and then warm runs
  (best of ``--rounds``) in one session, with the replay phase alone;
* **before** (``--before``): the same local[2] audit of the commit before the
  throughput work (:data:`baseline.BEFORE_THROUGHPUT`), which read every
  file as one partition and numbered lines in Python;
* **standalone**: a master on 127.0.0.1 with one single-core worker, then
  with two (``--no-standalone`` skips it), warm runs, and the ratio of two
  workers to one (``--pin`` binds each worker to a CPU of its own: unbound,
  one "single-core" worker keeps nearly two CPUs busy).

Targets (the issue's): local[2] at least 1.0x the single process at 5M and
20M events, and two single-core workers at least 1.7x one. Usage::

    python benchmarks/audit_bench.py [--sizes 1000000,5000000] [--kinds streams,histories]
                                     [--rounds 2] [--before] [--no-standalone] [--quick]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from baseline import NoBaseline, baseline_package, run_with
from brokerspec.audit.streams import AddressAuditor
from readable import describe, make_readable

SCHEMA = pa.schema([("v", pa.int32()), ("address", pa.string()), ("seq", pa.int64()), ("op", pa.string()),
                    ("duplicate_id", pa.string()), ("tx", pa.string()), ("observed", pa.string())])
CHUNK = 1_000_000
"""Stream rows are made, mixed and written this many at a time, so memory stays bounded at 20M events."""


def address_rows(address: str, per_address: int, first_seq: int, rng: random.Random) -> Iterator[tuple[Any, ...]]:
    """One address's rows, answered by the rules themselves, with 0.1 % of the answers flipped."""
    auditor = AddressAuditor(address, 2000)
    open_tx: str | None = None
    tx_count = 0
    recent: list[str] = []
    for index in range(per_address):
        seq = first_seq + index
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
        result = auditor.feed((address, seq, op, key, tx, "accepted", "", 0))
        observed = "accepted"
        if result is not None and result[0] == "divergence":
            observed = str(result[6])
        if rng.random() < 0.001:
            observed = "rejected" if observed == "accepted" else "accepted"
        yield (1, address, seq, op, key, tx, observed)


def write_streams(path: Path, events: int, per_address: int, seed: int) -> None:
    """``events`` stream rows as one Parquet file, addresses mixed within each chunk of a million rows."""
    rng = random.Random(seed)
    addresses = max(1, events // per_address)
    per_chunk = max(1, CHUNK // per_address)
    with pq.ParquetWriter(path, SCHEMA) as writer:
        for start in range(0, addresses, per_chunk):
            rows = [row for number in range(start, min(addresses, start + per_chunk))
                    for row in address_rows(f"queue-{number:07d}", per_address, number * per_address + 1, rng)]
            rng.shuffle(rows)
            columns = list(zip(*rows))
            table = pa.table([pa.array(c, type=f.type) for c, f in zip(columns, SCHEMA)], schema=SCHEMA)
            writer.write_table(table, row_group_size=100_000)


def write_histories(path: Path, events: int, seed: int, before: Path | None = None) -> int:
    """About ``events`` history lines as one JSON-lines file; returns the divergences planted in it.

    With ``before`` (the older code's package) the histories are first made ones it reads alike
    (:mod:`readable`), so that both sides audit the same lines.
    """
    from brokerspec.audit.generate import generate_histories
    from brokerspec.spec import get_profile

    base = max(1, min(500, events // 41))
    lines, faults = generate_histories(get_profile("artemis-latest"), base, max(1, base // 25), seed, 40)
    if before is not None:
        texts = [json.dumps(line) for line in lines]
        path.write_text("\n".join(texts) + "\n", encoding="utf-8")
        dropped = make_readable(path, before)
        if dropped:
            print(describe(dropped, "the histories"), flush=True)
        lines = [json.loads(text) for text in path.read_text(encoding="utf-8").splitlines()]
        faults = [fault for fault in faults if fault.history not in dropped]
    copies = max(1, round(events / len(lines)))
    with path.open("w", encoding="utf-8") as handle:
        for copy in range(copies):
            handle.writelines(json.dumps({**line, "history": f"{line['history']}-c{copy:05d}"}) + "\n"
                              for line in lines)
    return len(faults) * copies


def measure(engine: str, jobs: list[list[str]], rounds: int = 2, master: str = "local[2]",
            partitions: int = 2) -> list[dict[str, Any]]:
    """Audit each (input, out) of ``jobs`` ``rounds`` times on one Spark session, or once each in this process.

    ``engine`` is "spark" or "single". Runs in a child process
    (:func:`baseline.run_with`) and uses only what both this checkout and
    the commit before the throughput work have. One figure set per job: the
    seconds of each run, its phases, what it found, and the process's peak
    memory so far.
    """
    from baseline import peak_rss_kb
    from brokerspec.audit.run import run_audit
    from brokerspec.spec import get_profile

    profile = get_profile("artemis-latest").with_option("duplicates.id_cache_size", "2000")
    spark = None
    startup = 0.0
    if engine == "spark":
        from brokerspec.audit.engine import start_session

        started = time.perf_counter()
        spark = start_session(master, partitions=partitions)
        startup = time.perf_counter() - started
    out: list[dict[str, Any]] = []
    try:
        for input_path, folder in jobs:
            figures: dict[str, Any] = {"runs": [], "replay": [], "phases": [], "startup": startup}
            for _ in range(rounds if spark is not None else 1):
                started = time.perf_counter()
                result = run_audit(spark, Path(input_path), Path(folder), profile)
                figures["runs"].append(time.perf_counter() - started)
                figures["replay"].append(result.seconds.get("replay", float("nan")))
                figures["phases"].append(dict(result.seconds))
            figures.update(rows_in=result.rows_in, checked=result.checked, quarantined=result.quarantined,
                           divergences=result.divergences,
                           max_rss_mb=peak_rss_kb() / 1024)
            out.append(figures)
    finally:
        if spark is not None:
            spark.stop()
    return out


Row = tuple[str, float | None, float | None]


def table(size: int, rows: list[Row]) -> None:
    """Print the figures: seconds, events/s, and the ratio to the single process."""
    print(f"{'what':62} {'seconds':>8} {'events/s':>11} {'x single':>9}")
    single = rows[0][1]
    for what, seconds, _ in rows:
        if seconds is None:
            print(f"{what:62} {'unavailable':>8}")
            continue
        ratio = f"{single / seconds:9.2f}" if single else ""
        print(f"{what:62} {seconds:8.2f} {size / seconds:11,.0f} {ratio}")


def best(figures: dict[str, Any]) -> float:
    """The best warm run (the first is the job's warm-up when there are several)."""
    runs: list[float] = figures["runs"]
    return min(runs[1:] or runs)


def phases(name: str, figures: dict[str, Any]) -> None:
    """Where the best warm run's time went, phase by phase (as ``summary.json`` records it)."""
    runs: list[float] = figures["runs"]
    index = runs.index(best(figures))
    parts = ", ".join(f"{phase} {seconds:.1f}s" for phase, seconds in figures["phases"][index].items())
    print(f"  {name}: {parts}")


def check_same(name: str, figures: dict[str, Any], reference: dict[str, Any]) -> None:
    keys = ("rows_in", "checked", "quarantined", "divergences")
    if any(figures[k] != reference[k] for k in keys):
        mine, theirs = ({k: f[k] for k in keys} for f in (figures, reference))
        raise SystemExit(f"error: {name} found {mine}, the single process {theirs}")


def make_input(kind: str, size: int, folder: Path, per_address: int,
               before: Path | None = None) -> tuple[Path, int | None]:
    """Write one input of ``kind``; its path and (histories) the divergences planted in it (``before``: see
    :func:`write_histories`)."""
    started = time.perf_counter()
    folder.mkdir(parents=True)
    if kind == "streams":
        source, planted = folder / "rows.parquet", None
        write_streams(source, size, per_address, size)
    else:
        source = folder / "histories.jsonl"
        planted = write_histories(source, size, 1, before)
    print(f"{kind}, {size:,} events: one {source.suffix[1:]} file of {source.stat().st_size / 1e6:,.0f} MB, "
          f"made in {time.perf_counter() - started:.1f}s", flush=True)
    return source, planted


def bench_size(size: int, kinds: list[str], scratch: Path, args: argparse.Namespace,
               summary: list[tuple[str, int, str, float]]) -> None:
    """Every way of auditing the inputs of one size: one child process (and Spark session) per way."""
    with contextlib.ExitStack() as stack:
        before: Path | None = None
        if args.before:
            try:
                before = stack.enter_context(baseline_package())
            except NoBaseline as error:
                print(f"before: unavailable ({error})")
        _bench_size(size, kinds, scratch, args, summary, before)


def _bench_size(size: int, kinds: list[str], scratch: Path, args: argparse.Namespace,
                summary: list[tuple[str, int, str, float]], before: Path | None) -> None:
    inputs = [make_input(kind, size, scratch / kind / "in", args.per_address, before) for kind in kinds]

    def jobs(way: str) -> list[list[str]]:
        return [[str(source), str(scratch / kind / way)] for kind, (source, _) in zip(kinds, inputs)]

    single = run_with(None, "audit_bench", "measure", {"engine": "single", "jobs": jobs("single")})
    for kind, (_, planted), figures in zip(kinds, inputs, single):
        if planted is not None and figures["divergences"] != planted:
            raise SystemExit(f"error: the single process found {figures['divergences']} divergences in the "
                             f"{kind}, {planted} were planted")
    ways: dict[str, list[dict[str, Any]] | None] = {}
    ways["local[2]"] = run_with(None, "audit_bench", "measure", {"engine": "spark", "jobs": jobs("local"),
                                                                   "rounds": args.rounds,
                                                                   "partitions": args.partitions})
    if args.before:
        ways["before"] = None if before is None else run_with(before, "audit_bench", "measure", {
            "engine": "spark", "jobs": jobs("before"), "rounds": args.rounds, "partitions": args.partitions})
    if args.standalone:
        from brokerspec.audit.cluster import start_standalone

        for workers in (1, 2):
            cluster = start_standalone(scratch / f"cluster-{workers}", cores=1, memory="2g", workers=workers,
                                       pin=args.pin)
            try:
                ways[f"{workers} worker"] = run_with(None, "audit_bench", "measure", {
                    "engine": "spark", "jobs": jobs(f"standalone-{workers}"), "rounds": args.rounds,
                    "partitions": args.partitions,
                    "master": cluster.url})
            finally:
                cluster.stop()
    for index, kind in enumerate(kinds):
        report(kind, size, single[index], {w: (f[index] if f else None) for w, f in ways.items()}, summary,
               args.pin)


def report(kind: str, size: int, single: dict[str, Any], ways: dict[str, dict[str, Any] | None],
           summary: list[tuple[str, int, str, float]], pinned: bool = False) -> None:
    """The table of one input, checking first that every way found what the single process found."""
    for name, figures in ways.items():
        if figures is not None:
            check_same(f"{name} ({kind})", figures, single)
    local = ways["local[2]"]
    assert local is not None
    print(f"\n{kind}, {size:,} events")
    rows: list[Row] = [("single process: brokerspec audit without --master", best(single), None),
                       ("Spark local[2], first run (job warm-up)", local["runs"][0], None),
                       ("Spark local[2], warm: whole audit", best(local), None),
                       ("Spark local[2], warm: replay phase only", min(local["replay"][1:] or local["replay"]),
                        None)]
    if "before" in ways:
        before = ways["before"]
        rows.append(("before the throughput work: Spark local[2], warm", best(before) if before else None, None))
    for workers in (1, 2):
        figures = ways.get(f"{workers} worker")
        if figures is not None:
            rows.append((f"standalone, {workers} worker(s) x 1 core, warm: whole audit", best(figures), None))
    table(size, rows)
    print("phases of the best warm run:")
    phases("single process", single)
    for name, figures in ways.items():
        if figures is not None:
            phases(name, figures)
    print(f"single process peak memory: {single['max_rss_mb']:,.0f} MB; Spark session start "
          f"{local['startup']:.1f}s (not in the figures)")
    summary.append((kind, size, "local[2] / single process", best(single) / best(local)))
    before = ways.get("before")
    if before is not None:
        summary.append((kind, size, "local[2] / before", best(before) / best(local)))
    one, two = ways.get("1 worker"), ways.get("2 worker")
    if one is not None and two is not None:
        replay_one, replay_two = (min(f["replay"][1:] or f["replay"]) for f in (one, two))
        print(f"two workers / one worker: {best(one) / best(two):.2f}x (replay phase {replay_one / replay_two:.2f}x; "
              f"workers {'pinned to a CPU each' if pinned else 'not pinned'})")
        summary.append((kind, size, "2 workers / 1 worker", best(one) / best(two)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--sizes", default="1000000,5000000", help="comma-separated event counts")
    parser.add_argument("--kinds", default="streams,histories", help="streams, histories or both")
    parser.add_argument("--per-address", type=int, default=1000, help="stream events per address")
    parser.add_argument("--rounds", type=int, default=2, help="Spark runs per session (the first warms up)")
    parser.add_argument("--partitions", type=int, default=2,
                        help="Spark partitions of every stage (default 2, one per core of the 2-core machine)")
    parser.add_argument("--pin", action="store_true",
                        help="bind each standalone worker to its own CPU (a single-core worker otherwise keeps nearly "
                             "two CPUs busy: its JVM task thread and its Python worker)")
    parser.add_argument("--before", action="store_true", help="also time the commit before the throughput work")
    parser.add_argument("--no-standalone", dest="standalone", action="store_false",
                        help="skip the standalone cluster (one worker vs two)")
    parser.add_argument("--quick", action="store_true", help="5,000 events, one Spark round, no standalone")
    args = parser.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    if args.partitions < 1:
        parser.error(f"--partitions must be at least 1, got {args.partitions}")
    if not kinds or set(kinds) - {"streams", "histories"}:
        parser.error(f"--kinds: expected streams, histories or both, got {args.kinds!r}")
    sizes = [5_000] if args.quick else [int(s) for s in args.sizes.split(",")]
    if args.quick:
        args.rounds, args.standalone = 1, False
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    summary: list[tuple[str, int, str, float]] = []
    scratch = Path(tempfile.mkdtemp(prefix="audit-bench-"))
    try:
        for size in sizes:
            bench_size(size, kinds, scratch / str(size), args, summary)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print("\ntargets: local[2] >= 1.0x the single process; 2 single-core workers >= 1.7x one")
    for kind, size, what, ratio in summary:
        target = {"local[2] / single process": 1.0, "2 workers / 1 worker": 1.7}.get(what)
        verdict = "" if target is None else "met" if ratio >= target else "missed"
        print(f"{kind:10} {size:>12,} events: {what:26} {ratio:5.2f}x  {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
