"""The connected parts of a network: which connectors can matter to demand that starts at a broker.

Introduction
------------
Demand moves only over bridges, from a bridge's remote broker to its local
one (``DemandForwardingBridgeSupport`` in ActiveMQ 5.17.2), and a tree
link's rules read only the sending broker's own connectors (seed 002
rules 3-5). So the registrations that consumers cause are made by the
connectors of the parts of the network those consumers are in, whatever
the other parts hold: :func:`.demand.compute_demand` computes and caches
each destination's demand over those alone, and a connector added or
changed elsewhere keeps it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from types import MappingProxyType

from ..frozen import FrozenMap
from .model import Connector, Consumer

Connectors = FrozenMap[tuple[str, str], Connector]

_NO_CONNECTORS: Connectors = FrozenMap()


@functools.lru_cache(maxsize=1024)
def connected_parts(connectors: Connectors) -> Mapping[str, Connectors]:
    """Each linked broker's part of the network: the connectors among the brokers it is linked to, directly or not;
    kept for the last 1,024 sets of connectors.

    >>> from brokerspec.spec.topologies.model import NetworkConnector
    >>> parts = connected_parts(FrozenMap({("a", "b"): NetworkConnector("a", "b"),
    ...                                    ("c", "d"): NetworkConnector("c", "d")}))
    >>> sorted(parts["b"]), parts["a"] is parts["b"], "c" in parts
    ([('a', 'b')], True, True)
    """
    linked: dict[str, list[str]] = {}
    for pair in connectors:
        first, second = (linked.setdefault(broker, [broker]) for broker in pair)
        if first is not second:
            if len(first) < len(second):
                first, second = second, first
            first.extend(second)
            for broker in second:
                linked[broker] = first
    grouped: dict[int, dict[tuple[str, str], Connector]] = {}
    for key, connector in connectors.items():
        grouped.setdefault(id(linked[key[0]]), {})[key] = connector
    frozen: dict[int, Connectors] = {number: FrozenMap(group) for number, group in grouped.items()}
    return MappingProxyType({broker: frozen[id(group)] for broker, group in linked.items()})  # kept: read-only


def reached_by(connectors: Connectors, parts: Mapping[str, Connectors], consumers: list[Consumer]) -> Connectors:
    """The connectors of the parts the ``consumers`` are in, in the order of ``connectors``."""
    found = {id(part): part for consumer in consumers if (part := parts.get(consumer.broker)) is not None}
    if len(found) <= 1:
        return next(iter(found.values()), _NO_CONNECTORS)
    return FrozenMap((key, connector) for key, connector in connectors.items()
                     if any(key in part for part in found.values()))
