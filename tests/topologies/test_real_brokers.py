"""The spec's network-connector model against real ActiveMQ Classic 5.17 brokers on 127.0.0.1.

Each scenario is written once, as spec commands. The spec predicts which
brokers hold demand subscriptions for a consumer (and with which
brokerPath) and where each message sent elsewhere ends; the same topology
runs on real Debian brokers, and what they do must equal the prediction
(docs/topologies.md section 9). The trees and settings are the ones
brokerspec measured: a four-broker tree with TTL 1, with TTL 2, and with
consumerTTL 2, messageTTL 1 and decreaseNetworkConsumerPriority always; the eight-broker tree with TTL 2 when ``BROKERSPEC_REAL8=1``.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from brokerspec.realnet import Demand, RealConsumer, RealNetwork, find_missing_requirements
from brokerspec.realnet.config import get_base_port
from brokerspec.spec import get_profile
from brokerspec.spec import topologies as t

QUEUE = "queue://TEST.Q"
MISSING = find_missing_requirements()

REQUIRED = os.environ.get("BROKERSPEC_REQUIRE_REAL_BROKERS", "") == "1"
"""Set by CI, which installs the brokers: there a missing requirement fails the run instead of skipping it."""

pytestmark = [
    pytest.mark.real_brokers,
    pytest.mark.skipif(bool(MISSING) and not REQUIRED,
                       reason="real ActiveMQ brokers cannot run here: " + "; ".join(MISSING)),
]


def test_requirements_are_installed() -> None:
    """Fails (under BROKERSPEC_REQUIRE_REAL_BROKERS=1) with what is missing, rather than skipping silently."""
    assert not MISSING, "; ".join(MISSING)

Links = tuple[tuple[str, str], ...]

TREE4_BROKERS = ("b1", "b2", "b3", "b4")
TREE4_LINKS: Links = (("b2", "b1"), ("b3", "b2"), ("b4", "b2"))
"""b1 is the root, b2 a branch under it, b3 and b4 leaves under b2; each child declares a duplex connector."""

TREE8_BROKERS = ("b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8")
TREE8_LINKS: Links = (("b2", "b1"), ("b3", "b1"), ("b4", "b2"), ("b5", "b2"), ("b6", "b2"), ("b7", "b3"),
                      ("b8", "b3"))


SETTINGS = {
    "ttl1": t.BridgeConfig(consumer_ttl=1, message_ttl=1),
    "ttl2": t.BridgeConfig(consumer_ttl=2, message_ttl=2),
    "split-ttl-priority": t.BridgeConfig(consumer_ttl=2, message_ttl=1, decrease_priority=True),
}
"""Connector settings per scenario; the last one strands messages one hop short (consumerTTL 2, messageTTL 1)."""


def build_commands(brokers: tuple[str, ...], links: Links, config: t.BridgeConfig) -> list[t.TopologyCommand]:
    """Add every broker, then one duplex connector per (child, parent) with ``config``."""
    commands: list[t.TopologyCommand] = [t.AddBroker(b) for b in brokers]
    commands.extend(t.Connect(child, parent, duplex=True, config=config) for child, parent in links)
    return commands


def describe(commands: list[t.TopologyCommand]) -> str:
    """The scenario as a short script in broker verbs, for failure messages."""
    lines = []
    for command in commands:
        if isinstance(command, t.Connect):
            lines.append(f"connect {command.source} -> {command.target} duplex={command.duplex} "
                         f"consumerTTL={command.config.consumer_ttl} messageTTL={command.config.message_ttl}")
        elif isinstance(command, t.Subscribe):
            lines.append(f"subscribe {command.consumer} at {command.broker} to {command.destination}")
        elif isinstance(command, t.Send):
            lines.append(f"send at {command.broker} to {command.destination}")
        else:
            lines.append(repr(command))
    return "\n  ".join(["scenario:", *lines])


def apply_all(state: t.TopologyState, commands: Sequence[t.TopologyCommand]) -> t.TopologyState:
    """Run ``commands`` through the spec; every one must be applied."""
    for command in commands:
        state, outcome = t.apply(state, command)
        if not isinstance(outcome, t.Applied):
            raise AssertionError(f"the spec refused {command}: {outcome}")
    return state


def predict_demand(state: t.TopologyState, destination: str) -> Demand:
    """The spec's network registrations for ``destination``: broker -> sorted brokerPaths."""
    demand: Demand = {}
    for registration in state.demand:
        if registration.network and registration.destination == destination:
            demand.setdefault(registration.broker, []).append(registration.path)
    return {broker: sorted(paths) for broker, paths in sorted(demand.items())}


