"""Operations: each load-balancing command as a state transition, with its choices made explicit.

Introduction
------------
``apply(state, command)`` returns the next state and the outcome, making
every choice the strict way (Artemis's own round robin).
``apply_choosing(state, command, chooser)`` lets a :class:`Chooser` pick
among the allowed candidates at each choice point instead; permissive
judging (:mod:`.judge`) uses it to follow whichever allowed choice a broker
made.

Theory of operation:

1. A send on node N goes through N's bindings of its address. Unless it is
   an FQQN send under the older rules (LB-FQQN-LOCAL), each routing-name
   group picks at most one binding (``BindingsImpl.simpleRouting``,
   LB-ROUND-ROBIN), and the message lands on that queue, wherever it is. No
   bindings at all is NO_BINDINGS; bindings that all refuse give the
   profile's status (LB-UNROUTED-STATUS).
2. A message that lands on a queue goes to one started matching consumer,
   or waits.
3. Redistribution triggers (the RD-TRIGGER rules) look the local queue up
   *by routing name*, as ``PostOfficeImpl.onNotification`` does, and add a
   redistributor unless the delay is -1 (RD-DELAY). A consumer attaching cancels its queue's
   redistributor and takes the waiting messages it matches, as does a
   paused consumer resuming (without the cancelling).
4. After every step that was not refused, each active redistributor whose
   queue the step prompted makes one delivery attempt (:func:`deliver`):
   its waiting messages in order, grouped ones skipped (RD-GROUPED), each moved to a
   target (RD-TARGET) as a copy with a new ID, until one finds no target (BUSY).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..addressing.names import RoutingType
from ..frozen import FrozenMap, replace
from ..outcome import is_query
from ..addressing.names import strip_prefix
from ..profiles import FqqnSend, PrefixMatch, SendAutoCreate
from .choice import (
    ChoicePoint,
    Member,
    Target,
    allowed_bindings,
    allowed_targets,
    choose_binding,
    choose_target,
)
from .commands import (
    AddNode,
    Attach,
    BalancingCommand,
    Close,
    Configure,
    CreateQueue,
    DeleteQueue,
    Ack,
    Commit,
    Pause,
    QueryQueue,
    Receive,
    Resend,
    Resume,
    Rollback,
    Send,
    SetLink,
    SetPrefix,
    Tick,
    UpdateQueue,
)
from .model import (
    REDISTRIBUTING,
    AddressBalancing,
    BalancingState,
    LbType,
    Message,
    QueueKey,
    QueueState,
    get_bindings,
    get_group,
    get_groups,
    get_settings,
    is_connected,
    is_preferred,
    lb_type_on,
    matches,
)
from .outcomes import (
    BalancingOutcome,
    Done,
    Dropped,
    Failed,
    QueueQueried,
    Redistributed,
    Refusal,
    Refused,
    RoutingStatus,
    Sent,
)
from .consumers import process_ack, process_attach, process_close, process_pause, process_receive, process_resume
from .queues import add_redistributor, land
from .bridges import cross, drop_queue, forget_address, land_from, process_resend
from .transactions import forget_queue, hold_send, open_session, process_commit, process_rollback
from .step import STRICT, Chooser, Step
from .wildcards import binds, is_wild


# --- landing on a queue -------------------------------------------------------------


# --- first routing ------------------------------------------------------------------


def is_eligible(state: BalancingState, node: str, queue: QueueState, message: Message, lb_type: LbType) -> bool:
    """``matchBinding`` (LB-ELIGIBLE), with the message's routing type narrowing the candidates.

    A remote binding under OFF or OFF_WITH_REDISTRIBUTION is eligible only
    for a MULTICAST message, and under OFF only where the profile has the
    2.29.0 exception (ARTEMIS-4196). A balanced FQQN send sees only queues
    of the FQQN's name (ARTEMIS-5597). The queue filter must match (LB-ELIGIBLE).
    """
    if message.routing_type is not None and message.routing_type is not queue.routing_type:
        return False
    if queue.node != node and lb_type in (LbType.OFF, LbType.OFF_WITH_REDISTRIBUTION):
        forwards = lb_type is LbType.OFF_WITH_REDISTRIBUTION or state.options.off_forwards_multicast
        if not (forwards and message.routing_type is RoutingType.MULTICAST):
            return False
    if message.fqqn_queue is not None and queue.name != message.fqqn_queue:
        return False
    return matches(queue.filter, message)


def route(step: Step, node: str, message: Message, tx: str | None = None) -> tuple[RoutingStatus, str]:
    """Route a new message from ``node``; return its status and the deciding rule.

    In a transaction (``tx``) the bindings are chosen and the positions move now, but the message waits in the
    session for its commit (LB-TX-SEND): a local queue that drops it does so now, a remote binding counts as
    routed (the remote queue decides when the message arrives, after the commit).
    """
    state = step.state
    bindings = get_bindings(state, message.address)
    if not bindings:
        return RoutingStatus.NO_BINDINGS, "LB-WILDCARD-SEND" if is_wild(state.options, message.address) \
            else "LB-NO-BINDINGS"
    landed: list[QueueKey] = []
    fqqn_mode = state.options.fqqn_send
    if message.fqqn_queue is not None and fqqn_mode is not FqqnSend.BALANCED:
        queue = state.queues.get((node, message.fqqn_queue))
        if queue is not None and binds(state.options, queue.address, message.address) and (
                message.routing_type is None or message.routing_type is queue.routing_type) and (
                fqqn_mode is FqqnSend.LOCAL_UNFILTERED or matches(queue.filter, message)):
            landed.append((queue.node, queue.name))
        rule = "LB-FQQN-LOCAL"
    else:
        lb_type = lb_type_on(state, node, message.address)
        for routing_name, group in get_groups(bindings).items():
            members = tuple(
                Member(is_eligible(state, node, q, message, lb_type), is_preferred(state, node, q, message, lb_type),
                       is_connected(state, node, q), q.node == node)
                for q in group
            )
            group_key = (node, message.address, routing_name)
            strict, _ = choose_binding(members, step.state.positions.get(group_key, 0), lb_type)
            if strict is None:
                continue
            index = step.choose("binding", group_key, tuple(f"{q.node}/{q.name}" for q in group),
                                allowed_bindings(members, lb_type), strict)
            step.update(positions=step.state.positions.set(group_key, (index + 1) % len(members)))
            landed.append((group[index].node, group[index].name))
        rule = "LB-ROUND-ROBIN"
    # a remote binding counts as routed whatever the remote queue then does: the message went into the local
    # store-and-forward queue (RemoteQueueBindingImpl.route); a local queue that drops it adds nothing
    if tx is not None:
        accepted = [key for key in sorted(landed) if key[0] != node or not step.state.queues[key].drops]
        if accepted:
            hold_send(step, tx, message, tuple(accepted))
    else:
        accepted = land_from(step, node, message, sorted(landed))
    if accepted:
        return RoutingStatus.OK, rule
    return RoutingStatus(state.options.unrouted_status.value), "LB-UNROUTED-STATUS"


# --- redistribution -----------------------------------------------------------------


def redistribution_group(state: BalancingState, queue: QueueState, message: Message) -> str:
    """The group a waiting message is redistributed in: the queue's *name* (seed 003), or for an FQQN
    message on an ANYCAST queue the FQQN's address (RD-GROUP, ARTEMIS-3918, when the profile has it)."""
    if message.fqqn_queue is not None and queue.routing_type is RoutingType.ANYCAST \
            and state.options.fqqn_redistribution_group:
        return message.address
    return queue.name


