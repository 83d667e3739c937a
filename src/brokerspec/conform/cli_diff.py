"""``brokerspec diff --from A --to B``: the options that differ, then a shortest script per differing behaviour.

The command prints every option whose value differs between the two sides'
profiles, a table of what each domain's one-step scripts and search found,
and then each script with both sides' outcome (as the protocol's JSON) and
rule at the step where they part, and the trace it was written to.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from brokerspec.spec import PROFILES, Profile, get_profile

from ..check.lockstep import format_command
from ..check.machine import RunStats
from ..clitools import at_least, escaped, literal, output_folder
from ..render import make_console
from .catalogue import DOMAIN_ORDER
from .diff import MAX_BEHAVIOURS, DomainDiff, Side, diff, make_side, make_workdir, option_differences
from .diff_sides import DiffUsageError, oldest_runnable
from .failures import wire_json
from .protocol import SutFailure
from .runner import EXIT_CONFORMANCE_FAILURE, EXIT_PASS, EXIT_SUT_FAILURE

def add_parser(commands: Any, parse_setting: Callable[[str], tuple[str, str]],
               parse_duration: Callable[[str], float]) -> None:
    """Register ``diff``."""
    diff_cmd = commands.add_parser("diff", help="shortest scripts on which two profiles or revisions of the spec "
                                              "give different outcomes")
    diff_cmd.add_argument("--from", dest="source", metavar="A", help="a profile or a git revision (required)")
    diff_cmd.add_argument("--to", dest="target", metavar="B", help="a profile or a git revision (required)")
    diff_cmd.add_argument("--oldest", action="store_true",
                          help="print the oldest git revision whose spec diff can run, and nothing else")
    diff_cmd.add_argument("--domain", action="append", choices=DOMAIN_ORDER,
                          help="only this domain (repeatable; default every domain)")
    diff_cmd.add_argument("--profile", default="seed", choices=sorted(PROFILES),
                          help="the profile a revision side runs under (default seed)")
    diff_cmd.add_argument("--set", action="append", type=parse_setting, default=[], metavar="DOMAIN.OPTION=VALUE",
                          help="override an option on both sides (repeatable)")
    diff_cmd.add_argument("--budget", type=parse_duration, default=60.0, metavar="DURATION",
                          help="total search time, shared by the domains (default 60s)")
    diff_cmd.add_argument("--seed", type=int, default=None, help="seed for a repeatable run")
    diff_cmd.add_argument("--max-behaviours", type=at_least(1), default=MAX_BEHAVIOURS, metavar="N",
                          help=f"scripts kept per domain, one per differing behaviour (default {MAX_BEHAVIOURS})")
    diff_cmd.add_argument("--repo", type=Path, default=Path("."), help="the git repository for revisions (default .)")
    diff_cmd.add_argument("--out", type=output_folder, default="brokerspec-diff",
                          help="folder for the distinguishing traces (default ./brokerspec-diff)")



def run(args: argparse.Namespace) -> int:
    """``brokerspec diff --from A --to B``: 0 no difference found, 1 differences found, 3 a side could not run."""
    profile = get_profile(args.profile, tuple(args.set))
    domains = tuple(args.domain or DOMAIN_ORDER)
    if args.oldest:
        return print_oldest(args.repo, profile)
    if args.source is None or args.target is None:
        raise DiffUsageError("diff needs both --from and --to (or --oldest)")
    workdir = make_workdir()
    console = make_console()
    try:
        source = make_side(args.source, profile, args.repo, workdir)
        target = make_side(args.target, profile, args.repo, workdir)
        try:
            print_options(console, source, target)
            with Progress(TextColumn("{task.description}"), TextColumn("{task.fields[status]}"),
                          TimeElapsedColumn(), console=console, transient=True) as progress:
                task = progress.add_task("diff", total=None, status="")

                def show(domain: str, stats: RunStats) -> None:
                    progress.update(task, description=f"diff {domain}", status=f"{stats.examples} scenarios")

                results = diff(source, target, domains, args.budget, args.out, args.seed, show,
                               args.max_behaviours)
        except SutFailure as failure:
            console.print(f"[bold magenta]a side could not be run:[/] {escaped(failure)}", highlight=False)
            return EXIT_SUT_FAILURE
        finally:
            source.sut.close()
            target.sut.close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print_results(console, source, target, results, args.budget / len(domains))
    return EXIT_CONFORMANCE_FAILURE if any(r.findings for r in results) else EXIT_PASS


def print_oldest(repo: Path, profile: Profile) -> int:
    """``diff --oldest``: the oldest commit that changed spec/ and runs beside this code, found by bisection."""
    workdir = make_workdir()
    try:
        commit, probes = oldest_runnable(repo, workdir, profile)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    subject = subprocess.run(["git", "-C", str(repo), "log", "-1", "--format=%h %s", commit], capture_output=True,
                             text=True, check=False).stdout.strip()
    console = make_console()
    console.print(literal(f"oldest revision diff can run: {commit}"))
    console.print(literal(f"  {subject}"))
    console.print(literal(f"  (bisected over the commits that changed spec/, {probes} tried; every later commit "
                          f"runs too)"))
    return EXIT_PASS


def side_title(side: Side) -> str:
    """A side as printed: its name, and the profile (and commit) it stands for."""
    what = side.profile.label if side.revision is None else f"{side.profile.label} at {side.revision[:12]}"
    return side.name if side.name == what else f"{side.name} ({what})"


def print_options(console: Console, source: Side, target: Side) -> None:
    """Every option whose value differs between the two sides' profiles, or one line saying none does."""
    rows = option_differences(source, target)
    if not rows:
        console.print(literal(f"options: {side_title(source)} and {side_title(target)} set every option alike"))
        return
    table = Table(title=literal(f"options that differ: {len(rows)}"), title_justify="left")
    for column in ("option", source.name, target.name):
        table.add_column(literal(column))
    for dotted, first, second in rows:
        table.add_row(literal(dotted), literal(_value(first)), literal(_value(second)))
    console.print(table)


