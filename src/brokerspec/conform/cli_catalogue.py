"""``brokerspec catalogue export|list``: the conformance catalogue as data and as a table."""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.table import Table

from brokerspec.spec import PROFILES, Profile, get_profile
from brokerspec.spec.balancing import allowed_outcomes, initial_state

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


PERMISSIVE_DOMAINS = ("balancing",)
"""The domains whose rules allow several outcomes at a step, so their cases export ``allowed`` too."""

MAX_STATES = 4096
"""The most distinct states one step of an exported case may lead to (the catalogue's cases reach 36)."""


def allowed_graph(case: Case, profile: Profile) -> list[list[dict[str, Any]]]:
    """Every outcome the rules allow at each step of ``case``, whichever allowed outcomes came before.

    Per step, a list of ``{"from", "outcome", "to"}``: from the ``from``-th
    state before the step, ``outcome`` is allowed and leads to the
    ``to``-th state after it. Before step 1 there is one state, 0. States
    are numbered per step; equal states are one. Outcomes are encoded as
    in ``expected`` (the trace and protocol JSON). The spec's allowed
    choices are ``brokerspec.spec.balancing.allowed_outcomes`` (which
    binding, redistribution target or consumer, BindingsImpl.getNextBinding
    and BindingsImpl.redistribute).
    """
    frontier = [initial_state(case.profile_for(profile))]
    steps: list[list[dict[str, Any]]] = []
    for number, command in enumerate(case.commands, start=1):
        following: dict[Any, int] = {}
        edges: list[dict[str, Any]] = []
        for origin, state in enumerate(frontier):
            for next_state, outcome in allowed_outcomes(state, command):
                target = following.setdefault(next_state, len(following))
                edges.append({"from": origin, "outcome": encode_outcome(outcome), "to": target})
        if len(following) > MAX_STATES:
            raise RuntimeError(f"{case.name} under {profile.name}: step {number} leads to more than {MAX_STATES} "
                               "allowed states")
        steps.append(edges)
        frontier = list(following)
    return steps


def export_case(case: Case, profiles: list[Profile]) -> dict[str, Any]:
    """One case as JSON data: its script as trace steps, the spec's outcomes per profile, and for a domain
    whose rules allow several outcomes, every allowed one (:func:`allowed_graph`)."""
    applying = [p for p in profiles if case.applies_to(p)]
    data = {
        "name": case.name, "domain": case.domain, "summary": case.summary, "source": case.source,
        "rules": list(case.rules), "profiles": list(case.profiles),
        "overrides": {dotted: value for dotted, value in case.overrides},
        "steps": [{"op": c.op, "args": encode_command(c)} for c in case.commands],
        "expected": {p.name: [encode_outcome(o) for o in case.expected(p)] for p in applying},
        "rules_exercised": {p.name: list(case.rules_exercised(p)) for p in applying},
    }
    if case.domain in PERMISSIVE_DOMAINS:
        data["allowed"] = {p.name: allowed_graph(case, p) for p in applying}
    return data


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


__all__ = ["add_parser", "allowed_graph", "export_case", "run"]