def redistribute_one(step: Step, queue: QueueState, message: Message) -> bool:
    """``PostOfficeImpl.redistribute`` + ``BindingsImpl.redistribute`` for one message; False is BUSY.

    Only under a type whose ``allowRedistribute()`` holds (seed 003, RD-ALLOWED); the
    target is the first member from the group's position that has a
    matching consumer, is not the originating queue and whose filter
    matches (RD-TARGET), in the bindings of the message's address, or before
    2.19.0 of the queue's address (RD-WILDCARD, ARTEMIS-3223). The copy gets a new message ID: before 2.29.0 it is made,
    and the ID used up, before the target is looked for (ARTEMIS-4207).
    """
    state = step.state
    address = message.address if state.options.redistribute_by_message_address else queue.address
    lb_type = lb_type_on(state, queue.node, address)
    if lb_type not in REDISTRIBUTING:
        return False
    early_copy = step.new_message_id() if state.options.copy_before_target else None
    group_name = redistribution_group(state, queue, message)
    group = get_group(state, address, group_name)
    if not group:
        return False
    targets = tuple(
        Target(is_preferred(state, queue.node, q, message, lb_type), q.node == queue.node and q.name == queue.name,
               matches(q.filter, message))
        for q in group
    )
    group_key = (queue.node, address, group_name)
    strict, _ = choose_target(targets, state.positions.get(group_key, 0))
    if strict is None:
        return False
    index = step.choose("target", group_key, tuple(f"{q.node}/{q.name}" for q in group), allowed_targets(targets),
                        strict)
    step.update(positions=step.state.positions.set(group_key, (index + 1) % len(group)))
    current = step.state.queues[(queue.node, queue.name)]
    step.put_queue(replace(current, pending=tuple(m for m in current.pending if m.id != message.id)))
    # before ARTEMIS-3223 the copy is addressed to its queue's address, a wildcard for a wildcard queue
    copy = replace(message, id=step.new_message_id() if early_copy is None else early_copy, address=address,
                   deliveries=0)  # a new reference: its delivery count starts again
    chosen = group[index]
    step.events.append(Redistributed(message.id, queue.node, queue.name, copy.id, chosen.node, chosen.name))
    if chosen.node == queue.node:
        land(step, (chosen.node, chosen.name), copy)
    else:  # over the cluster bridge, with the copy's own bridge ID (LB-BRIDGE-DUP)
        cross(step, queue.node, copy, ((chosen.node, chosen.name),))
    return True


