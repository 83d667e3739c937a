"""The state of a network of brokers: connectors, consumers, demand and waiting messages.

Introduction
------------
A *topology* is a set of brokers and the connectors they declare. Two designs
are modelled side by side:

* **Network connectors** (ActiveMQ Classic 5.17): broker A declares a
  connector to B; that makes the directed *bridge* A=>B, and with
  ``duplex`` also B=>A. A bridge A=>B watches B's consumer advisories and
  creates a *demand subscription* on A for each remote registration it
  accepts; messages dispatched to that subscription are forwarded to B.
  Each connector carries its own settings (:class:`BridgeConfig`).
* **Tree connectors** (AMQ-2875, seed 002, never built): a broker declares
  itself a leaf or a branch and connects to its parent; a broker that
  declares nothing is a root. Demand moves along tree links by role, with
  no time to live.

A broker uses one design: it may not declare or accept both kinds of
connector, so every connected part of a topology is purely one design.

A *registration* is anything a broker dispatches a destination's messages
to: a client consumer (``via`` None) or a demand subscription that forwards
over the link to ``via``. The demand is derived from the topology and the
consumers (see :mod:`.demand`) and kept in the state so that every layer's
view can be compared. Destinations are written as ActiveMQ writes them,
``queue://NAME`` or ``topic://NAME``.

Sources: ActiveMQ Classic 5.17.2, ``DemandForwardingBridgeSupport`` and
``ConduitBridge`` (demand subscriptions and their brokerPath),
``NetworkBridgeConfiguration`` (a connector's settings and defaults);
seed 002 for the tree connector.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from types import MappingProxyType
from dataclasses import dataclass, field
from enum import Enum
from typing import Union

from ..errors import InvalidCommand
from ..frozen import FrozenMap

QUEUE_PREFIX = "queue://"
TOPIC_PREFIX = "topic://"

MAX_HOPS = 32
"""A spec guard, not an ActiveMQ rule: a message whose path has this many brokers is never forwarded
again. Only replay (which ignores messageTTL) can move a message back and forth; this bounds it."""


def is_topic(destination: str) -> bool:
    """Whether ``destination`` is a topic (``topic://NAME``); otherwise it is a queue."""
    return destination.startswith(TOPIC_PREFIX)


def check_destination(value: str, field_name: str = "destination") -> None:
    """Raise :class:`InvalidCommand` unless ``value`` is ``queue://NAME`` or ``topic://NAME`` with a non-empty name."""
    for prefix in (QUEUE_PREFIX, TOPIC_PREFIX):
        if value.startswith(prefix) and len(value) > len(prefix):
            return
    raise InvalidCommand(f"{field_name} {value!r} is not queue://NAME or topic://NAME", field_name)


_NAME = re.compile(r"[A-Za-z0-9_.-]+")


def check_name(value: str, field_name: str) -> None:
    """Raise :class:`InvalidCommand` unless ``value`` is a name of letters, digits, ``_``, ``.`` and ``-``.

    Demand keys are built with ``<`` and ``:`` (see :class:`Registration`), so names may not hold them.
    """
    if not _NAME.fullmatch(value):
        raise InvalidCommand(f"{field_name} {value!r} must be letters, digits, '_', '.' or '-'", field_name)


class Role(Enum):
    """A tree connector's ``nodeType`` (seed 002 rule 1). A broker that declares none is a root."""

    LEAF = "LEAF"
    BRANCH = "BRANCH"


@dataclass(frozen=True)
class BridgeConfig:
    """The settings a network connector gives both bridges it makes (section 1.4 defaults, 5.17.2).

    ``consumer_ttl`` and ``message_ttl`` are -1 for unlimited (AMQ-4607).
    ``include`` lists ``dynamicallyIncludedDestinations`` (empty: all);
    ``exclude`` lists ``excludedDestinations``; both take ActiveMQ
    wildcards (``*`` one name part, ``>`` the rest).
    """

    consumer_ttl: int = 1
    message_ttl: int = 1
    conduit: bool = True
    conduit_network_queues: bool = False
    decrease_priority: bool = False
    suppress_duplicate_queues: bool = False
    suppress_duplicate_topics: bool = True
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("consumer_ttl", "message_ttl"):
            value = getattr(self, name)
            if value < -1 or value == 0:
                raise InvalidCommand(f"{name} {value} must be -1 (unlimited) or at least 1", name)
        for name in ("include", "exclude"):
            for pattern in getattr(self, name):
                check_destination(pattern, name)


@dataclass(frozen=True)
class NetworkConnector:
    """``<networkConnector>`` on ``source`` towards ``target``: bridge source=>target, and target=>source if duplex."""

    source: str
    target: str
    duplex: bool = True
    config: BridgeConfig = field(default_factory=BridgeConfig)


@dataclass(frozen=True)
class TreeConnector:
    """``<treeConnector nodeType=role>`` on ``source`` towards its parent ``target`` (seed 002 rule 2)."""

    source: str
    target: str
    role: Role = Role.LEAF


Connector = Union[NetworkConnector, TreeConnector]


@dataclass(frozen=True)
class Bridge:
    """A directed bridge ``local=>remote``: demand on ``local`` forwards messages to ``remote``.

    ``tree`` is True for a tree link (no TTLs; demand moves by role).
    """

    local: str
    remote: str
    config: BridgeConfig
    tree: bool = False


@dataclass(frozen=True)
class Consumer:
    """A client consumer on ``broker`` for ``destination``, with its JMS priority (0 by default)."""

    id: str
    broker: str
    destination: str
    priority: int = 0


@dataclass(frozen=True)
class Producer:
    """A producer on ``broker`` for ``destination``; producers only shape the spillage metric."""

    id: str
    broker: str
    destination: str


@dataclass(frozen=True)
class Registration:
    """Something ``broker`` dispatches ``destination``'s messages to.

    ``key`` names it uniquely on its broker: a client consumer's ID, or for a
    demand subscription ``LOCAL<REMOTE:WHAT`` where WHAT is the key of the
    remote registration it stands for, or ``*`` for a conduit subscription
    that stands for several. ``via`` is the remote end of the bridge it
    forwards over (None for a client consumer). ``path`` is its brokerPath:
    the brokers its advisory came through, the consumer's own broker first.
    ``origins`` are the client consumers it stands for. ``network`` marks a
    demand subscription (``networkSubscription``); ``conduit`` says whether
    other registrations may merge into it (``ConduitBridge.canConduit``).
    """

    broker: str
    destination: str
    key: str
    via: str | None
    path: tuple[str, ...]
    origins: frozenset[str]
    priority: int = 0
    network: bool = False
    conduit: bool = False


@dataclass(frozen=True)
class Message:
    """A message: its ID, destination and brokerPath (the brokers it left, in order)."""

    id: int
    destination: str
    path: tuple[str, ...] = ()


@dataclass(frozen=True)
class TopologyState:
    """The whole network: brokers, connectors, replay policies, clients, demand and waiting messages.

    ``connectors`` are keyed by (declaring broker, target). ``replay`` holds the
    brokers whose queue policy has ``replayWhenNoConsumers``. ``demand`` is
    every registration, sorted by (broker, destination, key). ``dispatch``
    is each (broker, queue)'s dispatch list of registration keys, in the
    order round robin visits them. ``waiting`` holds the queue messages each
    broker keeps because nothing may take them.
    """

    brokers: tuple[str, ...] = ()
    connectors: FrozenMap[tuple[str, str], Connector] = field(default_factory=FrozenMap)
    replay: frozenset[str] = frozenset()
    consumers: FrozenMap[str, Consumer] = field(default_factory=FrozenMap)
    producers: FrozenMap[str, Producer] = field(default_factory=FrozenMap)
    demand: tuple[Registration, ...] = ()
    dispatch: FrozenMap[tuple[str, str], tuple[str, ...]] = field(default_factory=FrozenMap)
    waiting: FrozenMap[str, tuple[Message, ...]] = field(default_factory=FrozenMap)
    next_message: int = 1


TREE_BRIDGE_CONFIG = BridgeConfig(consumer_ttl=-1, message_ttl=-1, conduit=True, conduit_network_queues=True,
                                  suppress_duplicate_topics=False)
"""The settings of both bridges of a tree link: no TTL, conduit, and a topic's demand not suppressed
(seed 002 rules 3-5). One value, made once: it is the same for every tree link."""


def get_bridges(state: TopologyState) -> tuple[Bridge, ...]:
    """Every directed bridge the connectors make, sorted by (local, remote).

    A network connector A->B makes A=>B, and B=>A when duplex, both with the
    connector's settings (section 1.2: a duplex bridge takes the initiator's
    config). A tree connector makes a link both ways: demand must be able
    to move up and down (seed 002 rules 3-5).
    """
    return _bridges_of(state.connectors)[0]


@functools.lru_cache(maxsize=1024)
def _bridges_of(connectors: FrozenMap[tuple[str, str], Connector]
                ) -> tuple[tuple[Bridge, ...], Mapping[tuple[str, str], Bridge]]:
    """:func:`get_bridges` of the connectors alone, and the same by (local, remote), kept for the last 1,024 sets
    of connectors: every message routed and every settling asks for them, and they change only when a connector
    does."""
    bridges: dict[tuple[str, str], Bridge] = {}
    for connector in connectors.values():
        if isinstance(connector, TreeConnector):
            tree_config = TREE_BRIDGE_CONFIG
            bridges[(connector.source, connector.target)] = Bridge(connector.source, connector.target, tree_config, True)
            bridges[(connector.target, connector.source)] = Bridge(connector.target, connector.source, tree_config, True)
        else:
            bridges[(connector.source, connector.target)] = Bridge(connector.source, connector.target, connector.config)
            if connector.duplex:
                bridges[(connector.target, connector.source)] = Bridge(
                    connector.target, connector.source, connector.config)
    ordered = {key: bridges[key] for key in sorted(bridges)}
    return tuple(ordered.values()), MappingProxyType(ordered)  # kept and handed out: read-only


def get_bridge_map(state: TopologyState) -> Mapping[tuple[str, str], Bridge]:
    """:func:`get_bridges` by (local, remote), kept with them (a read-only view)."""
    return _bridges_of(state.connectors)[1]


def get_parent(state: TopologyState, broker: str) -> str | None:
    """The broker's tree parent, or None when it declares no tree connector."""
    for (source, target), connector in state.connectors.items():
        if source == broker and isinstance(connector, TreeConnector):
            return target
    return None


def get_role(state: TopologyState, broker: str) -> Role | None:
    """The broker's declared tree role; None means root (seed 002 rule 1)."""
    for (source, _), connector in state.connectors.items():
        if source == broker and isinstance(connector, TreeConnector):
            return connector.role
    return None


def get_children(state: TopologyState, broker: str) -> tuple[str, ...]:
    """The brokers whose tree connector points at ``broker``, sorted."""
    return tuple(sorted(source for (source, target), c in state.connectors.items()
                        if target == broker and isinstance(c, TreeConnector)))


def get_roots(state: TopologyState) -> tuple[str, ...]:
    """The tree roots: brokers in some tree link that declare no tree connector (seed 002 rule 1).

    More than one root is a misconfiguration the seed forbids; the spec
    treats it as a forest where each tree works on its own.
    """
    in_tree = {b for key, c in state.connectors.items() if isinstance(c, TreeConnector) for b in key}
    return tuple(sorted(b for b in in_tree if get_parent(state, b) is None))


def get_design(state: TopologyState, broker: str) -> str | None:
    """``"network"`` or ``"tree"`` for a broker with connectors of that kind, None for one with none."""
    for key, connector in state.connectors.items():
        if broker in key:
            return "tree" if isinstance(connector, TreeConnector) else "network"
    return None
