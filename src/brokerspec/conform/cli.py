"""The command-line side of conformance: ``conform``, ``catalogue``, ``fuzz``, ``diff`` and ``mutation-score``.

Introduction
------------
``--sut`` takes either a command line, run as a child process that speaks
the SUT protocol (``--sut "node examples/node-sut/sut.js"``), or
``inproc:LAYER`` for one of brokerspec's own layers in this process
(``inproc:impl``, ``inproc:reference``, ``inproc:spec``,
``inproc:planted:NAME``). Exit codes: 0 passed, 1 conformance failure, 2
usage error, 3 SUT failure, 4 nothing was checked (see :mod:`.runner`).

Options are checked while they are parsed (:mod:`brokerspec.clitools`): a
``--timeout`` that is not a positive finite number, a count below its
minimum or an output path that can never be written is a usage error
before anything runs. What a SUT says (its name, its error messages) and
the ``--sut`` command line are printed literally, never as markup.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from brokerspec.spec import PROFILES, BrokerspecError, Profile, get_profile

from ..check.lockstep import format_command
from ..check.machine import RunStats
from ..clitools import at_least, clean, escaped, literal, output_file, output_folder, parse_timeout
from ..codec import encode_command, encode_outcome
from ..render import drawn_table, make_console
from .catalogue import DOMAIN_ORDER, Case, all_cases, check_catalogue, select
from .mutation_cli import add_command as add_mutation_command
from .mutation_cli import run as run_mutation_score
from .diff import diff, make_side, make_workdir
from .fuzz import fuzz
from .runner import (
    EXIT_CONFORMANCE_FAILURE,
    EXIT_NOTHING_CHECKED,
    EXIT_PASS,
    EXIT_SUT_FAILURE,
    EXIT_USAGE,
    CaseResult,
    ConformReport,
    Verdict,
    run_conformance,
)
from .protocol import SutFailure
from .sut import DEFAULT_TIMEOUT, InProcessSut, SubprocessSut, Sut

COMMANDS = ("conform", "catalogue", "fuzz", "diff", "mutation-score")
STYLE = {Verdict.PASSED: "green", Verdict.FAILED: "bold red", Verdict.SUT_FAILURE: "bold magenta",
         Verdict.SKIPPED: "yellow", Verdict.NOT_RUN: "dim"}


class ConformUsageError(BrokerspecError):
    """A conformance command line that cannot be carried out."""


def make_sut(text: str, timeout: float) -> Sut:
    """``inproc:LAYER``, ``artemis[:VERSION]`` or a command line, as a SUT."""
    if text == "artemis" or text.startswith("artemis:"):
        from ..artemis.releases import DEFAULT_RELEASE, RELEASES
        from ..artemis.sut import ArtemisSut

        version = text.partition(":")[2] or DEFAULT_RELEASE
        if version not in RELEASES:
            raise ConformUsageError(f"--sut {clean(text)}: no Artemis release {clean(version)!r}; "
                                    f"known: {', '.join(RELEASES)}")
        return ArtemisSut(version, timeout=max(timeout, 30.0))
    if text.startswith("inproc:"):
        try:
            return InProcessSut(text.removeprefix("inproc:"))
        except ValueError as problem:
            raise ConformUsageError(f"--sut {clean(text)}: {problem}") from None
    try:
        argv = shlex.split(text)
    except ValueError as problem:
        raise ConformUsageError(f"--sut {clean(text)}: not a command line ({problem})") from None
    if not argv:
        raise ConformUsageError("--sut is empty: give a command line or inproc:LAYER")
    return SubprocessSut(argv, timeout)


def profile_for_sut(sut: Sut, profile: Profile, console: Console) -> Profile:
    """For a real Artemis release, ``profile`` with the release's own differences from it (said on the console)."""
    from ..artemis.sut import ArtemisSut, judged_profile

    if not isinstance(sut, ArtemisSut):
        return profile
    judged = judged_profile(sut.version, profile)
    if judged != profile:
        console.print(literal(f"Artemis {sut.version} is judged under {judged.label}: the profile describes a "
                              "later release, and these options are where this one differs"))
    return judged


def add_commands(commands: Any, parse_setting: Callable[[str], tuple[str, str]],
                 parse_duration: Callable[[str], float]) -> None:
    """Register ``conform`` and ``catalogue`` on the top-level parser's subcommands."""
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

    catalogue = commands.add_parser("catalogue", help="the conformance catalogue as data")
    actions = catalogue.add_subparsers(dest="action", required=True)
    export = actions.add_parser("export", help="write the cases as JSON-lines files, one per domain")
    export.add_argument("dir", type=output_folder, help="folder to write into (created if missing)")
    export.add_argument("--profile", action="append", choices=sorted(PROFILES),
                        help="profiles to compute expected outcomes for (repeatable; default all)")
    actions.add_parser("list", help="list the cases with their rules and profiles")
    add_mutation_command(commands)


