"""``brokerspec fuzz``: Hypothesis-driven stateful fuzzing of a SUT against the spec, domain by domain.

``--profile`` may be given several times, or as ``all``; the budget is shared
by every run. ``--exclude-op OP`` (or ``DOMAIN.OP``) leaves an operation out
from the start; an operation the SUT answers with an ``error`` reply is
dropped as the run goes (:mod:`.fuzz`). The result table has a row for every
domain under every profile: those that ran, those a SUT failure stopped,
those the SUT does not offer and those not run.
"""

from __future__ import annotations

import argparse
import dataclasses
import shlex
from collections.abc import Callable, Sequence
from typing import Any

from rich.progress import Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from brokerspec.spec import PROFILES, get_profile

from ..check.machine import RunStats
from ..check.runner import CheckResult
from ..clitools import clean, escaped, literal, output_folder
from ..codec import COMMANDS
from ..render import drawn_table, make_console
from .catalogue import DOMAIN_ORDER
from .cli_common import ConformUsageError, add_sut_options, make_sut, profile_for_sut
from .fuzz import DomainRun, FuzzReport, Status, fuzz
from .runner import EXIT_CONFORMANCE_FAILURE, EXIT_NOTHING_CHECKED, EXIT_PASS, EXIT_SUT_FAILURE


def add_parser(commands: Any, parse_setting: Callable[[str], tuple[str, str]],
               parse_duration: Callable[[str], float]) -> None:
    """Register ``fuzz``."""
    fuzz_cmd = commands.add_parser("fuzz", help="Hypothesis-driven stateful fuzzing of a SUT against the spec",
                                   conflict_handler="resolve")
    add_sut_options(fuzz_cmd, parse_setting)
    fuzz_cmd.add_argument("--profile", action="append", choices=[*PROFILES, "all"], metavar="PROFILE",
                          help=f"profile (repeatable, or all; default seed): {', '.join(PROFILES)}")
    fuzz_cmd.add_argument("--domain", action="append", choices=DOMAIN_ORDER,
                          help="only this domain (repeatable; default: every domain the SUT offers)")
    fuzz_cmd.add_argument("--exclude-op", action="append", default=[], metavar="OP",
                          help="leave this operation out (repeatable; DOMAIN.OP for one domain only)")
    fuzz_cmd.add_argument("--budget", type=parse_duration, default=60.0, metavar="DURATION",
                          help="total time, shared by the domains and profiles (default 60s)")
    fuzz_cmd.add_argument("--seed", type=int, default=None, help="seed for a repeatable run")
    fuzz_cmd.add_argument("--strict", action="store_true",
                          help="demand the spec's exact outcome where it allows several (load balancing)")
    fuzz_cmd.add_argument("--show-values", action="store_true",
                          help="also list the values drawn for every operation argument (what the run reached)")
    fuzz_cmd.add_argument("--out", type=output_folder, default="brokerspec-failures",
                          help="folder for the shrunk failure traces (default ./brokerspec-failures)")


def excluded_ops(given: Sequence[str], domains: Sequence[str]) -> dict[str, frozenset[str]]:
    """``--exclude-op`` values as domain -> operations; a usage error names an operation no chosen domain has.

    >>> sorted(excluded_ops(["send", "duplicates.crash"], ["addressing", "duplicates"])["duplicates"])
    ['crash', 'send']
    """
    chosen: dict[str, set[str]] = {d: set() for d in domains}
    for text in given:
        domain, dot, op = text.rpartition(".")
        targets = [domain] if dot else list(domains)
        hits = [d for d in targets if d in chosen and op in COMMANDS[d]]
        if not hits:
            valid = sorted({f"{d}.{o}" for d in domains for o in COMMANDS[d]})
            raise ConformUsageError(f"--exclude-op {clean(text)!r}: no such operation in {', '.join(domains)}; "
                                    f"operations: {', '.join(valid)}")
        for hit in hits:
            chosen[hit].add(op)
    return {d: frozenset(ops) for d, ops in chosen.items() if ops}


