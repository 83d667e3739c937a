"""One STOMP 1.2 connection's protocol state, seen from the server.

Introduction
------------
A connection opens with a CONNECT (or STOMP) frame, carries the client's
work, and ends with DISCONNECT or with an error. Which frames may come when,
which headers each must carry and how the two sides agree on a version and
on heart-beats is the protocol; what a SEND or an ACK *does* is not, and is
left to the broker behind. This module keeps the protocol and nothing else:
it does no I/O and holds no messages. :class:`ServerProtocol` takes the
frames :class:`~brokerspec.broker.frames.FrameReader` produced, one at a
time, and either passes a frame on (a CONNECT as the :class:`Connect` it
negotiated) or raises :class:`ProtocolError`, whose
:meth:`~ProtocolError.error_frame` is the ERROR frame to send before closing.

Theory of operation. The state machine is data: :data:`TRANSITIONS` maps a
state and a client command to the next state, and a pair it lacks is a
protocol error that names both. :data:`REQUIRED_HEADERS` lists the headers
each command must carry. The code only reads the tables, so a reader (or
:func:`describe_transitions`, which the docs draw a table from) sees the
whole protocol in two literals. Any error closes the connection: the state
becomes CLOSED and every later frame is refused.

The rules kept, each with its source in the STOMP 1.2 specification
(https://stomp.github.io/stomp-specification-1.2.html):

- The first frame is CONNECT or STOMP, and nothing follows DISCONNECT
  ("Connecting", "DISCONNECT").
- CONNECT and STOMP carry ``accept-version`` and ``host``; a client that
  sends no ``accept-version`` speaks 1.0, and a client offering no version
  this server speaks gets an ERROR with a ``version`` header listing the
  versions it does ("CONNECT or STOMP Frame", "Protocol Negotiation").
- SEND needs ``destination``; SUBSCRIBE ``destination`` and ``id``;
  UNSUBSCRIBE, ACK and NACK ``id``; BEGIN, COMMIT and ABORT ``transaction``
  ("Frames and Headers"). A required header may not be empty, except
  ``host``, which names a virtual host and may name the default one.
- SUBSCRIBE's ``ack`` is ``auto`` (the default), ``client`` or
  ``client-individual`` ("SUBSCRIBE ack Header").
- Only SEND, MESSAGE and ERROR frames may have a body ("Body").
- Heart-beats: the client offers ``cx,cy`` and the server has ``sx,sy``; the
  server sends every ``max(sx, cy)`` ms and expects a beat every
  ``max(cx, sy)`` ms, where a 0 on either side means none ("Heart-beating").
- An ERROR frame carries a short ``message`` header, the bad frame's
  ``receipt`` as ``receipt-id``, and the detail as its body, after which the
  server closes the connection ("ERROR").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from brokerspec.spec import BrokerspecError

from .frames import CLIENT_COMMANDS, SERVER_COMMANDS, Frame, shown


class State(Enum):
    """Where a connection is: before its CONNECT, open for work, or closed."""

    AWAITING_CONNECT = "awaiting-connect"
    OPEN = "open"
    CLOSED = "closed"


TRANSITIONS: dict[tuple[State, str], State] = {
    (State.AWAITING_CONNECT, "CONNECT"): State.OPEN,
    (State.AWAITING_CONNECT, "STOMP"): State.OPEN,
    **{(State.OPEN, command): State.OPEN
       for command in ("SEND", "SUBSCRIBE", "UNSUBSCRIBE", "BEGIN", "COMMIT", "ABORT", "ACK", "NACK")},
    (State.OPEN, "DISCONNECT"): State.CLOSED,
}
"""The client frames each state allows, and the state each leads to; any other pair is a protocol error."""

REQUIRED_HEADERS: dict[str, tuple[str, ...]] = {
    "CONNECT": ("accept-version", "host"),
    "STOMP": ("accept-version", "host"),
    "SEND": ("destination",),
    "SUBSCRIBE": ("destination", "id"),
    "UNSUBSCRIBE": ("id",),
    "ACK": ("id",),
    "NACK": ("id",),
    "BEGIN": ("transaction",),
    "COMMIT": ("transaction",),
    "ABORT": ("transaction",),
    "DISCONNECT": (),
}
"""The headers each client frame must carry ("Frames and Headers")."""

ACK_MODES = ("auto", "client", "client-individual")
SUPPORTED_VERSIONS = ("1.2",)
BODY_COMMANDS = frozenset({"SEND", "MESSAGE", "ERROR"})
"""The frames that may have a body ("Body")."""
MAY_BE_EMPTY = frozenset({"host", "destination"})
"""Required headers whose value may be empty: the default virtual host has no name, and an empty destination
is a name the broker's name model refuses with its own reason (an invalid name), not a malformed frame."""

_HEARTBEAT = re.compile(r" *([0-9]{1,9}) *, *([0-9]{1,9}) *")


