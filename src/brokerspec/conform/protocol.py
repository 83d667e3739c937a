"""The SUT protocol, versions 1 to 3: the requests brokerspec writes and the replies it accepts.

Introduction
------------
One JSON object per line, each with ``"v": 1`` and a ``"type"``
(``docs/sut-protocol.md``; JSON Schemas ``brokerspec/schemas/sut-protocol-v1.schema.json``,
``sut-protocol-v2.schema.json`` and ``sut-protocol-v3.schema.json``):

=============  ==========================================  =================================
request        fields                                      reply
=============  ==========================================  =================================
``hello``      ``profile``, ``domains``                    ``hello``: ``name``, ``domains``
                                                           (and optionally ``profiles``)
``reset``      ``domain``, ``profile``, ``overrides``      ``ready``
``op``         ``seq``, ``op``, ``args``                   ``outcome``: ``seq``, ``outcome``
``bye``        (none)                                      none; the SUT exits
=============  ==========================================  =================================

Version 2 adds the *queries* (``query_address``, ``query_queue``, ``query_id``,
``query_demand``: operations that read without changing anything) and nothing
else. Version 3 adds the first phase of an XA two-phase commit to the
duplicates domain: the operation ``prepare`` and its outcomes
``transaction_prepared`` and ``prepare_failed`` (:data:`XA_COMMANDS`). The
``hello`` request always says ``"v": 1``, so every SUT can read it; a SUT that
speaks more lists them in its hello reply (``"versions": [1, 2, 3]``), and from
then on every request and reply of the session carries the highest version both
sides speak. An operation is never asked of a SUT whose session speaks less than
:func:`version_needed` says: the catalogue reports the cases that need one as not
run, the fuzzer leaves it out, each saying why (:func:`why_not_asked`).

Any request may instead be answered with ``error`` (``message``, and
``seq`` for an ``op``): the SUT could not do it. ``op``, ``args`` and
``outcome`` are written exactly as in a trace step (``docs/trace-format.md``),
through :mod:`brokerspec.codec`, so a SUT that can write traces can speak
this protocol.

This module only builds requests and reads replies; every way a reply can
be wrong becomes a :class:`SutFailure` that names the request it answered
and what was wrong, and the adapters in :mod:`.sut` raise the same class for
a SUT that crashes or hangs.

A reply is read as strictly as any JSON from outside (:mod:`brokerspec.jsonin`):
a line that is not UTF-8, not JSON, holds a key twice, nests deeper than
64 levels, holds an integer beyond 64 bits, or is longer than
:data:`MAX_REPLY_BYTES` is garbage. ``v`` and ``seq`` are JSON integers:
``1.0`` and ``true`` are not ``1``. Whatever a SUT wrote is quoted in a
verdict shortened and with its unprintable characters escaped, as plain text.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from brokerspec.spec import Outcome, Profile, is_query
from brokerspec.spec.duplicates import Prepare

from ..check.lockstep import SubjectFailure
from ..clitools import printable
from ..codec import CodecError, decode_outcome, encode_command
from ..jsonin import JsonInputError, loads

PROTOCOL_VERSION = 1
"""The version the ``hello`` request and reply carry under ``"v"`` (and every message of a version 1 session)."""

QUERY_VERSION = 2
"""The version that adds the queries; a session speaks it when the SUT's hello lists it."""

XA_VERSION = 3
"""The version that adds ``prepare``, the first phase of an XA two-phase commit (duplicates), and its outcomes."""

VERSIONS = (PROTOCOL_VERSION, QUERY_VERSION, XA_VERSION)
"""The versions brokerspec speaks."""

LATEST_VERSION = VERSIONS[-1]
"""The highest version brokerspec speaks: what its own SUTs announce."""

XA_COMMANDS: frozenset[type] = frozenset({Prepare})
"""The commands version 3 adds; a SUT whose session speaks less is never asked one."""

QUERIES_NEED_V2 = "the SUT speaks protocol version 1, and queries need version 2 (docs/sut-protocol.md)"
"""Why a query is not asked of a version 1 SUT."""


