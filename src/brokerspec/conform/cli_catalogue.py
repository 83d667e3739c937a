"""``brokerspec catalogue export|list``: the conformance catalogue as data and as a table."""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.table import Table

from brokerspec.spec import PROFILES, Profile, get_profile

from ..clitools import literal, output_folder
from ..codec import encode_command, encode_outcome
from ..render import make_console
from .catalogue import DOMAIN_ORDER, Case
from .cli_common import ConformUsageError, checked_catalogue
from .runner import EXIT_PASS


def add_parser(commands: Any) -> None:
    """Register ``catalogue`` with its ``export`` and ``list`` actions."""
    catalogue = commands.add_parser("catalogue", help="the conformance catalogue as data")
    actions = catalogue.add_subparsers(dest="action", required=True)
    export = actions.add_parser("export", help="write the cases as JSON-lines files, one per domain")
    export.add_argument("dir", type=output_folder, help="folder to write into (created if missing)")
    export.add_argument("--profile", action="append", choices=sorted(PROFILES),
                        help="profiles to compute expected outcomes for (repeatable; default all)")
    actions.add_parser("list", help="list the cases with their rules and profiles")


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


def run(args: argparse.Namespace) -> int:
    """Dispatch ``catalogue export`` or ``catalogue list``."""
    return run_export(args) if args.action == "export" else run_list()


__all__ = ["add_parser", "export_case", "run"]
