"""Operations: each duplicate-detection command as a pure state transition.

Introduction
------------
``apply(state, command)`` returns the next state and the outcome; the
operation for each command type is found in :data:`TRANSITIONS`. Every
operation is atomic: sessions interleave whole operations, never parts of
one (the window in which two sessions' sends of one ID both pass, ``contains``
and ``addToCache`` being two steps, is therefore not modelled).

Theory of operation, following ``PostOfficeImpl.route`` and
``checkDuplicateID`` (seed 001):

1. A send that carries a bridge ID is checked against the address's bridge
   cache only; its normal ID is neither checked nor recorded (DUP-BRIDGE-FIRST, DUP-BRIDGE-DUPLICATE).
2. Otherwise its normal ID, converted to a cache key (DUP-ID-KEY), is looked up in
   the address's cache (DUP-CACHE-PER-ADDRESS). A duplicate is not routed; outside a
   transaction the client is told the send succeeded (DUP-NONTX-DUPLICATE), inside one the
   transaction becomes rollback-only (DUP-TX-DUPLICATE). With ``reject_duplicates`` false
   the duplicate is routed and its ID not recorded again (DUP-NO-REJECT).
3. A new ID is recorded: outside a transaction as part of the send (DUP-NONTX-VISIBILITY);
   inside one when the commit is stored (DUP-TX-HELD), so a second send of the same
   ID in the same or another open transaction is not a duplicate (DUP-SAME-ID-IN-TX,
   DUP-CONCURRENT-TX). Bridge IDs inside a transaction follow the profile's instant-add
   timing (DUP-BRIDGE-DUPLICATE).
4. Routing failing after the check (``address_full``) undoes an instant add
   by deleting the ID again, which leaves a hole and does not bring back
   what the add evicted (DUP-NONTX-VISIBILITY, DUP-DELETE-ID, 2.18 on).

The check happens before bindings are looked up, so an address with no
queues still records the ID (DUP-ROUTED). Caches are created by the first check on
their address, and their size is fixed then (DUP-SIZE-FIXED).

XA two-phase commit (``TransactionImpl.prepare``, ``ServerSessionImpl.xaPrepare``):
``prepare`` makes an open transaction durable without making anything
visible; a doomed one fails to prepare and rolls back (DUP-XA-PREPARE-ROLLBACK-ONLY).
A prepared transaction reserves nothing: its IDs become visible at the second
phase's commit, exactly as a one-phase commit's do, so another transaction may
send, prepare and commit the same ID meanwhile (DUP-CONCURRENT-TX). It survives a
restart or a crash with its messages, its acknowledgements and its ID records,
which are attached to it again (DUP-XA-PREPARED-RESTART).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..frozen import FrozenMap, replace
from ..outcome import Outcome
from ..profiles import InstantAdd, ReturnOrder, ZeroSizeCache
from .commands import (
    Begin,
    Commit,
    Crash,
    CreateQueue,
    DeleteId,
    DeleteQueue,
    DuplicatesCommand,
    Prepare,
    QueryId,
    Receive,
    Restart,
    Rollback,
    Send,
    SetIdCacheSize,
)
from .auto_create import AutoCreation, compute_auto_creation, create_queue_named_like
from .ids import compute_cache_key
from .lifecycle import TxEvent, TxState, compute_next_tx_state
from .model import (
    CacheKind,
    CacheName,
    DoomReason,
    DuplicatesState,
    PendingMessage,
    QueueState,
    Transaction,
    compute_cache_size,
    get_queues_of,
)
from .outcomes import (
    CommitFailed,
    Committed,
    Done,
    IdDeleted,
    IdQueried,
    NotSupported,
    NoTransaction,
    PrepareFailed,
    QueueDeleted,
    QueueExists,
    QueueNotFound,
    Received,
    Restarted,
    RolledBack,
    RoutingStatus,
    SendFailed,
    SendFailure,
    Sent,
    TransactionOpen,
    TransactionPrepared,
)
from .ring import (
    STRANDED,
    IdRing,
    add_to_ring,
    delete_from_ring,
    get_durable_ids,
    is_in_ring,
    load_ring,
    new_ring,
    settle_pending,
)
from .visibility import AddMoment, compute_add_moment, is_undone_on_failure

Result = tuple[DuplicatesState, Outcome]


# --- small pure helpers ------------------------------------------------------------


def get_tx_state(state: DuplicatesState, session: str) -> TxState:
    """The lifecycle state of ``session``'s transaction (NONE when it has none open)."""
    tx = state.transactions.get(session)
    return TxState.NONE if tx is None else tx.status


