"""``brokerspec fuzz``: Hypothesis-driven stateful fuzzing of a SUT against the spec, domain by domain."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Callable
from typing import Any

from rich.progress import Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from brokerspec.spec import get_profile

from ..check.machine import RunStats
from ..clitools import escaped, literal, output_folder
from ..render import drawn_table, make_console
from .catalogue import DOMAIN_ORDER
from .cli_common import add_sut_options, make_sut, profile_for_sut
from .fuzz import fuzz
from .runner import EXIT_CONFORMANCE_FAILURE, EXIT_NOTHING_CHECKED, EXIT_PASS, EXIT_SUT_FAILURE

def add_parser(commands: Any, parse_setting: Callable[[str], tuple[str, str]],
               parse_duration: Callable[[str], float]) -> None:
    """Register ``fuzz``."""
    fuzz_cmd = commands.add_parser("fuzz", help="Hypothesis-driven stateful fuzzing of a SUT against the spec")
    add_sut_options(fuzz_cmd, parse_setting)
    fuzz_cmd.add_argument("--domain", action="append", choices=DOMAIN_ORDER,
                          help="only this domain (repeatable; default: every domain the SUT offers)")
    fuzz_cmd.add_argument("--budget", type=parse_duration, default=60.0, metavar="DURATION",
                          help="total time, shared by the domains (default 60s)")
    fuzz_cmd.add_argument("--seed", type=int, default=None, help="seed for a repeatable run")
    fuzz_cmd.add_argument("--strict", action="store_true",
                          help="demand the spec's exact outcome where it allows several (load balancing)")
    fuzz_cmd.add_argument("--show-values", action="store_true",
                          help="also list the values drawn for every operation argument (what the run reached)")
    fuzz_cmd.add_argument("--out", type=output_folder, default="brokerspec-failures",
                          help="folder for the shrunk failure traces (default ./brokerspec-failures)")



def run(args: argparse.Namespace) -> int:
    """``brokerspec fuzz``."""
    profile = get_profile(args.profile, tuple(args.set))
    domains = tuple(args.domain or DOMAIN_ORDER)
    sut = make_sut(args.sut, args.timeout)
    console = make_console()
    profile = profile_for_sut(sut, profile, console)
    try:
        with Progress(TextColumn("{task.description}"), TextColumn("{task.fields[status]}"), TimeElapsedColumn(),
                      console=console, transient=True) as progress:
            task = progress.add_task(f"fuzz {profile.label}", total=None, status="")

            def show(domain: str, stats: RunStats) -> None:
                progress.update(task, description=escaped(f"fuzz {domain} {profile.label}"),
                                status=f"{stats.examples} scenarios, {stats.steps} steps")

            report = fuzz(sut, profile, domains, args.budget, args.out, args.seed, args.strict, show)
    finally:
        sut.close()
    table = Table(title=literal(f"fuzzing {report.sut} under {profile.label} (seed {args.seed})"))
    for column in ("domain", "scenarios", "steps", "seconds", "result"):
        table.add_column(column, justify="left" if column in ("domain", "result") else "right")
    for result in report.results:
        found = "[bold red]wrong outcome[/]" if result.divergence is not None else "[green]no difference[/]"
        table.add_row(result.domain, str(result.examples), str(result.steps), f"{result.seconds:.1f}", found)
    for domain in report.skipped:
        table.add_row(domain, "-", "-", "-", "[yellow]not offered by the SUT[/]")
    console.print(table)
    if args.show_values:
        console.print(drawn_table(report.results))
    elif report.results:
        arguments = sum(len(r.drawn) for r in report.results)
        console.print(f"{arguments} operation arguments drawn; --show-values lists the values", markup=False)
    for why, count in sorted(report.unsupported.items()):
        console.print(literal(f"{count} scenario(s) discarded: the SUT cannot do this: {why}"))
    replay_with = f"brokerspec replay {{}} --sut {shlex.quote(args.sut)}"
    for result in report.divergences:
        assert result.divergence is not None
        console.print(literal(result.divergence.explain()))
        console.print(literal(f"shrunk script (no single step can go) written to {result.trace_path}; replay with:"))
        console.print(literal("  " + replay_with.format(shlex.quote(str(result.trace_path)))))
    if report.failure is not None:
        console.print(f"[bold magenta]the SUT failed:[/] {escaped(report.failure)}", highlight=False)
        if report.failure_trace is not None:
            console.print(literal(f"the script up to the failure is in {report.failure_trace}; replay with:"))
            console.print(literal("  " + replay_with.format(shlex.quote(str(report.failure_trace)))))
    if report.divergences:
        return EXIT_CONFORMANCE_FAILURE
    if report.failure is not None:
        return EXIT_SUT_FAILURE
    why_not = report.nothing_checked()
    if why_not is not None:
        console.print(f"[bold yellow]{escaped(why_not)}[/]", highlight=False)
        return EXIT_NOTHING_CHECKED
    budget = f"{args.budget:g} s"
    console.print(f"no difference found within the budget ({budget}, "
                  f"{sum(r.examples for r in report.results)} scenarios)", markup=False)
    return EXIT_PASS



__all__ = ["add_parser", "run"]
