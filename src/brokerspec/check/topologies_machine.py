"""The lockstep state machine for hierarchical topologies.

Introduction
------------
Every run starts from a small tree of 3 to 5 brokers (``b1`` is the root,
each later broker hangs under an earlier one), built either with duplex
network connectors of one consumerTTL and one messageTTL or with tree connectors (branches where a
broker has children, leaves elsewhere). Then consumers and producers come
and go on three destinations (two queues and a topic), messages are sent
one at a time or in bursts, connectors are added and dropped (with varied
settings: conduit or not, priorities decreased, suppression, filters,
non-duplex), tree brokers move, TTLs change and replay is switched on
and off. Targets are functions of the state and an index drawn by
Hypothesis (an existing consumer to close, an existing connector to drop),
so almost every step does something and shrunk scripts stay short.
"""

from __future__ import annotations

from collections.abc import Mapping

from brokerspec.spec import Profile
from brokerspec.spec.topologies import (
    AddBroker,
    AddProducer,
    BridgeConfig,
    Connect,
    Disconnect,
    Move,
    RemoveProducer,
    Role,
    Send,
    SetReplay,
    SetTtl,
    QueryDemand,
    Subscribe,
    TreeConnect,
    TreeConnector,
    Unsubscribe,
)

from .domains import TOPOLOGIES
from .draws import Draw, booleans, builds, integers, lists, pick
from .engine import initialize, issues, rule
from .lockstep import Lockstep, SubjectFactory
from .machine import OpsMachine, RunStats

BROKERS = ("b1", "b2", "b3", "b4", "b5")
DESTINATIONS = pick("queue://Q", "queue://Q", "queue://R", "topic://T", "queue://Q.A", "queue://Q.A.B",
                                "topic://T.X")
"""Dotted names too, so that a wildcard that matches across a dot (``*`` is one part only) can be told apart."""
CONSUMERS = pick("c1", "c2", "c3", "c4")
PRODUCERS = pick("p1", "p2")
TTLS = pick(1, 2, 2, 3, -1)
INDEX = integers(0, 7)


def configs(ttls: Draw[int]) -> Draw[BridgeConfig]:
    """Bridge settings with TTLs drawn from ``ttls``."""
    return builds(
        BridgeConfig,
        consumer_ttl=ttls,
        message_ttl=ttls,
        conduit=pick(True, True, False),
        conduit_network_queues=pick(False, False, True),
        decrease_priority=booleans(),
        suppress_duplicate_queues=pick(False, False, True),
        suppress_duplicate_topics=pick(True, True, False),
        include=pick((), (), (), ("queue://Q",), ("queue://*", "topic://>"), ("queue://Q.*",),
                     ("queue://Q.>",), ("queue://*.A", "topic://T.*")),
        exclude=pick((), (), (), ("queue://R",), ("queue://Q.*",), ("queue://*.*.B",)),
    )


WIDE_BROKERS = (*BROKERS, "b6", "b7")
WIDE_DESTINATIONS = pick("queue://Q", "queue://Q", "queue://R", "queue://S", "topic://T", "queue://Q.A",
                         "queue://Q.A.B", "topic://T.X", "topic://T.X.Y")
WIDE_CONSUMERS = pick("c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8")
WIDE_PRODUCERS = pick("p1", "p2", "p3")
WIDE_TTLS = pick(1, 2, 2, 3, 4, -1)
"""The wide alphabet (``wide=True``): networks of up to seven brokers, more destinations, consumers and
producers, longer TTLs, so that paths, levels and subscription lists grow past what the narrow one reaches."""