def ensure_cache(state: DuplicatesState, name: CacheName) -> DuplicatesState:
    """The state with cache ``name`` created (sized now, DUP-SIZE-FIXED) if it did not exist."""
    if name in state.caches:
        return state
    return _replace(state, caches=state.caches.set(name, new_ring(compute_cache_size(state, name))))


def record_id(state: DuplicatesState, name: CacheName, key: bytes, owner: str = "") -> DuplicatesState:
    """The state with ``key`` written into cache ``name`` (DUP-RING-FIFO)."""
    state = ensure_cache(state, name)
    return _replace(state, caches=state.caches.set(name, add_to_ring(state.caches[name], key, owner)))


def forget_id(state: DuplicatesState, name: CacheName, key: bytes) -> DuplicatesState:
    """The state with ``key`` deleted from cache ``name``, when that cache exists (DUP-DELETE-ID)."""
    ring = state.caches.get(name)
    if ring is None:
        return state
    return _replace(state, caches=state.caches.set(name, delete_from_ring(ring, key)))


def return_messages(queues: FrozenMap[str, QueueState], acks: tuple[tuple[str, int], ...],
                    order: ReturnOrder) -> FrozenMap[str, QueueState]:
    """Queues with the messages of ``acks`` (in the order taken) waiting again (queues since deleted skipped).

    ``HEAD``: before every waiting message, in the order taken (2.11).
    ``ARRIVAL``: each in its place in the queue's arrival order (ARTEMIS-4517).
    A message whose queue was deleted (and perhaps created again) since it
    was taken is not among that queue's arrivals: it is gone with its queue.
    """
    returned: dict[str, list[int]] = {}
    for queue_name, message in acks:
        if queue_name in queues and message in queues[queue_name].arrived:
            returned.setdefault(queue_name, []).append(message)
    for queue_name, messages in returned.items():
        queue = queues[queue_name]
        if order is ReturnOrder.HEAD:
            waiting = (*messages, *queue.messages)
        else:
            back = set(queue.messages) | set(messages)
            waiting = tuple(m for m in queue.arrived if m in back)
        queues = queues.set(queue_name, replace(queue, messages=waiting))
    return queues


def acknowledge(queues: FrozenMap[str, QueueState], queue_name: str, message: int) -> FrozenMap[str, QueueState]:
    """Queues with ``message`` acknowledged on ``queue_name``: no longer among its arrivals (a deleted queue skipped)."""
    queue = queues.get(queue_name)
    if queue is None:
        return queues
    return queues.set(queue_name, replace(queue, arrived=tuple(m for m in queue.arrived if m != message)))


def deliver(queues: FrozenMap[str, QueueState], message: int, targets: tuple[str, ...]) -> FrozenMap[str, QueueState]:
    """Queues with ``message`` arrived at the tail of each existing queue in ``targets``."""
    for queue_name in targets:
        queue = queues.get(queue_name)
        if queue is not None:
            queues = queues.set(queue_name, QueueState(queue.address, (*queue.messages, message),
                                                       (*queue.arrived, message)))
    return queues


def _replace(state: DuplicatesState, **changes: Any) -> DuplicatesState:
    return replace(state, **changes)


def _with_tx(state: DuplicatesState, session: str, tx: Transaction) -> DuplicatesState:
    return _replace(state, transactions=state.transactions.set(session, tx))


def _tx_replace(tx: Transaction, **changes: Any) -> Transaction:
    return replace(tx, **changes)


