"""The command-line side of conformance: ``conform``, ``catalogue``, ``fuzz``, ``diff`` and ``mutation-score``.

Introduction
------------
Each command lives in its own module (:mod:`.cli_conform`, :mod:`.cli_fuzz`,
:mod:`.cli_diff`, :mod:`.cli_catalogue`, :mod:`.mutation_cli`); what they
share (building the SUT from ``--sut``, the SUT options) is in
:mod:`.cli_common`. Exit codes: 0 passed, 1 conformance failure, 2 usage
error, 3 SUT failure, 4 nothing was checked (see :mod:`.runner`).

Options are checked while they are parsed (:mod:`brokerspec.clitools`): a
``--timeout`` that is not a positive finite number, a count below its
minimum or an output path that can never be written is a usage error
before anything runs. What a SUT says (its name, its error messages) and
the ``--sut`` command line are printed literally, never as markup.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from . import cli_catalogue, cli_conform, cli_diff, cli_fuzz
from .cli_common import ConformUsageError, make_sut
from .mutation_cli import add_command as add_mutation_command
from .mutation_cli import run as run_mutation_score
from .runner import EXIT_USAGE

COMMANDS = ("conform", "catalogue", "fuzz", "diff", "mutation-score")


def add_commands(commands: Any, parse_setting: Callable[[str], tuple[str, str]],
                 parse_duration: Callable[[str], float]) -> None:
    """Register the conformance commands on the top-level parser's subcommands."""
    cli_conform.add_parser(commands, parse_setting, parse_duration)
    cli_fuzz.add_parser(commands, parse_setting, parse_duration)
    cli_diff.add_parser(commands, parse_setting, parse_duration)
    cli_catalogue.add_parser(commands)
    add_mutation_command(commands)


def run_command(args: argparse.Namespace) -> int:
    """Dispatch a conformance command."""
    runners = {"conform": cli_conform.run, "fuzz": cli_fuzz.run, "diff": cli_diff.run,
               "mutation-score": run_mutation_score, "catalogue": cli_catalogue.run}
    return runners[args.command](args)


__all__ = ["COMMANDS", "EXIT_USAGE", "ConformUsageError", "add_commands", "make_sut", "run_command"]
