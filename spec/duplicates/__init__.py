"""Duplicate detection inside transactions: the executable specification.

Introduction
------------
Messages are sent to addresses, inside or outside transactions, with an
optional duplicate ID and an optional bridge ID. Each address keeps a
bounded FIFO cache of the IDs it has accepted, and a second one for bridge
IDs; a duplicate is not routed; inside a transaction it dooms the
transaction; an ID sent in a transaction becomes visible only when the
commit is durable, also when the transaction was prepared first (XA
two-phase commit) and survived restarts; caches are persisted and reloaded
at a restart.

Modules: :mod:`.ids` (value types and cache keys), :mod:`.ring` (the
bounded cache), :mod:`.lifecycle` (the transaction table), :mod:`.model`
(state), :mod:`.commands`, :mod:`.outcomes`, :mod:`.operations` (the
transitions), :mod:`.auto_create` (queues made by a send), :mod:`.rules`
(rule IDs and sources). Sources: seed 001 and
Artemis itself (``PostOfficeImpl``, the ID caches, ``DuplicateDetectionTest``
and the JIRA issues that changed them); :mod:`.rules` names them rule by
rule.
"""

from .commands import (
    COMMAND_TYPES,
    Begin,
    Commit,
    Crash,
    CreateQueue,
    DeleteId,
    QueryId,
    DeleteQueue,
    DuplicatesCommand,
    Prepare,
    Receive,
    Restart,
    Rollback,
    Send,
    SetIdCacheSize,
)
from .ids import DuplicateId, IdKind, compute_cache_key, describe_key, encode_simple_string
from .lifecycle import TRANSACTION_LIFECYCLE, TxEvent, TxState, compute_next_tx_state
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
    initial_state,
    invariant_violations,
    is_valid_state,
)
from .operations import TRANSITIONS, apply
from .outcomes import (
    OUTCOME_TYPES,
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
    get_ids_in_order,
    is_in_ring,
    load_ring,
    new_ring,
    ring_problems,
    settle_pending,
)
from .rules import RULES, STRUCTURAL
from .visibility import AddMoment, compute_add_moment, is_undone_on_failure

REASON_TYPES: tuple[type, ...] = ()

__all__ = [
    "COMMAND_TYPES", "Begin", "Commit", "Crash", "CreateQueue", "DeleteId", "DeleteQueue", "DuplicatesCommand",
    "Prepare", "QueryId", "Receive", "Restart", "Rollback", "Send", "SetIdCacheSize",
    "DuplicateId", "IdKind", "compute_cache_key", "describe_key", "encode_simple_string",
    "TRANSACTION_LIFECYCLE", "TxEvent", "TxState", "compute_next_tx_state",
    "CacheKind", "CacheName", "DoomReason", "DuplicatesState", "PendingMessage", "QueueState", "Transaction",
    "compute_cache_size", "get_queues_of", "initial_state", "invariant_violations", "is_valid_state",
    "TRANSITIONS", "apply",
    "OUTCOME_TYPES", "REASON_TYPES", "CommitFailed", "Committed", "Done", "IdDeleted", "IdQueried", "NotSupported",
    "NoTransaction", "PrepareFailed", "QueueDeleted", "QueueExists", "QueueNotFound", "Received", "Restarted", "RolledBack",
    "RoutingStatus", "SendFailed", "SendFailure", "Sent", "TransactionOpen", "TransactionPrepared",
    "STRANDED", "IdRing", "add_to_ring", "delete_from_ring", "get_durable_ids", "get_ids_in_order", "is_in_ring",
    "load_ring", "new_ring", "ring_problems", "settle_pending",
    "RULES", "STRUCTURAL", "AddMoment", "compute_add_moment", "is_undone_on_failure",
]
