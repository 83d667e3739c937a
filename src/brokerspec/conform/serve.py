"""Serve one of brokerspec's layers over the SUT protocol on standard input and output.

Introduction
------------
``python -m brokerspec.conform.serve --layer impl`` is a complete SUT: it
reads requests line by line, answers each with one line, and exits on
``bye`` or at the end of its input. It is the subprocess adapter's own test
subject and a worked example of the protocol in Python; ``--layer
planted:NAME`` serves a broker with a planted bug, which the suite must
catch through the same pipe. Malformed requests get an ``error`` reply that
says what was wrong; the server itself never stops on one.

It speaks protocol versions 1 to 3 (``--protocol 2`` makes it a version 2
SUT, which is never asked to ``prepare``; ``--protocol 1`` one that is asked
no query either): its hello lists them, and each reply carries the version
of the request it answers. An operation the request's version lacks gets an
``error`` reply. Its hello announces ``pipelining`` (:data:`PIPELINING` requests in flight,
or ``--pipelining N``; 1 leaves it out): it reads requests as they come,
answers every complete line it has read in order, and writes the replies to
all of them at once, so a client that writes ahead gets one write back per
read instead of one per request.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import IO, Any

from brokerspec.spec import BrokerspecError, get_profile, is_query

from .. import jsonin
from ..codec import CodecError, decode_command, encode_outcome
from .pipe import READ_CHUNK
from .protocol import LATEST_VERSION, PROTOCOL_VERSION, VERSIONS, version_needed
from .sut import in_process_layers


PIPELINING = 256
"""The most requests in flight the server announces by default (it reads them as they come)."""


class Server:
    """The protocol's state: which layer, and the broker of the last reset."""

    def __init__(self, layer: str, pipelining: int = 1, protocol: int = LATEST_VERSION) -> None:
        self.layer = layer
        self.pipelining = pipelining
        self.versions = tuple(v for v in VERSIONS if v <= protocol)
        self.version = PROTOCOL_VERSION
        """The version of the request being answered: every reply carries it."""
        self.factories = in_process_layers(layer)
        self.domain: str | None = None
        self.subject: Any = None

    def answer(self, request: Any) -> dict[str, Any] | None:
        """The reply to one request (None for ``bye``)."""
        if not isinstance(request, dict):
            return self.error("a request must be a JSON object")
        version = request.get("v")
        if type(version) is not int or version not in self.versions:
            self.version = PROTOCOL_VERSION
            return self.error(f"protocol version {version!r} is not spoken here; this server speaks "
                              f"{', '.join(map(str, self.versions))}")
        self.version = version
        kind = request.get("type")
        if kind == "hello" and version != PROTOCOL_VERSION:
            self.version = PROTOCOL_VERSION
            return self.error(f"a hello request is always protocol version {PROTOCOL_VERSION}, not {version}")
        if kind == "hello":
            hello = {"v": version, "type": "hello", "name": f"brokerspec {self.layer}",
                     "domains": list(self.factories)}
            if self.pipelining > 1:
                hello["pipelining"] = self.pipelining
            if len(self.versions) > 1:
                hello["versions"] = list(self.versions)
            return hello
        if kind == "reset":
            return self.reset(request)
        if kind == "op":
            return self.operate(request)
        if kind == "bye":
            return None
        return self.error(f"unknown request type {kind!r}")

    def reset(self, request: dict[str, Any]) -> dict[str, Any]:
        domain = request.get("domain")
        if domain not in self.factories:
            return self.error(f"domain {domain!r} is not served; served: {', '.join(self.factories)}")
        overrides = request.get("overrides", {})
        if not isinstance(overrides, dict):
            return self.error("overrides must be an object of option -> value")
        try:
            profile = get_profile(str(request.get("profile")), tuple((str(k), str(v)) for k, v in overrides.items()))
        except (BrokerspecError, KeyError, ValueError) as problem:
            return self.error(f"bad profile: {problem}")
        close = getattr(self.subject, "close", None)
        if close is not None:
            close()
        self.domain = str(domain)
        self.subject = self.factories[self.domain](profile)
        return {"v": self.version, "type": "ready"}

    def operate(self, request: dict[str, Any]) -> dict[str, Any]:
        seq = request.get("seq")
        if self.subject is None or self.domain is None:
            return self.error("an op before any reset", seq)
        try:
            command = decode_command(request.get("op"), request.get("args"), "args", self.domain)
        except CodecError as problem:
            return self.error(str(problem), seq)
        needed = version_needed(command)
        if needed > self.version:
            what = f"{command.op} is a query, and queries need" if is_query(command) else f"{command.op} needs"
            return self.error(f"{what} protocol version {needed}", seq)
        outcome = self.subject.execute(command)
        return {"v": self.version, "type": "outcome", "seq": seq, "outcome": encode_outcome(outcome)}

    def error(self, message: str, seq: object = None) -> dict[str, Any]:
        reply: dict[str, Any] = {"v": self.version, "type": "error", "message": message}
        if seq is not None:
            reply["seq"] = seq
        return reply


