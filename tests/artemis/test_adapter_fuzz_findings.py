"""Adapter fixes found by fuzzing real Artemis, checked without a broker.

A fuzzing run plays hundreds of scenarios on one broker, so a setting a
reset fails to undo shows up as a wrong outcome at the first step of some
later scenario, one that a fresh broker (a replay) never reproduces. The
refusals are the broker's own words, as the driver reports them.
"""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import Any

import pytest

from brokerspec.artemis.addressing import AddressingAdapter
from brokerspec.artemis.config import BrokerConfig, render_acceptor_url
from brokerspec.artemis.driver import CallFailed, Cause
from brokerspec.artemis.duplicates import DuplicatesAdapter, accepts_zero_id_cache_size
from brokerspec.artemis.node import RELOAD_SENTINEL
from brokerspec.artemis.outcomes import NotExpressible
from brokerspec.spec import get_profile
from brokerspec.spec.duplicates import Restart
from brokerspec.spec.addressing import (
    QueueExists,
    Send,
    RoutingType,
    RoutingTypeNotAllowed,
    SetAddressSettings,
    SetPrefix,
)


class ConfigOnlyNode:
    """A node that only holds a configuration: no addresses, no queues, reconfigurations recorded."""

    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self.reloads = 0
        self.reconfigured: list[tuple[BrokerConfig, bool]] = []

    def reconfigure(self, config: BrokerConfig, restart: bool) -> None:
        self.reloads += 1
        sentinel = (f"{RELOAD_SENTINEL}-{self.reloads}", {"redistribution_delay": str(1000 + self.reloads)})
        settings = tuple(s for s in config.address_settings if not s[0].startswith(RELOAD_SENTINEL))
        self.config = dataclasses.replace(config, address_settings=(*settings, sentinel))
        self.reconfigured.append((self.config, restart))

    def addresses(self) -> set[str]:
        return set()

    def queues(self) -> dict[str, Any]:
        return {}


def adapter_on(node: ConfigOnlyNode) -> AddressingAdapter:
    return AddressingAdapter(node)  # type: ignore[arg-type]


def without_sentinels(config: BrokerConfig) -> BrokerConfig:
    settings = tuple(s for s in config.address_settings if not s[0].startswith(RELOAD_SENTINEL))
    return dataclasses.replace(config, address_settings=settings)


def test_a_reset_after_prefix_and_settings_restores_both() -> None:
    """A scenario that set a prefix and turned auto-creation off: the next one starts with neither."""
    base = BrokerConfig("n1", 1, "p")
    node = ConfigOnlyNode(base)
    adapter = adapter_on(node)
    profile = get_profile("artemis-2.11")
    adapter.reset(profile)
    adapter.execute(SetAddressSettings("#", auto_create_addresses=False, auto_create_queues=False,
                                       default_address_routing_type=RoutingType.MULTICAST,
                                       default_queue_routing_type=RoutingType.MULTICAST))
    adapter.execute(SetPrefix("any://", RoutingType.ANYCAST))
    adapter.reset(profile)
    assert without_sentinels(node.config) == base


def test_a_reset_of_an_untouched_broker_rewrites_nothing() -> None:
    """Only the sentinel differs after an earlier rewrite: no reload is waited for on every reset."""
    node = ConfigOnlyNode(BrokerConfig("n1", 1, "p"))
    node.reconfigure(node.config, restart=False)
    adapter = adapter_on(node)
    profile = get_profile("artemis-latest")
    adapter.reset(profile)
    adapter.execute(SetAddressSettings("a1", auto_create_addresses=False, auto_create_queues=True,
                                       default_address_routing_type=RoutingType.ANYCAST,
                                       default_queue_routing_type=RoutingType.ANYCAST))
    adapter.reset(profile)
    rewrites = len(node.reconfigured)
    adapter.reset(profile)
    adapter.reset(profile)
    assert len(node.reconfigured) == rewrites


