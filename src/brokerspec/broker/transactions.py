"""The model's transactions: work that waits for a COMMIT, and what an ABORT gives back.

Introduction
------------
A STOMP transaction (``BEGIN``, ``COMMIT``, ``ABORT``) is a :class:`Transaction`
the model knows until it ends. Rules it keeps, with the spec's IDs:

* a transacted send is routed at the send and lands at the commit, in send
  order; a queue deleted meanwhile gets nothing (LB-TX-SEND, LB-TX-COMMIT);
* its duplicate ID waits for the commit and enters the cache then, in send
  order (DUP-TX-HELD); a duplicate makes the transaction rollback-only
  (DUP-TX-DUPLICATE) and its commit rolls back instead
  (DUP-COMMIT-ROLLBACK-ONLY);
* an acknowledgement waits for the commit; an abort gives the acknowledged
  messages back, at the head in the order taken or each in its place in
  arrival order, as the profile's ``duplicates.return_order`` says (LB-TX-ACK,
  LB-TX-ROLLBACK; ``RefsOperation.afterRollback``, ARTEMIS-4517); a message
  whose queue was deleted, even if made again since, is gone with it.

Everything a commit lands is written in one store transaction, committed
before :meth:`TransactionWork.commit` returns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .dedup import IdCaches
from .queues import Entry, Message, Queue, Subscription
from .record import Recorder
from .store import BrokerStore


@dataclass
class PendingSend:
    """A transacted send, routed, waiting for the commit."""

    message: Message
    targets: tuple[str, ...]
    key: bytes | None


@dataclass(eq=False)
class Transaction:
    """A STOMP transaction: its sends and acknowledgements, and why it must roll back, if it must."""

    name: str
    sends: list[PendingSend] = field(default_factory=list)
    acks: list[tuple[Subscription, Entry]] = field(default_factory=list)
    doom: str | None = None


class ModelParts:
    """What the model's mixins (:class:`TransactionWork`, :class:`~.admin.NameAdmin`) use of the state
    :class:`~.model.Model` holds, declared once for the type checker."""

    recorder: Recorder
    store: BrokerStore
    ids: IdCaches
    queues: dict[str, Queue]
    dirty: set[Queue]
    open_transactions: set[Transaction]

    if TYPE_CHECKING:
        def _release(self, entry: Entry) -> None: ...


class TransactionWork(ModelParts):
    """Transactions of a :class:`~.model.Model` (a mixin: the model holds the state)."""

    _rollback_in_arrival_order: bool

    if TYPE_CHECKING:
        def _land(self, message: Message, targets: tuple[str, ...]) -> None: ...

    def begin(self, name: str) -> Transaction:
        """A new transaction, known to the model until it commits or rolls back."""
        tx = Transaction(name)
        self.open_transactions.add(tx)
        return tx

    def commit(self, tx: Transaction) -> str | None:
        """Commit: sends land in order and their IDs enter the caches; acknowledgements take effect.

        A rollback-only transaction rolls back instead and the reason is
        returned (DUP-COMMIT-ROLLBACK-ONLY).
        """
        if tx.doom is not None:
            self.abort(tx)
            self.recorder.note("DUP-COMMIT-ROLLBACK-ONLY", f"transaction {tx.name}: commit failed, rolled back")
            return tx.doom
        for pending in tx.sends:
            self._land(pending.message, pending.targets)
            if pending.key is not None:
                self.ids.record(pending.message.address, pending.key)
        for _, entry in tx.acks:
            self._release(entry)
        self.open_transactions.discard(tx)
        self.store.commit()
        self.recorder.note("DUP-TX-HELD", f"transaction {tx.name}: {len(tx.sends)} sends landed, "
                           f"{sum(p.key is not None for p in tx.sends)} IDs recorded")
        return None

    def abort(self, tx: Transaction) -> None:
        """Roll back: the sends are forgotten, acknowledged messages go back to their queues (LB-TX-ROLLBACK)."""
        taken: dict[Queue, list[Entry]] = {}
        for _, entry in tx.acks:
            if self.queues.get(entry.queue.key) is entry.queue:  # not a queue deleted (and made again) since
                taken.setdefault(entry.queue, []).append(entry)
        for queue, entries in taken.items():
            queue.give_back(entries, self._rollback_in_arrival_order)
            self.dirty.add(queue)
        tx.sends.clear()
        tx.acks.clear()
        self.open_transactions.discard(tx)
