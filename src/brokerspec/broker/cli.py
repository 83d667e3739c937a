"""``brokerspec broker``: start the STOMP broker in the foreground.

Introduction
------------
Parses the options, opens the model on its store, starts the I/O layer and
serves until SIGTERM or SIGINT, then closes every connection (their
sessions give back what they held) and the store. The first line it prints
says where it listens, so a script that asked for ``--port 0`` can read the
port the system chose::

    brokerspec broker: STOMP 1.2 on 127.0.0.1:40123, profile artemis-latest, store broker-data/broker.db
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import re
import signal
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from brokerspec.spec import BrokerspecError, PROFILES, get_profile

from .io import BrokerServer
from .model import Model
from .record import Recorder

STORE_FILE = "broker.db"


class BrokerUsageError(BrokerspecError):
    """A ``brokerspec broker`` command line that cannot be carried out."""


def parse_heartbeat(text: str) -> tuple[int, int]:
    """``"sx,sy"`` in milliseconds, as STOMP writes a heart-beat header."""
    match = re.fullmatch(r"\s*(\d{1,9})\s*,\s*(\d{1,9})\s*", text)
    if match is None:
        raise argparse.ArgumentTypeError(f"a heart-beat is two millisecond counts such as 10000,10000, not {text!r}")
    return int(match.group(1)), int(match.group(2))


def add_broker_command(commands: Any, parse_setting: Callable[[str], tuple[str, str]]) -> None:
    """Register ``brokerspec broker`` on the top-level subcommands."""
    broker = commands.add_parser("broker", help="run a STOMP 1.2 broker that decides as the spec says",
                                 description="A STOMP 1.2 broker whose name model, duplicate detection and "
                                 "delivery follow the spec under a profile (see docs/broker.md).")
    broker.add_argument("--host", default="127.0.0.1", help="interface to listen on (default: 127.0.0.1)")
    broker.add_argument("--port", type=int, default=61613, help="TCP port; 0 picks a free one (default: 61613)")
    broker.add_argument("--data", type=Path, default=None,
                        help=f"folder for the durable store ({STORE_FILE}); without it the store is in memory "
                        "and nothing survives a restart")
    broker.add_argument("--profile", choices=sorted(PROFILES), default="artemis-latest",
                        help="whose semantics to follow (default: artemis-latest)")
    broker.add_argument("--set", action="append", default=[], type=parse_setting, metavar="DOMAIN.OPTION=VALUE",
                        help="override one profile option (repeatable)")
    broker.add_argument("--heartbeat", type=parse_heartbeat, default=(0, 0), metavar="SX,SY",
                        help="heart-beats the server offers, in ms (default: 0,0, none)")
    broker.add_argument("--trace", type=Path, default=None,
                        help="write every name-model decision to this addressing trace (brokerspec replay reads it)")
    broker.add_argument("--explain", action="store_true",
                        help="log the rule behind each routing and duplicate decision to stderr")


async def serve(model: Model, host: str, port: int, heartbeat: tuple[int, int],
                announce: Callable[[int], None]) -> None:
    """Serve until SIGTERM or SIGINT."""
    server = BrokerServer(model, host, port, heartbeat)
    bound = await server.start()
    announce(bound)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await server.serve_until(stop)


def main(argv: list[str] | None = None) -> int:
    """``python -m brokerspec.broker [options]``: the options of ``brokerspec broker``; errors as that prints them."""
    from ..clitools import parse_setting

    parser = argparse.ArgumentParser(prog="python -m brokerspec.broker")
    add_broker_command(_Single(parser), parse_setting)
    try:
        return run_broker_command(parser.parse_args(argv))
    except BrokerspecError as error:
        print(f"brokerspec broker: error: {error}", file=sys.stderr)
        return 2


class _Single:
    """Stands for the subcommand list, so that ``add_broker_command`` fills one parser."""

    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self.parser = parser

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        del name
        if "description" in kwargs:
            self.parser.description = kwargs["description"]
        return self.parser


def run_broker_command(args: argparse.Namespace) -> int:
    """``brokerspec broker``: 0 after a clean stop."""
    if not 0 <= args.port <= 65535:
        raise BrokerUsageError(f"--port must be between 0 and 65535, not {args.port}")
    profile = get_profile(args.profile, tuple(args.set))
    logging.basicConfig(level=logging.INFO if args.explain else logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(name)s %(message)s")
    path = None
    if args.data is not None:
        try:
            args.data.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise BrokerUsageError(f"--data {args.data}: cannot make the store's folder: "
                                   f"{error.strerror or error}") from None
        path = args.data / STORE_FILE
    try:
        recorder = Recorder(profile, args.trace, args.explain)
    except OSError as error:
        raise BrokerUsageError(f"--trace {args.trace}: cannot write it: {error.strerror or error}") from None
    try:
        model = Model(profile, path, recorder)
    except (sqlite3.Error, ValueError) as error:
        recorder.close()
        raise BrokerUsageError(f"--data {args.data}: {path} is not a store this broker reads: {error}") from None
    store = str(path) if path is not None else "in memory"

    def announce(port: int) -> None:
        print(f"brokerspec broker: STOMP 1.2 on {args.host}:{port}, profile {profile.name}, store {store}",
              flush=True)

    try:
        asyncio.run(serve(model, args.host, args.port, args.heartbeat, announce))
    except OSError as error:
        raise BrokerUsageError(f"cannot listen on {args.host}:{args.port}: {error.strerror or error}") from None
    finally:
        model.close()
    if recorder.divergences:
        print(f"brokerspec broker: {recorder.divergences} decisions differed from the spec (see the log)",
              file=sys.stderr)
    return 0