def _advance(tx: Transaction, event: TxEvent, doom: DoomReason | None = None) -> Transaction:
    """``tx`` after ``event`` per the lifecycle table; a newly doomed transaction keeps its first reason."""
    status = compute_next_tx_state(tx.status, event)
    if status is None:  # pragma: no cover - the table has every event an open transaction can see
        raise AssertionError(f"the lifecycle has no move for {tx.status} on {event}")
    if status is TxState.ROLLBACK_ONLY and tx.doom is None:
        return _tx_replace(tx, status=status, doom=doom)
    return _tx_replace(tx, status=status)


def undo_transaction(state: DuplicatesState, session: str) -> DuplicatesState:
    """Roll back ``session``'s transaction: undo instant adds, put acknowledged messages back, drop it."""
    tx = state.transactions[session]
    for name, key in tx.instant_ids:
        state = forget_id(state, name, key)
    caches = FrozenMap((name, settle_pending(ring, session)) for name, ring in state.caches.items())
    queues = return_messages(state.queues, tx.acks, state.options.return_order)
    return _replace(state, caches=caches, queues=queues, transactions=state.transactions.remove(session))


# --- queues -------------------------------------------------------------------------


def process_create_queue(state: DuplicatesState, command: CreateQueue) -> Result:
    """Create a queue; queue names are unique in the broker."""
    if command.queue in state.queues:
        return state, QueueExists(command.queue, rule="DUP-QUEUE-EXISTS")
    queues = state.queues.set(command.queue, QueueState(command.address))
    return _replace(state, queues=queues), Done(rule="DUP-QUEUE-CREATE")


def process_delete_queue(state: DuplicatesState, command: DeleteQueue) -> Result:
    """Delete a queue; when it was its address's last, forget both of the address's caches (DUP-FORGET-ON-LAST-QUEUE).

    Open transactions' ID work for those caches is dropped with them: a
    decision (DUP-FORGET-IN-FLIGHT), since the broker would add such an ID to
    the forgotten cache object, where no later send can see it. IDs a reload
    left dormant (``ZeroSizeCache.NO_OP``) stay: ``deleteDuplicateCache`` only
    clears the cache object, and a no-op cache clears nothing. So are the
    messages open (and prepared) transactions took from the queue, and those
    they sent to it: their references point at the deleted queue, so neither
    a commit nor a rollback can reach a queue made later under the same name
    (``PostOfficeImpl.processRoute`` binds each reference to the queue object
    at the send, ``AddOperation.afterCommit`` adds it to that object; found
    against Artemis 2.40.0 and 2.11.0).
    """
    queue = state.queues.get(command.queue)
    if queue is None:
        return state, QueueNotFound(command.queue, rule="DUP-QUEUE-NOT-FOUND")
    held_elsewhere = FrozenMap(
        (session, _tx_replace(
            tx, acks=tuple(ack for ack in tx.acks if ack[0] != command.queue),
            messages=tuple(PendingMessage(p.message, tuple(q for q in p.queues if q != command.queue))
                           for p in tx.messages)))
        for session, tx in state.transactions.items())
    state = _replace(state, queues=state.queues.remove(command.queue), transactions=held_elsewhere)
    if get_queues_of(state, queue.address):
        return state, QueueDeleted(False, rule="DUP-QUEUE-DELETE")
    gone = {CacheName(CacheKind.NORMAL, queue.address), CacheName(CacheKind.BRIDGE, queue.address)}
    caches = FrozenMap((name, ring) for name, ring in state.caches.items() if name not in gone)
    transactions = FrozenMap(
        (session, _tx_replace(
            tx,
            before_commit_ids=tuple(item for item in tx.before_commit_ids if item[0] not in gone),
            after_store_ids=tuple(item for item in tx.after_store_ids if item[0] not in gone),
            instant_ids=tuple(item for item in tx.instant_ids if item[0] not in gone),
        ))
        for session, tx in state.transactions.items()
    )
    return _replace(state, caches=caches, transactions=transactions), QueueDeleted(True, rule="DUP-FORGET-ON-LAST-QUEUE")


# --- transactions -------------------------------------------------------------------


def process_begin(state: DuplicatesState, command: Begin) -> Result:
    """Open a transaction on a session that has none."""
    if compute_next_tx_state(get_tx_state(state, command.session), TxEvent.BEGIN) is None:
        return state, TransactionOpen(command.session, rule="DUP-TX-ALREADY-OPEN")
    return _with_tx(state, command.session, Transaction()), Done(rule="DUP-TX-BEGIN")


