"""Destinations on one broker: queues that pick one consumer, topics that copy to all.

Introduction
------------
Every broker keeps its own destinations, made on first use, the way
``RegionBroker`` makes a ``Queue`` or a ``Topic`` when something first
names it. A destination holds its *subscriptions*: the consumers it
dispatches to. To a destination a bridge's demand subscription is a
consumer like any other; only its selector differs (it carries the
bridge's :class:`~.filters.NetworkBridgeFilter`), and "consuming" a
message means forwarding a copy over the bridge. Two kinds:

* :class:`ClientSubscription` - a real client consumer; taking a message
  delivers it;
* ``DemandSubscription`` (:mod:`.bridges`) - a bridge's consumer; taking a
  message forwards it.

A message arriving over a bridge is a fresh send: the receiving broker
dispatches it to its own subscriptions exactly like one a client sent.

Theory of operation, :class:`Queue`. ``Queue.doActualDispatch`` gives a
message to the first consumer in its list that matches, among those of the
highest priority, and moves that consumer to the end of the list; equal
priorities therefore share messages round robin. ActiveMQ keeps the list
sorted by priority (``Queue.orderedCompare``); this queue keeps it in round
robin order only and looks for the best priority as it walks it, which
picks the same consumer. Consumers are never full here (prefetch is not
modelled). A message nothing may take is kept in the broker's
:class:`MessageStore` until demand changes; the store is one journal per
broker (KahaDB keeps one), so waiting messages keep their arrival order
across the broker's queues.

When the network settles (:mod:`.network`), a queue brings its round
robin list up to date with :meth:`Queue.refresh_consumer_list`: consumers
that are still there keep their order, and new ones join at the end in
the order of their keys (rule TOPO-SETTLE; the order of newcomers is the
model's choice, a real broker would take them as they arrive).

:class:`Topic` copies a message to every subscription that matches, in the
order of their keys; a non-durable topic with none drops its copy.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from brokerspec.spec.topologies import Delivered, Dropped, Event, Message, Waiting, is_topic

from .advisories import ConsumerInfo


@dataclass(frozen=True)
class ActiveMQMessage:
    """One copy of a message as a broker holds it: ID, destination and the brokers it has left."""

    message_id: int
    destination: str
    broker_path: tuple[str, ...] = ()

    def copy_for_forwarding(self, local_broker: str) -> ActiveMQMessage:
        """The copy a bridge sends on: the local broker joins the path (``configureMessage``)."""
        return ActiveMQMessage(self.message_id, self.destination, self.broker_path + (local_broker,))

    def to_spec(self) -> Message:
        """This message as the spec writes it."""
        return Message(self.message_id, self.destination, self.broker_path)


class Subscription(ABC):
    """A consumer a destination dispatches to; ``key`` names it on its broker."""

    key: str
    destination_name: str

    @property
    @abstractmethod
    def via(self) -> str | None:
        """The broker it forwards to, or None for a client consumer."""

    @property
    @abstractmethod
    def priority(self) -> int:
        """Its consumer priority."""

    @property
    def is_network_subscription(self) -> bool:
        """Whether it is a bridge's demand subscription."""
        return self.via is not None

    @abstractmethod
    def consumer_info(self) -> ConsumerInfo:
        """Its ConsumerInfo as it stands now (what an advisory about it would carry)."""

    @abstractmethod
    def matches(self, message: ActiveMQMessage, destination: Destination) -> bool:
        """Whether its selector (with any network bridge filter folded in) takes ``message``."""

    @abstractmethod
    def take(self, message: ActiveMQMessage, events: list[Event]) -> None:
        """Consume ``message``: deliver it, or forward it over a bridge."""


class ClientSubscription(Subscription):
    """A client's consumer on ``broker`` for ``destination_name`` (no selector: it takes everything)."""

    def __init__(self, consumer_id: str, broker: str, destination_name: str, priority: int = 0) -> None:
        self.key = consumer_id
        self.broker = broker
        self.destination_name = destination_name
        self._priority = priority

    @property
    def via(self) -> str | None:
        return None

    @property
    def priority(self) -> int:
        return self._priority

    def consumer_info(self) -> ConsumerInfo:
        """A client's info: empty brokerPath, standing for itself."""
        return ConsumerInfo(self.key, self.broker, self.destination_name, (), self._priority,
                            frozenset({self.key}), False)

    def matches(self, message: ActiveMQMessage, destination: Destination) -> bool:
        return True

    def take(self, message: ActiveMQMessage, events: list[Event]) -> None:
        """The message reaches the client."""
        events.append(Delivered(message.message_id, self.key, self.broker, message.broker_path))