def make_topologies_machine(profile: Profile, subjects: Mapping[str, SubjectFactory],
                            counts: RunStats, window: int = 1, wide: bool = False) -> type[OpsMachine]:
    """A state machine class running ``subjects`` in lockstep with the topology spec (``wide``: the wide
    alphabet)."""
    broker_names = WIDE_BROKERS if wide else BROKERS
    broker = pick(*broker_names)
    destinations = WIDE_DESTINATIONS if wide else DESTINATIONS
    consumers = WIDE_CONSUMERS if wide else CONSUMERS
    producers = WIDE_PRODUCERS if wide else PRODUCERS
    ttls = WIDE_TTLS if wide else TTLS
    bridge_configs = configs(ttls)

    class TopologiesLockstep(OpsMachine):
        """Spec and subjects in lockstep over a small network of brokers."""

        def __init__(self) -> None:
            super().__init__()
            self.lockstep = Lockstep(profile, subjects, TOPOLOGIES, window=window)
            counts.examples += 1

        def teardown(self) -> None:
            try:
                self.lockstep.finish()  # deferred replies are compared before the scenario ends
            finally:
                self.lockstep.close()

        def run(self, command: object) -> None:
            if self.leaves_out(command):
                return
            counts.note(command)
            self.lockstep.step(command)

        @initialize(size=integers(3, len(broker_names)),
                    parents=lists(INDEX, len(broker_names) - 1, len(broker_names) - 1),
                    tree=booleans(), ttl=ttls, message_ttl=ttls)
        def start_tree(self, size: int, parents: list[int], tree: bool, ttl: int, message_ttl: int) -> None:
            """A small tree: broker i hangs under one of the brokers before it."""
            names = broker_names[:size]
            for name in names:
                self.run(AddBroker(name))
            edges = [(names[i], names[parents[i - 1] % i]) for i in range(1, size)]
            with_children = {parent for _, parent in edges}
            for child, parent in edges:
                if tree:
                    self.run(TreeConnect(child, parent, Role.BRANCH if child in with_children else Role.LEAF))
                else:
                    self.run(Connect(child, parent, True, BridgeConfig(consumer_ttl=ttl, message_ttl=message_ttl)))

        def existing(self, kind: str, index: int, fallback: str) -> str:
            """The ``index``-th existing consumer or producer (by ID), else ``fallback``."""
            state = self.lockstep.state
            table = state.consumers if kind == "consumer" else state.producers
            names = sorted(table)
            return names[index % len(names)] if names else fallback

        @issues("subscribe")
        @rule(consumer=consumers, broker=broker, destination=destinations,
              priority=pick(0, 0, 0, 5, -3, 10, 127))
        def subscribe(self, consumer: str, broker: str, destination: str, priority: int) -> None:
            self.run(Subscribe(consumer, broker, destination, priority))

        @issues("unsubscribe")
        @rule(index=INDEX, consumer=consumers)
        def unsubscribe(self, index: int, consumer: str) -> None:
            self.run(Unsubscribe(self.existing("consumer", index, consumer)))

        @issues("query_demand")
        @rule(destination=destinations)
        def query_demand(self, destination: str) -> None:
            self.run(QueryDemand(destination))

        @issues("send")
        @rule(broker=broker, destination=destinations)
        def send(self, broker: str, destination: str) -> None:
            self.run(Send(broker, destination))

        @issues("send")
        @rule(brokers=lists(broker, 2, 4), destination=destinations)
        def send_burst(self, brokers: list[str], destination: str) -> None:
            """Several sends of one destination, so round robin and waiting lists fill."""
            for broker in brokers:
                self.run(Send(broker, destination))

        @issues("send")
        @rule(destination=destinations)
        def send_everywhere(self, destination: str) -> None:
            """One message from every broker: shows at once which brokers demand reaches and how far messages go."""
            for broker in self.lockstep.state.brokers:
                self.run(Send(broker, destination))

        @issues("add_producer")
        @rule(producer=producers, broker=broker, destination=destinations)
        def add_producer(self, producer: str, broker: str, destination: str) -> None:
            self.run(AddProducer(producer, broker, destination))

        @issues("remove_producer")
        @rule(index=INDEX, producer=producers)
        def remove_producer(self, index: int, producer: str) -> None:
            self.run(RemoveProducer(self.existing("producer", index, producer)))

        @issues("connect")
        @rule(source=broker, to=broker, duplex=pick(True, True, False), config=bridge_configs)
        def connect(self, source: str, to: str, duplex: bool, config: BridgeConfig) -> None:
            """A further network connector (refused in a tree: one design per broker)."""
            self.run(Connect(source, to, duplex, config))

        @issues("disconnect")
        @rule(index=INDEX)
        def disconnect(self, index: int) -> None:
            """Drop an existing connector, chosen by index."""
            keys = sorted(self.lockstep.state.connectors)
            if keys:
                source, target = keys[index % len(keys)]
                self.run(Disconnect(source, target))

        @issues("tree_connect")
        @rule(source=broker, to=broker, branch=booleans())
        def tree_connect(self, source: str, to: str, branch: bool) -> None:
            self.run(TreeConnect(source, to, Role.BRANCH if branch else Role.LEAF))

        @issues("move")
        @rule(index=INDEX, parent=broker)
        def move(self, index: int, parent: str) -> None:
            """Move a tree broker (chosen by index) under another parent."""
            state = self.lockstep.state
            movable = sorted(s for (s, _), c in state.connectors.items() if isinstance(c, TreeConnector))
            self.run(Move(movable[index % len(movable)] if movable else "b2", parent))

        @issues("set_ttl")
        @rule(index=INDEX, consumer_ttl=ttls, message_ttl=ttls)
        def set_ttl(self, index: int, consumer_ttl: int, message_ttl: int) -> None:
            """Retune an existing connector, chosen by index."""
            keys = sorted(self.lockstep.state.connectors)
            source, target = keys[index % len(keys)] if keys else ("b1", "b2")
            self.run(SetTtl(source, target, consumer_ttl, message_ttl))

        @issues("set_replay")
        @rule(broker=broker, enabled=booleans())
        def set_replay(self, broker: str, enabled: bool) -> None:
            self.run(SetReplay(broker, enabled))

    TopologiesLockstep.__name__ = f"TopologiesLockstep[{profile.label}{', wide' if wide else ''}]"
    TopologiesLockstep.__qualname__ = TopologiesLockstep.__name__
    return TopologiesLockstep
