"""Conformance cases for duplicate detection: IDs, bounded caches, bridge IDs, transactions and restarts.

Introduction
------------
Each case is a short broker script whose expected outcomes the duplicate-
detection spec computes under every profile it names. Together the cases
cover:

* how a duplicate-ID property becomes the bytes the broker compares: a string
  and a ``SimpleString`` are one ID, and equal to their UTF-16 bytes but not
  to the UTF-8 bytes, while a long cannot be converted and fails the send
  (``Message.getDuplicateIDBytes``);
* routing in ``PostOfficeImpl.route`` and ``checkDuplicateID``: the check comes
  before the bindings lookup, a duplicate outside a transaction is dropped
  while the client is told it succeeded, a duplicate inside one makes the
  transaction rollback-only, and the broker's move paths
  (``rejectDuplicates`` false) route a duplicate without recording it again;
* the bounded cache of ``DuplicateIDCacheImpl``: one per address, sized when
  it is created, a ring that overwrites the oldest ID, where a rejected
  duplicate does not move, an ID written twice takes two slots, and a deleted
  ID leaves a hole; size 0 switches detection off;
* bridge IDs, checked against the address's separate ``BRIDGE.`` cache only,
  added at once (an *instant add*) even inside a client transaction, and
  removed again when that transaction rolls back;
* visibility: a client transaction's IDs enter the cache only after its
  commit (``AddDuplicateIDOperation.afterCommit``), so the same ID in one
  transaction, in two open transactions, or sent outside while a transaction
  holds it, is not a duplicate; a rollback or a failed commit leaves none;
* failed sends, which leave no ID behind but, from Artemis 2.18, may evict the
  oldest ID on the way;
* queues: deleting an address's last queue forgets its IDs, for good;
* restarts and crashes (``PostOfficeJournalLoader.handleDuplicateIds``,
  ``DuplicateIDCacheImpl.load``): open transactions are lost, persisted IDs
  are reloaded in the order they were stored, the oldest dropped when the new
  cache is smaller, and the write position carried on so eviction stays first
  in, first out;
* auto-creating sends (a queue made after the duplicate check), in
  :mod:`.duplicates_auto_create`;
* XA two-phase commit: prepare, the second phase and restarts between them, in
  :mod:`.duplicates_xa` (those cases need SUT protocol version 3).

Sources. Most scenarios follow seed 001 (``001_7bc8976e1fb4bc71.txt``), a
walk through the duplicate-detection code of Apache ActiveMQ Artemis 2.11.0;
each such case names the class or method of the walk-through it exercises.
The others come from the Artemis classes and methods the spec's rule
table cites, from Artemis tests (``DuplicateDetectionTest``, ``PagingTest``,
``BridgeReconnectTest``, ``MoveMessageDuplicateIDTest``) and from the JIRA
issues that changed the behaviour (ARTEMIS-332, ARTEMIS-2324, ARTEMIS-3384,
ARTEMIS-4115, ARTEMIS-4159). A few cases pin down decisions the spec takes
where those sources are silent, and say so in their source.

The default ``id-cache-size`` is 20000, so a case about eviction starts with
a restart that sets a small global size; the cache then gets that size when
the first send creates it. A case restricted to some profiles is so because
the configuration it needs exists only there: the per-address
``id-cache-size`` of Artemis 2.31.0 (or its absence before), and an
``id-cache-size`` of 0, which turns detection off only from 2.28.0
(ARTEMIS-4115; the 2.11 ring never wraps at size 0). Every other difference
between profiles shows in the expected outcomes the spec computes for each.
"""

from __future__ import annotations

from brokerspec.spec.duplicates import (
    Begin,
    Commit,
    Crash,
    CreateQueue,
    DeleteId,
    DeleteQueue,
    DuplicateId,
    IdKind,
    Receive,
    Restart,
    Rollback,
    Send,
    SetIdCacheSize,
)

from . import Case, duplicates_auto_create, duplicates_xa, queries

SEED = "seed 001 (001_7bc8976e1fb4bc71.txt)"
"""How a case cites the seed document that walks through Artemis 2.11.0 duplicate detection."""

BEFORE_2_31 = ("seed", "artemis-2.11")
"""The profiles without a per-address id-cache-size."""

LATEST_ONLY = ("artemis-latest",)
"""The profile with a per-address id-cache-size (ARTEMIS-4159, 2.31.0)."""


def text(value: str) -> DuplicateId:
    """A string duplicate ID, the kind a JMS client sets."""
    return DuplicateId(IdKind.STRING, value)


def raw(hex_bytes: str) -> DuplicateId:
    """A byte-array duplicate ID, written as lower-case hex."""
    return DuplicateId(IdKind.BYTES, hex_bytes)


def cache_size(size: int) -> Restart:
    """A restart that sets the global id-cache-size, so that caches created afterwards are ``size`` slots."""
    return Restart(id_cache_size=size)


# --- the ID and its key ---------------------------------------------------------------------------

