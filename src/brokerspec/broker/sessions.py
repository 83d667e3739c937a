"""The sessions layer: one STOMP connection's subscriptions, transactions and receipts, turned into model calls.

Introduction
------------
A :class:`Session` is what the Qpid design (seed ``004``) calls a session:
it owns the connection's subscriptions and its transactions, and it is the
only thing that turns client frames into calls on the :class:`~.model.Model`.
It never touches a socket: it receives frames the protocol layer accepted
and hands the frames it wants sent to ``write``; the I/O layer owns the
socket. Theory of operation, per client frame (STOMP 1.2, "Client Frames"):

``SEND``
    ``destination`` is a name the name model resolves (an address, an FQQN
    ``address::queue``, a prefixed name); ``destination-type`` (``ANYCAST``
    or ``MULTICAST``, Artemis's STOMP header) gives the routing type, none
    leaves it to the name model (ADDR-SEND-UNTYPED). ``persistent:true``
    makes the message durable. ``transaction`` defers it to the commit. The
    destination ``activemq.management`` is the management address
    (:mod:`.management`). Every other header travels with the message.
``SUBSCRIBE`` / ``UNSUBSCRIBE``
    attach to the queue the name model picks for ``destination`` with the
    routing type in ``subscription-type`` (Artemis's STOMP header); ``ack``
    is ``auto`` (taken at delivery), ``client`` (cumulative) or
    ``client-individual``. Unsubscribing gives back what was not acknowledged.
``ACK`` / ``NACK``
    ``id`` is the ``ack`` header of the ``MESSAGE``; in a transaction the
    acknowledgement waits for the commit. A ``NACK`` gives the message back.
``BEGIN`` / ``COMMIT`` / ``ABORT``
    a named transaction of this connection; a commit that fails (a
    duplicate ID made it rollback-only) is an ``ERROR``.
``DISCONNECT``
    answered with its receipt; the I/O layer then closes the connection.

A refusal is an ``ERROR`` frame naming the frame and the reason, after
which the connection closes (STOMP 1.2: "the server MUST then close the
connection"); a connection that goes away aborts its open transactions and
gives back what its subscriptions held. A ``receipt`` header is answered
after the frame's work is in the store.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from brokerspec.spec.addressing import Rejected, RoutingType

from ..codec import encode_outcome
from .frames import Frame
from .management import MANAGEMENT_ADDRESS, REASON_HEADER, describe_refusal, handle_management
from .model import Model
from .transactions import Transaction
from .protocol import Connect, ProtocolError, ServerProtocol, error_frame, message_frame, receipt_frame
from .queues import Entry, Subscription

RESERVED_HEADERS = frozenset({"destination", "transaction", "receipt", "content-length", "persistent",
                              "destination-type"})
TAG_HEADER = "_BS_TAG"
"""A SEND header under which the broker remembers what the send became (management ``getRouting``)."""
"""SEND headers the broker acts on rather than passing along with the message."""

ROUTING_TYPES = {"ANYCAST": RoutingType.ANYCAST, "MULTICAST": RoutingType.MULTICAST}


class Refused(Exception):
    """A frame the session refuses: the ERROR frame's message and detail, and the name model's refusal if it
    was one (the ERROR frame then carries it as JSON in a ``brokerspec-reason`` header, for programs)."""

    def __init__(self, message: str, detail: str = "", rejected: Rejected | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail
        self.rejected = rejected

    def error_frame(self, command: str, receipt: str | None) -> Frame:
        """The ERROR frame that reports this refusal of a ``command`` frame."""
        frame = error_frame(self.message, f"{command}: {self.detail}", receipt)
        if self.rejected is not None:
            frame = frame.with_header(REASON_HEADER, json.dumps(encode_outcome(self.rejected)))
        return frame


def routing_type(frame: Frame, header: str) -> RoutingType | None:
    """The routing type a frame's ``header`` names, None when absent."""
    value = frame.header(header)
    if value is None:
        return None
    found = ROUTING_TYPES.get(value.upper())
    if found is None:
        raise Refused(f"bad {header}", f"{header} must be ANYCAST or MULTICAST, not {value!r}")
    return found


