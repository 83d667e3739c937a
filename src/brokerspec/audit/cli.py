"""``brokerspec audit`` and ``brokerspec generate``: the options and what they print.

Exit codes follow the rest of the command line: 0 no divergence (and, with
``--expect``, exactly the expected faults found), 1 divergences found (or
not the expected ones), 2 usage error or an input that cannot be audited.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from brokerspec.spec import PROFILES, get_profile

from ..render import make_console

EXIT_OK = 0
EXIT_DIVERGENCE = 1


def add_commands(commands: Any, parse_setting: Any) -> None:
    """Add ``audit`` and ``generate`` to the ``brokerspec`` subcommands."""
    audit = commands.add_parser("audit", help="audit recorded histories or duplicate-detection streams on Spark")
    audit.add_argument("input", type=Path, help="a file or folder of *.jsonl or *.parquet files")
    audit.add_argument("--out", type=Path, required=True, help="folder for the tables and the report")
    audit.add_argument("--master", default=None, metavar="URL",
                       help="Spark master, e.g. spark://127.0.0.1:7077 (default: local on all cores)")
    audit.add_argument("--profile", choices=sorted(PROFILES), default="artemis-latest",
                       help="profile for duplicate-detection streams (histories name their own; "
                            "default artemis-latest)")
    audit.add_argument("--set", action="append", type=parse_setting, default=[], metavar="DOMAIN.OPTION=VALUE",
                       help="override a profile option for streams (repeatable)")
    audit.add_argument("--mode", choices=("auto", "histories", "streams"), default="auto",
                       help="what the input holds (default: told from the first line or the columns)")
    audit.add_argument("--partitions", type=int, default=None,
                       help="shuffle partitions (default: twice the cores)")
    audit.add_argument("--expect", type=Path, default=None, metavar="FAULTS",
                       help="a faults.jsonl from brokerspec generate: succeed only if exactly these are found")

    generate = commands.add_parser("generate", help="write a synthetic corpus from the impl, with planted faults")
    generate.add_argument("--histories", type=int, required=True, metavar="N",
                          help="histories to write (for streams: address groups)")
    generate.add_argument("--profile", choices=sorted(PROFILES), default="artemis-latest")
    generate.add_argument("--faults", type=int, default=0, metavar="K",
                          help="histories that get one fault from a planted-bug broker (default 0)")
    generate.add_argument("--kind", choices=("histories", "streams"), default="histories")
    generate.add_argument("--format", choices=("jsonl", "parquet"), default="jsonl")
    generate.add_argument("--files", type=int, default=2, help="files to spread the corpus over (default 2)")
    generate.add_argument("--steps", type=int, default=None,
                          help="steps per history (default 40), or stream rows per address group (default 200)")
    generate.add_argument("--seed", type=int, default=0)
    generate.add_argument("--out", type=Path, required=True, help="folder: data/ and faults.jsonl go there")


def run_generate(args: argparse.Namespace) -> int:
    """``brokerspec generate``."""
    from .generate import generate_histories, generate_streams, write_corpus

    if args.histories < 1 or args.faults < 0 or args.faults > args.histories or args.files < 1:
        from ..cli import UsageError

        raise UsageError(f"need --histories >= 1, 0 <= --faults <= --histories and --files >= 1 "
                         f"(got {args.histories}, {args.faults}, {args.files})")
    console = make_console()
    profile = get_profile(args.profile)
    started = time.perf_counter()
    if args.kind == "histories":
        rows, faults = generate_histories(profile, args.histories, args.faults, args.seed, args.steps or 40)
    else:
        rows, faults = generate_streams(profile, args.histories, args.faults, args.seed, args.steps or 200)
    files = write_corpus(args.out, rows, faults, args.format, args.kind, args.files)
    console.print(f"wrote {len(rows):,} rows of {args.histories:,} {args.kind} ({len(faults)} with a planted "
                  f"fault) to {len(files)} {args.format} file(s) under {args.out / 'data'} in "
                  f"{time.perf_counter() - started:.1f}s", markup=False, highlight=False)
    console.print(f"faults: {args.out / 'faults.jsonl'}", markup=False, highlight=False)
    return EXIT_OK


def read_expected(path: Path) -> set[tuple[str, int]]:
    """(history, step) of every fault in a faults.jsonl."""
    found: set[tuple[str, int]] = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        if line.strip():
            try:
                record = json.loads(line)
                found.add((str(record["history"]), int(record["step"])))
            except (ValueError, KeyError, TypeError) as error:
                from ..cli import UsageError

                raise UsageError(f"{path}:{number}: not a fault record ({error})") from None
    return found


def run_audit_command(args: argparse.Namespace) -> int:
    """``brokerspec audit``."""
    from rich.table import Table

    from .engine import start_session
    from .inputs import inspect
    from .run import describe, run_audit

    profile = get_profile(args.profile, tuple(args.set))
    expected = read_expected(args.expect) if args.expect is not None else None
    audit_input = inspect(args.input, args.mode)  # every input error before Spark starts
    console = make_console()
    console.print("starting Spark" + (f" on {args.master}" if args.master else " (local)"), markup=False)
    spark = start_session(args.master)
    try:
        result = run_audit(spark, args.input, args.out, profile, mode=args.mode, partitions=args.partitions,
                           progress=lambda text: console.print(text, markup=False, highlight=False), found=audit_input)
        table = Table(title="audit summary")
        table.add_column("")
        table.add_column("", justify="right")
        for name, value in describe(result).items():
            table.add_row(name, f"{value:,}" if isinstance(value, int) else str(value))
        console.print(table)
        if result.by_rule:
            rules = Table(title="divergences by rule")
            rules.add_column("rule")
            rules.add_column("divergences", justify="right")
            for rule, count in result.by_rule.items():
                rules.add_row(rule, f"{count:,}")
            console.print(rules)
        console.print(f"rows in {result.rows_in:,} = checked {result.checked:,} + quarantined "
                      f"{result.quarantined:,}", markup=False, highlight=False)
        console.print(f"report: {args.out / 'report.md'} and {args.out / 'report.html'}", markup=False,
                      highlight=False)
        if expected is None:
            return EXIT_OK if result.divergences == 0 else EXIT_DIVERGENCE
        found = {(str(r[0]), int(r[1])) for r in
                 spark.read.parquet(str(args.out / "divergences")).select("history", "step").collect()}
        missed, extra = sorted(expected - found), sorted(found - expected)
        console.print(f"expected faults: {len(expected)}, found: {len(expected & found)}, missed: {len(missed)}, "
                      f"not expected: {len(extra)}", markup=False, highlight=False)
        for history, step in missed[:20]:
            console.print(f"  missed {history} step {step}", markup=False, highlight=False)
        for history, step in extra[:20]:
            console.print(f"  not expected {history} step {step}", markup=False, highlight=False)
        return EXIT_OK if not missed and not extra else EXIT_DIVERGENCE
    finally:
        spark.stop()
