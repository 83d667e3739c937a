"""The duplicate-detection state: caches, queues, open transactions.

Introduction
------------
The state is one frozen value (STYLE point 2):

* ``caches``: every live ID cache by :class:`CacheName` (an address and
  whether it is the address's normal cache or its ``BRIDGE.`` cache, DUP-CACHE-PER-ADDRESS);
* ``size_settings``: per-address ``id-cache-size`` overrides (DUP-SIZE-FIXED,
  ARTEMIS-4159) and ``global_size``, the broker-wide default;
* ``queues``: each queue's address and the messages waiting in it, so that
  routing, acknowledgement and "the last queue of an address" (DUP-FORGET-ON-LAST-QUEUE) are
  observable;
* ``transactions``: the open transaction of each session, with the work it
  holds until it ends (DUP-TX-DUPLICATE, DUP-TX-HELD, DUP-SAME-ID-IN-TX, DUP-CONCURRENT-TX),
  prepared ones included (DUP-XA-PREPARE), which outlive restarts;
* ``next_message``: the number the next accepted message gets;
* ``dormant``: stored IDs that a reload into a cache of size 0 left in the
  store without loading them (``ZeroSizeCache.NO_OP``, ARTEMIS-4115).

Messages are numbered in the order they are sent (a message sent inside a
transaction gets its number at the send, and reaches its queues at the
commit). A queue delivers in arrival order: a message waits behind every
message that reached the queue before it, whatever their numbers, and a
receive takes the first waiting message. A message taken by a transactional
receive leaves the queue and is held by the transaction until it commits
(gone) or rolls back: then it goes back where the profile's
``return_order`` says (the head, or its place in arrival order). A restart
reloads every queue in arrival order (the journal's order), held messages
of the lost transactions included. Each queue therefore keeps, besides its
waiting messages, the arrival order of every message not yet acknowledged
(``arrived``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from ..frozen import FrozenMap
from ..profiles import DuplicatesOptions, Profile, ReturnOrder
from .lifecycle import TxState
from .ring import STRANDED, IdRing, ring_problems


class CacheKind(Enum):
    """Which of an address's two caches (DUP-CACHE-PER-ADDRESS)."""

    NORMAL = "normal"
    BRIDGE = "bridge"


@dataclass(frozen=True)
class CacheName:
    """A cache's name: the routing address, and ``BRIDGE.`` before it for bridge IDs (DUP-CACHE-PER-ADDRESS)."""

    kind: CacheKind
    address: str

    def __str__(self) -> str:
        return f"BRIDGE.{self.address}" if self.kind is CacheKind.BRIDGE else self.address

    def __lt__(self, other: CacheName) -> bool:
        return (self.address, self.kind.value) < (other.address, other.kind.value)


class DoomReason(Enum):
    """Why a transaction was marked rollback-only."""

    DUPLICATE_ID = "DUPLICATE_ID"
    """A send carried an ID already in the cache (DUP-TX-DUPLICATE): the commit fails with DUPLICATE_ID_REJECTED."""
    BRIDGE_DUPLICATE = "BRIDGE_DUPLICATE"
    """A bridge ID already in the bridge cache: the broker rolled the work back at once (DUP-BRIDGE-DUPLICATE)."""
    SEND_FAILED = "SEND_FAILED"
    """A send failed after the duplicate check (OpenWireConnection marks the transaction rollback-only)."""


@dataclass(frozen=True)
class PendingMessage:
    """A message accepted inside a transaction: routed to ``queues`` when the transaction commits."""

    message: int
    queues: tuple[str, ...]


@dataclass(frozen=True)
class Transaction:
    """One session's open transaction and the work it holds.

    ``before_commit_ids`` are added in ``beforeCommit`` (instant adds under
    2.8-2.17, DUP-NONTX-VISIBILITY, DUP-BRIDGE-DUPLICATE); ``after_store_ids`` once the commit is stored (DUP-TX-HELD);
    ``instant_ids`` were added at once and are removed again if the
    transaction rolls back (2.18 on). ``status`` is ``ACTIVE``,
    ``ROLLBACK_ONLY`` or ``PREPARED`` (a session with no open transaction has
    no entry); a prepared transaction found again after a restart holds all
    its IDs in ``after_store_ids`` (DUP-XA-PREPARED-RESTART).
    """

    status: TxState = TxState.ACTIVE
    doom: DoomReason | None = None
    messages: tuple[PendingMessage, ...] = ()
    acks: tuple[tuple[str, int], ...] = ()
    before_commit_ids: tuple[tuple[CacheName, bytes], ...] = ()
    after_store_ids: tuple[tuple[CacheName, bytes], ...] = ()
    instant_ids: tuple[tuple[CacheName, bytes], ...] = ()


