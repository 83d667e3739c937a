"""Shared topology scenarios: the notes' real-broker topologies and small trees, as spec commands."""

from __future__ import annotations

from brokerspec.spec.topologies import (
    AddBroker,
    BridgeConfig,
    Connect,
    Registration,
    Role,
    TopologyCommand,
    TopologyState,
    TreeConnect,
)

QUEUE = "queue://TEST.Q"
TOPIC = "topic://TEST.T"


def brokers(*names: str) -> list[TopologyCommand]:
    """``add_broker`` for each name."""
    return [AddBroker(name) for name in names]


def four_tree(consumer_ttl: int = 1, message_ttl: int | None = None, *,
              decrease_priority: bool = False) -> list[TopologyCommand]:
    """The notes' 4-broker tree: b1 root, b2 -> b1, b3 and b4 -> b2, duplex connectors."""
    config = BridgeConfig(consumer_ttl=consumer_ttl, message_ttl=consumer_ttl if message_ttl is None else message_ttl,
                          decrease_priority=decrease_priority)
    return brokers("b1", "b2", "b3", "b4") + [Connect("b2", "b1", True, config), Connect("b3", "b2", True, config),
                                              Connect("b4", "b2", True, config)]


def eight_tree(ttl: int = 2) -> list[TopologyCommand]:
    """The notes' 8-broker tree: b1 root; b2, b3 -> b1; b4, b5, b6 -> b2; b7, b8 -> b3."""
    config = BridgeConfig(consumer_ttl=ttl, message_ttl=ttl)
    edges = [("b2", "b1"), ("b3", "b1"), ("b4", "b2"), ("b5", "b2"), ("b6", "b2"), ("b7", "b3"), ("b8", "b3")]
    return brokers(*(f"b{i}" for i in range(1, 9))) + [Connect(c, p, True, config) for c, p in edges]


def small_tree() -> list[TopologyCommand]:
    """A tree-connector hierarchy: hq root; branches r1, r2; leaves s1, s2 under r1 and s3 under r2."""
    return brokers("hq", "r1", "r2", "s1", "s2", "s3") + [
        TreeConnect("r1", "hq", Role.BRANCH), TreeConnect("r2", "hq", Role.BRANCH),
        TreeConnect("s1", "r1", Role.LEAF), TreeConnect("s2", "r1", Role.LEAF), TreeConnect("s3", "r2", Role.LEAF)]


def demand_paths(state: TopologyState, destination: str = QUEUE) -> dict[str, list[tuple[str, ...]]]:
    """Each broker's demand subscriptions for ``destination`` as their brokerPaths (client consumers left out)."""
    found: dict[str, list[tuple[str, ...]]] = {}
    for reg in state.demand:
        if reg.network and reg.destination == destination:
            found.setdefault(reg.broker, []).append(reg.path)
    return found


def network_subscriptions(state: TopologyState) -> list[Registration]:
    """The demand subscriptions of a state (client consumers left out)."""
    return [reg for reg in state.demand if reg.network]