def process_prepare(state: DuplicatesState, command: Prepare) -> Result:
    """The first phase of a two-phase commit: the transaction becomes durable, nothing becomes visible.

    Rules DUP-XA-PREPARE, DUP-XA-PREPARE-ROLLBACK-ONLY (a doomed transaction
    rolls back and the prepare fails with the reason it was doomed, as its
    commit would) and DUP-XA-PREPARE-AGAIN (``ServerSessionImpl.xaPrepare``
    logs and ignores a second prepare).
    """
    tx = state.transactions.get(command.session)
    if tx is None:
        return state, NoTransaction(command.session, rule="DUP-NO-TRANSACTION")
    if tx.status is TxState.PREPARED:
        return state, Done(rule="DUP-XA-PREPARE-AGAIN")
    if tx.status is TxState.ROLLBACK_ONLY and tx.doom is not None:
        return undo_transaction(state, command.session), PrepareFailed(
            tx.doom, rule="DUP-XA-PREPARE-ROLLBACK-ONLY")
    return _with_tx(state, command.session, _advance(tx, TxEvent.PREPARE)), Done(rule="DUP-XA-PREPARE")


def process_commit(state: DuplicatesState, command: Commit) -> Result:
    """Commit: a rollback-only transaction fails and rolls back; otherwise route, then record IDs.

    Rules DUP-COMMIT-ROLLBACK-ONLY and DUP-TX-HELD; a prepared transaction
    commits the same way, and cannot fail (DUP-XA-SECOND-PHASE): nothing is
    checked again.

    IDs added in ``beforeCommit`` enter the cache first, then the store
    makes everything durable, then the IDs waiting for the store enter, in
    send order: the same ID sent twice takes two slots (DUP-SAME-ID-IN-TX), and nothing is
    re-checked, so two transactions with the same ID both commit (DUP-CONCURRENT-TX).
    """
    tx = state.transactions.get(command.session)
    if tx is None:
        return state, NoTransaction(command.session, rule="DUP-NO-TRANSACTION")
    if tx.status is TxState.ROLLBACK_ONLY and tx.doom is not None:
        return undo_transaction(state, command.session), CommitFailed(tx.doom, rule="DUP-COMMIT-ROLLBACK-ONLY")
    for name, key in tx.before_commit_ids:
        state = record_id(state, name, key)
    queues = state.queues
    for queue_name, message in tx.acks:
        queues = acknowledge(queues, queue_name, message)
    for pending in tx.messages:
        queues = deliver(queues, pending.message, pending.queues)
    caches = FrozenMap((name, settle_pending(ring, command.session)) for name, ring in state.caches.items())
    state = _replace(state, queues=queues, caches=caches, transactions=state.transactions.remove(command.session))
    for name, key in tx.after_store_ids:
        state = record_id(state, name, key)
    rule = "DUP-XA-SECOND-PHASE" if tx.status is TxState.PREPARED else "DUP-COMMIT"
    return state, Committed(tuple(p.message for p in tx.messages), rule=rule)


def process_rollback(state: DuplicatesState, command: Rollback) -> Result:
    """Roll back: no ID of the transaction stays visible, acknowledged messages wait again (DUP-TX-HELD).

    A prepared transaction rolls back the same way (DUP-XA-SECOND-PHASE).
    """
    tx = state.transactions.get(command.session)
    if tx is None:
        return state, NoTransaction(command.session, rule="DUP-NO-TRANSACTION")
    rule = "DUP-XA-SECOND-PHASE" if tx.status is TxState.PREPARED else "DUP-ROLLBACK"
    return undo_transaction(state, command.session), RolledBack(rule=rule)


def _is_prepared(state: DuplicatesState, session: str) -> bool:
    tx = state.transactions.get(session)
    return tx is not None and tx.status is TxState.PREPARED