def version_needed(command: object) -> int:
    """The lowest protocol version in which ``command`` (a command or its class) may be asked.

    >>> version_needed(Prepare("s1")), version_needed(Prepare)
    (3, 3)
    >>> from brokerspec.spec.duplicates import QueryId, Commit
    >>> version_needed(QueryId), version_needed(Commit("s1"))
    (2, 1)
    """
    kind = command if isinstance(command, type) else type(command)
    if kind in XA_COMMANDS:
        return XA_VERSION
    if is_query(kind):
        return QUERY_VERSION
    return PROTOCOL_VERSION


def why_not_asked(command: object, version: int) -> str | None:
    """Why ``command`` (a command or its class) is not asked of a SUT whose session speaks ``version``; None if it is.

    >>> why_not_asked(Prepare, 2)
    'the SUT speaks protocol version 2, and prepare needs version 3 (docs/sut-protocol.md)'
    >>> why_not_asked(Prepare, 3) is None
    True
    """
    needed = version_needed(command)
    if needed <= version:
        return None
    if needed == QUERY_VERSION:
        return QUERIES_NEED_V2
    op = getattr(command, "op", "this operation")
    return f"the SUT speaks protocol version {version}, and {op} needs version {needed} (docs/sut-protocol.md)"


def first_unasked(commands: Sequence[Any], version: int) -> tuple[int, str] | None:
    """The index of the first of ``commands`` a SUT speaking ``version`` is not asked, and why; None if none."""
    for index, command in enumerate(commands):
        why = why_not_asked(command, version)
        if why is not None:
            return index, why
    return None

MAX_REPLY_BYTES = 16 * 1024 * 1024
"""The longest reply line read, in bytes before its newline (16 MiB); a longer one is garbage."""

REPLY_TYPES = ("hello", "ready", "outcome", "error")


class FailureKind(Enum):
    """How a SUT failed (as opposed to answering with a wrong outcome, which is a conformance failure)."""

    CRASHED = "crashed"
    """The process exited, or closed its output, before replying."""
    TIMEOUT = "timeout"
    """No reply within the per-request timeout."""
    GARBAGE = "garbage"
    """The reply line is not a JSON object brokerspec reads (see :func:`parse_reply`)."""
    WRONG_VERSION = "wrong-version"
    """The reply names another protocol version."""
    BAD_REPLY = "bad-reply"
    """A JSON object, but not the reply the request asks for (type, sequence number, fields)."""
    ERROR_REPLY = "error-reply"
    """The SUT answered with an ``error`` reply."""
    UNSUPPORTED = "unsupported"
    """The SUT does not offer the domain or profile asked for."""


class SutFailure(SubjectFailure):
    """The SUT failed to answer ``request`` properly; ``kind`` says how, ``message`` what was seen.

    Raised out of a batch (``execute_many``), it also says where the batch stopped: :attr:`batch_stop`.
    """

    batch_stop: BatchStop | None = None
    """For a failure of ``execute_many``: which command of the batch failed and the outcomes before it."""

    def __init__(self, kind: FailureKind, request: str, message: str) -> None:
        super().__init__(f"{kind.value} on {request}: {message}")
        self.kind = kind
        self.request = request
        self.message = message


@dataclass(frozen=True)
class BatchStop:
    """Where a batch of commands stopped: the failing command's ``index`` (from 0) and the outcomes before it.

    ``execute_many`` attaches one to whatever it raises (a :class:`SutFailure`, or the exception an
    in-process subject raised); :func:`batch_stop` reads it back.
    """

    index: int
    completed: tuple[Outcome, ...]


def mark_batch_stop(error: BaseException, index: int, completed: Sequence[Outcome]) -> None:
    """Record on ``error`` that it stopped a batch at command ``index``, after ``completed``."""
    error.batch_stop = BatchStop(index, tuple(completed))  # type: ignore[attr-defined]


