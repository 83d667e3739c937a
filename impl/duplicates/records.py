"""The fast broker's mutable records: a waiting queue and an open transaction.

Introduction
------------
The spec keeps a queue as a tuple of message numbers and a transaction as a
frozen value that every operation copies. Here both are small mutable
records, changed in place, that turn into spec values only when the broker
is asked for a :meth:`snapshot`.

A :class:`WaitingQueue` keeps its messages in arrival order, each with its
arrival sequence, in a list read from a head offset, so taking the first
message is O(1) and an arrival is an append; a rolled-back receive goes back
to the head (2.11) or is inserted by bisection on its sequence
(ARTEMIS-4517), as the profile's ``return_order`` says.

An :class:`OpenTransaction` holds what a session's transaction is waiting to
do (DUP-TX-DUPLICATE, DUP-TX-HELD, DUP-NONTX-VISIBILITY, DUP-BRIDGE-DUPLICATE,
DUP-SAME-ID-IN-TX, DUP-CONCURRENT-TX): messages to route at the commit, acknowledgements held,
and ID work in three lists by the moment the IDs enter their caches (the
spec's ``before_commit_ids``, ``after_store_ids`` and ``instant_ids``). The
lists hold the :class:`~.cache.IdCache` objects themselves, not their
names, so a commit needs no lookup; deleting an address's last queue strips
the entries of the caches it drops (DUP-FORGET-ON-LAST-QUEUE). A prepared
transaction (``status`` ``PREPARED``, DUP-XA-PREPARE) is the same record;
one rebuilt at a restart holds all its IDs in ``after_store``
(DUP-XA-PREPARED-RESTART, :mod:`.prepared`).
"""

from __future__ import annotations

from bisect import insort

from brokerspec.spec.duplicates import DoomReason, PendingMessage, Transaction, TxState

from .cache import IdCache

COMPACT_AFTER = 64  # equivalent mutants: only when the taken head is dropped; waiting() reads from head on
"""Taken messages at the head of a queue's list before the list is compacted."""


class WaitingQueue:
    """A queue: its address, its waiting messages (head first) and the ones open transactions took.

    Each message on the queue carries its arrival sequence (``seq``): the
    order it reached the queue. ``messages`` holds ``(seq, number)`` pairs,
    read from ``head``; ``delivering`` maps a number an open transaction took
    to its sequence, so that a rollback can put it back where it belongs.
    """

    __slots__ = ("address", "messages", "head", "delivering")

    def __init__(self, address: str, messages: list[tuple[int, int]] | None = None) -> None:
        self.address = address
        self.messages: list[tuple[int, int]] = sorted(messages) if messages else []
        self.head = 0
        self.delivering: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self.messages) - self.head  # equivalent mutants (BitXor): the length is only tested for zero; x - y == 0 iff x ^ y == 0

    def add(self, seq: int, number: int) -> None:
        """Message ``number`` arrives at the tail, with the highest sequence yet."""
        if self.head == len(self.messages):  # equivalent mutants (Eq_GtE): head never passes len(messages)
            self.messages.clear()
            self.head = 0
        self.messages.append((seq, number))

    def take_first(self, held: bool) -> tuple[int, int]:
        """Remove and return the first waiting ``(seq, number)`` (the queue must not be empty); ``held`` keeps it."""
        taken = self.messages[self.head]
        self.head += 1
        if self.head >= COMPACT_AFTER and self.head * 2 >= len(self.messages):  # equivalent mutants: compaction timing
            del self.messages[:self.head]
            self.head = 0
        if held:
            self.delivering[taken[1]] = taken[0]
        return taken

    def acknowledge(self, number: int) -> None:
        """A held message is acknowledged for good."""
        self.delivering.pop(number, None)

    def put_back(self, numbers: list[int], at_head: bool) -> list[tuple[int, int]]:
        """Held messages (in the order taken) wait again: at the head, or in arrival order; the pairs put back.

        A number this queue does not hold (its queue was deleted and made
        again since) is skipped.
        """
        refs = [(self.delivering.pop(n), n) for n in numbers if n in self.delivering]
        if at_head:
            self.messages[self.head:self.head] = refs
        else:
            for ref in refs:
                insort(self.messages, ref, lo=self.head)
        return refs

    def reload(self) -> None:
        """A restart: every message not acknowledged waits again, in arrival order."""
        self.messages = sorted([*self.messages[self.head:], *((s, n) for n, s in self.delivering.items())])
        self.head = 0
        self.delivering = {}

    def waiting(self) -> tuple[int, ...]:
        """The waiting numbers, first to be received first."""
        return tuple(number for _, number in self.messages[self.head:])

    def arrived(self) -> tuple[int, ...]:
        """Every message not yet acknowledged, in arrival order (the spec's ``QueueState.arrived``)."""
        return tuple(n for _, n in sorted([*self.messages[self.head:], *((s, n) for n, s in self.delivering.items())]))


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

    def held_ids(self) -> list[tuple[bool, str, bytes]]:
        """The IDs the transaction holds as (bridge, address, key), in the order a restart attaches them again.

        Instant adds, then ``beforeCommit`` IDs, then the IDs waiting for the
        stored commit: the spec's ``keep_prepared``.
        """
        return [(cache.bridge, cache.address, key) for cache, key in (*self.instant, *self.before_commit,
                                                                       *self.after_store)]

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
