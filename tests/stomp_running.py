"""A broker served on a background thread, and a stomp.py client that waits for what it expects."""

from __future__ import annotations

import asyncio
import json
import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import stomp

from brokerspec.broker.io import BrokerServer
from brokerspec.broker.model import Model
from brokerspec.broker.record import Recorder
from brokerspec.spec import get_profile

T = TypeVar("T")
WAIT = 10.0


class RunningBroker:
    """A :class:`BrokerServer` on its own event loop thread; the model is only touched from that thread."""

    def __init__(self, path: Path | None = None, profile: str = "artemis-latest", trace: Path | None = None,
                 heartbeat: tuple[int, int] = (0, 0)) -> None:
        chosen = get_profile(profile)
        self.model = Model(chosen, path, Recorder(chosen, trace, explain=trace is not None))
        self.loop = asyncio.new_event_loop()
        self.server = BrokerServer(self.model, port=0, heartbeat=heartbeat)
        self.thread = threading.Thread(target=self.loop.run_forever, name="broker", daemon=True)
        self.thread.start()
        self.port = asyncio.run_coroutine_threadsafe(self.server.start(), self.loop).result(WAIT)

    def call(self, function: Callable[[], T]) -> T:
        """Run ``function`` on the broker's thread and return its result."""
        async def run() -> T:
            return function()
        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(WAIT)

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.server.close(), self.loop).result(WAIT)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(WAIT)
        self.model.close()


class Client(stomp.ConnectionListener):  # type: ignore[misc]
    """A stomp.py connection whose messages, errors and receipts land in queues."""

    def __init__(self, port: int, heartbeats: tuple[int, int] = (0, 0)) -> None:
        self.messages: queue.Queue[Any] = queue.Queue()
        self.errors: queue.Queue[Any] = queue.Queue()
        self.receipts: queue.Queue[str] = queue.Queue()
        self.connection = stomp.Connection12([("127.0.0.1", port)], heartbeats=heartbeats, auto_content_length=True)
        self.connection.set_listener("", self)
        self.connection.connect(wait=True)

    def on_message(self, frame: Any) -> None:
        self.messages.put(frame)

    def on_error(self, frame: Any) -> None:
        self.errors.put(frame)

    def on_receipt(self, frame: Any) -> None:
        self.receipts.put(frame.headers["receipt-id"])

    def next(self, timeout: float = WAIT) -> Any:
        return self.messages.get(timeout=timeout)

    def drain(self, quiet: float = 1.0) -> list[Any]:
        """Every message that arrives until none has for ``quiet`` seconds."""
        got: list[Any] = []
        while True:
            try:
                got.append(self.messages.get(timeout=quiet))
            except queue.Empty:
                return got

    def none_within(self, seconds: float) -> bool:
        try:
            self.messages.get(timeout=seconds)
        except queue.Empty:
            return True
        return False

    def send(self, destination: str, body: str, receipt: str | None = None, **headers: str) -> None:
        """Send; with ``receipt``, wait until the broker has answered it."""
        fixed = {key.replace("__", "-"): value for key, value in headers.items()}
        if receipt is None:
            self.connection.send(destination, body, headers=fixed)
            return
        self.connection.send(destination, body, headers=fixed, receipt=receipt)
        self.wait_receipt(receipt)

    def wait_receipt(self, receipt: str) -> None:
        while (got := self.receipts.get(timeout=WAIT)) != receipt:
            pass
        del got

    def manage(self, operation: str, *params: Any) -> tuple[bool, Any]:
        """A management request through ``activemq.management``; (succeeded, result)."""
        reply_queue = f"reply.{id(self)}"
        if not getattr(self, "_replies", False):
            self.connection.subscribe(reply_queue, id="replies", ack="auto", headers={"subscription-type": "ANYCAST"})
            self._replies = True
        self.connection.send("activemq.management", json.dumps(list(params)),
                             headers={"_AMQ_OperationName": operation, "reply-to": reply_queue})
        reply = self.next()
        return reply.headers["_AMQ_OperationSucceeded"] == "true", json.loads(reply.body)[0]

    def close(self) -> None:
        if self.connection.is_connected():
            self.connection.disconnect()