def batch_stop(error: BaseException) -> BatchStop | None:
    """Where the batch that raised ``error`` stopped; None when ``error`` did not come out of ``execute_many``."""
    stop = getattr(error, "batch_stop", None)
    return stop if isinstance(stop, BatchStop) else None


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
    pipelining: int = 1
    """The most requests the SUT lets brokerspec have in flight, written and not yet answered (1: one at a time)."""
    version: int = PROTOCOL_VERSION
    """The protocol version of the session: the highest both sides speak (2 when the SUT answers queries, 3 when
    it also prepares)."""

    @property
    def answers_queries(self) -> bool:
        """Whether the SUT may be asked queries (version 2 and later)."""
        return self.version >= QUERY_VERSION

    def asks(self, command: object) -> bool:
        """Whether ``command`` (a command or its class) may be asked of this SUT (:func:`version_needed`)."""
        return version_needed(command) <= self.version

    def offers(self, domain: str, profile: str) -> bool:
        """Whether the SUT implements ``domain`` under ``profile``."""
        return domain in self.domains and (self.profiles is None or profile in self.profiles)


def hello_request(profile: Profile, domains: tuple[str, ...]) -> dict[str, Any]:
    """The handshake: the profile brokerspec will ask for and the domains it wants to check."""
    return {"v": PROTOCOL_VERSION, "type": "hello", "profile": profile.name, "domains": list(domains)}


def reset_request(domain: str, profile: Profile, version: int = PROTOCOL_VERSION) -> dict[str, Any]:
    """Start afresh: an empty broker of ``domain`` under ``profile`` and its overrides."""
    return {"v": version, "type": "reset", "domain": domain, "profile": profile.name,
            "overrides": {dotted: value for dotted, value in profile.overrides}}


def op_request(seq: int, command: Any, version: int = PROTOCOL_VERSION) -> dict[str, Any]:
    """One operation, numbered from 1 after each reset."""
    return {"v": version, "type": "op", "seq": seq, "op": command.op, "args": encode_command(command)}


def bye_request(version: int = PROTOCOL_VERSION) -> dict[str, Any]:
    """The end of the session."""
    return {"v": version, "type": "bye"}


BYE = bye_request()


def describe_request(request: dict[str, Any]) -> str:
    """A request in words for a verdict, e.g. ``op 3 (lookup)`` or ``reset (addressing, seed)``."""
    kind = request.get("type")
    if kind == "op":
        return f"op {request.get('seq')} ({request.get('op')})"
    if kind == "reset":
        return f"reset ({request.get('domain')}, {request.get('profile')})"
    return str(kind)


def parse_reply(line: str | bytes, request: dict[str, Any], in_flight: Collection[int] = ()) -> dict[str, Any]:
    """The reply ``line`` to ``request`` as a JSON object of the right version and type; SutFailure otherwise.

    ``line`` is the bytes read from the SUT (or text). It is ``GARBAGE`` when
    longer than :data:`MAX_REPLY_BYTES`, not UTF-8, not strict JSON
    (:func:`brokerspec.jsonin.loads`: unique keys, at most 64 levels deep,
    64-bit integers) or not an object; ``WRONG_VERSION`` when ``v`` is not
    the integer the request carried; ``BAD_REPLY`` when of the wrong type or, for an
    ``outcome``, when ``seq`` is not the request's (as an integer). An
    ``error`` reply becomes ``SutFailure(ERROR_REPLY)`` carrying the SUT's message. ``in_flight``
    holds the sequence numbers of the later requests already written (pipelining), so that a reply
    out of order is told from one to a request that was never made.
    """
    where = describe_request(request)
    reply = _json_object(line, where)
    version, wanted_version = reply.get("v"), request.get("v", PROTOCOL_VERSION)
    if not _is_integer(version, wanted_version):
        raise SutFailure(FailureKind.WRONG_VERSION, where,
                         f"the reply says protocol version {quote(version)}; the request was version {wanted_version}")
    kind = reply.get("type")
    if kind == "error":
        message = reply.get("message")
        said = message if isinstance(message, str) else json.dumps(reply)
        raise SutFailure(FailureKind.ERROR_REPLY, where, shorten(said, 500))
    wanted = {"hello": "hello", "reset": "ready", "op": "outcome"}[request["type"]]
    if kind != wanted:
        raise SutFailure(FailureKind.BAD_REPLY, where, f"expected a {wanted!r} reply, got type {quote(kind)}")
    if kind == "outcome" and not _is_integer(reply.get("seq"), request["seq"]):
        raise SutFailure(FailureKind.BAD_REPLY, where,
                         f"the reply answers seq {quote(reply.get('seq'))}, not {request['seq']} "
                         f"({_which_seq(reply.get('seq'), in_flight)})")
    return reply


