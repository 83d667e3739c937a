"""Conformance cases for XA two-phase commit in duplicate detection: prepare, the second phase, restarts between.

Introduction
------------
A client that runs a transaction as an XA branch ends its work with
``XAResource.end`` and ``prepare``: the broker makes the branch durable
(``TransactionImpl.prepare``: ``beforePrepare``, then ``storageManager.prepare``)
without running any of its after-commit operations, so the branch's messages
stay held and its duplicate IDs stay out of the cache until the second phase,
``commit(xid, false)``, which checks nothing again. The cases here show, each
where the broker could get it wrong:

* the ID of a prepared branch is invisible, to a query and to a send, until the
  second phase, and it reserves nothing: another branch may send, prepare and
  commit the same ID meanwhile (``DuplicateDetectionTest.testXADuplicateDetection1``
  and ``testXADuplicateDetection3``);
* a branch a duplicate made rollback-only fails to prepare, rolling back every
  send and acknowledgement in it (``testXADuplicateDetection4``); a branch
  doomed otherwise (a bridge duplicate, a failed send) fails the same way;
* a second prepare is ignored (``ServerSessionImpl.xaPrepare``, AMQ221079),
  and a prepared branch takes no more work;
* a prepared branch survives a clean restart and a crash with its messages, its
  acknowledgements and its ID records (``loadPreparedTransactions``: the ID
  records are attached to the reloaded branch, ``DuplicateIDCache.load(tx, id)``),
  so its ID becomes visible only if it commits, and a rollback after the restart
  leaves the ID free (``testXADuplicateDetectionPrepareAndRollbackStopServer``);
  without ``persist-id-cache`` it wrote no ID record and comes back without its
  IDs (``testNoPersistXA1``);
* a bridge ID added at once inside a branch (2.18 on) is visible while the
  branch is prepared, but not after a restart until the branch commits; under
  2.11 it waits for the commit throughout.

Every case needs SUT protocol version 3, which adds ``prepare``
(``docs/sut-protocol.md``); an older SUT skips them. A prepared transaction
is named by the session that began it, also after a restart, where a real
client recovers its xid.
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
    Prepare,
    QueryId,
    Receive,
    Restart,
    Rollback,
    Send,
    SetIdCacheSize,
)

from . import Case

XA_TESTS = "Artemis DuplicateDetectionTest"
"""Where most scenarios come from: the XA tests of Artemis's duplicate-detection integration test."""

PREPARE = "TransactionImpl.prepare (beforePrepare and storageManager.prepare; the after-commit operations wait)"


def text(value: str) -> DuplicateId:
    """A string duplicate ID, the kind a JMS client sets."""
    return DuplicateId(IdKind.STRING, value)


