"""The spec's invariants catch broken states, the rule catalogue is complete, and the frozen map behaves."""

from __future__ import annotations

import dataclasses
import inspect
import re

import pytest

from brokerspec.spec import FrozenMap, get_profile
from brokerspec.spec.addressing import (
    RULES,
    Address,
    AddressingState,
    CreateAddress,
    CreateQueue,
    Queue,
    RoutingType,
    apply,
    get_rule,
    initial_state,
    invariant_violations,
    is_valid_state,
)
from brokerspec.spec.addressing import operations

ANY = RoutingType.ANYCAST


def populated(profile: str = "seed") -> AddressingState:
    state = initial_state(get_profile(profile))
    for command in (CreateAddress("a1", frozenset({ANY})), CreateAddress("a2", frozenset({ANY})),
                    CreateQueue("a1", "q1", ANY), CreateQueue("a2", "q1", ANY)):
        state, _ = apply(state, command)
    return state


def test_valid_state_has_no_violations() -> None:
    assert is_valid_state(populated())
    assert populated().name_counts == FrozenMap({"q1": 2})


BROKEN = {
    "count off by one": lambda s: dataclasses.replace(s, name_counts=s.name_counts.set("q1", 1)),
    "zero count entry": lambda s: dataclasses.replace(s, name_counts=s.name_counts.set("zz", 0)),
    "queue on a missing address": lambda s: dataclasses.replace(s, addresses=s.addresses.remove("a2")),
    "routing type not allowed": lambda s: dataclasses.replace(
        s, addresses=s.addresses.set("a1", Address("a1", frozenset({RoutingType.MULTICAST})))),
    "queue under the wrong key": lambda s: dataclasses.replace(
        s, queues=s.queues.remove(("a1", "q1")).set(("a1", "qX"), Queue("a1", "q1", ANY))),
    "invalid queue name": lambda s: dataclasses.replace(
        s, queues=s.queues.set(("a1", "x::y"), Queue("a1", "x::y", ANY)),
        name_counts=s.name_counts.set("x::y", 1)),
    "invalid address name": lambda s: dataclasses.replace(s, addresses=s.addresses.set("", Address("", frozenset()))),
    "missing catch-all settings": lambda s: dataclasses.replace(s, settings=FrozenMap()),
}


@pytest.mark.parametrize("breakage", sorted(BROKEN))
def test_invariants_catch_a_broken_state(breakage: str) -> None:
    assert invariant_violations(BROKEN[breakage](populated())) != []


def test_broker_scope_forbids_a_name_on_two_addresses() -> None:
    seed_state = populated("seed")
    as_artemis = dataclasses.replace(seed_state, options=get_profile("artemis-latest").addressing)
    assert any("broker-wide" in v for v in invariant_violations(as_artemis))


def test_every_rule_the_operations_use_is_catalogued() -> None:
    used = set(re.findall(r'"(ADDR-[A-Z-]+)"', inspect.getsource(operations)))
    assert used, "the operations name their rules"
    assert used <= set(RULES), sorted(used - set(RULES))
    assert get_rule("ADDR-LOOKUP-BARE-MANY").profiles == ("seed",)


def test_every_rule_cites_a_source() -> None:
    assert all(rule.source and rule.summary for rule in RULES.values())


def test_frozen_map_is_a_value() -> None:
    first = FrozenMap({"a": 1})
    second = first.set("b", 2)
    assert first == FrozenMap({"a": 1}) and len(second) == 2
    assert second.remove("b") == first
    assert hash(second.remove("b")) == hash(first)
    assert {first: "x"}[FrozenMap([("a", 1)])] == "x"
    assert first != {"a": 1}
    assert repr(first) == "FrozenMap({'a': 1})"
    assert list(second) == ["a", "b"]
