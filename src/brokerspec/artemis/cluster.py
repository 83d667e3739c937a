"""A cluster of real Artemis nodes for the load-balancing domain: start, reconfigure, look at.

Introduction
------------
:class:`ArtemisCluster` runs ``size`` nodes (three by default, the most any
load-balancing case names) of one release on 127.0.0.1, each a full
instance (:class:`~.broker.ArtemisBroker`) whose ``broker.xml`` has one
cluster connection over static connectors to every other node
(``max-hops`` 1: every node is a direct neighbour). All nodes share the
client driver of the single-node SUT; their connections are named
``cl-n1`` ... so they never clash with its own node.

The cluster connection carries the load-balancing type. Artemis has one
type per cluster connection (``message-load-balancing``, not an address
setting), and a cluster connection is not reloaded while the broker runs,
so :meth:`set_lb_types` restarts every node (each node may have its own type); the address settings
(``redistribution-delay``) are re-read without a restart.

:meth:`snapshot` asks each node's probe for its ``state``: every binding of
every address in the node's post office, local queues with their consumers
and the tags of their waiting messages, remote bindings with the consumer
count the node was told of and the messages still in their store-and-forward
queue. The balancing adapter waits on these snapshots for the cluster to
settle and reads each message's place from them.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .broker import ArtemisBroker, BrokerFailed, find_free_port
from .config import BrokerConfig, ClusterLink
from .driver import Driver
from .node import Node, ProbeLog
from .outcomes import UnexpectedRefusal

CLUSTER_SIZE = 3
"""Nodes n1..n3: the most nodes a load-balancing case uses."""

NO_AUTO_CREATION = (("#", {"auto_create_queues": "false", "auto_create_addresses": "false"}),)
"""Address settings of every node: no queue or address appears on its own. The load-balancing spec has no
auto-creation (the address-resolution domain has it), and Artemis's default would create a queue on a node
that a core ANYCAST send reaches without one (``ServerSessionImpl`` auto-creation on send)."""

SETTLE_TIMEOUT = 15.0
"""Seconds a step may take to settle before the adapter gives up on it."""

QUIET = 0.3
"""Seconds the snapshots must stay the same: a redistributor a notification adds runs on the queue's executor
a moment after the consumer counts that the adapter waits for have changed."""

FORMATION_TIMEOUT = 60.0
"""Seconds for every node to see every other through its cluster connection."""


@dataclass(frozen=True)
class LocalQueue:
    """A queue as its own node sees it."""

    node: str
    address: str
    name: str
    consumers: int
    messages: int
    delivering: int
    tags: tuple[str, ...]


@dataclass(frozen=True)
class RemoteBinding:
    """A node's binding for a queue on another node: ``name`` is the queue's name followed by that node's ID."""

    node: str
    address: str
    name: str
    consumers: int
    connected: bool
    in_flight: int


@dataclass(frozen=True)
class Snapshot:
    """What every node holds at one moment."""

    queues: tuple[LocalQueue, ...]
    remotes: tuple[RemoteBinding, ...]

    @property
    def in_flight(self) -> int:
        """Messages not yet at rest: in a store-and-forward queue or being delivered to a consumer."""
        return sum(r.in_flight for r in self.remotes) + sum(q.delivering for q in self.queues)

    def queue(self, node: str, name: str) -> LocalQueue | None:
        """Queue ``name`` on ``node``, if it exists."""
        return next((q for q in self.queues if q.node == node and q.name == name), None)


