"""Table-driven examples, shared by the three layers: one script, every layer, the same outcomes.

The expected outcomes here are written out by hand on purpose: they pin the
seed's three scenarios and the Artemis behaviours the rules cite, so a
change to the spec that alters them fails loudly. Each example runs through
the spec, the reference and the fast implementation.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from brokerspec.check.lockstep import LAYERS
from brokerspec.spec import get_profile
from brokerspec.spec.addressing import (
    AddressCreated,
    AddressDeleted,
    AddressExists,
    AddressHasQueues,
    AddressingCommand,
    AddressNotFound,
    Ambiguous,
    AmbiguousName,
    Attached,
    Configured,
    Consume,
    CreateAddress,
    CreateQueue,
    DeleteAddress,
    DeleteQueue,
    InvalidName,
    Lookup,
    NotFound,
    Outcome,
    QueueCreated,
    QueueDeleted,
    QueueExists,
    QueueNotFound,
    Rejected,
    Resolved,
    Routed,
    RoutingType,
    RoutingTypeNotAllowed,
    Send,
    SetAddressSettings,
    SetPrefix,
    apply,
    initial_state,
)

ANY = RoutingType.ANYCAST
MULTI = RoutingType.MULTICAST
BOTH = frozenset(RoutingType)


@dataclass(frozen=True)
class Example:
    """A named script with the outcome each step must have, under some profiles."""

    name: str
    profiles: tuple[str, ...]
    steps: tuple[tuple[AddressingCommand, Outcome], ...]
    overrides: tuple[tuple[str, str], ...] = ()


SEED_BROKER: tuple[tuple[AddressingCommand, Outcome], ...] = (
    (CreateAddress("address1", frozenset({ANY})), AddressCreated("address1")),
    (CreateAddress("address2", frozenset({ANY})), AddressCreated("address2")),
    (CreateQueue("address1", "q1", ANY), QueueCreated("address1", "q1")),
    (CreateQueue("address1", "q2", ANY), QueueCreated("address1", "q2")),
)

EXAMPLES = (
    Example("seed scenarios 1-3, then deleting one twin", ("seed",), SEED_BROKER + (
        (CreateQueue("address2", "q1", ANY), QueueCreated("address2", "q1")),
        (Lookup("q2"), Resolved("address1", "q2", ANY)),
        (Lookup("address2::q1"), Resolved("address2", "q1", ANY)),
        (Lookup("q1"), Ambiguous("q1", ("address1::q1", "address2::q1"))),
        (Consume("q1"), Rejected(AmbiguousName("q1", ("address1::q1", "address2::q1")))),
        (DeleteQueue("q1"), Rejected(AmbiguousName("q1", ("address1::q1", "address2::q1")))),
        (DeleteQueue("address1::q1"), QueueDeleted("address1", "q1")),
        (Lookup("q1"), Resolved("address2", "q1", ANY)),
        (Lookup("address1::q1"), NotFound("address1::q1")),
    )),
    Example("released Artemis rejects the second same-named queue; its queue query ignores the address part",
            ("artemis-2.11", "artemis-latest"), SEED_BROKER + (
                (CreateQueue("address2", "q1", ANY), Rejected(QueueExists("q1", "address1"))),
                (Lookup("q1"), Resolved("address1", "q1", ANY)),
                # ServerSessionImpl.executeQueueQuery -> PostOfficeImpl.getBinding: the queue part only.
                (Lookup("address2::q1"), Resolved("address1", "q1", ANY)),
                (Lookup("::q1"), Resolved("address1", "q1", ANY)),
                (Lookup("q1::"), NotFound("")),
                (Lookup("::"), NotFound("")),
                (Consume("address2::q1"), Attached("address1", "q1")),
                (Send("address2::q1"), Routed("address2")),
            )),
    Example("the seed checks the FQQN address part and refuses a second separator", ("seed",), SEED_BROKER + (
        (Lookup("::q1"), NotFound("::q1")),
        (Lookup("address1::q1::x"), NotFound("address1::q1::x")),
        (Send("a::b::c"), Rejected(InvalidName("b::c", "the name contains the FQQN separator '::'"))),
        (CreateAddress("A::X", frozenset({ANY})),
         Rejected(InvalidName("A::X", "the name contains the FQQN separator '::'"))),
    )),
    Example("Artemis strips an FQQN twice, reads FQQNs in management, routes a::b::c to a",
            ("artemis-2.11", "artemis-latest"), SEED_BROKER + (
                (Send("a::b::c"), Routed("a")),
                # QueueQueryTest / AddressQueryTest: the address part of an FQQN names the address.
                (CreateQueue("address2", "address2::q3", ANY), QueueCreated("address2", "q3")),
                (CreateAddress("A::X", frozenset({ANY})), AddressCreated("A")),
            )),
    Example("FullQualifiedQueueTest: a consumer on q1:: or :: finds no queue", ("artemis-2.11", "artemis-latest"), (
        (SetAddressSettings("#", auto_create_addresses=False, auto_create_queues=False), Configured()),
        (Consume("q1::"), Rejected(QueueNotFound("q1::"))),
        (Consume("::"), Rejected(QueueNotFound("::"))),
    )),
    Example("the JMS client refuses an empty queue part when it would auto-create", ("artemis-latest",), (
        (Consume("q1::"), Rejected(InvalidName("q1::", "AMQ229216 invalid queue name"))),
    )),
    Example("address deletion with and without force", ("seed", "artemis-latest"), SEED_BROKER + (
        (DeleteAddress("address1"), Rejected(AddressHasQueues("address1", ("address1::q1", "address1::q2")))),
        (DeleteAddress("address1", force=True), AddressDeleted("address1", ("address1::q1", "address1::q2"))),
        (Lookup("q1"), NotFound("q1")),
        (DeleteAddress("address1"), Rejected(AddressNotFound("address1"))),
    )),
    Example("routing types on create and send", ("artemis-latest",), (
        (CreateAddress("news", frozenset({MULTI})), AddressCreated("news")),
        (CreateQueue("news", "sub1", ANY), Rejected(RoutingTypeNotAllowed("news", ANY, frozenset({MULTI})))),
        (CreateQueue("news", "sub1", MULTI), QueueCreated("news", "sub1")),
        (CreateQueue("news", "sub2", MULTI), QueueCreated("news", "sub2")),
        (Send("news", MULTI), Routed("news", ("news::sub1", "news::sub2"))),
        (Send("news"), Routed("news", ("news::sub1", "news::sub2"))),
        (Send("news::sub1", ANY), Routed("news", created_queue=None)),
    )),
    Example("prefixes: the seed's longest wins and sets the routing type", ("seed",), (
        (SetPrefix("any", MULTI), Configured()),
        (SetPrefix("anycast://", ANY), Configured()),
        (Send("anycast://orders"), Routed("orders", (), ("orders::orders",), "orders", "orders::orders")),
        (Lookup("anycast://orders"), Resolved("orders", "orders", ANY)),
        (SetPrefix("", ANY), Rejected(InvalidName("", "the prefix is empty"))),
    )),
    Example("prefixes: Artemis tries them in hash-map order and accepts the empty one", ("artemis-latest",), (
        (SetPrefix("any", MULTI), Configured()),
        (SetPrefix("anycast://", ANY), Configured()),
        (Send("anycast://orders"), Routed("cast://orders", created_address="cast://orders")),
        (Lookup("anycast://orders"), NotFound("cast://orders")),
        (SetPrefix("", ANY), Configured()),
    )),
    Example("auto-creation on consume, and settings that forbid it", ("artemis-latest",), (
        (Consume("jobs", ANY), Attached("jobs", "jobs", "jobs", "jobs::jobs")),
        (SetAddressSettings("#", auto_create_addresses=False, auto_create_queues=False), Configured()),
        (Consume("other"), Rejected(QueueNotFound("other"))),
        (Send("other"), Routed("other")),
        (Consume("jobs", MULTI), Attached("jobs", "jobs")),
    )),
    Example("ARTEMIS-4512: a bare ANYCAST consumer may not take its address's MULTICAST queue", ("artemis-latest",), (
        (CreateAddress("t", BOTH), AddressCreated("t")),
        (CreateQueue("t", "t", MULTI), QueueCreated("t", "t")),
        (Consume("t", ANY), Rejected(QueueNotFound("t"))),
        (Consume("t::t", ANY), Attached("t", "t")),
    )),
    Example("before ARTEMIS-4512 it could", ("artemis-2.11",), (
        (CreateAddress("t", BOTH), AddressCreated("t")),
        (CreateQueue("t", "t", MULTI), QueueCreated("t", "t")),
        (Consume("t", ANY), Attached("t", "t")),
    )),
    Example("ARTEMIS-2966: an ANYCAST send reuses the address's queue", ("artemis-latest",), (
        (CreateAddress("orders", frozenset({ANY})), AddressCreated("orders")),
        (CreateQueue("orders", "o1", ANY), QueueCreated("orders", "o1")),
        (Send("orders", ANY), Routed("orders", (), ("orders::o1",))),
    )),
    Example("2.11's core producer creates nothing when it sends", ("artemis-2.11",), (
        (CreateAddress("orders", frozenset({ANY})), AddressCreated("orders")),
        (CreateQueue("orders", "o1", ANY), QueueCreated("orders", "o1")),
        (Send("orders", ANY), Routed("orders", (), ("orders::o1",))),
        (Send("news", MULTI), Routed("news")),
    )),
    Example("a send never refuses over a taken queue name", ("artemis-latest",), SEED_BROKER + (
        (Send("q1", ANY), Routed("q1", created_address="q1")),
    )),
    # Found fuzzing 2.40.0: ARTEMIS-3541 (2.20.0), a core session's deleteQueue forces the auto-deletion of
    # the queue's address once it is unbound, if it was auto-created; an address made by management stays.
    Example("the last queue of an auto-created address takes the address with it", ("artemis-latest",), (
        (Consume("a1::q1", MULTI), Attached("a1", "q1", created_address="a1", created_queue="a1::q1")),
        (CreateQueue("a1", "q2", MULTI), QueueCreated("a1", "q2")),
        (DeleteQueue("q1"), QueueDeleted("a1", "q1")),
        (CreateAddress("a1", BOTH), Rejected(AddressExists("a1"))),
        (DeleteQueue("q2"), QueueDeleted("a1", "q2")),
        (CreateAddress("a1", BOTH), AddressCreated("a1")),
        (CreateQueue("a1", "q3", ANY), QueueCreated("a1", "q3")),
        (DeleteQueue("q3"), QueueDeleted("a1", "q3")),
        (CreateAddress("a1", BOTH), Rejected(AddressExists("a1"))),
    )),
    Example("before 2.20 it stays", ("artemis-2.11",), (
        (Consume("a1::q1"), Attached("a1", "q1", created_address="a1", created_queue="a1::q1")),
        (DeleteQueue("q1"), QueueDeleted("a1", "q1")),
        (CreateAddress("a1", BOTH), Rejected(AddressExists("a1"))),
    )),
    # Found fuzzing 2.40.0: a miss names the part getBinding looked for from 2.40 (ARTEMIS-5302), the
    # once-stripped part before.
    Example("a queue query's miss names the part it looked for", ("artemis-2.11",), (
        (Lookup("address1::q1::x"), NotFound("q1::x")),
        (Lookup("anycast://a1::q1::x"), NotFound("q1::x")),
    )),
    Example("from 2.40 a miss names the part getBinding looked for", ("artemis-latest",), (
        (Lookup("address1::q1::x"), NotFound("x")),
        (Lookup("anycast://a1::q1::x"), NotFound("x")),
        (Lookup("a1::q1"), NotFound("q1")),
    )),
    # Found fuzzing 2.40.0: bindings are grouped by routing name (BindingsImpl), the address for an ANYCAST
    # queue and the queue's name for a MULTICAST one, so a MULTICAST queue named like its address is one more
    # member of the ANYCAST group for a message without a routing type; a typed message still finds its own.
    Example("a multicast queue named like its address joins the anycast group",
            ("seed", "artemis-2.11", "artemis-latest"), (
        (CreateAddress("a1", BOTH), AddressCreated("a1")),
        (CreateQueue("a1", "a1", MULTI), QueueCreated("a1", "a1")),
        (Send("a1"), Routed("a1", ("a1::a1",), ())),
        (CreateQueue("a1", "q1", ANY), QueueCreated("a1", "q1")),
        (CreateQueue("a1", "m", MULTI), QueueCreated("a1", "m")),
        (Send("a1"), Routed("a1", ("a1::m",), ("a1::a1", "a1::q1"))),
        (Send("a1", MULTI), Routed("a1", ("a1::a1", "a1::m"), ())),
        (Send("a1", ANY), Routed("a1", (), ("a1::q1",))),
    )),
    # Found fuzzing 2.11.0: 2.11 builds its QueueConfig before it looks the address up, and the builder refuses
    # the empty address; from 2.12 the address steps come first.
    Example("2.11 refuses the empty address before it looks for it", ("artemis-2.11",), (
        (CreateQueue("", "a1", ANY), Rejected(InvalidName("", "address can't be null or empty"))),
        (CreateQueue("", "", ANY), Rejected(InvalidName("", "AMQ229216 invalid queue name"))),
    )),
    Example("from 2.12 the empty address is looked for first", ("artemis-latest",), (
        (CreateQueue("", "a1", ANY), Rejected(AddressNotFound(""))),
    )),
    # Found fuzzing 2.40.0: an FQQN address makes a queue whose own name holds "::". The existence check
    # strips that name (getBinding) and AMQ229019 names the queue asked for on the blocking queue's address;
    # the same name again passes that check and meets the name map's guard (AMQ229018).
    Example("a queue named with the separator is checked by its last part", ("artemis-latest",), (
        (CreateAddress("a1", BOTH), AddressCreated("a1")),
        (CreateQueue("a1::q1::y", "q2", ANY), QueueCreated("a1", "q1::y")),
        (CreateQueue("a1::q1::y", "q2", MULTI), Rejected(QueueExists("q1::y", "a1"))),
        (CreateQueue("a1", "x", ANY), QueueCreated("a1", "x")),
        (CreateQueue("a1::q1::x", "q2", ANY), Rejected(QueueExists("q1::x", "a1"))),
        (Lookup("q1::y"), NotFound("y")),
    )),
)

CASES = [(e, p) for e in EXAMPLES for p in e.profiles]


@pytest.mark.parametrize(("example", "profile_name"), CASES, ids=[f"{e.name}[{p}]" for e, p in CASES])
@pytest.mark.parametrize("layer", ["spec", *LAYERS])
def test_example(example: Example, profile_name: str, layer: str) -> None:
    profile = get_profile(profile_name, example.overrides)
    state = initial_state(profile)
    subject = LAYERS[layer](profile) if layer != "spec" else None
    for number, (command, expected) in enumerate(example.steps, start=1):
        if subject is None:
            state, outcome = apply(state, command)
        else:
            outcome = subject.execute(command)
        assert outcome == expected, f"step {number}: {command!r}"