def _value(value: Any) -> str:
    if value is None:
        return "(absent)"
    return str(value).lower() if isinstance(value, bool) else str(value)


def print_results(console: Console, source: Side, target: Side, results: list[DomainDiff], share: float) -> None:
    """The summary table, then every script with both sides' outcome and rule at the step where they part."""
    table = Table(title=literal(f"{side_title(source)} vs {side_title(target)}"))
    for column in ("domain", "one-step scripts", "scenarios", "seconds", "result"):
        table.add_column(column, justify="left" if column in ("domain", "result") else "right")
    for result in results:
        if result.findings:
            lengths = ", ".join(str(len(f.commands)) for f in result.findings)
            found = (f"[bold]{len(result.findings)} distinguishing script{'s' if len(result.findings) != 1 else ''}"
                     f"[/], one per differing behaviour (steps: {lengths})"
                     + (" - the limit: there may be more (--max-behaviours)" if result.limited else ""))
        else:
            found = f"no difference found within {share:g} s"
        table.add_row(result.domain, str(result.one_step_tried), str(result.examples), f"{result.seconds:.1f}", found)
    console.print(table)
    for result in results:
        for number, finding in enumerate(result.findings, start=1):
            console.print(f"\n[bold]{result.domain}[/], behaviour {number} of {len(result.findings)} "
                          f"({escaped(finding.found_by)}): {escaped(finding.behaviour[0])}", highlight=False)
            for step, command in enumerate(finding.commands, start=1):
                marker = "  <- the sides part here" if step == len(finding.commands) else ""
                console.print(literal(f"  {step:>3}. {format_command(command)}{marker}"))
            for side, outcome, raised in ((source, finding.source_outcomes[-1], finding.raised[0]),
                                          (target, finding.target_outcomes[-1], finding.raised[1])):
                said = f"raised {raised}" if raised else f"{wire_json(outcome)}  (rule {_rule(outcome)})"
                console.print(literal(f"  {side.name}: {said}"))
            console.print(literal(f"  trace: {finding.trace}  (brokerspec explain {finding.trace})"))


def _rule(outcome: Any) -> str:
    return str(getattr(outcome, "rule", "") or "-")



__all__ = ["add_parser", "run"]
