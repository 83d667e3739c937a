"""Reference duplicate detection: Artemis's ID caches, transactions and journal, written to teach.

Modules, in reading order: :mod:`.journal` (records and the storage
manager), :mod:`.transaction` (transactions and their operations),
:mod:`.cache` (the bounded ID cache and ``AddDuplicateIDOperation``),
:mod:`.queues` (queues and bindings), :mod:`.post_office` (the check and
routing), :mod:`.session` (what a client sees), :mod:`.prepared` (XA
prepared transactions and how a start-up finds them), :mod:`.loader` (start-up),
:mod:`.snapshot` (the broker as a spec state) and :mod:`.broker` (the one
entry point).
"""

from .broker import ReferenceDuplicatesBroker
from .cache import AddDuplicateIDOperation, DuplicateIDCache, IdSlot
from .journal import (
    AcknowledgeRecord,
    DuplicateIdRecord,
    Journal,
    MessageRecord,
    PreparedTransactionInfo,
    StorageManager,
)
from .loader import PostOfficeJournalLoader
from .prepared import load_prepared_transactions
from .post_office import Configuration, Message, PostOffice, RoutingContext, bridge_cache_name
from .queues import Bindings, Queue
from .session import ServerSession
from .transaction import Transaction, TransactionOperation, TransactionState

__all__ = [
    "AcknowledgeRecord", "AddDuplicateIDOperation", "Bindings", "Configuration", "DuplicateIDCache",
    "DuplicateIdRecord", "IdSlot", "Journal", "Message", "MessageRecord", "PostOffice",
    "PostOfficeJournalLoader", "PreparedTransactionInfo", "Queue", "ReferenceDuplicatesBroker", "RoutingContext",
    "ServerSession", "StorageManager", "Transaction", "TransactionOperation", "TransactionState",
    "bridge_cache_name", "load_prepared_transactions",
]
