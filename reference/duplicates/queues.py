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
* a received message leaves the queue at once, and the
  :class:`AcknowledgeOperation` puts it back if the transaction rolls back
  (Artemis's ``RefsOperation``, which cancels the references).

Two simplifications follow the spec. A queue keeps its messages in number
order, the order a restart reloads them in; Artemis delivers in commit order
and puts cancelled references back at the head. And both operations find
their queues *by name* when they run, so a queue deleted in the meantime is
skipped; Artemis's references point at the queue object itself.

Messages are treated as durable and their journal records are not modelled
(only duplicate-ID records are, :mod:`.journal`): a restart keeps the queues
as they are, apart from the acknowledgements of transactions it loses,
which never happened.
"""

from __future__ import annotations

from bisect import insort

from .transaction import Transaction, TransactionOperation


class Queue:
    """A queue: its name, its address, and its waiting messages in number order."""

    def __init__(self, name: str, address: str) -> None:
        self.name = name
        self.address = address
        self.messages: list[int] = []

    def add(self, message: int) -> None:
        """A message arrives (or comes back): it takes its place by number."""
        insort(self.messages, message)

    def take_first(self) -> int | None:
        """Remove and return the lowest-numbered waiting message, if any."""
        return self.messages.pop(0) if self.messages else None


class Bindings:
    """Every queue in the broker, by name and by address."""

    def __init__(self) -> None:
        self.queues: dict[str, Queue] = {}
        self.by_address: dict[str, dict[str, Queue]] = {}

    def get_queue(self, name: str) -> Queue | None:
        """The queue called ``name``, if any."""
        return self.queues.get(name)

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

    def after_commit(self, tx: Transaction) -> None:
        self.bindings.deliver(self.message, self.queue_names)


class AcknowledgeOperation(TransactionOperation):
    """A message received inside a transaction: final at the commit, back in its queue at a rollback."""

    def __init__(self, bindings: Bindings, queue_name: str, message: int) -> None:
        self.bindings = bindings
        self.queue_name = queue_name
        self.message = message

    def after_rollback(self, tx: Transaction) -> None:
        self.cancel()

    def cancel(self) -> None:
        """Put the message back into its queue, if the queue still exists."""
        self.bindings.deliver(self.message, (self.queue_name,))