def deliver(step: Step) -> None:
    """One delivery attempt for every active redistributor whose queue was prompted, in creation order.

    Each attempt is ``Redistributor.handle``.

    A redistributor that answered BUSY tries again only when its queue's
    delivery is prompted (``QueueImpl.deliverAsync``): when it is added or
    becomes active after its delay, when a trigger finds it in place
    (``addRedistributor``: "just prompt delivery"), or when a message lands
    on its queue. A remote consumer closing, for one, prompts nothing, even
    where it makes a target acceptable (found fuzzing Artemis 2.40.0).
    """
    clock = step.state.clock
    if not step.prompted and clock == step.start_clock:
        return  # nothing was prompted and no delay ran out: no redistributor tries
    active = sorted((q.serial, q.redistributor, q) for q in step.state.queues.values()
                    if q.redistributor is not None and q.redistributor <= clock)
    for _, since, queue in active:
        if (queue.node, queue.name) not in step.prompted and since <= step.start_clock:
            continue
        for message in queue.pending:
            if message.grouped:
                continue
            if not redistribute_one(step, step.state.queues[(queue.node, queue.name)], message):
                break


# --- the operations -----------------------------------------------------------------


def _add_node(step: Step, command: AddNode) -> BalancingOutcome:
    if command.node in step.state.nodes:
        return Refused(Refusal.NODE_EXISTS, rule="LB-NODES")
    step.update(nodes=(*step.state.nodes, command.node))
    for queue in step.state.queues.values():  # the new node learns every queue as a remote binding
        record_types(step, queue.address)
    return Done(rule="LB-NODES")


def record_types(step: Step, address: str) -> None:
    """Remember which nodes' bindings have taken the configured type because a queue of ``address`` is, or
    joined them as, a remote binding (LB-TYPE-ADOPTED)."""
    state = step.state
    typed = set()
    for each in typed_addresses(state, address):
        bindings = get_bindings(state, each)
        typed |= {(node, each) for node in state.nodes if any(q.node != node for q in bindings)}
    if not typed <= state.typed:
        step.update(typed=state.typed | typed)


def typed_addresses(state: BalancingState, address: str) -> set[str]:
    """The addresses whose bindings a remote binding of a queue of ``address`` joins: its own, and for a wild
    one each address of some queue that it matches (LB-TYPE-ADOPTED, LB-WILDCARD-BINDINGS)."""
    found = {address}
    if state.options.wildcard_routing and is_wild(state.options, address):
        found |= {q.address for q in state.queues.values() if binds(state.options, address, q.address)}
    return found