def add_sut_options(parser: argparse.ArgumentParser, parse_setting: Callable[[str], tuple[str, str]]) -> None:
    """``--sut``, ``--profile``, ``--set`` and ``--timeout``, shared by the commands that talk to a SUT."""
    parser.add_argument("--sut", required=True, metavar="CMD",
                        help='the SUT: a command line ("node sut.js") or inproc:impl|reference|spec|planted:NAME')
    parser.add_argument("--profile", default="seed", choices=sorted(PROFILES), help="profile (default seed)")
    parser.add_argument("--set", action="append", type=parse_setting, default=[], metavar="DOMAIN.OPTION=VALUE",
                        help="override a profile option (repeatable)")
    parser.add_argument("--timeout", type=parse_timeout, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                        help=f"per-request timeout for a subprocess SUT, a positive number "
                             f"(default {DEFAULT_TIMEOUT:g})")


def run_command(args: argparse.Namespace) -> int:
    """Dispatch ``conform`` or ``catalogue``."""
    if args.command == "conform":
        return run_conform(args)
    if args.command == "fuzz":
        return run_fuzz(args)
    if args.command == "diff":
        return run_diff(args)
    if args.command == "mutation-score":
        return run_mutation_score(args)
    if args.action == "export":
        return run_export(args)
    return run_list()


def checked_catalogue() -> list[Case]:
    """All cases, refusing to run a catalogue that breaks its own rules."""
    cases = all_cases()
    problems = check_catalogue(cases)
    if problems:
        raise ConformUsageError("the catalogue is broken: " + "; ".join(problems))
    return cases


def run_conform(args: argparse.Namespace) -> int:
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

            report = run_conformance(sut, cases, profile, args.strict, args.max_sut_failures, advance)
    finally:
        sut.close()
    print_report(console, report)
    report.write_junit(args.junit)
    report.write_json(args.json)
    console.print(literal(f"reports: {args.junit} (JUnit XML), {args.json} (JSON)"))
    return report.exit_code()


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


def run_fuzz(args: argparse.Namespace) -> int:
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


def run_diff(args: argparse.Namespace) -> int:
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


def export_case(case: Case, profiles: list[Profile]) -> dict[str, Any]:
    """One case as JSON data: its script as trace steps, and the spec's outcomes per profile."""
    return {
        "name": case.name, "domain": case.domain, "summary": case.summary, "source": case.source,
        "rules": list(case.rules), "profiles": list(case.profiles),
        "overrides": {dotted: value for dotted, value in case.overrides},
        "steps": [{"op": c.op, "args": encode_command(c)} for c in case.commands],
        "expected": {p.name: [encode_outcome(o) for o in case.expected(p)] for p in profiles if case.applies_to(p)},
        "rules_exercised": {p.name: list(case.rules_exercised(p)) for p in profiles if case.applies_to(p)},
    }


def run_export(args: argparse.Namespace) -> int:
    """``brokerspec catalogue export DIR``."""
    profiles = [get_profile(name) for name in (args.profile or list(PROFILES))]
    cases = checked_catalogue()
    if args.dir.exists() and not args.dir.is_dir():
        raise ConformUsageError(f"{args.dir} exists and is not a folder")
    args.dir.mkdir(parents=True, exist_ok=True)
    console = make_console()
    for domain in DOMAIN_ORDER:
        mine = [c for c in cases if c.domain == domain]
        path = args.dir / f"{domain}.jsonl"
        with path.open("w", encoding="utf-8") as out:
            for case in mine:
                out.write(json.dumps(export_case(case, profiles)) + "\n")
        console.print(literal(f"{path}: {len(mine)} cases"))
    return EXIT_PASS


def run_list() -> int:
    """``brokerspec catalogue list``."""
    table = Table(title="conformance catalogue")
    for column in ("case", "steps", "rules", "profiles", "source"):
        table.add_column(column)
    for case in checked_catalogue():
        profiles = "all" if set(case.profiles) == set(PROFILES) else ", ".join(case.profiles)
        table.add_row(literal(case.name), str(len(case.commands)), literal(", ".join(case.rules)), literal(profiles),
                      literal(case.source))
    make_console().print(table)
    return EXIT_PASS


__all__ = ["COMMANDS", "EXIT_USAGE", "ConformUsageError", "add_commands", "make_sut", "run_command"]
