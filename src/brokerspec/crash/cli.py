"""``brokerspec crash``: the command line of the crash-consistency trials."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from brokerspec.clitools import at_least, clean, parse_setting
from brokerspec.spec import PROFILES, BrokerspecError, get_profile

from .checks import check_prefix
from .trials import run_child, run_crash_trials, run_trial, run_write_point_trials
from .workload import DEFAULT_BROKER, DEFAULT_STEPS


def broker_name(text: str) -> str:
    """An argument type for ``--broker``: ``module:Class``, importable as the children will import it."""
    module_name, sep, class_name = text.partition(":")
    if not sep or not module_name or not class_name:
        raise argparse.ArgumentTypeError(f"expected module:Class, got {clean(text)!r}")
    folder = os.getcwd()  # a child runs ``python -m``, which puts the working folder first on its path
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        module = importlib.import_module(module_name)
    except Exception as error:
        raise argparse.ArgumentTypeError(f"cannot import {clean(module_name)!r}: {clean(error)}") from None
    finally:
        if added:
            sys.path.remove(folder)
    if not isinstance(getattr(module, class_name, None), type):
        raise argparse.ArgumentTypeError(f"{clean(module_name)} has no class {clean(class_name)!r}")
    return text


def kill_point(text: str) -> tuple[int, int]:
    """An argument type for ``--kill-at``: ``STEP:POINT``, both whole numbers, the step from 1."""
    step, sep, point = text.partition(":")
    if not sep or not step.isdigit() or not point.isdigit() or int(step) < 1:
        raise argparse.ArgumentTypeError(f"expected STEP:POINT (a step from 1, a point from 0), got {clean(text)!r}")
    return int(step), int(point)


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``run``, ``points``, ``trial``, ``prefix`` and ``child``; every value is checked as it is
    parsed."""
    parser = argparse.ArgumentParser(prog="brokerspec crash", description="crash-consistency trials")
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("run", "points", "trial", "prefix", "child"):
        sub = commands.add_parser(name)
        if name in ("run", "points"):
            sub.add_argument("--profile", action="append", choices=sorted(PROFILES),
                             help="repeat for several (default: every profile)")
        else:
            sub.add_argument("--profile", default="artemis-latest", choices=sorted(PROFILES))
        sub.add_argument("--set", default=[], action="append", type=parse_setting, metavar="DOMAIN.OPTION=VALUE")
        sub.add_argument("--seed", type=int, default=1)
        sub.add_argument("--steps", type=at_least(1), default=DEFAULT_STEPS)
        sub.add_argument("--broker", type=broker_name, default=DEFAULT_BROKER, metavar="MODULE:CLASS")
        if name != "points":
            sub.add_argument("--no-prepare", dest="prepare", action="store_false",
                             help="workloads without XA steps (prepare, second phase), as before they existed")
        if name in ("run", "points"):
            sub.add_argument("--workers", type=at_least(1), default=2)
        if name in ("trial", "child"):
            sub.add_argument("--kill-at", type=kill_point, metavar="STEP:POINT",
                             help="the child kills itself at this write point instead of being killed")
    commands.choices["run"].add_argument("--trials", type=at_least(1), default=200)
    commands.choices["points"].add_argument("--workloads", type=at_least(1), default=3,
                                            help="workloads per profile whose XA write points are all tried")
    commands.choices["points"].add_argument("--every-step", action="store_true",
                                            help="try every step's write points, not only the XA steps'")
    commands.choices["prefix"].add_argument("--durable", type=at_least(0), required=True)
    commands.choices["child"].add_argument("--store", type=Path, required=True)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``run``, ``points``, ``trial``, ``prefix`` and ``child`` (what the others start)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    python_path = tuple(filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep)))
    try:
        names = (args.profile or list(PROFILES)) if args.command in ("run", "points") else [args.profile]
        profiles = [get_profile(name, tuple(args.set)) for name in names]
    except BrokerspecError as error:
        print(f"brokerspec crash: error: {clean(error)}", file=sys.stderr)
        return 2
    if args.command == "prefix" and args.durable > args.steps:
        print(f"brokerspec crash: error: --durable {args.durable} is more than --steps {args.steps}", file=sys.stderr)
        return 2
    if args.command in ("trial", "child") and args.kill_at is not None and args.kill_at[0] > args.steps:
        print(f"brokerspec crash: error: --kill-at step {args.kill_at[0]} is beyond --steps {args.steps}",
              file=sys.stderr)
        return 2
    if args.command == "child":
        run_child(args.store, profiles[0], args.seed, args.steps, args.broker, args.prepare, args.kill_at)
        return 0
    if args.command == "trial":
        result = run_trial(args.seed, profiles[0], args.steps, args.broker, python_path, prepare=args.prepare,
                           kill_at=args.kill_at)
        print(result.describe())
        return 0 if result.ok else 1
    if args.command == "prefix":
        with tempfile.TemporaryDirectory(prefix="brokerspec-crash-") as name:
            result = check_prefix(profiles[0], args.seed, args.steps, args.durable, Path(name), args.broker,
                                  args.prepare)
        print(result.describe())
        return 0 if result.ok else 1
    if args.command == "points":
        report = run_write_point_trials(args.workloads, args.seed, profiles, steps=args.steps, broker=args.broker,
                                        python_path=python_path, workers=args.workers, every_step=args.every_step)
    else:
        report = run_crash_trials(args.trials, args.seed, profiles, steps=args.steps, broker=args.broker,
                                  python_path=python_path, workers=args.workers, prepare=args.prepare)
    print(report.summary())
    return 0 if report.ok else 1