class Session:
    """One client connection above the wire."""

    def __init__(self, model: Model, name: str, write: Callable[[Frame], None], ready: Callable[[], bool],
                 protocol: ServerProtocol) -> None:
        self.model = model
        self.name = name
        self.write = write
        self.ready = ready
        """Whether the client's connection can take another message now (the I/O layer knows)."""
        self.protocol = protocol
        self.settle: Callable[[], None] = lambda: None
        """Hands out what waits (the I/O layer's pump), called before a receipt is written: a client that
        subscribed with a receipt has every message that was waiting before the receipt arrives."""
        self.connect: Connect | None = None
        self.subscriptions: dict[str, Subscription] = {}
        self.transactions: dict[str, Transaction] = {}
        self.closed = False

    # -- frames in ---------------------------------------------------------------------------

    def receive(self, frame: Frame) -> None:
        """Handle one client frame; refusals become an ERROR frame and close the session."""
        receipt = frame.header("receipt")
        try:
            accepted = self.protocol.receive(frame)
            if isinstance(accepted, Connect):
                self.connect = accepted
                self.write(self.protocol.connected_frame(self.name))
                return
            handler = getattr(self, f"_on_{accepted.command.lower()}")
            handler(accepted)
        except ProtocolError as error:
            self.write(error.error_frame())
            self.close()
            return
        except Refused as refused:
            self.write(refused.error_frame(frame.command, receipt))
            self.close()
            return
        if receipt is not None:
            self.settle()  # deliveries the frame made possible go out before its receipt
            self.write(receipt_frame(receipt))
        if frame.command == "DISCONNECT":
            self.close()

    def _transaction(self, frame: Frame) -> Transaction | None:
        name = frame.header("transaction")
        if name is None:
            return None
        tx = self.transactions.get(name)
        if tx is None:
            raise Refused("no such transaction", f"transaction {name!r} was not begun on this connection")
        return tx

    def _on_send(self, frame: Frame) -> None:
        destination = frame.header("destination") or ""
        tx = self._transaction(frame)
        if destination == MANAGEMENT_ADDRESS:
            handle_management(self.model, frame)
            return
        headers = _user_headers(frame)
        result = self.model.send(destination, routing_type(frame, "destination-type"), headers, frame.body,
                                 frame.header("persistent") == "true", tx)
        tag = frame.header(TAG_HEADER)
        if tag is not None:
            self.model.remember(tag, result)
        if isinstance(result.refused, Rejected):
            raise Refused("send refused", f"{destination!r}: {describe_refusal(result.refused)}", result.refused)

    def _on_subscribe(self, frame: Frame) -> None:
        key = frame.header("id") or ""
        if key in self.subscriptions:
            raise Refused("subscription exists", f"subscription id {key!r} is in use on this connection")
        destination = frame.header("destination") or ""
        ack = frame.header("ack") or "auto"
        found = self.model.subscribe(destination, routing_type(frame, "subscription-type"), key, ack == "auto",
                                     self)
        if isinstance(found, Rejected):
            raise Refused("subscribe refused", f"{destination!r}: {describe_refusal(found)}", found)
        found.cumulative = ack == "client"
        self.subscriptions[key] = found

    def _on_unsubscribe(self, frame: Frame) -> None:
        key = frame.header("id") or ""
        subscription = self.subscriptions.pop(key, None)
        if subscription is None:
            raise Refused("no such subscription", f"subscription id {key!r} is not open on this connection")
        self.model.unsubscribe(subscription)

    def _held(self, frame: Frame) -> tuple[Subscription, int]:
        ack_id = frame.header("id") or ""
        number, _, key = ack_id.partition(":")
        subscription = self.subscriptions.get(key)
        if subscription is None or not number.isdigit():
            raise Refused("unknown ack id", f"id {ack_id!r} names no message delivered on this connection")
        return subscription, int(number)

    def _on_ack(self, frame: Frame) -> None:
        subscription, number = self._held(frame)
        if not self.model.ack(subscription, number, subscription.cumulative, self._transaction(frame)):
            raise Refused("message not held", f"message {number} is not waiting for an acknowledgement")

    def _on_nack(self, frame: Frame) -> None:
        subscription, number = self._held(frame)
        if not self.model.nack(subscription, number):
            raise Refused("message not held", f"message {number} is not waiting for an acknowledgement")

    def _on_begin(self, frame: Frame) -> None:
        name = frame.header("transaction") or ""
        if name in self.transactions:
            raise Refused("transaction exists", f"transaction {name!r} is already open on this connection")
        self.transactions[name] = self.model.begin(name)

    def _on_commit(self, frame: Frame) -> None:
        tx = self._transaction(frame)
        if tx is None:  # pragma: no cover - the protocol layer requires the header
            raise Refused("no transaction", "COMMIT needs a transaction header")
        del self.transactions[tx.name]
        doom = self.model.commit(tx)
        if doom is not None:
            raise Refused("transaction rolled back", f"transaction {tx.name!r} was rollback-only: {doom}")

    def _on_abort(self, frame: Frame) -> None:
        tx = self._transaction(frame)
        if tx is None:  # pragma: no cover - the protocol layer requires the header
            raise Refused("no transaction", "ABORT needs a transaction header")
        del self.transactions[tx.name]
        self.model.abort(tx)

    def _on_disconnect(self, frame: Frame) -> None:
        """Nothing to do before the receipt; :meth:`receive` closes afterwards."""

    # -- frames out --------------------------------------------------------------------------

    def deliver(self, subscription: Subscription, entry: Entry) -> None:
        """Write one delivery as a MESSAGE frame."""
        message = entry.message
        ack = None if subscription.auto_ack else f"{message.number}:{subscription.key}"
        self.write(message_frame(message.address, str(message.number), subscription.key, message.body,
                                 message.headers, ack))

    # -- the end -----------------------------------------------------------------------------

    def close(self) -> None:
        """The connection is gone or going: abort its transactions, give back what its subscriptions held."""
        if self.closed:
            return
        self.closed = True
        for tx in list(self.transactions.values()):
            self.model.abort(tx)
        self.transactions.clear()
        for subscription in self.subscriptions.values():
            self.model.unsubscribe(subscription)
        self.subscriptions.clear()


def _user_headers(frame: Frame) -> tuple[tuple[str, str], ...]:
    """The headers that travel with the message: the first of each name, minus those the broker acts on."""
    seen: set[str] = set()
    kept: list[tuple[str, str]] = []
    for name, value in frame.headers:
        if name in seen or name in RESERVED_HEADERS:
            continue
        seen.add(name)
        kept.append((name, value))
    return tuple(kept)
