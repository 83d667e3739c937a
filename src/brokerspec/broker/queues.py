"""The model's queues: messages waiting in order, subscriptions served in turn, deliveries held until acknowledged.

Introduction
------------
A :class:`Queue` holds :class:`Entry` values (one message in one queue, with
its arrival sequence and delivery count) in arrival order. Its
:class:`Subscription` list is served round robin: each message goes to the
next subscription after the one that took the last message, skipping any
that is not ready (its connection is slow or gone), so a slow client never
holds messages back from the others (seed ``003``: round robin over a
queue's consumers; Artemis ``QueueImpl.deliver``). A subscription that
acknowledges automatically takes a message for good at delivery; one that
acknowledges by hand holds it until ``ACK``, and a message it gives back
(``NACK``, an unsubscribe, a lost connection, an aborted acknowledgement)
returns with its delivery counted, either to the head of the queue in the
order taken (2.11: ``QueueImpl.addHead``) or to its place in arrival order
(2.32.0 on, ARTEMIS-4517), as the profile says (LB-CLOSE-RETURNS,
DUP-TX-HELD; options ``balancing.close_return_order`` and
``duplicates.return_order``).

Nothing here touches the store or decides routing: :mod:`.model` does.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
import json
from dataclasses import dataclass, field
from typing import Protocol


def queue_key(address: str, name: str) -> str:
    """A queue's identity: its address and name as JSON. The FQQN ``address::name`` is not one: the queues
    (``a:``, ``r``) and (``a``, ``:r``) both read ``a:::r``.

    >>> queue_key("a:", "r") != queue_key("a", ":r")
    True
    """
    return json.dumps([address, name])


@dataclass(eq=False)
class Message:
    """One message as the broker keeps it, shared by every queue it was routed to."""

    number: int
    address: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    durable: bool
    refs: int = 0
    """How many queues hold it (waiting or delivered); its stored body goes when this drops to 0."""


@dataclass(eq=False)
class Entry:
    """One message in one queue."""

    message: Message
    queue: Queue
    seq: int
    deliveries: int = 0


class Sink(Protocol):
    """Where a subscription's deliveries go: its session, which writes them to the client."""

    def ready(self) -> bool:
        """Whether the client can take another message now (its connection is not backed up)."""

    def deliver(self, subscription: Subscription, entry: Entry) -> None:
        """Send one delivery to the client."""


class Subscription:
    """One consumer of a queue: a STOMP subscription."""

    def __init__(self, key: str, queue: Queue, auto_ack: bool, sink: Sink) -> None:
        self.key = key
        self.sink = sink
        self.queue: Queue | None = queue
        self.auto_ack = auto_ack
        self.cumulative = False
        """Whether an acknowledgement covers every message delivered before it (STOMP ``ack:client``)."""
        self.held: dict[int, Entry] = {}
        """Delivered, not acknowledged yet, by message number, in delivery order."""

    def take_up_to(self, number: int) -> list[Entry]:
        """The held entries up to and including ``number`` (a cumulative ``client`` ack), removed; [] if not held."""
        if number not in self.held:
            return []
        taken: list[Entry] = []
        for held in list(self.held):
            taken.append(self.held.pop(held))
            if held == number:
                break
        return taken


@dataclass(eq=False)
class Queue:
    """A queue: ``address::name``, its routing type and what waits in it."""

    fqqn: str
    address: str
    name: str
    routing_type: str
    waiting: deque[Entry] = field(default_factory=deque)
    subscriptions: list[Subscription] = field(default_factory=list)
    cursor: int = 0

    @property
    def key(self) -> str:
        """The queue's identity (:func:`queue_key`)."""
        return queue_key(self.address, self.name)

    def next_ready(self) -> Subscription | None:
        """The next subscription in turn that is ready, moving the turn past it; None if none is ready."""
        subscriptions = self.subscriptions
        count = len(subscriptions)
        for step in range(count):
            index = (self.cursor + step) % count
            subscription = subscriptions[index]
            if subscription.sink.ready():
                self.cursor = (index + 1) % count
                return subscription
        return None

    def give_back(self, entries: list[Entry], arrival: bool) -> None:
        """Put ``entries`` (in the order taken) back: at the head in that order, or each in its place in
        arrival order (``arrival``; ARTEMIS-4517, 2.32.0 on: ``QueueImpl.addSorted``)."""
        if arrival:
            merged = sorted((*self.waiting, *entries), key=lambda e: e.seq)
            self.waiting.clear()
            self.waiting.extend(merged)
            return
        for entry in reversed(entries):
            self.waiting.appendleft(entry)

    def detach(self, subscription: Subscription) -> None:
        """Remove a subscription, keeping the turn on the one that would have come next."""
        index = self.subscriptions.index(subscription)
        del self.subscriptions[index]
        if index < self.cursor:
            self.cursor -= 1
        if self.cursor >= len(self.subscriptions):
            self.cursor = 0

    def entries(self) -> Iterator[Entry]:
        """Every entry the queue holds: waiting, then delivered to each subscription."""
        yield from self.waiting
        for subscription in self.subscriptions:
            yield from subscription.held.values()
