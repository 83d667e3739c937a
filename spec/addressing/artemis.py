"""Artemis's own steps: how released brokers read names, create on demand, route a core send and attach a JMS consumer.

Introduction
------------
The seed design resolves every name through one lookup. Released Artemis
has several code paths, each with its own reading of a name, and a client
composes them; this module writes each path as a pure function over the
spec state, so that the spec says what the real broker does, step for step,
under the options the ``artemis-*`` profiles set. Every rule was checked
against Artemis 2.11.0 and 2.40.0 themselves (``brokerspec artemis
fidelity``) and is cited to the source that explains it.

Theory of operation:

* **Names.** ``CompositeAddress`` splits at the first ``::``. ``getBinding``
  looks a queue up by the part after it, on any address (queue names are
  unique in the broker). ``queueQuery`` does that twice (it strips the
  address part, then ``getBinding`` strips again), so ``a::b::c`` finds
  queue ``c``. ``QueueConfiguration`` (2.12 on) reads a name's queue part,
  then an FQQN address argument overrides both parts.
* **Server create queue** (:func:`server_create_queue`,
  ``ActiveMQServerImpl.createQueue``): an empty name is refused (AMQ229216);
  a name already bound anywhere is refused naming its address (AMQ229019);
  then the address: created or widened when the caller may auto-create it,
  else refused when missing (AMQ229203) or lacking the routing type
  (AMQ229207); last the queue factory refuses an empty address.
* **Auto-creation for a send** (:func:`check_auto_create`,
  ``ServerSessionImpl.checkAutoCreate``), run at routing time from 2.28.0
  (ARTEMIS-4089) for the address a message is routed to, never for an
  FQQN's queue part: a send without a routing type creates nothing; a
  missing address is created (or refused); a missing routing type is added
  (or refused); an ANYCAST send then creates a queue named like the address
  unless the address already has a queue (ARTEMIS-2966). A refusal keeps
  what was created before it.
* **The JMS client's consumer** (:func:`consume_jms`,
  ``ActiveMQSession.createConsumer``, ``AutoCreateUtil.autoCreateQueue``):
  an address query on the name decides whether to create the queue (on the
  address part, named by the queue part, ANYCAST unless a prefix says
  otherwise); a queue the broker already holds elsewhere is taken as it is;
  then the core consumer attaches through ``getBinding``, ignoring the
  address part.
"""

from __future__ import annotations

from ..profiles import NameParsing, SendCreation
from .bindings import add_queue, put_address, route_message
from .model import AddressingState, Queue, get_queues_of, get_settings
from .names import RoutingType, parse_name
from .outcomes import (
    AddressNotFound,
    AmbiguousName,
    Attached,
    InvalidName,
    Outcome,
    QueueExists,
    QueueNotFound,
    Rejected,
    Routed,
    RoutingTypeNotAllowed,
)

Transition = tuple[AddressingState, Outcome]


# --- reading names -------------------------------------------------------------------------------


def get_binding(state: AddressingState, name: str) -> Queue | None:
    """The queue ``name`` binds to in Artemis: the one named by its queue part, on any address.

    Rule ADDR-LOOKUP-FQQN-IGNORED. Source: ``SimpleAddressManager.getBinding``
    (``nameMap.get(extractQueueName(name))``).
    """
    bare = parse_name(name).queue
    return next((q for q in state.queues.values() if q.name == bare), None)


def get_queried_queue(state: AddressingState, name: str) -> tuple[str, Queue | None]:
    """What a queue query finds for ``name``: the name it looked up (its queue part) and the queue, if any.

    ``ActiveMQServerImpl.queueQuery`` strips the address part and hands the
    rest to ``getBinding``, which strips again (rule ADDR-LOOKUP-TWICE).
    """
    looked_up = parse_name(name).queue
    return looked_up, get_binding(state, looked_up)


def compute_queue_configuration(name: str, address: str) -> tuple[str, str]:
    """(address, queue) that ``QueueConfiguration.of(name).setAddress(address)`` names (2.12 on, ARTEMIS-2692).

    ``setName`` keeps a name's queue part; ``setAddress`` with an FQQN sets
    both parts from it (rule ADDR-CREATE-FQQN).

    >>> compute_queue_configuration("x::q", "a"), compute_queue_configuration("q", "b::zz")
    (('a', 'q'), ('b', 'zz'))
    """
    given = parse_name(address)
    if given.is_fqqn:
        return given.address, given.queue
    return address, parse_name(name).queue


