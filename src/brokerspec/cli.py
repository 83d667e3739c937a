"""The ``brokerspec`` command.

Subcommands
-----------
``brokerspec check``
    Runs the differential check of every domain (address resolution,
    duplicate detection): the spec, the reference and the fast
    implementation in lockstep under Hypothesis, for every bundled profile
    (and, for address resolution, its core-protocol variant with the FQQN
    address part ignored), within a time budget. Prints a summary table;
    writes every divergence as a trace file.
``brokerspec replay FILE [--sut CMD]``
    Replays a trace against the spec, the reference and the fast
    implementation (and a system under test), step by step, and shows
    where they part. With ``--sut`` the verdict is the SUT's (recorded
    outcomes are shown, judged only with ``--judge-recorded``), and
    where the rules allow several outcomes any allowed one agrees
    unless ``--strict``.
``brokerspec crash run|points|trial|prefix ...``
    The crash-consistency harness of the duplicate-detection store: kills
    the fast broker with SIGKILL at random points, or at every write point
    of its XA steps, and checks what survives against the spec (see
    :mod:`brokerspec.crash`).
``brokerspec generate --histories N --faults K --out DIR``
    Writes a synthetic corpus (histories of both domains, or
    duplicate-detection streams) recorded from the fast implementation,
    with K faults taken from planted-bug brokers, and where they are.
``brokerspec audit INPUT --out DIR``
    Replays recorded histories or streams through the spec on Spark and
    writes the divergences, the quarantined rows and a report
    (see :mod:`brokerspec.audit`).
``brokerspec conform --sut CMD --profile P``, ``brokerspec catalogue export DIR``
    The conformance catalogue against any system under test, and the
    catalogue as data (see :mod:`brokerspec.conform`).
``brokerspec profiles``
    Lists the profiles and their options.

Exit codes (also in the README): 0 everything agreed; 1 a divergence or
disagreement was found; 2 usage error or unreadable input (bad trace file,
unknown profile or option, a bad ``--timeout``, an output path that can
never be written); 3 the system under test failed (crashed, hung, answered
garbage) and nothing disagreed (``conform``, ``fuzz``, ``replay --sut``); 4
nothing was checked (``conform`` with every case skipped, ``fuzz`` with no
domain offered or every scenario discarded).
Options are checked as they are parsed, before any work starts
(:mod:`brokerspec.clitools`), and text from outside is printed literally.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from brokerspec.spec import PROFILES, BrokerspecError, Profile, get_profile

from .artemis.cli import add_command as add_artemis_command
from .artemis.cli import run as run_artemis_command
from .broker.cli import add_broker_command, run_broker_command
from .audit.cli import add_commands as add_audit_commands
from .audit.cli import run_audit_command, run_generate
from .check.domains import DOMAINS, Domain, SubjectFactory
from .check.runner import CheckResult, check_for
from .check_progress import CheckProgress, profile_label
from .clitools import clean, escaped, literal, output_folder, parse_timeout
from .clitools import parse_duration as parse_duration
from .clitools import parse_setting as parse_setting
from .conform.cli import COMMANDS as CONFORM_COMMANDS
from .conform.cli import add_commands as add_conform_commands
from .conform.cli import make_sut
from .conform.cli import run_command as run_conform_command
from .conform.sut import subject_factory
from .explain import print_explanation
from .render import check_table, make_console, replay_legend, replay_table
from .replay import replay
from .trace import read_trace

EXIT_OK = 0
EXIT_DIVERGENCE = 1
EXIT_USAGE = 2
EXIT_SUT_FAILURE = 3

CORE_VARIANT = ("addressing.fqqn_checks_address", "false")


class UsageError(BrokerspecError):
    """A command line that cannot be carried out."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every subcommand."""
    parser = argparse.ArgumentParser(prog="brokerspec", description="An executable specification of "
                                     "message-broker semantics, checked against a reference and a fast implementation.")
    commands = parser.add_subparsers(dest="command", required=True)

    check = commands.add_parser("check", help="differential check of spec, reference and impl")
    check.add_argument("--domain", action="append", choices=sorted(DOMAINS),
                       help="domain to check (repeatable; default: every domain)")
    check.add_argument("--profile", action="append", choices=sorted(PROFILES),
                       help="profile to check (repeatable; default: every bundled profile)")
    check.add_argument("--set", action="append", type=parse_setting, default=[], metavar="DOMAIN.OPTION=VALUE",
                       help="override a profile option for every checked profile (repeatable)")
    check.add_argument("--no-core-variants", action="store_true",
                       help="skip the variants with the FQQN address part ignored (Artemis's queue query)")
    check.add_argument("--budget", type=parse_duration, default=30.0, metavar="DURATION",
                       help="total time budget, shared by the domains and profiles (default 30s)")
    check.add_argument("--layers", default="reference,impl", help="comma-separated layers (default reference,impl)")
    check.add_argument("--permissive", action="store_true",
                       help="accept any outcome the rules allow instead of Artemis's exact tie-breaking (only the "
                            "balancing domain has several; the other domains are checked as usual)")
    check.add_argument("--seed", type=int, default=None, help="seed for a repeatable run")
    check.add_argument("--out", type=output_folder, default="brokerspec-failures",
                       help="folder for failure traces (default ./brokerspec-failures)")

    replay_cmd = commands.add_parser("replay", help="replay a trace against spec, reference and impl")
    replay_cmd.add_argument("trace", type=Path, help="a trace file (JSON lines)")
    replay_cmd.add_argument("--layers", default="reference,impl", help="comma-separated layers")
    replay_cmd.add_argument("--sut", default=None, metavar="CMD",
                            help="also replay against this system under test (a command line or inproc:LAYER), "
                                 "outcomes only; with --layers '' only against it. The verdict is then whether the "
                                 "SUT and the layers agree with the spec: the recorded outcomes are shown, not judged")
    replay_cmd.add_argument("--judge-recorded", action="store_true",
                            help="with --sut, also count a recorded outcome that differs from the spec's as a "
                                 "difference (always so without --sut)")
    replay_cmd.add_argument("--strict", action="store_true",
                            help="demand the spec's exact outcome from the SUT where the rules allow several "
                                 "(load balancing); by default any allowed one agrees, as in conform")
    replay_cmd.add_argument("--timeout", type=parse_timeout, default=10.0, metavar="SECONDS",
                            help="per-request timeout for a subprocess SUT, a positive number (default 10)")

    explain_cmd = commands.add_parser("explain", help="a trace step by step: the spec's state as tables and the "
                                      "rule that decided each outcome")
    explain_cmd.add_argument("trace", type=Path, help="a trace file (JSON lines)")

    crash = commands.add_parser("crash", help="SIGKILL crash trials of the duplicate-detection store",
                                add_help=False)
    crash.add_argument("rest", nargs=argparse.REMAINDER, help="run|trial|prefix and their options")

    commands.add_parser("profiles", help="list the profiles and their options")
    add_audit_commands(commands, parse_setting)
    add_conform_commands(commands, parse_setting, parse_duration)
    add_artemis_command(commands)
    add_broker_command(commands, parse_setting)
    return parser


