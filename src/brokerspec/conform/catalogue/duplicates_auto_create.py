"""Conformance cases for auto-creating sends in duplicate detection (DUP-AUTO-CREATE).

Introduction
------------
A core client's ANYCAST send to an address whose settings have
``auto-create-queues`` on makes a queue named like the address when the
address has none, from 2.28.0 (ARTEMIS-4089: ``PostOfficeImpl.simpleRoute``
calls ``ServerSessionImpl.checkAutoCreate``); before, such a send is
NO_BINDINGS like any other, so every case runs under every profile and the
2.11 profile expects nothing made. The cases show, each where a broker could
get it wrong:

* ``PostOfficeImpl.route`` checks the duplicate ID first: a duplicate, also
  of an ID recorded while the address had no queue (DUP-NO-BINDINGS), makes
  no queue;
* the queue is made outside the client's transaction: it stays after a
  rollback, and it is durable, so it comes back from a crash with its
  messages;
* a bridged send makes it too, and its bridge duplicate does not;
* deleting the made queue, its address's last, forgets the address's IDs
  (``PostOfficeImpl.removeBinding`` -> ``deleteDuplicateCache``);
* a queue named like the address but bound to another address makes the send
  fail (AMQ229203, ``checkAutoCreate`` answers NOT_FOUND for the MULTICAST
  queue it finds): a transaction becomes rollback-only, and outside one the
  ID stays in memory, never durable, until a restart
  (DUP-AUTO-CREATE-NAME-TAKEN).

No Artemis test sends a duplicate ID with auto-creation; the order is read
from ``PostOfficeImpl.route`` at 2.28.0 to 2.44.0.
"""

from __future__ import annotations

from brokerspec.spec.duplicates import (
    Begin,
    Commit,
    Crash,
    CreateQueue,
    DeleteQueue,
    DuplicateId,
    IdKind,
    QueryId,
    Receive,
    Restart,
    Rollback,
    Send,
)

from . import Case

ROUTE = "PostOfficeImpl.route (checkDuplicateID before checkAddress and simpleRoute)"
CHECK = "ServerSessionImpl.checkAutoCreate (ARTEMIS-4089, 2.28.0)"


def text(value: str) -> DuplicateId:
    """A string duplicate ID, the kind a JMS client sets."""
    return DuplicateId(IdKind.STRING, value)


def auto(session: str, address: str, duplicate_id: DuplicateId | None = None, bridge_id: str | None = None) -> Send:
    """An auto-creating send: ANYCAST, to an address whose settings auto-create queues."""
    return Send(session, address, duplicate_id, bridge_id, auto_create=True)


CASES: tuple[Case, ...] = (
    Case(
        name="duplicates/auto-create-queue-after-the-duplicate-check",
        summary="An auto-creating send to an address without queues makes a queue named like it and lands there; "
                "the same ID again is a duplicate and makes nothing more; before 2.28.0 the send is NO_BINDINGS "
                "and no queue exists to receive from.",
        commands=(
            auto("p", "orders", text("x")),
            auto("p", "orders", text("x")),
            auto("p", "orders", text("y")),
            Receive("c", "orders"),
            Receive("c", "orders"),
            Receive("c", "orders"),
        ),
        rules=("DUP-AUTO-CREATE", "DUP-NONTX-DUPLICATE", "DUP-NO-BINDINGS"),
        source=f"{ROUTE}; PostOfficeImpl.simpleRoute -> {CHECK}; DeleteAddressTest (ARTEMIS-4089)",
    ),
    Case(
        name="duplicates/auto-create-duplicate-of-an-unbound-id-makes-no-queue",
        summary="An ID recorded while the address had no queue makes a later auto-creating send of it a "
                "duplicate, which returns before any queue is made; a new ID then makes the queue.",
        commands=(
            Send("p", "orders", text("x")),
            auto("p", "orders", text("x")),
            Receive("c", "orders"),
            auto("p", "orders", text("y")),
            Receive("c", "orders"),
        ),
        rules=("DUP-NO-BINDINGS", "DUP-AUTO-CREATE", "DUP-NONTX-DUPLICATE"),
        source=f"{ROUTE} (DUPLICATED_ID is returned before checkAddress); {CHECK}",
    ),
    Case(
        name="duplicates/auto-create-queue-outlives-a-rollback-and-a-crash",
        summary="A queue made by a send inside a transaction stays when the transaction rolls back, empty, and "
                "the rolled-back ID is free; a queue made outside one comes back from a crash with its message.",
        commands=(
            Begin("t"),
            auto("t", "orders", text("x")),
            Rollback("t"),
            Receive("c", "orders"),
            auto("p", "orders", text("x")),
            auto("p", "invoices", text("y")),
            Crash(),
            Receive("c", "orders"),
            Receive("c", "invoices"),
            auto("p", "orders", text("x")),
        ),
        rules=("DUP-AUTO-CREATE", "DUP-ROLLBACK", "DUP-RESTART-RELOAD", "DUP-NONTX-DUPLICATE"),
        source=f"{CHECK} (ServerSessionImpl.createQueue outside the transaction; QueueConfiguration durable by "
               "default); derived",
    ),
    Case(
        name="duplicates/auto-create-bridged-send-and-deleted-queue",
        summary="A bridged auto-creating send makes the queue, its bridge duplicate does not; deleting the made "
                "queue, the address's last, forgets the address's IDs, so the next send makes it again.",
        commands=(
            auto("p", "orders", bridge_id="01"),
            auto("p", "orders", bridge_id="01"),
            auto("p", "orders", text("x")),
            DeleteQueue("orders"),
            QueryId("orders", text("x")),
            auto("p", "orders", bridge_id="01"),
            Receive("c", "orders"),
        ),
        rules=("DUP-AUTO-CREATE", "DUP-BRIDGE-DUPLICATE", "DUP-FORGET-ON-LAST-QUEUE", "DUP-QUERY-ID"),
        source=f"PostOfficeImpl.checkBridgeDuplicateID (before {CHECK}); PostOfficeImpl.removeBinding -> "
               "deleteDuplicateCache",
    ),
    Case(
        name="duplicates/auto-create-name-taken-fails-the-send",
        summary="When a queue named like the address is bound to another address, an auto-creating send fails "
                "after the check: its ID stays in memory, rejecting a resend, until a restart forgets it; inside "
                "a transaction the failure dooms the commit. Before 2.28.0 the sends are NO_BINDINGS.",
        commands=(
            CreateQueue("invoices", "orders"),
            auto("p", "orders", text("x")),
            QueryId("orders", text("x")),
            Send("p", "orders", text("x")),
            Begin("t"),
            auto("t", "orders", text("y")),
            Commit("t"),
            Restart(),
            QueryId("orders", text("x")),
            QueryId("orders", text("y")),
        ),
        rules=("DUP-AUTO-CREATE-NAME-TAKEN", "DUP-COMMIT-ROLLBACK-ONLY", "DUP-RESTART-RELOAD"),
        source=f"{CHECK} (server.locateQueue finds the MULTICAST queue: NOT_FOUND); PostOfficeImpl.checkAddress "
               "throws AMQ229203 without ending the transaction route started; derived",
    ),
)
"""Every auto-creation case."""