def _create_queue(step: Step, command: CreateQueue) -> BalancingOutcome:
    state = step.state
    if command.node not in state.nodes:
        return Refused(Refusal.UNKNOWN_NODE, rule="LB-NODES")
    if (command.node, command.queue) in state.queues:
        return Refused(Refusal.QUEUE_EXISTS, rule="LB-QUEUE-PER-NODE")
    if not command.enabled and not state.options.queue_enabled:
        return Refused(Refusal.NOT_SUPPORTED, rule="LB-QUEUE-ENABLED")
    add_queue(step, QueueState(command.node, command.queue, command.address, command.routing_type, command.filter,
                               state.next_serial, enabled=command.enabled,
                               purge_on_no_consumers=command.purge_on_no_consumers, configured_filter=command.filter))
    return Done(rule="LB-QUEUE-PER-NODE")


def add_queue(step: Step, queue: QueueState) -> None:
    """A new queue (``queue.serial`` the next one): every node binds it, and a connected remote queue of its
    address with consumers gives it a redistributor where the profile has that trigger (RD-TRIGGER-NEW-QUEUE)."""
    step.put_queue(queue)
    step.update(next_serial=queue.serial + 1)
    record_types(step, queue.address)
    found = step.state.queues.get((queue.node, queue.routing_name))
    if step.state.options.new_queue_redistributes and found is not None and any(
        q.node != queue.node and q.consumers and is_connected(step.state, queue.node, q)
        for q in get_bindings(step.state, queue.address)
    ):
        add_redistributor(step, (found.node, found.name))


def _delete_queue(step: Step, command: DeleteQueue) -> BalancingOutcome:
    key = (command.node, command.queue)
    queue = step.state.queues.get(key)
    if queue is None:
        return Refused(Refusal.QUEUE_NOT_FOUND, rule="LB-QUEUE-PER-NODE")
    if queue.consumers:
        return Refused(Refusal.QUEUE_IN_USE, rule="LB-DELETE-QUEUE")
    step.events.extend(Dropped(m.id, queue.node, queue.name) for m in queue.pending)
    forget_queue(step, key)
    drop_queue(step, key)
    state = step.state
    consumer_positions = FrozenMap((k, v) for k, v in state.consumer_positions.items() if k != key)
    step.update(queues=state.queues.remove(key), consumer_positions=consumer_positions)
    # a group that lost its last member loses its position, on every node and in every plain address's bindings
    # the queue was part of (CopyOnWriteBindings.removeBinding, LB-WILDCARD-BINDINGS)
    options = step.state.options
    emptied = {k for k in step.state.positions if k[2] == queue.routing_name
               and binds(options, queue.address, k[1]) and not get_group(step.state, k[1], k[2])}
    if emptied:
        step.update(positions=FrozenMap((k, v) for k, v in step.state.positions.items() if k not in emptied))
    # an address without bindings loses them on every node, and with them the type they took (LB-TYPE-ADOPTED)
    if any(not get_bindings(step.state, address) for _, address in step.state.typed):
        step.update(typed=frozenset(k for k in step.state.typed if get_bindings(step.state, k[1])))
    if not get_bindings(step.state, queue.address):  # a wildcard queue that still binds it keeps the IDs
        forget_address(step, queue.address)
    return Done(rule="LB-DELETE-QUEUE")


def _update_queue(step: Step, command: UpdateQueue) -> BalancingOutcome:
    """Change a live queue's attributes; what waits in it stays (``ActiveMQServerImpl.updateQueue``,
    ``QueueImpl.setEnabled``, ``setPurgeOnNoConsumers``; rules LB-QUEUE-ENABLED, LB-PURGE-ON-NO-CONSUMERS)."""
    if command.node not in step.state.nodes:
        return Refused(Refusal.UNKNOWN_NODE, rule="LB-NODES")
    queue = step.state.queues.get((command.node, command.queue))
    if queue is None:
        return Refused(Refusal.QUEUE_NOT_FOUND, rule="LB-QUEUE-PER-NODE")
    if command.enabled is False and not step.state.options.queue_enabled:
        return Refused(Refusal.NOT_SUPPORTED, rule="LB-QUEUE-ENABLED")
    enabled = queue.enabled if command.enabled is None else command.enabled
    purging = queue.purge_on_no_consumers if command.purge_on_no_consumers is None else command.purge_on_no_consumers
    queue_filter = None if step.state.options.update_clears_filter else queue.filter  # LB-UPDATE-FILTER
    step.put_queue(replace(queue, enabled=enabled, purge_on_no_consumers=purging, filter=queue_filter))
    return Done(rule="LB-QUEUE-ENABLED" if command.enabled is not None else "LB-PURGE-ON-NO-CONSUMERS")