def compute_management_names(parsing: NameParsing, address: str, queue: str) -> tuple[str, str]:
    """(address, queue) a management ``createQueue(address, routingType, name, ...)`` creates.

    2.11 (``SPLIT``): the address argument's address part and the name's
    queue part. 2.12 on (``QUEUE_CONFIGURATION``): :func:`compute_queue_configuration`.
    """
    if parsing is NameParsing.SPLIT:
        return parse_name(address).address, parse_name(queue).queue
    return compute_queue_configuration(queue, address)


# --- the server ----------------------------------------------------------------------------------


def server_create_queue(state: AddressingState, address: str, name: str, routing_type: RoutingType,
                        may_create_address: bool, auto_created: bool = False,
                        shown: tuple[str, str] | None = None) -> tuple[AddressingState, Rejected | None]:
    """``ActiveMQServerImpl.createQueue`` for queue ``name`` on ``address`` (names already read).

    Rules ADDR-NAME-EMPTY (AMQ229216), ADDR-QUEUE-EXISTS (AMQ229019, naming
    the queue asked for and the address of the queue that blocks it,
    ``queueAlreadyExists(queueConfiguration.getName(), binding.getAddress())``:
    asked for ``q1::x``, the blocking queue is ``x``), ADDR-AUTO-ADDRESS /
    ADDR-QUEUE-NO-ADDRESS (AMQ229203), ADDR-AUTO-ROUTING-TYPE / ADDR-QUEUE-ROUTING-TYPE
    (AMQ229207), ADDR-ADDRESS-EMPTY (the queue factory's "address can't be
    null or empty", after the address steps: an address created on the way
    stays; 2.11 builds its ``QueueConfig`` first, and the builder refuses an
    empty address before the address is looked up), ADDR-QUEUE-CREATE. A name holding ``::`` escapes the first
    check (``getBinding`` strips it) and meets the second guard, the name
    map's ``putIfAbsent`` (AMQ229018, ``SimpleAddressManager.addBinding``).
    ``shown`` is the (address, name) the caller was given, which an
    invalid-name refusal names.
    """
    shown_address, shown_name = shown or (address, name)
    if name == "":
        return state, Rejected(InvalidName(shown_name, "AMQ229216 invalid queue name"), rule="ADDR-NAME-EMPTY")
    existing = get_binding(state, name)
    if existing is not None:
        return state, Rejected(QueueExists(name, existing.address), rule="ADDR-QUEUE-EXISTS")
    if address == "" and state.options.name_parsing is NameParsing.SPLIT:
        # 2.11 builds its QueueConfig (whose builder refuses an empty address) before it looks the address up
        return state, Rejected(InvalidName(shown_address, "QueueConfig.Builder: address can't be null or empty"),
                               rule="ADDR-ADDRESS-EMPTY")
    info = state.addresses.get(address)
    if may_create_address:
        if info is None or routing_type not in info.routing_types:
            state = put_address(state, address, frozenset({routing_type}), auto_created=info is None)
    elif info is None:
        return state, Rejected(AddressNotFound(address), rule="ADDR-QUEUE-NO-ADDRESS")
    elif routing_type not in info.routing_types:
        reason = RoutingTypeNotAllowed(address, routing_type, info.routing_types)
        return state, Rejected(reason, rule="ADDR-QUEUE-ROUTING-TYPE")
    if address == "":
        return state, Rejected(InvalidName(shown_address, "the queue factory refuses an empty address"),
                               rule="ADDR-ADDRESS-EMPTY")
    twin = next((q for q in state.queues.values() if q.name == name), None)
    if twin is not None:
        return state, Rejected(QueueExists(twin.name, twin.address), rule="ADDR-QUEUE-EXISTS")
    return add_queue(state, Queue(address, name, routing_type, auto_created=auto_created)), None