def run(args: argparse.Namespace) -> int:
    """``brokerspec fuzz``."""
    names = args.profile or ["seed"]
    names = list(PROFILES) if "all" in names else list(dict.fromkeys(names))
    profiles = [get_profile(name, tuple(args.set)) for name in names]
    domains = tuple(args.domain or DOMAIN_ORDER)
    excluded = excluded_ops(args.exclude_op, domains)
    sut = make_sut(args.sut, args.timeout)
    console = make_console()
    profiles = [profile_for_sut(sut, profile, console) for profile in profiles]
    labels = ", ".join(p.label for p in profiles)
    try:
        with Progress(TextColumn("{task.description}"), TextColumn("{task.fields[status]}"), TimeElapsedColumn(),
                      console=console, transient=True) as progress:
            task = progress.add_task(escaped(f"fuzz {labels}"), total=None, status="")

            def show(where: str, stats: RunStats) -> None:
                progress.update(task, description=escaped(f"fuzz {where}"),
                                status=f"{stats.examples} scenarios, {stats.steps} steps")

            report = fuzz(sut, profiles, domains, args.budget, args.out, args.seed, args.strict, show, excluded)
    finally:
        sut.close()
    console.print(result_table(report, labels, args.seed))
    if args.show_values:
        console.print(drawn_table(drawn_per_domain(report.results)))
    elif report.results:
        arguments = sum(len(r.drawn) for r in report.results)
        console.print(f"{arguments} operation arguments drawn; --show-values lists the values", markup=False)
    left_out = print_left_out(console, report)
    replay_with = f"brokerspec replay {{}} --sut {shlex.quote(args.sut)}"
    for result in report.divergences:
        assert result.divergence is not None
        console.print(literal(result.divergence.explain()))
        console.print(literal(f"shrunk script (no single step can go) written to {result.trace_path}; replay with:"))
        console.print(literal("  " + replay_with.format(shlex.quote(str(result.trace_path)))))
    for failed in report.failures:
        console.print(f"[bold magenta]the SUT failed:[/] {escaped(failed.failure)}", highlight=False)
        if failed.failure_trace is not None:
            console.print(literal(f"the script up to the failure in {failed.where} is in {failed.failure_trace}; "
                                  "replay with:"))
            console.print(literal("  " + replay_with.format(shlex.quote(str(failed.failure_trace)))))
    if report.divergences:
        return EXIT_CONFORMANCE_FAILURE
    if report.failures:
        return EXIT_SUT_FAILURE
    why_not = report.nothing_checked()
    if why_not is not None:
        console.print(f"[bold yellow]{escaped(why_not)}[/]", highlight=False)
        return EXIT_NOTHING_CHECKED
    budget = f"{args.budget:g} s"
    but = f"; not checked: {', '.join(left_out)}" if left_out else ""
    scenarios = sum(r.examples for r in report.results)
    discarded = sum(report.unsupported.values())
    cut = f", {discarded} of them cut short at a step the SUT cannot do" if discarded else ""
    judged = sum(r.judged for r in report.runs)
    console.print(f"no difference found within the budget ({budget}, {scenarios} scenarios{cut}; "
                  f"{judged} steps judged){but}", markup=False)
    return EXIT_PASS


def drawn_per_domain(results: Sequence[CheckResult]) -> list[CheckResult]:
    """One result per domain whose drawn values are those of all its runs (under every profile)."""
    merged: dict[str, CheckResult] = {}
    for result in results:
        first = merged.get(result.domain)
        if first is None:
            merged[result.domain] = result
            continue
        drawn = dict(first.drawn)
        for key, values in result.drawn.items():
            drawn[key] = drawn.get(key, frozenset()) | values
        merged[result.domain] = dataclasses.replace(first, drawn=drawn)
    return list(merged.values())


def result_table(report: FuzzReport, labels: str, seed: int | None) -> Table:
    """One row per domain and profile; a profile-free domain's profile is shown as ``-`` (it has none)."""
    table = Table(title=literal(f"fuzzing {report.sut} under {labels} (seed {seed})"),
                  caption="profile -: no profile option changes the domain; it ran once")
    for column in ("profile", "domain", "scenarios", "steps", "seconds", "result"):
        table.add_column(column, justify="right" if column in ("scenarios", "steps", "seconds") else "left")
    for run in report.runs:
        profile = "-" if run.profile_free else run.profile.label
        counts = ("-", "-", "-") if run.status in (Status.NOT_OFFERED, Status.NOT_RUN) or run.examples == 0 else \
            (str(run.examples), str(run.steps), f"{run.seconds:.1f}")
        table.add_row(literal(profile), literal(run.domain), *counts, describe(run))
    return table


def describe(run: DomainRun) -> str:
    """A run's result cell, as markup."""
    if run.status is Status.NOT_OFFERED:
        return "[yellow]not offered by the SUT[/]"
    if run.status is Status.NOT_RUN:
        return f"[yellow]not run: {escaped(run.why)}[/]"
    if run.status is Status.SUT_FAILED:
        return "[bold magenta]the SUT failed[/]"
    assert run.result is not None
    found = "[bold red]wrong outcome[/]" if run.result.divergence is not None else "[green]no difference[/]"
    left = len(run.dropped) + len(run.excluded) + len(run.unasked)
    return found + (f" [yellow]({left} operation(s) left out)[/]" if left else "")


def print_left_out(console: Any, report: FuzzReport) -> list[str]:
    """Say what every run left out and discarded; the ``domain.op`` names left out of some run."""
    names: list[str] = []
    for run in report.runs:
        for op in run.excluded:
            console.print(literal(f"{run.where}: {op} left out (--exclude-op)"))
            names.append(f"{run.domain}.{op}")
        for op, why in run.unasked.items():
            console.print(literal(f"{run.where}: {op} not asked: {why}"))
        for op, dropped in run.dropped.items():
            console.print(literal(f"{run.where}: {op} dropped, the SUT answered it with an error "
                                  f"({dropped.message}); {dropped.scenarios} scenario(s) of {dropped.steps} "
                                  "step(s) discarded"))
            names.append(f"{run.domain}.{op}")
    for why, count in sorted(report.unsupported.items()):
        console.print(literal(f"{count} scenario(s) discarded: the SUT cannot do this: {why}"))
    return list(dict.fromkeys(names))


__all__ = ["add_parser", "excluded_ops", "run"]