def process_receive(state: DuplicatesState, command: Receive) -> Result:
    """Take the first waiting message; inside a transaction the acknowledgement waits for the commit.

    A session whose transaction is prepared takes no message (DUP-XA-PREPARED-BUSY).
    """
    if _is_prepared(state, command.session):
        return state, TransactionPrepared(command.session, rule="DUP-XA-PREPARED-BUSY")
    queue = state.queues.get(command.queue)
    if queue is None:
        return state, QueueNotFound(command.queue, rule="DUP-QUEUE-NOT-FOUND")
    if not queue.messages:
        return state, Received(None, rule="DUP-RECEIVE")
    message = queue.messages[0]
    queues = state.queues.set(command.queue, replace(queue, messages=queue.messages[1:]))
    tx = state.transactions.get(command.session)
    if tx is None:
        queues = acknowledge(queues, command.queue, message)
    state = _replace(state, queues=queues)
    if tx is not None:
        tx = _advance(tx, TxEvent.RECEIVE)
        state = _with_tx(state, command.session, _tx_replace(tx, acks=(*tx.acks, (command.queue, message))))
    return state, Received(message, rule="DUP-RECEIVE")


# --- sending ------------------------------------------------------------------------


def process_send(state: DuplicatesState, command: Send) -> Result:
    """Check the message's ID, record it, route the message (the sending rules of :mod:`.rules`).

    A session whose transaction is prepared sends nothing, and nothing is checked (DUP-XA-PREPARED-BUSY).
    """
    if _is_prepared(state, command.session):
        return state, TransactionPrepared(command.session, rule="DUP-XA-PREPARED-BUSY")
    if command.bridge_id is not None:
        return _send_bridged(state, command, bytes.fromhex(command.bridge_id))
    tx = state.transactions.get(command.session)
    if command.duplicate_id is None:
        return _route(state, command, None)
    key = compute_cache_key(command.duplicate_id)
    if key is None:
        return _fail_send(state, command, SendFailure.ID_NOT_BYTES, "DUP-ID-NOT-BYTES")
    name = CacheName(CacheKind.NORMAL, command.address)
    state = ensure_cache(state, name)
    ring = state.caches[name]
    duplicate = is_in_ring(ring, key)
    if duplicate and command.reject_duplicates:
        if tx is None:
            return state, Sent(RoutingStatus.DUPLICATED_ID, rule="DUP-NONTX-DUPLICATE")
        doomed = _advance(tx, TxEvent.DUPLICATE, DoomReason.DUPLICATE_ID)
        return _with_tx(state, command.session, doomed), Sent(
            RoutingStatus.DUPLICATED_ID, rollback_only=True, rule="DUP-TX-DUPLICATE")
    record = None if duplicate or ring.size == 0 else (name, key)
    return _route(state, command, record, state.options.nontx_add,
                  rule="DUP-NO-REJECT" if duplicate else "")


def _send_bridged(state: DuplicatesState, command: Send, key: bytes) -> Result:
    """A bridged message: only the bridge cache counts; a duplicate is dropped silently.

    Rules DUP-BRIDGE-FIRST and DUP-BRIDGE-DUPLICATE.

    A bridge cache of size 0 under ``ZeroSizeCache.NO_OP`` answers "duplicate" to every ID (DUP-SIZE-ZERO).
    """
    name = CacheName(CacheKind.BRIDGE, command.address)
    state = ensure_cache(state, name)
    ring = state.caches[name]
    no_op = ring.size == 0 and state.options.zero_size_cache is ZeroSizeCache.NO_OP
    if not is_in_ring(ring, key) and not no_op:
        record = None if ring.size == 0 else (name, key)
        return _route(state, command, record, state.options.bridge_add)
    tx = state.transactions.get(command.session)
    if tx is None:
        return state, Sent(RoutingStatus.DUPLICATED_ID, rule="DUP-BRIDGE-DUPLICATE")
    state = undo_transaction(state, command.session)
    doomed = _advance(tx, TxEvent.DUPLICATE, DoomReason.BRIDGE_DUPLICATE)
    doomed = Transaction(status=doomed.status, doom=doomed.doom)
    return _with_tx(state, command.session, doomed), Sent(
        RoutingStatus.DUPLICATED_ID, rollback_only=True, rule="DUP-BRIDGE-DUPLICATE-IN-TX")