def check_auto_create(state: AddressingState, address: str, routing_type: RoutingType | None,
                      reuses_existing_queue: bool) -> tuple[AddressingState, Rejected | None]:
    """``ServerSessionImpl.checkAutoCreate`` for a queue named like ``address``; a refusal keeps what it made.

    Rules ADDR-SEND-UNTYPED (no routing type: nothing happens),
    ADDR-AUTO-ADDRESS, ADDR-AUTO-NO-ADDRESS, ADDR-AUTO-ROUTING-TYPE (both
    refusals are AMQ229203, "address does not exist", as ``PostOfficeImpl``
    reports a NOT_FOUND), ADDR-SEND-AUTO-QUEUE (an ANYCAST request makes the
    queue unless the address already has one, ARTEMIS-2966; a queue of that
    name elsewhere is taken as it is unless it is MULTICAST, ARTEMIS-4512).
    """
    if routing_type is None:
        return state, None
    settings = get_settings(state, address)
    info = state.addresses.get(address)
    if info is None or routing_type not in info.routing_types:
        if not settings.auto_create_addresses:
            return state, Rejected(AddressNotFound(address), rule="ADDR-AUTO-NO-ADDRESS")
        state = put_address(state, address, frozenset({routing_type}), auto_created=info is None)
    if routing_type is not RoutingType.ANYCAST:
        return state, None
    located = next((q for q in state.queues.values() if q.name == address), None)
    if located is not None:
        if located.routing_type is not RoutingType.ANYCAST:
            return state, Rejected(AddressNotFound(address), rule="ADDR-AUTO-QUEUE")
        return state, None
    if get_queues_of(state, address) and reuses_existing_queue:
        return state, None
    if not settings.auto_create_queues:
        return state, Rejected(AddressNotFound(address), rule="ADDR-AUTO-QUEUE")
    return server_create_queue(state, address, address, RoutingType.ANYCAST, True, auto_created=True)


# --- the JMS client --------------------------------------------------------------------------------


def consume_jms(state: AddressingState, name: str, prefix_type: RoutingType | None,
                routing_type: RoutingType | None, given: str) -> Transition:
    """Artemis's core JMS client opens a consumer on ``name`` (prefix already stripped by the broker).

    A refusal names the consumer's name as ``given`` (prefix and all).

    A queue consumer (ANYCAST, or no routing type: a JMS client knows queues
    and topics only, and a queue is ANYCAST) and a topic consumer on an FQQN
    (MULTICAST) each ask for the address part, create the queue part there
    when it is missing and ``auto-create-queues`` allows (the queue's routing
    type is the prefix's if a prefix was stripped), and then attach through
    ``getBinding``, whatever the address part says. The client looks for its
    queue among the address's queue names by the name it was *given*
    (``AutoCreateUtil.autoCreateQueue``, ``getCoreQueueName``; 2.11's
    ``ActiveMQSession.createConsumer`` alike): a bare name with an acceptor
    prefix never matches, so it always takes the creation path, where the
    broker finds the queue exists and the client goes on; it attaches with
    no ARTEMIS-4512 check, and with ``auto-create-queues`` off it is refused
    as missing although the queue exists (found fuzzing Artemis 2.40.0). Rules
    ADDR-CONSUME-AUTO-QUEUE, ADDR-CONSUME-NO-QUEUE (the client's own
    "destination does not exist"), ADDR-CONSUME-MULTICAST-QUEUE (ARTEMIS-4512,
    2.32.0: a queue consumer by bare name on a MULTICAST queue of that
    address; the client reports it as "does not exist" too, so the reason is
    a missing queue), ADDR-CONSUME-ATTACH. Sources: ``ActiveMQSession.createConsumer``,
    ``AutoCreateUtil.autoCreateQueue``, ``createFQQNSubscription``.

    pre: routing_type is not RoutingType.MULTICAST or "::" in name
    """
    parsed = parse_name(name)
    address, queue = parsed.address, parsed.queue
    settings = get_settings(state, address)
    wanted = RoutingType.MULTICAST if routing_type is RoutingType.MULTICAST else RoutingType.ANYCAST
    created_address: str | None = None if address in state.addresses else address
    before = state
    if wanted is RoutingType.MULTICAST and address not in state.addresses:
        if not settings.auto_create_addresses:
            return state, Rejected(QueueNotFound(given), rule="ADDR-CONSUME-NO-QUEUE")
        state = put_address(state, address, frozenset({RoutingType.MULTICAST}), auto_created=True)
    on_address = {q.name: q for q in get_queues_of(state, address)} if address in state.addresses else {}
    if parse_name(given).queue not in on_address:  # the client looks for the name it was given, prefix and all
        if not settings.auto_create_queues:
            return state, Rejected(QueueNotFound(given), rule="ADDR-CONSUME-NO-QUEUE")
        made_address, made_name = compute_queue_configuration(queue, name)
        state, refusal = server_create_queue(state, made_address, parse_name(made_name).queue,
                                             prefix_type or wanted, settings.auto_create_addresses,
                                             auto_created=True, shown=(given, given))
        if refusal is not None and not isinstance(refusal.reason, QueueExists):
            return state, refusal
    elif (state.options.anycast_consume_rejects_multicast_queue and wanted is RoutingType.ANYCAST
          and not parsed.is_fqqn and on_address[queue].routing_type is not RoutingType.ANYCAST):
        return state, Rejected(QueueNotFound(given), rule="ADDR-CONSUME-MULTICAST-QUEUE")
    if wanted is RoutingType.MULTICAST and get_queried_queue(state, queue)[1] is None:
        return state, Rejected(QueueNotFound(given), rule="ADDR-CONSUME-NO-QUEUE")
    bound = get_binding(state, queue if wanted is RoutingType.MULTICAST else name)
    if bound is None:
        return state, Rejected(QueueNotFound(given), rule="ADDR-CONSUME-NO-QUEUE")
    fresh = before.queues.get((bound.address, bound.name)) is None
    new_address = created_address if created_address in state.addresses else None
    rule = "ADDR-CONSUME-AUTO-QUEUE" if fresh else "ADDR-CONSUME-ATTACH"
    return state, Attached(bound.address, bound.name, new_address, bound.fqqn if fresh else None, rule=rule)