def _send(step: Step, command: Send) -> BalancingOutcome:
    if command.node not in step.state.nodes:
        return Refused(Refusal.UNKNOWN_NODE, rule="LB-NODES")
    address, routing_type, fqqn_queue = command.address, command.routing_type, command.fqqn_queue
    if step.state.prefixes:
        address, prefix_type = strip_prefix(address, step.state.prefixes, PrefixMatch.HASH_MAP)
        if prefix_type is not None:  # LB-PREFIX: the prefix's routing type; the FQQN kept only before 2.19.0
            routing_type = prefix_type
            fqqn_queue = fqqn_queue if step.state.options.prefix_keeps_fqqn else None
    refusal = auto_create(step, command.node, address, routing_type)
    if refusal is not None:
        return refusal
    if command.tx is not None:
        refusal = open_session(step, command.tx, command.node)
        if refusal is not None:
            return refusal
    message = Message(step.new_message_id(), address, routing_type, command.color, command.grouped, fqqn_queue)
    status, rule = route(step, command.node, message, command.tx)
    return Sent(message.id, status, rule="LB-TX-SEND" if command.tx is not None and rule == "LB-ROUND-ROBIN"
                else rule)


def auto_create(step: Step, node: str, address: str, routing_type: RoutingType | None) -> Refused | None:
    """``ServerSessionImpl.checkAutoCreate`` as ``PostOfficeImpl.simpleRoute`` runs it for a send (LB-AUTO-CREATE).

    Only an ANYCAST send on a node whose bindings of the address hold no
    local queue (from 2.31.1, ARTEMIS-4450; 2.28.0-2.31.0: no bindings at
    all, ARTEMIS-4089; never before) is concerned; an FQQN send too, by its
    address part. A queue of the node named like the address, bound
    elsewhere, is taken as it is when it is ANYCAST and refuses the send
    when it is MULTICAST (ARTEMIS-4512, 2.32.0; applied in both creating
    modes, so 2.28.0-2.31.x differ there). Otherwise the node makes an ANYCAST
    queue named like the address where ``auto-create-queues`` is on, and
    refuses the send (AMQ229203) where it is off. The domain's addresses
    exist on every node with both routing types, so no address is made.
    """
    mode = step.state.options.send_auto_create
    if mode is SendAutoCreate.NEVER or routing_type is not RoutingType.ANYCAST:
        return None
    state = step.state
    bindings = get_bindings(state, address)
    if bindings if mode is SendAutoCreate.WITHOUT_BINDINGS else any(q.node == node for q in bindings):
        return None
    located = state.queues.get((node, address))
    if located is not None:
        if located.routing_type is RoutingType.ANYCAST:
            return None
        return Refused(Refusal.ADDRESS_DOES_NOT_EXIST, rule="LB-AUTO-CREATE")
    if not get_settings(state, address, node).auto_create_queues:
        return Refused(Refusal.ADDRESS_DOES_NOT_EXIST, rule="LB-AUTO-CREATE")
    add_queue(step, QueueState(node, address, address, RoutingType.ANYCAST, None, state.next_serial))
    return None


def _configure(step: Step, command: Configure) -> BalancingOutcome:
    """An address's type and delay on every node, or on one: each node routes and redistributes under its own
    (its cluster connection's ``message-load-balancing``, its ``redistribution-delay``; LB-TYPES)."""
    if command.node is not None and command.node not in step.state.nodes:
        return Refused(Refusal.UNKNOWN_NODE, rule="LB-NODES")
    if command.lb_type is LbType.OFF_WITH_REDISTRIBUTION and not step.state.options.off_with_redistribution:
        return Refused(Refusal.NOT_SUPPORTED, rule="LB-TYPES")
    settings = AddressBalancing(command.lb_type, command.redistribution_delay, command.auto_create_queues)
    if command.node is not None:
        step.update(node_settings=step.state.node_settings.set((command.node, command.address), settings))
        return Done(rule="LB-TYPES")
    own = FrozenMap((k, v) for k, v in step.state.node_settings.items() if k[1] != command.address)
    step.update(settings=step.state.settings.set(command.address, settings), node_settings=own)
    return Done(rule="LB-TYPES")


