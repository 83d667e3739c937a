"""Showing the reference broker as a spec state, so the two can be compared.

Introduction
------------
The spec's state (:class:`DuplicatesState`) is a plain value; the reference
broker is a web of objects. This module reads the objects and writes the
value, field by field:

* each :class:`DuplicateIDCache` becomes an ``IdRing``: its size, the keys
  of its slots (``None`` for a hole), its cursor, its map, and its *pending*
  slots. A slot is pending while the client transaction whose instant add
  wrote it is still open: its journal record is not durable yet (DUP-BRIDGE-DUPLICATE, 2.18
  on). The spec names the pending slot's owner by session, and a slot
  whose transaction no session holds, one the post office started and
  abandoned (DUP-AUTO-CREATE-NAME-TAKEN), as ``STRANDED``;
* each queue becomes a ``QueueState``;
* each session's open transaction becomes a spec ``Transaction``: its
  status and reason, then its operations sorted into the spec's tuples, in
  the order they were registered (the order of the sends). Duplicate-ID
  operations whose cache has been forgotten (DUP-FORGET-ON-LAST-QUEUE) are left out, as the spec
  drops that work. The IDs a start-up attached again to a prepared
  transaction wait for the stored commit (DUP-XA-PREPARED-RESTART);
* the settings, the global size and the next message number are copied.

Nothing here changes the broker.
"""

from __future__ import annotations

from collections.abc import Mapping

from brokerspec.spec import DuplicatesOptions, FrozenMap, InstantAdd
from brokerspec.spec.duplicates import (
    CacheName,
    DuplicatesState,
    IdRing,
    STRANDED,
    PendingMessage,
    QueueState,
    Transaction,
    TxState,
)

from .cache import AddDuplicateIDOperation, DuplicateIDCache
from .queues import AcknowledgeOperation, Bindings, DeliverOperation
from .transaction import Transaction as BrokerTransaction
from .transaction import TransactionState

STATUS = {TransactionState.ACTIVE: TxState.ACTIVE, TransactionState.ROLLBACK_ONLY: TxState.ROLLBACK_ONLY,
          TransactionState.PREPARED: TxState.PREPARED}


def render_cache(cache: DuplicateIDCache, owners: Mapping[BrokerTransaction, str]) -> IdRing:
    """One cache as the spec's ring.

    A bridge ID sent inside an open transaction under 2.18 is in memory at
    once, its slot pending for the session until the commit:

    >>> from brokerspec.spec import get_profile
    >>> from brokerspec.spec.duplicates import Begin, CacheKind, Commit, Send
    >>> from brokerspec.reference.duplicates import ReferenceDuplicatesBroker
    >>> broker = ReferenceDuplicatesBroker(get_profile("artemis-latest"))
    >>> _ = broker.execute(Begin("s1"))
    >>> _ = broker.execute(Send("s1", "a1", bridge_id="01"))
    >>> bridge = CacheName(CacheKind.BRIDGE, "a1")
    >>> broker.snapshot().caches[bridge].pending
    FrozenMap({0: 's1'})
    >>> _ = broker.execute(Commit("s1"))
    >>> broker.snapshot().caches[bridge].pending
    FrozenMap({})
    """
    pending = {
        slot_number: owners.get(slot.owner, STRANDED)
        for slot_number, slot in enumerate(cache.ids)
        if slot.owner is not None and slot.owner.is_open()
    }
    return IdRing(cache.size, tuple(slot.key for slot in cache.ids), cache.pos, FrozenMap(cache.cache),
                  FrozenMap(pending))


def render_transaction(tx: BrokerTransaction) -> Transaction:
    """One open transaction as the spec's record of the work it holds."""
    messages: list[PendingMessage] = []
    acks: list[tuple[str, int]] = []
    ids: dict[InstantAdd, list[tuple[CacheName, bytes]]] = {timing: [] for timing in InstantAdd}
    for operation in tx.get_all_operations():
        if isinstance(operation, DeliverOperation):
            messages.append(PendingMessage(operation.message, tuple(queue.name for queue in operation.queues
                                                                    if operation.bindings.is_bound(queue))))
        elif isinstance(operation, AcknowledgeOperation):
            acks.extend(operation.get_live_acks())
        elif isinstance(operation, AddDuplicateIDOperation) and operation.is_live():
            ids[operation.timing].append((operation.cache.name, operation.key))
    return Transaction(
        status=STATUS[tx.state],
        doom=tx.rollback_reason,
        messages=tuple(messages),
        acks=tuple(acks),
        before_commit_ids=tuple(ids[InstantAdd.BEFORE_COMMIT]),
        after_store_ids=tuple(ids[InstantAdd.AFTER_STORE]),
        instant_ids=tuple(ids[InstantAdd.IMMEDIATE]),
    )


def render_state(options: DuplicatesOptions, global_size: int, address_settings: Mapping[str, int],
                 caches: Mapping[CacheName, DuplicateIDCache], bindings: Bindings,
                 open_transactions: Mapping[str, BrokerTransaction], next_message: int,
                 dormant: Mapping[CacheName, tuple[bytes, ...]] | None = None) -> DuplicatesState:
    """The whole broker as a spec state; ``open_transactions`` maps each session to its open transaction."""
    owners = {tx: session for session, tx in open_transactions.items()}
    return DuplicatesState(
        options=options,
        global_size=global_size,
        size_settings=FrozenMap(address_settings),
        caches=FrozenMap((name, render_cache(cache, owners)) for name, cache in caches.items()),
        queues=FrozenMap((name, QueueState(queue.address, queue.waiting(), queue.arrived()))
                         for name, queue in bindings.queues.items()),
        transactions=FrozenMap((session, render_transaction(tx)) for session, tx in open_transactions.items()),
        next_message=next_message,
        dormant=FrozenMap(dormant or {}),
    )