class ProtocolError(BrokerspecError):
    """A frame the protocol refuses: ``message`` is short (the ERROR frame's ``message`` header), ``detail``
    names the header and value, ``receipt_id`` is the bad frame's ``receipt`` header if it had one, and
    ``headers`` are further headers the ERROR frame carries (``version`` when no version is shared)."""

    def __init__(self, message: str, detail: str = "", receipt_id: str | None = None,
                 headers: tuple[tuple[str, str], ...] = ()) -> None:
        super().__init__(f"{message}: {detail}" if detail else message)
        self.message = message
        self.detail = detail
        self.receipt_id = receipt_id
        self.headers = headers

    def error_frame(self) -> Frame:
        """The ERROR frame that reports this error to the client."""
        frame = error_frame(self.message, self.detail, self.receipt_id)
        return Frame(frame.command, frame.headers + self.headers, frame.body)


@dataclass(frozen=True)
class Connect:
    """What a CONNECT or STOMP frame asked for, after negotiation: ``heartbeat`` is (server sends every N ms,
    server expects a beat every M ms), 0 meaning never."""

    version: str
    host: str
    login: str | None
    passcode: str | None
    heartbeat: tuple[int, int]


def negotiate_heartbeat(client: tuple[int, int], server: tuple[int, int]) -> tuple[int, int]:
    """(server sends every N ms, server expects every M ms) for the client's ``cx,cy`` and the server's ``sx,sy``.

    >>> negotiate_heartbeat((4000, 10000), (5000, 2000))
    (10000, 4000)
    >>> negotiate_heartbeat((0, 10000), (5000, 2000))
    (10000, 0)
    """
    (cx, cy), (sx, sy) = client, server
    sends = max(sx, cy) if sx and cy else 0
    expects = max(cx, sy) if cx and sy else 0
    return sends, expects


class ServerProtocol:
    """One connection's protocol state, fed the client's frames in order.

    >>> p = ServerProtocol(heartbeat=(0, 0))
    >>> p.receive(Frame("CONNECT", (("accept-version", "1.1,1.2"), ("host", "h"))))
    Connect(version='1.2', host='h', login=None, passcode=None, heartbeat=(0, 0))
    >>> p.receive(Frame("SEND", (("receipt", "r1"),)))
    Traceback (most recent call last):
    ...
    brokerspec.broker.protocol.ProtocolError: missing header destination: a SEND frame needs a destination header
    >>> p.state
    <State.CLOSED: 'closed'>
    """

    def __init__(self, server: str = "brokerspec", heartbeat: tuple[int, int] = (0, 0)) -> None:
        if len(heartbeat) != 2 or min(heartbeat) < 0:
            raise ValueError(f"a heart-beat setting is two non-negative millisecond counts, not {heartbeat!r}")
        self.server = server
        self.heartbeat = heartbeat
        self.state = State.AWAITING_CONNECT
        self.connect: Connect | None = None

    def must_close(self) -> bool:
        """Whether the connection is over (after DISCONNECT or an error)."""
        return self.state is State.CLOSED

    def receive(self, frame: Frame) -> Frame | Connect:
        """Validate one client frame: a CONNECT or STOMP as the :class:`Connect` it negotiated, any other
        allowed frame as itself. Raises :class:`ProtocolError` for a frame the protocol refuses, which closes
        the connection."""
        try:
            return self._receive(frame)
        except ProtocolError:
            self.state = State.CLOSED
            raise

    def _receive(self, frame: Frame) -> Frame | Connect:
        command, receipt = frame.command, frame.header("receipt")
        following = TRANSITIONS.get((self.state, command))
        if following is None:
            raise ProtocolError(f"{shown(command)} not allowed {_WHEN[self.state]}",
                                f"a {shown(command)} frame cannot come while the connection is "
                                f"{self.state.value}", receipt)
        for name in REQUIRED_HEADERS.get(command, ()):
            value = frame.header(name)
            if value is None or (not value and name not in MAY_BE_EMPTY):
                if name == "accept-version" and value is None:
                    raise ProtocolError("STOMP 1.2 is required",
                                        f"the {command} frame has no accept-version header, so the client "
                                        f"speaks STOMP 1.0; this server speaks {_versions()} only", receipt,
                                        (("version", ",".join(SUPPORTED_VERSIONS)),))
                if value is None:
                    raise ProtocolError(f"missing header {name}", f"a {command} frame needs a {name} header",
                                        receipt)
                raise ProtocolError(f"empty header {name}", f"the {name} header of a {command} frame is empty",
                                    receipt)
        if frame.body and command not in BODY_COMMANDS:
            raise ProtocolError(f"{command} frame with a body",
                                f"only SEND frames may have a body; this {command} frame has a body of "
                                f"{len(frame.body)} byte(s)", receipt)
        if command == "SUBSCRIBE":
            ack = frame.header("ack")
            if ack is not None and ack not in ACK_MODES:
                raise ProtocolError(f"unknown ack mode {shown(ack)}",
                                    f"the ack header of SUBSCRIBE is one of {', '.join(ACK_MODES)}, "
                                    f"not {shown(ack)}", receipt)
        if command in ("CONNECT", "STOMP"):
            self.connect = self._negotiate(frame, receipt)
            self.state = following
            return self.connect
        self.state = following
        return frame

    def _negotiate(self, frame: Frame, receipt: str | None) -> Connect:
        offered = frame.header("accept-version") or ""
        versions = [version.strip() for version in offered.split(",")]
        common = [version for version in SUPPORTED_VERSIONS if version in versions]
        if not common:
            raise ProtocolError(f"Supported protocol versions are {_versions()}",
                                f"the client accepts versions {shown(offered)}, none of which this server "
                                f"speaks", receipt, (("version", ",".join(SUPPORTED_VERSIONS)),))
        beat = frame.header("heart-beat")
        client = (0, 0)
        if beat is not None:
            match = _HEARTBEAT.fullmatch(beat)
            if match is None:
                raise ProtocolError(f"malformed heart-beat {shown(beat)}",
                                    f"the heart-beat header is two non-negative integers (milliseconds) "
                                    f"joined by a comma, not {shown(beat)}", receipt)
            client = (int(match.group(1)), int(match.group(2)))
        return Connect(common[-1], frame.header("host") or "", frame.header("login"), frame.header("passcode"),
                       negotiate_heartbeat(client, self.heartbeat))

    def connected_frame(self, session: str) -> Frame:
        """The CONNECTED frame answering the connection's CONNECT.

        Its ``heart-beat`` header gives the negotiated periods (server sends, server expects); a client that
        applies the rule of "Heart-beating" to them arrives at the same periods as from the server's own
        setting, and a reader sees what was agreed.
        """
        if self.connect is None:
            raise ProtocolError("not connected", f"no CONNECT frame was accepted; the connection is "
                                                 f"{self.state.value}")
        sends, expects = self.connect.heartbeat
        return Frame("CONNECTED", (("version", self.connect.version), ("heart-beat", f"{sends},{expects}"),
                                   ("server", self.server), ("session", session)))


