"""Connectors: what a broker's configuration declares, and the bridges each one starts.

Introduction
------------
A broker's ``activemq.xml`` lists its connectors. Each one joins the
declaring broker (``source``) to one other broker (``target``) and starts
the directed bridges of :mod:`.bridges`:

* :class:`NetworkConnector` - ``<networkConnector uri="static:(tcp://B)">``
  makes the bridge source=>target; with ``duplex="true"`` the same
  connection also carries target=>source, configured from the initiator's
  ``BrokerInfo.networkProperties`` (``TransportConnection.processBrokerInfo``,
  ActiveMQ 5.17.2). Both bridges therefore share one :class:`BridgeConfig`.
  Changing the TTLs restarts both bridges with the new settings.
* :class:`TreeConnector` - seed 002's ``<treeConnector nodeType=...>``: the
  source declares itself a leaf or a branch under its parent, the target.
  Demand must move both up and down a tree link, so it starts a
  :class:`~.bridges.TreeBridge` each way (rules 2-5).

Each connector is registered on both its brokers under (source, target)
(``Broker.connectors``), which is how a broker answers "am I linked to X"
and "which design do I use" without looking at the rest of the network.
Two brokers share one connector, or two non-duplex network connectors in
opposite directions (a chain of plain connectors, one each way): any more would make a
second bridge in the same direction (:func:`is_clashing`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, cast

from brokerspec.spec.topologies import BridgeConfig, Role
from brokerspec.spec.topologies import NetworkConnector as NetworkConnectorValue
from brokerspec.spec.topologies import TreeConnector as TreeConnectorValue

from .bridges import DemandForwardingBridge, TreeBridge, create_network_bridge

if TYPE_CHECKING:
    from .broker import Broker

NETWORK_DESIGN = "network"
TREE_DESIGN = "tree"


class ConnectorBase:
    """What every connector does: register on both brokers under (source, target), start and stop its bridges."""

    design: str

    def __init__(self, source: Broker, target: Broker) -> None:
        self.source = source
        self.target = target
        self.bridges: list[DemandForwardingBridge] = []

    @property
    def key(self) -> tuple[str, str]:
        """(declaring broker, target)."""
        return (self.source.name, self.target.name)

    def _start_bridges(self, bridges: list[DemandForwardingBridge]) -> None:
        """Register on both brokers, then start ``bridges``."""
        this = cast("Connector", self)  # every connector is one of the two subclasses
        self.source.connectors[self.key] = this
        self.target.connectors[self.key] = this
        self.bridges = bridges
        for bridge in bridges:
            bridge.start()

    def _stop_bridges(self) -> None:
        """Stop the bridges (they withdraw their demand), then leave both brokers."""
        for bridge in self.bridges:
            bridge.stop()
        self.bridges = []
        del self.source.connectors[self.key]
        del self.target.connectors[self.key]


class NetworkConnector(ConnectorBase):
    """``<networkConnector>`` on ``source`` towards ``target``."""

    design = NETWORK_DESIGN

    def __init__(self, source: Broker, target: Broker, duplex: bool, configuration: BridgeConfig) -> None:
        super().__init__(source, target)
        self.duplex = duplex
        self.configuration = configuration

    def start(self) -> None:
        """Register on both brokers and start the bridge(s)."""
        bridges = [create_network_bridge(self.source, self.target, self.configuration)]
        if self.duplex:
            bridges.append(create_network_bridge(self.target, self.source, self.configuration))
        self._start_bridges(bridges)

    def stop(self) -> None:
        """Stop the bridges and leave both brokers."""
        self._stop_bridges()

    def set_ttl(self, consumer_ttl: int, message_ttl: int) -> None:
        """New consumerTTL and messageTTL: the bridges restart with them."""
        self.stop()
        self.configuration = replace(self.configuration, consumer_ttl=consumer_ttl, message_ttl=message_ttl)
        self.start()

    def to_spec(self) -> NetworkConnectorValue:
        """The connector as the spec writes it."""
        return NetworkConnectorValue(self.source.name, self.target.name, self.duplex, self.configuration)


class TreeConnector(ConnectorBase):
    """``<treeConnector nodeType=role>`` on ``source`` towards its parent ``target``."""

    design = TREE_DESIGN

    def __init__(self, source: Broker, target: Broker, role: Role) -> None:
        super().__init__(source, target)
        self.role = role

    def start(self) -> None:
        """Register on both brokers (the source gains a parent, the target a child) and start both bridges."""
        self.source.tree_connector = self
        self.target.children.add(self.source.name)
        self._start_bridges([TreeBridge(self.source, self.target), TreeBridge(self.target, self.source)])

    def stop(self) -> None:
        """Stop both bridges and leave both brokers."""
        self._stop_bridges()
        self.source.tree_connector = None
        self.target.children.discard(self.source.name)

    def to_spec(self) -> TreeConnectorValue:
        """The connector as the spec writes it."""
        return TreeConnectorValue(self.source.name, self.target.name, self.role)


Connector = NetworkConnector | TreeConnector


def is_clashing(source: Broker, target: Broker, duplex: bool) -> bool:
    """Whether a new network connector source->target would make a second bridge in some direction.

    Only a non-duplex connector may join one already declared the other way,
    and only when that one is a non-duplex network connector too.
    """
    if (source.name, target.name) in source.connectors:
        return True
    reverse = source.connectors.get((target.name, source.name))
    return reverse is not None and (duplex or not isinstance(reverse, NetworkConnector) or reverse.duplex)