def choose_layers(text: str, domain: Domain) -> dict[str, SubjectFactory]:
    """The layers of ``domain`` named in a comma-separated list."""
    layers = domain.layers
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in layers]
    if unknown or not names:
        raise UsageError(f"unknown layer {', '.join(unknown) or '(none given)'}; layers: {', '.join(layers)}")
    return {n: layers[n] for n in names}


def checked_profiles(args: argparse.Namespace, domain: Domain) -> list[Profile]:
    """The profiles a ``check`` of ``domain`` covers: chosen (or all), with overrides, plus core variants."""
    names = args.profile or list(PROFILES)
    profiles = [get_profile(n, tuple(args.set)) for n in names]
    if domain.profile_free:
        return profiles[:1]
    if domain.name == "addressing" and not args.no_core_variants:
        profiles += [p.with_option(*CORE_VARIANT) for p in profiles
                     if p.addressing.fqqn_checks_address and CORE_VARIANT[0] not in dict(p.overrides)]
    return profiles


def run_check(args: argparse.Namespace) -> int:
    """``brokerspec check``."""
    domains = [DOMAINS[name] for name in (args.domain or list(DOMAINS))]
    runs = [(domain, choose_layers(args.layers, domain), profile)
            for domain in domains for profile in checked_profiles(args, domain)]
    console = make_console()
    share = args.budget / len(runs)
    results: list[CheckResult] = []
    with CheckProgress(console, len(runs)) as progress:  # a live bar in a terminal, else a line per run
        for domain, layers, profile in runs:
            show = progress.start(domain.name, profile)
            permissive = args.permissive and domain.judge is not None
            results.append(check_for(profile, layers, share, args.out, args.seed, show, domain, permissive))
            progress.finish(results[-1])
    console.print(check_table(results))
    failed = [(r, r.divergence) for r in results if r.divergence is not None]
    for result, divergence in failed:
        console.print(literal(f"\n{result.domain} {profile_label(result.domain, result.profile)}",
                              style="bold red"))
        console.print(literal(divergence.explain()))
        console.print(literal(f"replay with: brokerspec replay {result.trace_path}"))
    total = sum(r.steps for r in results)
    console.print(f"{len(results)} domain and profile runs, {total} lockstep steps, "
                  f"{len(failed)} divergence{'s' if len(failed) != 1 else ''}")
    return EXIT_DIVERGENCE if failed else EXIT_OK


