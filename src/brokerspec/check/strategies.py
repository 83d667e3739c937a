"""Hypothesis strategies for address-model commands.

Introduction
------------
Bugs in name resolution hide in collisions: the same queue name on two
addresses, an address named like a queue, a prefix that is also the start of
a name, a name that is almost an FQQN. So names come from tiny alphabets
that collide often, plus a fixed set of adversarial names: the empty string,
``"::"``, ``"a1::"``, ``"::q1"``, ``"a1::q1::x"``, ``":::"``, non-ASCII and a
very long name. Client names (for lookup, delete, send and consume) are drawn
from bare names, FQQNs built from the alphabets, prefixed names and the
adversarial set.

The module gives each alphabet twice: as Hypothesis strategies (for tests
and :func:`commands`) and as :class:`Draws` for the lockstep machine.
"""

from __future__ import annotations

from hypothesis import strategies as st

from brokerspec.spec.addressing import (
    AddressingCommand,
    Consume,
    CreateAddress,
    CreateQueue,
    DeleteAddress,
    DeleteQueue,
    Lookup,
    RoutingType,
    Send,
    SetAddressSettings,
    SetPrefix,
)

from . import draws as d

ADDRESSES = ("a1", "a2", "q1", "a1:")
QUEUES = ("q1", "q2", "a1")
PREFIXES = ("anycast://", "multicast://", "any")
LONG_NAME = "long-" + "x" * 995
ADVERSARIAL = ("", "::", "a1::", "::q1", "a1::q1::x", ":::", "a1:", ":q1", "a1:::q1", "é", "ünï::q1", LONG_NAME)

routing_types = st.sampled_from((RoutingType.ANYCAST, RoutingType.MULTICAST))
optional_routing_types = st.one_of(st.none(), routing_types)
routing_type_sets = st.one_of(
    st.just(frozenset(RoutingType)), st.frozensets(routing_types, min_size=1), st.frozensets(routing_types)
)

adversarial_names = st.sampled_from(ADVERSARIAL)


def mostly(common: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Three draws in four from ``common``, one from the adversarial names."""
    return st.one_of(common, common, common, adversarial_names)


address_names = mostly(st.sampled_from(ADDRESSES))
queue_names = mostly(st.sampled_from(QUEUES))
fqqns = st.builds(lambda a, q: f"{a}::{q}", st.sampled_from(ADDRESSES), st.sampled_from(QUEUES))
plain_client_names = mostly(st.one_of(st.sampled_from(QUEUES + ADDRESSES), fqqns))
client_names = st.one_of(
    plain_client_names,
    plain_client_names,
    st.builds(lambda p, n: p + n, st.sampled_from(PREFIXES), plain_client_names),
)
prefixes = st.sampled_from(PREFIXES + ("",))
settings_matches = st.sampled_from(("#",) + ADDRESSES + ("",))
starting_addresses = st.lists(st.sampled_from(ADDRESSES), unique=True, max_size=3)
starting_queues = st.lists(
    st.tuples(st.sampled_from(ADDRESSES), st.sampled_from(QUEUES), routing_types), max_size=4
)


def commands() -> st.SearchStrategy[AddressingCommand]:
    """Any addressing command, built from the same colliding alphabets as the state machine."""
    return st.one_of(
        st.builds(CreateAddress, address=address_names, routing_types=routing_type_sets),
        st.builds(DeleteAddress, address=address_names, force=st.booleans()),
        st.builds(CreateQueue, address=address_names, queue=queue_names, routing_type=routing_types),
        st.builds(CreateQueue, address=address_names, queue=queue_names, routing_type=routing_types),
        st.builds(DeleteQueue, name=client_names),
        st.builds(Lookup, name=client_names),
        st.builds(Send, name=client_names, routing_type=optional_routing_types),
        st.builds(Consume, name=client_names, routing_type=optional_routing_types),
        st.builds(SetPrefix, prefix=prefixes, routing_type=optional_routing_types),
        st.builds(SetAddressSettings, match=settings_matches, auto_create_addresses=st.booleans(),
                  auto_create_queues=st.booleans(), default_address_routing_type=routing_types,
                  default_queue_routing_type=routing_types),
    )


class Draws:
    """The same alphabets as :mod:`.draws` draws, for the lockstep machine (:mod:`.engine`), weighted alike."""

    routing_types = d.pick(RoutingType.ANYCAST, RoutingType.MULTICAST)
    optional_routing_types = d.optional(routing_types)
    routing_type_sets = d.either(
        d.pick(frozenset(RoutingType)),
        d.pick(frozenset(RoutingType), frozenset({RoutingType.ANYCAST}), frozenset({RoutingType.MULTICAST})),
        d.pick(frozenset(), frozenset(RoutingType), frozenset({RoutingType.ANYCAST}),
               frozenset({RoutingType.MULTICAST})),
    )
    adversarial_names = d.pick(*ADVERSARIAL)
    address_names = d.either(*[d.pick(*ADDRESSES)] * 3, adversarial_names)
    queue_names = d.either(*[d.pick(*QUEUES)] * 3, adversarial_names)
    fqqns = d.builds(lambda a, q: f"{a}::{q}", d.pick(*ADDRESSES), d.pick(*QUEUES))
    plain_client_names = d.either(*[d.either(d.pick(*(QUEUES + ADDRESSES)), fqqns)] * 3, adversarial_names)
    client_names = d.either(plain_client_names, plain_client_names,
                            d.builds(lambda p, n: p + n, d.pick(*PREFIXES), plain_client_names))
    prefixes = d.pick(*(PREFIXES + ("",)))
    settings_matches = d.pick(*(("#",) + ADDRESSES + ("",)))
    starting_addresses = d.lists(d.pick(*ADDRESSES), 0, 3).map(lambda names: list(dict.fromkeys(names)))
    starting_queues = d.lists(d.tuples(d.pick(*ADDRESSES), d.pick(*QUEUES), routing_types), 0, 4)