def _fail_send(state: DuplicatesState, command: Send, reason: SendFailure, rule: str) -> Result:
    tx = state.transactions.get(command.session)
    if tx is None:
        return state, SendFailed(reason, rule=rule)
    doomed = _advance(tx, TxEvent.FAILED_SEND, DoomReason.SEND_FAILED)
    return _with_tx(state, command.session, doomed), SendFailed(reason, rollback_only=True, rule=rule)


def _route(state: DuplicatesState, command: Send, record: tuple[CacheName, bytes] | None,
           timing: InstantAdd = InstantAdd.IMMEDIATE, rule: str = "") -> Result:
    """Record ``record`` (a cache and key, or None) and route the message, in or outside a transaction.

    An auto-creating send makes its queue first, or fails for a name taken (:mod:`.auto_create`). A full
    address fails the send only when it reaches a queue: ``PostOfficeImpl.route`` calls ``processRoute``,
    where the paging store throws, only when ``context.getQueueCount() > 0``; with no queue the send is
    NO_BINDINGS as any other.
    """
    tx = state.transactions.get(command.session)
    bridged = command.bridge_id is not None
    creation = compute_auto_creation(state, command)
    if creation is AutoCreation.NAME_TAKEN:
        return _fail_name_taken(state, command, record, timing)
    if creation is AutoCreation.CREATE:
        state = create_queue_named_like(state, command.address)
        rule = rule or "DUP-AUTO-CREATE"
    full = command.address_full and bool(get_queues_of(state, command.address))
    if tx is None:
        if full:
            if record is not None and is_undone_on_failure(timing):
                state = forget_id(record_id(state, *record), *record)
            return state, SendFailed(SendFailure.ADDRESS_FULL, rule="DUP-SEND-FAILED")
        if record is not None:
            state = record_id(state, *record)
        targets = get_queues_of(state, command.address)
        number = state.next_message
        queues = deliver(state.queues, number, targets)
        status = RoutingStatus.OK if targets else RoutingStatus.NO_BINDINGS
        return _replace(state, queues=queues, next_message=number + 1), Sent(
            status, number, targets, rule=rule or ("DUP-ROUTED" if targets else "DUP-NO-BINDINGS"))
    state, tx = _hold(state, tx, command, record, timing)
    if full:
        doomed = _advance(tx, TxEvent.FAILED_SEND, DoomReason.SEND_FAILED)
        return _with_tx(state, command.session, doomed), SendFailed(
            SendFailure.ADDRESS_FULL, rollback_only=True, rule="DUP-SEND-FAILED-IN-TX")
    targets = get_queues_of(state, command.address)
    number = state.next_message
    tx = _advance(tx, TxEvent.SEND)
    tx = _tx_replace(tx, messages=(*tx.messages, PendingMessage(number, targets)))
    status = RoutingStatus.OK if targets else RoutingStatus.NO_BINDINGS
    state = _replace(_with_tx(state, command.session, tx), next_message=number + 1)
    return state, Sent(status, number, targets, rollback_only=tx.status is TxState.ROLLBACK_ONLY,
                       rule=rule or "DUP-TX-HELD")


def _hold(state: DuplicatesState, tx: Transaction, command: Send, record: tuple[CacheName, bytes] | None,
          timing: InstantAdd) -> tuple[DuplicatesState, Transaction]:
    """``record`` held by ``tx`` until its moment, or in the cache at once as the session's pending add."""
    if record is None:
        return state, tx
    moment = compute_add_moment(True, command.bridge_id is not None, timing)
    if moment is AddMoment.AT_ONCE:
        state = record_id(state, *record, owner=command.session)
        return state, _tx_replace(tx, instant_ids=(*tx.instant_ids, record))
    if moment is AddMoment.BEFORE_COMMIT:
        return state, _tx_replace(tx, before_commit_ids=(*tx.before_commit_ids, record))
    return state, _tx_replace(tx, after_store_ids=(*tx.after_store_ids, record))


