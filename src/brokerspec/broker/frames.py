"""STOMP 1.2 frames: the bytes on the wire and back.

Introduction
------------
A STOMP connection is a stream of bytes that carries frames, and this module
is the only place that knows how they are laid out. It has no I/O: the
connection code hands :meth:`FrameReader.feed` whatever bytes the socket
gave it, in whatever pieces they arrived, and gets back the frames completed
so far; :func:`encode` turns a :class:`Frame` into the bytes to write.

Theory of operation. The reader keeps one buffer and a small state: which
part of the current frame it is in (the command line, the header lines or
the body) and where in the stream that part began. Each feed resumes where
the last one stopped, so no byte is looked at twice and a frame split into
one-byte pieces gives exactly what the whole frame gives. Lines are found
with ``bytes.find`` and a body with one ``find`` for its NUL or one slice of
``content-length`` bytes, so a large body costs a copy, not a loop. Offsets
are kept as positions in the whole stream; an error names the offset where
the bad frame starts, however many frames came before it.

The rules kept, each with its source in the STOMP 1.2 specification
(https://stomp.github.io/stomp-specification-1.2.html):

- A frame is a command line, header lines of ``name:value``, a blank line,
  the body and a NUL byte; every line ends with LF or CRLF ("STOMP Frames",
  "Augmented BNF").
- Between frames a peer may send bare end-of-lines as heart-beats; they are
  dropped and counted ("Heart-beating").
- Commands and headers are UTF-8 ("STOMP Frames"); a header that is not
  UTF-8 is refused.
- In every frame but CONNECT and CONNECTED, a header's CR, LF, colon and
  backslash travel as ``\\r``, ``\\n``, ``\\c`` and ``\\\\``; any other
  escape is a fatal protocol error ("Value Encoding"). A raw colon in a
  value is accepted (the line splits at its first colon).
- When a header repeats, the first occurrence counts; all are kept, in wire
  order ("Repeated Header Entries").
- ``content-length`` is the body's length in bytes and the body may then hold
  NULs; the byte after it must be the NUL. Without it the body ends at the
  first NUL ("Header content-length", "Body").
- A server may limit the size of frames, the number of headers and the
  length of a header line ("Size Limits"); :class:`Limits` holds the limits,
  and input over one is refused as soon as it is seen, so the reader never
  buffers more than a frame's worth of bytes.
- Only the commands the specification defines are frames ("Client Frames",
  "Server Frames").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from brokerspec.spec import BrokerspecError

CLIENT_COMMANDS = ("CONNECT", "STOMP", "SEND", "SUBSCRIBE", "UNSUBSCRIBE", "BEGIN", "COMMIT", "ABORT", "ACK",
                   "NACK", "DISCONNECT")
"""The frames a client sends ("Client Frames"; CONNECT and STOMP from "Connecting")."""
SERVER_COMMANDS = ("CONNECTED", "MESSAGE", "RECEIPT", "ERROR")
"""The frames a server sends ("Server Frames"; CONNECTED from "Connecting")."""
COMMANDS = frozenset(CLIENT_COMMANDS + SERVER_COMMANDS)
RAW_HEADER_COMMANDS = frozenset({"CONNECT", "CONNECTED"})
"""The frames whose headers are not escaped ("Value Encoding")."""

_ESCAPES = {"\\": "\\\\", "\r": "\\r", "\n": "\\n", ":": "\\c"}
_UNESCAPES = {"\\\\": "\\", "\\r": "\r", "\\n": "\n", "\\c": ":"}
_TO_ESCAPE = re.compile(r"[\\\r\n:]")
_ESCAPED = re.compile(r"\\.?", re.DOTALL)
_HEARTBEATS = re.compile(rb"(?:\r?\n)*")
_DIGITS = re.compile(r"[0-9]+")
_COMMAND, _HEADERS, _BODY = "command", "headers", "body"


@dataclass(frozen=True)
class Frame:
    """One STOMP frame: a command, its headers in wire order (repeats kept) and its body.

    >>> f = Frame("SEND", (("destination", "/queue/a"), ("destination", "/queue/b")), b"hi")
    >>> f.header("destination"), f.header("receipt")
    ('/queue/a', None)
    >>> f.with_header("receipt", "r1").headers[-1]
    ('receipt', 'r1')
    """

    command: str
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""

    def header(self, name: str) -> str | None:
        """The value of the first header called ``name`` (the one that counts), or None."""
        for key, value in self.headers:
            if key == name:
                return value
        return None

    def with_header(self, name: str, value: str) -> Frame:
        """This frame with ``name:value`` appended after its headers."""
        return Frame(self.command, self.headers + ((name, value),), self.body)


class FrameError(BrokerspecError):
    """A malformed frame: ``reason`` says what is wrong with which value, ``offset`` is the stream offset of the
    bad frame's first byte, ``command`` its command when it was read that far. ``frames`` holds the good frames
    completed before it in the same feed, which a caller may still want to act on."""

    def __init__(self, reason: str, offset: int, command: str | None = None,
                 frames: tuple[Frame, ...] = ()) -> None:
        where = f"{command} frame" if command else "frame"
        super().__init__(f"{reason} ({where} at byte {offset})")
        self.reason = reason
        self.offset = offset
        self.command = command
        self.frames = frames


@dataclass(frozen=True)
class Limits:
    """How much one frame may hold ("Size Limits"): bytes from its command to its NUL, headers, and the bytes of
    one header line or of the command line (end-of-line not counted)."""

    max_frame_bytes: int = 10 * 1024 * 1024
    max_headers: int = 1000
    max_header_line: int = 64 * 1024
    max_command_line: int = 64


def shown(value: str | bytes, width: int = 40) -> str:
    """``value`` as it reads in an error message: quoted, cut to ``width`` characters.

    >>> shown("x" * 50)
    "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...'"
    """
    text = repr(value[:width])
    if isinstance(value, bytes):
        text = text[1:]
    return text[:-1] + "..." + text[-1] if len(value) > width else text


def escape(text: str) -> str:
    """``text`` with CR, LF, colon and backslash escaped ("Value Encoding").

    >>> escape("a:b\\\\c")
    'a\\\\cb\\\\\\\\c'
    """
    return _TO_ESCAPE.sub(lambda match: _ESCAPES[match.group(0)], text) if _TO_ESCAPE.search(text) else text


def unescape(text: str) -> str:
    """``text`` with its escapes undone; ValueError naming an undefined one ("Value Encoding")."""
    if "\\" not in text:
        return text

    def one(match: re.Match[str]) -> str:
        found = _UNESCAPES.get(match.group(0))
        if found is None:
            raise ValueError(f"undefined escape {shown(match.group(0))}")
        return found

    return _ESCAPED.sub(one, text)


def encode(frame: Frame) -> bytes:
    """The bytes of ``frame``: headers escaped except in CONNECT and CONNECTED, nothing added but the NUL.

    A command or header name holding a colon, CR, LF or NUL cannot be written; nor can an unescaped header
    value holding CR or LF, a body holding a NUL without ``content-length``, or a ``content-length`` that is
    not the body's length. Each is a ValueError naming it.

    >>> encode(Frame("SEND", (("destination", "/q:1"),), b"hi"))
    b'SEND\\ndestination:/q\\\\c1\\n\\nhi\\x00'
    """
    _check_name("command", frame.command)
    raw = frame.command in RAW_HEADER_COMMANDS
    lines = [frame.command]
    for name, value in frame.headers:
        _check_name("header name", name)
        if raw:
            if "\r" in value or "\n" in value:
                raise ValueError(f"header {name!r} of a {frame.command} frame holds an end-of-line, "
                                 f"which cannot be escaped there: {shown(value)}")
            lines.append(f"{name}:{value}")
        else:
            lines.append(f"{escape(name)}:{escape(value)}")
    length = frame.header("content-length")
    if length is None and b"\0" in frame.body:
        raise ValueError(f"the body of a {frame.command} frame holds a NUL but the frame has no content-length")
    if length is not None and length != str(len(frame.body)):
        raise ValueError(f"content-length {shown(length)} of a {frame.command} frame is not its body's "
                         f"length {len(frame.body)}")
    lines.append("\n")
    return "\n".join(lines).encode("utf-8") + frame.body + b"\0"


def _check_name(what: str, name: str) -> None:
    """ValueError unless ``name`` is a writable command or header name."""
    if not name or any(c in name for c in ":\r\n\0"):
        raise ValueError(f"{what} {shown(name)} is empty or holds a colon, CR, LF or NUL")


class FrameReader:
    """Incremental parser: feed bytes as they arrive, get the frames they complete.

    >>> reader = FrameReader()
    >>> reader.feed(b"\\nSEND\\ndestination:/q\\n\\nhel")
    []
    >>> reader.feed(b"lo\\0")
    [Frame(command='SEND', headers=(('destination', '/q'),), body=b'hello')]
    >>> reader.heartbeats, reader.buffered
    (1, 0)
    """

    def __init__(self, limits: Limits = Limits()) -> None:
        self.limits = limits
        self.heartbeats = 0
        self._buffer = bytearray()
        self._base = 0            # stream offset of _buffer[0]
        self._part = _COMMAND
        self._start = 0           # stream offset of the current frame's first byte (or of the next heart-beat)
        self._line = 0            # stream offset of the next line to read
        self._scan = 0            # stream offset where the search for the body's NUL resumes
        self._command: str | None = None
        self._headers: list[tuple[str, str]] = []
        self._length: int | None = None
        self._error: FrameError | None = None

    @property
    def buffered(self) -> int:
        """How many bytes wait for the rest of a frame."""
        return len(self._buffer) - (self._start - self._base)

    def feed(self, data: bytes) -> list[Frame]:
        """The frames completed by ``data`` (heart-beats dropped and counted).

        Raises :class:`FrameError` at the first malformed frame, its ``frames`` holding the frames ``data``
        completed before it; from then on every feed raises the error again (with no frames).
        """
        if self._error is not None:
            raise self._error
        self._buffer += data
        frames: list[Frame] = []
        try:
            while (frame := self._step()) is not None:
                frames.append(frame)
        except FrameError as error:
            self._error = error
            raise FrameError(error.reason, error.offset, error.command, tuple(frames)) from None
        drop = self._start - self._base
        if drop:
            del self._buffer[:drop]
            self._base = self._start
        return frames

    def _fail(self, reason: str) -> FrameError:
        return FrameError(reason, self._start, self._command)

    def _step(self) -> Frame | None:
        """Read as far as the buffer allows: a completed frame, or None when more bytes are needed."""
        if self._part == _COMMAND and not self._read_command():
            return None
        if self._part == _HEADERS and not self._read_headers():
            return None
        return self._read_body()

    def _read_command(self) -> bool:
        buffer, base, limit = self._buffer, self._base, self.limits.max_command_line
        at = self._start - base
        beats = _HEARTBEATS.match(buffer, at)
        if beats is not None and beats.end() > at:
            self.heartbeats += buffer.count(b"\n", at, beats.end())
            at = beats.end()
            self._start = base + at
        if at == len(buffer) or (at == len(buffer) - 1 and buffer[at] == 0x0D):
            return False
        end = buffer.find(b"\n", at, at + limit + 2)
        if end < 0:
            if len(buffer) - at >= limit + 2:
                start = bytes(buffer[at:at + min(limit + 1, 41)])
                raise self._fail(f"command line longer than {limit} bytes: {shown(start)}")
            return False
        raw = bytes(buffer[at:end - 1] if end > at and buffer[end - 1] == 0x0D else buffer[at:end])
        if len(raw) > limit:
            raise self._fail(f"command line longer than {limit} bytes: {shown(raw[:limit + 1])}")
        try:
            command = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise self._fail(f"command is not UTF-8: {shown(raw)}") from None
        if command not in COMMANDS:
            raise self._fail(f"unknown command {shown(command)}")
        self._command, self._headers, self._length = command, [], None
        self._line = base + end + 1
        self._part = _HEADERS
        return True

    def _read_headers(self) -> bool:
        buffer, base, limits = self._buffer, self._base, self.limits
        raw_values, longest = self._command in RAW_HEADER_COMMANDS, limits.max_header_line
        frame_full = self._start - base + limits.max_frame_bytes - 1   # the frame's last byte within the limit
        while True:
            at = self._line - base
            end = buffer.find(b"\n", at, at + longest + 2)
            line = None if end < 0 else bytes(buffer[at:end - 1] if end > at and buffer[end - 1] == 0x0D
                                              else buffer[at:end])
            last = end if end >= 0 else len(buffer) - 1
            # Of two limits broken by the same line, the one broken at the earlier byte is reported, so the
            # reason does not depend on how the stream was cut into pieces.
            too_long = len(line) > longest if line is not None else last > at + longest
            if too_long and (last < frame_full or at + longest + 1 <= frame_full):
                shown_line = line if line is not None else bytes(buffer[at:at + min(longest + 1, 41)])
                raise self._fail(f"header line longer than {longest} bytes: {shown(shown_line[:longest + 1])}")
            if last >= frame_full:
                raise self._fail(f"frame longer than {limits.max_frame_bytes} bytes")
            if line is None:
                return False
            self._line = base + end + 1
            if not line:
                break
            if len(self._headers) >= limits.max_headers:
                raise self._fail(f"more than {limits.max_headers} headers")
            self._headers.append(self._header(line, raw_values))
        self._part = _BODY
        self._scan = self._line
        length = next((value for name, value in self._headers if name == "content-length"), None)
        if length is not None:
            if not _DIGITS.fullmatch(length):
                raise self._fail(f"content-length is not a non-negative integer: {shown(length)}")
            self._length = int(length)
            if self._line + self._length + 1 - self._start > limits.max_frame_bytes:
                raise self._fail(f"content-length {self._length} makes the frame longer than "
                                 f"{limits.max_frame_bytes} bytes")
        return True

    def _header(self, line: bytes, raw_values: bool) -> tuple[str, str]:
        colon = line.find(b":")
        if colon <= 0:
            problem = "has no colon" if colon < 0 else "has an empty name"
            raise self._fail(f"header line {len(self._headers) + 1} {problem}: {shown(line)}")
        try:
            name, value = line[:colon].decode("utf-8"), line[colon + 1:].decode("utf-8")
        except UnicodeDecodeError:
            raise self._fail(f"header line {len(self._headers) + 1} is not UTF-8: {shown(line)}") from None
        if raw_values:
            return name, value
        try:
            return unescape(name), unescape(value)
        except ValueError as error:
            raise self._fail(f"header line {len(self._headers) + 1} has an {error}") from None

    def _read_body(self) -> Frame | None:
        buffer, base, limits = self._buffer, self._base, self.limits
        body_at = self._line - base
        if self._length is not None:
            nul = body_at + self._length
            if len(buffer) <= nul:
                return None
            if buffer[nul] != 0:
                raise self._fail(f"byte {buffer[nul]:#04x} after the {self._length}-byte body given by "
                                 f"content-length is not NUL")
        else:
            stop = self._start - base + limits.max_frame_bytes
            nul = buffer.find(b"\0", self._scan - base, stop)
            if nul < 0:
                self._scan = base + len(buffer)
                if len(buffer) >= stop:
                    raise self._fail(f"frame longer than {limits.max_frame_bytes} bytes")
                return None
        with memoryview(buffer) as view, view[body_at:nul] as body:
            frame = Frame(self._command or "", tuple(self._headers), bytes(body))
        self._start = base + nul + 1
        self._part, self._command, self._headers = _COMMAND, None, []
        return frame
