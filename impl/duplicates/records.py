"""The fast broker's mutable records: a waiting queue and an open transaction.

Introduction
------------
The spec keeps a queue as a tuple of message numbers and a transaction as a
frozen value that every operation copies. Here both are small mutable
records, changed in place, that turn into spec values only when the broker
is asked for a :meth:`snapshot`.

A :class:`WaitingQueue` keeps its messages in number order (the spec's
``deliver`` and ``return_messages`` both sort), in a list read from a head
offset, so taking the first message is O(1) and adding the next number is
an append; a number smaller than the last (a transaction's message reaching
its queue at the commit, a rolled-back receive) is inserted by bisection.

An :class:`OpenTransaction` holds what a session's transaction is waiting to
do (R9, R11-R15): messages to route at the commit, acknowledgements held,
and ID work in three lists by the moment the IDs enter their caches (the
spec's ``before_commit_ids``, ``after_store_ids`` and ``instant_ids``). The
lists hold the :class:`~.cache.IdCache` objects themselves, not their
names, so a commit needs no lookup; deleting an address's last queue strips
the entries of the caches it drops (DUP-FORGET-ON-LAST-QUEUE).
"""

from __future__ import annotations

from bisect import insort

from brokerspec.spec.duplicates import DoomReason, PendingMessage, Transaction, TxState

from .cache import IdCache

COMPACT_AFTER = 64  # equivalent mutants: only when the taken head is dropped; waiting() reads from head on
"""Taken messages at the head of a queue's list before the list is compacted."""


class WaitingQueue:
    """A queue: its address and its waiting messages, lowest number first."""

    __slots__ = ("address", "messages", "head")

    def __init__(self, address: str, messages: list[int] | None = None) -> None:
        self.address = address
        self.messages: list[int] = sorted(messages) if messages else []
        self.head = 0

    def __len__(self) -> int:
        return len(self.messages) - self.head  # equivalent mutants (BitXor): the length is only tested for zero; x - y == 0 iff x ^ y == 0

    def add(self, number: int) -> None:
        """Put message ``number`` in its place by number."""
        messages = self.messages
        if self.head == len(messages):  # equivalent mutants (Eq_GtE): head never passes len(messages)
            messages.clear()
            self.head = 0
            messages.append(number)
        elif number > messages[-1]:  # equivalent mutants (Gt_Eq, Gt_GtE, Gt_Is): speed only: insort puts a number above the last where append does
            messages.append(number)
        else:
            insort(messages, number, lo=self.head)

    def take_first(self) -> int:
        """Remove and return the lowest waiting number (the queue must not be empty)."""
        number = self.messages[self.head]
        self.head += 1
        if self.head >= COMPACT_AFTER and self.head * 2 >= len(self.messages):  # equivalent mutants: compaction timing
            del self.messages[:self.head]
            self.head = 0
        return number

    def waiting(self) -> tuple[int, ...]:
        """The waiting numbers, lowest first."""
        return tuple(self.messages[self.head:])


IdWork = list[tuple[IdCache, bytes]]


class OpenTransaction:
    """One session's open transaction and the work it holds."""

    __slots__ = ("session", "status", "doom", "messages", "acks", "before_commit", "after_store", "instant")

    def __init__(self, session: str) -> None:
        self.session = session
        self.status = TxState.ACTIVE
        self.doom: DoomReason | None = None
        self.messages: list[tuple[int, tuple[str, ...]]] = []
        self.acks: list[tuple[str, int]] = []
        self.before_commit: IdWork = []
        self.after_store: IdWork = []
        self.instant: IdWork = []

    def id_work(self) -> tuple[IdWork, IdWork, IdWork]:
        """The three lists of ID work, in the order the spec's ``Transaction`` lists them."""
        return self.before_commit, self.after_store, self.instant

    def to_spec(self) -> Transaction:
        """This transaction as the spec's value."""
        return Transaction(
            status=self.status,
            doom=self.doom,
            messages=tuple(PendingMessage(number, queues) for number, queues in self.messages),
            acks=tuple(self.acks),
            before_commit_ids=tuple((cache.name, key) for cache, key in self.before_commit),
            after_store_ids=tuple((cache.name, key) for cache, key in self.after_store),
            instant_ids=tuple((cache.name, key) for cache, key in self.instant),
        )
