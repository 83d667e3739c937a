"""The SUT protocol, version 1: the requests brokerspec writes and the replies it accepts.

Introduction
------------
One JSON object per line, each with ``"v": 1`` and a ``"type"``
(``docs/sut-protocol.md``; JSON Schema ``brokerspec/schemas/sut-protocol-v1.schema.json``):

=============  ==========================================  =================================
request        fields                                      reply
=============  ==========================================  =================================
``hello``      ``profile``, ``domains``                    ``hello``: ``name``, ``domains``
                                                           (and optionally ``profiles``)
``reset``      ``domain``, ``profile``, ``overrides``      ``ready``
``op``         ``seq``, ``op``, ``args``                   ``outcome``: ``seq``, ``outcome``
``bye``        (none)                                      none; the SUT exits
=============  ==========================================  =================================

Any request may instead be answered with ``error`` (``message``, and
``seq`` for an ``op``): the SUT could not do it. ``op``, ``args`` and
``outcome`` are written exactly as in a trace step (``docs/trace-format.md``),
through :mod:`brokerspec.codec`, so a SUT that can write traces can speak
this protocol.

This module only builds requests and reads replies; every way a reply can
be wrong becomes a :class:`SutFailure` that names the request it answered
and what was wrong, and the adapters in :mod:`.sut` raise the same class for
a SUT that crashes or hangs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import Enum
from typing import Any

from brokerspec.spec import Outcome, Profile

from ..check.lockstep import SubjectFailure
from ..codec import CodecError, decode_outcome, encode_command

PROTOCOL_VERSION = 1
"""The version every message carries under ``"v"``."""

REPLY_TYPES = ("hello", "ready", "outcome", "error")


class FailureKind(Enum):
    """How a SUT failed (as opposed to answering with a wrong outcome, which is a conformance failure)."""

    CRASHED = "crashed"
    """The process exited, or closed its output, before replying."""
    TIMEOUT = "timeout"
    """No reply within the per-request timeout."""
    GARBAGE = "garbage"
    """The reply line is not a JSON object."""
    WRONG_VERSION = "wrong-version"
    """The reply names another protocol version."""
    BAD_REPLY = "bad-reply"
    """A JSON object, but not the reply the request asks for (type, sequence number, fields)."""
    ERROR_REPLY = "error-reply"
    """The SUT answered with an ``error`` reply."""
    UNSUPPORTED = "unsupported"
    """The SUT does not offer the domain or profile asked for."""


class SutFailure(SubjectFailure):
    """The SUT failed to answer ``request`` properly; ``kind`` says how, ``message`` what was seen."""

    def __init__(self, kind: FailureKind, request: str, message: str) -> None:
        super().__init__(f"{kind.value} on {request}: {message}")
        self.kind = kind
        self.request = request
        self.message = message


class Unsupported(SutFailure):
    """An in-process SUT cannot perform this operation as asked (not a fault of the broker).

    The catalogue reports the case as not run for this reason; the fuzzer
    discards the scenario and counts it, and goes on.
    """


@dataclass(frozen=True)
class Hello:
    """What a SUT said of itself: its name, the domains and (when it says) the profiles it implements."""

    name: str
    domains: tuple[str, ...]
    profiles: tuple[str, ...] | None

    def offers(self, domain: str, profile: str) -> bool:
        """Whether the SUT implements ``domain`` under ``profile``."""
        return domain in self.domains and (self.profiles is None or profile in self.profiles)


def hello_request(profile: Profile, domains: tuple[str, ...]) -> dict[str, Any]:
    """The handshake: the profile brokerspec will ask for and the domains it wants to check."""
    return {"v": PROTOCOL_VERSION, "type": "hello", "profile": profile.name, "domains": list(domains)}


def reset_request(domain: str, profile: Profile) -> dict[str, Any]:
    """Start afresh: an empty broker of ``domain`` under ``profile`` and its overrides."""
    return {"v": PROTOCOL_VERSION, "type": "reset", "domain": domain, "profile": profile.name,
            "overrides": {dotted: value for dotted, value in profile.overrides}}


def op_request(seq: int, command: Any) -> dict[str, Any]:
    """One operation, numbered from 1 after each reset."""
    return {"v": PROTOCOL_VERSION, "type": "op", "seq": seq, "op": command.op, "args": encode_command(command)}


BYE = {"v": PROTOCOL_VERSION, "type": "bye"}


def describe_request(request: dict[str, Any]) -> str:
    """A request in words for a verdict, e.g. ``op 3 (lookup)`` or ``reset (addressing, seed)``."""
    kind = request.get("type")
    if kind == "op":
        return f"op {request.get('seq')} ({request.get('op')})"
    if kind == "reset":
        return f"reset ({request.get('domain')}, {request.get('profile')})"
    return str(kind)


def parse_reply(line: str, request: dict[str, Any]) -> dict[str, Any]:
    """The reply ``line`` to ``request`` as a JSON object of the right version and type; SutFailure otherwise.

    An ``error`` reply becomes ``SutFailure(ERROR_REPLY)`` carrying the SUT's message.
    """
    where = describe_request(request)
    text = line.strip()
    try:
        reply = json.loads(text)
    except json.JSONDecodeError as error:
        raise SutFailure(FailureKind.GARBAGE, where, f"not JSON ({error.msg} at column {error.colno}): "
                                                     f"{shorten(text)}") from None
    if not isinstance(reply, dict):
        raise SutFailure(FailureKind.GARBAGE, where, f"not a JSON object: {shorten(text)}")
    version = reply.get("v")
    if version != PROTOCOL_VERSION:
        raise SutFailure(FailureKind.WRONG_VERSION, where,
                         f"the reply says protocol version {version!r}; brokerspec speaks {PROTOCOL_VERSION}")
    kind = reply.get("type")
    if kind == "error":
        message = reply.get("message")
        raise SutFailure(FailureKind.ERROR_REPLY, where, message if isinstance(message, str) else shorten(text))
    wanted = {"hello": "hello", "reset": "ready", "op": "outcome"}[request["type"]]
    if kind != wanted:
        raise SutFailure(FailureKind.BAD_REPLY, where, f"expected a {wanted!r} reply, got type {kind!r}")
    if kind == "outcome" and reply.get("seq") != request["seq"]:
        raise SutFailure(FailureKind.BAD_REPLY, where,
                         f"the reply answers seq {reply.get('seq')!r}, not {request['seq']}")
    return reply


def read_hello(reply: dict[str, Any]) -> Hello:
    """The ``hello`` reply's fields, checked."""
    name, domains, profiles = reply.get("name"), reply.get("domains"), reply.get("profiles")
    if not isinstance(name, str) or not _is_strings(domains) or not (profiles is None or _is_strings(profiles)):
        raise SutFailure(FailureKind.BAD_REPLY, "hello",
                         "a hello reply needs name (a string), domains (a list of strings) and, optionally, "
                         f"profiles (a list of strings); got {shorten(json.dumps(reply))}")
    assert isinstance(domains, list)
    return Hello(name, tuple(domains), None if profiles is None else tuple(profiles))


def read_outcome(reply: dict[str, Any], request: dict[str, Any], domain: str) -> Outcome:
    """The outcome an ``outcome`` reply carries, decoded with ``domain``'s outcome types."""
    try:
        return decode_outcome(reply.get("outcome"), "outcome", domain)
    except CodecError as error:
        raise SutFailure(FailureKind.BAD_REPLY, describe_request(request), str(error)) from None


def shorten(text: str, limit: int = 120) -> str:
    """``text`` cut to ``limit`` characters, marked when cut."""
    return text if len(text) <= limit else text[:limit] + "..."


def _is_strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)
