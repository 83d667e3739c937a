"""The I/O layer: TCP connections on 127.0.0.1, bytes in and out, nothing else.

Introduction
------------
The bottom layer of the Qpid design (seed ``004``). One asyncio event loop
serves every connection on one thread, with callback protocols
(:class:`asyncio.Protocol`) rather than coroutines per client: bytes that
arrive are fed to the connection's :class:`~.frames.FrameReader`, each
complete frame goes to its :class:`~.sessions.Session`, and the frames the
session writes go into the transport's buffer. Nothing ever waits on a
client:

* **A slow client** whose socket stops draining fills its transport's
  buffer; past the high-water mark asyncio calls ``pause_writing`` and the
  session reports itself not ready, so the model hands its messages to other
  subscriptions (or keeps them waiting) instead of buffering without bound.
  ``resume_writing`` makes it ready again and deliveries resume.
* **A dead client** is a connection lost: its session aborts its
  transactions and gives back what it held, which the model then hands to
  the others.
* **A malformed frame** is an ``ERROR`` frame naming the problem and the
  byte offset, then that connection closes; no other connection notices.
* **Heart-beats** (STOMP 1.2 "Heart-beating"): the server sends an EOL when
  it has been silent for the negotiated interval, and closes a connection
  that has sent nothing for twice the interval it promised.

After every batch of frames (and every connection lost or resumed) the
layer asks the model to :meth:`~.model.Model.pump` and writes the
deliveries to their sessions. Because the model is only ever called from
this loop, it needs no locks.

Servers bind 127.0.0.1 unless told otherwise.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time

from .frames import Frame, FrameError, FrameReader, Limits, encode
from .model import Model
from .protocol import ServerProtocol, error_frame
from .sessions import Session

LOG = logging.getLogger("brokerspec.broker")

HIGH_WATER = 256 * 1024
"""Bytes a connection may have waiting to be sent before it stops taking deliveries."""


class Connection(asyncio.Protocol):
    """One client's TCP connection."""

    def __init__(self, server: BrokerServer, name: str) -> None:
        self.server = server
        self.name = name
        self.transport: asyncio.Transport | None = None
        self.reader = FrameReader(server.limits)
        self.paused = False
        self.last_in = time.monotonic()
        self.last_out = time.monotonic()
        self.session = Session(server.model, name, self.write, self.ready,
                               ServerProtocol("brokerspec", server.heartbeat))
        self.session.settle = server.pump
        self.beats: asyncio.TimerHandle | None = None

    # -- asyncio callbacks -----------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if not isinstance(transport, asyncio.Transport):  # pragma: no cover - a TCP server's transports are
            raise TypeError(f"unexpected transport {transport!r}")
        self.transport = transport
        transport.set_write_buffer_limits(high=HIGH_WATER)
        self.server.connections.add(self)

    def data_received(self, data: bytes) -> None:
        self.last_in = time.monotonic()
        if self.session.closed:
            return
        error: FrameError | None = None
        try:
            frames = self.reader.feed(data)
        except FrameError as failed:
            frames, error = list(failed.frames), failed
        for frame in frames:
            self.session.receive(frame)
            if self.session.closed:
                break
        if error is not None and not self.session.closed:
            LOG.info("%s: malformed frame at byte %d: %s", self.name, error.offset, error.reason)
            self.write(error_frame("malformed frame", f"at byte {error.offset}: {error.reason}"))
            self.session.close()
        if self.session.connect is not None and self.beats is None:
            self._schedule_beats()
        self.server.pump()
        if self.session.closed and self.transport is not None:
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.server.connections.discard(self)
        if self.beats is not None:
            self.beats.cancel()
        self.session.close()
        self.server.pump()

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False
        self.server.pump()

    # -- what the session uses -------------------------------------------------------------------

    def write(self, frame: Frame) -> None:
        """Queue one frame for the client (a closed transport drops it)."""
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(encode(frame))
            self.last_out = time.monotonic()

    def ready(self) -> bool:
        """Whether this client can take a delivery now."""
        return not self.paused and not self.session.closed and self.transport is not None \
            and not self.transport.is_closing()

    # -- heart-beats -----------------------------------------------------------------------------

    def _schedule_beats(self) -> None:
        connect = self.session.connect
        if connect is None or connect.heartbeat == (0, 0):
            return
        interval = min(value for value in connect.heartbeat if value > 0) / 2000.0
        self.beats = asyncio.get_running_loop().call_later(interval, self._beat, interval)

    def _beat(self, interval: float) -> None:
        connect = self.session.connect
        if connect is None or self.transport is None or self.transport.is_closing():
            return
        send_every, expect_every = connect.heartbeat
        now = time.monotonic()
        if expect_every and now - self.last_in > 2 * expect_every / 1000.0:
            LOG.info("%s: no data for %.1f s, closing", self.name, now - self.last_in)
            self.transport.close()
            return
        if send_every and now - self.last_out >= send_every / 1000.0 * 0.9:
            self.transport.write(b"\n")
            self.last_out = now
        self.beats = asyncio.get_running_loop().call_later(interval, self._beat, interval)


class BrokerServer:
    """The listening socket and every connection on it."""

    def __init__(self, model: Model, host: str = "127.0.0.1", port: int = 61613,
                 heartbeat: tuple[int, int] = (0, 0), limits: Limits = Limits()) -> None:
        self.model = model
        self.host = host
        self.port = port
        self.heartbeat = heartbeat
        self.limits = limits
        self.connections: set[Connection] = set()
        self._names = itertools.count(1)
        self._server: asyncio.AbstractServer | None = None

    async def start(self) -> int:
        """Start listening; the port (the one the system chose, when asked for port 0)."""
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: Connection(self, f"c{next(self._names)}"),
                                                self.host, self.port)
        port: int = self._server.sockets[0].getsockname()[1]
        self.port = port
        return port

    async def serve_until(self, stop: asyncio.Event) -> None:
        """Serve until ``stop`` is set, then close every connection."""
        await stop.wait()
        await self.close()

    async def close(self) -> None:
        """Stop listening and close every connection (their sessions give back what they held)."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        for connection in list(self.connections):
            if connection.transport is not None:
                connection.transport.close()
        await asyncio.sleep(0)

    def pump(self) -> None:
        """Hand out what waits and write each delivery to its session."""
        for subscription, entry in self.model.pump():
            subscription.sink.deliver(subscription, entry)