@dataclass(frozen=True)
class QueueState:
    """A queue: its address, its waiting messages (first to be received first), and ``arrived``.

    ``arrived`` lists every message on the queue not yet acknowledged (waiting,
    or held by an open transaction) in the order they reached the queue.
    """

    address: str
    messages: tuple[int, ...] = ()
    arrived: tuple[int, ...] = ()


@dataclass(frozen=True)
class DuplicatesState:
    """The whole duplicate-detection state of one broker."""

    options: DuplicatesOptions
    global_size: int
    size_settings: FrozenMap[str, int] = field(default_factory=FrozenMap)
    caches: FrozenMap[CacheName, IdRing] = field(default_factory=FrozenMap)
    queues: FrozenMap[str, QueueState] = field(default_factory=FrozenMap)
    transactions: FrozenMap[str, Transaction] = field(default_factory=FrozenMap)
    next_message: int = 1
    dormant: FrozenMap[CacheName, tuple[bytes, ...]] = field(default_factory=FrozenMap)
    """``ZeroSizeCache.NO_OP``: the stored IDs of caches reloaded at size 0, kept for a later restart (oldest first)."""


def initial_state(profile: Profile) -> DuplicatesState:
    """A broker that has just started for the first time, under ``profile``."""
    return DuplicatesState(options=profile.duplicates, global_size=profile.duplicates.id_cache_size)


def compute_cache_size(state: DuplicatesState, name: CacheName) -> int:
    """The size a cache named ``name`` gets when it is created now (DUP-SIZE-FIXED).

    A per-address setting applies to the address's normal cache only: the
    bridge cache resolves its size by the name ``BRIDGE.<address>``, which
    the address's setting does not match (DUP-SIZE-FIXED).
    """
    if name.kind is CacheKind.NORMAL and name.address in state.size_settings:
        return state.size_settings[name.address]
    return state.global_size


def get_queues_of(state: DuplicatesState, address: str) -> tuple[str, ...]:
    """The names of the queues bound to ``address``, sorted."""
    return tuple(sorted(name for name, queue in state.queues.items() if queue.address == address))


def invariant_violations(state: DuplicatesState) -> list[str]:
    """Every invariant the state breaks, in words (empty for a valid state)."""
    problems: list[str] = []
    for name, ring in state.caches.items():
        problems.extend(f"cache {name}: {p}" for p in ring_problems(ring))
        for owner in set(ring.pending.values()):
            if owner not in state.transactions and owner != STRANDED:
                problems.append(f"cache {name}: pending add owned by {owner!r}, which has no open transaction")
    held: set[tuple[str, int]] = set()
    for session, tx in state.transactions.items():
        if (tx.status is TxState.ROLLBACK_ONLY) != (tx.doom is not None):
            problems.append(f"transaction of {session!r}: status {tx.status.value} with doom {tx.doom}")
        held.update(tx.acks)
    for queue_name, queue in state.queues.items():
        if len(set(queue.messages)) != len(queue.messages) or len(set(queue.arrived)) != len(queue.arrived):
            problems.append(f"queue {queue_name!r}: a message twice in {queue.messages} or {queue.arrived}")
        on_hold = {message for held_queue, message in held if held_queue == queue_name}
        if set(queue.arrived) != set(queue.messages) | on_hold:
            problems.append(f"queue {queue_name!r}: arrived {queue.arrived} is not the waiting {queue.messages} "
                            f"and the held {sorted(on_hold)}")
        if state.options.return_order is ReturnOrder.ARRIVAL and \
                list(queue.messages) != [m for m in queue.arrived if m in set(queue.messages)]:
            problems.append(f"queue {queue_name!r}: waiting {queue.messages} out of arrival order {queue.arrived}")
        if any((queue_name, message) in held for message in queue.messages):
            problems.append(f"queue {queue_name!r}: a message held by a transaction is still waiting")
        if any(m >= state.next_message for m in queue.messages):
            problems.append(f"queue {queue_name!r}: a message numbered beyond {state.next_message - 1}")
    if state.global_size < 0 or any(size < 0 for size in state.size_settings.values()):
        problems.append("a negative id-cache-size")
    return problems


def is_valid_state(state: DuplicatesState) -> bool:
    """True when the state keeps every invariant."""
    return not invariant_violations(state)
