"""Queues, their bindings to addresses, and the transactional work done on them.

Introduction
------------
Duplicate detection needs only a little of the broker's queue model, enough
to see where a message went and which queue was an address's last:

* a :class:`Queue` has a name, the address it is bound to and the numbers
  of the messages waiting in it;
* :class:`Bindings` finds queues by name (names are unique in the broker)
  and by address (Artemis's ``AddressManager`` and per-address
  ``Bindings``); routing a message to an address means adding it to every
  queue bound there.

Inside a transaction nothing happens to a queue until the end:

* a sent message waits in a :class:`DeliverOperation` and reaches its
  queues when the commit is stored (Artemis's ``AddOperation`` over the
  message references);
* a received message leaves the queue at once, and the transaction's one
  :class:`AcknowledgeOperation` (Artemis's ``RefsOperation``) keeps the
  references it took, to acknowledge them at the commit or cancel them at
  a rollback.

A queue delivers in arrival order: each reference carries the queue's own
sequence number (``MessageReference.getSequence``), given when it arrives. A
cancelled reference goes back to the head in the order taken (2.11:
``RefsOperation.afterRollback`` lists each queue's references with
``addFirst`` and ``QueueImpl.addHead`` adds each at the head) or to its place
by sequence (2.32.0 on, ARTEMIS-4517, ``addSorted``), as the profile's
``return_order`` says. A taken reference points at its queue object, as in
Artemis: when the queue is deleted the reference goes with it, and a queue
made again under the same name never sees it. A delivery waiting for a
commit finds its queues *by name* when it runs, so a queue deleted in the
meantime is skipped.

Messages are treated as durable and their journal records are not modelled
(only duplicate-ID records are, :mod:`.journal`): a restart reloads each
queue in sequence order, the order its records stand in the journal, with
the references of the transactions it loses, which never acknowledged them.
A prepared transaction is the exception: its prepare writes a record for
each message it will route and each message it took, naming the queue by
its ID (``QueueBindingInfo.getId``), and a start-up takes the latter out of
their queues again (``QueueImpl.removeReferenceWithID`` and
``reacknowledge`` in ``loadPreparedTransactions``), so they stay held
(DUP-XA-PREPARED-RESTART).
"""

from __future__ import annotations

from bisect import insort

from brokerspec.spec import ReturnOrder

from .journal import AcknowledgeRecord, MessageRecord
from .transaction import Transaction, TransactionOperation

Reference = tuple[int, int]
"""A message on a queue: (the queue's sequence number for it, the message number)."""


class Queue:
    """A queue: its name, its address, its ID, its waiting references (head first) and those being delivered.

    The ID is the queue binding's record ID: a queue made again under the
    same name is another queue.
    """

    def __init__(self, name: str, address: str, queue_id: int = 0) -> None:
        self.name = name
        self.address = address
        self.queue_id = queue_id
        self.sequence = 0
        self.messages: list[Reference] = []
        self.delivering: dict[int, Reference] = {}

    def add(self, message: int) -> None:
        """A message arrives: the next sequence number, at the tail."""
        self.sequence += 1
        self.messages.append((self.sequence, message))

    def take_first(self) -> Reference | None:
        """Remove and return the first waiting reference, if any; it is being delivered until acknowledged."""
        if not self.messages:
            return None
        reference = self.messages.pop(0)
        self.delivering[reference[1]] = reference
        return reference

    def remove_reference_with_id(self, message: int) -> Reference | None:
        """Take the waiting reference of ``message`` out again, as delivered (a prepared transaction holds it)."""
        for index, reference in enumerate(self.messages):
            if reference[1] == message:
                del self.messages[index]
                self.delivering[message] = reference
                return reference
        return None

    def acknowledge(self, message: int) -> None:
        """The reference of ``message`` is done with (a non-transactional receive, or a commit)."""
        self.delivering.pop(message, None)

    def cancel(self, messages: list[int], order: ReturnOrder) -> None:
        """References being delivered wait again (``messages`` in the order taken); others are skipped."""
        references = [self.delivering.pop(m) for m in messages if m in self.delivering]
        if order is ReturnOrder.HEAD:
            to_cancel: list[Reference] = []
            for reference in references:
                to_cancel.insert(0, reference)  # addFirst
            for reference in to_cancel:
                self.messages.insert(0, reference)  # addHead, one by one
        else:
            for reference in references:
                insort(self.messages, reference)

    def reload(self) -> None:
        """A restart: every reference not acknowledged waits again, in sequence order."""
        self.messages = sorted([*self.messages, *self.delivering.values()])
        self.delivering = {}

    def waiting(self) -> tuple[int, ...]:
        """The waiting message numbers, head first."""
        return tuple(message for _, message in self.messages)

    def arrived(self) -> tuple[int, ...]:
        """Every message not acknowledged, in arrival order."""
        return tuple(message for _, message in sorted([*self.messages, *self.delivering.values()]))