@dataclass
class Scenario:
    """A running network with one consumer ``c1`` at ``home``, and the spec state for the same commands."""

    commands: list[t.TopologyCommand]
    state: t.TopologyState
    network: RealNetwork
    consumer: RealConsumer
    home: str


@contextmanager
def running_scenario(brokers: tuple[str, ...], links: Links, config: t.BridgeConfig, home: str, folder: Path,
                     base_port: int) -> Iterator[Scenario]:
    """Start the topology on real brokers, open the consumer at ``home``, and stop everything afterwards."""
    commands = build_commands(brokers, links, config)
    state = apply_all(t.initial_state(get_profile("artemis-latest")), commands)
    with RealNetwork(state, folder, base_port=base_port) as network:
        subscribe = t.Subscribe("c1", home, QUEUE)
        state = apply_all(state, [subscribe])
        consumer = network.consumer(home, QUEUE)
        yield Scenario([*commands, subscribe], state, network, consumer, home)


def check_demand(scenario: Scenario) -> None:
    """The brokers holding demand subscriptions, and their brokerPaths and priorities, are the spec's."""
    expected = predict_demand(scenario.state, QUEUE)
    observed = scenario.network.wait_for_demand(QUEUE, expected)
    assert observed == expected, (f"real demand {observed} != spec demand {expected}\n{describe(scenario.commands)}"
                                  f"\n(broker logs under {scenario.network.folder})")
    spec_priorities = sorted((r.broker, r.path, r.priority) for r in scenario.state.demand
                             if r.destination == QUEUE)
    real_priorities = sorted((c.broker, c.path, c.priority) for c in scenario.network.observe(QUEUE)
                             if not c.browser)
    assert real_priorities == spec_priorities, (f"real (broker, path, priority) {real_priorities} != spec "
                                                f"{spec_priorities}\n{describe(scenario.commands)}")


def check_delivery(scenario: Scenario) -> None:
    """A message sent at each other broker reaches c1 exactly when the spec delivers it, else waits where it says."""
    state = scenario.state
    commands = list(scenario.commands)
    outcomes: dict[str, t.Sent] = {}
    run = uuid.uuid4().hex[:8]
    for broker in scenario.network.brokers:
        if broker == scenario.home:
            continue
        send = t.Send(broker, QUEUE)
        state, outcome = t.apply(state, send)
        assert isinstance(outcome, t.Sent), outcome
        commands.append(send)
        body = f"{run}-from-{broker}"
        scenario.network.send(broker, QUEUE, body)
        outcomes[body] = outcome
    delivered = {body for body, sent in outcomes.items() if any(isinstance(e, t.Delivered) for e in sent.events)}
    received = scenario.consumer.collect(delivered, timeout=10.0, grace=2.5)
    assert sorted(received) == sorted(delivered), (
        f"received {sorted(received)}, the spec delivers {sorted(delivered)}\n{describe(commands)}")
    for body, sent in outcomes.items():
        for event in sent.events:
            if isinstance(event, t.Waiting):
                held = scenario.network.browse(event.broker, QUEUE)
                assert body in held, (f"{body} should wait on {event.broker} ({event}); it holds {held}\n"
                                      f"{describe(commands)}")


