"""``brokerspec artemis``: fetch Artemis releases, and measure the spec's fidelity to them.

Introduction
------------
``brokerspec artemis fetch`` brings every release in the table (or those
named) from Maven Central into the cache and builds the adapter's Java
programs for them, so a later run starts at once; ``.ci/run`` calls it.
``brokerspec artemis fidelity`` runs the catalogue against each release
(:mod:`.fidelity`), prints the totals and every difference, writes the
generated block of ``docs/artemis-fidelity.md`` and a JSON report. It exits
0 when every case that ran agrees, 1 when a case differs, 3 when a release
could not be run. The ``--page`` and ``--json`` paths are checked before
any broker starts; what a broker says is printed literally.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.progress import Progress, TextColumn, TimeElapsedColumn

from brokerspec.conform.runner import CaseResult

from ..clitools import literal, output_file
from ..render import make_console
from .fidelity import AGREE, DIFFER, MARKS, run_fidelity, write_report
from .releases import RELEASES, ArtemisUnavailable, ensure_distribution, ensure_java_build
from .sut import DOMAINS

EXIT_AGREE, EXIT_DIFFER, EXIT_UNAVAILABLE = 0, 1, 3


def add_command(commands: Any) -> None:
    """Register ``artemis fetch`` and ``artemis fidelity``."""
    artemis = commands.add_parser("artemis", help="real Apache ActiveMQ Artemis releases: fetch them, and run the "
                                                  "catalogue against them")
    actions = artemis.add_subparsers(dest="action", required=True)
    fetch = actions.add_parser("fetch", help="download releases from Maven Central and build the adapter for them")
    fetch.add_argument("--release", action="append", choices=sorted(RELEASES),
                       help="a release (repeatable; default every release in the table)")
    fidelity = actions.add_parser("fidelity", help="the catalogue against each release: agree, differ or not "
                                                   "expressible, case by case")
    fidelity.add_argument("--release", action="append", choices=sorted(RELEASES),
                          help="a release (repeatable; default every release in the table)")
    fidelity.add_argument("--domain", action="append", choices=DOMAINS,
                          help="only this domain (repeatable; default every domain the adapter speaks)")
    fidelity.add_argument("--case", default=None, metavar="TEXT", help="only cases whose name contains TEXT")
    fidelity.add_argument("--page", type=output_file, default=None, metavar="MARKDOWN",
                          help="write the table into this page's generated block (docs/artemis-fidelity.md)")
    fidelity.add_argument("--json", type=output_file, default="brokerspec-fidelity/fidelity.json",
                          help="JSON report (default brokerspec-fidelity/fidelity.json)")


def run(args: argparse.Namespace) -> int:
    """Dispatch ``artemis fetch`` or ``artemis fidelity``."""
    console = make_console()
    versions = args.release or list(RELEASES)
    if args.action == "fetch":
        for version in versions:
            try:
                home = ensure_distribution(version)
                classes = ensure_java_build(version)
            except ArtemisUnavailable as problem:
                console.print(literal(f"Artemis {version}: {problem}"))
                return EXIT_UNAVAILABLE
            console.print(literal(f"Artemis {version}: {home} (adapter classes in {classes})"))
        return EXIT_AGREE
    domains = tuple(args.domain or DOMAINS)
    with Progress(TextColumn("{task.description}"), TimeElapsedColumn(), console=console, transient=True) as progress:
        task = progress.add_task("starting Artemis", total=None)
        counts = {version: 0 for version in versions}

        def show(version: str, result: CaseResult) -> None:
            counts[version] += 1
            progress.update(task, description=f"Artemis {version}: {counts[version]} cases, {result.case.name}")

        try:
            runs = run_fidelity(versions, domains, args.case, show)
        except ArtemisUnavailable as problem:
            console.print(literal(f"Artemis cannot be run here: {problem}"))
            return EXIT_UNAVAILABLE
    for release_run in runs:
        totals = ", ".join(f"{release_run.count(mark)} {mark}" for mark in MARKS if release_run.count(mark))
        console.print(f"Artemis {release_run.release} under {release_run.profile}: {totals}; "
                      f"{release_run.cases_per_minute:.0f} cases/min, broker start {release_run.start_seconds:.1f} s",
                      markup=False)
        for mark in release_run.marks:
            if mark.mark == DIFFER:
                console.print(literal(f"  differ  {mark.case} (step {mark.step}): {mark.note}"))
    if args.page is not None:
        write_report(runs, args.page, args.json)
        console.print(literal(f"wrote {args.page} and {args.json}"))
    else:
        write_report(runs, Path(args.json).with_suffix(".md"), args.json)
        console.print(literal(f"wrote {args.json} and {Path(args.json).with_suffix('.md')}"))
    ran = [m for r in runs for m in r.marks if m.mark in (AGREE, DIFFER)]
    if not ran:
        console.print("no case ran against a broker: nothing was checked", markup=False)
        return EXIT_UNAVAILABLE
    return EXIT_DIFFER if any(m.mark == DIFFER for m in ran) else EXIT_AGREE


__all__ = ["add_command", "run"]
