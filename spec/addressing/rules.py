"""The rules of the address-resolution domain, with their IDs and sources.

Introduction
------------
Each rule has a stable ID (``ADDR-...``), one sentence of plain words, the
profiles it applies to, and its source: seed 000
(``000_3ece6d51ae6d999d.txt``, the FQQN and ambiguity-detection design of
ARTEMIS-1093), the Artemis class and method, test or JIRA key it was read
from, or a page of the Artemis user manual. "Seen on 2.11.0 and 2.40.0"
marks behaviour the released brokers showed when driven through their own
client (``docs/artemis-fidelity.md``). The spec's outcomes carry the ID of
the rule that decided them, so a trace or a conformance report can say
*why* an outcome is expected. A test checks that every ID the operations
use is listed here.
"""

from __future__ import annotations

from dataclasses import dataclass

ALL_PROFILES = ("seed", "artemis-2.11", "artemis-latest")


@dataclass(frozen=True)
class Rule:
    """One rule: ID, plain words, source, and the profiles it applies to."""

    id: str
    summary: str
    source: str
    profiles: tuple[str, ...] = ALL_PROFILES


RULES: dict[str, Rule] = {
    r.id: r
    for r in (
        Rule("ADDR-MODEL", "An address allows a set of routing types; a queue belongs to exactly one address "
             "and has one routing type that address allows.",
             "Artemis user manual, address-model (Address, Queue, Routing Type)"),
        Rule("ADDR-FQQN-DETECT", "A name is fully qualified iff it contains '::' anywhere.",
             "Artemis CompositeAddress.isFullyQualified; seed 000"),
        Rule("ADDR-FQQN-SPLIT", "An FQQN splits at the first '::': 'a::b::c' is address 'a', queue 'b::c'; "
             "'address::', '::queue' and '::' have empty parts; an address ending in ':' cannot be "
             "named by FQQN ('a:' + '::q' parses as address 'a', queue ':q').",
             "Artemis CompositeAddress.extractAddressName/extractQueueName (ARTEMIS-1867, 2.7.0); "
             "CompositeAddressTest.testSplit"),
        Rule("ADDR-PREFIX-STRIP", "A configured routing-type prefix is removed from a client-supplied name and "
             "sets the routing type; the prefix goes before the name is parsed as an FQQN. When several match, the "
             "seed takes the longest; Artemis the first in its HashMap's iteration order (anycast prefixes put "
             "first), and an empty prefix matches every name.",
             "Artemis PrefixUtil.getAddress, AbstractProtocolManager.setAnycastPrefix (a HashMap), "
             "ServerSessionImpl.removePrefix; seen on 2.11.0 and 2.40.0 ('any' beats 'anycast://')"),
        Rule("ADDR-NAME-EMPTY", "An empty queue name is rejected; under the seed, an empty address name too.",
             "Artemis ActiveMQServerImpl.createQueue, invalidQueueName AMQ229216"),
        Rule("ADDR-CONSUME-CORE", "A core-client consumer attaches to the queue an FQQN's queue part names, on "
             "whatever address, and creates nothing; a name no queue answers to (an empty queue part: 'q1::', '::') "
             "is refused as a missing queue, not as an invalid name.",
             "Artemis ServerSessionImpl.createConsumer (getBinding, AMQ229017 noSuchQueue); "
             "FullQualifiedQueueTest.testSpecialCase; option addressing.consumer=CORE"),
        Rule("ADDR-QUERY-ADDRESS", "An address query changes nothing and refuses no name: it loses its prefix, "
             "reads an FQQN as its address part, and says whether that address exists, which routing types it "
             "allows and which queues it binds.",
             "Artemis ServerSessionImpl.executeAddressQuery (removePrefix), ActiveMQServerImpl.addressQuery "
             "(CompositeAddress.extractAddressName), ServerSessionImpl.executeBindingQuery; "
             "AddressQueryTest.testAddressQueryOnStaticAddressWithFQQN"),
        Rule("ADDR-CREATE-FQQN", "Artemis's create operations read names instead of refusing them: an address "
             "keeps its FQQN's address part (the empty name is accepted), a queue its name's queue part, and "
             "from 2.12 an FQQN given as the address names the queue as well.",
             "Artemis AddressInfo(SimpleString) constructor, QueueConfiguration.setName/setAddress (ARTEMIS-2692, "
             "2.12.0), ActiveMQServerControlImpl.createQueue; QueueQueryTest.testQueueQueryOnStaticQueueWithFQQN, "
             "AddressQueryTest.testAddressQueryOnStaticAddressWithFQQN", ("artemis-2.11", "artemis-latest")),
        Rule("ADDR-ADDRESS-EMPTY", "A queue on the empty address is refused when it would be made, after every "
             "other check (an address auto-created on the way stays); 2.11 refuses it right after the existing-queue "
             "check, before the address is looked up.",
             "Artemis QueueFactoryImpl.createQueueWith / QueueConfig: \"address can't be null or empty!\"; 2.11 "
             "ActiveMQServerImpl.createQueue builds QueueConfig.builderWith (validateState) before getAddressInfo",
             ("artemis-2.11", "artemis-latest")),
        Rule("ADDR-NAME-SEPARATOR", "A name containing '::' is rejected as an address or queue name.",
             "Artemis user manual, address-model: '::' only for FQQNs"),
        Rule("ADDR-REJECT-ATOMIC", "A rejected command changes nothing.",
             "brokerspec decision, docs/addressing.md section 5.2 (Artemis may leave an auto-created address "
             "behind)"),
        Rule("ADDR-ADDRESS-CREATE", "Creating a new address records its routing types.",
             "Artemis ActiveMQServerImpl.addAddressInfo"),
        Rule("ADDR-ADDRESS-EXISTS", "Creating an address that exists is rejected.",
             "Artemis ActiveMQServerControlImpl.createAddress (addAddressInfo answers false), addressAlreadyExists "
             "AMQ229204"),
        Rule("ADDR-ADDRESS-DELETE", "Deleting an address removes it; with force its queues are removed first, "
             "each decrementing its name's count.",
             "Artemis ActiveMQServerImpl.removeAddressInfo(address, auth, force)"),
        Rule("ADDR-ADDRESS-DELETE-MISSING", "Deleting a missing address is rejected.",
             "Artemis ActiveMQServerImpl.removeAddressInfo, addressDoesNotExist AMQ229203"),
        Rule("ADDR-ADDRESS-DELETE-HAS-QUEUES", "Deleting an address that still has queues is rejected unless forced.",
             "Artemis ActiveMQServerImpl.removeAddressInfo, addressHasBindings AMQ229205"),
        Rule("ADDR-QUEUE-EXISTS", "Creating a queue whose name is taken is rejected, naming the address that holds "
             "it: taken anywhere in the broker (Artemis) or on the same address (seed).",
             "Artemis ActiveMQServerImpl.createQueue, queueAlreadyExists AMQ229019, ARTEMIS-3657 manual text; "
             "seed 000 BindingKey"),
        Rule("ADDR-QUEUE-NO-ADDRESS", "Creating a queue on a missing address is rejected.",
             "Artemis ActiveMQServerImpl.createQueue, addressDoesNotExist AMQ229203"),
        Rule("ADDR-QUEUE-ROUTING-TYPE", "Creating a queue whose routing type the address does not allow is rejected.",
             "Artemis ActiveMQServerImpl.createQueue, invalidRoutingTypeForAddress AMQ229207"),
        Rule("ADDR-QUEUE-CREATE", "Creating a queue binds it and increments its name's per-address count.",
             "seed 000 (uniqueNameMap updated when a binding is added)"),
        Rule("ADDR-QUEUE-DELETE", "Deleting a queue resolves the name as a lookup does, unbinds the queue and "
             "decrements its name's count; deleting one of two same-named queues makes the bare name resolve again. "
             "From 2.20 the last queue of an auto-created address takes the address with it.",
             "seed 000; Artemis ActiveMQServerImpl.destroyQueue resolves through getBinding; ARTEMIS-3541 (2.20.0), "
             "ServerSessionImpl.deleteQueue forces the address's auto-deletion"),
        Rule("ADDR-QUEUE-DELETE-MISSING", "Deleting a name that resolves to no queue is rejected.",
             "Artemis ActiveMQServerImpl.destroyQueue, noSuchQueue AMQ229017"),
        Rule("ADDR-QUEUE-DELETE-AMBIGUOUS", "Deleting by an ambiguous bare name is rejected with the candidates.",
             "seed 000 (an ambiguous name identifies no queue)", ("seed",)),
        Rule("ADDR-LOOKUP-BARE-NONE", "A bare name whose count is 0 is not found.", "seed 000"),
        Rule("ADDR-LOOKUP-BARE-ONE", "A bare name whose count is 1 resolves to its queue.",
             "seed 000 scenario 1; Artemis SimpleAddressManager.getBinding"),
        Rule("ADDR-LOOKUP-BARE-MANY", "A bare name whose count is 2 or more is ambiguous; the candidates are the "
             "sorted FQQNs.", "seed 000 scenario 3", ("seed",)),
        Rule("ADDR-LOOKUP-FQQN", "An FQQN resolves to the queue bound to its address, or to nothing; never "
             "ambiguously.",
             "seed 000 scenario 2; Artemis AMQP DefaultSenderController.getMatchingQueue, "
             "AmqpFullyQualifiedNameTest.testQueueSpecial"),
        Rule("ADDR-LOOKUP-FQQN-IGNORED", "With the address check off (Artemis), an FQQN's address part is "
             "discarded and its queue part looked up as a bare name.",
             "Artemis SimpleAddressManager.getBinding, ActiveMQServerImpl.destroyQueue, "
             "ServerSessionImpl.createConsumer; FullQualifiedQueueTest.testSpecialCase",
             ("artemis-2.11", "artemis-latest")),
        Rule("ADDR-LOOKUP-TWICE", "A queue query strips the address part twice: 'a::b::c' finds queue 'c' "
             "(2.11 reports it under the name it looked up, 'b::c'); a miss names 'b::c' under 2.11 and 'c' "
             "from 2.40.",
             "Artemis ActiveMQServerImpl.queueQuery (extractQueueName, then getBinding strips again; 2.40.0 "
             "answers through QueueConfiguration.of(realName), ARTEMIS-5302); seen on 2.11.0 and 2.40.0",
             ("artemis-2.11", "artemis-latest")),
        Rule("ADDR-AUTO-ADDRESS", "A send or consume to a missing address creates it when auto-create-addresses "
             "is on, with the routing type asked for (or the default address routing type).",
             "Artemis ServerSessionImpl.checkAutoCreate; address settings auto-create-addresses"),
        Rule("ADDR-AUTO-NO-ADDRESS", "A send or consume to a missing address is rejected when auto-create-addresses "
             "is off (Artemis also reports a missing routing type that may not be added this way).",
             "Artemis checkAutoCreate NOT_FOUND, PostOfficeImpl.checkAddress / simpleRoute, addressDoesNotExist "
             "AMQ229203"),
        Rule("ADDR-AUTO-ROUTING-TYPE", "A typed send or a consume that needs a routing type an existing address "
             "lacks adds it when auto-create-addresses is on, and is rejected otherwise (an untyped send never "
             "asks).", "Artemis ServerSessionImpl.checkAutoCreate"),
        Rule("ADDR-AUTO-QUEUE", "Auto-creation never makes a queue whose name is taken: a seed send then "
             "creates nothing, a seed consume is refused as not found; Artemis's routing-time creation refuses a "
             "send whose ANYCAST queue may not be made, or is taken by a MULTICAST queue, as a missing address "
             "and keeps the address it made.",
             "Artemis ServerSessionImpl.checkAutoCreate (locateQueue before createQueue), PostOfficeImpl.simpleRoute; "
             "seen on 2.40.0"),
        Rule("ADDR-SEND-AUTO-QUEUE", "An ANYCAST send auto-creates an ANYCAST queue named like the address when "
             "auto-create-queues is on: since ARTEMIS-2966 only if the address has no queue at all, before it "
             "whenever no queue is named like the address; never when the name is already taken (nothing is "
             "created and nothing refused).",
             "Artemis ServerSessionImpl.checkAutoCreate; ARTEMIS-2966 (2.16.0)"),
        Rule("ADDR-SEND-FQQN-AUTO-QUEUE", "A send to an FQQN whose queue is missing auto-creates it when "
             "auto-create-queues is on and the name is free; a name taken elsewhere routes nowhere.",
             "Artemis ServerSessionImpl.checkAutoCreate (FQQN requests, locateQueue)"),
        Rule("ADDR-SEND-UNTYPED", "A send without a routing type creates no queue and leaves an existing address "
             "as it is; the seed creates a missing address with the default address routing type, Artemis creates "
             "nothing (checkAutoCreate answers EXISTED for a request without a routing type).",
             "Artemis ServerSessionImpl.checkAutoCreate ('if (queueConfig.getRoutingType() == null) return "
             "EXISTED'), PostOfficeImpl.checkAddress; seen on 2.11.0 and 2.40.0"),
        Rule("ADDR-SEND-CORE", "A core producer creates nothing before 2.28.0 and is never refused; from 2.28.0 it "
             "runs checkAutoCreate for the address part (never an FQQN's queue part) when the address is missing "
             "or has no queue; then the message is routed.",
             "Artemis ServerSessionImpl.doSend (2.11.0); PostOfficeImpl.checkAddress, simpleRoute (ARTEMIS-4089, "
             "2.28.0); seen on 2.11.0 and 2.40.0", ("artemis-2.11", "artemis-latest")),
        Rule("ADDR-SEND-ROUTE", "A MULTICAST message is copied to every MULTICAST queue of the address, an ANYCAST "
             "message goes to one ANYCAST queue, a message without a routing type does both.",
             "Artemis LocalQueueBinding.route; RoutingTest.testAnycastMessageRoutingExclusivity, "
             "testMulticastMessageRoutingExclusivity, testAmbiguousMessageRouting"),
        Rule("ADDR-SEND-FQQN", "A message sent to an FQQN reaches only that queue, and only if it is bound to "
             "that address and its routing type matches the message's.",
             "Artemis ARTEMIS-1867 (2.7.0) BindingsImpl FQQN routing"),
        Rule("ADDR-CONSUME-ATTACH", "A consumer attaches to the queue its name resolves to.",
             "Artemis ServerSessionImpl.createConsumer"),
        Rule("ADDR-CONSUME-AMBIGUOUS", "A consumer naming an ambiguous bare name is refused with the candidates.",
             "seed 000 scenario 3", ("seed",)),
        Rule("ADDR-CONSUME-MULTICAST-QUEUE", "A bare-name ANYCAST consumer may not attach to a MULTICAST queue.",
             "Artemis ARTEMIS-4512 (2.32.0)", ("artemis-latest",)),
        Rule("ADDR-CONSUME-FQQN-ELSEWHERE", "A consumer naming an FQQN whose queue name is bound on another "
             "address is refused as not found (the seed; AMQP receivers do the same, the core JMS client does not).",
             "seed 000 scenario 2; Artemis AMQP DefaultSenderController.getMatchingQueue, AmqpFullyQualifiedNameTest",
             ("seed",)),
        Rule("ADDR-CONSUME-NO-QUEUE", "A consumer naming a missing queue is refused when auto-create-queues is off, "
             "and so is a JMS consumer whose core consumer finds no queue by getBinding.",
             "Artemis ServerSessionImpl.createConsumer, noSuchQueue AMQ229017; AutoCreateUtil.autoCreateQueue"),
        Rule("ADDR-CONSUME-AUTO-QUEUE", "A consumer naming a missing queue auto-creates it: a bare name creates "
             "queue and address of that name, an FQQN its queue part on its address part. Artemis's JMS client "
             "asks the address part whether it holds the queue part, creates it there when not (a queue of that "
             "name elsewhere is taken as it is), and attaches by getBinding.",
             "Artemis ServerSessionImpl.checkAutoCreate; ActiveMQSession.createConsumer, "
             "AutoCreateUtil.autoCreateQueue, createFQQNSubscription"),
        Rule("ADDR-CONFIG-PREFIX", "An acceptor routing-type prefix can be set or removed; the seed refuses an "
             "empty one, Artemis takes it (and it matches every name).",
             "Artemis acceptor parameters anycastPrefix, multicastPrefix; AbstractProtocolManager.setAnycastPrefix "
             "(''.split(',') is ['']); seen on 2.11.0 and 2.40.0"),
        Rule("ADDR-CONFIG-SETTINGS", "Auto-creation settings are set per address, '#' for every other address.",
             "Artemis user manual, address-settings; HierarchicalObjectRepository (the match '#')"),
        Rule("ADDR-SETTINGS", "Defaults: auto-create addresses and queues on, default routing types MULTICAST.",
             "Artemis AddressSettings DEFAULT_AUTO_CREATE_ADDRESSES, DEFAULT_AUTO_CREATE_QUEUES, "
             "getDefaultAddressRoutingType (ActiveMQDefaultConfiguration.DEFAULT_ROUTING_TYPE)"),
    )
}


def get_rule(rule_id: str) -> Rule:
    """The rule with ID ``rule_id`` (KeyError names it when unknown)."""
    return RULES[rule_id]