def consume_core(state: AddressingState, name: str, given: str) -> Transition:
    """Artemis's core client opens a consumer on ``name`` (prefix already stripped by the broker).

    Rule ADDR-CONSUME-CORE: ``ServerSessionImpl.createConsumer`` finds the queue with ``getBinding``, which
    reads an FQQN's queue part only (the address part is not compared), creates nothing, and refuses a name
    no queue answers to with AMQ229017 (``ActiveMQNonExistentQueueException``), never as an invalid name:
    ``FullQualifiedQueueTest.testSpecialCase`` attaches ``::q1`` and refuses ``q1::`` and ``::`` as missing
    queues. The consumer's routing type plays no part. Under per-address queue names (the seed's, which
    Artemis never has) a queue part bound on several addresses is refused as ambiguous.

    post: __return__[0] == state
    """
    bare = parse_name(name).queue
    found = sorted((q for q in state.queues.values() if q.name == bare), key=lambda q: q.fqqn)
    if not found:
        return state, Rejected(QueueNotFound(given), rule="ADDR-CONSUME-CORE")
    if len(found) > 1:
        return state, Rejected(AmbiguousName(given, tuple(q.fqqn for q in found)), rule="ADDR-CONSUME-CORE")
    return state, Attached(found[0].address, found[0].name, rule="ADDR-CONSUME-CORE")


# --- a core producer ---------------------------------------------------------------------------------


def send_core(state: AddressingState, name: str, routing_type: RoutingType | None) -> Transition:
    """A core producer sends to ``name`` (prefix stripped, ``routing_type`` the prefix's or the message's).

    Before 2.28.0 (``SendCreation.NEVER``) a core send creates nothing and is
    never refused: ``ServerSessionImpl.doSend`` only routes. From 2.28.0
    (``ROUTING_TIME``, ARTEMIS-4089) ``PostOfficeImpl.checkAddress`` runs
    :func:`check_auto_create` for the address part when the address is
    missing, and ``simpleRoute`` again when it has no queue; the FQQN's
    queue part is never created. Then the message is routed as the seed's
    send routes it (rules ADDR-SEND-ROUTE, ADDR-SEND-FQQN). The outcome
    names what the send created, even when it is refused after creating it.
    """
    parsed = parse_name(name)
    address = parsed.address
    before = state
    if state.options.send_creation is SendCreation.ROUTING_TIME:
        for needed in (address not in state.addresses, True):
            if needed and not get_queues_of(state, address):
                state, refusal = check_auto_create(state, address, routing_type,
                                                   state.options.send_reuses_existing_queue)
                if refusal is not None:
                    return state, refusal
    created_address = address if address in state.addresses and address not in before.addresses else None
    new = [q.fqqn for q in state.queues.values() if (q.address, q.name) not in before.queues]
    created_queue = new[0] if new else None
    return state, route_message(state, address, parsed.queue if parsed.is_fqqn else None, routing_type,
                                created_address, created_queue)