class ArtemisCluster:
    """``size`` Artemis ``version`` nodes clustered over static connectors on 127.0.0.1."""

    def __init__(self, version: str, workdir: Path, driver: Driver, size: int = CLUSTER_SIZE) -> None:
        self.version = version
        self.driver = driver
        self.names = tuple(f"n{i}" for i in range(1, size + 1))
        ports = {name: find_free_port() for name in self.names}
        self.lb_types = dict.fromkeys(self.names, "ON_DEMAND")
        """node -> its cluster connection's ``message-load-balancing``."""
        self.prefixes: dict[str, str] = {}
        self.nodes: dict[str, Node] = {}
        for name in self.names:
            peers = {peer: port for peer, port in ports.items() if peer != name}
            config = BrokerConfig(name, ports[name], str(workdir / f"cluster-{name}-probe.jsonl"), peers=peers,
                                  cluster=(ClusterLink("", "ON_DEMAND"),), address_settings=NO_AUTO_CREATION)
            broker = ArtemisBroker(version, workdir / f"cluster-{name}", config)
            self.nodes[name] = Node(f"cl-{name}", broker, driver)
        self.node_ids: dict[str, str] = {}
        self.start_seconds: list[float] = []
        self.records: dict[str, list[dict[str, Any]]] = {name: [] for name in self.names}
        self.sessions: set[str] = set()

    def start(self) -> None:
        """Create (once) and start every node, connect to each, and wait until they see one another."""
        for node in self.nodes.values():
            node.broker.create()
        for node in self.nodes.values():
            self.start_seconds.append(node.broker.start())
            node.probe = ProbeLog(node.probe.path)
            node.connect()
        self.sessions.clear()
        self.node_ids = {name: str(node.manage("getNodeID")) for name, node in self.nodes.items()}
        self.wait_formed()

    def wait_formed(self) -> None:
        """Until every node's cluster connection has a bridge to each other node (``getNodes``)."""
        deadline = time.monotonic() + FORMATION_TIMEOUT
        while time.monotonic() < deadline:
            if all(len(node.manage("getNodes", resource="clusterconnection.c0")) >= len(self.nodes) - 1
                   for node in self.nodes.values()):
                return
            time.sleep(0.1)
        raise BrokerFailed(f"the Artemis {self.version} cluster did not form within {FORMATION_TIMEOUT:g} s")

    def set_lb_types(self, lb_types: dict[str, str]) -> None:
        """Each node's cluster connection set to its type in ``lb_types`` (node -> type; a node not named keeps
        its own): a restart of the whole cluster when any changes."""
        wanted = {name: lb_types.get(name, current) for name, current in self.lb_types.items()}
        if wanted == self.lb_types:
            return
        for name, node in self.nodes.items():
            config = dataclasses.replace(node.settled_config(), cluster=(ClusterLink("", wanted[name]),))
            node.driver.call("disconnect", node=node.name)
            node.broker.stop()
            node.broker.write_config(config)
        self.lb_types = wanted
        self.start()

    def set_prefixes(self, prefixes: dict[str, str]) -> None:
        """Every node's acceptor given the routing-type prefixes ``prefixes`` (prefix -> ANYCAST or MULTICAST):
        acceptor parameters, so a restart of the whole cluster."""
        if dict(self.prefixes) == prefixes:
            return
        self.restart_with(prefixes=dict(prefixes))
        self.prefixes = dict(prefixes)

    def restart_with(self, **changes: Any) -> None:
        """Stop every node, change its configuration by ``changes`` (``BrokerConfig`` fields), start them all."""
        for node in self.nodes.values():
            config = dataclasses.replace(node.settled_config(), **changes)
            node.driver.call("disconnect", node=node.name)
            node.broker.stop()
            node.broker.write_config(config)
        self.start()

    def set_address_settings(self, settings: tuple[tuple[str, dict[str, str]], ...],
                             per_node: dict[str, tuple[tuple[str, dict[str, str]], ...]] | None = None) -> None:
        """Every node's address settings, beyond the fixed ones, replaced by ``settings``, or for a node named in
        ``per_node`` by its own (re-read while running)."""
        for name, node in self.nodes.items():
            own = settings if per_node is None or name not in per_node else per_node[name]
            node.reconfigure(dataclasses.replace(node.settled_config(), address_settings=(*NO_AUTO_CREATION, *own)),
                             restart=False)

    def snapshot(self) -> Snapshot:
        """Every node's bindings now, from its probe."""
        queues: list[LocalQueue] = []
        remotes: list[RemoteBinding] = []
        for name, node in self.nodes.items():
            seen: set[tuple[object, object]] = set()
            for item in self.ask_state(node):
                # a queue of a wildcard address is a binding of every plain address it matches as well: once is all
                if (item.get("kind"), item.get("name")) in seen:
                    continue
                seen.add((item.get("kind"), item.get("name")))
                if item.get("kind") == "local":
                    queues.append(LocalQueue(name, item["address"], item["name"], int(item["consumers"]),
                                             int(item["messages"]), int(item["delivering"]), tuple(item["tags"])))
                elif item.get("kind") == "remote":
                    remotes.append(RemoteBinding(name, item["address"], item["name"], int(item["consumers"]),
                                                 bool(item["connected"]), int(item["sf"])))
        return Snapshot(tuple(queues), tuple(remotes))

    def settle(self, expected: dict[tuple[str, str], int], ours: re.Pattern[str],
               held: Callable[[Sequence[Mapping[str, Any]]], Mapping[tuple[str, str], int]] | None = None,
               ) -> tuple[Snapshot, list[dict[str, Any]]]:
        """Wait until the cluster is at rest; the last snapshot and every delivery the driver saw meanwhile.

        At rest: the remote bindings whose names ``ours`` matches are exactly
        ``expected`` ((node, binding name) -> consumer count: every node has
        heard of every queue and consumer), nothing is in a store-and-forward
        queue or being delivered, and the snapshots have stayed the same for :data:`QUIET` seconds.
        ``held`` tells, from the deliveries seen so far, how many messages the consumers of each queue ((node,
        queue name) -> count) hold unacknowledged: a queue counts those as delivering for as long as they are
        held (``QueueImpl.getDeliveringCount``), and its browse does not show them.
        """
        deliveries: list[dict[str, Any]] = []
        previous: Snapshot | None = None
        since = 0.0
        deadline = time.monotonic() + SETTLE_TIMEOUT
        problem = ""
        while time.monotonic() < deadline:
            snapshot = self.snapshot()
            fresh = self.driver.call("deliveries")["deliveries"]
            deliveries.extend(fresh)
            remotes = {(r.node, r.name): r.consumers for r in snapshot.remotes if ours.match(r.name)}
            holding = held(deliveries) if held is not None else {}
            busy = [f"{q.name} on {q.node} delivering {q.delivering}, held {holding.get((q.node, q.name), 0)}"
                    for q in snapshot.queues if q.delivering != holding.get((q.node, q.name), 0)
                    or q.messages != len(q.tags) + q.delivering]
            if remotes != expected:
                problem = f"remote bindings {remotes}, expected {expected}"
            elif any(r.in_flight for r in snapshot.remotes) or busy:
                problem = "messages still in flight" + (f" ({'; '.join(busy)})" if busy else "")
            elif previous is not None and snapshot == previous and not fresh:
                if time.monotonic() - since >= QUIET:
                    return snapshot, deliveries
            else:
                problem = ""
                since = time.monotonic()
            previous = snapshot if not problem else None
            time.sleep(0.06)
        raise UnexpectedRefusal(f"the cluster did not settle within {SETTLE_TIMEOUT:g} s: {problem}")

    def ask_state(self, node: Node) -> list[dict[str, Any]]:
        """The probe's ``state`` answer on ``node``; the probe's other records are kept for :meth:`events`."""
        session = f"{node.name}-probe"
        if session not in self.sessions:
            node.call("session", id=session)
            self.sessions.add(session)
        answer, records = node.ask(session, "state")
        self.records[node.name[len("cl-"):]].extend(e for e in records if e.get("event") != "state")
        bindings: list[dict[str, Any]] = answer["bindings"]
        return bindings

    def events(self, node: str) -> list[dict[str, Any]]:
        """The probe's records on ``node`` since the last call (route and send records of tagged messages)."""
        records = self.records[node] + [e for e in self.nodes[node].probe.read() if e.get("event") != "state"]
        self.records[node] = []
        return records

    def resident_megabytes(self) -> float:
        """The nodes' resident memory together."""
        return sum(node.broker.resident_megabytes() or 0.0 for node in self.nodes.values())

    def close(self) -> None:
        """Stop every node."""
        for node in self.nodes.values():
            try:
                node.driver.call("disconnect", node=node.name)
            except Exception:  # noqa: BLE001 - the driver may be gone already; the brokers still stop
                pass
            node.broker.stop()
