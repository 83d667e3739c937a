"""Operations: each command of the address model as a pure state transition.

Introduction
------------
Every operation is a pure function ``(state, command) -> (state, outcome)``.
:func:`apply` dispatches by command type through the table ``TRANSITIONS``.
Nothing here mutates: a new state is built with :func:`~brokerspec.spec.frozen.replace`
and :class:`~brokerspec.spec.frozen.FrozenMap` updates.

Rules kept across every operation:

- ADDR-REJECT-ATOMIC: a rejected command changes nothing. (Artemis can leave
  an auto-created address behind when the queue that should follow it is
  refused; the spec does not model that partial effect.)
- Client-supplied names (delete, lookup, send, consume) first lose a
  configured prefix (ADDR-PREFIX-STRIP), then are parsed (ADDR-FQQN-SPLIT).
- A bare name resolves through the per-name address count (seed 000): count
  0 is not found, 1 resolves, 2 or more is ambiguous. An FQQN resolves only
  to the queue bound to its address (never ambiguous), unless the profile
  discards the address part as Artemis's core protocol does.

Each function's docstring names the rules it applies; :mod:`.rules` holds
their wording and sources.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..frozen import replace
from ..profiles import ConsumerModel, NameParsing, PrefixMatch, SendCreation
from .artemis import (
    compute_management_names,
    consume_core,
    consume_jms,
    get_queried_queue,
    send_core,
    server_create_queue,
)
from .bindings import add_queue, find_existing_queue, remove_queue, route_message
from .commands import (
    AddressingCommand,
    Consume,
    CreateAddress,
    CreateQueue,
    DeleteAddress,
    DeleteQueue,
    Lookup,
    QueryAddress,
    Send,
    SetAddressSettings,
    SetPrefix,
)
from .model import (
    Address,
    AddressingState,
    AddressSettings,
    Queue,
    get_queues_named,
    get_queues_of,
    get_settings,
)
from .names import RoutingType, name_problem, parse_name, strip_prefix
from .names import implies as implies  # the contracts' `implies`
from .outcomes import (
    AddressCreated,
    AddressDeleted,
    AddressExists,
    AddressHasQueues,
    AddressNotFound,
    AddressQueried,
    Ambiguous,
    AmbiguousName,
    Attached,
    Configured,
    InvalidName,
    LookupOutcome,
    NotFound,
    Outcome,
    QueueCreated,
    QueueDeleted,
    QueueExists,
    QueueNotFound,
    QueueRoutingTypeMismatch,
    Rejected,
    Resolved,
    RoutingTypeNotAllowed,
    Routed,
)

Transition = tuple[AddressingState, Outcome]


# --- building blocks ---------------------------------------------------------------


def reject_invalid_name(name: str) -> Rejected | None:
    """A rejection for an unusable name (ADDR-NAME-EMPTY, ADDR-NAME-SEPARATOR), else None."""
    problem = name_problem(name)
    if problem is None:
        return None
    rule = "ADDR-NAME-EMPTY" if name == "" else "ADDR-NAME-SEPARATOR"
    return Rejected(InvalidName(name, problem), rule=rule)


def resolve(state: AddressingState, name: str, twice: bool = False) -> LookupOutcome:
    """Resolve a (prefix-free) client name to a queue.

    Rules ADDR-LOOKUP-FQQN (seed 000 scenario 2): an FQQN resolves to the
    queue bound to its address or to nothing, never ambiguously.
    ADDR-LOOKUP-FQQN-IGNORED (Artemis ``SimpleAddressManager.getBinding``):
    with ``fqqn_checks_address`` off, the address part is discarded and the
    queue part looked up as a bare name; ``twice`` strips the result once
    more, as Artemis's ``queueQuery`` does before calling ``getBinding``
    (ADDR-LOOKUP-TWICE). ADDR-LOOKUP-BARE-NONE, -ONE, -MANY (seed 000
    scenarios 1 and 3): a bare name's per-name count decides. With
    ``lookup_reports_query_name`` a resolved lookup names the queue by the
    name it looked up (2.11's ``queueQuery``), which differs from the
    queue's own only after a second strip. A queue query that finds nothing
    names the queue part it looked for (ARTEMIS-1867's parsed reply names):
    the once-stripped part with ``lookup_reports_query_name``, else the part
    ``getBinding`` looked for (2.40's ``QueueConfiguration.of(realName)``
    parses the name again, ARTEMIS-5302).
    """
    parsed = parse_name(name)
    if parsed.is_fqqn and state.options.fqqn_checks_address:
        queue = state.queues.get((parsed.address, parsed.queue))
        if queue is None:
            return NotFound(name, rule="ADDR-LOOKUP-FQQN")
        return Resolved(queue.address, queue.name, queue.routing_type, rule="ADDR-LOOKUP-FQQN")
    looked_up, bare = parsed.queue, parsed.queue
    if twice:
        looked_up, _ = get_queried_queue(state, name)
        bare = parse_name(looked_up).queue
    via = "ADDR-LOOKUP-FQQN-IGNORED" if parsed.is_fqqn else None
    if twice and parse_name(parsed.queue).is_fqqn:
        via = "ADDR-LOOKUP-TWICE"
    count = state.name_counts.get(bare, 0)
    if count == 0:
        missed = (parsed.queue if state.options.lookup_reports_query_name else bare) if twice else name
        return NotFound(missed, rule=via or "ADDR-LOOKUP-BARE-NONE")
    candidates = get_queues_named(state, bare)
    if count == 1:
        only = candidates[0]
        shown = looked_up if twice and state.options.lookup_reports_query_name else only.name
        return Resolved(only.address, shown, only.routing_type, rule=via or "ADDR-LOOKUP-BARE-ONE")
    return Ambiguous(name, tuple(q.fqqn for q in candidates), rule=via or "ADDR-LOOKUP-BARE-MANY")


def ensure_address(
    state: AddressingState, address: str, routing_type: RoutingType, settings: AddressSettings
) -> tuple[AddressingState, Rejected | None, bool]:
    """Make ``address`` exist and allow ``routing_type``, auto-creating when the settings allow.

    Returns the new state, a rejection (or None), and whether the address was
    created. Rules ADDR-AUTO-ADDRESS, ADDR-AUTO-NO-ADDRESS, ADDR-AUTO-ROUTING-TYPE
    (Artemis ``ServerSessionImpl.checkAutoCreate``; address settings
    ``auto-create-addresses``). Artemis reports a missing routing type with
    auto-creation off as AMQ229203 "address does not exist"; the spec says
    which routing type was missing.
    """
    existing = state.addresses.get(address)
    if existing is None:
        if not settings.auto_create_addresses:
            return state, Rejected(AddressNotFound(address), rule="ADDR-AUTO-NO-ADDRESS"), False
        created = Address(address, frozenset({routing_type}), auto_created=True)
        return replace(state, addresses=state.addresses.set(address, created)), None, True
    if routing_type in existing.routing_types:
        return state, None, False
    if not settings.auto_create_addresses:
        reason = RoutingTypeNotAllowed(address, routing_type, existing.routing_types)
        return state, Rejected(reason, rule="ADDR-AUTO-ROUTING-TYPE"), False
    widened = replace(existing, routing_types=existing.routing_types | {routing_type})
    return replace(state, addresses=state.addresses.set(address, widened)), None, False


def auto_create_queue(
    state: AddressingState, address: str, queue: str, routing_type: RoutingType, settings: AddressSettings
) -> tuple[AddressingState, Rejected | None, bool]:
    """Auto-create ``address::queue`` (and its address) as a send or consume may.

    Returns the new state, a rejection (or None), and whether the address was
    created too. Callers never ask for a taken name (rule ADDR-AUTO-QUEUE):
    a send then creates nothing, a consume is refused as not found.
    ``checkAutoCreate``, ``auto-create-queues``.

    pre: find_existing_queue(state, address, queue) is None
    """
    grown, rejection, created_address = ensure_address(state, address, routing_type, settings)
    if rejection is not None:
        return state, rejection, False
    return add_queue(grown, Queue(address, queue, routing_type, auto_created=True)), None, created_address


# --- operations --------------------------------------------------------------------


def create_address(state: AddressingState, command: CreateAddress) -> Transition:
    """Create an address.

    Rules ADDR-NAME-*, ADDR-ADDRESS-EXISTS (``ActiveMQServerImpl.createAddressInfo``,
    AMQ229204 "address already exists"), ADDR-ADDRESS-CREATE. Released
    Artemis reads no name as invalid: its ``AddressInfo`` keeps the address
    part of an FQQN and accepts the empty name (ADDR-CREATE-FQQN;
    ``AddressQueryTest.testAddressQueryOnStaticAddressWithFQQN``).

    post: implies(isinstance(__return__[1], Rejected), __return__[0] == state)
    """
    name = command.address
    if state.options.name_parsing is NameParsing.STRICT:
        invalid = reject_invalid_name(name)
        if invalid is not None:
            return state, invalid
    else:
        name = parse_name(name).address
    if name in state.addresses:
        return state, Rejected(AddressExists(name), rule="ADDR-ADDRESS-EXISTS")
    address = Address(name, command.routing_types)
    new_state = replace(state, addresses=state.addresses.set(name, address))
    rule = "ADDR-CREATE-FQQN" if name != command.address else "ADDR-ADDRESS-CREATE"
    return new_state, AddressCreated(name, rule=rule)


def delete_address(state: AddressingState, command: DeleteAddress) -> Transition:
    """Delete an address, refusing while it has queues unless forced.

    Rules ADDR-ADDRESS-DELETE-MISSING (``ActiveMQServerImpl.removeAddressInfo``,
    AMQ229203), ADDR-ADDRESS-DELETE-HAS-QUEUES (AMQ229205 "address has
    bindings"), ADDR-ADDRESS-DELETE (with ``force`` its queues go first, each
    decrementing its name's count).
    """
    name = command.address
    if state.options.name_parsing is not NameParsing.STRICT:
        name = parse_name(name).address
    if name not in state.addresses:
        # Artemis names the address as given (AMQ229203 "Address Does Not Exist: a::q"), FQQN and all.
        return state, Rejected(AddressNotFound(command.address), rule="ADDR-ADDRESS-DELETE-MISSING")
    queues = get_queues_of(state, name)
    fqqns = tuple(q.fqqn for q in queues)
    if queues and not command.force:
        return state, Rejected(AddressHasQueues(command.address, fqqns), rule="ADDR-ADDRESS-DELETE-HAS-QUEUES")
    for queue in queues:
        state = remove_queue(state, queue)
    state = replace(state, addresses=state.addresses.remove(name))
    return state, AddressDeleted(name, fqqns, rule="ADDR-ADDRESS-DELETE")


def create_queue(state: AddressingState, command: CreateQueue) -> Transition:
    """Create a queue on an existing address.

    Checks in Artemis's order (``ActiveMQServerImpl.createQueue``): the queue
    name (ADDR-NAME-*, AMQ229216), an existing queue (ADDR-QUEUE-EXISTS,
    AMQ229019, naming the existing queue's address), the address
    (ADDR-QUEUE-NO-ADDRESS, AMQ229203), the routing type
    (ADDR-QUEUE-ROUTING-TYPE, AMQ229207); then ADDR-QUEUE-CREATE. Released
    Artemis first reads the names as management does (ADDR-CREATE-FQQN:
    :func:`~.artemis.compute_management_names`) and refuses only an empty
    queue part, then an empty address last (:func:`~.artemis.server_create_queue`).

    post: implies(isinstance(__return__[1], Rejected), __return__[0] == state)
    """
    parsing = state.options.name_parsing
    if parsing is not NameParsing.STRICT:
        address, name = compute_management_names(parsing, command.address, command.queue)
        grown, refusal = server_create_queue(state, address, name, command.routing_type, False,
                                             shown=(command.address, command.queue))
        if refusal is not None:
            return state, refusal
        rule = "ADDR-CREATE-FQQN" if (address, name) != (command.address, command.queue) else "ADDR-QUEUE-CREATE"
        return grown, QueueCreated(address, name, rule=rule)
    invalid = reject_invalid_name(command.queue)
    if invalid is not None:
        return state, invalid
    blocking = find_existing_queue(state, command.address, command.queue)
    if blocking is not None:
        return state, Rejected(QueueExists(blocking.name, blocking.address), rule="ADDR-QUEUE-EXISTS")
    address_found = state.addresses.get(command.address)
    if address_found is None:
        return state, Rejected(AddressNotFound(command.address), rule="ADDR-QUEUE-NO-ADDRESS")
    if command.routing_type not in address_found.routing_types:
        reason = RoutingTypeNotAllowed(command.address, command.routing_type, address_found.routing_types)
        return state, Rejected(reason, rule="ADDR-QUEUE-ROUTING-TYPE")
    new_state = add_queue(state, Queue(command.address, command.queue, command.routing_type))
    return new_state, QueueCreated(command.address, command.queue, rule="ADDR-QUEUE-CREATE")


def delete_queue(state: AddressingState, command: DeleteQueue) -> Transition:
    """Delete the queue a client name resolves to.

    The name resolves exactly as a lookup does (``ActiveMQServerImpl.destroyQueue``
    resolves through ``SimpleAddressManager.getBinding``, which looks up an FQQN's queue part). Rules
    ADDR-QUEUE-DELETE (count decremented: deleting one of two same-named
    queues makes the bare name resolve again; from 2.20 the last queue of
    an auto-created address takes the address with it, ARTEMIS-3541,
    ``ServerSessionImpl.deleteQueue``), ADDR-QUEUE-DELETE-MISSING
    (AMQ229017), ADDR-QUEUE-DELETE-AMBIGUOUS.
    """
    name, _ = strip_prefix(command.name, state.prefixes, state.options.prefix_match)
    found = resolve(state, name)
    if isinstance(found, NotFound):
        return state, Rejected(QueueNotFound(command.name), rule="ADDR-QUEUE-DELETE-MISSING")
    if isinstance(found, Ambiguous):
        return state, Rejected(AmbiguousName(command.name, found.candidates), rule="ADDR-QUEUE-DELETE-AMBIGUOUS")
    queue = state.queues[(found.address, found.queue)]
    shrunk = remove_queue(state, queue)
    info = shrunk.addresses.get(queue.address)
    if (state.options.delete_queue_removes_auto_created_address and info is not None and info.auto_created
            and not get_queues_of(shrunk, queue.address)):
        shrunk = replace(shrunk, addresses=shrunk.addresses.remove(queue.address))
    return shrunk, QueueDeleted(queue.address, queue.name, rule="ADDR-QUEUE-DELETE")


def lookup(state: AddressingState, command: Lookup) -> Transition:
    """Look a queue up by a client name; the state does not change (rules ADDR-LOOKUP-*).

    Without the address check this is Artemis's ``queueQuery``, which strips
    the address part twice (ADDR-LOOKUP-TWICE).

    post: __return__[0] == state
    """
    name, _ = strip_prefix(command.name, state.prefixes, state.options.prefix_match)
    return state, resolve(state, name, twice=not state.options.fqqn_checks_address)


def send(state: AddressingState, command: Send) -> Transition:
    """Send a message: auto-create what the settings allow, then say where it may go.

    Rules ADDR-PREFIX-STRIP (the prefix's routing type overrides the
    message's; the prefix is removed *before* the name is parsed as an FQQN, so
    ``anycast://a::q`` sends to ``a::q``; core Artemis's ``AddressInfo`` drops
    the ``::q`` first, a quirk the spec does not copy), ADDR-AUTO-ADDRESS / -NO-ADDRESS / -ROUTING-TYPE,
    ADDR-SEND-AUTO-QUEUE (an ANYCAST send auto-creates an ANYCAST queue named
    like the address; since ARTEMIS-2966 only when the address has no queue at
    all; never when the name is taken), ADDR-SEND-UNTYPED (a send without a
    routing type to a missing address creates it with the default address
    routing type, as routing-time auto-creation does since ARTEMIS-4089,
    ``PostOfficeImpl.checkAddress``; the seed's send only), ADDR-SEND-FQQN-AUTO-QUEUE (a send to a
    missing FQQN queue creates it), ADDR-SEND-ROUTE (``LocalQueueBinding.route``: a MULTICAST
    message copies to every MULTICAST queue, an ANYCAST one goes to one ANYCAST queue, one without a routing
    type does both), ADDR-SEND-FQQN (ARTEMIS-1867: a send to an FQQN reaches only that
    queue, and only if its routing type matches the message's).

    Released Artemis's core producer is :func:`~.artemis.send_core`
    (``send_creation`` NEVER or ROUTING_TIME): it refuses no name, and from
    2.28.0 a refusal may keep an address it created on the way.

    post: implies(isinstance(__return__[1], Rejected) and is_seed_send(state), __return__[0] == state)
    """
    name, prefix_type = strip_prefix(command.name, state.prefixes, state.options.prefix_match)
    routing_type = prefix_type or command.routing_type
    if state.options.send_creation is not SendCreation.ON_SEND:
        return send_core(state, name, routing_type)
    parsed = parse_name(name)
    invalid = reject_invalid_name(parsed.address)
    if invalid is None and parsed.is_fqqn:
        invalid = reject_invalid_name(parsed.queue)
    if invalid is not None:
        return state, invalid
    address = parsed.address
    settings = get_settings(state, address)
    grown, created_address = state, False
    if routing_type is not None or address not in state.addresses:
        address_type = routing_type or settings.default_address_routing_type
        grown, rejection, created_address = ensure_address(state, address, address_type, settings)
        if rejection is not None:
            return state, rejection
    created_queue: str | None = None
    wanted = wanted_queue_for_send(grown, parsed.is_fqqn, address, parsed.queue, routing_type)
    if wanted is not None and settings.auto_create_queues:
        queue_type = routing_type or settings.default_queue_routing_type
        grown, rejection, _ = auto_create_queue(grown, address, wanted, queue_type, settings)
        if rejection is not None:
            return state, rejection
        created_queue = grown.queues[(address, wanted)].fqqn
    created = address if created_address else None
    return grown, route_message(grown, address, parsed.queue if parsed.is_fqqn else None, routing_type, created,
                                created_queue)


def is_seed_consume(state: AddressingState) -> bool:
    """Whether consumes follow the seed model, whose refusals change nothing (ADDR-REJECT-ATOMIC)."""
    return state.options.consumer is ConsumerModel.RESOLVE


def is_seed_send(state: AddressingState) -> bool:
    """Whether sends follow the seed model, whose refusals change nothing (ADDR-REJECT-ATOMIC)."""
    return state.options.send_creation is SendCreation.ON_SEND


def wanted_queue_for_send(
    state: AddressingState, is_fqqn: bool, address: str, queue: str, routing_type: RoutingType | None
) -> str | None:
    """The queue a send would auto-create if allowed, or None (rules ADDR-SEND-*-AUTO-QUEUE).

    A send without a routing type creates no queue: Artemis's
    ``ServerSessionImpl.checkAutoCreate`` answers EXISTED at once for it.

    A send never refuses because of a queue name: when the name it would
    create is already taken (on any address under broker-wide names), it
    creates nothing, as Artemis's ``checkAutoCreate`` finds the queue with
    ``locateQueue`` and reports it as existing; the message then goes
    wherever the address's own queues take it (possibly nowhere).
    """
    if routing_type is None:
        return None
    if is_fqqn:
        wanted = queue
    elif routing_type is not RoutingType.ANYCAST:
        return None
    elif state.options.send_reuses_existing_queue and get_queues_of(state, address):
        return None
    else:
        wanted = address
    return None if find_existing_queue(state, address, wanted) is not None else wanted


def consume(state: AddressingState, command: Consume) -> Transition:
    """Attach a consumer to the queue a client name resolves to, auto-creating it when allowed.

    Rules ADDR-CONSUME-ATTACH, ADDR-CONSUME-AMBIGUOUS,
    ADDR-CONSUME-MULTICAST-QUEUE (ARTEMIS-4512, 2.32.0: a bare-name ANYCAST
    consumer may not attach to a MULTICAST queue), ADDR-CONSUME-NO-QUEUE
    (AMQ229017 when auto-create-queues is off), ADDR-CONSUME-AUTO-QUEUE
    (``checkAutoCreate``: a bare name creates queue and address of that name;
    an FQQN creates its queue part on its address part; the queue's routing
    type is the consumer's, else the address settings' default),
    ADDR-CONSUME-FQQN-ELSEWHERE (an FQQN whose queue name is bound on another
    address is refused as not found, as AMQP consumer creation reports
    "does not exist for address"; ``AmqpFullyQualifiedNameTest``).

    With ``consumer`` CORE it is Artemis's core client (:func:`~.artemis.consume_core`, rule
    ADDR-CONSUME-CORE): it attaches by the queue part alone and creates nothing.

    With ``consumer`` JMS the consumer is Artemis's core JMS client
    (:func:`~.artemis.consume_jms`): a queue consumer for ANYCAST or no
    routing type, a topic consumer for MULTICAST on an FQQN. A MULTICAST
    consumer by bare name has no JMS counterpart (a topic consumer makes a
    subscription queue with a generated name); it is resolved as here. A
    JMS consumer may be refused after it made an address or a queue.

    post: implies(isinstance(__return__[1], Rejected) and is_seed_consume(state), __return__[0] == state)
    """
    name, prefix_type = strip_prefix(command.name, state.prefixes, state.options.prefix_match)
    if state.options.consumer is ConsumerModel.CORE:
        return consume_core(state, name, command.name)
    if state.options.consumer is ConsumerModel.JMS and (command.routing_type is not RoutingType.MULTICAST
                                                          or parse_name(name).is_fqqn):
        return consume_jms(state, name, prefix_type, command.routing_type, command.name)
    routing_type = prefix_type or command.routing_type
    parsed = parse_name(name)
    found = resolve(state, name)
    if isinstance(found, Resolved):
        if (state.options.anycast_consume_rejects_multicast_queue and not parsed.is_fqqn
                and routing_type is RoutingType.ANYCAST and found.routing_type is RoutingType.MULTICAST):
            reason = QueueRoutingTypeMismatch(found.address, found.queue, found.routing_type, routing_type)
            return state, Rejected(reason, rule="ADDR-CONSUME-MULTICAST-QUEUE")
        return state, Attached(found.address, found.queue, rule="ADDR-CONSUME-ATTACH")
    if isinstance(found, Ambiguous):
        return state, Rejected(AmbiguousName(command.name, found.candidates), rule="ADDR-CONSUME-AMBIGUOUS")
    address, queue = parsed.address, parsed.queue
    if queue and find_existing_queue(state, address, queue) is not None:
        return state, Rejected(QueueNotFound(command.name), rule="ADDR-CONSUME-FQQN-ELSEWHERE")
    invalid = reject_invalid_name(address) or reject_invalid_name(queue)
    if invalid is not None:
        return state, invalid
    settings = get_settings(state, address)
    if not settings.auto_create_queues:
        return state, Rejected(QueueNotFound(command.name), rule="ADDR-CONSUME-NO-QUEUE")
    queue_type = routing_type or settings.default_queue_routing_type
    grown, rejection, created_address = auto_create_queue(state, address, queue, queue_type, settings)
    if rejection is not None:
        return state, rejection
    created = address if created_address else None
    fqqn = grown.queues[(address, queue)].fqqn
    return grown, Attached(address, queue, created, fqqn, rule="ADDR-CONSUME-AUTO-QUEUE")


def set_prefix(state: AddressingState, command: SetPrefix) -> Transition:
    """Configure an acceptor routing-type prefix, or remove it when the routing type is None.

    Rule ADDR-CONFIG-PREFIX (acceptor URL parameters ``anycastPrefix`` and
    ``multicastPrefix``). The seed refuses an empty prefix; Artemis takes it,
    and it then matches every name (``PrefixMatch.HASH_MAP``).
    """
    if command.prefix == "" and state.options.prefix_match is PrefixMatch.LONGEST:
        return state, Rejected(InvalidName("", "the prefix is empty"), rule="ADDR-CONFIG-PREFIX")
    if command.routing_type is None:
        prefixes = state.prefixes.remove(command.prefix) if command.prefix in state.prefixes else state.prefixes
    else:
        prefixes = state.prefixes.set(command.prefix, command.routing_type)
    return replace(state, prefixes=prefixes), Configured(rule="ADDR-CONFIG-PREFIX")


def set_address_settings(state: AddressingState, command: SetAddressSettings) -> Transition:
    """Set the auto-creation settings of one address, or of ``#`` for all others.

    Rule ADDR-CONFIG-SETTINGS (Artemis ``address-settings``: ``auto-create-addresses``,
    ``auto-create-queues``, ``default-address-routing-type``,
    ``default-queue-routing-type``; matched exactly, ``#`` as the catch-all).
    """
    if command.match == "":
        return state, Rejected(InvalidName("", "the settings match is empty"), rule="ADDR-CONFIG-SETTINGS")
    settings = AddressSettings(
        command.auto_create_addresses,
        command.auto_create_queues,
        command.default_address_routing_type,
        command.default_queue_routing_type,
    )
    new_state = replace(state, settings=state.settings.set(command.match, settings))
    return new_state, Configured(rule="ADDR-CONFIG-SETTINGS")


def query_address(state: AddressingState, command: QueryAddress) -> Transition:
    """Answer an address query; the state does not change (rule ADDR-QUERY-ADDRESS).

    The name loses its prefix (ADDR-PREFIX-STRIP, as ``ServerSessionImpl.executeAddressQuery`` calls
    ``removePrefix``) and an FQQN is read as its address part (``ActiveMQServerImpl.addressQuery`` calls
    ``CompositeAddress.extractAddressName``). A query refuses no name: one that names nothing is answered
    "does not exist". The queues are listed by their names, sorted (the client's ``addressQuery`` reads them
    from a binding query, ``ServerSessionImpl.executeBindingQuery``).

    post: __return__[0] == state
    """
    name, _ = strip_prefix(command.address, state.prefixes, state.options.prefix_match)
    address = parse_name(name).address
    found = state.addresses.get(address)
    if found is None:
        return state, AddressQueried(address, False, rule="ADDR-QUERY-ADDRESS")
    queues = tuple(sorted(queue.name for queue in get_queues_of(state, address)))
    return state, AddressQueried(address, True, found.routing_types, queues, rule="ADDR-QUERY-ADDRESS")


TRANSITIONS: dict[type[Any], Callable[[AddressingState, Any], Transition]] = {
    CreateAddress: create_address,
    DeleteAddress: delete_address,
    CreateQueue: create_queue,
    DeleteQueue: delete_queue,
    Lookup: lookup,
    Send: send,
    Consume: consume,
    SetPrefix: set_prefix,
    SetAddressSettings: set_address_settings,
    QueryAddress: query_address,
}


def apply(state: AddressingState, command: AddressingCommand) -> Transition:
    """Apply any addressing command: the one entry point the harness drives."""
    return TRANSITIONS[type(command)](state, command)