def _fail_name_taken(state: DuplicatesState, command: Send, record: tuple[CacheName, bytes] | None,
                     timing: InstantAdd) -> Result:
    """An auto-creating send whose queue name is bound to another address fails (DUP-AUTO-CREATE-NAME-TAKEN).

    ``checkAddress`` (or ``simpleRoute``) throws AMQ229203 after the check.
    Inside a transaction the ID is held as for any send and the transaction
    is doomed (``markAsRollbackOnly``). Outside one, the broker's own
    transaction is abandoned: an instant add stays in memory, never durable.
    """
    tx = state.transactions.get(command.session)
    failure = SendFailure.ADDRESS_DOES_NOT_EXIST
    if tx is None:
        if record is not None and is_undone_on_failure(timing):
            state = record_id(state, *record, owner=STRANDED)
        return state, SendFailed(failure, rule="DUP-AUTO-CREATE-NAME-TAKEN")
    state, tx = _hold(state, tx, command, record, timing)
    doomed = _advance(tx, TxEvent.FAILED_SEND, DoomReason.SEND_FAILED)
    return _with_tx(state, command.session, doomed), SendFailed(failure, rollback_only=True,
                                                                rule="DUP-AUTO-CREATE-NAME-TAKEN")


# --- administration -----------------------------------------------------------------


def process_delete_id(state: DuplicatesState, command: DeleteId) -> Result:
    """Delete one ID from an address's cache, leaving a hole (DUP-DELETE-ID)."""
    key = compute_cache_key(command.duplicate_id)
    name = CacheName(CacheKind.NORMAL, command.address)
    ring = state.caches.get(name)
    if key is None or ring is None or not is_in_ring(ring, key):
        return state, IdDeleted(False, rule="DUP-DELETE-ID")
    return forget_id(state, name, key), IdDeleted(True, rule="DUP-DELETE-ID")


def process_query_id(state: DuplicatesState, command: QueryId) -> Result:
    """Whether the address's cache holds the ID now, as the next send's duplicate check would see it (DUP-QUERY-ID).

    A bridge ID is looked up in the bridge cache, any other in the address's own; a long ID is never cached.
    Nothing changes: the query creates no cache.

    post: __return__[0] == state
    """
    if command.bridge_id is not None:
        name, key = CacheName(CacheKind.BRIDGE, command.address), bytes.fromhex(command.bridge_id)
    else:
        assert command.duplicate_id is not None
        name, found_key = CacheName(CacheKind.NORMAL, command.address), compute_cache_key(command.duplicate_id)
        if found_key is None:
            return state, IdQueried(False, rule="DUP-QUERY-ID")
        key = found_key
    ring = state.caches.get(name)
    return state, IdQueried(ring is not None and is_in_ring(ring, key), rule="DUP-QUERY-ID")


def process_set_id_cache_size(state: DuplicatesState, command: SetIdCacheSize) -> Result:
    """Set an address's ``id-cache-size``; caches that exist keep their size (DUP-SIZE-FIXED, ARTEMIS-4159)."""
    if not state.options.per_address_size:
        return state, NotSupported(command.op, rule="DUP-SIZE-SETTING-UNSUPPORTED")
    return _replace(state, size_settings=state.size_settings.set(command.address, command.size)), Done(
        rule="DUP-SIZE-SETTING")


def keep_prepared(tx: Transaction, persist_ids: bool) -> Transaction:
    """A prepared transaction as a restart finds it again (DUP-XA-PREPARED-RESTART).

    Its ID records are attached to it again, to be added when it commits
    (``DuplicateIDCache.load(tx, id)`` registers an after-commit add), whatever
    moment they would have entered the cache before: an instant add made
    inside it is no longer visible. With ``persist_id_cache`` false it wrote
    no ID record, so it comes back without its IDs (``testNoPersistXA1``).
    Each cache's IDs keep their order. Loading them makes their caches
    (``PostOffice.getDuplicateIDCache`` in ``loadPreparedTransactions``), sized
    by the settings of the restart, even when no other ID of theirs is stored.
    """
    ids = tx.instant_ids + tx.before_commit_ids + tx.after_store_ids if persist_ids else ()
    return Transaction(status=TxState.PREPARED, messages=tx.messages, acks=tx.acks, after_store_ids=ids)


