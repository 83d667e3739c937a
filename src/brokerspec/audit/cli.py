"""``brokerspec audit`` and ``brokerspec generate``: the options and what they print.

Exit codes follow the rest of the command line: 0 no divergence (and, with
``--expect``, exactly the expected faults found), 1 divergences found (or
not the expected ones), 2 usage error or an input that cannot be audited.

An input of at most :data:`.single.LOCAL_LIMIT_BYTES` is audited in this
process without starting Spark, unless ``--master`` is given; a larger one
on Spark, with its progress shown while Spark works.

Every option is checked before Spark starts: counts, the ``--master`` URL's
form, the ``--out`` folder and the ``--expect`` file as they are parsed
(:mod:`brokerspec.clitools`), then every line of ``--expect`` (a JSON
object with a string ``history`` and an integer ``step``, read strictly by
:mod:`brokerspec.jsonin`; a bad line is ``FILE:LINE: message``).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from brokerspec.spec import PROFILES, Profile, get_profile

from .. import jsonin
from ..clitools import MASTER_FORMS, at_least, clean, input_file, literal, output_folder, spark_master
from ..render import make_console

if TYPE_CHECKING:
    from rich.console import Console

    from .inputs import AuditInput
    from .run import AuditResult

EXIT_OK = 0
EXIT_DIVERGENCE = 1


def add_commands(commands: Any, parse_setting: Any) -> None:
    """Add ``audit`` and ``generate`` to the ``brokerspec`` subcommands."""
    audit = commands.add_parser("audit", help="audit recorded histories or duplicate-detection streams on Spark")
    audit.add_argument("input", type=Path, help="a file or folder of *.jsonl or *.parquet files")
    audit.add_argument("--out", type=output_folder, required=True, help="folder for the tables and the report")
    audit.add_argument("--master", type=spark_master, default=None, metavar="URL",
                       help=f"Spark master, one of {MASTER_FORMS} (default: local on all cores)")
    audit.add_argument("--profile", choices=sorted(PROFILES), default="artemis-latest",
                       help="profile for duplicate-detection streams (histories name their own; "
                            "default artemis-latest)")
    audit.add_argument("--set", action="append", type=parse_setting, default=[], metavar="DOMAIN.OPTION=VALUE",
                       help="override a profile option for streams (repeatable)")
    audit.add_argument("--mode", choices=("auto", "histories", "streams"), default="auto",
                       help="what the input holds (default: told from the first line or the columns)")
    audit.add_argument("--partitions", type=at_least(1), default=None,
                       help="shuffle partitions (default: twice the cores)")
    audit.add_argument("--expect", type=input_file, default=None, metavar="FAULTS",
                       help="a faults.jsonl from brokerspec generate: succeed only if exactly these are found")

    generate = commands.add_parser("generate", help="write a synthetic corpus from the impl, with planted faults")
    generate.add_argument("--histories", type=at_least(1), required=True, metavar="N",
                          help="histories to write (for streams: address groups)")
    generate.add_argument("--profile", choices=sorted(PROFILES), default="artemis-latest")
    generate.add_argument("--faults", type=at_least(0), default=0, metavar="K",
                          help="histories that get one fault from a planted-bug broker (default 0)")
    generate.add_argument("--kind", choices=("histories", "streams"), default="histories")
    generate.add_argument("--format", choices=("jsonl", "parquet"), default="jsonl")
    generate.add_argument("--files", type=at_least(1), default=2, help="files to spread the corpus over (default 2)")
    generate.add_argument("--steps", type=at_least(1), default=None,
                          help="steps per history (default 40), or stream rows per address group (default 200)")
    generate.add_argument("--seed", type=int, default=0)
    generate.add_argument("--out", type=output_folder, required=True, help="folder: data/ and faults.jsonl go there")


def run_generate(args: argparse.Namespace) -> int:
    """``brokerspec generate``."""
    from .corpus import write_histories, write_streams

    if args.faults > args.histories:
        from ..cli import UsageError

        raise UsageError(f"--faults {args.faults} is more than --histories {args.histories}: each fault needs "
                         "a history of its own")
    console = make_console()
    profile = get_profile(args.profile)
    started = time.perf_counter()
    if args.kind == "histories":
        written = write_histories(args.out, profile, args.histories, args.faults, args.seed, args.steps or 40,
                                  args.format, args.files)
    else:
        written = write_streams(args.out, profile, args.histories, args.faults, args.seed, args.steps or 200,
                                args.format, args.files)
    console.print(literal(f"wrote {written.rows:,} rows of {args.histories:,} {args.kind} ({len(written.faults)} "
                          f"with a planted fault) to {len(written.files)} {args.format} file(s) under "
                          f"{args.out / 'data'} in {time.perf_counter() - started:.1f}s"))
    console.print(literal(f"faults: {args.out / 'faults.jsonl'}"))
    return EXIT_OK


def read_expected(path: Path) -> set[tuple[str, int]]:
    """(history, step) of every fault in a faults.jsonl; a usage error ``FILE:LINE: message`` for a bad line.

    Each line is a JSON object read strictly (:func:`brokerspec.jsonin.loads`)
    with a string ``history`` and an integer ``step`` (not ``2.0``, not ``"2"``).
    """
    from ..cli import UsageError

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"{clean(path)}: cannot read the faults file: {clean(error)}") from None
    found: set[tuple[str, int]] = set()
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = jsonin.loads(line)
        except jsonin.JsonInputError as error:
            raise UsageError(f"{clean(path)}:{number}: {clean(error)}") from None  # the reader says what it is
        problem = fault_problem(record)
        if problem is not None:
            raise UsageError(f"{clean(path)}:{number}: not a fault record: {problem}")
        found.add((record["history"], record["step"]))
    return found


def fault_problem(record: Any) -> str | None:
    """What is wrong with one parsed line of a faults.jsonl, or None."""
    if not isinstance(record, dict):
        return f"expected a JSON object, got {type(record).__name__}"
    if not isinstance(record.get("history"), str):
        return "history: expected a string"
    step = record.get("step")
    if not isinstance(step, int) or isinstance(step, bool):
        return f"step: expected a JSON integer, got {clean(repr(step))}"
    return None


def run_audit_command(args: argparse.Namespace) -> int:
    """``brokerspec audit``: in one process for a small input without ``--master``, else on Spark."""
    from rich.table import Table

    from .inputs import inspect
    from .run import describe, run_audit
    from .single import LOCAL_LIMIT_BYTES, input_bytes

    profile = get_profile(args.profile, tuple(args.set))
    expected = read_expected(args.expect) if args.expect is not None else None
    audit_input = inspect(args.input, args.mode)  # every input error before Spark starts
    console = make_console()
    size = input_bytes(audit_input)
    if args.master is None and size <= LOCAL_LIMIT_BYTES:
        console.print(literal(f"auditing in one process: the input is {size:,} bytes, at most "
                              f"{LOCAL_LIMIT_BYTES:,} (give --master to use Spark)"))
        result = run_audit(None, args.input, args.out, profile, mode=args.mode, partitions=args.partitions,
                           progress=lambda text: console.print(literal(text)), found=audit_input)
    else:
        result = _on_spark(args, profile, audit_input, console)
    table = Table(title="audit summary")
    table.add_column("")
    table.add_column("", justify="right")
    for name, value in describe(result).items():
        table.add_row(literal(name), literal(f"{value:,}" if isinstance(value, int) else value))
    console.print(table)
    if result.by_rule:
        rules = Table(title="divergences by rule")
        rules.add_column("rule")
        rules.add_column("divergences", justify="right")
        for rule, count in result.by_rule.items():
            rules.add_row(literal(rule), f"{count:,}")
        console.print(rules)
    console.print(f"rows in {result.rows_in:,} = checked {result.checked:,} + quarantined "
                  f"{result.quarantined:,}", markup=False, highlight=False)
    console.print(literal(f"report: {args.out / 'report.md'} and {args.out / 'report.html'}"))
    if expected is None:
        return EXIT_OK if result.divergences == 0 else EXIT_DIVERGENCE
    found = found_divergences(args.out)
    missed, extra = sorted(expected - found), sorted(found - expected)
    console.print(f"expected faults: {len(expected)}, found: {len(expected & found)}, missed: {len(missed)}, "
                  f"not expected: {len(extra)}", markup=False, highlight=False)
    for history, step in missed[:20]:
        console.print(literal(f"  missed {history} step {step}"))
    for history, step in extra[:20]:
        console.print(literal(f"  not expected {history} step {step}"))
    return EXIT_OK if not missed and not extra else EXIT_DIVERGENCE


def _on_spark(args: argparse.Namespace, profile: Profile, audit_input: AuditInput, console: Console) -> AuditResult:
    """The audit on Spark, with its progress shown while Spark works (:mod:`.progress`)."""
    from .engine import start_session
    from .progress import SparkProgress
    from .run import run_audit

    console.print(literal("starting Spark" + (f" on {args.master}" if args.master else " (local)")))
    spark = start_session(args.master)
    try:
        with SparkProgress(spark, console) as progress:
            return run_audit(spark, args.input, args.out, profile, mode=args.mode, partitions=args.partitions,
                             progress=progress.say, found=audit_input)
    finally:
        spark.stop()


def found_divergences(out: Path) -> set[tuple[str, int]]:
    """(history, step) of every divergence in ``out/divergences/`` (either engine's Parquet)."""
    import pyarrow.parquet as pq

    table = pq.read_table(out / "divergences", columns=["history", "step"])
    return {(str(h), int(s)) for h, s in zip(table.column(0).to_pylist(), table.column(1).to_pylist())}
