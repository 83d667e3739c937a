"""Conformance cases for address resolution: the address model, FQQNs, lookup, ambiguity, send, consume and prefixes.

Introduction
------------
Each case is a short broker script whose expected outcomes the address-
resolution spec computes under every profile it names. Together the cases
cover:

* the three lookup scenarios of seed 000 (a bare name bound once, an FQQN,
  a bare name bound on two addresses) and what follows from them: a consumer
  or a delete by an ambiguous name is refused with the candidates, and
  deleting one of two same-named queues makes the bare name resolve again;
* the address model and its management operations (``ActiveMQServerImpl``
  ``createAddressInfo``, ``removeAddressInfo``, ``createQueue``,
  ``destroyQueue``): where a queue name must be unique (per address in the
  seed's design, across the broker in released Artemis, AMQ229019), routing
  types an address must allow, deleting an address with and without force,
  and the per-name count that a delete must decrement;
* FQQN parsing (``CompositeAddress``): detection by ``::`` anywhere, the
  split at the first ``::`` (ARTEMIS-1867), empty address or queue parts,
  ``::`` inside a queue part, an address ending in ``:`` that no FQQN can
  name, and names that only look alike (a decomposed accent, full-width
  colons), which are different names because nothing is normalised;
* consumers (``ServerSessionImpl.createConsumer`` and ``checkAutoCreate``):
  attaching, auto-creating queue and address, refusal when auto-creation is
  off, an FQQN whose queue lives on another address (AMQP
  ``DefaultSenderController.getMatchingQueue``), and the bare-name ANYCAST
  consumer on a MULTICAST queue refused since ARTEMIS-4512;
* sends: routing by routing type (``RoutingTest``), FQQN sends that reach one
  queue or none, auto-creation of addresses and queues, the ANYCAST send that
  stopped creating a queue next to existing ones in ARTEMIS-2966, untyped
  sends that never create a queue nor widen an address, and a taken queue name
  that makes a send create nothing rather than fail;
* per-address auto-creation settings with ``#`` as the catch-all, and
  acceptor routing-type prefixes (``anycastPrefix``, ``multicastPrefix``),
  stripped before the name is parsed, the longest one winning.

Several scripts end with a lookup, a create or a send whose only purpose is
to make the state visible: a broker under test shows nothing but outcomes,
so a wrong count, a stale index entry or a lost twin must surface as a wrong
answer to a later command.

Every case applies to all three profiles unless it says otherwise; where the
profiles differ (broker-wide or per-address queue names, ARTEMIS-2966,
ARTEMIS-4512, how Artemis reads names, sends and consumes) the spec computes
a different expected outcome for each. The Artemis profiles look an FQQN up by
its queue part alone; one case, ``core-protocol-fqqn-address-part-ignored``,
gives the seed's per-address names that address-blind lookup (``overrides``),
where a discarded address part can make an FQQN ambiguous.

Sources. The seed's scenarios come from seed 000 (``000_3ece6d51ae6d999d.txt``),
the design of FQQN support and ambiguity detection proposed for ARTEMIS-1093
(pull request 1172). The other cases follow the Apache ActiveMQ Artemis
classes, tests and JIRA issues that the rule table cites; a few pin down a
decision the spec takes where Artemis leaves the result open (which of two
matching prefixes wins) or differs on purpose (a refused command leaves no
auto-created address behind), and say so in their source.
"""

from __future__ import annotations

