"""Wildcard addresses in the load-balancing spec: matching, the syntax options, and the version differences."""

from __future__ import annotations

import pytest

from brokerspec.spec import InvalidOption
from brokerspec.spec.addressing import RoutingType
from brokerspec.spec.balancing import (
    BalancingCommand,
    CreateQueue,
    Delivered,
    DeleteQueue,
    Done,
    Send,
    Sent,
    apply,
    initial_state,
)
from brokerspec.spec.balancing.wildcards import address_matches, binds, is_wild
from brokerspec.spec.profiles import get_profile

LATEST = get_profile("artemis-latest").balancing
OLD = get_profile("artemis-2.11").balancing

# (pattern, address, TREE, LINKED): Artemis's AddressImplTest and AddressMapUnitTest cases in our own words
CASES = [
    ("a.#", "a", True, True),
    ("a.#", "a.b.c", True, True),
    ("a.#", "b.a", False, False),
    ("a.*", "a", False, False),
    ("a.*", "a.b", True, True),
    ("a.*", "a.b.c", False, False),
    ("*.b", "a.b", True, True),
    ("*.*", "a.b", True, True),
    ("*.*", "a", False, False),
    ("#", "a.b.c", True, True),
    ("#.b", "b", True, True),
    ("#.b", "a.b", True, True),
    ("#.b", "b.b", True, False),  # LINKED runs '#' to the first 'b' only
    ("a.#.c", "a.c", True, True),
    ("a.#.c", "a.b.b.c", True, True),
    ("a.#.c", "a.c.c", True, False),
    ("a.b#", "a.b", False, False),  # a wildcard character inside a word is plain text
]


@pytest.mark.parametrize(("pattern", "address", "tree", "linked"), CASES)
def test_wildcard_matching_under_each_version(pattern: str, address: str, tree: bool, linked: bool) -> None:
    assert address_matches(LATEST, pattern, address) is tree
    assert address_matches(OLD, pattern, address) is linked


def test_a_wild_address_binds_only_plain_addresses_and_only_with_routing_on() -> None:
    assert binds(LATEST, "a.#", "a.b")
    assert not binds(LATEST, "a.#", "a.*"), "a wild address is never routed through another's queues"
    assert binds(LATEST, "a.*", "a.*"), "its own address always"
    off = get_profile("artemis-latest", (("balancing.wildcard_routing", "false"),)).balancing
    assert not binds(off, "a.#", "a.b")
    assert is_wild(LATEST, "a.b#") and not is_wild(LATEST, "a.b")


def test_the_wildcard_syntax_is_configurable() -> None:
    slashes = get_profile("artemis-latest", (("balancing.wildcard_delimiter", "/"), ("balancing.wildcard_any_words", ">"),
                                             ("balancing.wildcard_single_word", "+"))).balancing
    assert address_matches(slashes, "a/>", "a/b/c") and address_matches(slashes, "a/+", "a/b")
    assert not address_matches(slashes, "a.#", "a.b.c"), "'#' and '.' are plain characters now"


@pytest.mark.parametrize(("option", "value", "needle"), [
    ("balancing.wildcard_delimiter", "#", "three different characters"),
    ("balancing.wildcard_any_words", "##", "one character"),
    ("balancing.wildcard_single_word", " ", "one character"),
    ("balancing.wildcard_delimiter", ":", "one character"),
])
def test_a_bad_wildcard_syntax_is_refused_with_the_option_named(option: str, value: str, needle: str) -> None:
    with pytest.raises(InvalidOption, match=needle) as caught:
        get_profile("artemis-latest", ((option, value),))
    assert "wildcard" in str(caught.value)


def test_a_wildcard_group_keeps_a_position_per_plain_address_and_loses_it_with_its_last_queue() -> None:
    state = initial_state(get_profile("artemis-latest"))
    for name in ("w1", "w2"):
        state, _ = apply(state, CreateQueue("n1", "o.#", name, RoutingType.ANYCAST))
    from brokerspec.spec.balancing import Configure, LbType
    for address in ("o.eu", "o.us"):
        state, _ = apply(state, Configure(address, LbType.STRICT))
    landed = []
    for address in ("o.eu", "o.eu", "o.us"):
        state, outcome = apply(state, Send("n1", address))
        assert isinstance(outcome, Sent)
        landed += [e.queue for e in outcome.events if isinstance(e, Delivered)]
    assert landed == ["w1", "w2", "w1"]
    assert set(state.positions) == {("n1", "o.eu", "o.#"), ("n1", "o.us", "o.#")}
    for name in ("w1", "w2"):
        state, _ = apply(state, DeleteQueue("n1", name))
    assert not state.positions, "the emptied group's positions go in every plain address"


def test_a_queue_made_again_under_its_old_name_goes_last_in_the_reference_as_in_the_spec() -> None:
    """A wildcard queue that takes the name of a deleted queue is newer than a queue made after it in the
    reference's copy order too (found by brokerspec check: the reference reused the old place)."""
    from brokerspec.reference.balancing import ReferenceBalancingBroker

    profile = get_profile("artemis-2.11")
    script: list[BalancingCommand] = [CreateQueue("n1", "a1", "a1", RoutingType.ANYCAST), DeleteQueue("n1", "a1"),
              CreateQueue("n1", "a1.#", "a1", RoutingType.MULTICAST), CreateQueue("n1", "a1", "q1", RoutingType.ANYCAST),
              Send("n1", "a1")]
    state, broker = initial_state(profile), ReferenceBalancingBroker(profile)
    for command in script:
        state, expected = apply(state, command)
        assert broker.execute(command) == expected, command
    assert isinstance(expected, Sent) and [e.queue for e in expected.events if isinstance(e, Delivered)] == ["a1"]


def test_the_reference_redistributes_once_its_bindings_took_the_type() -> None:
    """The reference asks whether its bindings allow redistribution under the type they have now, not the OFF
    they had when a lone node last routed (found by brokerspec check, LB-TYPE-ADOPTED)."""
    from brokerspec.reference.balancing import ReferenceBalancingBroker
    from brokerspec.spec.balancing import AddNode, Attach, Configure, LbType, Redistributed

    profile = get_profile("artemis-2.11")
    script: list[BalancingCommand] = [
              AddNode("n2"), Configure("a1", LbType.ON_DEMAND, 0), CreateQueue("n1", "a1", "a1", RoutingType.ANYCAST),
              Send("n1", "a1"), CreateQueue("n2", "a1", "a1", RoutingType.ANYCAST), Attach("c1", "n2", "a1")]
    state, broker = initial_state(profile), ReferenceBalancingBroker(profile)
    for command in script:
        state, expected = apply(state, command)
        assert broker.execute(command) == expected, command
    assert isinstance(expected, Done) and any(isinstance(e, Redistributed) for e in expected.events)