ID_CASES: tuple[Case, ...] = (
    Case(
        name="duplicates/id-key-is-the-utf16-bytes-of-a-string",
        summary="A String, a SimpleString and the bytes 58 00 (UTF-16, low byte first) are one ID 'X', while the "
                "UTF-8 byte 58 is another.",
        commands=(
            CreateQueue("orders", "q"),
            Send("p", "orders", text("X")),
            Send("p", "orders", DuplicateId(IdKind.SIMPLE_STRING, "X")),
            Send("p", "orders", raw("5800")),
            Send("p", "orders", raw("58")),
            Send("p", "orders", raw("58")),
            Send("p", "orders", DuplicateId(IdKind.SIMPLE_STRING, "order-2")),
            Send("p", "orders", text("order-2")),
            Receive("c", "q"),
            Receive("c", "q"),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-ID-KEY", "DUP-ROUTED", "DUP-NONTX-DUPLICATE", "DUP-RECEIVE"),
        source=f"{SEED}, Message.getDuplicateIDBytes (String to SimpleString.getData, byte[] as is) and "
               "CoreMessage.getDuplicateProperty",
    ),
    Case(
        name="duplicates/long-id-fails-the-send-and-records-nothing",
        summary="A duplicate ID that is a long cannot be cast to bytes: every such send fails, nothing is routed "
                "and nothing recorded, so the same text as a string is new.",
        commands=(
            CreateQueue("orders", "q"),
            Send("p", "orders", DuplicateId(IdKind.LONG, "7")),
            Send("p", "orders", DuplicateId(IdKind.LONG, "7")),
            Send("p", "orders", text("7")),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-ID-NOT-BYTES", "DUP-ROUTED", "DUP-RECEIVE"),
        source=f"{SEED}, Message.getDuplicateIDBytes (the cast to byte[] of a non-string value)",
    ),
    Case(
        name="duplicates/long-id-in-transaction-dooms-it",
        summary="A send with a long ID fails inside a transaction and makes it rollback-only; the commit fails and "
                "the transaction's other ID is not recorded.",
        commands=(
            CreateQueue("orders", "q"),
            Begin("t"),
            Send("t", "orders", text("a")),
            Send("t", "orders", DuplicateId(IdKind.LONG, "1")),
            Send("t", "orders", text("b")),
            Commit("t"),
            Send("p", "orders", text("a")),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-ID-NOT-BYTES", "DUP-SEND-FAILED-IN-TX", "DUP-COMMIT-ROLLBACK-ONLY", "DUP-ROUTED"),
        source=f"{SEED}, Message.getDuplicateIDBytes; OpenWireConnection.processMessageSend "
               "(markAsRollbackOnly on a failed send)",
    ),
)

# --- routing outside a transaction ----------------------------------------------------------------

ROUTING_CASES: tuple[Case, ...] = (
    Case(
        name="duplicates/nontx-duplicate-dropped-but-client-told-ok",
        summary="Outside a transaction a second send of an ID is not routed, its status is DUPLICATED_ID, the "
                "client is told it succeeded and the queue holds one copy; messages without an ID are never checked.",
        commands=(
            CreateQueue("orders", "q"),
            Send("p1", "orders", text("x")),
            Send("p2", "orders", text("x")),
            Send("p1", "orders"),
            Send("p1", "orders"),
            Receive("c", "q"),
            Receive("c", "q"),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-ROUTED", "DUP-NONTX-DUPLICATE", "DUP-RECEIVE"),
        source=f"{SEED}, PostOfficeImpl.route returning RoutingStatus.DUPLICATED_ID (and no cache consulted when "
               "getDuplicateIDBytes is null); DuplicateDetectionTest.testSimpleDuplicateDetecion",
    ),
    Case(
        name="duplicates/id-recorded-on-address-without-queues",
        summary="A send to an address with no queues answers NO_BINDINGS but its ID is recorded, because the check "
                "runs before the bindings are looked up.",
        commands=(
            Send("p", "orders", text("x")),
            Send("p", "orders", text("x")),
            CreateQueue("orders", "q"),
            Send("p", "orders", text("x")),
            Send("p", "orders", text("y")),
            Receive("c", "q"),
        ),
        rules=("DUP-NO-BINDINGS", "DUP-NONTX-DUPLICATE", "DUP-ROUTED"),
        source=f"{SEED}, PostOfficeImpl.route (checkDuplicateID before getBindingsForRoutingAddress)",
    ),
    Case(
        name="duplicates/each-address-has-its-own-cache",
        summary="The same ID is new on a second address; each address checks only its own cache.",
        commands=(
            CreateQueue("orders", "q-orders"),
            CreateQueue("prices", "q-prices"),
            Send("p", "orders", text("x")),
            Send("p", "prices", text("x")),
            Send("p", "orders", text("x")),
            Send("p", "prices", text("x")),
            Receive("c", "q-orders"),
            Receive("c", "q-prices"),
        ),
        rules=("DUP-CACHE-PER-ADDRESS", "DUP-ROUTED", "DUP-NONTX-DUPLICATE"),
        source=f"{SEED}, PostOfficeImpl.getDuplicateIDCache (one DuplicateIDCacheImpl per address)",
    ),
    Case(
        name="duplicates/move-path-routes-a-duplicate-without-recording-it",
        summary="With rejectDuplicates false a duplicate is routed and not written again, so it is evicted at its "
                "first slot's turn; a new ID on that path is recorded as usual.",
        commands=(
            cache_size(3),
            CreateQueue("orders", "q"),
            Send("p", "orders", text("a")),
            Send("p", "orders", text("b")),
            Send("mover", "orders", text("a"), reject_duplicates=False),
            Send("mover", "orders", text("c"), reject_duplicates=False),
            Send("p", "orders", text("c")),
            Send("p", "orders", text("d")),
            Send("p", "orders", text("a")),
        ),
        rules=("DUP-NO-REJECT", "DUP-RING-FIFO", "DUP-ROUTED", "DUP-NONTX-DUPLICATE"),
        source=f"{SEED}, PostOfficeImpl.checkDuplicateID (rejectDuplicates && isDuplicate; "
               "addToCache only when !isDuplicate); MoveMessageDuplicateIDTest",
    ),
    Case(
        name="duplicates/move-path-duplicate-keeps-one-slot",
        summary="A duplicate routed on the move path takes no second slot, so in two slots the next new ID fills "
                "the free slot and the original ID is still detected.",
        commands=(
            cache_size(2),
            CreateQueue("orders", "q"),
            Send("p", "orders", text("a")),
            Send("mover", "orders", text("a"), reject_duplicates=False),
            Send("p", "orders", text("b")),
            Send("p", "orders", text("a")),
        ),
        rules=("DUP-NO-REJECT", "DUP-RING-FIFO", "DUP-ROUTED", "DUP-NONTX-DUPLICATE"),
        source=f"{SEED}, PostOfficeImpl.checkDuplicateID (addToCache only when !isDuplicate); "
               "MoveMessageDuplicateIDTest",
    ),
)

# --- the bounded ring -----------------------------------------------------------------------------

RING_CASES: tuple[Case, ...] = (
    Case(
        name="duplicates/full-cache-evicts-the-oldest-id",
        summary="In a cache of two slots the third new ID overwrites the first: the first is new again while the "
                "second and third are still detected.",
        commands=(
            cache_size(2),
            CreateQueue("orders", "q"),
            Send("p", "orders", text("a")),
            Send("p", "orders", text("b")),
            Send("p", "orders", text("c")),
            Send("p", "orders", text("b")),
            Send("p", "orders", text("c")),
            Send("p", "orders", text("a")),
        ),
        rules=("DUP-RING-FIFO", "DUP-ROUTED", "DUP-NONTX-DUPLICATE"),
        source=f"{SEED}, DuplicateIDCacheImpl.addToCacheInMemory (overwrite ids[pos], cache.remove of the old "
               "holder)",
    ),
    Case(
        name="duplicates/cache-position-wraps-around",
        summary="The write position wraps after the last slot and keeps going round: after five IDs in three slots "
                "exactly the last three are detected.",
        commands=(
            cache_size(3),
            Send("p", "orders", text("a")),
            Send("p", "orders", text("b")),
            Send("p", "orders", text("c")),
            Send("p", "orders", text("d")),
            Send("p", "orders", text("e")),
            Send("p", "orders", text("e")),
            Send("p", "orders", text("d")),
            Send("p", "orders", text("c")),
            Send("p", "orders", text("b")),
        ),
        rules=("DUP-RING-FIFO", "DUP-NO-BINDINGS", "DUP-NONTX-DUPLICATE"),
        source=f"{SEED}, DuplicateIDCacheImpl.addToCacheInMemory (if (pos++ == cacheSize - 1) pos = 0)",
    ),
    Case(
        name="duplicates/rejected-duplicate-is-not-refreshed",
        summary="Rejecting an ID as a duplicate writes nothing and does not move it: the other IDs keep their "
                "slots, and the rejected one is still evicted first, as the oldest.",
        commands=(
            cache_size(2),
            CreateQueue("orders", "q"),
            Send("p", "orders", text("a")),
            Send("p", "orders", text("b")),
            Send("p", "orders", text("b")),
            Send("p", "orders", text("a")),
            Send("p", "orders", text("c")),
            Send("p", "orders", text("b")),
            Send("p", "orders", text("a")),
        ),
        rules=("DUP-RING-FIFO", "DUP-NONTX-DUPLICATE", "DUP-ROUTED"),
        source=f"{SEED}, DuplicateIDCacheImpl.contains (a plain lookup) and PostOfficeImpl.checkDuplicateID "
               "(addToCache only when !isDuplicate)",
    ),
    Case(
        name="duplicates/size-zero-turns-detection-off",
        summary="With id-cache-size 0 no ID is ever recorded or detected, before or after a restart.",
        commands=(
            cache_size(0),
            CreateQueue("orders", "q"),
            Send("p", "orders", text("x")),
            Send("p", "orders", text("x")),
            Restart(),
            Send("p", "orders", text("x")),
            Receive("c", "q"),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-SIZE-ZERO", "DUP-ROUTED", "DUP-RESTART-RELOAD", "DUP-RECEIVE"),
        source="NoOpDuplicateIDCache (ARTEMIS-4115, 2.28.0)",
        profiles=LATEST_ONLY,
    ),
    Case(
        name="duplicates/size-zero-bridge-cache-drops-every-bridged-message",
        summary="With id-cache-size 0 (2.28 on) the bridge check answers 'duplicate' to every bridge ID: every "
                "bridged message is dropped, the first included.",
        commands=(
            cache_size(0),
            CreateQueue("orders", "q"),
            Send("bridge", "orders", bridge_id="b1"),
            Send("bridge", "orders", bridge_id="b1"),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-SIZE-ZERO", "DUP-ROUTED", "DUP-RECEIVE"),
        source="NoOpDuplicateIDCache.atomicVerify returns false (ARTEMIS-4115, 2.28.0; unchanged at 2.44) and "
               "PostOfficeImpl.checkDuplicateID takes that as a duplicate; checked against real Artemis 2.40.0",
        profiles=LATEST_ONLY,
    ),
    Case(
        name="duplicates/delete-id-leaves-a-hole",
        summary="Deleting an ID leaves a hole, refilled only when the cursor comes round, while the next new ID "
                "still overwrites the oldest slot; deleting an unknown or unconvertible ID finds nothing.",
        commands=(
            cache_size(3),
            DeleteId("orders", text("a")),
            Send("p", "orders", text("a")),
            Send("p", "orders", text("b")),
            Send("p", "orders", text("c")),
            DeleteId("orders", DuplicateId(IdKind.LONG, "1")),
            DeleteId("orders", raw("62")),
            DeleteId("orders", raw("6200")),
            DeleteId("orders", text("b")),
            Send("p", "orders", text("b")),
            Send("p", "orders", text("c")),
            Send("p", "orders", text("a")),
            Send("p", "orders", text("c")),
        ),
        rules=("DUP-DELETE-ID", "DUP-ID-KEY", "DUP-RING-FIFO", "DUP-NO-BINDINGS", "DUP-NONTX-DUPLICATE"),
        source="DuplicateIDCache.deleteFromCache (interface listed in seed 001); DuplicateIDCacheImpl",
    ),
)

# --- visibility and transactions ------------------------------------------------------------------

TX_CASES: tuple[Case, ...] = (
    Case(
        name="duplicates/id-visible-only-after-commit",
        summary="An ID sent in an open transaction is not yet in the cache, so the same ID sent outside is routed; "
                "after the commit it is a duplicate.",
        commands=(
            CreateQueue("orders", "q"),
            Begin("t"),
            Send("t", "orders", text("x")),
            Send("p", "orders", text("x")),
            Commit("t"),
            Send("p", "orders", text("x")),
            Receive("c", "q"),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-TX-BEGIN", "DUP-TX-HELD", "DUP-ROUTED", "DUP-COMMIT", "DUP-NONTX-DUPLICATE"),
        source=f"{SEED}, DuplicateIDCacheImpl.addToCache (tx.afterStore) and "
               "AddDuplicateIDOperation.afterCommit",
    ),
    Case(
        name="duplicates/commit-records-ids-in-send-order",
        summary="A commit writes its IDs after the earlier ones and in send order, so in two slots the second ID of "
                "the transaction evicts the ID sent before it.",
        commands=(
            cache_size(2),
            CreateQueue("orders", "q"),
            Send("p", "orders", text("a")),
            Begin("t"),
            Send("t", "orders", text("b")),
            Send("t", "orders", text("c")),
            Commit("t"),
            Send("p", "orders", text("c")),
            Send("p", "orders", text("b")),
            Send("p", "orders", text("a")),
        ),
        rules=("DUP-COMMIT", "DUP-RING-FIFO", "DUP-TX-HELD", "DUP-NONTX-DUPLICATE", "DUP-ROUTED"),
        source=f"{SEED}, AddDuplicateIDOperation.afterCommit (addToCacheInMemory per operation)",
    ),
    Case(
        name="duplicates/duplicate-in-transaction-makes-it-rollback-only",
        summary="A duplicate inside a transaction is not routed but succeeds for the client and dooms the "
                "transaction: later sends are marked, the commit fails, and none of its IDs is recorded.",
        commands=(
            CreateQueue("orders", "q"),
            Send("p", "orders", text("x")),
            Begin("t"),
            Send("t", "orders", text("y")),
            Send("t", "orders", text("x")),
            Send("t", "orders", text("z")),
            Commit("t"),
            Send("p", "orders", text("y")),
            Send("p", "orders", text("z")),
            Receive("c", "q"),
            Receive("c", "q"),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-TX-DUPLICATE", "DUP-TX-HELD", "DUP-COMMIT-ROLLBACK-ONLY", "DUP-ROUTED"),
        source=f"{SEED}, PostOfficeImpl.checkDuplicateID (markAsRollbackOnly with ActiveMQDuplicateIdException); "
               "DuplicateDetectionTest.testEntireTransactionRejected",
    ),
    Case(
        name="duplicates/failed-commit-puts-received-messages-back",
        summary="A transaction that received a message and then sent a duplicate fails its commit, and the "
                "received message waits in the queue again.",
        commands=(
            CreateQueue("orders", "q"),
            Send("p", "orders", text("x")),
            Begin("t"),
            Receive("t", "q"),
            Receive("c", "q"),
            Send("t", "orders", text("x")),
            Receive("t", "q"),
            Commit("t"),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-RECEIVE", "DUP-TX-DUPLICATE", "DUP-COMMIT-ROLLBACK-ONLY"),
        source="TransactionImpl.commit on a rollback-only transaction; DuplicateDetectionTest "
               "(seed 001 PostOfficeImpl.checkDuplicateID dooms the transaction)",
    ),
    Case(
        name="duplicates/doomed-transaction-can-still-be-rolled-back",
        summary="A rollback-only transaction keeps accepting sends, each marked rollback-only; a rollback ends it "
                "and the session may begin afresh and commit the same IDs.",
        commands=(
            CreateQueue("orders", "q"),
            Send("p", "orders", text("x")),
            Begin("t"),
            Send("t", "orders", text("x")),
            Send("t", "orders", text("x")),
            Send("t", "orders", text("y")),
            Rollback("t"),
            Begin("t"),
            Send("t", "orders", text("y")),
            Commit("t"),
            Send("p", "orders", text("y")),
            Receive("c", "q"),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-TX-DUPLICATE", "DUP-ROLLBACK", "DUP-TX-BEGIN", "DUP-COMMIT", "DUP-NONTX-DUPLICATE"),
        source=f"{SEED}, PostOfficeImpl.checkDuplicateID; the transaction lifecycle",
    ),
    Case(
        name="duplicates/rollback-leaves-no-id-and-returns-messages",
        summary="A rollback discards the held message, puts the received message back and leaves the "
                "transaction's ID unrecorded, so sending it again is accepted.",
        commands=(
            CreateQueue("orders", "q"),
            Send("p", "orders"),
            Begin("t"),
            Receive("t", "q"),
            Send("t", "orders", text("x")),
            Rollback("t"),
            Send("p", "orders", text("x")),
            Receive("c", "q"),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-ROLLBACK", "DUP-RECEIVE", "DUP-TX-HELD", "DUP-ROUTED"),
        source=f"{SEED}, DuplicateIDCacheImpl.addToCache (the add waits for the commit); "
               "DuplicateDetectionTest.testRollbackThenSend; ARTEMIS-3389 (rejected)",
    ),
    Case(
        name="duplicates/same-id-twice-in-one-transaction",
        summary="Two sends with one ID in one transaction are both accepted and delivered; the ID takes two slots, "
                "and once its older slot is overwritten it is no longer detected although the newer slot holds it.",
        commands=(
            cache_size(3),
            CreateQueue("orders", "q"),
            Begin("t"),
            Send("t", "orders", text("a")),
            Send("t", "orders", text("a")),
            Commit("t"),
            Send("p", "orders", text("b")),
            Send("p", "orders", text("a")),
            Send("p", "orders", text("c")),
            Send("p", "orders", text("a")),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-SAME-ID-IN-TX", "DUP-TX-HELD", "DUP-COMMIT", "DUP-RING-FIFO", "DUP-NONTX-DUPLICATE",
               "DUP-ROUTED"),
        source=f"{SEED}, DuplicateIDCacheImpl.addToCache (no check against the transaction's own adds) and "
               "addToCacheInMemory (cache.put before cache.remove of the evicted holder)",
    ),
    Case(
        name="duplicates/same-id-in-two-open-transactions",
        summary="The same ID in two open transactions passes both checks and both commits succeed, since nothing "
                "is checked again at commit.",
        commands=(
            CreateQueue("orders", "q"),
            Begin("t1"),
            Begin("t2"),
            Send("t1", "orders", text("x")),
            Send("t2", "orders", text("x")),
            Commit("t1"),
            Commit("t2"),
            Send("p", "orders", text("x")),
            Receive("c", "q"),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-CONCURRENT-TX", "DUP-TX-HELD", "DUP-COMMIT", "DUP-NONTX-DUPLICATE"),
        source=f"{SEED}, AddDuplicateIDOperation.afterCommit (no re-check); "
               "DuplicateDetectionTest.testXADuplicateDetection3",
    ),
    Case(
        name="duplicates/transaction-lifecycle-refusals",
        summary="A session cannot begin a second transaction while one is open, nor commit or roll back without "
                "one; a refused move changes nothing.",
        commands=(
            CreateQueue("orders", "q"),
            Commit("t"),
            Rollback("t"),
            Begin("t"),
            Send("t", "orders", text("x")),
            Begin("t"),
            Commit("t"),
            Commit("t"),
            Send("p", "orders", text("x")),
        ),
        rules=("DUP-NO-TRANSACTION", "DUP-TX-BEGIN", "DUP-TX-ALREADY-OPEN", "DUP-COMMIT", "DUP-NONTX-DUPLICATE"),
        source="the transaction lifecycle table of the spec (Artemis ServerSessionImpl)",
    ),
    Case(
        name="duplicates/committed-message-waits-in-arrival-order",
        summary="A message held by a transaction reaches its queue at the commit, behind a later-numbered message "
                "sent outside the transaction that was already waiting: a queue delivers in arrival order.",
        commands=(
            CreateQueue("orders", "q"),
            Send("p", "orders"),
            Begin("t"),
            Send("t", "orders"),
            Send("p", "orders"),
            Commit("t"),
            Receive("c", "q"),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-COMMIT", "DUP-TX-HELD", "DUP-ROUTED", "DUP-RECEIVE"),
        source="QueueImpl.addTail at the commit (TransactionImpl.commit runs the held messages' AddOperation); "
               "checked against real Artemis 2.11.0 and 2.40.0",
    ),
    Case(
        name="duplicates/rollback-returns-to-the-head-or-to-arrival-order",
        summary="Two transactions take the first two messages and roll back in the opposite order: 2.11 puts each "
                "back at the head (the second first), 2.32 on puts each back in its arrival place; a restart then "
                "reloads the queue in arrival order under both.",
        commands=(
            CreateQueue("orders", "q"),
            Send("p", "orders"),
            Send("p", "orders"),
            Send("p", "orders"),
            Begin("a"),
            Receive("a", "q"),
            Begin("b"),
            Receive("b", "q"),
            Rollback("a"),
            Rollback("b"),
            Receive("c", "q"),
            Begin("d"),
            Receive("d", "q"),
            Restart(),
            Receive("c", "q"),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-ROLLBACK", "DUP-RECEIVE", "DUP-RESTART-RELOAD"),
        source="2.11 RefsOperation.afterRollback (addFirst, then QueueImpl.addHead); ARTEMIS-4517 (2.32.0, addSorted "
               "by MessageReferenceImpl.getSequenceComparator); journal reload order; checked against real Artemis "
               "2.11.0 and 2.40.0",
    ),
)

# --- failed sends ---------------------------------------------------------------------------------

FAILED_CASES: tuple[Case, ...] = (
    Case(
        name="duplicates/failed-send-leaves-no-id",
        summary="A send whose routing fails after the check (a full address) reports the failure and leaves its ID "
                "out of the cache, so a retry is accepted.",
        commands=(
            CreateQueue("orders", "q"),
            Send("p", "orders", text("x"), address_full=True),
            Send("p", "orders", text("x")),
            Send("p", "orders", text("x")),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-SEND-FAILED", "DUP-ROUTED", "DUP-NONTX-DUPLICATE"),
        source="PagingTest.testFailMessagesDuplicates; ARTEMIS-2324, ARTEMIS-3384",
    ),
    Case(
        name="duplicates/failed-send-evicts-the-oldest-from-2-18",
        summary="In a full cache a failed send leaves the cache as it was up to 2.17, while from 2.18 its "
                "add-then-delete evicts the oldest ID and leaves a hole.",
        commands=(
            cache_size(2),
            CreateQueue("orders", "q"),
            Send("p", "orders", text("a")),
            Send("p", "orders", text("b")),
            Send("p", "orders", text("z"), address_full=True),
            Send("p", "orders", text("b")),
            Send("p", "orders", text("a")),
        ),
        rules=("DUP-NONTX-VISIBILITY", "DUP-SEND-FAILED", "DUP-NONTX-DUPLICATE", "DUP-ROUTED"),
        source="ARTEMIS-2324 (2.8.0), ARTEMIS-3384 (2.18.0); PagingTest.testFailMessagesDuplicates",
    ),
    Case(
        name="duplicates/failed-send-in-transaction-dooms-it",
        summary="A send that fails inside a transaction makes it rollback-only; its commit fails with the reason "
                "SEND_FAILED and its other messages are discarded.",
        commands=(
            CreateQueue("orders", "q"),
            Begin("t"),
            Send("t", "orders", text("a")),
            Send("t", "orders", text("b"), address_full=True),
            Commit("t"),
            Send("p", "orders", text("a")),
            Send("p", "orders", text("b")),
            Receive("c", "q"),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-SEND-FAILED-IN-TX", "DUP-COMMIT-ROLLBACK-ONLY", "DUP-ROUTED"),
        source="OpenWireConnection.processMessageSend (markAsRollbackOnly on a failed send), made the rule for "
               "every client by the spec",
    ),
    Case(
        name="duplicates/failed-bridged-send-follows-the-bridge-timing",
        summary="When bridge IDs are added at once and normal IDs before the commit, a failed bridged send evicts "
                "the oldest bridge ID and leaves a hole, while a failed normal send leaves its cache as it was.",
        commands=(
            cache_size(2),
            CreateQueue("orders", "q"),
            Send("bridge", "orders", bridge_id="b1"),
            Send("bridge", "orders", bridge_id="b2"),
            Send("bridge", "orders", bridge_id="b3", address_full=True),
            Send("bridge", "orders", bridge_id="b2"),
            Send("bridge", "orders", bridge_id="b1"),
            Send("p", "orders", text("x")),
            Send("p", "orders", text("y")),
            Send("p", "orders", text("z"), address_full=True),
            Send("p", "orders", text("x")),
        ),
        rules=("DUP-SEND-FAILED", "DUP-NONTX-VISIBILITY", "DUP-BRIDGE-DUPLICATE", "DUP-NONTX-DUPLICATE",
               "DUP-ROUTED"),
        overrides=(("duplicates.nontx_add", "BEFORE_COMMIT"), ("duplicates.bridge_add", "IMMEDIATE")),
        source="ARTEMIS-2324 (2.8.0), ARTEMIS-3384 (2.18.0), with the bridge and non-transactional timings set "
               "apart as the spec's options allow",
    ),
)

# --- bridges --------------------------------------------------------------------------------------

BRIDGE_CASES: tuple[Case, ...] = (
    Case(
        name="duplicates/bridge-ids-have-their-own-cache",
        summary="A bridge ID with the same bytes as a normal ID is not a duplicate of it, since bridge IDs live in "
                "the address's separate BRIDGE. cache, where a repeated one is dropped silently.",
        commands=(
            CreateQueue("orders", "q"),
            Send("p", "orders", text("x")),
            Send("bridge", "orders", bridge_id="7800"),
            Send("p", "orders", raw("7800")),
            Send("bridge", "orders", bridge_id="7800"),
            Send("bridge", "orders", bridge_id="7900"),
            Send("p", "orders", text("y")),
            Receive("c", "q"),
            Receive("c", "q"),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-CACHE-PER-ADDRESS", "DUP-BRIDGE-DUPLICATE", "DUP-NONTX-DUPLICATE", "DUP-ROUTED"),
        source=f"{SEED}, PostOfficeImpl.checkDuplicateID (getDuplicateIDCache(BRIDGE_CACHE_STR.concat(address)); "
               "atomicVerify false: the message is dropped); BridgeReconnectTest",
    ),
    Case(
        name="duplicates/bridged-message-skips-the-normal-id",
        summary="A message carrying a bridge ID is checked against the bridge cache only: its normal ID is neither "
                "checked nor recorded on that hop.",
        commands=(
            CreateQueue("orders", "q"),
            Send("p", "orders", text("x")),
            Send("bridge", "orders", text("x"), bridge_id="01"),
            Send("bridge", "orders", text("y"), bridge_id="02"),
            Send("p", "orders", text("y")),
            Send("bridge", "orders", text("z"), bridge_id="01"),
            Send("p", "orders", text("z")),
            Receive("c", "q"),
            Receive("c", "q"),
            Receive("c", "q"),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-BRIDGE-FIRST", "DUP-BRIDGE-DUPLICATE", "DUP-ROUTED"),
        source=f"{SEED}, PostOfficeImpl.checkDuplicateID (the bridge branch; the else branch reads "
               "getDuplicateIDBytes only without a bridge ID)",
    ),
    Case(
        name="duplicates/bridge-id-in-transaction-is-an-instant-add",
        summary="A bridge ID sent in an open transaction enters the bridge cache at once from 2.18, so a second copy "
                "is dropped, while up to 2.17 it waits for the commit and the copy gets through.",
        commands=(
            CreateQueue("orders", "q"),
            Begin("t"),
            Send("t", "orders", bridge_id="b1"),
            Send("bridge", "orders", bridge_id="b1"),
            Commit("t"),
            Send("bridge", "orders", bridge_id="b1"),
            Receive("c", "q"),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-TX-HELD", "DUP-BRIDGE-DUPLICATE", "DUP-COMMIT", "DUP-ROUTED"),
        source=f"{SEED}, DuplicateIDCacheImpl.addToCache (instantAdd: tx.addOperation, processed in "
               "beforeCommit); ARTEMIS-3384 (2.18.0)",
    ),
    Case(
        name="duplicates/bridge-instant-add-undone-by-rollback",
        summary="A bridge ID added inside a transaction that rolls back is removed again, so the bridge's resend "
                "is accepted.",
        commands=(
            CreateQueue("orders", "q"),
            Begin("t"),
            Send("t", "orders", bridge_id="b1"),
            Rollback("t"),
            Send("bridge", "orders", bridge_id="b1"),
            Send("bridge", "orders", bridge_id="b1"),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-ROLLBACK", "DUP-TX-HELD", "DUP-ROUTED", "DUP-BRIDGE-DUPLICATE"),
        source="ARTEMIS-3384 (2.18.0: instant adds deleted on rollback); "
               f"{SEED}, AddDuplicateIDOperation (never run when the transaction rolls back)",
    ),
    Case(
        name="duplicates/bridge-duplicate-in-transaction-rolls-back-at-once",
        summary="A bridge duplicate inside a transaction rolls its work back on the spot (the received message "
                "is back at once) and dooms it, so the commit fails.",
        commands=(
            CreateQueue("orders", "q"),
            Send("bridge", "orders", bridge_id="b1"),
            Begin("t"),
            Receive("t", "q"),
            Send("t", "orders", text("x")),
            Send("t", "orders", bridge_id="b1"),
            Receive("c", "q"),
            Send("t", "orders", text("y")),
            Commit("t"),
            Send("p", "orders", text("x")),
            Send("p", "orders", text("y")),
            Receive("c", "q"),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-BRIDGE-DUPLICATE-IN-TX", "DUP-COMMIT-ROLLBACK-ONLY", "DUP-RECEIVE", "DUP-ROUTED"),
        source=f"{SEED}, PostOfficeImpl.checkDuplicateID (context.getTransaction().rollback() when atomicVerify "
               "fails)",
    ),
    Case(
        name="duplicates/bridge-ids-restored-after-restart",
        summary="Committed bridge IDs are persisted and reloaded into the bridge cache at a restart, apart from "
                "the address's normal IDs.",
        commands=(
            CreateQueue("orders", "q"),
            Begin("t"),
            Send("t", "orders", bridge_id="b1"),
            Commit("t"),
            Send("p", "orders", raw("b1")),
            Restart(),
            Send("bridge", "orders", bridge_id="b1"),
            Send("p", "orders", raw("b1")),
            Send("bridge", "orders", bridge_id="b2"),
        ),
        rules=("DUP-RESTART-RELOAD", "DUP-BRIDGE-DUPLICATE", "DUP-NONTX-DUPLICATE", "DUP-CACHE-PER-ADDRESS"),
        source=f"{SEED}, PostOfficeJournalLoader.handleDuplicateIds (one map entry per cache name)",
    ),
    Case(
        name="duplicates/uncommitted-bridge-id-lost-at-crash",
        summary="A crash loses an open transaction with the bridge ID it held (from 2.18 already visible in "
                "memory, never stored), so the bridge's resend after the crash is accepted.",
        commands=(
            CreateQueue("orders", "q"),
            Begin("t"),
            Send("t", "orders", bridge_id="b1"),
            Crash(),
            Send("bridge", "orders", bridge_id="b1"),
            Send("bridge", "orders", bridge_id="b1"),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-RESTART-RELOAD", "DUP-TX-HELD", "DUP-ROUTED", "DUP-BRIDGE-DUPLICATE"),
        source="DuplicateIDCacheImpl.addToCache (storeDuplicateIDTransactional: the record commits with the "
               f"transaction; {SEED}); ARTEMIS-3384",
    ),
    Case(
        name="duplicates/rollback-after-the-instant-add-was-evicted-deletes-nothing",
        summary="From 2.18 a bridge ID added at once inside a transaction and evicted before the rollback is no "
                "longer cached: the rollback deletes nothing, and the ID that evicted it stays detected.",
        commands=(
            cache_size(1),
            CreateQueue("orders", "q"),
            Begin("t"),
            Send("t", "orders", bridge_id="b1"),
            Send("bridge", "orders", bridge_id="b2"),
            Rollback("t"),
            Send("bridge", "orders", bridge_id="b2"),
            Send("bridge", "orders", bridge_id="b1"),
        ),
        rules=("DUP-ROLLBACK", "DUP-TX-HELD", "DUP-RING-FIFO", "DUP-BRIDGE-DUPLICATE", "DUP-ROUTED"),
        source="ARTEMIS-3384 (2.18.0: instant adds deleted on rollback, by deleteFromCache, which finds nothing "
               f"once the ID is evicted); {SEED}, DuplicateIDCacheImpl.addToCacheInMemory",
    ),
    Case(
        name="duplicates/bridge-duplicate-keeps-the-first-doom-reason",
        summary="A transaction already rollback-only for a duplicate ID that then sends a bridge duplicate is "
                "rolled back and stays doomed for the first reason, which its commit reports.",
        commands=(
            CreateQueue("orders", "q"),
            Send("p", "orders", text("x")),
            Send("bridge", "orders", bridge_id="b1"),
            Begin("t"),
            Send("t", "orders", text("x")),
            Send("t", "orders", bridge_id="b1"),
            Commit("t"),
        ),
        rules=("DUP-TX-DUPLICATE", "DUP-BRIDGE-DUPLICATE-IN-TX", "DUP-COMMIT-ROLLBACK-ONLY"),
        source=f"{SEED}, PostOfficeImpl.checkDuplicateID (markAsRollbackOnly keeps the first exception; the "
               "bridge branch rolls the transaction back)",
    ),
    Case(
        name="duplicates/evicted-instant-add-slot-is-stored-for-its-new-id",
        summary="A bridge ID that overwrites the slot of an uncommitted instant add (from 2.18) is durable: after "
                "a restart, which loses the transaction, it is still detected.",
        commands=(
            cache_size(2),
            CreateQueue("orders", "q"),
            Begin("t"),
            Send("t", "orders", bridge_id="b1"),
            Send("bridge", "orders", bridge_id="b2"),
            Send("bridge", "orders", bridge_id="b3"),
            Restart(),
            Send("bridge", "orders", bridge_id="b3"),
            Send("bridge", "orders", bridge_id="b2"),
            Send("bridge", "orders", bridge_id="b1"),
        ),
        rules=("DUP-RING-FIFO", "DUP-TX-HELD", "DUP-RESTART-RELOAD", "DUP-BRIDGE-DUPLICATE", "DUP-ROUTED"),
        source=f"{SEED}, DuplicateIDCacheImpl.addToCacheInMemory and addToCache (storeDuplicateIDTransactional "
               "for the broker's own transaction); ARTEMIS-3384",
    ),
    Case(
        name="duplicates/commit-settles-only-its-own-instant-adds",
        summary="Committing one transaction makes only its own bridge IDs durable (from 2.18 they were in memory "
                "at once): after a crash its ID is detected while those of the other open transactions are new.",
        commands=(
            CreateQueue("orders", "q"),
            Begin("t1"),
            Begin("t2"),
            Begin("t3"),
            Send("t1", "orders", bridge_id="0a"),
            Send("t2", "orders", bridge_id="0b"),
            Send("t3", "orders", bridge_id="0c"),
            Commit("t2"),
            Crash(),
            Send("bridge", "orders", bridge_id="0a"),
            Send("bridge", "orders", bridge_id="0b"),
            Send("bridge", "orders", bridge_id="0c"),
        ),
        rules=("DUP-COMMIT", "DUP-TX-HELD", "DUP-RESTART-RELOAD", "DUP-BRIDGE-DUPLICATE", "DUP-ROUTED"),
        source="DuplicateIDCacheImpl.addToCache (storeDuplicateIDTransactional: the record commits with its own "
               f"transaction; {SEED}); ARTEMIS-3384",
    ),
)

# --- queues ---------------------------------------------------------------------------------------

QUEUE_CASES: tuple[Case, ...] = (
    Case(
        name="duplicates/queue-administration-refusals",
        summary="A queue name already in use is refused, and receiving from or deleting a missing queue is "
                "refused.",
        commands=(
            CreateQueue("orders", "q"),
            CreateQueue("orders", "q"),
            CreateQueue("prices", "q"),
            Receive("c", "nowhere"),
            DeleteQueue("nowhere"),
            Send("p", "orders", text("x")),
            Receive("c", "q"),
        ),
        rules=("DUP-QUEUE-CREATE", "DUP-QUEUE-EXISTS", "DUP-QUEUE-NOT-FOUND", "DUP-ROUTED", "DUP-RECEIVE"),
        source="Artemis ActiveMQQueueExistsException and ActiveMQNonExistentQueueException",
    ),
    Case(
        name="duplicates/deleting-one-of-several-queues-keeps-ids",
        summary="Deleting a queue that is not its address's last keeps the address's IDs, across a restart too.",
        commands=(
            CreateQueue("orders", "q1"),
            CreateQueue("orders", "q2"),
            Send("p", "orders", text("x")),
            DeleteQueue("q1"),
            Send("p", "orders", text("x")),
            Restart(),
            Send("p", "orders", text("x")),
            Receive("c", "q2"),
            Receive("c", "q2"),
        ),
        rules=("DUP-QUEUE-DELETE", "DUP-NONTX-DUPLICATE", "DUP-RESTART-RELOAD"),
        source="PostOfficeImpl.removeBinding",
    ),
    Case(
        name="duplicates/deleting-the-last-queue-forgets-ids",
        summary="Deleting an address's last queue forgets both of its caches, in the store too: after a restart a "
                "normal ID and a bridge ID are new again on a re-created queue.",
        commands=(
            CreateQueue("orders", "q"),
            Send("p", "orders", text("x")),
            Send("bridge", "orders", bridge_id="b1"),
            DeleteQueue("q"),
            CreateQueue("orders", "q"),
            Send("p", "orders", text("x")),
            Send("bridge", "orders", bridge_id="b1"),
            DeleteQueue("q"),
            Restart(),
            CreateQueue("orders", "q"),
            Send("p", "orders", text("x")),
            Send("p", "orders", text("x")),
            Receive("c", "q"),
        ),
        rules=("DUP-FORGET-ON-LAST-QUEUE", "DUP-RESTART-RELOAD", "DUP-ROUTED", "DUP-NONTX-DUPLICATE"),
        source="PostOfficeImpl.removeBinding -> deleteDuplicateCache (the journal records deleted too); "
               "DuplicateDetectionTest.testDuplicateIDCacheMemoryRetention*",
    ),
    Case(
        name="duplicates/forgetting-drops-open-transaction-ids",
        summary="An open transaction's ID for an address whose last queue is deleted is dropped with the cache: "
                "the commit succeeds but the ID is not detected afterwards.",
        commands=(
            CreateQueue("orders", "q"),
            Begin("t"),
            Send("t", "orders", text("x")),
            DeleteQueue("q"),
            Commit("t"),
            CreateQueue("orders", "q"),
            Send("p", "orders", text("x")),
            Send("p", "orders", text("x")),
        ),
        rules=("DUP-FORGET-ON-LAST-QUEUE", "DUP-COMMIT", "DUP-ROUTED", "DUP-NONTX-DUPLICATE"),
        source="the spec's decision DUP-FORGET-IN-FLIGHT (PostOfficeImpl.removeBinding; Artemis adds the ID to "
               "the discarded cache object)",
    ),
    Case(
        name="duplicates/deleting-a-queue-keeps-the-queues-named-before-it",
        summary="Deleting a queue whose name sorts after another queue of its address is not deleting the last "
                "one: the address keeps its IDs and its other queue.",
        commands=(
            CreateQueue("orders", "q1"),
            CreateQueue("orders", "q2"),
            Send("p", "orders", text("x")),
            DeleteQueue("q2"),
            Send("p", "orders", text("x")),
            Receive("c", "q1"),
            Receive("c", "q1"),
        ),
        rules=("DUP-QUEUE-DELETE", "DUP-NONTX-DUPLICATE", "DUP-ROUTED", "DUP-RECEIVE"),
        source="PostOfficeImpl.removeBinding",
    ),
    Case(
        name="duplicates/long-queue-delivers-each-message-once",
        summary="Sixty-five messages waiting in one queue are received once each, in order, and then the queue is "
                "empty.",
        commands=(
            CreateQueue("orders", "q"),
            *(Send("p", "orders") for _ in range(65)),
            *(Receive("c", "q") for _ in range(66)),
        ),
        rules=("DUP-ROUTED", "DUP-RECEIVE"),
        source="the spec's queue model (messages delivered lowest number first, each once)",
    ),
)

# --- cache sizes ----------------------------------------------------------------------------------

SIZE_CASES: tuple[Case, ...] = (
    Case(
        name="duplicates/per-address-size-fixed-when-cache-created",
        summary="A per-address id-cache-size sizes caches created after it; an existing cache keeps its size "
                "until the next restart reloads it at the new size.",
        commands=(
            CreateQueue("orders", "q"),
            Send("p", "orders", text("a")),
            SetIdCacheSize("orders", 1),
            Send("p", "orders", text("b")),
            Send("p", "orders", text("a")),
            Restart(),
            Send("p", "orders", text("b")),
            Send("p", "orders", text("a")),
            Send("p", "orders", text("b")),
        ),
        rules=("DUP-SIZE-SETTING", "DUP-SIZE-FIXED", "DUP-RESTART-RELOAD", "DUP-NONTX-DUPLICATE", "DUP-ROUTED"),
        source="ARTEMIS-4159 (2.31.0); PostOfficeImpl.getDuplicateIDCache and resolveIdCacheSize",
        profiles=LATEST_ONLY,
    ),
    Case(
        name="duplicates/per-address-size-applies-to-one-address",
        summary="A per-address id-cache-size sizes only that address's normal cache (0 turns it off): other "
                "addresses and its bridge cache keep the global size.",
        commands=(
            SetIdCacheSize("prices", 1),
            SetIdCacheSize("rates", 0),
            Send("p", "prices", text("c")),
            Send("p", "prices", text("d")),
            Send("p", "prices", text("c")),
            Send("p", "orders", text("c")),
            Send("p", "orders", text("d")),
            Send("p", "orders", text("c")),
            Send("p", "rates", text("c")),
            Send("p", "rates", text("c")),
            Send("bridge", "prices", bridge_id="b1"),
            Send("bridge", "prices", bridge_id="b2"),
            Send("bridge", "prices", bridge_id="b1"),
        ),
        rules=("DUP-SIZE-SETTING", "DUP-SIZE-ZERO", "DUP-CACHE-PER-ADDRESS", "DUP-RING-FIFO", "DUP-NO-BINDINGS",
               "DUP-NONTX-DUPLICATE", "DUP-BRIDGE-DUPLICATE"),
        source="ARTEMIS-4159 (2.31.0); PostOfficeImpl.resolveIdCacheSize (the bridge cache resolves its size as "
               "BRIDGE.<address>); NoOpDuplicateIDCache (ARTEMIS-4115)",
        profiles=LATEST_ONLY,
    ),
    Case(
        name="duplicates/per-address-size-unsupported-before-2-31",
        summary="Before 2.31.0 there is no per-address id-cache-size: the setting is refused and the cache keeps "
                "the global size.",
        commands=(
            cache_size(2),
            SetIdCacheSize("orders", 1),
            Send("p", "orders", text("a")),
            Send("p", "orders", text("b")),
            Send("p", "orders", text("a")),
            Send("p", "orders", text("c")),
            Send("p", "orders", text("b")),
        ),
        rules=("DUP-SIZE-SETTING-UNSUPPORTED", "DUP-RING-FIFO", "DUP-NONTX-DUPLICATE", "DUP-NO-BINDINGS"),
        source=f"ARTEMIS-4159 (added in 2.31.0); {SEED}, PostOfficeImpl.getDuplicateIDCache (one idCacheSize "
               "for every address)",
        profiles=BEFORE_2_31,
    ),
)

# --- restarts and reloads -------------------------------------------------------------------------

RESTART_CASES: tuple[Case, ...] = (
    Case(
        name="duplicates/restart-without-persisted-ids-forgets-them",
        summary="With persist-id-cache false, IDs are detected until a restart and forgotten by it: after the "
                "restart the same IDs are accepted again, and then detected again.",
        commands=(
            CreateQueue("orders", "q"),
            Send("p", "orders", text("x")),
            Begin("t"),
            Send("t", "orders", text("y")),
            Commit("t"),
            Send("p", "orders", text("x")),
            Restart(),
            Send("p", "orders", text("x")),
            Send("p", "orders", text("y")),
            Send("p", "orders", text("x")),
        ),
        rules=("DUP-RESTART-NO-PERSIST", "DUP-NONTX-DUPLICATE"),
        overrides=(("duplicates.persist_id_cache", "false"),),
        source="Artemis DuplicateDetectionTest.testNoPersist (persistIDCache false)",
    ),
    Case(
        name="duplicates/restart-reloads-persisted-ids",
        summary="IDs accepted outside and inside transactions are persisted and detected again after a clean "
                "restart.",
        commands=(
            CreateQueue("orders", "q"),
            Send("p", "orders", text("x")),
            Begin("t"),
            Send("t", "orders", text("y")),
            Commit("t"),
            Restart(),
            Send("p", "orders", text("x")),
            Send("p", "orders", text("y")),
            Send("p", "orders", text("z")),
        ),
        rules=("DUP-RESTART-RELOAD", "DUP-NONTX-DUPLICATE", "DUP-COMMIT"),
        source=f"{SEED}, PostOfficeJournalLoader.handleDuplicateIds and DuplicateIDCacheImpl.load "
               "(persistIDCache true)",
    ),
    Case(
        name="duplicates/crash-loses-open-transaction",
        summary="A crash loses the open transaction: its held message is gone, its received message waits again "
                "and its ID was never stored, while committed IDs survive.",
        commands=(
            CreateQueue("orders", "q"),
            Send("p", "orders", text("x")),
            Begin("t"),
            Receive("t", "q"),
            Send("t", "orders", text("y")),
            Crash(),
            Commit("t"),
            Send("p", "orders", text("x")),
            Send("p", "orders", text("y")),
            Receive("c", "q"),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-RESTART-RELOAD", "DUP-NO-TRANSACTION", "DUP-NONTX-DUPLICATE", "DUP-ROUTED", "DUP-RECEIVE"),
        source=f"{SEED}, DuplicateIDCacheImpl.addToCache (storeDuplicateIDTransactional); "
               "PostOfficeJournalLoader.handleDuplicateIds",
    ),
    Case(
        name="duplicates/reload-into-smaller-cache-drops-the-oldest",
        summary="Three stored IDs reloaded into two slots: the oldest is dropped and counted, the two newest are "
                "still detected.",
        commands=(
            cache_size(3),
            CreateQueue("orders", "q"),
            Send("p", "orders", text("a")),
            Send("p", "orders", text("b")),
            Send("p", "orders", text("c")),
            cache_size(2),
            Send("p", "orders", text("c")),
            Send("p", "orders", text("b")),
            Send("p", "orders", text("a")),
        ),
        rules=("DUP-RESTART-RELOAD", "DUP-NONTX-DUPLICATE", "DUP-ROUTED"),
        source=f"{SEED}, DuplicateIDCacheImpl.load (deleteCount = theIds.size() - cacheSize, the first ones "
               "deleted); DuplicateDetectionTest.testShrinkCache; ARTEMIS-332",
    ),
    Case(
        name="duplicates/reload-of-a-full-cache-restarts-at-slot-zero",
        summary="A full cache reloads oldest first with the write position at slot 0, so after a restart the "
                "next new ID still evicts the oldest surviving one.",
        commands=(
            cache_size(3),
            Send("p", "orders", text("a")),
            Send("p", "orders", text("b")),
            Send("p", "orders", text("c")),
            Send("p", "orders", text("d")),
            Restart(),
            Send("p", "orders", text("e")),
            Send("p", "orders", text("d")),
            Send("p", "orders", text("c")),
            Send("p", "orders", text("b")),
        ),
        rules=("DUP-RESTART-RELOAD", "DUP-RING-FIFO", "DUP-NONTX-DUPLICATE", "DUP-NO-BINDINGS"),
        source=f"{SEED}, DuplicateIDCacheImpl.load (pos = ids.size(); if (pos == cacheSize) pos = 0)",
    ),
    Case(
        name="duplicates/reload-of-a-partly-filled-cache-continues-after-it",
        summary="A partly filled cache reloads with the write position after its last ID, so the free slots are "
                "used before the oldest ID is evicted.",
        commands=(
            cache_size(3),
            Send("p", "orders", text("a")),
            Send("p", "orders", text("b")),
            Restart(),
            Send("p", "orders", text("c")),
            Send("p", "orders", text("a")),
            Send("p", "orders", text("d")),
            Send("p", "orders", text("b")),
            Send("p", "orders", text("a")),
        ),
        rules=("DUP-RESTART-RELOAD", "DUP-RING-FIFO", "DUP-NONTX-DUPLICATE", "DUP-NO-BINDINGS"),
        source=f"{SEED}, DuplicateIDCacheImpl.load (pos = ids.size()) and addToCacheInMemory",
    ),
    Case(
        name="duplicates/reload-into-larger-cache-keeps-everything",
        summary="Stored IDs reloaded into a larger cache are all kept, and the extra slots take new IDs without "
                "evicting them.",
        commands=(
            cache_size(2),
            Send("p", "orders", text("a")),
            Send("p", "orders", text("b")),
            Send("p", "orders", text("c")),
            cache_size(3),
            Send("p", "orders", text("d")),
            Send("p", "orders", text("b")),
            Send("p", "orders", text("c")),
            Send("p", "orders", text("a")),
        ),
        rules=("DUP-RESTART-RELOAD", "DUP-SIZE-FIXED", "DUP-RING-FIFO", "DUP-NONTX-DUPLICATE"),
        source=f"{SEED}, DuplicateIDCacheImpl.load (deleteCount 0); PostOfficeImpl.getDuplicateIDCache "
               "(idCacheSize read when the cache is made)",
    ),
    Case(
        name="duplicates/reload-into-size-zero-keeps-the-stored-ids-for-later",
        summary="A restart with id-cache-size 0 loads no stored ID (they count as dropped) and detection stays off, "
                "but the records stay in the journal: a later restart with a size above 0 loads them again.",
        commands=(
            Send("p", "orders", text("a")),
            Send("p", "orders", text("b")),
            cache_size(0),
            Send("p", "orders", text("a")),
            Send("p", "orders", text("a")),
            cache_size(5),
            Send("p", "orders", text("b")),
        ),
        rules=("DUP-RESTART-RELOAD", "DUP-SIZE-ZERO", "DUP-NO-BINDINGS"),
        source="NoOpDuplicateIDCache.load does nothing (ARTEMIS-4115, 2.28.0), so PostOfficeJournalLoader deletes no "
               "record; checked against real Artemis 2.40.0",
        profiles=LATEST_ONLY,
    ),
    Case(
        name="duplicates/delete-hole-is-not-reloaded",
        summary="A deleted ID is not stored, so a restart reloads only the IDs around the hole, oldest first, and "
                "the next new ID evicts the oldest of them.",
        commands=(
            cache_size(3),
            Send("p", "orders", text("a")),
            Send("p", "orders", text("b")),
            Send("p", "orders", text("c")),
            DeleteId("orders", text("a")),
            Restart(),
            Send("p", "orders", text("d")),
            Send("p", "orders", text("e")),
            Send("p", "orders", text("d")),
            Send("p", "orders", text("c")),
            Send("p", "orders", text("b")),
        ),
        rules=("DUP-DELETE-ID", "DUP-RESTART-RELOAD", "DUP-RING-FIFO", "DUP-NONTX-DUPLICATE"),
        source=f"DuplicateIDCache.deleteFromCache (deleteDuplicateID); {SEED}, DuplicateIDCacheImpl.load",
    ),
    Case(
        name="duplicates/restart-returns-only-messages-still-held",
        summary="A restart puts back the message an open transaction had received, once, even across a second "
                "restart, and never a message whose receive was committed.",
        commands=(
            CreateQueue("orders", "q"),
            Send("p", "orders"),
            Send("p", "orders"),
            Begin("t"),
            Receive("t", "q"),
            Commit("t"),
            Begin("u"),
            Receive("u", "q"),
            Restart(),
            Restart(),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-RESTART-RELOAD", "DUP-COMMIT", "DUP-RECEIVE"),
        source=f"{SEED}, PostOfficeJournalLoader (unacknowledged messages reloaded); the spec's "
               "process_restart (return_messages)",
    ),
    Case(
        name="duplicates/delete-hole-deep-in-a-large-cache-is-not-reloaded",
        summary="In a cache with hundreds of IDs, deleting the newest leaves a hole that a restart does not "
                "reload, while the ID before it is still detected.",
        commands=(
            *(Send("p", "orders", text(f"m{n}")) for n in range(258)),
            DeleteId("orders", text("m257")),
            Restart(),
            Send("p", "orders", text("m257")),
            Send("p", "orders", text("m256")),
        ),
        rules=("DUP-DELETE-ID", "DUP-RESTART-RELOAD", "DUP-NO-BINDINGS", "DUP-NONTX-DUPLICATE"),
        source=f"DuplicateIDCache.deleteFromCache (deleteDuplicateID); {SEED}, DuplicateIDCacheImpl.load",
    ),
)

CASES: tuple[Case, ...] = (
    *ID_CASES, *ROUTING_CASES, *RING_CASES, *TX_CASES, *FAILED_CASES, *BRIDGE_CASES, *QUEUE_CASES, *SIZE_CASES,
    *RESTART_CASES,
    *queries.DUPLICATES,
    *duplicates_auto_create.CASES,
    *duplicates_xa.CASES,
)
"""Every duplicate-detection case, grouped by topic; the XA two-phase commit cases last (:mod:`.duplicates_xa`)."""
