"""Operations: each command of the address model as a pure state transition.

Introduction
------------
Every operation is a pure function ``(state, command) -> (state, outcome)``.
:func:`apply` dispatches by command type through the table ``TRANSITIONS``.
Nothing here mutates: a new state is built with :func:`dataclasses.replace`
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

import dataclasses
from collections.abc import Callable
from typing import Any

from ..profiles import QueueNameScope
from .commands import (
    AddressingCommand,
    Consume,
    CreateAddress,
    CreateQueue,
    DeleteAddress,
    DeleteQueue,
    Lookup,
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


def find_existing_queue(state: AddressingState, address: str, queue: str) -> Queue | None:
    """The queue that blocks creating ``address::queue``, if any (rule ADDR-QUEUE-EXISTS).

    Broker-wide scope (released Artemis, ``ActiveMQServerImpl.createQueue``,
    AMQ229019): any queue of that name, on any address. Per-address scope
    (seed 000's ``BindingKey``): only a queue of that name on that address.
    """
    if state.options.name_scope is QueueNameScope.BROKER:
        same_name = get_queues_named(state, queue)
        return same_name[0] if same_name else None
    return state.queues.get((address, queue))


def add_queue(state: AddressingState, queue: Queue) -> AddressingState:
    """Bind ``queue`` and increment its name's address count (rule ADDR-QUEUE-CREATE)."""
    count = state.name_counts.get(queue.name, 0)
    return dataclasses.replace(
        state,
        queues=state.queues.set((queue.address, queue.name), queue),
        name_counts=state.name_counts.set(queue.name, count + 1),
    )


def remove_queue(state: AddressingState, queue: Queue) -> AddressingState:
    """Unbind ``queue`` and decrement its name's count, dropping a zero (rule ADDR-QUEUE-DELETE)."""
    count = state.name_counts[queue.name] - 1
    counts = state.name_counts.set(queue.name, count) if count else state.name_counts.remove(queue.name)
    return dataclasses.replace(state, queues=state.queues.remove((queue.address, queue.name)), name_counts=counts)


def resolve(state: AddressingState, name: str) -> LookupOutcome:
    """Resolve a (prefix-free) client name to a queue.

    Rules ADDR-LOOKUP-FQQN (seed 000 scenario 2; AMQP
    ``DefaultSenderController.getMatchingQueue``): an FQQN resolves to the
    queue bound to its address or to nothing, never ambiguously.
    ADDR-LOOKUP-FQQN-IGNORED (core ``SimpleAddressManager.getBinding``): with
    ``fqqn_checks_address`` off, the address part is discarded and the queue
    part is looked up as a bare name. ADDR-LOOKUP-BARE-NONE, -ONE, -MANY
    (seed 000 scenarios 1 and 3): a bare name's per-name count decides.
    """
    parsed = parse_name(name)
    if parsed.is_fqqn and state.options.fqqn_checks_address:
        queue = state.queues.get((parsed.address, parsed.queue))
        if queue is None:
            return NotFound(name, rule="ADDR-LOOKUP-FQQN")
        return Resolved(queue.address, queue.name, queue.routing_type, rule="ADDR-LOOKUP-FQQN")
    bare = parsed.queue
    via = "ADDR-LOOKUP-FQQN-IGNORED" if parsed.is_fqqn else None
    count = state.name_counts.get(bare, 0)
    if count == 0:
        return NotFound(name, rule=via or "ADDR-LOOKUP-BARE-NONE")
    candidates = get_queues_named(state, bare)
    if count == 1:
        only = candidates[0]
        return Resolved(only.address, only.name, only.routing_type, rule=via or "ADDR-LOOKUP-BARE-ONE")
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
        return dataclasses.replace(state, addresses=state.addresses.set(address, created)), None, True
    if routing_type in existing.routing_types:
        return state, None, False
    if not settings.auto_create_addresses:
        reason = RoutingTypeNotAllowed(address, routing_type, existing.routing_types)
        return state, Rejected(reason, rule="ADDR-AUTO-ROUTING-TYPE"), False
    widened = dataclasses.replace(existing, routing_types=existing.routing_types | {routing_type})
    return dataclasses.replace(state, addresses=state.addresses.set(address, widened)), None, False


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
    AMQ229204 "address already exists"), ADDR-ADDRESS-CREATE.

    post: implies(isinstance(__return__[1], Rejected), __return__[0] == state)
    """
    invalid = reject_invalid_name(command.address)
    if invalid is not None:
        return state, invalid
    if command.address in state.addresses:
        return state, Rejected(AddressExists(command.address), rule="ADDR-ADDRESS-EXISTS")
    address = Address(command.address, command.routing_types)
    new_state = dataclasses.replace(state, addresses=state.addresses.set(command.address, address))
    return new_state, AddressCreated(command.address, rule="ADDR-ADDRESS-CREATE")


def delete_address(state: AddressingState, command: DeleteAddress) -> Transition:
    """Delete an address, refusing while it has queues unless forced.

    Rules ADDR-ADDRESS-DELETE-MISSING (``ActiveMQServerImpl.removeAddressInfo``,
    AMQ229203), ADDR-ADDRESS-DELETE-HAS-QUEUES (AMQ229205 "address has
    bindings"), ADDR-ADDRESS-DELETE (with ``force`` its queues go first, each
    decrementing its name's count).
    """
    if command.address not in state.addresses:
        return state, Rejected(AddressNotFound(command.address), rule="ADDR-ADDRESS-DELETE-MISSING")
    queues = get_queues_of(state, command.address)
    fqqns = tuple(q.fqqn for q in queues)
    if queues and not command.force:
        return state, Rejected(AddressHasQueues(command.address, fqqns), rule="ADDR-ADDRESS-DELETE-HAS-QUEUES")
    for queue in queues:
        state = remove_queue(state, queue)
    state = dataclasses.replace(state, addresses=state.addresses.remove(command.address))
    return state, AddressDeleted(command.address, fqqns, rule="ADDR-ADDRESS-DELETE")


def create_queue(state: AddressingState, command: CreateQueue) -> Transition:
    """Create a queue on an existing address.

    Checks in Artemis's order (``ActiveMQServerImpl.createQueue``): the queue
    name (ADDR-NAME-*, AMQ229216), an existing queue (ADDR-QUEUE-EXISTS,
    AMQ229019, naming the existing queue's address), the address
    (ADDR-QUEUE-NO-ADDRESS, AMQ229203), the routing type
    (ADDR-QUEUE-ROUTING-TYPE, AMQ229207); then ADDR-QUEUE-CREATE.

    post: implies(isinstance(__return__[1], Rejected), __return__[0] == state)
    """
    invalid = reject_invalid_name(command.queue)
    if invalid is not None:
        return state, invalid
    blocking = find_existing_queue(state, command.address, command.queue)
    if blocking is not None:
        return state, Rejected(QueueExists(blocking.name, blocking.address), rule="ADDR-QUEUE-EXISTS")
    address = state.addresses.get(command.address)
    if address is None:
        return state, Rejected(AddressNotFound(command.address), rule="ADDR-QUEUE-NO-ADDRESS")
    if command.routing_type not in address.routing_types:
        reason = RoutingTypeNotAllowed(command.address, command.routing_type, address.routing_types)
        return state, Rejected(reason, rule="ADDR-QUEUE-ROUTING-TYPE")
    new_state = add_queue(state, Queue(command.address, command.queue, command.routing_type))
    return new_state, QueueCreated(command.address, command.queue, rule="ADDR-QUEUE-CREATE")


def delete_queue(state: AddressingState, command: DeleteQueue) -> Transition:
    """Delete the queue a client name resolves to.

    The name resolves exactly as a lookup does (``ActiveMQServerImpl.destroyQueue``
    resolves through ``getBinding``; Artemis note C6). Rules
    ADDR-QUEUE-DELETE (count decremented: deleting one of two same-named
    queues makes the bare name resolve again), ADDR-QUEUE-DELETE-MISSING
    (AMQ229017), ADDR-QUEUE-DELETE-AMBIGUOUS.
    """
    name, _ = strip_prefix(command.name, state.prefixes)
    found = resolve(state, name)
    if isinstance(found, NotFound):
        return state, Rejected(QueueNotFound(name), rule="ADDR-QUEUE-DELETE-MISSING")
    if isinstance(found, Ambiguous):
        return state, Rejected(AmbiguousName(name, found.candidates), rule="ADDR-QUEUE-DELETE-AMBIGUOUS")
    queue = state.queues[(found.address, found.queue)]
    return remove_queue(state, queue), QueueDeleted(queue.address, queue.name, rule="ADDR-QUEUE-DELETE")


def lookup(state: AddressingState, command: Lookup) -> Transition:
    """Look a queue up by a client name; the state does not change (rules ADDR-LOOKUP-*).

    post: __return__[0] == state
    """
    name, _ = strip_prefix(command.name, state.prefixes)
    return state, resolve(state, name)


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
    ``PostOfficeImpl.checkAddress``), ADDR-SEND-FQQN-AUTO-QUEUE (a send to a missing FQQN queue creates
    it), ADDR-SEND-ROUTE (D2: a MULTICAST message copies to every MULTICAST
    queue, an ANYCAST one goes to one ANYCAST queue, one without a routing
    type does both), ADDR-SEND-FQQN (G2: a send to an FQQN reaches only that
    queue, and only if its routing type matches the message's).

    post: implies(isinstance(__return__[1], Rejected), __return__[0] == state)
    """
    name, prefix_type = strip_prefix(command.name, state.prefixes)
    routing_type = prefix_type or command.routing_type
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
    if parsed.is_fqqn:
        target = grown.queues.get((address, parsed.queue))
        hit = target is not None and routing_type in (None, target.routing_type)
        reached: tuple[str, ...] = (target.fqqn,) if target is not None and hit else ()
        return grown, Routed(address, reached, (), created, created_queue, rule="ADDR-SEND-FQQN")
    queues = get_queues_of(grown, address)
    copies = tuple(q.fqqn for q in queues
                   if q.routing_type is RoutingType.MULTICAST and routing_type is not RoutingType.ANYCAST)
    anycast = tuple(q.fqqn for q in queues
                    if q.routing_type is RoutingType.ANYCAST and routing_type is not RoutingType.MULTICAST)
    return grown, Routed(address, copies, anycast, created, created_queue, rule="ADDR-SEND-ROUTE")


def wanted_queue_for_send(
    state: AddressingState, is_fqqn: bool, address: str, queue: str, routing_type: RoutingType | None
) -> str | None:
    """The queue a send would auto-create if allowed, or None (rules ADDR-SEND-*-AUTO-QUEUE).

    A send without a routing type creates no queue: Artemis's
    ``checkAutoCreate`` answers EXISTED at once for it (Artemis note D4).

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

    post: implies(isinstance(__return__[1], Rejected), __return__[0] == state)
    """
    name, prefix_type = strip_prefix(command.name, state.prefixes)
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
        return state, Rejected(AmbiguousName(name, found.candidates), rule="ADDR-CONSUME-AMBIGUOUS")
    address, queue = parsed.address, parsed.queue
    if queue and find_existing_queue(state, address, queue) is not None:
        return state, Rejected(QueueNotFound(name), rule="ADDR-CONSUME-FQQN-ELSEWHERE")
    invalid = reject_invalid_name(address) or reject_invalid_name(queue)
    if invalid is not None:
        return state, invalid
    settings = get_settings(state, address)
    if not settings.auto_create_queues:
        return state, Rejected(QueueNotFound(name), rule="ADDR-CONSUME-NO-QUEUE")
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
    ``multicastPrefix``). An empty prefix is rejected: it would match every name.
    """
    if command.prefix == "":
        return state, Rejected(InvalidName("", "the prefix is empty"), rule="ADDR-CONFIG-PREFIX")
    if command.routing_type is None:
        prefixes = state.prefixes.remove(command.prefix) if command.prefix in state.prefixes else state.prefixes
    else:
        prefixes = state.prefixes.set(command.prefix, command.routing_type)
    return dataclasses.replace(state, prefixes=prefixes), Configured(rule="ADDR-CONFIG-PREFIX")


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
    new_state = dataclasses.replace(state, settings=state.settings.set(command.match, settings))
    return new_state, Configured(rule="ADDR-CONFIG-SETTINGS")


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
}


def apply(state: AddressingState, command: AddressingCommand) -> Transition:
    """Apply any addressing command: the one entry point the harness drives."""
    return TRANSITIONS[type(command)](state, command)

