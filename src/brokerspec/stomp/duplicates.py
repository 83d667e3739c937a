"""Duplicate detection over STOMP: sessions as connections, STOMP transactions, restarts of the broker process.

Introduction
------------
A spec session is one STOMP connection, opened at its first operation.
What is read from the broker and what is the client's own bookkeeping
follows the Artemis adapter (:mod:`brokerspec.artemis.duplicates`): a client
knows which transactions it began, and it numbers the messages it sends
(each send the broker did not drop as a duplicate takes the next number,
carried in a ``_BS_TAG`` header); everything else comes from the broker.

=====================  =============================================================================
spec operation         over STOMP, and what the outcome is read from
=====================  =============================================================================
``create_queue``       management ``createAddress`` (MULTICAST, when the address is new) and
                       ``createQueue`` of a MULTICAST queue, so every queue of an address gets a copy
``delete_queue``       management ``destroyQueue``; ``forgot_ids`` is whether the address was left
                       without queues
``begin``              ``BEGIN``
``send``               a persistent ``SEND`` with ``_AMQ_DUPL_ID`` (``transaction`` when one is open);
                       the status, the queues and whether the transaction is now rollback-only are
                       the broker's record of the send (management ``getRouting``)
``receive``            a ``SUBSCRIBE`` to the queue's FQQN with ``ack:client-individual`` and a
                       receipt: the messages that waited arrive before the receipt; the first is
                       acknowledged (in the transaction when one is open) and the subscription
                       closed, which gives the others back to the head of the queue
``commit``             ``COMMIT``; an ``ERROR`` is ``commit_failed`` (the connection is then closed
                       by the broker and opened again at the session's next operation)
``rollback``           ``ABORT``
``query_id``           management ``listDuplicateIds``
``restart``, ``crash``  the broker process stopped by SIGTERM (its connections go, rolling back their
                       transactions) or killed by SIGKILL, and started again on its store;
                       ``dropped_ids`` counts, per address, the stored IDs before (management
                       ``listStoredDuplicateIds``) that are not in the cache after
=====================  =============================================================================

IDs: a String or SimpleString ID is sent as its text, a ``byte[]`` one as
the text with those UTF-16LE bytes (the same cache key, DUP-ID-KEY).

Not expressible over STOMP: XA (``prepare``), a bridge ID, a ``Long`` ID
(its send fails on the broker, which no text header does), a ``byte[]`` ID
no text has, ``reject_duplicates=false``,
``address_full``, an auto-creating send, ``delete_id`` and
``set_id_cache_size``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from brokerspec.spec import Outcome, Profile
from brokerspec.spec.duplicates import (
    Begin, Commit, CommitFailed, Committed, Crash, CreateQueue, DeleteId, DeleteQueue, DoomReason, Done, DuplicateId,
    IdKind,
    IdQueried, NoTransaction, Prepare, QueryId, QueueDeleted, QueueExists, QueueNotFound, Receive, Received, Restart,
    Restarted, Rollback, RolledBack, RoutingStatus, Send, Sent, SetIdCacheSize, TransactionOpen,
)

from ..artemis.outcomes import NotExpressible, UnexpectedRefusal, new_tag
from .client import REPLY_PREFIX, Refusal, WireClient


@dataclass
class Session:
    """A spec session's connection and what its client knows of its transaction."""

    client: WireClient | None = None
    transaction: str | None = None
    numbers: list[int] = field(default_factory=list)


def header_text(duplicate_id: DuplicateId) -> str:
    """The ``_AMQ_DUPL_ID`` header text whose cache key is ``duplicate_id``'s (DUP-ID-KEY), or NotExpressible.

    A STOMP header is text, which the broker keeps as a String property, whose key is its UTF-16LE bytes
    (Artemis turns STOMP headers into String properties, held as SimpleStrings: the same key). So a String
    or SimpleString ID is sent as it is, and a ``byte[]`` ID as the text whose UTF-16LE bytes it is, when
    there is one. A Long cannot be sent: its send fails on the broker (ID_NOT_BYTES), which no text does.

    >>> header_text(DuplicateId(IdKind.BYTES, "5800"))
    'X'
    """
    if duplicate_id.kind in (IdKind.STRING, IdKind.SIMPLE_STRING):
        return duplicate_id.value
    if duplicate_id.kind is IdKind.BYTES:
        raw = bytes.fromhex(duplicate_id.value)
        try:
            text = raw.decode("utf-16-le") if len(raw) % 2 == 0 else None
        except UnicodeDecodeError:
            text = None
        if text is not None:
            return text
        raise NotExpressible(f"the byte[] ID {duplicate_id.value}: no text has those UTF-16LE bytes")
    raise NotExpressible(f"a {duplicate_id.kind.value} duplicate ID: STOMP headers are text, and a Long "
                         "property fails the send (ID_NOT_BYTES), which no text does")