def answer_line(server: Server, line: str | bytes) -> str | None:
    """The reply line to one request line ("" for a blank line, None for ``bye``)."""
    if not line.strip():
        return ""
    try:
        request = jsonin.loads(line)
    except jsonin.JsonInputError as problem:
        reply: dict[str, Any] | None = server.error(f"cannot read the request: {problem}")
    else:
        reply = server.answer(request)
    return None if reply is None else json.dumps(reply) + "\n"


def serve(layer: str, requests: IO[str], replies: IO[str], pipelining: int = 1, protocol: int = LATEST_VERSION) -> int:
    """Answer ``requests`` line by line on ``replies`` until ``bye`` or their end."""
    server = Server(layer, pipelining, protocol)
    for line in requests:
        reply = answer_line(server, line)
        if reply is None:
            break
        if reply:
            replies.write(reply)
            replies.flush()
    return 0


def serve_fds(layer: str, requests: int, replies: int, pipelining: int = PIPELINING,
              protocol: int = LATEST_VERSION) -> int:
    """Answer the requests read from descriptor ``requests`` on ``replies``, one write per read, until ``bye``."""
    server = Server(layer, pipelining, protocol)
    pending = b""
    while chunk := os.read(requests, READ_CHUNK):
        *lines, pending = (pending + chunk).split(b"\n")
        answers: list[str] = []
        for line in lines:
            reply = answer_line(server, line)
            if reply is None:
                _write_all(replies, "".join(answers).encode("ascii"))
                return 0
            answers.append(reply)
        _write_all(replies, "".join(answers).encode("ascii"))
    if pending.strip() and (last := answer_line(server, pending)):
        _write_all(replies, last.encode("ascii"))
    return 0


def _write_all(descriptor: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view):]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m brokerspec.conform.serve --layer LAYER``."""
    parser = argparse.ArgumentParser(prog="python -m brokerspec.conform.serve",
                                     description="Serve a brokerspec layer over the SUT protocol (stdin/stdout).")
    parser.add_argument("--layer", default="impl", help="impl, reference, spec or planted:NAME (default impl)")
    parser.add_argument("--pipelining", type=int, default=PIPELINING, metavar="N",
                        help=f"the most requests in flight to announce (default {PIPELINING}; 1: one at a time)")
    parser.add_argument("--protocol", type=int, choices=VERSIONS, default=LATEST_VERSION,
                        help=f"the highest protocol version to speak (default {LATEST_VERSION}; 2: never asked to "
                             "prepare; 1: never asked a query either)")
    args = parser.parse_args(argv)
    if args.pipelining < 1:
        parser.error(f"--pipelining must be at least 1, not {args.pipelining}")
    try:
        in_process_layers(args.layer)
    except ValueError as problem:
        parser.error(str(problem))
    sys.stdout.flush()
    return serve_fds(args.layer, sys.stdin.fileno(), sys.stdout.fileno(), args.pipelining, args.protocol)


if __name__ == "__main__":
    sys.exit(main())