def test_a_second_queue_whose_name_holds_the_separator_is_refused_as_existing() -> None:
    """AMQ229018 from the name map: the queue named in the binding, on the binding's address."""
    message = ("AMQ229018: Binding already exists LocalQueueBinding [address=a1, queue=QueueImpl[name=q1::x, "
               "postOffice=PostOfficeImpl [server=ActiveMQServerImpl::name=n1], temp=false]@5f6ba99e, filter=null, "
               "name=q1::x, clusterName=q1::xff0d5cd9-e9a4-11f1-9d4a-02fc00000001]")
    failure = CallFailed("manage createQueue", (Cause("management", message, None),))
    adapter = AddressingAdapter.__new__(AddressingAdapter)
    assert adapter.reason(failure, "a1:", address="a1::q1::x") == QueueExists("q1::x", "a1")


def java_split(text: str) -> list[str]:
    """Java's ``String.split(",")``: trailing empty elements are dropped."""
    parts = text.split(",")
    while parts and parts[-1] == "":
        parts.pop()
    return parts or [""]


def test_the_empty_prefix_survives_the_acceptors_list_parsing() -> None:
    """Found fuzzing 2.11.0: set after another prefix of its type, the empty prefix came last and was lost."""
    node = ConfigOnlyNode(BrokerConfig("n1", 1, "p"))
    adapter = adapter_on(node)
    adapter.reset(get_profile("artemis-2.11"))
    for prefix in ("anycast://", "multicast://", ""):
        adapter.execute(SetPrefix(prefix, RoutingType.MULTICAST))
    url = render_acceptor_url(node.config)
    params = dict(p.split("=", 1) for p in url.split("?", 1)[1].split(";"))
    assert sorted(java_split(params["multicastPrefix"])) == ["", "anycast://", "multicast://"]


class OneAddressNode:
    """A node whose management knows one address, the empty one, allowing MULTICAST."""

    def routing_types(self, address: str) -> set[str]:
        assert address == "", f"asked management for {address!r}, which it has no control for"
        return {"MULTICAST"}


def test_a_refusal_naming_the_empty_address_keeps_it_empty() -> None:
    """Found fuzzing 2.40.0: createAddress(":::") makes "", and the broker's refusals name ""."""
    adapter = AddressingAdapter.__new__(AddressingAdapter)
    adapter.node = OneAddressNode()  # type: ignore[assignment]
    wrong_type = CallFailed("manage createQueue", (Cause("management", "AMQ229207: Invalid routing type: ANYCAST, "
                                                                      "Supported routing types for address:  are "
                                                                      "[MULTICAST]", None),))
    assert adapter.reason(wrong_type, "q1", address=":::", routing_type=RoutingType.ANYCAST) == \
        RoutingTypeNotAllowed("", RoutingType.ANYCAST, frozenset({RoutingType.MULTICAST}))
    taken = CallFailed("manage createQueue", (Cause("management", "AMQ229019: Queue q1 already exists on address ",
                                                    None),))
    assert adapter.reason(taken, "q1", address="::") == QueueExists("q1", "")


class UntouchableNode:
    """A node of release ``version`` that fails the test if the adapter does anything to it."""

    def __init__(self, version: str) -> None:
        self.broker = SimpleNamespace(version=version)

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the adapter touched the broker ({name}) for a restart it cannot make")


def test_a_restart_with_cache_size_0_is_not_expressible_before_2_28() -> None:
    """Found fuzzing 2.11.0: the release's parser refuses id-cache-size 0 (GT_ZERO), so the broker never came back."""
    assert not accepts_zero_id_cache_size("2.11.0") and not accepts_zero_id_cache_size("2.27.1")
    assert accepts_zero_id_cache_size("2.28.0") and accepts_zero_id_cache_size("2.40.0")
    adapter = DuplicatesAdapter(UntouchableNode("2.11.0"))  # type: ignore[arg-type]
    with pytest.raises(NotExpressible, match="id-cache-size 0"):
        adapter.execute(Restart(0))


def test_a_prefixed_fqqn_send_is_not_expressible_over_core() -> None:
    """Found fuzzing 2.40.0: with the empty prefix, a1::q1 went to the address a1, not to the queue q1."""
    node = ConfigOnlyNode(BrokerConfig("n1", 1, "p", prefixes={"": "ANYCAST"}))
    adapter = adapter_on(node)
    with pytest.raises(NotExpressible, match="FQQN behind an acceptor prefix"):
        adapter.execute(Send("a1::q1"))