from brokerspec.spec.addressing import (
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

from . import Case, queries

SEED = "seed 000 (000_3ece6d51ae6d999d.txt)"
"""How a case cites the seed document on FQQN support and ambiguity detection (ARTEMIS-1093)."""

ANYCAST = RoutingType.ANYCAST
MULTICAST = RoutingType.MULTICAST
ANY = frozenset({ANYCAST})
MULTI = frozenset({MULTICAST})
BOTH = frozenset({ANYCAST, MULTICAST})

SEED_BROKER = (
    CreateAddress("address1", ANY),
    CreateAddress("address2", ANY),
    CreateQueue("address1", "q1", ANYCAST),
    CreateQueue("address1", "q2", ANYCAST),
    CreateQueue("address2", "q1", ANYCAST),
)
"""The seed's broker: queues ``address1::q1``, ``address1::q2`` and ``address2::q1``.

Under broker-wide queue names (the Artemis profiles) the third queue is
refused, and the scenarios show what the released broker answers instead.
"""

NFC_CAFE = "caf\u00e9"
"""``café`` written with the precomposed e-acute (NFC)."""

NFD_CAFE = "cafe\u0301"
"""``café`` written as ``e`` plus a combining acute accent (NFD): looks the same, is another name."""

THE = "th\u00e9"

# --- the seed's three scenarios ---------------------------------------------------------------------

SEED_CASES: tuple[Case, ...] = (
    Case(
        name="addressing/seed-bare-name-bound-once-resolves",
        summary="On the seed's broker the bare name q2, bound on one address only, resolves to address1::q2.",
        commands=(*SEED_BROKER, Lookup("q2"), Consume("q2")),
        rules=("ADDR-QUEUE-CREATE", "ADDR-QUEUE-EXISTS", "ADDR-LOOKUP-BARE-ONE", "ADDR-CONSUME-ATTACH"),
        source=f"{SEED}, scenario 1",
    ),
    Case(
        name="addressing/seed-fqqn-resolves-without-ambiguity-check",
        summary="On the seed's broker the FQQN address2::q1 names one queue outright, so it resolves although q1 "
                "is bound twice (under broker-wide names, where that queue was refused, it is not found).",
        commands=(*SEED_BROKER, Lookup("address2::q1"), Lookup("address1::q1"), Consume("address2::q1")),
        rules=("ADDR-FQQN-DETECT", "ADDR-LOOKUP-FQQN", "ADDR-CONSUME-ATTACH", "ADDR-CONSUME-FQQN-ELSEWHERE"),
        source=f"{SEED}, scenario 2",
    ),
    Case(
        name="addressing/seed-bare-name-ambiguous-across-addresses",
        summary="On the seed's broker the bare name q1, bound on two addresses, is ambiguous: a lookup lists both "
                "FQQNs, and a consumer or a delete by that name is refused with the same candidates.",
        commands=(*SEED_BROKER, Lookup("q1"), Consume("q1"), DeleteQueue("q1"), Lookup("q1")),
        rules=("ADDR-LOOKUP-BARE-MANY", "ADDR-CONSUME-AMBIGUOUS", "ADDR-QUEUE-DELETE-AMBIGUOUS",
               "ADDR-REJECT-ATOMIC"),
        source=f"{SEED}, scenario 3",
    ),
    Case(
        name="addressing/seed-delete-one-twin-makes-bare-name-resolve",
        summary="Deleting address1::q1 by its FQQN leaves address2::q1 alone and brings q1's count down to one, "
                "so the bare name resolves to the survivor; deleting that too makes q1 not found.",
        commands=(*SEED_BROKER, DeleteQueue("address1::q1"), Lookup("address2::q1"), Lookup("q1"),
                  DeleteQueue("q1"), Lookup("q1")),
        rules=("ADDR-QUEUE-DELETE", "ADDR-LOOKUP-BARE-ONE", "ADDR-LOOKUP-BARE-NONE", "ADDR-LOOKUP-FQQN"),
        source=f"{SEED}, scenarios 2 and 3 (the count kept in uniqueNameMap); "
               "Artemis ActiveMQServerImpl.destroyQueue",
    ),
    Case(
        name="addressing/bare-name-ambiguous-after-second-bind",
        summary="A bare name resolves while one address has a queue of that name and becomes ambiguous when a "
                "second address binds one (per-address names), or the second bind is refused naming the first "
                "address (broker-wide names).",
        commands=(
            CreateAddress("a1", BOTH),
            CreateAddress("a2", BOTH),
            CreateQueue("a1", "q1", ANYCAST),
            Lookup("q1"),
            CreateQueue("a2", "q1", MULTICAST),
            Lookup("q1"),
            Lookup("a2::q1"),
        ),
        rules=("ADDR-LOOKUP-BARE-ONE", "ADDR-LOOKUP-BARE-MANY", "ADDR-QUEUE-EXISTS", "ADDR-QUEUE-CREATE"),
        source=f"{SEED}, the uniqueNameMap count; Artemis ActiveMQServerImpl.createQueue, AMQ229019 "
               "(ARTEMIS-3657 manual text)",
    ),
)

# --- the address model and its management operations ------------------------------------------------

MODEL_CASES: tuple[Case, ...] = (
    Case(
        name="addressing/address-exists-until-deleted",
        summary="Creating an existing address is refused and keeps its routing types; an address without queues "
                "is deleted without force, a second delete finds nothing, and the name can then be created anew.",
        commands=(
            CreateAddress("orders", ANY),
            CreateAddress("orders", MULTI),
            CreateQueue("orders", "o1", MULTICAST),
            DeleteAddress("orders"),
            DeleteAddress("orders", force=True),
            CreateAddress("orders", MULTI),
            CreateQueue("orders", "o1", MULTICAST),
        ),
        rules=("ADDR-ADDRESS-CREATE", "ADDR-ADDRESS-EXISTS", "ADDR-ADDRESS-DELETE", "ADDR-ADDRESS-DELETE-MISSING",
               "ADDR-REJECT-ATOMIC"),
        source="Artemis ActiveMQServerImpl.createAddressInfo, addressAlreadyExists AMQ229204; removeAddressInfo, "
               "addressDoesNotExist AMQ229203",
    ),
    Case(
        name="addressing/queue-routing-type-must-be-allowed-by-address",
        summary="A queue takes one routing type its address allows: an address with no routing types takes no "
                "queue, a MULTICAST address refuses an ANYCAST queue, and an address with both takes either.",
        commands=(
            CreateAddress("none", frozenset()),
            CreateQueue("none", "n", ANYCAST),
            CreateQueue("none", "m", MULTICAST),
            CreateAddress("prices", MULTI),
            CreateQueue("prices", "ticker", ANYCAST),
            CreateQueue("prices", "audit", MULTICAST),
            CreateAddress("mixed", BOTH),
            CreateQueue("mixed", "x", ANYCAST),
            CreateQueue("mixed", "y", MULTICAST),
            Lookup("ticker"),
        ),
        rules=("ADDR-MODEL", "ADDR-QUEUE-ROUTING-TYPE", "ADDR-QUEUE-CREATE", "ADDR-LOOKUP-BARE-NONE"),
        source="Artemis user manual, address-model; ActiveMQServerImpl.createQueue, invalidRoutingTypeForAddress "
               "AMQ229207",
    ),
    Case(
        name="addressing/queue-needs-an-existing-address",
        summary="Creating a queue on a missing address is refused and creates neither queue nor address.",
        commands=(
            CreateQueue("ghost", "g", ANYCAST),
            Lookup("g"),
            CreateAddress("ghost", ANY),
            CreateQueue("ghost", "g", ANYCAST),
            Lookup("ghost::g"),
        ),
        rules=("ADDR-QUEUE-NO-ADDRESS", "ADDR-REJECT-ATOMIC", "ADDR-ADDRESS-CREATE", "ADDR-QUEUE-CREATE"),
        source="Artemis ActiveMQServerImpl.createQueue, addressDoesNotExist AMQ229203",
    ),
    Case(
        name="addressing/queue-name-taken-on-same-address",
        summary="A second queue of the same name on the same address is refused under every profile, naming the "
                "address that holds it, even with another routing type.",
        commands=(
            CreateAddress("orders", BOTH),
            CreateQueue("orders", "eu", ANYCAST),
            CreateQueue("orders", "eu", ANYCAST),
            CreateQueue("orders", "eu", MULTICAST),
            Lookup("eu"),
        ),
        rules=("ADDR-QUEUE-EXISTS", "ADDR-QUEUE-CREATE", "ADDR-LOOKUP-BARE-ONE"),
        source="Artemis ActiveMQServerImpl.createQueue, queueAlreadyExists AMQ229019; seed 000 BindingKey",
    ),
    Case(
        name="addressing/create-refuses-empty-and-separator-names",
        summary="An empty name or one containing '::' is refused as an address or a queue name, before the "
                "queue's address is even looked at, while a single ':' is an ordinary character.",
        commands=(
            CreateAddress("", ANY),
            CreateAddress("a::b", ANY),
            CreateAddress("a", ANY),
            CreateQueue("a", "", ANYCAST),
            CreateQueue("a", "x::y", ANYCAST),
            CreateQueue("missing", "", ANYCAST),
            CreateQueue("a", "a:", ANYCAST),
            Lookup("a:"),
        ),
        rules=("ADDR-NAME-EMPTY", "ADDR-NAME-SEPARATOR", "ADDR-ADDRESS-CREATE", "ADDR-QUEUE-CREATE"),
        source="Artemis ActiveMQServerImpl.createQueue, invalidQueueName AMQ229216; user manual, address-model "
               "('::' reserved for FQQNs)",
    ),
    Case(
        name="addressing/delete-address-with-queues-needs-force",
        summary="An address with queues cannot be deleted unless forced; a forced delete removes its queues, frees "
                "their names for other addresses, and a second delete finds no address.",
        commands=(
            CreateAddress("a1", ANY),
            CreateAddress("a2", ANY),
            CreateQueue("a1", "q1", ANYCAST),
            DeleteAddress("a1"),
            Lookup("q1"),
            DeleteAddress("a1", force=True),
            Lookup("q1"),
            Lookup("a1::q1"),
            CreateQueue("a2", "q1", ANYCAST),
            DeleteAddress("a1"),
        ),
        rules=("ADDR-ADDRESS-DELETE-HAS-QUEUES", "ADDR-ADDRESS-DELETE", "ADDR-ADDRESS-DELETE-MISSING",
               "ADDR-QUEUE-CREATE", "ADDR-LOOKUP-BARE-NONE"),
        source="Artemis ActiveMQServerImpl.removeAddressInfo(address, auth, force), AMQ229205 and AMQ229203",
    ),
    Case(
        name="addressing/force-delete-keeps-twin-on-other-address",
        summary="Force-deleting address1 removes address1::q1 only: under per-address names the twin "
                "address2::q1 survives and the bare name q1 resolves to it.",
        commands=(*SEED_BROKER, DeleteAddress("address1", force=True), Lookup("q1"), Lookup("address2::q1"),
                  Lookup("q2"), CreateQueue("address2", "q2", ANYCAST)),
        rules=("ADDR-ADDRESS-DELETE", "ADDR-LOOKUP-BARE-ONE", "ADDR-LOOKUP-FQQN", "ADDR-QUEUE-CREATE"),
        source=f"{SEED} broker; Artemis ActiveMQServerImpl.removeAddressInfo with force",
    ),
)

# --- delete and lookup ----------------------------------------------------------------------------

DELETE_CASES: tuple[Case, ...] = (
    Case(
        name="addressing/delete-by-bare-name-forgets-the-name",
        summary="After a queue is deleted by its bare name, the name and its FQQN are not found, a second delete "
                "is refused, and the name can be used again.",
        commands=(
            CreateAddress("a1", ANY),
            CreateQueue("a1", "q1", ANYCAST),
            DeleteQueue("q1"),
            Lookup("q1"),
            Lookup("a1::q1"),
            DeleteQueue("q1"),
            Consume("q1", ANYCAST),
        ),
        rules=("ADDR-QUEUE-DELETE", "ADDR-LOOKUP-BARE-NONE", "ADDR-QUEUE-DELETE-MISSING", "ADDR-LOOKUP-FQQN",
               "ADDR-CONSUME-AUTO-QUEUE"),
        source=f"{SEED} (the count is decremented when a binding goes); Artemis ActiveMQServerImpl.destroyQueue, "
               "noSuchQueue AMQ229017",
    ),
    Case(
        name="addressing/delete-by-fqqn-forgets-the-fqqn",
        summary="After a queue is deleted by its FQQN, neither the FQQN nor the bare name finds it, and a "
                "consumer by the FQQN creates a fresh queue.",
        commands=(
            CreateAddress("a1", ANY),
            CreateQueue("a1", "q1", ANYCAST),
            Lookup("a1::q1"),
            DeleteQueue("a1::q1"),
            Lookup("a1::q1"),
            Lookup("q1"),
            DeleteQueue("a1::q1"),
            Consume("a1::q1", ANYCAST),
        ),
        rules=("ADDR-QUEUE-DELETE", "ADDR-LOOKUP-FQQN", "ADDR-QUEUE-DELETE-MISSING", "ADDR-CONSUME-AUTO-QUEUE"),
        source="Artemis ActiveMQServerImpl.destroyQueue resolves through getBinding; AmqpFullyQualifiedNameTest",
    ),
    Case(
        name="addressing/lookup-of-unknown-names",
        summary="A bare name nobody bound, the empty name and an FQQN on an unknown address are not found, and a "
                "lookup creates nothing.",
        commands=(
            Lookup("nothing"),
            Lookup(""),
            Lookup("nowhere::nothing"),
            DeleteQueue("nothing"),
            CreateAddress("nothing", ANY),
        ),
        rules=("ADDR-LOOKUP-BARE-NONE", "ADDR-LOOKUP-FQQN", "ADDR-QUEUE-DELETE-MISSING", "ADDR-ADDRESS-CREATE"),
        source=f"{SEED} (a count of 0 means no such queue)",
    ),
    Case(
        name="addressing/last-queue-of-an-auto-created-address-takes-it-along",
        summary="From 2.20 deleting the last queue of an address a consumer auto-created deletes the address too; "
                "an address made by management stays, and so does any address before 2.20.",
        commands=(
            Consume("a1::q1", ANYCAST),
            CreateQueue("a1", "q2", ANYCAST),
            DeleteQueue("q1"),
            CreateAddress("a1", ANY),
            DeleteQueue("q2"),
            CreateAddress("a1", ANY),
            CreateQueue("a1", "q3", ANYCAST),
            DeleteQueue("q3"),
            CreateAddress("a1", ANY),
        ),
        rules=("ADDR-QUEUE-DELETE", "ADDR-CONSUME-AUTO-QUEUE", "ADDR-QUEUE-CREATE", "ADDR-ADDRESS-EXISTS",
               "ADDR-ADDRESS-CREATE"),
        source="Artemis ARTEMIS-3541 (2.20.0): ServerSessionImpl.deleteQueue passes forceAutoDeleteAddress to "
               "ActiveMQServerImpl.destroyQueue; found fuzzing 2.40.0",
    ),
)

# --- FQQN parsing ---------------------------------------------------------------------------------

FQQN_CASES: tuple[Case, ...] = (
    Case(
        name="addressing/queue-named-with-the-separator-is-checked-by-its-last-part",
        summary="An FQQN address argument names a queue whose own name holds '::'; the existence check strips "
                "that name, so another create of it is refused by the name map and one over a queue named like "
                "its last part names the queue asked for; a lookup of it looks for its last part.",
        commands=(
            CreateAddress("a1", BOTH),
            CreateQueue("a1::q1::y", "q2", ANYCAST),
            CreateQueue("a1::q1::y", "q2", MULTICAST),
            CreateQueue("a1", "x", ANYCAST),
            CreateQueue("a1::q1::x", "q2", ANYCAST),
            Lookup("q1::y"),
        ),
        rules=("ADDR-CREATE-FQQN", "ADDR-QUEUE-EXISTS", "ADDR-QUEUE-CREATE", "ADDR-LOOKUP-FQQN-IGNORED"),
        source="Artemis QueueConfiguration.setAddress, ActiveMQServerImpl.createQueue (queueAlreadyExists AMQ229019), "
               "SimpleAddressManager.addBinding (bindingAlreadyExists AMQ229018); found fuzzing 2.40.0",
        profiles=("artemis-latest",),
    ),
    Case(
        name="addressing/a-query-miss-names-the-part-it-looked-for",
        summary="A queue query that finds nothing for a name with two '::' names its once-stripped queue part "
                "under 2.11 and, from 2.40, the part getBinding looked for.",
        commands=(
            Lookup("a1::q1::x"),
            Lookup("anycast://a1::q1::x"),
        ),
        rules=("ADDR-LOOKUP-TWICE",),
        source="Artemis ActiveMQServerImpl.queueQuery; ARTEMIS-5302 (2.40.0) builds the answer from "
               "QueueConfiguration.of(realName), whose setName parses the name again; found fuzzing 2.40.0",
        profiles=("artemis-2.11", "artemis-latest"),
    ),
    Case(
        name="addressing/empty-address-refused-before-or-after-it-is-looked-for",
        summary="A queue on the empty address: 2.11 refuses the address as invalid before it looks for it, "
                "later releases find no such address first.",
        commands=(
            CreateQueue("", "a1", ANYCAST),
            CreateQueue("", "", ANYCAST),
        ),
        rules=("ADDR-ADDRESS-EMPTY", "ADDR-QUEUE-NO-ADDRESS", "ADDR-NAME-EMPTY"),
        source="Artemis 2.11 ActiveMQServerImpl.createQueue (QueueConfig.builderWith validates before "
               "getAddressInfo); QueueConfiguration from 2.12 (ARTEMIS-2692); found fuzzing 2.11.0",
        profiles=("artemis-2.11", "artemis-latest"),
    ),
    Case(
        name="addressing/core-protocol-fqqn-address-part-ignored",
        summary="With the FQQN address check off (Artemis's queue query), an FQQN's address part is discarded: "
                "nowhere::q2 finds address1::q2, address2::q1 names the ambiguous q1, and a queue part bound "
                "nowhere is not found; once q2 is deleted, no FQQN finds it.",
        commands=(*SEED_BROKER, Lookup("nowhere::q2"), Lookup("address2::q1"), Lookup("address1::absent"),
                  Consume("nowhere::q2"), DeleteQueue("address1::q2"), Lookup("address1::q2"), Lookup("q2")),
        rules=("ADDR-LOOKUP-FQQN-IGNORED", "ADDR-FQQN-DETECT", "ADDR-QUEUE-DELETE"),
        overrides=(("addressing.fqqn_checks_address", "false"),),
        source="Artemis core SimpleAddressManager.getBinding, ServerSessionImpl.createConsumer; "
               "FullQualifiedQueueTest.testSpecialCase",
    ),
    Case(
        name="addressing/fqqn-splits-at-first-separator",
        summary="'a::b::c' is address 'a' and queue 'b::c', a queue name no queue can have: a lookup finds "
                "nothing and a consumer or a typed send is refused for the queue part 'b::c'.",
        commands=(
            CreateAddress("a", BOTH),
            CreateQueue("a", "c", ANYCAST),
            Lookup("a::b::c"),
            Consume("a::b::c", ANYCAST),
            Send("a::b::c", ANYCAST),
            DeleteQueue("a::b::c"),
            Lookup("c"),
        ),
        rules=("ADDR-FQQN-SPLIT", "ADDR-FQQN-DETECT", "ADDR-NAME-SEPARATOR", "ADDR-LOOKUP-FQQN",
               "ADDR-QUEUE-DELETE-MISSING"),
        source="Artemis CompositeAddress.extractAddressName/extractQueueName (indexOf, ARTEMIS-1867); "
               "CompositeAddressTest.testSplit",
    ),
    Case(
        name="addressing/fqqn-empty-parts",
        summary="'address::', '::queue' and '::' have empty parts: lookups find nothing, sends are refused as "
                "invalid names, and a consumer by '::queue' is refused as not found where the name is bound "
                "elsewhere (broker-wide names) or as an invalid name (per-address names).",
        commands=(
            CreateAddress("address", MULTI),
            CreateQueue("address", "queue", MULTICAST),
            Lookup("address::"),
            Lookup("::queue"),
            Send("::queue"),
            Send("address::", MULTICAST),
            Consume("address::"),
            Consume("::queue"),
            Consume("::"),
            Consume(":::"),
        ),
        rules=("ADDR-FQQN-SPLIT", "ADDR-NAME-EMPTY", "ADDR-LOOKUP-FQQN", "ADDR-CONSUME-FQQN-ELSEWHERE"),
        source="Artemis CompositeAddressTest.testSplit; FullQualifiedQueueTest.testSpecialCase; "
               "AmqpFullyQualifiedNameTest.testQueueSpecial",
    ),
    Case(
        name="addressing/fqqn-wrong-address-not-found",
        summary="With the address checked, the FQQN a::q1 finds nothing although q1 exists on address1, and a "
                "delete by it is refused and leaves address1::q1 in place.",
        commands=(
            CreateAddress("address1", ANY),
            CreateQueue("address1", "q1", ANYCAST),
            CreateAddress("a", BOTH),
            Lookup("a::q1"),
            DeleteQueue("a::q1"),
            Lookup("address1::q1"),
            Lookup("q1"),
        ),
        rules=("ADDR-LOOKUP-FQQN", "ADDR-QUEUE-DELETE-MISSING", "ADDR-LOOKUP-BARE-ONE"),
        source="Artemis AMQP DefaultSenderController.getMatchingQueue; AmqpFullyQualifiedNameTest",
    ),
    Case(
        name="addressing/fqqn-wrong-address-consumer",
        summary="A consumer by the FQQN a::q1, with q1 on address1, gets a new queue a::q1 under per-address "
                "names, which makes the bare name q1 ambiguous, and is refused as not found under broker-wide "
                "names.",
        commands=(
            CreateAddress("address1", ANY),
            CreateQueue("address1", "q1", ANYCAST),
            CreateAddress("a", BOTH),
            Consume("a::q1"),
            Lookup("q1"),
            Lookup("a::q1"),
        ),
        rules=("ADDR-CONSUME-FQQN-ELSEWHERE", "ADDR-CONSUME-AUTO-QUEUE", "ADDR-LOOKUP-BARE-MANY",
               "ADDR-AUTO-QUEUE"),
        source="Artemis AMQP DefaultSenderController.getMatchingQueue, "
               "AmqpFullyQualifiedNameTest.testConsumeQueueToFQQNWrongQueueAttachedToAnotherAddress; seed 000",
    ),
    Case(
        name="addressing/fqqn-consumer-on-missing-address-auto-creates-both",
        summary="A consumer by the FQQN jobs::w with no address jobs creates the address and the queue, with the "
                "default routing type MULTICAST, and attaches; the same FQQN then resolves.",
        commands=(
            Consume("jobs::w"),
            Lookup("jobs::w"),
            Lookup("w"),
            Send("jobs", MULTICAST),
            Consume("jobs::w"),
        ),
        rules=("ADDR-CONSUME-AUTO-QUEUE", "ADDR-AUTO-ADDRESS", "ADDR-SETTINGS", "ADDR-SEND-ROUTE",
               "ADDR-CONSUME-ATTACH"),
        source="Artemis ServerSessionImpl.checkAutoCreate (FQQN: queue part on address part); AddressSettings "
               "defaults",
    ),
    Case(
        name="addressing/colon-ending-address-unreachable-by-fqqn",
        summary="The queue r on the address 'a:' is spelled 'a:::r', which parses as queue ':r' on 'a': the FQQN "
                "never finds r, the bare name does, and a consumer by 'a:::r' creates ':r' on 'a'.",
        commands=(
            CreateAddress("a:", ANY),
            CreateQueue("a:", "r", ANYCAST),
            Lookup("a:::r"),
            DeleteQueue("a:::r"),
            Lookup("r"),
            Consume("a:::r", ANYCAST),
            Lookup("a:::r"),
            Lookup(":r"),
            DeleteQueue("a:::r"),
            Lookup("r"),
        ),
        rules=("ADDR-FQQN-SPLIT", "ADDR-LOOKUP-FQQN", "ADDR-LOOKUP-BARE-ONE", "ADDR-CONSUME-AUTO-QUEUE",
               "ADDR-QUEUE-DELETE"),
        source="Artemis CompositeAddress.toFullyQualified and extractAddressName (first '::'); "
               "CompositeAddressTest.testSplit",
    ),
    Case(
        name="addressing/lookalike-decomposed-accent-is-another-address",
        summary="An FQQN that spells its address with e and a combining acute accent (U+0301) is not the "
                "precomposed one on the broker: it is not found, and a consumer by it creates a second, "
                "identical-looking address under per-address names, making the queue's bare name ambiguous, or "
                "is refused under broker-wide names.",
        commands=(
            CreateAddress(NFC_CAFE, ANY),
            CreateQueue(NFC_CAFE, THE, ANYCAST),
            Lookup(f"{NFC_CAFE}::{THE}"),
            Lookup(f"{NFD_CAFE}::{THE}"),
            Consume(f"{NFD_CAFE}::{THE}"),
            Lookup(THE),
            Send(f"{NFD_CAFE}::{THE}"),
        ),
        rules=("ADDR-FQQN-SPLIT", "ADDR-LOOKUP-FQQN", "ADDR-CONSUME-AUTO-QUEUE", "ADDR-CONSUME-FQQN-ELSEWHERE",
               "ADDR-SEND-FQQN"),
        source="Artemis CompositeAddress (names compared as strings, never normalised); seed 000 scenario 3",
    ),
    Case(
        name="addressing/lookalike-fullwidth-colons-make-a-bare-name",
        summary="A name that looks like a::q but is written with two FULLWIDTH COLONs (U+FF1A) is a bare name: "
                "it does not find a::q, and a consumer by it creates an address and a queue of that very name.",
        commands=(
            CreateAddress("a", ANY),
            CreateQueue("a", "q", ANYCAST),
            Lookup("a\uff1a\uff1aq"),
            Consume("a\uff1a\uff1aq"),
            Lookup("a\uff1a\uff1aq"),
            Lookup("a::q"),
        ),
        rules=("ADDR-FQQN-DETECT", "ADDR-LOOKUP-BARE-NONE", "ADDR-CONSUME-AUTO-QUEUE", "ADDR-LOOKUP-BARE-ONE"),
        source="Artemis CompositeAddress.isFullyQualified (only the ASCII '::' counts)",
    ),
)

# --- consumers ------------------------------------------------------------------------------------

CONSUME_CASES: tuple[Case, ...] = (
    Case(
        name="addressing/consume-bare-name-auto-creates-queue-and-address",
        summary="A consumer by an unknown bare name creates an address and a MULTICAST queue of that name and "
                "attaches; a second consumer attaches to the same queue without creating anything.",
        commands=(
            Consume("orders"),
            Consume("orders"),
            Lookup("orders"),
            Lookup("orders::orders"),
            Send("orders"),
        ),
        rules=("ADDR-CONSUME-AUTO-QUEUE", "ADDR-CONSUME-ATTACH", "ADDR-AUTO-ADDRESS", "ADDR-SETTINGS",
               "ADDR-SEND-ROUTE"),
        source="Artemis ServerSessionImpl.createConsumer and checkAutoCreate; AddressSettings defaults",
    ),
    Case(
        name="addressing/anycast-consumer-on-multicast-queue",
        summary="A bare-name ANYCAST consumer on a MULTICAST queue attaches before ARTEMIS-4512 and is refused "
                "after it; by FQQN, with MULTICAST or with no routing type it attaches everywhere.",
        commands=(
            CreateAddress("news", MULTI),
            CreateQueue("news", "news", MULTICAST),
            Consume("news", ANYCAST),
            Consume("news::news", ANYCAST),
            Consume("news", MULTICAST),
            Consume("news"),
        ),
        rules=("ADDR-CONSUME-MULTICAST-QUEUE", "ADDR-CONSUME-ATTACH"),
        source="Artemis ARTEMIS-4512 (2.32.0)",
    ),
    Case(
        name="addressing/consume-refused-when-queue-auto-creation-off",
        summary="With auto-create-queues off, a consumer by an unknown name is refused as not found and nothing "
                "is created, while an existing queue still takes consumers.",
        commands=(
            SetAddressSettings("#", auto_create_queues=False),
            CreateAddress("jobs", ANY),
            CreateQueue("jobs", "j", ANYCAST),
            Consume("orders"),
            Consume("jobs::w"),
            Consume("j"),
            CreateAddress("orders", ANY),
        ),
        rules=("ADDR-CONSUME-NO-QUEUE", "ADDR-CONFIG-SETTINGS", "ADDR-CONSUME-ATTACH", "ADDR-REJECT-ATOMIC"),
        source="Artemis ServerSessionImpl.createConsumer, noSuchQueue AMQ229017; address-settings "
               "auto-create-queues",
    ),
    Case(
        name="addressing/consume-auto-create-obeys-address-settings",
        summary="With auto-create-addresses off, a consumer needing a new address is refused, one needing a "
                "routing type its address lacks is refused, and one whose type the address allows creates the "
                "queue; a refused consumer leaves no address behind.",
        commands=(
            SetAddressSettings("#", auto_create_addresses=False),
            Consume("x"),
            CreateAddress("jobs", ANY),
            Consume("jobs::w"),
            Consume("jobs::w", ANYCAST),
            CreateAddress("x", MULTI),
            Consume("x"),
        ),
        rules=("ADDR-AUTO-NO-ADDRESS", "ADDR-AUTO-ROUTING-TYPE", "ADDR-CONSUME-AUTO-QUEUE", "ADDR-REJECT-ATOMIC",
               "ADDR-CONFIG-SETTINGS"),
        source="Artemis ServerSessionImpl.checkAutoCreate; the spec's ADDR-REJECT-ATOMIC decision (Artemis may "
               "keep an address it auto-created before the queue was refused)",
    ),
    Case(
        name="addressing/send-auto-creates-queue-on-existing-address",
        summary="With auto-create-addresses off but auto-create-queues on, an ANYCAST send to an existing "
                "ANYCAST address creates the queue named after the address, and a MULTICAST send there is "
                "refused for the routing type the address lacks.",
        commands=(
            SetAddressSettings("#", auto_create_addresses=False),
            CreateAddress("orders", ANY),
            Send("orders", ANYCAST),
            Lookup("orders"),
            Send("orders", MULTICAST),
        ),
        rules=("ADDR-SEND-AUTO-QUEUE", "ADDR-AUTO-ROUTING-TYPE", "ADDR-CONFIG-SETTINGS", "ADDR-LOOKUP-BARE-ONE"),
        source="Artemis ServerSessionImpl.checkAutoCreate (the address exists, so only its routing type is "
               "checked before the queue is created); address-settings auto-create-addresses",
    ),
    Case(
        name="addressing/consume-widens-address-to-queue-routing-type",
        summary="A consumer that auto-creates a MULTICAST queue on an ANYCAST-only address adds MULTICAST to the "
                "address, so a later MULTICAST queue can be created there.",
        commands=(
            CreateAddress("jobs", ANY),
            CreateQueue("jobs", "m0", MULTICAST),
            Consume("jobs::w"),
            CreateQueue("jobs", "m1", MULTICAST),
            Send("jobs", MULTICAST),
        ),
        rules=("ADDR-CONSUME-AUTO-QUEUE", "ADDR-AUTO-ROUTING-TYPE", "ADDR-QUEUE-ROUTING-TYPE", "ADDR-SEND-ROUTE"),
        source="Artemis ServerSessionImpl.checkAutoCreate (routing type added to an existing address)",
    ),
    Case(
        name="addressing/jms-consumer-with-a-prefix-looks-for-the-name-given",
        summary="The JMS client looks for its queue by the name it was given, prefix and all, so it never finds "
                "it: it attaches to an existing MULTICAST queue with no ARTEMIS-4512 check, and with "
                "auto-create-queues off it is refused although the queue exists.",
        commands=(
            SetPrefix("any", MULTICAST),
            Consume("anycast://q2", ANYCAST),
            Consume("anycast://q2"),
            Consume("cast://q2"),
            SetAddressSettings("#", auto_create_queues=False),
            Consume("anycast://q2"),
            Consume("cast://q2"),
        ),
        rules=("ADDR-CONSUME-AUTO-QUEUE", "ADDR-CONSUME-NO-QUEUE", "ADDR-PREFIX-STRIP"),
        source="Artemis AutoCreateUtil.autoCreateQueue (getCoreQueueName of the destination as given), 2.11's "
               "ActiveMQSession.createConsumer alike; found fuzzing Artemis 2.40.0",
        profiles=("artemis-2.11", "artemis-latest"),
    ),
    Case(
        name="addressing/core-consumer-by-queue-part-empty-parts-not-found",
        summary="A core-client consumer attaches by the FQQN's queue part alone ('::q1' and 'other::q1' reach q1) "
                "and creates nothing: 'q1::' and '::' name no queue and are refused as missing, not as invalid.",
        commands=(
            CreateAddress("q1", frozenset({ANYCAST})),
            CreateQueue("q1", "q1", ANYCAST),
            Consume("::q1"),
            Consume("other::q1", MULTICAST),
            Consume("q1::"),
            Consume("::"),
            Consume("missing", ANYCAST),
            Lookup("missing"),
        ),
        rules=("ADDR-CONSUME-CORE",),
        source="Artemis FullQualifiedQueueTest.testSpecialCase; ServerSessionImpl.createConsumer (getBinding, "
               "AMQ229017)",
        overrides=(("addressing.consumer", "CORE"),),
    ),
)

# --- sends ----------------------------------------------------------------------------------------

SEND_CASES: tuple[Case, ...] = (
    Case(
        name="addressing/send-routes-by-routing-type",
        summary="On an address with two MULTICAST queues and two ANYCAST queues, a MULTICAST message is copied to "
                "both MULTICAST queues, an ANYCAST one goes to one of the ANYCAST queues, an untyped one does both.",
        commands=(
            CreateAddress("mixed", BOTH),
            CreateQueue("mixed", "m1", MULTICAST),
            CreateQueue("mixed", "m2", MULTICAST),
            CreateQueue("mixed", "mixed", ANYCAST),
            CreateQueue("mixed", "a2", ANYCAST),
            Send("mixed", MULTICAST),
            Send("mixed", ANYCAST),
            Send("mixed"),
        ),
        rules=("ADDR-SEND-ROUTE", "ADDR-SEND-AUTO-QUEUE"),
        source="Artemis LocalQueueBinding.route; RoutingTest.testAnycastMessageRoutingExclusivity, "
               "testMulticastMessageRoutingExclusivity, testAmbiguousMessageRouting",
    ),
    Case(
        name="addressing/untyped-send-creates-address-only",
        summary="An untyped send to a missing address creates it with the default routing type MULTICAST and "
                "creates no queue; the new address then refuses an ANYCAST queue.",
        commands=(
            Send("fresh"),
            Send("fresh"),
            Lookup("fresh"),
            CreateQueue("fresh", "f", ANYCAST),
            CreateQueue("fresh", "g", MULTICAST),
            Send("fresh"),
        ),
        rules=("ADDR-SEND-UNTYPED", "ADDR-AUTO-ADDRESS", "ADDR-SETTINGS", "ADDR-SEND-ROUTE",
               "ADDR-QUEUE-ROUTING-TYPE"),
        source="Artemis PostOfficeImpl.checkAddress (ARTEMIS-4089, 2.28.0); ServerSessionImpl.checkAutoCreate; "
               "AddressSettings defaults",
    ),
    Case(
        name="addressing/core-send-creates-the-address-part-only",
        summary="A core producer's typed send creates, at routing time, the missing address and (ANYCAST) the queue "
                "named like it, never an FQQN's queue part; an untyped send creates nothing; 2.11 creates nothing.",
        commands=(
            Send("orders", ANYCAST),
            Send("news", MULTICAST),
            Send("plain"),
            Send("jobs::j1", ANYCAST),
            Lookup("orders"),
            Lookup("j1"),
            Lookup("jobs"),
            Send("jobs::jobs", ANYCAST),
        ),
        rules=("ADDR-SEND-CORE", "ADDR-SEND-ROUTE", "ADDR-SEND-FQQN"),
        source="Artemis PostOfficeImpl.checkAddress and simpleRoute (ARTEMIS-4089, 2.28.0); 2.11.0 "
               "ServerSessionImpl.doSend (routes only); checked against real Artemis 2.11.0 and 2.40.0",
    ),
    Case(
        name="addressing/untyped-send-never-widens-address",
        summary="An untyped send leaves an ANYCAST-only address as it is and reaches its queue, while a MULTICAST "
                "send adds MULTICAST to the address even though it reaches no queue.",
        commands=(
            CreateAddress("jobs", ANY),
            CreateQueue("jobs", "j", ANYCAST),
            Send("jobs"),
            CreateQueue("jobs", "m", MULTICAST),
            Send("jobs::j"),
            Send("jobs::j", MULTICAST),
            CreateQueue("jobs", "m", MULTICAST),
            Send("jobs"),
        ),
        rules=("ADDR-SEND-UNTYPED", "ADDR-AUTO-ROUTING-TYPE", "ADDR-SEND-FQQN", "ADDR-QUEUE-ROUTING-TYPE"),
        source="Artemis ServerSessionImpl.checkAutoCreate (untyped messages answered at once); "
               "PostOfficeImpl.checkAddress (ARTEMIS-4089)",
    ),
    Case(
        name="addressing/anycast-send-auto-creates-queue-named-like-address",
        summary="An ANYCAST send to a missing address creates the address and an ANYCAST queue of the same name, "
                "which then resolves by bare name and by FQQN; a MULTICAST send creates no queue.",
        commands=(
            Send("orders", ANYCAST),
            Lookup("orders"),
            Lookup("orders::orders"),
            Send("orders", ANYCAST),
            Send("prices", MULTICAST),
            Lookup("prices"),
        ),
        rules=("ADDR-SEND-AUTO-QUEUE", "ADDR-AUTO-ADDRESS", "ADDR-SEND-ROUTE", "ADDR-LOOKUP-BARE-ONE"),
        source="Artemis ServerSessionImpl.checkAutoCreate",
    ),
    Case(
        name="addressing/anycast-send-next-to-existing-queue",
        summary="An ANYCAST send to an address whose only queue has another name creates a queue named like the "
                "address before ARTEMIS-2966 and reuses the existing queue after it.",
        commands=(
            CreateAddress("orders", ANY),
            CreateQueue("orders", "o1", ANYCAST),
            Send("orders", ANYCAST),
            Lookup("orders"),
            Send("orders", ANYCAST),
        ),
        rules=("ADDR-SEND-AUTO-QUEUE", "ADDR-SEND-ROUTE"),
        source="Artemis ARTEMIS-2966 (2.16.0); ServerSessionImpl.checkAutoCreate",
    ),
    Case(
        name="addressing/anycast-send-queue-name-taken-elsewhere",
        summary="An ANYCAST send to a new address q1, while a queue q1 lives on address1, creates the address and "
                "no queue under broker-wide names (and is not refused), but a queue q1::q1 under per-address names.",
        commands=(
            CreateAddress("address1", ANY),
            CreateQueue("address1", "q1", ANYCAST),
            Send("q1", ANYCAST),
            Lookup("q1"),
            Lookup("q1::q1"),
        ),
        rules=("ADDR-AUTO-QUEUE", "ADDR-SEND-AUTO-QUEUE", "ADDR-AUTO-ADDRESS", "ADDR-LOOKUP-BARE-MANY"),
        source="Artemis ServerSessionImpl.checkAutoCreate (locateQueue before createQueue)",
    ),
    Case(
        name="addressing/fqqn-send-reaches-only-that-queue",
        summary="A send to an FQQN reaches only that queue, and only when the routing types match: not the other "
                "queues of the address, and nothing for a MULTICAST message to an ANYCAST queue.",
        commands=(
            CreateAddress("a", BOTH),
            CreateQueue("a", "q", ANYCAST),
            CreateQueue("a", "r", ANYCAST),
            CreateQueue("a", "m", MULTICAST),
            Send("a::q", ANYCAST),
            Send("a::q"),
            Send("a::q", MULTICAST),
            Send("a::m"),
        ),
        rules=("ADDR-SEND-FQQN",),
        source="Artemis ARTEMIS-1867 (2.7.0) BindingsImpl FQQN routing",
    ),
    Case(
        name="addressing/fqqn-send-auto-creates-missing-queue",
        summary="A typed send to an FQQN whose queue is missing creates it (and its address) and reaches it; an "
                "untyped send to a missing FQQN queue creates none and reaches nothing.",
        commands=(
            Send("jobs::w"),
            Lookup("jobs::w"),
            Send("jobs::w", ANYCAST),
            Lookup("jobs::w"),
            Send("tasks::t", MULTICAST),
            Send("tasks::t"),
        ),
        rules=("ADDR-SEND-FQQN-AUTO-QUEUE", "ADDR-SEND-UNTYPED", "ADDR-SEND-FQQN", "ADDR-AUTO-ROUTING-TYPE"),
        source="Artemis ServerSessionImpl.checkAutoCreate (FQQN requests)",
    ),
    Case(
        name="addressing/fqqn-send-queue-name-taken-elsewhere",
        summary="A typed send to a::q1, with q1 on address1, creates a::q1 under per-address names and creates "
                "nothing and reaches nothing under broker-wide names, without being refused.",
        commands=(
            CreateAddress("address1", ANY),
            CreateQueue("address1", "q1", ANYCAST),
            CreateAddress("a", BOTH),
            Send("a::q1", ANYCAST),
            Send("a::q1"),
            Lookup("a::q1"),
        ),
        rules=("ADDR-SEND-FQQN-AUTO-QUEUE", "ADDR-AUTO-QUEUE", "ADDR-SEND-FQQN", "ADDR-LOOKUP-FQQN"),
        source="Artemis ServerSessionImpl.checkAutoCreate (locateQueue), a send to a2::q1 routing nowhere",
    ),
)

# --- settings and prefixes ------------------------------------------------------------------------

CONFIG_CASES: tuple[Case, ...] = (
    Case(
        name="addressing/settings-exact-match-beats-catch-all",
        summary="With auto-creation off under '#', sends to a missing address are refused, while an address with "
                "its own settings entry is still auto-created, queue and all.",
        commands=(
            SetAddressSettings("#", auto_create_addresses=False, auto_create_queues=False),
            SetAddressSettings("scratch"),
            Send("orders", ANYCAST),
            Send("orders"),
            Consume("orders"),
            Send("scratch", ANYCAST),
            Consume("scratch::work", ANYCAST),
            CreateAddress("orders", ANY),
        ),
        rules=("ADDR-CONFIG-SETTINGS", "ADDR-AUTO-NO-ADDRESS", "ADDR-SEND-AUTO-QUEUE", "ADDR-CONSUME-AUTO-QUEUE",
               "ADDR-REJECT-ATOMIC"),
        source="Artemis address-settings (auto-create-addresses, auto-create-queues; exact match and '#')",
    ),
    Case(
        name="addressing/send-refused-for-routing-type-without-address-creation",
        summary="With auto-create-addresses off, an untyped send to an ANYCAST-only address is accepted as it is, "
                "a MULTICAST send to it is refused, and an untyped send to a missing address is refused.",
        commands=(
            SetAddressSettings("#", auto_create_addresses=False),
            CreateAddress("jobs", ANY),
            Send("jobs"),
            Send("jobs", MULTICAST),
            Send("news"),
            CreateQueue("jobs", "m", MULTICAST),
        ),
        rules=("ADDR-AUTO-ROUTING-TYPE", "ADDR-AUTO-NO-ADDRESS", "ADDR-SEND-UNTYPED", "ADDR-REJECT-ATOMIC"),
        source="Artemis ServerSessionImpl.checkAutoCreate, addressDoesNotExist AMQ229203",
    ),
    Case(
        name="addressing/send-creates-no-queue-when-queue-creation-off",
        summary="With auto-create-queues off, an ANYCAST send to a missing address creates the address but no "
                "queue, and so does a typed send to a missing FQQN queue.",
        commands=(
            SetAddressSettings("#", auto_create_queues=False),
            Send("orders", ANYCAST),
            Lookup("orders"),
            Send("jobs::w", MULTICAST),
            Lookup("jobs::w"),
        ),
        rules=("ADDR-CONFIG-SETTINGS", "ADDR-AUTO-ADDRESS", "ADDR-SEND-AUTO-QUEUE", "ADDR-SEND-FQQN-AUTO-QUEUE"),
        source="Artemis address-settings auto-create-queues; ServerSessionImpl.checkAutoCreate",
    ),
    Case(
        name="addressing/settings-default-routing-types",
        summary="Default routing types from the settings decide what untyped sends and consumers create: here "
                "ANYCAST addresses and queues instead of MULTICAST.",
        commands=(
            SetAddressSettings("#", default_address_routing_type=ANYCAST, default_queue_routing_type=ANYCAST),
            Send("fresh"),
            CreateQueue("fresh", "f", ANYCAST),
            Consume("jobs"),
            Send("jobs"),
            Consume("jobs", ANYCAST),
            SetAddressSettings(""),
        ),
        rules=("ADDR-CONFIG-SETTINGS", "ADDR-SEND-UNTYPED", "ADDR-CONSUME-AUTO-QUEUE", "ADDR-SEND-ROUTE"),
        source="Artemis address-settings default-address-routing-type, default-queue-routing-type",
    ),
    Case(
        name="addressing/prefix-stripped-and-sets-routing-type",
        summary="Acceptor prefixes are removed from client names and set the routing type, overriding the one "
                "the client gave: 'anycast://orders' is an ANYCAST send to orders, 'multicast://news' a MULTICAST "
                "consumer on news, and a delete by a prefixed FQQN deletes the queue it names.",
        commands=(
            SetPrefix("anycast://", ANYCAST),
            SetPrefix("multicast://", MULTICAST),
            Send("anycast://orders"),
            Consume("multicast://news"),
            Send("news"),
            Lookup("anycast://orders"),
            Send("multicast://orders", ANYCAST),
            DeleteQueue("multicast://orders::orders"),
            Lookup("orders"),
        ),
        rules=("ADDR-PREFIX-STRIP", "ADDR-CONFIG-PREFIX", "ADDR-SEND-AUTO-QUEUE", "ADDR-CONSUME-AUTO-QUEUE",
               "ADDR-QUEUE-DELETE"),
        source="Artemis acceptor parameters anycastPrefix, multicastPrefix; PrefixUtil.getAddress, "
               "ServerSessionImpl.removePrefix",
    ),
    Case(
        name="addressing/longest-prefix-wins",
        summary="When two configured prefixes match, the longer one is stripped: 'anycast://orders' is an ANYCAST "
                "send to orders even with a MULTICAST prefix 'any', which still turns 'anything' into 'thing'.",
        commands=(
            SetPrefix("any", MULTICAST),
            SetPrefix("anycast://", ANYCAST),
            Send("anycast://orders"),
            Lookup("anycast://orders"),
            Send("anything"),
            Lookup("anything"),
        ),
        rules=("ADDR-PREFIX-STRIP", "ADDR-CONFIG-PREFIX", "ADDR-SEND-AUTO-QUEUE"),
        source="Artemis ServerSessionImpl.removePrefix (prefixes in a HashMap: the spec's decision makes the "
               "longest win)",
    ),
    Case(
        name="addressing/prefix-stripped-before-fqqn-parse",
        summary="A prefix in front of an FQQN goes first, so 'multicast://orders::orders' is a MULTICAST send to "
                "the ANYCAST queue orders::orders, which reaches nothing but widens the address.",
        commands=(
            SetPrefix("anycast://", ANYCAST),
            SetPrefix("multicast://", MULTICAST),
            Send("anycast://orders"),
            Send("anycast://orders::orders"),
            Send("multicast://orders::orders"),
            CreateQueue("orders", "audit", MULTICAST),
            Consume("anycast://orders::orders"),
        ),
        rules=("ADDR-PREFIX-STRIP", "ADDR-SEND-FQQN", "ADDR-AUTO-ROUTING-TYPE", "ADDR-CONSUME-ATTACH"),
        source="Artemis PrefixUtil.getAddress; the spec's decision not to model core AddressInfo cutting '::q' "
               "before the prefix is removed",
    ),
    Case(
        name="addressing/prefix-removed-and-empty-refused",
        summary="An empty prefix is refused; management names keep a prefix literally while client names lose "
                "it; once the prefix is removed, client names keep it too.",
        commands=(
            SetPrefix("", ANYCAST),
            SetPrefix("anycast://", ANYCAST),
            CreateAddress("anycast://raw", ANY),
            CreateQueue("anycast://raw", "rq", ANYCAST),
            Send("anycast://raw"),
            Lookup("rq"),
            SetPrefix("anycast://", None),
            SetPrefix("never-set", None),
            Send("anycast://raw"),
            Lookup("anycast://raw::rq"),
        ),
        rules=("ADDR-CONFIG-PREFIX", "ADDR-PREFIX-STRIP", "ADDR-ADDRESS-CREATE", "ADDR-SEND-AUTO-QUEUE"),
        source="Artemis acceptor parameters anycastPrefix, multicastPrefix",
    ),
)

CASES: tuple[Case, ...] = (
    *SEED_CASES, *MODEL_CASES, *DELETE_CASES, *FQQN_CASES, *CONSUME_CASES, *SEND_CASES, *CONFIG_CASES,
    *queries.ADDRESSING,
)
"""Every address-resolution case, in the order of this module."""