_WHEN = {State.AWAITING_CONNECT: "before CONNECT", State.OPEN: "after CONNECT",
         State.CLOSED: "after the connection closed"}


def _versions() -> str:
    return " ".join(SUPPORTED_VERSIONS)


def describe_transitions() -> list[tuple[str, str, str]]:
    """Every (state, command, next state or ``"error"``), over every state and every command, from the tables.

    >>> [row for row in describe_transitions() if row[1] == "DISCONNECT"]
    [('awaiting-connect', 'DISCONNECT', 'error'), ('open', 'DISCONNECT', 'closed'), ('closed', 'DISCONNECT', 'error')]
    """
    rows = []
    for state in State:
        for command in CLIENT_COMMANDS + SERVER_COMMANDS:
            following = TRANSITIONS.get((state, command))
            rows.append((state.value, command, following.value if following is not None else "error"))
    return rows


def message_frame(destination: str, message_id: str, subscription: str, body: bytes,
                  headers: tuple[tuple[str, str], ...] = (), ack: str | None = None) -> Frame:
    """A MESSAGE frame ("MESSAGE"): ``ack`` is given when the subscription acknowledges (client or
    client-individual), ``content-length`` always; ``headers`` follow, so a repeat of one of these loses.

    >>> message_frame("/queue/a", "m1", "s1", b"hi", ack="a1").headers
    (('destination', '/queue/a'), ('message-id', 'm1'), ('subscription', 's1'), ('ack', 'a1'), \
('content-length', '2'))
    """
    fixed = [("destination", destination), ("message-id", message_id), ("subscription", subscription)]
    if ack is not None:
        fixed.append(("ack", ack))
    fixed.append(("content-length", str(len(body))))
    return Frame("MESSAGE", tuple(fixed) + headers, body)


def receipt_frame(receipt_id: str) -> Frame:
    """The RECEIPT frame answering a frame whose ``receipt`` header was ``receipt_id`` ("RECEIPT")."""
    return Frame("RECEIPT", (("receipt-id", receipt_id),))


def error_frame(message: str, detail: str = "", receipt_id: str | None = None) -> Frame:
    """An ERROR frame ("ERROR"): ``message`` as its header, ``detail`` as its UTF-8 body (with its
    ``content-length``), and ``receipt-id`` when the bad frame asked for a receipt."""
    body = detail.encode("utf-8")
    headers = [("message", message)]
    if receipt_id is not None:
        headers.append(("receipt-id", receipt_id))
    headers += [("content-type", "text/plain"), ("content-length", str(len(body)))]
    return Frame("ERROR", tuple(headers), body)