PHASES: tuple[Case, ...] = (
    Case(
        name="duplicates/xa-prepared-id-visible-only-at-the-second-phase",
        summary="A prepared transaction's ID is not in the cache and its message is held; the second phase "
                "routes the message and only then records the ID, which rejects the next send of it.",
        commands=(
            CreateQueue("orders", "q"),
            Begin("t"),
            Send("t", "orders", text("x")),
            Prepare("t"),
            QueryId("orders", text("x")),
            Receive("c", "q"),
            Commit("t"),
            QueryId("orders", text("x")),
            Send("p", "orders", text("x")),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-XA-PREPARE", "DUP-XA-SECOND-PHASE", "DUP-TX-HELD", "DUP-QUERY-ID", "DUP-NONTX-DUPLICATE"),
        source=f"{PREPARE}; TransactionImpl.commit(onePhase=false); {XA_TESTS}.testXADuplicateDetection1",
    ),
    Case(
        name="duplicates/xa-prepared-id-reserves-nothing",
        summary="While one transaction with ID x is prepared, another may send x, prepare and commit; the first "
                "then commits too, since the second phase checks nothing: both messages arrive and x takes two "
                "slots.",
        commands=(
            CreateQueue("orders", "q"),
            Begin("t1"),
            Send("t1", "orders", text("x")),
            Prepare("t1"),
            Begin("t2"),
            Send("t2", "orders", text("x")),
            Prepare("t2"),
            Commit("t2"),
            Send("p", "orders", text("x")),
            Commit("t1"),
            Receive("c", "q"),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-CONCURRENT-TX", "DUP-XA-PREPARE", "DUP-XA-SECOND-PHASE", "DUP-NONTX-DUPLICATE"),
        source=f"{XA_TESTS}.testXADuplicateDetection3 (the resend in a second branch is not rejected); "
               "TransactionImpl.commit(onePhase=false) runs no duplicate check",
    ),
    Case(
        name="duplicates/xa-duplicate-fails-the-prepare-and-rolls-back",
        summary="A committed ID sent again in a transaction dooms it; its prepare fails with DUPLICATE_ID and rolls "
                "back everything in it: the message it took is back, its other ID was never recorded, and the "
                "session has no transaction left.",
        commands=(
            CreateQueue("orders", "q"),
            Begin("t1"),
            Send("t1", "orders", text("x")),
            Prepare("t1"),
            Commit("t1"),
            Begin("t2"),
            Receive("t2", "q"),
            Send("t2", "orders", text("y")),
            Send("t2", "orders", text("x")),
            Prepare("t2"),
            Commit("t2"),
            Send("p", "orders", text("y")),
            Receive("c", "q"),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-XA-PREPARE-ROLLBACK-ONLY", "DUP-TX-DUPLICATE", "DUP-NO-TRANSACTION", "DUP-ROUTED"),
        source=f"TransactionImpl.prepare (ROLLBACK_ONLY: internalRollback, then the stored "
               f"ActiveMQDuplicateIdException); {XA_TESTS}.testXADuplicateDetection4",
    ),
    Case(
        name="duplicates/xa-doomed-transactions-fail-to-prepare-with-their-reason",
        summary="A transaction doomed by a failed send (a long ID) fails to prepare with SEND_FAILED, one doomed by "
                "a bridge duplicate with BRIDGE_DUPLICATE; neither leaves an ID or a message behind.",
        commands=(
            CreateQueue("orders", "q"),
            Begin("t1"),
            Send("t1", "orders", text("a")),
            Send("t1", "orders", DuplicateId(IdKind.LONG, "7")),
            Prepare("t1"),
            Send("bridge", "orders", bridge_id="0b"),
            Begin("t2"),
            Send("t2", "orders", text("b")),
            Send("t2", "orders", bridge_id="0b"),
            Prepare("t2"),
            QueryId("orders", text("a")),
            QueryId("orders", text("b")),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-XA-PREPARE-ROLLBACK-ONLY", "DUP-ID-NOT-BYTES", "DUP-BRIDGE-DUPLICATE", "DUP-QUERY-ID"),
        source="TransactionImpl.prepare (a rollback-only branch throws the exception that doomed it); "
               "PostOfficeImpl.checkDuplicateID (a bridge duplicate rolls the branch back at once)",
    ),
    Case(
        name="duplicates/xa-prepare-again-changes-nothing",
        summary="Prepare without a transaction is refused; a second prepare of a prepared transaction succeeds and "
                "changes nothing; after the second phase there is nothing left to prepare or roll back.",
        commands=(
            CreateQueue("orders", "q"),
            Prepare("t"),
            Begin("t"),
            Send("t", "orders", text("x")),
            Prepare("t"),
            Prepare("t"),
            QueryId("orders", text("x")),
            Commit("t"),
            Prepare("t"),
            Rollback("t"),
            QueryId("orders", text("x")),
            Receive("c", "q"),
        ),
        rules=("DUP-XA-PREPARE-AGAIN", "DUP-XA-PREPARE", "DUP-NO-TRANSACTION", "DUP-XA-SECOND-PHASE"),
        source="ServerSessionImpl.xaPrepare (a PREPARED branch: ignoringPrepareOnXidAlreadyCalled, AMQ221079); "
               "xaPrepare and xaCommit answer XAER_NOTA for an xid they do not know",
    ),
    Case(
        name="duplicates/xa-prepared-transaction-takes-no-more-work",
        summary="A session whose transaction is prepared can neither send, receive nor begin again, whatever the "
                "queue; its refused send checked nothing, so its ID is free for others; after a rollback the "
                "session works outside a transaction.",
        commands=(
            CreateQueue("orders", "q"),
            Send("p", "orders", text("m")),
            Begin("t"),
            Send("t", "orders", text("x")),
            Prepare("t"),
            Send("t", "orders", text("y")),
            Receive("t", "q"),
            Receive("t", "missing"),
            Begin("t"),
            Send("p", "orders", text("y")),
            Rollback("t"),
            Send("t", "orders", text("x")),
            Receive("c", "q"),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-XA-PREPARED-BUSY", "DUP-TX-ALREADY-OPEN", "DUP-XA-SECOND-PHASE", "DUP-ROUTED"),
        source="ServerSessionImpl.xaEnd (the branch is no longer the session's: pendingTX) and xaPrepare; "
               "the XA protocol (work after end belongs to another branch)",
    ),
)

RESTARTS: tuple[Case, ...] = (
    Case(
        name="duplicates/xa-prepared-transaction-survives-a-restart",
        summary="A clean restart loses an open transaction but keeps a prepared one, with the message it sent and "
                "the message it took both held and its ID invisible; its commit then delivers the message and "
                "records the ID.",
        commands=(
            CreateQueue("orders", "q"),
            Send("p", "orders", text("a")),
            Begin("t"),
            Receive("t", "q"),
            Send("t", "orders", text("x")),
            Prepare("t"),
            Begin("u"),
            Send("u", "orders", text("z")),
            Restart(),
            QueryId("orders", text("x")),
            Receive("c", "q"),
            Send("t", "orders", text("y")),
            Commit("t"),
            QueryId("orders", text("x")),
            Send("p", "orders", text("x")),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-XA-PREPARED-RESTART", "DUP-RESTART-RELOAD", "DUP-XA-SECOND-PHASE", "DUP-XA-PREPARED-BUSY"),
        source="AbstractJournalStorageManager.loadPreparedTransactions (messages held, Queue.reacknowledge, "
               f"DuplicateIDCache.load(tx, id)); {XA_TESTS}.testPersistXA1",
    ),
    Case(
        name="duplicates/xa-prepared-transaction-survives-a-crash",
        summary="A crash keeps a prepared transaction as a clean restart does, and so does a second restart: only "
                "its commit makes its IDs visible, and the message it took is consumed then.",
        commands=(
            CreateQueue("orders", "q"),
            Send("p", "orders", text("a")),
            Send("p", "orders", text("b")),
            Begin("t"),
            Receive("t", "q"),
            Send("t", "orders", text("x")),
            Send("t", "orders", text("y")),
            Prepare("t"),
            Crash(),
            QueryId("orders", text("y")),
            Send("p", "orders", text("x")),
            Restart(),
            Commit("t"),
            Send("p", "orders", text("y")),
            QueryId("orders", text("x")),
            Receive("c", "q"),
            Receive("c", "q"),
            Receive("c", "q"),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-XA-PREPARED-RESTART", "DUP-XA-SECOND-PHASE", "DUP-CONCURRENT-TX", "DUP-NONTX-DUPLICATE"),
        source="AbstractJournalStorageManager.prepare (appendPrepareRecord, synced before prepare returns) and "
               "loadPreparedTransactions after the kill",
    ),
    Case(
        name="duplicates/xa-prepared-then-restart-then-rollback-leaves-the-id-free",
        summary="A prepared transaction rolled back after a restart leaves no ID: another transaction sends the "
                "same ID, prepares and commits it, and only its message arrives.",
        commands=(
            CreateQueue("orders", "q"),
            Begin("t"),
            Send("t", "orders", text("x")),
            Prepare("t"),
            Restart(),
            Rollback("t"),
            QueryId("orders", text("x")),
            Begin("u"),
            Send("u", "orders", text("x")),
            Prepare("u"),
            Commit("u"),
            Send("p", "orders", text("x")),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-XA-PREPARED-RESTART", "DUP-XA-SECOND-PHASE", "DUP-QUERY-ID", "DUP-NONTX-DUPLICATE"),
        source=f"{XA_TESTS}.testXADuplicateDetectionPrepareAndRollbackStopServer",
    ),
    Case(
        name="duplicates/xa-prepared-id-sent-twice-takes-two-slots-after-a-restart",
        summary="A prepared transaction that sent one ID twice gets both records back at a restart and commits them "
                "in send order, one slot each: in a cache of two they evict the ID before them.",
        commands=(
            Restart(2),
            CreateQueue("orders", "q"),
            Send("p", "orders", text("a")),
            Begin("t"),
            Send("t", "orders", text("x")),
            Send("t", "orders", text("x")),
            Prepare("t"),
            Restart(),
            Commit("t"),
            QueryId("orders", text("a")),
            QueryId("orders", text("x")),
            Send("p", "orders", text("x")),
        ),
        rules=("DUP-XA-PREPARED-RESTART", "DUP-SAME-ID-IN-TX", "DUP-RING-FIFO", "DUP-XA-SECOND-PHASE"),
        source="loadPreparedTransactions (one DUPLICATE_ID record per send, each loaded with "
               "DuplicateIDCache.load(tx, id)); PersistentDuplicateIDCache.addToCacheInMemory",
    ),
    Case(
        name="duplicates/xa-prepared-receive-held-across-restarts-returns-on-rollback",
        summary="Messages a prepared transaction took stay held across a restart and a crash, while the rest of "
                "the queue is delivered; its rollback puts them back in their places.",
        commands=(
            CreateQueue("orders", "q"),
            Send("p", "orders"),
            Send("p", "orders"),
            Send("p", "orders"),
            Begin("t"),
            Receive("t", "q"),
            Receive("t", "q"),
            Prepare("t"),
            Restart(),
            Crash(),
            Receive("c", "q"),
            Receive("c", "q"),
            Rollback("t"),
            Send("p", "orders"),
            Receive("c", "q"),
            Receive("c", "q"),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-XA-PREPARED-RESTART", "DUP-XA-SECOND-PHASE", "DUP-RECEIVE"),
        source="AbstractJournalStorageManager.loadPreparedTransactions (ACKNOWLEDGE_REF: "
               "JournalLoader.handlePreparedAcknowledge, Queue.reacknowledge); RefsOperation.afterRollback",
    ),
    Case(
        name="duplicates/xa-prepared-ids-lost-at-restart-without-persist-id-cache",
        summary="With persist-id-cache false a prepared transaction writes no ID record: after a restart it still "
                "commits its message, but its ID is not recorded and a resend is routed.",
        commands=(
            CreateQueue("orders", "q"),
            Begin("t"),
            Send("t", "orders", text("x")),
            Prepare("t"),
            Restart(),
            Commit("t"),
            QueryId("orders", text("x")),
            Send("p", "orders", text("x")),
            Begin("u"),
            Send("u", "orders", text("y")),
            Prepare("u"),
            Commit("u"),
            Send("p", "orders", text("y")),
            Receive("c", "q"),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-XA-PREPARED-RESTART", "DUP-RESTART-NO-PERSIST", "DUP-XA-SECOND-PHASE"),
        source=f"{XA_TESTS}.testNoPersistXA1 (persistIDCache false: the branch stores no DUPLICATE_ID record)",
        overrides=(("duplicates.persist_id_cache", "false"),),
    ),
    Case(
        name="duplicates/xa-prepared-bridge-id-after-a-restart",
        summary="A bridge ID sent in a transaction is added at once from 2.18, so it is visible while the "
                "transaction is prepared; after a restart it is attached to the transaction again and invisible "
                "until the commit. Under 2.11 it waits for the commit throughout.",
        commands=(
            CreateQueue("orders", "q"),
            Begin("t"),
            Send("t", "orders", bridge_id="0a0b"),
            Prepare("t"),
            QueryId("orders", bridge_id="0a0b"),
            Restart(),
            QueryId("orders", bridge_id="0a0b"),
            Commit("t"),
            QueryId("orders", bridge_id="0a0b"),
            Send("bridge", "orders", bridge_id="0a0b"),
            Receive("c", "q"),
            Receive("c", "q"),
        ),
        rules=("DUP-XA-PREPARED-RESTART", "DUP-BRIDGE-DUPLICATE", "DUP-XA-SECOND-PHASE", "DUP-QUERY-ID"),
        source="PersistentDuplicateIDCache.atomicVerify (an instant add, 2.18 on, ARTEMIS-3384); "
               "loadPreparedTransactions (DuplicateIDCache.load(tx, id) adds after commit)",
        profiles=("seed", "artemis-2.11", "artemis-latest"),
    ),
    Case(
        name="duplicates/xa-prepared-id-cache-is-made-at-the-restart",
        summary="The cache of a prepared transaction's ID is made when the restart loads the transaction, at the "
                "size then in force; an id-cache-size set for the address before the commit does not shrink it.",
        commands=(
            CreateQueue("orders", "q"),
            Begin("t"),
            Send("t", "orders", text("x")),
            Prepare("t"),
            Restart(),
            SetIdCacheSize("orders", 1),
            Commit("t"),
            Send("p", "orders", text("a")),
            Send("p", "orders", text("x")),
        ),
        rules=("DUP-XA-PREPARED-RESTART", "DUP-SIZE-FIXED", "DUP-SIZE-SETTING", "DUP-NONTX-DUPLICATE"),
        source="AbstractJournalStorageManager.loadPreparedTransactions (postOffice.getDuplicateIDCache for each "
               "DUPLICATE_ID record); PostOfficeImpl.getDuplicateIDCache (sized when made, ARTEMIS-4159)",
        profiles=("artemis-latest",),
    ),
    Case(
        name="duplicates/xa-queue-made-again-gets-nothing-of-a-transaction-sent-before",
        summary="A message sent inside a transaction goes to the queue object of the send: deleted and made again "
                "under the same name before the commit, or before the second phase across a restart, the queue "
                "gets nothing of it.",
        commands=(
            CreateQueue("orders", "q"),
            CreateQueue("orders", "r"),
            Begin("t"),
            Send("t", "orders", text("x")),
            DeleteQueue("q"),
            CreateQueue("orders", "q"),
            Commit("t"),
            Receive("c", "q"),
            Receive("c", "r"),
            Begin("u"),
            Send("u", "orders"),
            Prepare("u"),
            DeleteQueue("r"),
            CreateQueue("orders", "r"),
            Restart(),
            Commit("u"),
            Receive("c", "r"),
            Receive("c", "q"),
        ),
        rules=("DUP-QUEUE-DELETE", "DUP-COMMIT", "DUP-XA-SECOND-PHASE", "DUP-RECEIVE"),
        source="PostOfficeImpl.processRoute (each reference bound to the queue object at the send), "
               "AddOperation.afterCommit (added to that object); found against Artemis 2.40.0 and 2.11.0",
    ),
)

CASES: tuple[Case, ...] = (*PHASES, *RESTARTS)
"""Every XA case, the two phases first, then restarts between them."""