def process_restart(state: DuplicatesState, command: Restart | Crash) -> Result:
    """Restart: open transactions are lost, prepared ones kept; each cache is rebuilt from its durable IDs.

    Rules DUP-RESTART-RELOAD, DUP-RESTART-NO-PERSIST and DUP-XA-PREPARED-RESTART.

    With ``persist_id_cache`` false every cache starts empty. Otherwise a
    cache's durable IDs are its IDs in the order they entered, less holes and
    uncommitted instant adds, after any IDs an earlier reload left dormant;
    they are loaded into a cache sized by the settings now in force,
    dropping the excess as the profile says. Under ``ZeroSizeCache.NO_OP`` a
    reload into size 0 keeps them dormant in the store instead of deleting them.

    Every queue is reloaded in arrival order, the order its messages' records
    stand in the journal: the messages the lost transactions held are back,
    and a message once put back at the head (``ReturnOrder.HEAD``) is in its
    arrival place again. A message a prepared transaction acknowledged stays
    held by it (``Queue.reacknowledge`` at the load of prepared transactions).
    """
    kept = FrozenMap((session, keep_prepared(tx, state.options.persist_id_cache))
                     for session, tx in state.transactions.items() if tx.status is TxState.PREPARED)
    lost = len(state.transactions) - len(kept)
    held = {ack for tx in kept.values() for ack in tx.acks}
    queues = FrozenMap((name, replace(queue, messages=tuple(m for m in queue.arrived if (name, m) not in held)))
                       for name, queue in state.queues.items())
    global_size = state.global_size
    if isinstance(command, Restart) and command.id_cache_size is not None:
        global_size = command.id_cache_size
    restarted = _replace(state, queues=queues, transactions=kept, caches=FrozenMap(), global_size=global_size)
    if not state.options.persist_id_cache:
        return restarted, Restarted(lost, 0, rule="DUP-RESTART-NO-PERSIST")
    caches: dict[CacheName, IdRing] = {}
    dormant: dict[CacheName, tuple[bytes, ...]] = {}
    dropped = 0
    keeps_dormant = state.options.zero_size_cache is ZeroSizeCache.NO_OP
    for name in sorted(set(state.caches) | set(state.dormant)):
        ring_ids = get_durable_ids(state.caches[name]) if name in state.caches else ()
        stored = state.dormant.get(name, ()) + ring_ids  # the records left by an earlier reload are older
        if not stored:
            continue
        size = compute_cache_size(restarted, name)
        ring, excess = load_ring(stored, size, state.options.reload_keeps)
        dropped += excess
        if ring is not None:
            caches[name] = ring
        elif keeps_dormant:
            dormant[name] = stored
    restarted = _replace(restarted, caches=FrozenMap(caches), dormant=FrozenMap(dormant))
    for tx in kept.values():  # loading a prepared transaction's ID record makes its cache
        for name, _ in tx.after_store_ids:
            restarted = ensure_cache(restarted, name)
    return restarted, Restarted(lost, dropped, rule="DUP-RESTART-RELOAD")


TRANSITIONS: dict[type[Any], Callable[[DuplicatesState, Any], Result]] = {
    CreateQueue: process_create_queue,
    DeleteQueue: process_delete_queue,
    Begin: process_begin,
    Send: process_send,
    Receive: process_receive,
    Commit: process_commit,
    Rollback: process_rollback,
    DeleteId: process_delete_id,
    SetIdCacheSize: process_set_id_cache_size,
    Restart: process_restart,
    Crash: process_restart,
    QueryId: process_query_id,
    Prepare: process_prepare,
}


def apply(state: DuplicatesState, command: DuplicatesCommand) -> Result:
    """Apply ``command`` to ``state``: the next state and the outcome.

    >>> from brokerspec.spec import get_profile
    >>> from brokerspec.spec.duplicates import DuplicateId, IdKind, initial_state
    >>> state = initial_state(get_profile("seed"))
    >>> state, _ = apply(state, CreateQueue("orders", "q1"))
    >>> state, first = apply(state, Send("s1", "orders", DuplicateId(IdKind.STRING, "x")))
    >>> state, second = apply(state, Send("s1", "orders", DuplicateId(IdKind.STRING, "x")))
    >>> first.status.value, second.status.value
    ('OK', 'DUPLICATED_ID')
    """
    return TRANSITIONS[type(command)](state, command)
