"""Fast duplicate detection: mutable ID caches, a durable SQLite store, checked against the spec.

:class:`FastDuplicatesBroker` executes the commands of
:mod:`brokerspec.spec.duplicates`; :meth:`~FastDuplicatesBroker.snapshot`
renders its state as the spec's, :meth:`~FastDuplicatesBroker.check_valid`
checks its private indexes and its store. :class:`IdCache` and
:class:`SqliteStore` are exported for subclasses that override the broker's
seams (see :mod:`.broker`); :mod:`.samples` offers the closed ring entry
points CrossHair compares with the spec's.
"""

from .broker import FastDuplicatesBroker
from .cache import IdCache, SlotLog
from .records import OpenTransaction, WaitingQueue
from .store import SqliteStore, StoredState

__all__ = ["FastDuplicatesBroker", "IdCache", "OpenTransaction", "SlotLog", "SqliteStore", "StoredState",
           "WaitingQueue"]