def _set_prefix(step: Step, command: SetPrefix) -> BalancingOutcome:
    """Set or remove an acceptor prefix on every node (LB-PREFIX)."""
    prefixes = step.state.prefixes
    if command.routing_type is None:
        prefixes = prefixes.remove(command.prefix) if command.prefix in prefixes else prefixes
    else:
        prefixes = prefixes.set(command.prefix, command.routing_type)
    step.update(prefixes=prefixes)
    return Done(rule="LB-PREFIX")


def _set_link(step: Step, command: SetLink) -> BalancingOutcome:
    nodes = step.state.nodes
    if command.node not in nodes or command.peer not in nodes:
        return Refused(Refusal.UNKNOWN_NODE, rule="LB-NODES")
    if command.node == command.peer:
        return Refused(Refusal.BAD_VALUE, rule="LB-DISCONNECTED")
    link = (command.node, command.peer)
    down = step.state.down_links - {link} if command.connected else step.state.down_links | {link}
    step.update(down_links=down)
    return Done(rule="LB-DISCONNECTED")


def _tick(step: Step, command: Tick) -> BalancingOutcome:
    if command.ticks < 1:
        return Refused(Refusal.BAD_VALUE, rule="RD-DELAY")
    step.update(clock=step.state.clock + command.ticks)
    return Done(rule="RD-DELAY")


Operation = Callable[[Step, Any], BalancingOutcome]

def _query_queue(step: Step, command: QueryQueue) -> BalancingOutcome:
    """Answer a queue query (rule LB-QUERY-QUEUE): what ``ActiveMQServerImpl.queueQuery`` reports of a local queue.

    ``QueueQueryResult`` carries the queue's address, routing type, filter, message count and consumer count;
    a missing queue is reported as not existing, an unknown node is refused as every other operation refuses it.
    """
    if command.node not in step.state.nodes:
        return Refused(Refusal.UNKNOWN_NODE, rule="LB-NODES")
    queue = step.state.queues.get((command.node, command.queue))
    if queue is None:
        return QueueQueried(False, rule="LB-QUERY-QUEUE")
    held = sum(len(step.state.consumers[name].held) + len(step.state.consumers[name].acked)
               for name in queue.consumers)
    return QueueQueried(True, queue.address, queue.routing_type, queue.configured_filter, len(queue.pending) + held,
                        len(queue.consumers), queue.enabled, queue.purge_on_no_consumers, rule="LB-QUERY-QUEUE")


TRANSITIONS: dict[type, Operation] = {
    AddNode: _add_node,
    CreateQueue: _create_queue,
    DeleteQueue: _delete_queue,
    Attach: process_attach,
    Close: process_close,
    Pause: process_pause,
    Resume: process_resume,
    Receive: process_receive,
    Ack: process_ack,
    Commit: process_commit,
    Rollback: process_rollback,
    Resend: process_resend,
    Send: _send,
    Configure: _configure,
    SetLink: _set_link,
    Tick: _tick,
    QueryQueue: _query_queue,
    UpdateQueue: _update_queue,
    SetPrefix: _set_prefix,
}


def apply_recording(state: BalancingState, command: BalancingCommand,
                    chooser: Chooser) -> tuple[BalancingState, BalancingOutcome, tuple[ChoicePoint, ...]]:
    """:func:`apply_choosing`, and every choice the step made, in order."""
    step = Step(state, chooser)
    outcome = TRANSITIONS[type(command)](step, command)
    if isinstance(outcome, Refused) or is_query(command):  # a query changes nothing and gives no redistributor a turn
        return state, outcome, ()
    deliver(step)
    events = tuple(step.events)
    if isinstance(outcome, Sent):
        return step.state, Sent(outcome.message, outcome.status, events, rule=outcome.rule), tuple(step.choices)
    if isinstance(outcome, Failed):
        return step.state, Failed(outcome.reason, events, rule=outcome.rule), tuple(step.choices)
    return step.state, Done(events, rule=outcome.rule), tuple(step.choices)


def apply_choosing(state: BalancingState, command: BalancingCommand,
                   chooser: Chooser) -> tuple[BalancingState, BalancingOutcome]:
    """Apply ``command`` with ``chooser`` making every choice; the state and outcome that follow."""
    next_state, outcome, _ = apply_recording(state, command, chooser)
    return next_state, outcome


def apply(state: BalancingState, command: BalancingCommand) -> tuple[BalancingState, BalancingOutcome]:
    """Apply ``command`` with Artemis's own choices (strict mode)."""
    return apply_choosing(state, command, STRICT)
