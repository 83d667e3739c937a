"""Consumer advisories: how one broker tells its bridges about the consumers it has.

Introduction
------------
In ActiveMQ Classic a broker announces every consumer it adds on an
advisory topic, ``ActiveMQ.Advisory.Consumer.Queue.<name>`` or
``...Topic.<name>``; the message carries the consumer's ``ConsumerInfo``.
A network bridge A=>B subscribes on B to those topics
(``DemandForwardingBridgeSupport.startRemoteBridge``), so B's
:class:`AdvisoryBroker` delivers each announcement to every bridge that
watches it. When the bridge's advisory consumer subscribes, B replays an
advisory for every consumer it already has (``AdvisoryBroker.addConsumer``),
which is why the order in which brokers start does not matter.

:class:`ConsumerInfo` is the part of the record the bridges read:

* ``consumer_id`` names the consumer on its broker (for a demand
  subscription it is the subscription's key);
* ``broker_path`` lists the brokers its advisory came through, the home
  broker of the real consumer first; it is empty for a client consumer and
  its last element is the broker a demand subscription forwards to;
* ``network_consumer_ids`` are the client consumers it stands for (a
  client consumer stands for itself);
* ``network_subscription`` marks a bridge's demand subscription.

Theory of operation. Advisories travel over an :class:`AdvisoryWire`, a
FIFO of (bridge, info) pairs. The wire is drained a *generation* at a
time: every advisory already on it is handled before any advisory that
handling causes. A client consumer is generation 0; the demand
subscriptions its advisories create are generation 1, and so on, so the
wire visits the network breadth first and the first advisory to reach a
bridge is one with the shortest path. This is the order real bridges
settle into when they start together and replay from scratch; where a
running network would depend on timing, the model fixes this order
(rule TOPO-NC-ORDER). Within a generation the bridges watching a broker
are served in the order of their local broker's name.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar


@dataclass(frozen=True)
class ConsumerInfo:
    """The consumer an advisory announces, as the watching bridges see it."""

    consumer_id: str
    broker: str
    destination: str
    broker_path: tuple[str, ...]
    priority: int
    network_consumer_ids: frozenset[str]
    network_subscription: bool

    @property
    def last_hop(self) -> str | None:
        """The broker this consumer's advisory last came through (where it forwards to), None for a client."""
        return self.broker_path[-1] if self.broker_path else None


class AdvisoryListener(Protocol):
    """A bridge's advisory consumer on a remote broker: it is known by its local broker's name."""

    @property
    def local_name(self) -> str: ...


Listener = TypeVar("Listener", bound=AdvisoryListener)


class AdvisoryWire(Generic[Listener]):
    """Advisories in transit, handed out one generation at a time (FIFO within a generation)."""

    def __init__(self) -> None:
        self.in_flight: deque[tuple[Listener, ConsumerInfo]] = deque()

    def post(self, listener: Listener, info: ConsumerInfo) -> None:
        """Put one advisory for ``listener`` at the tail."""
        self.in_flight.append((listener, info))

    def generations(self) -> Iterator[list[tuple[Listener, ConsumerInfo]]]:
        """Each generation in turn: everything posted so far; what handling it posts forms the next one."""
        while self.in_flight:
            generation = list(self.in_flight)
            self.in_flight.clear()
            yield generation


class AdvisoryBroker(Generic[Listener]):
    """One broker's consumer advisories: the bridges that watch them, and the firing of one advisory.

    ``watchers`` are keyed by the watching bridge's local broker; they are
    served in that name's order.
    """

    def __init__(self, broker_name: str) -> None:
        self.broker_name = broker_name
        self.watchers: dict[str, Listener] = {}
        self._order: tuple[Listener, ...] | None = ()

    def add_advisory_consumer(self, listener: Listener) -> None:
        """A bridge subscribes to this broker's consumer advisories."""
        self.watchers[listener.local_name] = listener
        self._order = None

    def remove_advisory_consumer(self, listener: Listener) -> None:
        """A bridge stops watching."""
        if self.watchers.get(listener.local_name) is listener:
            del self.watchers[listener.local_name]
            self._order = None

    def get_watchers(self) -> tuple[Listener, ...]:
        """The watching bridges, by their local broker's name."""
        if self._order is None:
            self._order = tuple(self.watchers[name] for name in sorted(self.watchers))
        return self._order

    def fire_consumer_advisory(self, info: ConsumerInfo, wire: AdvisoryWire[Listener]) -> None:
        """Announce ``info`` to every watching bridge (``AdvisoryBroker.addConsumer``)."""
        for listener in self.get_watchers():
            wire.post(listener, info)