def run_replay(args: argparse.Namespace) -> int:
    """``brokerspec replay FILE``."""
    trace = read_trace(args.trace)
    domain = DOMAINS[trace.domain]
    layers = choose_layers(args.layers, domain) if args.layers or args.sut is None else {}
    sut = None
    if args.sut is not None:
        sut = make_sut(args.sut, args.timeout)
        layers["sut"] = subject_factory(sut, trace.domain)
    permissive = ("sut",) if sut is not None and not args.strict else ()
    try:
        report = replay(trace, layers, judge_recorded=sut is None or args.judge_recorded, permissive=permissive)
    finally:
        if sut is not None:
            sut.close()
    console = make_console()
    if trace.note:
        console.print(literal(f"trace note: {trace.note}"))
    console.print(replay_table(report))
    console.print(replay_legend(report))
    for line in report.explain_first_difference():
        console.print(literal(line))
    if report.disagrees:
        return EXIT_DIVERGENCE
    failure = report.sut_failure
    if failure is not None:
        _, error, kind = failure
        console.print(literal(f"the SUT failed ({kind.value}) and nothing disagreed with the spec: {error}",
                              style="bold magenta"))
        return EXIT_SUT_FAILURE
    return EXIT_OK


def run_profiles() -> int:
    """``brokerspec profiles``."""
    console = make_console()
    for profile in PROFILES.values():
        console.print(f"[bold]{escaped(profile.name)}[/]: {escaped(profile.description)}", highlight=False)
        for domain, options in profile.options().items():
            for option, value in options.items():
                console.print(f"  {domain}.{option} = {value}", markup=False)
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["crash"]:  # the harness parses its own options, --help included
        from .crash import main as crash_main

        return crash_main(arguments[1:])
    parser = build_parser()
    args = parser.parse_args(arguments)
    try:
        if args.command == "check":
            return run_check(args)
        if args.command == "replay":
            return run_replay(args)
        if args.command == "explain":
            differing = print_explanation(make_console(), read_trace(args.trace))
            return EXIT_DIVERGENCE if differing else EXIT_OK
        if args.command == "audit":
            return run_audit_command(args)
        if args.command == "generate":
            return run_generate(args)
        if args.command in CONFORM_COMMANDS:
            return run_conform_command(args)
        if args.command == "artemis":
            return run_artemis_command(args)
        if args.command == "broker":
            return run_broker_command(args)
        return run_profiles()
    except BrokerspecError as error:  # TraceError among them
        print(f"brokerspec: error: {clean(error)}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