class MessageStore:
    """A broker's journal of the queue messages it keeps, in arrival order (sequence numbers)."""

    def __init__(self) -> None:
        self.messages: dict[int, ActiveMQMessage] = {}
        self.next_sequence = 1

    def add_message(self, message: ActiveMQMessage) -> None:
        """Keep ``message`` at the end of the journal."""
        self.messages[self.next_sequence] = message
        self.next_sequence += 1

    def remove_message(self, sequence: int) -> None:
        """The message left the broker."""
        del self.messages[sequence]

    def get_messages(self) -> list[tuple[int, ActiveMQMessage]]:
        """Every kept message with its sequence number, oldest first (a copy: safe to change the store)."""
        return list(self.messages.items())


class Destination(ABC):
    """A queue or topic on one broker, with its subscriptions in the order they were added."""

    is_topic: bool = False

    def __init__(self, broker_name: str, name: str) -> None:
        self.broker_name = broker_name
        self.name = name
        self.subscriptions: dict[str, Subscription] = {}
        self.client_count = 0

    def add_subscription(self, subscription: Subscription) -> None:
        """A consumer joins (``addSubscription``)."""
        self.subscriptions[subscription.key] = subscription
        if not subscription.is_network_subscription:
            self.client_count += 1

    def remove_subscription(self, subscription: Subscription) -> None:
        """A consumer leaves, if it is still the one under its key."""
        if self.subscriptions.get(subscription.key) is subscription:
            del self.subscriptions[subscription.key]
            if not subscription.is_network_subscription:
                self.client_count -= 1

    def has_client_consumers(self) -> bool:
        """Whether some real (non-network) consumer is subscribed."""
        return self.client_count > 0

    def get_network_subscriptions(self) -> list[Subscription]:
        """The demand subscriptions, in the order they were added."""
        return [s for s in self.subscriptions.values() if s.is_network_subscription]

    @abstractmethod
    def dispatch(self, message: ActiveMQMessage, events: list[Event]) -> None:
        """Hand ``message`` to its consumer(s), or keep or drop it."""


class Queue(Destination):
    """A queue: one consumer per message, round robin among the best priority."""

    def __init__(self, broker_name: str, name: str, store: MessageStore) -> None:
        super().__init__(broker_name, name)
        self.store = store
        self.consumers: list[str] = []
        """The round robin list: subscription keys in the order dispatch visits them."""

    def refresh_consumer_list(self) -> None:
        """After the network settles: survivors keep their order, newcomers join at the end by key."""
        kept = [key for key in self.consumers if key in self.subscriptions]
        listed = set(kept)
        self.consumers = kept + sorted(key for key in self.subscriptions if key not in listed)

    def select_consumer(self, message: ActiveMQMessage) -> Subscription | None:
        """The consumer ``doActualDispatch`` would give ``message`` to: best priority, first in the list."""
        chosen: Subscription | None = None
        for key in self.consumers:
            candidate = self.subscriptions[key]
            if (chosen is None or candidate.priority > chosen.priority) and candidate.matches(message, self):
                chosen = candidate
        return chosen

    def hand_over(self, subscription: Subscription, message: ActiveMQMessage, events: list[Event]) -> None:
        """Give ``message`` to ``subscription`` and move it to the end of the list (round robin)."""
        self.consumers.remove(subscription.key)
        self.consumers.append(subscription.key)
        subscription.take(message, events)

    def dispatch(self, message: ActiveMQMessage, events: list[Event]) -> None:
        """``doActualDispatch``; with no consumer to take it, the message waits in the store."""
        chosen = self.select_consumer(message)
        if chosen is None:
            self.store.add_message(message)
            events.append(Waiting(message.message_id, self.broker_name, message.broker_path))
            return
        self.hand_over(chosen, message, events)


class Topic(Destination):
    """A non-durable topic: a copy for every matching subscription, none kept."""

    is_topic = True

    def dispatch(self, message: ActiveMQMessage, events: list[Event]) -> None:
        """Copy to every matching subscription (by key); drop the message when none matches."""
        takers = [sub for _, sub in sorted(self.subscriptions.items()) if sub.matches(message, self)]
        if not takers:
            events.append(Dropped(message.message_id, self.broker_name, message.broker_path))
        for subscription in takers:
            subscription.take(message, events)


def create_destination(broker_name: str, name: str, store: MessageStore) -> Destination:
    """A new queue or topic, by the name's kind."""
    if is_topic(name):
        return Topic(broker_name, name)
    return Queue(broker_name, name, store)