@pytest.fixture(scope="module", params=list(SETTINGS))
def tree4(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scenario]:
    """The four-broker tree with consumer c1 at leaf b3; one network per setting, shared by the tests below."""
    name: str = request.param
    folder = tmp_path_factory.mktemp(f"tree4-{name}")
    base_port = get_base_port() + 20 * list(SETTINGS).index(name)
    with running_scenario(TREE4_BROKERS, TREE4_LINKS, SETTINGS[name], "b3", folder, base_port) as scenario:
        yield scenario


def test_the_four_broker_tree_creates_the_demand_the_spec_predicts(tree4: Scenario) -> None:
    check_demand(tree4)


def test_the_four_broker_tree_delivers_what_the_spec_delivers(tree4: Scenario) -> None:
    check_delivery(tree4)


@pytest.mark.skipif(os.environ.get("BROKERSPEC_REAL8", "") != "1", reason="set BROKERSPEC_REAL8=1 to run 8 brokers")
def test_the_eight_broker_tree_matches_the_spec(tmp_path: Path) -> None:
    base_port = get_base_port() + 20 * len(SETTINGS)
    with running_scenario(TREE8_BROKERS, TREE8_LINKS, SETTINGS["ttl2"], "b4", tmp_path, base_port) as scenario:
        check_demand(scenario)
        check_delivery(scenario)


TOPIC = "topic://TEST.T"
CHAIN3_BROKERS = ("b1", "b2", "b3")
CHAIN3_LINKS: Links = (("b2", "b1"), ("b3", "b2"))
"""A chain: b1 the far end, b3 the other; each child declares a duplex connector to its parent."""


def spec_paths(state: t.TopologyState, destination: str) -> list[tuple[str, tuple[str, ...], int]]:
    return sorted((r.broker, r.path, r.priority) for r in state.demand if r.network and r.destination == destination)


def test_a_conduit_subscription_keeps_the_path_of_the_consumer_that_arrived_first(tmp_path: Path) -> None:
    """Rule TOPO-NC-ORDER on real brokers: the far consumer subscribes first, so b1's conduit keeps its longer path.

    Subscribed the other way round the spec predicts the short path on b1, so
    this order is the one that tells "first to arrive" from "shortest".
    """
    config = t.BridgeConfig(consumer_ttl=2, message_ttl=2, decrease_priority=True)
    commands = build_commands(CHAIN3_BROKERS, CHAIN3_LINKS, config)
    far_first = [t.Subscribe("far", "b3", TOPIC), t.Subscribe("near", "b2", TOPIC)]
    start = apply_all(t.initial_state(get_profile("artemis-latest")), commands)
    predicted = apply_all(start, [*far_first])
    near_first = apply_all(start, [*reversed(far_first)])
    assert ("b1", ("b3", "b2")) in {(b, p) for b, p, _ in spec_paths(predicted, TOPIC)}
    assert spec_paths(predicted, TOPIC) != spec_paths(near_first, TOPIC), "the scenario no longer reveals the order"
    base_port = get_base_port() + 20 * (len(SETTINGS) + 1)
    with RealNetwork(start, tmp_path, base_port=base_port) as network:
        state = start
        for subscribe in far_first:
            state = apply_all(state, [subscribe])
            network.consumer(subscribe.broker, TOPIC)
            expected = predict_demand(state, TOPIC)
            observed = network.wait_for_demand(TOPIC, expected)
            assert observed == expected, (f"after {subscribe}: real demand {observed} != spec {expected}\n"
                                          f"{describe([*commands, *far_first])}")
        real = sorted((c.broker, c.path, c.priority) for c in network.observe(TOPIC) if c.network and not c.browser)
        assert real == spec_paths(state, TOPIC), (f"real (broker, path, priority) {real} != spec "
                                                  f"{spec_paths(state, TOPIC)}\n{describe([*commands, *far_first])}")
