"""``brokerspec mutation-score``: the suite against cosmic-ray's mutants of ``impl/`` and every planted bug.

Introduction
------------
Prints the planted bugs and how each was killed, a table per file (mutants,
killed, killed only by ``--strict``, survived, score), the survivors with
their reasons, the equivalence declarations by verdict (every broken one with
the mutant and script that broke it), and the three scores (declared
equivalents left out; only those whose check held left out; raw); writes
``mutation-score.json``, ``survivors.txt`` (every survivor: where, the change,
the reason) and ``declarations.txt`` (every declaration with its verdict) into
``--out``. Exit code 0 when every planted bug is killed and the score
reaches ``--target``, 1 when not, 2 for a usage error. See
:mod:`.mutation` for what is measured.
"""

from __future__ import annotations

import argparse
import os
from collections import Counter
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..clitools import at_least, output_folder, parse_timeout
from ..render import make_console
from .catalogue import DOMAIN_ORDER, all_cases
from .equivalence import BROKEN, CHECK, SAMPLE, SCRIPTS, TRUST, EquivalenceCheckError
from .mutation import (
    FUZZ_EXAMPLES,
    FUZZ_SEED,
    KILLED,
    EQUIVALENT,
    STRICT,
    SURVIVED,
    TIMEOUT,
    MutationReport,
    SuiteSettings,
    baseline_problems,
    measure,
    only_these,
    plan,
    reason_of,
    survivors_of,
    write_report,
)
from .runner import EXIT_CONFORMANCE_FAILURE, EXIT_PASS, EXIT_USAGE

SHOWN_SURVIVORS = 60
"""Survivors printed in the terminal; every one is in ``survivors.txt``."""


def add_command(commands: Any) -> None:
    """Register ``mutation-score``."""
    cmd = commands.add_parser("mutation-score",
                              help="how many cosmic-ray mutants of impl/ and planted bugs the suite kills")
    cmd.add_argument("--domain", action="append", choices=DOMAIN_ORDER,
                     help="only the files of this domain (repeatable; default every domain)")
    cmd.add_argument("--file", action="append", default=[], metavar="impl/DOMAIN/FILE.py",
                     help="only this file (repeatable)")
    cmd.add_argument("--everything", action="store_true",
                     help="also run the mutants left out by default (self-checks, state views, solver entry points)")
    cmd.add_argument("--operator", action="append", default=[], metavar="TEXT",
                     help="only cosmic-ray operators whose name contains TEXT (repeatable)")
    cmd.add_argument("--sample", type=at_least(1), default=None, metavar="N",
                     help="run about N mutants, evenly spread (default: all)")
    cmd.add_argument("--fuzz-examples", type=at_least(0), default=FUZZ_EXAMPLES, metavar="N",
                     help=f"fuzzed scripts per profile after the catalogue (default {FUZZ_EXAMPLES}; 0: none)")
    cmd.add_argument("--seed", type=int, default=FUZZ_SEED, help=f"the fuzz seed (default {FUZZ_SEED})")
    cmd.add_argument("--case", default=None, metavar="TEXT",
                     help="only catalogue cases whose name contains TEXT (to see a weaker suite's score)")
    cmd.add_argument("--survivors-of", type=Path, default=None, metavar="REPORT",
                     help="only the mutants that survived in an earlier run's mutation-score.json "
                          "(to see quickly what new cases kill)")
    cmd.add_argument("--jobs", type=at_least(1), default=os.cpu_count() or 1,
                     help="mutants run at once (default: cores)")
    cmd.add_argument("--timeout", type=parse_timeout, default=TIMEOUT, metavar="SECONDS",
                     help=f"a mutant still running after this is killed (default {TIMEOUT:g})")
    cmd.add_argument("--equivalents", choices=(CHECK, SAMPLE, TRUST), default=CHECK,
                     help="declared-equivalent survivors: check each one in strict lockstep with the spec, on "
                          "scripts the unmutated impl passes (default), only those on a fixed sample of declared "
                          "lines, or trust them")
    cmd.add_argument("--equivalence-scripts", type=at_least(1), default=SCRIPTS, metavar="N",
                     help=f"scripts per alphabet and profile each checked declaration must pass (default {SCRIPTS})")
    cmd.add_argument("--no-planted", action="store_true", help="skip the planted-bug brokers")
    cmd.add_argument("--target", type=float, default=90.0, metavar="PERCENT",
                     help="the score to reach (default 90)")
    cmd.add_argument("--out", type=output_folder, default=Path("brokerspec-mutation"),
                     help="folder for mutation-score.json and survivors.txt (default ./brokerspec-mutation)")


