"""One broker of the network: its destinations, its advisories, its bridges and its place in a tree.

Introduction
------------
A :class:`Broker` is what one ActiveMQ ``BrokerService`` contributes to a
network, reduced to what demand and routing need:

* ``destinations`` - its queues and topics by name, made on first use
  (``RegionBroker``), with the :class:`~.destinations.MessageStore` its
  queues keep waiting messages in;
* ``replay_when_no_consumers`` - its queue policy: whether demand
  subscriptions are built with the
  :class:`~.filters.ConditionalNetworkBridgeFilter` (AMQ-2324);
* ``advisory_broker`` - the bridges watching its consumer advisories
  (:mod:`.advisories`);
* ``bridges`` - the bridges whose local end it is, by remote broker: its
  ways out;
* ``connectors`` - every connector it takes part in, declared or accepted,
  by (declaring broker, target): two brokers share one connector, or two
  non-duplex network connectors in opposite directions;
* ``tree_connector`` and ``children`` - its place in a tree (seed 002): the
  tree connector it declared, if any, and the brokers whose tree connector
  points at it. A broker in a tree that declares none is a root (rule 1).

Every index here is per broker, so a question about one broker never
walks the rest of the network.

Theory of operation. :meth:`Broker.receive` is a message arriving, from a
client or over a bridge; the destination dispatches it (a queue picks one
consumer or keeps it, a topic copies or drops it), and a consumer that is a
demand subscription forwards it to the next broker, which receives it the
same way. :meth:`Broker.dispatch_waiting` offers each kept message, oldest
first, to its queue again; one that may go now leaves the store.
"""

from __future__ import annotations

from brokerspec.spec.topologies import Event, Role

from .advisories import AdvisoryBroker
from .bridges import DemandForwardingBridge
from .connectors import Connector, TreeConnector
from .destinations import ActiveMQMessage, Destination, MessageStore, Queue, create_destination


class Broker:
    """One broker of the network, with per-broker indexes only."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.destinations: dict[str, Destination] = {}
        self.message_store = MessageStore()
        self.replay_when_no_consumers = False
        self.advisory_broker: AdvisoryBroker[DemandForwardingBridge] = AdvisoryBroker(name)
        self.bridges: dict[str, DemandForwardingBridge] = {}
        self.connectors: dict[tuple[str, str], Connector] = {}
        self.tree_connector: TreeConnector | None = None
        self.children: set[str] = set()

    def __repr__(self) -> str:
        return f"Broker({self.name!r})"

    # -- configuration -----------------------------------------------------------------

    def get_design(self) -> str | None:
        """``network`` or ``tree`` when it takes part in a connector of that kind (it never mixes), else None."""
        for connector in self.connectors.values():
            return connector.design
        return None

    def is_linked_to(self, other: str) -> bool:
        """Whether some connector, declared by either side, joins it to ``other``."""
        return (self.name, other) in self.connectors or (other, self.name) in self.connectors

    def get_declared_connector(self, target: str) -> Connector | None:
        """The connector this broker declared towards ``target``, if any."""
        return self.connectors.get((self.name, target))

    def get_parent(self) -> str | None:
        """The tree parent, or None when it declares no tree connector."""
        return None if self.tree_connector is None else self.tree_connector.target.name

    def get_role(self) -> Role | None:
        """The declared tree role; None means root."""
        return None if self.tree_connector is None else self.tree_connector.role

    # -- destinations ------------------------------------------------------------------

    def get_destination(self, name: str) -> Destination:
        """The destination named ``name``, made on first use."""
        destination = self.destinations.get(name)
        if destination is None:
            destination = create_destination(self.name, name, self.message_store)
            self.destinations[name] = destination
        return destination

    def find_destination(self, name: str) -> Destination | None:
        """The destination named ``name`` if it exists."""
        return self.destinations.get(name)

    # -- messages ----------------------------------------------------------------------

    def receive(self, message: ActiveMQMessage, events: list[Event]) -> None:
        """A message arrives (a client's send or a bridge's copy): dispatch it."""
        self.get_destination(message.destination).dispatch(message, events)

    def has_waiting_messages(self) -> bool:
        """Whether the store keeps any message."""
        return bool(self.message_store.messages)

    def dispatch_waiting(self, events: list[Event]) -> None:
        """Offer every kept message to its queue again, oldest first; those that may go now, go.

        A message that cannot go now cannot go until demand changes again,
        and one kept anew while this runs was kept because it could not go;
        so one pass over the messages kept at the start is enough.
        """
        for sequence, message in self.message_store.get_messages():
            queue = self.destinations[message.destination]
            if not isinstance(queue, Queue):
                continue
            chosen = queue.select_consumer(message)
            if chosen is None:
                continue
            self.message_store.remove_message(sequence)
            queue.hand_over(chosen, message, events)