class Bindings:
    """Every queue in the broker, by name and by address."""

    def __init__(self) -> None:
        self.queues: dict[str, Queue] = {}
        self.by_address: dict[str, dict[str, Queue]] = {}

    def get_queue(self, name: str) -> Queue | None:
        """The queue called ``name``, if any."""
        return self.queues.get(name)

    def get_queue_by_id(self, queue_id: int) -> Queue | None:
        """The bound queue whose ID is ``queue_id``, if it still exists."""
        return next((queue for queue in self.queues.values() if queue.queue_id == queue_id), None)

    def add_binding(self, queue: Queue) -> bool:
        """Bind ``queue`` to its address; False when the name is taken."""
        if queue.name in self.queues:
            return False
        self.queues[queue.name] = queue
        self.by_address.setdefault(queue.address, {})[queue.name] = queue
        return True

    def remove_binding(self, name: str) -> Queue | None:
        """Unbind and return the queue called ``name`` (None when there is none)."""
        queue = self.queues.pop(name, None)
        if queue is None:
            return None
        on_address = self.by_address[queue.address]
        del on_address[name]
        if not on_address:
            del self.by_address[queue.address]
        return queue

    def has_bindings(self, address: str) -> bool:
        """Whether any queue is still bound to ``address``."""
        return address in self.by_address

    def get_bindings_for_routing_address(self, address: str) -> list[Queue]:
        """The queues a message sent to ``address`` goes to, by name."""
        found = self.by_address.get(address, {})
        return [found[name] for name in sorted(found)]

    def deliver(self, message: int, queue_names: tuple[str, ...]) -> None:
        """Add ``message`` to each of the named queues that still exists."""
        for name in queue_names:
            queue = self.queues.get(name)
            if queue is not None:
                queue.add(message)


class DeliverOperation(TransactionOperation):
    """A message sent inside a transaction: it reaches its queues once the commit is stored."""

    def __init__(self, bindings: Bindings, message: int, queue_names: tuple[str, ...]) -> None:
        self.bindings = bindings
        self.message = message
        self.queue_names = queue_names

    def before_prepare(self, tx: Transaction) -> None:
        tx.store_prepared(MessageRecord(tx.storage.generate_id(), self.message, self.queue_names))

    def after_commit(self, tx: Transaction) -> None:
        self.bindings.deliver(self.message, self.queue_names)


class AcknowledgeOperation(TransactionOperation):
    """What a transaction received (Artemis's ``RefsOperation``): acknowledged at the commit, cancelled at a rollback."""

    def __init__(self, bindings: Bindings, order: ReturnOrder) -> None:
        self.bindings = bindings
        self.order = order
        self.taken: list[tuple[Queue, int]] = []
        """(queue, message) in the order taken: the queue object itself, as a reference points at it."""

    def add_ack(self, queue: Queue, message: int) -> None:
        """One more reference taken."""
        self.taken.append((queue, message))

    def get_live_acks(self) -> list[tuple[str, int]]:
        """(queue name, message) of the references whose queue is still bound (a deleted queue took its own)."""
        return [(queue.name, message) for queue, message in self.taken
                if self.bindings.get_queue(queue.name) is queue]

    def before_prepare(self, tx: Transaction) -> None:
        for queue, message in self.taken:
            if self.bindings.get_queue(queue.name) is queue:
                tx.store_prepared(AcknowledgeRecord(tx.storage.generate_id(), queue.queue_id, message))

    def after_commit(self, tx: Transaction) -> None:
        for queue, message in self.taken:
            queue.acknowledge(message)

    def after_rollback(self, tx: Transaction) -> None:
        by_queue: dict[int, tuple[Queue, list[int]]] = {}
        for queue, message in self.taken:
            by_queue.setdefault(id(queue), (queue, []))[1].append(message)
        for queue, messages in by_queue.values():
            queue.cancel(messages, self.order)