def run(args: argparse.Namespace) -> int:
    """``brokerspec mutation-score``."""
    console = make_console()
    try:
        the_plan = plan(args.file, args.domain or (), args.operator, args.sample, args.everything)
        if args.survivors_of is not None:
            the_plan = only_these(the_plan, survivors_of(args.survivors_of))
    except ValueError as error:
        console.print(f"mutation-score: {error}", markup=False)
        return EXIT_USAGE
    settings = SuiteSettings(args.fuzz_examples, args.seed, args.case, args.timeout, args.equivalents,
                             args.equivalence_scripts)
    domains = sorted({m.domain for m in the_plan.mutants}, key=DOMAIN_ORDER.index) or list(DOMAIN_ORDER)
    console.print(f"{len(the_plan.mutants)} mutants of {len(the_plan.sources)} files; {args.jobs} at a time; "
                  f"suite: catalogue{'' if args.case is None else f' cases matching {args.case!r}'} + "
                  f"{args.fuzz_examples} fuzzed scripts per profile (seed {args.seed})", markup=False)
    problems = baseline_problems(all_cases(), settings, domains)
    if problems:
        console.print("the suite does not pass the unmutated impl, so no mutant result would mean anything:",
                      markup=False)
        for problem in problems:
            console.print(f"  {problem}", markup=False)
        return EXIT_CONFORMANCE_FAILURE
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as progress:
        tasks: dict[str, Any] = {}

        def show(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = progress.add_task(phase, total=total)
            progress.update(tasks[phase], completed=done)
            if not console.is_terminal and (done == total or done % max(total // 10, 1) == 0):
                console.print(f"{phase}: {done} / {total}", markup=False)  # a log has no live bar

        try:
            report = measure(the_plan, settings, args.jobs, not args.no_planted, show)
        except EquivalenceCheckError as error:
            console.print(f"mutation-score: {error}", markup=False)
            return EXIT_CONFORMANCE_FAILURE
    print_report(console, report)
    data, text = write_report(report, args.out)
    console.print(f"written: {data} and {text}", markup=False)
    met = report.score >= args.target and not report.planted_survivors
    console.print(f"score {report.score:.1f}% (target {args.target:g}%): "
                  f"{'met' if met else 'NOT met'}", markup=False)
    return EXIT_PASS if met else EXIT_CONFORMANCE_FAILURE


def print_report(console: Console, report: MutationReport) -> None:
    """The planted bugs, the per-file table, the survivors and the totals."""
    if report.planted:
        planted = Table(title="planted bugs")
        for column in ("domain", "bug", "killed by", "what showed it"):
            planted.add_column(column)
        for domain, name, outcome in report.planted:
            style = "bold red" if not outcome.killed else ("yellow" if outcome.fate == STRICT else "")
            planted.add_row(domain, name, outcome.fate, outcome.detail[:120], style=style)
        console.print(planted)
    files = Table(title="mutants of impl/ by file")
    for column in ("file", "mutants", "killed", "strict only", "equivalent", "survived", "score"):
        files.add_column(column, justify="left" if column == "file" else "right")
    for name, total, killed, strict, equivalent, survived in report.by_file():
        judged = total - equivalent
        files.add_row(name, str(total), str(killed), str(strict), str(equivalent), str(survived),
                      f"{100 * (killed + strict) / judged:.1f}%" if judged else "-")
    console.print(files)
    survivors = report.survivors()
    if survivors:
        table = Table(title=f"survivors ({len(survivors)})")
        for column in ("where", "operator", "in", "change", "reason"):
            table.add_column(column)
        for mutant, outcome in survivors[:SHOWN_SURVIVORS]:
            table.add_row(f"{mutant.file}:{mutant.line}", mutant.operator.removeprefix("core/"), mutant.definition,
                          f"{outcome.before} -> {outcome.after}", reason_of(outcome))
        console.print(table)
        if len(survivors) > SHOWN_SURVIVORS:
            console.print(f"{len(survivors) - SHOWN_SURVIVORS} more survivors are listed in survivors.txt",
                          markup=False)
    if report.count(EQUIVALENT):
        console.print(f"the {report.count(EQUIVALENT)} equivalent mutants follow the survivors in survivors.txt",
                      markup=False)
    fates = ", ".join(f"{report.count(f)} {f}" for f in (*KILLED, STRICT, EQUIVALENT, SURVIVED) if report.count(f))
    reasons = ", ".join(f"{count} {reason}" for reason, count in report.reasons().most_common())
    equivalents = ", ".join(f"{count} {reason}" for reason, count in report.reasons(EQUIVALENT).most_common())
    left_out = ", ".join(f"{count} {reason}" for reason, count in sorted(report.left_out.items()))
    console.print(f"{len(report.mutants)} mutants: {fates}", markup=False)
    if reasons:
        console.print(f"survivors by reason: {reasons}", markup=False)
    if equivalents:
        console.print(f"equivalent, by reason (left out of the score): {equivalents}", markup=False)
    if left_out:
        console.print(f"not run (no SUT could show them wrong): {left_out}", markup=False)
    killed_planted = sum(1 for *_, o in report.planted if o.killed)
    if report.planted:
        console.print(f"planted bugs killed: {killed_planted} / {len(report.planted)}", markup=False)
    print_declarations(console, report)
    console.print(f"mutation score {report.score:.1f}% ({report.default_score:.1f}% without --strict); "
                  f"{report.checked_score:.1f}% counting declared equivalents not checked as survivors; "
                  f"{report.raw_score:.1f}% raw, counting every equivalent mutant as a survivor; "
                  f"{report.seconds:.0f} s", markup=False)


def print_declarations(console: Console, report: MutationReport) -> None:
    """The declarations by verdict, and a table of the broken ones (each mutant and what showed it)."""
    if not report.declarations:
        return
    counts = Counter(entry.verdict for entry in report.declarations)
    checked = sum(entry.held for entry in report.declarations)
    console.print(f"equivalence declarations: {len(report.declarations)} ("
                  + ", ".join(f"{n} {verdict}" for verdict, n in counts.most_common())
                  + f"); {checked} mutants held over {report.settings.equivalence_scripts} scripts per alphabet "
                  "and profile; all in declarations.txt", markup=False)
    broken = [(entry, label, detail) for entry in report.declarations if entry.verdict == BROKEN
              for label, detail in entry.broken]
    if broken:
        table = Table(title=f"broken declarations ({counts[BROKEN]}): their mutants are survivors")
        for column in ("where", "declared", "mutant", "what told it apart"):
            table.add_column(column)
        for entry, label, detail in broken[:SHOWN_SURVIVORS]:
            table.add_row(entry.declaration.label, entry.declaration.reason[:60], label.split(" ", 1)[1],
                          detail[:200])
        console.print(table)
