"""A minimal STOMP 1.1 client over a plain socket.

Introduction
------------
The harness needs four things from a broker: open a consumer, send a
message, receive what arrives, and read advisory messages. STOMP does all
four in a text protocol small enough to speak directly (raw STOMP 1.1
over a socket is enough for ActiveMQ 5.17), so no client library is
needed.

A frame is a command line, header lines ``name:value``, an empty line, and a
body ended by a NUL byte. Header values escape ``\\``, newline, carriage
return and ``:`` as ``\\\\``, ``\\n``, ``\\r`` and ``\\c`` (STOMP 1.1; CONNECT
and CONNECTED are exempt). A body with a ``content-length`` header is read
by length, so it may contain NUL bytes; otherwise it ends at the first NUL.
Heart-beats are switched off (``heart-beat:0,0``), and the newlines a server
may send between frames are skipped.

The rules kept here: every call that waits has a timeout; an ``ERROR`` frame
raises :class:`StompError` quoting the server's message; the client never
retries or reconnects on its own.
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass, field
from types import TracebackType

from brokerspec.spec import BrokerspecError

_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", ":": "\\c"}
_UNESCAPES = {"\\": "\\", "n": "\n", "r": "\r", "c": ":"}


class StompError(BrokerspecError):
    """The server sent an ERROR frame, closed the connection, or did not answer in time."""


@dataclass(frozen=True)
class Frame:
    """One STOMP frame: command, headers (the first occurrence of each name wins) and body."""

    command: str
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""

    @property
    def text(self) -> str:
        """The body decoded as UTF-8."""
        return self.body.decode("utf-8", errors="replace")


def escape_header(value: str) -> str:
    """A header value with STOMP 1.1 escapes applied."""
    return "".join(_ESCAPES.get(ch, ch) for ch in value)


def unescape_header(value: str) -> str:
    """A header value with STOMP 1.1 escapes undone; an unknown escape is kept as written."""
    out: list[str] = []
    i = 0
    while i < len(value):
        ch = value[i]
        if ch == "\\" and i + 1 < len(value) and value[i + 1] in _UNESCAPES:
            out.append(_UNESCAPES[value[i + 1]])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def encode_frame(command: str, headers: dict[str, str], body: bytes = b"") -> bytes:
    """The bytes of a frame; a non-empty body gets a ``content-length`` header."""
    raw = command not in ("CONNECT", "CONNECTED")
    lines = [command]
    for name, value in headers.items():
        lines.append(f"{escape_header(name)}:{escape_header(value)}" if raw else f"{name}:{value}")
    if body:
        lines.append(f"content-length:{len(body)}")
    return ("\n".join(lines) + "\n\n").encode("utf-8") + body + b"\x00"


def decode_frame(buffer: bytearray) -> Frame | None:
    """Take one complete frame off the front of ``buffer``, or return None (and leave it) if it is incomplete."""
    while buffer and buffer[0] in b"\r\n":
        del buffer[:1]
    end_of_headers = buffer.find(b"\n\n")
    if end_of_headers < 0:
        return None
    head = buffer[:end_of_headers].decode("utf-8").replace("\r\n", "\n").split("\n")
    command = head[0].strip()
    escaped = command not in ("CONNECT", "CONNECTED")
    headers: dict[str, str] = {}
    for line in head[1:]:
        name, _, value = line.partition(":")
        if escaped:
            name, value = unescape_header(name), unescape_header(value)
        headers.setdefault(name, value)
    start = end_of_headers + 2
    if "content-length" in headers:
        end = start + int(headers["content-length"])
        if len(buffer) < end + 1:
            return None
    else:
        end = buffer.find(b"\x00", start)
        if end < 0:
            return None
    body = bytes(buffer[start:end])
    del buffer[:end + 1]
    return Frame(command, headers, body)


class StompClient:
    """One STOMP 1.1 connection to ``host:port``.

    Use as a context manager, or call :meth:`connect` and :meth:`close`.
    Frames other than the one a call waits for (for example MESSAGE frames
    arriving while a RECEIPT is awaited) are kept, in order, for
    :meth:`receive`.
    """

    def __init__(self, host: str, port: int, timeout: float = 10.0) -> None:
        self.host = host
        self.port = port
        self.timeout = timeout
        self._socket: socket.socket | None = None
        self._buffer = bytearray()
        self._pending: list[Frame] = []
        self._receipts = 0
        self.server: dict[str, str] = {}

    def __enter__(self) -> StompClient:
        self.connect()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def connect(self, login: str = "", passcode: str = "") -> dict[str, str]:
        """Open the socket, send CONNECT and return the CONNECTED frame's headers."""
        self._socket = socket.create_connection((self.host, self.port), timeout=self.timeout)
        headers = {"accept-version": "1.1", "host": self.host, "heart-beat": "0,0"}
        if login:
            headers.update(login=login, passcode=passcode)
        self._write(encode_frame("CONNECT", headers))
        frame = self._next_frame(time.monotonic() + self.timeout)
        if frame is None or frame.command != "CONNECTED":
            raise StompError(f"no CONNECTED frame from {self.host}:{self.port}: {frame!r}")
        self.server = frame.headers
        return frame.headers

    def subscribe(self, destination: str, subscription: str, headers: dict[str, str] | None = None,
                  receipt: bool = True) -> None:
        """SUBSCRIBE with ``ack:auto``; with ``receipt`` wait until the broker has registered it."""
        all_headers = {"destination": destination, "id": subscription, "ack": "auto", **(headers or {})}
        self._request("SUBSCRIBE", all_headers, b"", receipt)

    def unsubscribe(self, subscription: str, receipt: bool = True) -> None:
        """UNSUBSCRIBE the subscription with this id."""
        self._request("UNSUBSCRIBE", {"id": subscription}, b"", receipt)

    def send(self, destination: str, body: str | bytes, headers: dict[str, str] | None = None,
             receipt: bool = True) -> None:
        """SEND one message; with ``receipt`` wait until the broker has accepted (and, if persistent, stored) it."""
        data = body.encode("utf-8") if isinstance(body, str) else body
        self._request("SEND", {"destination": destination, **(headers or {})}, data, receipt)

    def receive(self, timeout: float) -> Frame | None:
        """The next frame that arrived, waiting at most ``timeout`` seconds; None if nothing came."""
        if self._pending:
            return self._pending.pop(0)
        return self._next_frame(time.monotonic() + timeout)

    def disconnect(self) -> None:
        """DISCONNECT with a receipt, then close the socket."""
        if self._socket is not None:
            try:
                self._request("DISCONNECT", {}, b"", True)
            except (OSError, StompError):
                pass
        self.close()

    def close(self) -> None:
        """Close the socket without a DISCONNECT frame (the broker cleans up the connection)."""
        if self._socket is not None:
            self._socket.close()
            self._socket = None

    def _request(self, command: str, headers: dict[str, str], body: bytes, receipt: bool) -> None:
        if receipt:
            self._receipts += 1
            wanted = f"r{self._receipts}"
            headers = {**headers, "receipt": wanted}
        self._write(encode_frame(command, headers, body))
        if not receipt:
            return
        deadline = time.monotonic() + self.timeout
        while True:
            frame = self._next_frame(deadline)
            if frame is None:
                raise StompError(f"no RECEIPT for {command} {headers} from {self.host}:{self.port} "
                                 f"within {self.timeout} s")
            if frame.command == "RECEIPT" and frame.headers.get("receipt-id") == wanted:
                return
            self._pending.append(frame)

    def _write(self, data: bytes) -> None:
        if self._socket is None:
            raise StompError(f"STOMP connection to {self.host}:{self.port} is not open")
        self._socket.sendall(data)

    def _next_frame(self, deadline: float) -> Frame | None:
        if self._socket is None:
            raise StompError(f"STOMP connection to {self.host}:{self.port} is not open")
        while True:
            frame = decode_frame(self._buffer)
            if frame is not None:
                if frame.command == "ERROR":
                    raise StompError(f"ERROR from {self.host}:{self.port}: {frame.headers.get('message', '')} "
                                     f"{frame.text.strip()[:500]}")
                return frame
            # A deadline already passed still reads what the socket holds, without blocking.
            self._socket.settimeout(max(0.0, deadline - time.monotonic()))
            try:
                chunk = self._socket.recv(65536)
            except (TimeoutError, BlockingIOError):
                return None
            if not chunk:
                raise StompError(f"{self.host}:{self.port} closed the STOMP connection")
            self._buffer.extend(chunk)
