"""``brokerspec diff --from A --to B``: shortest scripts on which two profiles or spec revisions differ."""

from __future__ import annotations

import argparse
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.progress import Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from brokerspec.spec import PROFILES, get_profile

from ..check.lockstep import format_command
from ..check.machine import RunStats
from ..clitools import escaped, literal, output_folder
from ..render import make_console
from .catalogue import DOMAIN_ORDER
from .diff import diff, make_side, make_workdir
from .protocol import SutFailure
from .runner import EXIT_CONFORMANCE_FAILURE, EXIT_PASS, EXIT_SUT_FAILURE

def add_parser(commands: Any, parse_setting: Callable[[str], tuple[str, str]],
               parse_duration: Callable[[str], float]) -> None:
    """Register ``diff``."""
    diff_cmd = commands.add_parser("diff", help="shortest scripts on which two profiles or revisions of the spec "
                                              "give different outcomes")
    diff_cmd.add_argument("--from", dest="source", required=True, metavar="A", help="a profile or a git revision")
    diff_cmd.add_argument("--to", dest="target", required=True, metavar="B", help="a profile or a git revision")
    diff_cmd.add_argument("--domain", action="append", choices=DOMAIN_ORDER,
                          help="only this domain (repeatable; default every domain)")
    diff_cmd.add_argument("--profile", default="seed", choices=sorted(PROFILES),
                          help="the profile a revision side runs under (default seed)")
    diff_cmd.add_argument("--set", action="append", type=parse_setting, default=[], metavar="DOMAIN.OPTION=VALUE",
                          help="override an option on both sides (repeatable)")
    diff_cmd.add_argument("--budget", type=parse_duration, default=60.0, metavar="DURATION",
                          help="total search time, shared by the domains (default 60s)")
    diff_cmd.add_argument("--seed", type=int, default=None, help="seed for a repeatable run")
    diff_cmd.add_argument("--repo", type=Path, default=Path("."), help="the git repository for revisions (default .)")
    diff_cmd.add_argument("--out", type=output_folder, default="brokerspec-diff",
                          help="folder for the distinguishing traces (default ./brokerspec-diff)")



def run(args: argparse.Namespace) -> int:
    """``brokerspec diff --from A --to B``: 0 no difference found, 1 differences found."""
    profile = get_profile(args.profile, tuple(args.set))
    domains = tuple(args.domain or DOMAIN_ORDER)
    workdir = make_workdir()
    console = make_console()
    try:
        source = make_side(args.source, profile, args.repo, workdir)
        target = make_side(args.target, profile, args.repo, workdir)
        try:
            with Progress(TextColumn("{task.description}"), TextColumn("{task.fields[status]}"),
                          TimeElapsedColumn(), console=console, transient=True) as progress:
                task = progress.add_task("diff", total=None, status="")

                def show(domain: str, stats: RunStats) -> None:
                    progress.update(task, description=f"diff {domain}", status=f"{stats.examples} scenarios")

                results = diff(source, target, domains, args.budget, args.out, args.seed, show)
        except SutFailure as failure:
            console.print(f"[bold magenta]a side could not be run:[/] {escaped(failure)}", highlight=False)
            return EXIT_SUT_FAILURE
        finally:
            source.sut.close()
            target.sut.close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    share = args.budget / len(domains)
    title = f"{args.source} ({source.profile.label}) vs {args.target} ({target.profile.label})"
    table = Table(title=literal(title))
    for column in ("domain", "scenarios", "seconds", "result"):
        table.add_column(column, justify="right" if column in ("scenarios", "seconds") else "left")
    for result in results:
        found = (f"[bold]{len(result.divergence.commands)}-step distinguishing script[/]"
                 if result.divergence is not None else f"no difference found within {share:g} s")
        table.add_row(result.domain, str(result.examples), f"{result.seconds:.1f}", found)
    console.print(table)
    for result in results:
        if result.divergence is None:
            continue
        console.print(f"\n[bold]{result.domain}[/]: the shortest script found", highlight=False)
        for number, command in enumerate(result.divergence.commands, start=1):
            console.print(literal(f"  {number:>3}. {format_command(command)}"))
        outcomes = result.outcomes()
        if outcomes is not None:
            console.print(literal(f"  {args.source}: {outcomes[0]}"))
            console.print(literal(f"  {args.target}: {outcomes[1]}"))
        console.print(literal(f"  trace: {result.trace}"))
    return EXIT_CONFORMANCE_FAILURE if any(r.divergence is not None for r in results) else EXIT_PASS



__all__ = ["add_parser", "run"]