def _which_seq(seq: object, in_flight: Collection[int]) -> str:
    """Why a reply's ``seq`` is wrong, in words: another request's reply, or nobody's."""
    if not in_flight:
        return "a sequence number is a JSON integer"
    if type(seq) is int and seq in in_flight:
        return "a later request's: replies come in the order of the requests"
    return "no request in flight has it; a sequence number is a JSON integer"


def _json_object(line: str | bytes, where: str) -> dict[str, Any]:
    """The JSON object on ``line``, or a GARBAGE failure saying why not."""
    if _too_long(line):
        raise SutFailure(FailureKind.GARBAGE, where,
                         f"a reply line longer than {MAX_REPLY_BYTES // (1024 * 1024)} MiB: {_start_of(line)}")
    try:
        reply = loads(line)
    except JsonInputError as error:
        raise SutFailure(FailureKind.GARBAGE, where, f"{error}: {_start_of(line)}") from None
    if not isinstance(reply, dict):
        raise SutFailure(FailureKind.GARBAGE, where, f"not a JSON object: {_start_of(line)}")
    return reply


def _too_long(line: str | bytes) -> bool:
    newline = line.endswith(b"\n") if isinstance(line, bytes) else line.endswith("\n")
    return len(line) - newline > MAX_REPLY_BYTES


def _start_of(line: str | bytes) -> str:
    """The beginning of a reply line as text to quote, whatever its bytes."""
    text = line[:1000].decode("utf-8", "replace") if isinstance(line, bytes) else line[:1000]
    return shorten(text.strip())


def _is_integer(value: object, wanted: int) -> bool:
    """Whether ``value`` is the JSON integer ``wanted`` (not a float, not a boolean)."""
    return type(value) is int and value == wanted


def read_hello(reply: dict[str, Any]) -> Hello:
    """The ``hello`` reply's fields, checked; ``pipelining``, when given, is a JSON integer of at least 1.

    ``versions``, when given, lists the protocol versions the SUT speaks (JSON integers, 1 among them); the
    session speaks the highest one brokerspec speaks too.
    """
    name, domains, profiles = reply.get("name"), reply.get("domains"), reply.get("profiles")
    if not isinstance(name, str) or not _is_strings(domains) or not (profiles is None or _is_strings(profiles)):
        raise SutFailure(FailureKind.BAD_REPLY, "hello",
                         "a hello reply needs name (a string), domains (a list of strings) and, optionally, "
                         f"profiles (a list of strings); got {shorten(json.dumps(reply))}")
    assert isinstance(domains, list)
    pipelining = reply.get("pipelining", 1)
    if type(pipelining) is not int or pipelining < 1:
        raise SutFailure(FailureKind.BAD_REPLY, "hello",
                         "pipelining, when given, is the most requests in flight, a JSON integer of at least 1; "
                         f"got {quote(pipelining)}")
    versions = reply.get("versions", [PROTOCOL_VERSION])
    if (not isinstance(versions, list) or not all(type(v) is int for v in versions)
            or PROTOCOL_VERSION not in versions):
        raise SutFailure(FailureKind.BAD_REPLY, "hello",
                         "versions, when given, lists the protocol versions the SUT speaks as JSON integers, "
                         f"1 among them; got {quote(versions)}")
    version = max(v for v in versions if v in VERSIONS)
    return Hello(name, tuple(domains), None if profiles is None else tuple(profiles), pipelining, version)


def read_outcome(reply: dict[str, Any], request: dict[str, Any], domain: str) -> Outcome:
    """The outcome an ``outcome`` reply carries, decoded with ``domain``'s outcome types."""
    try:
        return decode_outcome(reply.get("outcome"), "outcome", domain)
    except CodecError as error:
        raise SutFailure(FailureKind.BAD_REPLY, describe_request(request), shorten(str(error), 500)) from None


def shorten(text: str, limit: int = 120) -> str:
    """``text`` cut to ``limit`` characters, marked when cut, as :func:`printable` text."""
    return printable(text if len(text) <= limit else text[:limit] + "...")


def quote(value: object) -> str:
    """A JSON value from a reply, written as JSON and shortened, to quote in a verdict."""
    return shorten(json.dumps(value, ensure_ascii=False))


def _is_strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)
