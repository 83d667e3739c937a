"""The rules of the duplicate-detection domain, with their IDs and sources.

Introduction
------------
Each rule has a stable ID (``DUP-...``), one sentence of plain words, its
source and the profiles it applies to. A source names seed 001
(``001_7bc8976e1fb4bc71.txt``, a walk through duplicate detection in
Artemis 2.11.0), the Artemis class and method the rule was read from
(``PostOfficeImpl`` and the ID caches under
``artemis-server/.../core/postoffice/impl/``), the Artemis test that pins
it (``DuplicateDetectionTest`` and others under ``tests/integration-tests``)
or the JIRA key that changed it. Where no Artemis test covers a reading of
the code, the source says "derived". The spec's outcomes carry the ID of
the rule that decided them; a test checks that every ID the operations use
is listed here and that every listed ID is used or is a structural rule.
"""

from __future__ import annotations

from ..addressing.rules import Rule

ALL = ("seed", "artemis-2.11", "artemis-latest")

RULES: dict[str, Rule] = {
    r.id: r
    for r in (
        # --- the ID and the caches (structural: they shape the state, no outcome names them)
        Rule("DUP-ID-KEY", "A string ID and a SimpleString ID become their UTF-16 code units, low byte first; bytes "
             "are used as they are; IDs compare byte by byte, so 'X' and the bytes 58 00 are one ID and the UTF-8 "
             "byte 58 another.", "seed 001 Message.getDuplicateIDBytes; SimpleString (two bytes per UTF-16 code unit); "
             "ByteArray.equals", ALL),
        Rule("DUP-CACHE-PER-ADDRESS", "Each address has its own ID cache, and a second one, BRIDGE.<address>, for "
             "bridge IDs; both are created by the first check on the address.",
             "seed 001 PostOfficeImpl.getDuplicateIDCache, BRIDGE_CACHE_STR", ALL),
        Rule("DUP-RING-FIFO", "A cache is a ring of id-cache-size slots: the (N+1)-th added ID overwrites the oldest; "
             "a rejected duplicate does not move.",
             "seed 001 DuplicateIDCacheImpl.addToCacheInMemory; DuplicateDetectionTest.testCacheSize", ALL),
        Rule("DUP-SIZE-FIXED", "A cache's size is fixed when it is created; later settings apply to caches created "
             "later (at the latest, at the next restart).",
             "PostOfficeImpl.getDuplicateIDCache (derived: the size is read when the cache is made)", ALL),
        Rule("DUP-SIZE-ZERO", "A cache of size 0 finds no normal ID and records nothing. From 2.28 (NO_OP) its bridge "
             "check answers 'duplicate' to every ID, dropping every bridged message, and a reload into it leaves "
             "the stored IDs for a later restart; before, detection is simply off (DISABLED).",
             "NoOpDuplicateIDCache.atomicVerify and load (ARTEMIS-4115, 2.28.0), checked against real Artemis "
             "2.40.0; DuplicateDetectionTest.testDisabledDuplicateDetection", ALL),
        Rule("DUP-BRIDGE-FIRST", "A message carrying a bridge ID is checked against the bridge cache only; its "
             "normal ID is neither checked nor recorded on that hop.", "seed 001 PostOfficeImpl.checkDuplicateID",
             ALL),
        Rule("DUP-NONTX-VISIBILITY", "A non-transactional send's ID is recorded with the send; when routing then "
             "fails, the broker before 2.18 never recorded it, from 2.18 it recorded and deleted it, leaving a hole "
             "and not restoring what it evicted.",
             "ARTEMIS-2324 (2.8.0), ARTEMIS-3384 (2.18.0); PostOfficeImpl.checkNotBridgeDuplicateID, "
             "DuplicateIDCache.deleteFromCache; PagingTest.testFailMessagesDuplicates", ALL),
        Rule("DUP-SAME-ID-IN-TX", "Two sends with the same ID in one transaction are both accepted and both delivered; "
             "the ID takes two slots at commit.",
             "DuplicateIDCacheImpl.addToCache (derived: each ID is added at commit, unchecked)", ALL),
        Rule("DUP-CONCURRENT-TX", "The same ID in two open transactions: both sends pass and both commits succeed; "
             "a prepared transaction reserves nothing either, so a second one with its ID prepares and commits.",
             "DuplicateDetectionTest.testXADuplicateDetection3", ALL),
        # --- queues
        Rule("DUP-QUEUE-CREATE", "A queue is created on an address.",
             "Artemis user manual, address-model; ActiveMQServerImpl.createQueue", ALL),
        Rule("DUP-QUEUE-EXISTS", "A queue name already in use is refused.", "Artemis ActiveMQQueueExistsException",
             ALL),
        Rule("DUP-QUEUE-NOT-FOUND", "Receiving from or deleting a missing queue is refused.",
             "Artemis ActiveMQNonExistentQueueException", ALL),
        Rule("DUP-QUEUE-DELETE", "Deleting a queue that is not its address's last keeps the address's IDs.",
             "PostOfficeImpl.removeBinding (deleteDuplicateCache only once no binding is left)", ALL),
        Rule("DUP-FORGET-ON-LAST-QUEUE", "Deleting the last queue of an address forgets both of its caches, across "
             "restarts too; ID work of open transactions for those caches is dropped with them.",
             "PostOfficeImpl.removeBinding -> deleteDuplicateCache; "
             "DuplicateDetectionTest.testDuplicateIDCacheMemoryRetention*", ALL),
        # --- sending
        Rule("DUP-ID-NOT-BYTES", "An ID that is neither a string nor bytes (a long) makes the send fail.",
             "seed 001 Message.getDuplicateIDBytes (the cast to byte[])", ALL),
        Rule("DUP-ROUTED", "A send whose ID is new (or absent) is routed to every queue of its address and its ID "
             "recorded.", "seed 001 PostOfficeImpl.route", ALL),
        Rule("DUP-NO-BINDINGS", "An address with no queues answers NO_BINDINGS, but the ID is recorded all the same.",
             "PostOfficeImpl.route (the check precedes the bindings lookup)", ALL),
        Rule("DUP-AUTO-CREATE", "An auto-creating send (ANYCAST, auto-create-queues on) whose ID passed the check "
             "makes a queue named like its address when the address has none, at once and outside any transaction "
             "(it stays after a rollback, is durable, and goes before a full address fails the send), and is routed "
             "to it; a duplicate makes none. Before 2.28.0 nothing is made and the send is NO_BINDINGS.",
             "PostOfficeImpl.route (checkDuplicateID before checkAddress and simpleRoute), "
             "PostOfficeImpl.simpleRoute -> ServerSessionImpl.checkAutoCreate (ARTEMIS-4089, 2.28.0); "
             "DeleteAddressTest (ARTEMIS-4089); derived for duplicate IDs: no Artemis test sends one", ALL),
        Rule("DUP-AUTO-CREATE-NAME-TAKEN", "An auto-creating send to an address without queues, when a queue named "
             "like the address is bound to another address, fails (the address does not exist) after the check: "
             "inside a transaction it dooms it; outside one an ID added at once stays in memory, never durable.",
             "ServerSessionImpl.checkAutoCreate (server.locateQueue finds the MULTICAST queue: NOT_FOUND), "
             "PostOfficeImpl.checkAddress/simpleRoute (AMQ229203, markAsRollbackOnly; the transaction route "
             "started is left open); derived", ("artemis-latest",)),
        Rule("DUP-NONTX-DUPLICATE", "Outside a transaction a duplicate is not routed: the broker's status is "
             "DUPLICATED_ID while the client is told it succeeded.",
             "seed 001 PostOfficeImpl.route; DuplicateDetectionTest.testSimpleDuplicateDetecion", ALL),
        Rule("DUP-TX-DUPLICATE", "Inside a transaction a duplicate is not routed, the send succeeds for the client and "
             "the transaction becomes rollback-only.",
             "seed 001 PostOfficeImpl.checkDuplicateID; DuplicateDetectionTest.testTransactedDuplicateDetection3", ALL),
        Rule("DUP-NO-REJECT", "With rejectDuplicates false a duplicate is routed and its ID not recorded again.",
             "PostOfficeImpl.checkNotBridgeDuplicateID; MoveMessageDuplicateIDTest", ALL),
        Rule("DUP-TX-HELD", "A transactional send is held until the commit; its ID is not yet visible.",
             "seed 001 DuplicateIDCacheImpl.addToCache (tx.afterStore); "
             "DuplicateDetectionTest.testTransactedDuplicateDetection1", ALL),
        Rule("DUP-BRIDGE-DUPLICATE", "A bridged message whose bridge ID is in the bridge cache is dropped silently.",
             "DuplicateIDCacheImpl.atomicVerify; "
             "BridgeReconnectTest.testReconnectSameNodeAfterDeliveryWithBlocking", ALL),
        Rule("DUP-BRIDGE-DUPLICATE-IN-TX", "A bridge duplicate inside a transaction rolls the transaction's work back "
             "at once and dooms it: its commit fails.", "PostOfficeImpl.checkBridgeDuplicateID", ALL),
        Rule("DUP-SEND-FAILED", "A send whose routing fails after the check reports the failure; its ID is not left "
             "in the cache (from 2.18 it is deleted, leaving a hole). A full address fails only a send that reaches "
             "a queue; one that reaches none is NO_BINDINGS.",
             "PagingTest.testFailMessagesDuplicates; ARTEMIS-3384; PostOfficeImpl.route (processRoute, where the "
             "paging store throws, only when context.getQueueCount() > 0)", ALL),
        Rule("DUP-SEND-FAILED-IN-TX", "A send that fails inside a transaction makes the transaction rollback-only.",
             "OpenWireConnection.CommandProcessor.processMessage (markAsRollbackOnly on a failed send)", ALL),
        # --- receiving and ending transactions
        Rule("DUP-RECEIVE", "A receive takes the first waiting message; inside a transaction its acknowledgement is "
             "held until the transaction ends.", "Artemis ServerConsumerImpl acknowledge in a transaction", ALL),
        Rule("DUP-TX-BEGIN", "A session opens a transaction.",
             "Artemis ServerSessionImpl.xaStart; brokerspec's transaction lifecycle, docs/duplicate-detection.md "
             "section 2", ALL),
        Rule("DUP-TX-ALREADY-OPEN", "A session with an open transaction cannot open another.",
             "brokerspec's transaction lifecycle, docs/duplicate-detection.md section 2 (Artemis "
             "ServerSessionImpl.xaStart would roll the open one back instead)", ALL),
        Rule("DUP-NO-TRANSACTION", "Commit, prepare or rollback without an open transaction is refused.",
             "Artemis ServerSessionImpl.xaCommit, xaRollback (XAER_NOTA for an unknown xid); "
             "brokerspec's transaction lifecycle, docs/duplicate-detection.md section 2", ALL),
        Rule("DUP-COMMIT", "A commit routes the held messages, makes the acknowledgements final and only then makes "
             "the transaction's IDs visible, in send order.", "seed 001 AddDuplicateIDOperation.afterCommit; "
             "DuplicateDetectionTest.testTransactedDuplicateDetection1; TransactionImpl.commit", ALL),
        Rule("DUP-COMMIT-ROLLBACK-ONLY", "Committing a rollback-only transaction fails (DUPLICATE_ID_REJECTED for a "
             "duplicate) and rolls back every send and acknowledgement in it.",
             "TransactionImpl.commit; DuplicateDetectionTest.testEntireTransactionRejected", ALL),
        Rule("DUP-ROLLBACK", "A rollback discards the held messages, puts acknowledged messages back and leaves no ID "
             "of the transaction visible.", "DuplicateDetectionTest.testRollbackThenSend; "
             "ARTEMIS-3389 (rejected)", ALL),
        # --- XA two-phase commit
        Rule("DUP-XA-PREPARE", "Preparing an open transaction makes it durable; its messages stay held and its IDs "
             "stay invisible until the second phase.",
             "TransactionImpl.prepare; DuplicateDetectionTest.testXADuplicateDetection1, testXADuplicateDetection2",
             ALL),
        Rule("DUP-XA-PREPARE-ROLLBACK-ONLY", "Preparing a rollback-only transaction fails with the reason it was "
             "doomed (DUPLICATE_ID_REJECTED for a duplicate) and rolls back every send and acknowledgement in it.",
             "TransactionImpl.prepare (internalRollback, then the stored exception); "
             "DuplicateDetectionTest.testXADuplicateDetection4", ALL),
        Rule("DUP-XA-PREPARE-AGAIN", "Preparing a prepared transaction again changes nothing and succeeds.",
             "ServerSessionImpl.xaPrepare (logs AMQ221079, ignoringPrepareOnXidAlreadyCalled, and returns)", ALL),
        Rule("DUP-XA-PREPARED-BUSY", "A session whose transaction is prepared takes no more work: its sends and "
             "receives are refused until the second phase.",
             "ServerSessionImpl.xaEnd (a prepared branch is no longer associated with the session); the XA "
             "protocol: work after prepare belongs to another branch", ALL),
        Rule("DUP-XA-SECOND-PHASE", "Committing a prepared transaction routes its messages, makes its "
             "acknowledgements final and then its IDs visible, and cannot fail; rolling it back discards it as a "
             "rollback does. Both also end a prepared transaction found again after a restart.",
             "TransactionImpl.commit(onePhase=false); ServerSessionImpl.xaCommit, xaRollback; "
             "DuplicateDetectionTest.testXADuplicateDetectionPrepareAndRollbackStopServer", ALL),
        Rule("DUP-XA-PREPARED-RESTART", "A restart or a crash keeps a prepared transaction with its held messages, "
             "its acknowledgements and its ID records, attached to it again: the IDs become visible only if it "
             "commits (an instant add made in it is no longer visible), and not at all without persist-id-cache.",
             "AbstractJournalStorageManager.loadPreparedTransactions -> DuplicateIDCache.load(tx, id) "
             "(AddDuplicateIDOperation after commit); DuplicateDetectionTest."
             "testXADuplicateDetectionPrepareAndRollbackStopServer, testNoPersistXA1", ALL),
        # --- administration and restarts
        Rule("DUP-QUERY-ID", "An ID query changes nothing: it says whether the address's cache (for a bridge ID, "
             "its bridge cache) holds the ID now, exactly as the next send's duplicate check would find it.",
             "DuplicateIDCache.contains, PostOfficeImpl.getDuplicateIDCache", ALL),
        Rule("DUP-DELETE-ID", "Deleting an ID removes it from the index and leaves a hole in its slot; the cursor "
             "does not move.", "DuplicateIDCache.deleteFromCache", ALL),
        Rule("DUP-SIZE-SETTING", "address-settings id-cache-size sets an address's cache size.",
             "ARTEMIS-4159 (2.31.0); PostOfficeImpl.resolveIdCacheSize", ("artemis-latest",)),
        Rule("DUP-SIZE-SETTING-UNSUPPORTED", "Before 2.31.0 there is no per-address id-cache-size.",
             "ARTEMIS-4159", ("seed", "artemis-2.11")),
        Rule("DUP-RESTART-RELOAD", "A restart loses the open transactions that are not prepared and reloads each cache from its durable IDs in "
             "the order they were stored; when more are stored than the cache holds, the oldest are dropped (before "
             "1.3.0 the newest).", "seed 001 PostOfficeJournalLoader.handleDuplicateIds, DuplicateIDCacheImpl.load; "
             "DuplicateDetectionTest.testShrinkCache; ARTEMIS-332", ALL),
        Rule("DUP-RESTART-NO-PERSIST", "With persist-id-cache false every cache is empty after a restart.",
             "DuplicateDetectionTest.testNoPersist", ALL),
    )
}

STRUCTURAL = frozenset({
    "DUP-ID-KEY", "DUP-CACHE-PER-ADDRESS", "DUP-RING-FIFO", "DUP-SIZE-FIXED", "DUP-SIZE-ZERO", "DUP-BRIDGE-FIRST",
    "DUP-NONTX-VISIBILITY", "DUP-SAME-ID-IN-TX", "DUP-CONCURRENT-TX", "DUP-XA-PREPARED-RESTART",
})
"""Rules that shape the state rather than decide an outcome; no outcome carries their ID."""
