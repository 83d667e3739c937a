"""Memory benchmark: peak resident memory and events per second of ``generate`` and of the one-process audit.

Introduction
------------
``brokerspec generate`` and ``brokerspec audit`` without ``--master`` (the
one-process path, :mod:`brokerspec.audit.single`) used to hold every row in
memory; they now stream (:mod:`brokerspec.audit.corpus`,
:mod:`brokerspec.audit.spill`). This script measures both, before and
after, in one run. Every case runs in a child process of its own, so the
peak resident set size (``ru_maxrss`` of the child) is that case's alone:

``generate KIND FORMAT``
    ``brokerspec generate`` (``run_generate``) of histories (40 steps, so 41
    lines each) or stream groups (200 rows each) up to the size, as JSON lines
    or Parquet, 12 planted faults, 2 files, seed 1;
``audit KIND FORMAT``
    ``run_audit(None, ...)`` (the one-process audit, whatever the input's size)
    of the corpus the current code generated, the same files for before and
    after, and whether both found the same divergences, quarantine and
    checked rows; for histories, which the older code cannot read (fields
    and operations added since), each side audits the corpus its own
    ``generate`` wrote, and "same verdicts" means each found exactly the
    faults planted in it with every row checked;
``idle``
    a child that only imports what the audit imports: the floor every peak
    includes.

*Before* is the commit before the throughput work
(:data:`baseline.BEFORE_THROUGHPUT`, through :mod:`baseline`); without the
git history its columns say ``n/a``. The target (the issue's): 50M events in
no more than a few hundred MB. Usage::

    python benchmarks/memory_bench.py [--sizes 1000000,5000000] [--cases generate,audit]
                                      [--kinds histories,streams] [--formats jsonl,parquet]
                                      [--no-before] [--json PATH] [--quick]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from baseline import NoBaseline, baseline_package, peak_rss_kb, run_with  # noqa: E402

STEPS = 40
GROUP_ROWS = 200


def measure_idle() -> dict[str, Any]:
    """Peak memory of a process that has imported the audit and nothing more."""
    import brokerspec.audit.run  # noqa: F401
    import pyarrow.parquet  # noqa: F401

    return {"peak_kb": peak_rss_kb()}


def measure_generate(kind: str, fmt: str, events: int, out: str) -> dict[str, Any]:
    """Run ``brokerspec generate`` for about ``events`` rows; seconds, rows and peak memory."""
    from brokerspec.audit.cli import run_generate

    count = max(12, events // (STEPS + 1 if kind == "histories" else GROUP_ROWS))
    args = argparse.Namespace(histories=count, profile="artemis-latest", faults=12, kind=kind, format=fmt, files=2,
                              steps=None, seed=1, out=Path(out))
    started = time.perf_counter()
    code = run_generate(args)
    seconds = time.perf_counter() - started
    rows = sum(1 for path in (Path(out) / "data").iterdir() for _ in path.open("rb")) if fmt == "jsonl" else \
        _parquet_rows(Path(out) / "data")
    return {"code": code, "seconds": seconds, "rows": rows, "peak_kb": peak_rss_kb()}


def _parquet_rows(folder: Path) -> int:
    import pyarrow.parquet as pq

    return sum(pq.ParquetFile(path).metadata.num_rows for path in folder.iterdir())


def measure_audit(data: str, out: str) -> dict[str, Any]:
    """Audit ``data`` in this process (no Spark); seconds, the verdicts and peak memory."""
    import pyarrow.parquet as pq

    from brokerspec.audit.run import run_audit
    from brokerspec.spec import get_profile

    started = time.perf_counter()
    result = run_audit(None, Path(data), Path(out), get_profile("artemis-latest"))
    seconds = time.perf_counter() - started
    divergences = pq.read_table(Path(out) / "divergences", columns=["history", "step"]).to_pylist()
    return {"seconds": seconds, "rows": result.rows_in, "checked": result.checked,
            "quarantined": result.quarantined, "divergences": sorted((d["history"], d["step"]) for d in divergences),
            "engine": result.engine, "peak_kb": peak_rss_kb()}


def finds_its_faults(audited: dict[str, Any], corpus: Path) -> bool:
    """Whether an audit of a generated corpus found exactly the faults planted in it, every row checked."""
    planted = sorted((fault["history"], fault["step"]) for fault in map(json.loads, (corpus / "faults.jsonl")
                                                                         .read_text(encoding="utf-8").splitlines()))
    return [tuple(d) for d in audited["divergences"]] == planted and audited["quarantined"] == 0 and \
        audited["checked"] == audited["rows"]


def _mb(kb: int | None) -> str:
    return "n/a" if kb is None else f"{kb / 1024:,.0f}"


def _rate(figures: dict[str, Any] | None) -> str:
    if figures is None:
        return "n/a"
    return f"{figures['rows'] / figures['seconds']:,.0f}"


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000000,5000000", help="events per case, comma-separated")
    parser.add_argument("--cases", default="generate,audit", help="generate, audit or both")
    parser.add_argument("--kinds", default="histories,streams")
    parser.add_argument("--formats", default="jsonl,parquet")
    parser.add_argument("--no-before", action="store_true", help="skip the commit before the throughput work")
    parser.add_argument("--json", type=Path, default=None, help="write every figure here")
    parser.add_argument("--quick", action="store_true", help="20,000 events, to see that it runs")
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes = "20000"
    return args


def main(argv: list[str] | None = None) -> int:
    """Measure every case, print the table, and return 1 if before and after disagree on an audit."""
    args = parse(argv)
    sizes = [int(size) for size in args.sizes.split(",")]
    cases = args.cases.split(",")
    kinds, formats = args.kinds.split(","), args.formats.split(",")
    work = Path(tempfile.mkdtemp(prefix="brokerspec-memory-bench-"))
    rows: list[dict[str, Any]] = []
    disagree = False
    try:
        with _before(args.no_before) as before_path:
            idle = run_with(None, "memory_bench", "measure_idle", {})
            print(f"peak of a process that only imported the audit: {_mb(idle['peak_kb'])} MB")
            print(" | ".join(HEADER), flush=True)
            for size in sizes:
                for kind in kinds:
                    for fmt in formats:
                        folder = work / f"{kind}-{fmt}-{size}"
                        after = run_with(None, "memory_bench", "measure_generate",
                                         {"kind": kind, "fmt": fmt, "events": size, "out": str(folder / "after")})
                        if "generate" in cases:
                            before = None if before_path is None else run_with(
                                before_path, "memory_bench", "measure_generate",
                                {"kind": kind, "fmt": fmt, "events": size, "out": str(folder / "before")})
                            rows.append({"case": f"generate {kind} {fmt}", "events": after["rows"],
                                         "before": before, "after": after})
                            _print(rows[-1])
                            if kind != "histories":
                                shutil.rmtree(folder / "before", ignore_errors=True)
                        if "audit" in cases:
                            data = str(folder / "after" / "data")
                            audited = run_with(None, "memory_bench", "measure_audit",
                                               {"data": data, "out": str(folder / "out-after")})
                            before, same = None, None
                            if before_path is not None and kind == "streams":
                                before = run_with(before_path, "memory_bench", "measure_audit",
                                                  {"data": data, "out": str(folder / "out-before")})
                                same = all(before[k] == audited[k] for k in (
                                    "rows", "checked", "quarantined", "divergences"))
                            elif before_path is not None:  # the older code cannot read this code's histories
                                if not (folder / "before").exists():
                                    run_with(before_path, "memory_bench", "measure_generate",
                                             {"kind": kind, "fmt": fmt, "events": size, "out": str(folder / "before")})
                                before = run_with(before_path, "memory_bench", "measure_audit",
                                                  {"data": str(folder / "before" / "data"),
                                                   "out": str(folder / "out-before")})
                                same = finds_its_faults(audited, folder / "after") and \
                                    finds_its_faults(before, folder / "before")
                            disagree = disagree or same is False
                            rows.append({"case": f"audit {kind} {fmt}", "events": audited["rows"],
                                         "before": before, "after": audited, "same": same})
                            _print(rows[-1])
                        shutil.rmtree(folder, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json is not None:
        for row in rows:  # the divergence lists are for the comparison only
            for side in ("before", "after"):
                if row.get(side):
                    row[side].pop("divergences", None)
        args.json.write_text(json.dumps({"idle": idle, "rows": rows}, indent=2) + "\n", encoding="utf-8")
    return 1 if disagree else 0


class _before:
    """The baseline package's path, or None (asked not to, or no git history: the columns say n/a)."""

    def __init__(self, skip: bool) -> None:
        self.skip = skip
        self.context: Any = None

    def __enter__(self) -> Path | None:
        if self.skip:
            return None
        self.context = baseline_package()
        try:
            path: Path = self.context.__enter__()
        except NoBaseline as error:
            print(f"before: unavailable ({error})")
            self.context = None
            return None
        return path

    def __exit__(self, *exc: object) -> None:
        if self.context is not None:
            self.context.__exit__(*exc)


HEADER = ("case", "events", "before s", "before ev/s", "before peak MB", "after s", "after ev/s", "after peak MB",
          "peak after/before", "same verdicts")


def _print(row: dict[str, Any]) -> None:
    """One row of the table, printed as soon as its case is measured (a full run takes hours)."""
    before, after = row["before"], row["after"]
    ratio = "n/a" if before is None else f"{after['peak_kb'] / before['peak_kb']:.2f}"
    print(" | ".join((row["case"], f"{row['events']:,}", "n/a" if before is None else f"{before['seconds']:.1f}",
                      _rate(before), _mb(None if before is None else before["peak_kb"]), f"{after['seconds']:.1f}",
                      _rate(after), _mb(after["peak_kb"]), ratio,
                      {True: "yes", False: "NO", None: "n/a"}[row["same"]] if "same" in row else "-")), flush=True)


if __name__ == "__main__":
    sys.exit(main())
