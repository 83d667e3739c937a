"""A synchronous STOMP client for the adapter: every request waits for its receipt, frames come in order.

Introduction
------------
The STOMP adapter needs to know, after each frame it sends, what the broker
did with it and what the frame caused: a ``RECEIPT`` says the broker is done
with the frame, an ``ERROR`` that it refused it (and closed the
connection), and the ``MESSAGE`` frames that arrive before the receipt are
the deliveries the frame made possible (brokerspec's broker writes those
before the receipt). :class:`WireClient` wraps one stomp.py connection (a
maintained client, the one users connect with) whose listener puts every
frame on one queue in arrival order, and :meth:`WireClient.request` sends
one frame with a receipt and returns what came before it.

Management requests go to ``activemq.management`` with a reply queue of
the client's own (named with :data:`REPLY_PREFIX`, which the domain
adapters leave out of what they observe).
"""

from __future__ import annotations

import itertools
import json
import queue
from dataclasses import dataclass, field
from typing import Any

import stomp

from brokerspec.spec import BrokerspecError

REPLY_PREFIX = "brokerspec.replies."
MANAGEMENT = "activemq.management"
_CLIENTS = itertools.count(1)


class WireLost(BrokerspecError):
    """The connection went away or a reply did not come in time."""


@dataclass
class Refusal(BrokerspecError):
    """The broker answered a frame with ERROR (and closed the connection)."""

    message: str
    body: str
    reason: dict[str, Any] | None = None
    """The ``brokerspec-reason`` header: the name model's refusal as a trace outcome's JSON."""

    def __str__(self) -> str:
        return f"{self.message}: {self.body}"


@dataclass
class Answer:
    """What came back for one request: the deliveries before its receipt."""

    messages: list[Any] = field(default_factory=list)


class _Listener(stomp.ConnectionListener):  # type: ignore[misc]
    def __init__(self, events: queue.Queue[tuple[str, Any]]) -> None:
        self.events = events

    def on_message(self, frame: Any) -> None:
        self.events.put(("message", frame))

    def on_receipt(self, frame: Any) -> None:
        self.events.put(("receipt", frame))

    def on_error(self, frame: Any) -> None:
        self.events.put(("error", frame))

    def on_disconnected(self) -> None:
        self.events.put(("disconnected", None))


class WireClient:
    """One connection to a STOMP broker on 127.0.0.1."""

    def __init__(self, port: int, timeout: float = 10.0) -> None:
        self.number = next(_CLIENTS)
        self.timeout = timeout
        self.events: queue.Queue[tuple[str, Any]] = queue.Queue()
        self.connection = stomp.Connection12([("127.0.0.1", port)], auto_content_length=True)
        self.connection.set_listener("", _Listener(self.events))
        self._receipts = itertools.count(1)
        self._reply_queue: str | None = None
        self.closed = False
        try:
            self.connection.connect(wait=True)
        except (stomp.exception.StompException, OSError) as error:
            raise WireLost(f"cannot connect to the broker on port {port}: {error}") from None

    def request(self, command: str, **kwargs: Any) -> Answer:
        """Send one frame (``send``, ``subscribe``, ``ack`` ... of stomp.py) with a receipt; wait for it."""
        if self.closed:
            raise WireLost("the connection is closed")
        receipt = f"r{next(self._receipts)}"
        if command in ("ack", "nack"):  # stomp.py takes their receipt as an argument, and no other headers
            kwargs["receipt"] = receipt
        else:
            kwargs["headers"] = {**(kwargs.get("headers") or {}), "receipt": receipt}
        try:
            getattr(self.connection, command)(**kwargs)
        except (stomp.exception.StompException, OSError) as error:
            self.closed = True
            raise WireLost(f"{command}: the connection failed: {error}") from None
        return self._wait(receipt, command)

    def _wait(self, receipt: str, command: str) -> Answer:
        answer = Answer()
        while True:
            try:
                kind, frame = self.events.get(timeout=self.timeout)
            except queue.Empty:
                raise WireLost(f"{command}: no receipt within {self.timeout:g} s") from None
            if kind == "message":
                answer.messages.append(frame)
            elif kind == "receipt" and frame.headers.get("receipt-id") == receipt:
                return answer
            elif kind == "error":
                self.closed = True
                reason = frame.headers.get("brokerspec-reason")
                raise Refusal(frame.headers.get("message", ""), frame.body or "",
                              None if reason is None else json.loads(reason))
            elif kind == "disconnected":
                self.closed = True
                raise WireLost(f"{command}: the broker closed the connection")

    def manage(self, operation: str, *params: Any) -> tuple[bool, Any, dict[str, Any] | None]:
        """One management request; (succeeded, result or error text, the refusal's JSON if it was one)."""
        if self._reply_queue is None:
            # made by management requests that want no reply, so no address setting or consumer model can
            # refuse it; the receipts say they are done
            reply = self._reply_queue = f"{REPLY_PREFIX}{self.number}"
            for made, arguments in (("createAddress", [reply, "ANYCAST"]), ("createQueue", [reply, "ANYCAST", reply])):
                self.request("send", destination=MANAGEMENT, body=json.dumps(arguments),
                             headers={"_AMQ_OperationName": made})
            self.request("subscribe", destination=f"{reply}::{reply}", id="replies", ack="auto")
        answer = self.request("send", destination=MANAGEMENT, body=json.dumps(list(params)),
                              headers={"_AMQ_OperationName": operation, "reply-to": self._reply_queue})
        replies = [m for m in answer.messages if m.headers.get("subscription") == "replies"]
        while not replies:
            try:
                kind, frame = self.events.get(timeout=self.timeout)
            except queue.Empty:
                raise WireLost(f"management {operation}: no reply within {self.timeout:g} s") from None
            if kind == "message" and frame.headers.get("subscription") == "replies":
                replies.append(frame)
        reply = replies[0]
        reason = reply.headers.get("brokerspec-reason")
        result = json.loads(reply.body)[0]
        return (reply.headers.get("_AMQ_OperationSucceeded") == "true", result,
                None if reason is None else json.loads(reason))

    def close(self) -> None:
        """Disconnect (politely when the connection is still up)."""
        if not self.closed and self.connection.is_connected():
            try:
                self.connection.disconnect()
            except (stomp.exception.StompException, OSError):
                pass
        self.closed = True
