"""A SUT's standard input and output as one channel: requests written, reply lines read, every wait bounded.

Introduction
------------
:class:`Channel` works on the two pipe descriptors directly, with ``select``
and ``os.read``/``os.write`` and no thread: brokerspec writes whatever
requests it has queued while it waits for the next reply line, so a batch
of pipelined requests (``docs/sut-protocol.md``) never deadlocks on a full
pipe in either direction, and a lone request costs one write, one wait and
one read.

Each wait for a line has a deadline: :meth:`Channel.next_line` raises
:class:`LineTimeout` when it passes. A line is returned with its newline;
a line still open when the output ends is returned as it is, and the end
itself as None. A line longer than ``limit`` bytes is cut one byte past
the limit (so the caller can tell it is too long) and ends the reading, so
a SUT cannot make brokerspec hold an unbounded line.

Writing into a pipe whose reader has gone (the SUT exited or closed its
input) drops what was queued and sets :attr:`Channel.input_closed`; the
replies already written can still be read, so a failure is blamed on the
first request left unanswered.
"""

from __future__ import annotations

import os
import select
import time

READ_CHUNK = 64 * 1024
"""The most bytes read from the SUT's output at once."""


class LineTimeout(Exception):
    """No complete line arrived before the deadline."""


class InputClosed(Exception):
    """The line waited for answers a request that could not be written: the SUT's input is closed."""


class Channel:
    """The write end of a SUT's input and the read end of its output (the caller owns and closes both)."""

    def __init__(self, input_fd: int, output_fd: int, limit: int) -> None:
        self.input_fd = input_fd
        self.output_fd = output_fd
        self.limit = limit
        self.written = 0
        """Bytes written into the SUT's input so far."""
        self.input_closed = False
        """Whether a write found the SUT's input closed; nothing queued since then was written."""
        self._pending = bytearray()
        self._buffer = bytearray()
        self._scanned = 0
        self._ended = False
        os.set_blocking(input_fd, False)

    @property
    def pending(self) -> int:
        """Bytes queued and not yet written."""
        return len(self._pending)

    def queue(self, data: bytes) -> None:
        """Queue ``data`` to be written while the channel waits (or by :meth:`flush`)."""
        if not self.input_closed:
            self._pending += data

    def next_line(self, deadline: float, needs: int = 0) -> bytes | None:
        """The next line of output (newline included), None at its end; :class:`LineTimeout` after ``deadline``.

        ``deadline`` is a :func:`time.monotonic` time. Queued requests are written meanwhile. ``needs``
        is how many bytes must have been written for the line to exist (the end of the request it
        answers): when the input closed before that, :class:`InputClosed` is raised instead of waiting.
        """
        while True:
            line = self._take_line()
            if line is not None or self._ended:
                return line
            if self._pending:
                self._write()
            if self.input_closed and self.written < needs:
                raise InputClosed()
            wanted_out = [self.input_fd] if self._pending else []
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise LineTimeout()
            readable, writable, _ = select.select([self.output_fd], wanted_out, [], remaining)
            if writable:
                self._write()
            if readable:
                self._read()

    def flush(self, deadline: float) -> bool:
        """Write everything queued before ``deadline``; whether it all went (not when the input is closed)."""
        while self._pending:
            self._write()
            remaining = deadline - time.monotonic()
            if not self._pending or remaining <= 0:
                break
            select.select([], [self.input_fd], [], remaining)
        return not self._pending and not self.input_closed

    def _take_line(self) -> bytes | None:
        buffer = self._buffer
        end = buffer.find(b"\n", self._scanned)
        if end >= 0:
            line = bytes(buffer[:end + 1])
            del buffer[:end + 1]
            self._scanned = 0
            return line
        self._scanned = len(buffer)
        if len(buffer) > self.limit:  # one byte past the limit tells the caller it is too long
            line = bytes(buffer[:self.limit + 1])
            buffer.clear()
            self._scanned = 0
            self._ended = True
            return line
        if self._ended and buffer:
            line = bytes(buffer)
            buffer.clear()
            self._scanned = 0
            return line
        return None

    def _read(self) -> None:
        try:
            chunk = os.read(self.output_fd, READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if chunk:
            self._buffer += chunk
        else:
            self._ended = True

    def _write(self) -> None:
        try:
            count = os.write(self.input_fd, self._pending)
        except BlockingIOError:
            return
        except OSError:  # the reader has gone: what was queued can never be read
            self.input_closed = True
            self._pending.clear()
            return
        del self._pending[:count]
        self.written += count