class StompDuplicates:
    """The duplicate-detection domain on brokerspec's broker, through its STOMP port."""

    def __init__(self, connect: Callable[[], WireClient], restart: Callable[[bool, int | None], None],
                 persist_ids: bool) -> None:
        self.connect = connect
        self.restart_broker = restart
        self.persist_ids = persist_ids
        self.admin = connect()
        self.sessions: dict[str, Session] = {}
        self.numbers: dict[str, int] = {}
        self.next_number = 1
        self.begun = 0
        self.addresses: set[str] = set()
        """Every address this adapter named (a send to an address without queues records its ID too)."""

    def reset(self, profile: Profile) -> None:
        self.persist_ids = profile.duplicates.persist_id_cache

    def close(self) -> None:
        for session in self.sessions.values():
            if session.client is not None:
                session.client.close()
        self.admin.close()

    def execute(self, command: Any) -> Outcome:
        handlers: dict[type[Any], Callable[[Any], Outcome]] = {
            CreateQueue: self.create_queue, DeleteQueue: self.delete_queue, Begin: self.begin, Send: self.send,
            Receive: self.receive, Commit: self.commit, Rollback: self.rollback, QueryId: self.query_id,
            Restart: self.restart, Crash: self.restart, Prepare: self.unexpressible, DeleteId: self.unexpressible,
            SetIdCacheSize: self.unexpressible}
        return handlers[type(command)](command)

    def unexpressible(self, command: Any) -> Outcome:
        why = {"prepare": "STOMP has no XA: a transaction commits in one phase",
               "delete_id": "no management operation removes one ID from a cache",
               "set_id_cache_size": "the broker's cache size is a start-up setting (a restart sets it)"}
        raise NotExpressible(why[command.op])

    # -- the broker -------------------------------------------------------------------------------

    def connected_admin(self) -> WireClient:
        """The management connection, made again if the broker restarted since."""
        if self.admin.closed:
            self.admin = self.connect()
        return self.admin

    def manage(self, operation: str, *params: Any) -> tuple[bool, Any]:
        ok, result, _ = self.connected_admin().manage(operation, *params)
        return ok, result

    def queues(self) -> dict[str, dict[str, Any]]:
        ok, found = self.manage("getQueues")
        if not ok:
            raise UnexpectedRefusal(f"getQueues failed: {found}")
        return {info["name"]: info for info in found if not info["address"].startswith(REPLY_PREFIX)}

    def client(self, name: str) -> WireClient:
        session = self.sessions.setdefault(name, Session())
        if session.client is None or session.client.closed:
            session.client = self.connect()
        return session.client

    # -- operations -------------------------------------------------------------------------------

    def create_queue(self, command: CreateQueue) -> Outcome:
        """``queue_exists`` is the broker's refusal, read from its reason; the address is made only for a new name."""
        queues = self.queues()
        if command.queue not in queues and not any(info["address"] == command.address for info in queues.values()):
            self.manage("createAddress", command.address, "MULTICAST")
        ok, result, reason = self.connected_admin().manage("createQueue", command.address, "MULTICAST", command.queue)
        if ok:
            if command.queue in queues:
                raise UnexpectedRefusal(f"createQueue made a second queue {command.queue!r}")
            return Done()
        if reason is not None and reason.get("reason", {}).get("type") == "queue_exists":
            return QueueExists(command.queue)
        raise UnexpectedRefusal(f"createQueue failed: {result}")

    def delete_queue(self, command: DeleteQueue) -> Outcome:
        queues = self.queues()
        if command.queue not in queues:
            return QueueNotFound(command.queue)
        address = queues[command.queue]["address"]
        ok, result = self.manage("destroyQueue", command.queue)
        if not ok:
            raise UnexpectedRefusal(f"destroyQueue failed: {result}")
        return QueueDeleted(not any(info["address"] == address for info in self.queues().values()))

    def begin(self, command: Begin) -> Outcome:
        session = self.sessions.setdefault(command.session, Session())
        if session.transaction is not None:
            return TransactionOpen(command.session)
        self.begun += 1
        name = f"{command.session}-{self.begun}"
        self.client(command.session).request("begin", transaction=name)
        session.transaction, session.numbers = name, []
        return Done()

    def send(self, command: Send) -> Outcome:
        if command.bridge_id is not None:
            raise NotExpressible("a bridge ID: only a cluster bridge sets _AMQ_BRIDGE_DUP")
        if not command.reject_duplicates:
            raise NotExpressible("a send that skips the duplicate check: only the broker's own move paths do that")
        if command.address_full:
            raise NotExpressible("a send that fails after the duplicate check: no address can be made full")
        if command.auto_create:
            raise NotExpressible("an auto-creating send: the duplicates adapter makes every queue itself")
        text = None if command.duplicate_id is None else header_text(command.duplicate_id)
        session = self.sessions.setdefault(command.session, Session())
        self.addresses.add(command.address)
        tag = new_tag(self)
        headers = {"_BS_TAG": tag, "persistent": "true", "destination-type": "MULTICAST"}
        if text is not None:
            headers["_AMQ_DUPL_ID"] = text
        if session.transaction is not None:
            headers["transaction"] = session.transaction
        try:
            self.client(command.session).request("send", destination=command.address, body="", headers=headers)
        except Refusal as refusal:
            raise UnexpectedRefusal(f"the send was refused: {refusal}") from None
        ok, routing = self.manage("getRouting", tag)
        if not ok:
            raise UnexpectedRefusal(f"the broker has no record of the send: {routing}")
        status = RoutingStatus(routing["status"])
        doomed = bool(routing["rollback_only"])
        if status is RoutingStatus.DUPLICATED_ID:
            return Sent(status, rollback_only=doomed)
        number = self.next_number
        self.next_number += 1
        self.numbers[tag] = number
        if session.transaction is not None:
            session.numbers.append(number)
        names = sorted({name for _, name in routing["queues"]})
        return Sent(status, number, tuple(names), rollback_only=doomed)

    def receive(self, command: Receive) -> Outcome:
        queues = self.queues()
        if command.queue not in queues:
            return QueueNotFound(command.queue)
        session = self.sessions.setdefault(command.session, Session())
        client = self.client(command.session)
        fqqn = f"{queues[command.queue]['address']}::{command.queue}"
        answer = client.request("subscribe", destination=fqqn, id="receive", ack="client-individual")
        taken = [m for m in answer.messages if m.headers.get("subscription") == "receive"]
        try:
            if not taken:
                return Received(None)
            first = taken[0]
            extra = {} if session.transaction is None else {"transaction": session.transaction}
            client.request("ack", id=first.headers["ack"], **extra)
        finally:
            client.request("unsubscribe", id="receive")
        tag = first.headers.get("_BS_TAG")
        if tag not in self.numbers:
            raise UnexpectedRefusal(f"received a message brokerspec did not number (tag {tag!r})")
        return Received(self.numbers[tag])

    def commit(self, command: Commit) -> Outcome:
        session = self.sessions.setdefault(command.session, Session())
        if session.transaction is None:
            return NoTransaction(command.session)
        name, numbers = session.transaction, tuple(session.numbers)
        session.transaction, session.numbers = None, []
        try:
            self.client(command.session).request("commit", transaction=name)
        except Refusal as refusal:
            if "rollback-only" in refusal.body:
                return CommitFailed(DoomReason.DUPLICATE_ID)
            raise UnexpectedRefusal(f"the commit failed: {refusal}") from None
        return Committed(numbers)

    def rollback(self, command: Rollback) -> Outcome:
        session = self.sessions.setdefault(command.session, Session())
        if session.transaction is None:
            return NoTransaction(command.session)
        name, session.transaction, session.numbers = session.transaction, None, []
        self.client(command.session).request("abort", transaction=name)
        return RolledBack()

    def query_id(self, command: QueryId) -> Outcome:
        if command.bridge_id is not None:
            raise NotExpressible("a bridge ID: only a cluster bridge sets _AMQ_BRIDGE_DUP")
        if command.duplicate_id is None:
            raise NotExpressible("a query without an ID")
        if command.duplicate_id.kind is IdKind.LONG:
            return IdQueried(False)  # a Long never converts to a key (DUP-ID-KEY), so no cache holds it
        text = header_text(command.duplicate_id)
        ok, ids = self.manage("listDuplicateIds", command.address)
        if not ok:
            raise UnexpectedRefusal(f"listDuplicateIds failed: {ids}")
        return IdQueried(text in ids)

    def restart(self, command: Restart | Crash) -> Outcome:
        crash = isinstance(command, Crash)
        size = command.id_cache_size if isinstance(command, Restart) else None
        open_transactions = sum(s.transaction is not None for s in self.sessions.values())
        addresses = sorted(self.addresses | {info["address"] for info in self.queues().values()})
        before = {address: self.manage("listStoredDuplicateIds", address)[1] for address in addresses}
        self.close()
        self.restart_broker(crash, size)
        self.sessions.clear()
        self.admin = self.connect()
        after = {address: self.manage("listDuplicateIds", address, True)[1] for address in addresses}
        dropped = sum(max(0, len(ids) - len(after[a])) for a, ids in before.items()) if self.persist_ids else 0
        return Restarted(open_transactions, dropped)
