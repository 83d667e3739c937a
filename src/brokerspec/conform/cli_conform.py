"""``brokerspec conform``: the catalogue against a SUT, with a per-case table, JUnit XML and JSON reports."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from brokerspec.spec import get_profile

from ..clitools import at_least, escaped, literal, output_file, output_folder
from ..render import make_console
from .catalogue import DOMAIN_ORDER, select
from .cli_common import (
    ConformUsageError,
    add_sut_options,
    checked_catalogue,
    make_sut,
    profile_for_sut,
    recheck_for_sut,
)
from .runner import CaseResult, ConformReport, Verdict, run_conformance

STYLE = {Verdict.PASSED: "green", Verdict.FAILED: "bold red", Verdict.SUT_FAILURE: "bold magenta",
         Verdict.SKIPPED: "yellow", Verdict.NOT_RUN: "dim"}

def add_parser(commands: Any, parse_setting: Callable[[str], tuple[str, str]],
               parse_duration: Callable[[str], float]) -> None:
    """Register ``conform``."""
    conform = commands.add_parser("conform", help="run the conformance catalogue against a system under test")
    add_sut_options(conform, parse_setting)
    conform.add_argument("--domain", action="append", choices=DOMAIN_ORDER,
                         help="only this domain (repeatable; default: every domain the SUT offers)")
    conform.add_argument("--case", default=None, metavar="TEXT", help="only cases whose name contains TEXT")
    conform.add_argument("--strict", action="store_true",
                         help="demand the spec's exact outcome where it allows several (load balancing)")
    conform.add_argument("--max-sut-failures", type=at_least(1), default=5, metavar="N",
                         help="stop after N SUT failures in a row (default 5)")
    conform.add_argument("--junit", type=output_file, default="brokerspec-conform/junit.xml",
                         help="JUnit XML report (default brokerspec-conform/junit.xml)")
    conform.add_argument("--json", type=output_file, default="brokerspec-conform/report.json",
                         help="JSON report (default brokerspec-conform/report.json)")
    conform.add_argument("--out", type=output_folder, default="brokerspec-conform/failures",
                         help="folder for the trace of every failing case, never overwritten "
                              "(default brokerspec-conform/failures)")



def run(args: argparse.Namespace) -> int:
    """``brokerspec conform``."""
    profile = get_profile(args.profile, tuple(args.set))
    cases = select(checked_catalogue(), profile, args.domain, args.case)
    if not cases:
        raise ConformUsageError(f"no case matches (profile {profile.label}, domains {args.domain or 'all'}, "
                                f"--case {args.case!r})")
    sut = make_sut(args.sut, args.timeout)
    console = make_console()
    profile = profile_for_sut(sut, profile, console)
    try:
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=console, transient=True) as progress:
            task = progress.add_task(escaped(f"conform {profile.label}"), total=len(cases))

            def advance(result: CaseResult) -> None:
                progress.update(task, advance=1, description=result.case.name)

            report = run_conformance(sut, cases, profile, args.strict, args.max_sut_failures, advance, args.out,
                                     recheck_for_sut(sut, profile))
    finally:
        sut.close()
    report.sut_command = args.sut
    print_report(console, report)
    report.write_junit(args.junit)
    report.write_json(args.json)
    console.print(literal(f"reports: {args.junit} (JUnit XML), {args.json} (JSON)"))
    return report.exit_code()


def print_trace_commands(console: Console, report: ConformReport, result: CaseResult) -> None:
    """Where a failing case's trace was written, and the commands that replay and explain it."""
    commands = report.commands_for(result)
    if commands is None:
        return
    if result.verdict is not Verdict.FAILED:
        console.print(literal(f"\n{result.case.name}: {result.verdict.value}"))
    for line in (f"trace written to {result.trace_path}; replay with:", f"  {commands[0]}", "explain with:",
                 f"  {commands[1]}"):
        console.print(literal(line), soft_wrap=True)  # never wrapped: a command is copied as printed


def print_report(console: Console, report: ConformReport) -> None:
    """The per-case table, the failures in full, the rule coverage table and the totals."""
    name = "" if report.hello is None else f" ({report.hello.name})"
    cases = Table(title=literal(f"conformance of {report.sut}{name} under {report.profile.label}"))
    for column in ("case", "verdict", "ms", "note"):
        cases.add_column(column, justify="right" if column == "ms" else "left")
    for result in report.results:
        note = result.message.splitlines()[0] if result.message else ""
        cases.add_row(literal(result.case.name), literal(result.verdict.value, style=STYLE[result.verdict]),
                      f"{result.seconds * 1000:.0f}", literal(note))
    console.print(cases)
    for result in report.results:
        if result.verdict is Verdict.FAILED:
            console.print(f"\n[bold red]{escaped(result.case.name)}[/] ({escaped(result.case.summary)})",
                          highlight=False)
            console.print(literal(result.message))
            if result.rule:
                console.print(f"the expected outcome was decided by rule {result.rule}", markup=False)
        print_trace_commands(console, report, result)
    rules = Table(title="rule coverage")
    for column in ("rule", "domain", "cases", "passed", "failed"):
        rules.add_column(column, justify="left" if column in ("rule", "domain") else "right")
    for rule, domain, count, passed, failed in report.rule_rows():
        style = "bold red" if failed else ("yellow" if not count else "")
        rules.add_row(literal(rule), domain, str(count), str(passed), str(failed), style=style)
    console.print(rules)
    unexercised = sum(1 for row in report.rule_rows() if not row[2])
    totals = ", ".join(f"{report.count(v)} {v.value}" for v in Verdict if report.count(v))
    console.print(f"{len(report.results)} cases: {totals}; {unexercised} rules not exercised; "
                  f"{report.seconds:.1f} s", markup=False)
    if report.stopped:
        console.print(f"[bold magenta]stopped early:[/] {escaped(report.stopped)}", highlight=False)
    why_not = report.nothing_checked()
    if why_not is not None:
        console.print(f"[bold yellow]{escaped(why_not)}[/]", highlight=False)



__all__ = ["add_parser", "print_report", "print_trace_commands", "run"]
