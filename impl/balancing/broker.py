"""The fast load-balancing broker: each node's groups kept, changed in place, checked against the spec.

Introduction
------------
:class:`FastBalancingBroker` runs the commands of
:mod:`brokerspec.spec.balancing` and returns the outcomes the spec's
``apply`` returns (Artemis's own choices, the strict mode), but does not
derive a node's bindings from the list of queues at every send. It keeps
them (see :mod:`.records`): per node, per address, per routing name a
:class:`~.records.Group` of bindings in creation order with their local and
connected flags and the group's position; per queue its consumers
(started or paused, pushed to or pulling, with what each holds
unacknowledged), their filters counted, its waiting messages and its
redistributor; the queues with a redistributor in a set. A send on node N
to address A visits N's groups of A, and in each scans from the position
until a binding takes the message (``BindingsImpl.route`` step 6, LB-ROUND-ROBIN); nothing else is looked
at. Spec values (states,
queues, messages) are built only by :meth:`~FastBalancingBroker.snapshot`;
the hot path builds the outcome and its events, nothing more.

Seams. The choices are made by the rules of
:class:`~.choice.BindingChoice` (``_scan_start``, ``_choice_type``,
``_fallback``, ``_position_after``), which this class inherits; it adds the
rules of eligibility and redistribution, each a method of its own so that
a planted-bug subclass breaks exactly one rule:

``_forwards_remotely(lb_type, routing_type)``
    whether a remote binding may take a message at all under the address's
    type: under OFF and OFF_WITH_REDISTRIBUTION only a MULTICAST message,
    and under OFF only where the profile has ARTEMIS-4196 (LB-ELIGIBLE, LB-OFF-REMOTE).
``_is_redistributable(message)``
    whether a redistributor may move a waiting message: not when it is
    grouped (RD-GROUPED).
``_is_origin(candidate, origin)``
    whether a group member is the queue the message waits in, which
    redistribution skips (RD-TARGET).
``_target_filter_matches(candidate, message)``
    whether a redistribution target's queue filter lets the message in (RD-TARGET).
``_trigger_name(command, queue)``
    the name other nodes find their queue by when a consumer attaches (RD-TRIGGER-FQQN-CONSUMER).
``_return_held(queue, consumer, events)``
    what a close does with the messages the consumer held unacknowledged: back into the queue, offered
    to the consumers left (LB-CLOSE-RETURNS).

A receive and an acknowledgement move messages through the helpers of
:mod:`.consumers` (LB-PULL, LB-ACK). Transacted sessions (sends kept until
a commit, acknowledgements a rollback gives back, max-delivery-attempts) are
the base class :class:`~.sessions.TransactedSessions`; this class only
hands them a send's routing (``_route`` with a session), a closing
transacted consumer, a deleted queue and what a consumer takes (LB-TX-SEND,
LB-TX-COMMIT, LB-TX-ACK, LB-TX-ROLLBACK, LB-TX-MAX-DELIVERY). What crosses to
another node goes over the cluster bridge of the base class
:class:`~.bridges.ClusterBridges` (``_land_from``, ``_cross``: bridge
duplicate IDs, the last crossing kept for a resend; LB-BRIDGE-DUP).

:meth:`~FastBalancingBroker.check_valid` (see :mod:`.validity`) checks the
kept views against the queues they are views of.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any

from brokerspec.spec import FqqnSend, InvariantBroken, PrefixMatch, Profile
from brokerspec.spec.profiles import ReturnOrder, SendAutoCreate
from brokerspec.spec.addressing.names import RoutingType, strip_prefix
from brokerspec.spec.balancing import (
    FIRST_NODE,
    REDISTRIBUTING,
    Ack,
    AddNode,
    AddressBalancing,
    Attach,
    BalancingCommand,
    BalancingOutcome,
    BalancingState,
    Close,
    Commit,
    Configure,
    CreateQueue,
    DeleteQueue,
    Delivered,
    Done,
    Dropped,
    Event,
    Failed,
    LbType,
    Pause,
    QueryQueue,
    QueueQueried,
    Receive,
    Redistributed,
    Resend,
    Refusal,
    Refused,
    Resume,
    Returned,
    Rollback,
    RoutingStatus,
    Send,
    Sent,
    SetLink,
    SetPrefix,
    Tick,
    UpdateQueue,
)

from .bridges import ClusterBridges, Crossing
from .choice import CONNECTED, ELIGIBLE, LOCAL, PREFERRED, BindingChoice
from .consumers import acknowledge, merge_returned, take_first_match
from .records import Binding, ConsumerRecord, Group, QueueRecord, Waiting
from .sessions import SESSION_EXISTS, SessionRecord, TransactedSessions
from .snapshot import snapshot
from .validity import find_problems
from .wildcards import WildcardIndex

__all__ = ["Binding", "ConsumerRecord", "FastBalancingBroker", "Group", "QueueRecord", "Waiting"]
"""The broker, and the record types its seams take (so an override can name them from this module)."""

OFF = LbType.OFF
ON_DEMAND = LbType.ON_DEMAND
OFF_WITH_REDISTRIBUTION = LbType.OFF_WITH_REDISTRIBUTION
MULTICAST = RoutingType.MULTICAST
ANYCAST = RoutingType.ANYCAST
OK = RoutingStatus.OK
NO_BINDINGS = RoutingStatus.NO_BINDINGS
LOCAL_PREFERRED = ELIGIBLE | PREFERRED | CONNECTED | LOCAL  # equivalent mutants (BitXor, Add, Sub, BitOr_Mod): distinct bits; the Sub forms give -1 and CONNECTED % LOCAL gives 7, which keep ELIGIBLE, PREFERRED and CONNECTED, so the binding is taken on sight and LOCAL is never read
LOCAL_NOT_PREFERRED = ELIGIBLE | CONNECTED | LOCAL  # equivalent mutants (BitXor, Add, Sub): distinct bits; the Sub forms give -3, whose low four bits are those of 13
REMOTE_CONNECTED = ELIGIBLE | CONNECTED  # equivalent mutants (BitXor, Add): distinct bits
DONE = Done()
UNKNOWN_NODE = Refused(Refusal.UNKNOWN_NODE)
NODE_EXISTS = Refused(Refusal.NODE_EXISTS)
QUEUE_EXISTS = Refused(Refusal.QUEUE_EXISTS)
QUEUE_NOT_FOUND = Refused(Refusal.QUEUE_NOT_FOUND)
QUEUE_IN_USE = Refused(Refusal.QUEUE_IN_USE)
CONSUMER_EXISTS = Refused(Refusal.CONSUMER_EXISTS)
CONSUMER_NOT_FOUND = Refused(Refusal.CONSUMER_NOT_FOUND)
NOT_SUPPORTED = Refused(Refusal.NOT_SUPPORTED)
ADDRESS_DOES_NOT_EXIST = Refused(Refusal.ADDRESS_DOES_NOT_EXIST)
NOT_PULLING = Refused(Refusal.NOT_PULLING)
BAD_VALUE = Refused(Refusal.BAD_VALUE)
"""Outcomes are frozen values, so the constant ones are built once."""

_by_key = attrgetter("key")
_by_serial = attrgetter("serial")

Handler = Callable[[Any, list[Event]], Refused | Failed | None]
"""A command's handler: None when done, a refusal (nothing changed), or a failure whose events the step made."""


class FastBalancingBroker(BindingChoice, ClusterBridges, TransactedSessions):
    """A cluster's load balancing and redistribution, kept per node and per group, checked against the spec."""

    def __init__(self, profile: Profile) -> None:
        options = profile.balancing
        self.profile = profile
        self._off_forwards_multicast = options.off_forwards_multicast
        self._queue_enabled = options.queue_enabled
        self._has_off_with_redistribution = options.off_with_redistribution
        self._fqqn_send = options.fqqn_send
        self._fqqn_redistribution_group = options.fqqn_redistribution_group
        self._unrouted = RoutingStatus(options.unrouted_status.value)
        self._redistribute_unmatched = options.redistribute_unmatched
        self._new_queue_redistributes = options.new_queue_redistributes
        self._copy_before_target = options.copy_before_target
        self._by_message_address = options.redistribute_by_message_address
        self._fqqn_consumer_redistributes = options.fqqn_consumer_redistributes
        self._wildcards = WildcardIndex(options)
        self._nodes: list[str] = [FIRST_NODE]
        self._groups: dict[str, dict[str, dict[str, Group]]] = {FIRST_NODE: {}}
        """node -> address -> routing name -> group; an address is listed while it has a queue anywhere."""
        self._queues: dict[tuple[str, str], QueueRecord] = {}
        """(node, name) -> queue, in creation order (a re-created key goes last, as its serial does)."""
        self._by_address: dict[str, list[QueueRecord]] = {}
        """address -> its queues in creation order: any node's bindings of it (LB-QUEUE-PER-NODE)."""
        self._consumers: dict[str, ConsumerRecord] = {}
        self._sessions: dict[str, SessionRecord] = {}
        """The transacted sessions by name, producer sessions and transacted consumers' (see :mod:`.sessions`)."""
        self._bridge_ids: dict[tuple[str, str], dict[tuple[str, int], None]] = {}
        """(node, address) -> the bridge duplicate IDs it took in, oldest first (see :mod:`.bridges`)."""
        self._forwarded: dict[tuple[str, str], Crossing] = {}
        """(node, peer) -> the bridge's last crossing, which a resend sends again."""
        self._settings: dict[str, AddressBalancing] = {}
        """The cluster-wide settings (LB-TYPES)."""
        self._node_settings: dict[tuple[str, str], AddressBalancing] = {}
        """(node, address) -> settings one node has of its own."""
        self._typed: set[tuple[str, str]] = set()
        """(node, address) whose bindings took the configured type from a remote binding (LB-TYPE-ADOPTED)."""
        self._lb_types: dict[str, dict[str, LbType]] = {FIRST_NODE: {}}
        """node -> address -> the type that node routes and redistributes it under (its own, else the cluster's)."""
        self._delays: dict[str, dict[str, int]] = {FIRST_NODE: {}}
        """node -> address -> that node's redistribution delay for it, the same way."""
        self._down: set[tuple[str, str]] = set()
        self._prefixes: dict[str, RoutingType] = {}
        self._prefix_keeps_fqqn = options.prefix_keeps_fqqn
        self._update_clears_filter = options.update_clears_filter
        self._send_auto_create = options.send_auto_create
        self._close_at_head = options.close_return_order is ReturnOrder.HEAD
        """2.11: a closing consumer leaves (and its queue purges) before its messages come back, at the head."""
        self._redistributors: set[QueueRecord] = set()
        self._prompted: set[QueueRecord] = set()
        """Queues whose delivery the current step prompted (``deliverAsync``): only their redistributors try."""
        self._since = 0
        """The clock when the current step began: a redistributor active only since then tries too."""
        """The queues whose redistributor is not None, active or scheduled."""
        self._clock = 0
        self._next_message = 1
        self._next_serial = 1
        self._dispatch: dict[type[Any], Handler] = {
            AddNode: self._add_node,
            CreateQueue: self._create_queue,
            DeleteQueue: self._delete_queue,
            Attach: self._attach,
            Close: self._close,
            Pause: self._pause,
            Resume: self._resume,
            Receive: self._receive,
            Ack: self._ack,
            Commit: self._commit,
            Rollback: self._rollback,
            Resend: self._resend,
            Configure: self._configure,
            SetLink: self._set_link,
            Tick: self._tick,
            UpdateQueue: self._update_queue,
            SetPrefix: self._set_prefix,
        }

    # -- the public surface ----------------------------------------------------------------------

    def execute(self, command: BalancingCommand) -> BalancingOutcome:
        """Run one command; after any that is not refused, each active redistributor tries once.

        See RD-DELAY, RD-GROUPED.
        """
        self._prompted.clear()
        self._since = self._clock
        if type(command) is Send:
            return self._send(command)
        if type(command) is QueryQueue:
            return self._query_queue(command)
        events: list[Event] = []
        failed = self._dispatch[type(command)](command, events)
        if failed is not None and type(failed) is Refused:
            return failed
        if self._redistributors:
            self._deliver(events)
        if failed is not None:  # an acknowledgement of a message not held, a rollback-only commit (LB-ACK)
            return Failed(failed.reason, tuple(events))
        return Done(tuple(events)) if events else DONE

    # -- seams: eligibility and redistribution ------------------------------------------------------

    def _forwards_remotely(self, lb_type: LbType, routing_type: RoutingType | None) -> bool:
        """Whether a remote binding can be eligible for a message of ``routing_type`` under ``lb_type``.

        See LB-ELIGIBLE, LB-OFF-REMOTE.

        OFF and OFF_WITH_REDISTRIBUTION forward only a MULTICAST message:
        OFF_WITH_REDISTRIBUTION always (ARTEMIS-3608), OFF since 2.29.0
        (ARTEMIS-4196, the profile's ``off_forwards_multicast``).
        """
        if lb_type is OFF:
            return self._off_forwards_multicast and routing_type is MULTICAST
        if lb_type is OFF_WITH_REDISTRIBUTION:
            return routing_type is MULTICAST
        return True

    def _is_redistributable(self, message: Waiting) -> bool:
        """Whether a redistributor may move ``message``: a message with a group ID never moves (RD-GROUPED)."""
        return not message.grouped

    def _is_origin(self, candidate: QueueRecord, origin: QueueRecord) -> bool:
        """Whether ``candidate`` is the queue the message waits in: that very queue, not a namesake.

        See RD-TARGET, LB-QUEUE-PER-NODE.
        """
        return candidate is origin

    def _trigger_name(self, command: Attach, queue: QueueRecord) -> str:
        """The name the other nodes look their queue up by when they hear of ``command``'s consumer: the
        routing name, or the FQQN's queue part for a consumer that came by one (RD-TRIGGER-REMOTE-CONSUMER,
        RD-TRIGGER-FQQN-CONSUMER: ``PostOfficeImpl.onNotification``, ARTEMIS-3918)."""
        if command.fqqn_address is not None and self._fqqn_consumer_redistributes:
            return command.queue
        return queue.routing_name

    def _target_filter_matches(self, candidate: QueueRecord, message: Waiting) -> bool:
        """Whether ``candidate``'s queue filter lets ``message`` in (RD-TARGET: ``filter == null || filter.match``)."""
        return candidate.filter is None or candidate.filter == message.color

    def _return_held(self, queue: QueueRecord, consumer: ConsumerRecord, events: list[Event]) -> None:
        """A closing ``consumer``'s unacknowledged messages go back into ``queue`` (``ServerConsumerImpl.cancelRefs``),
        before the waiting ones (2.11, ``QueueImpl.addHead``) or among them by message ID (``addSorted``), and
        every waiting message is offered to the consumers left (LB-CLOSE-RETURNS). In 2.11 they come back
        after the consumer left, through ``QueueImpl.postRollback``, which drops them when the queue purges and
        has no consumer left (``purgeAfterRollback``)."""
        if self._close_at_head:
            held, consumer.held = consumer.held, []
            self._give_back(queue, [], held, events)
            return
        events.extend(Returned(message.id, queue.node, queue.name) for message in consumer.held)
        queue.pending = merge_returned(consumer.held, queue.pending, self._close_at_head)
        consumer.held = []
        self._reland_waiting(queue, events)

    # -- sending --------------------------------------------------------------------------------------

    def _send(self, command: Send) -> BalancingOutcome:
        node = command.node
        groups = self._groups.get(node)
        if groups is None:
            return UNKNOWN_NODE
        address, routing_type, fqqn_queue = command.address, command.routing_type, command.fqqn_queue
        if self._prefixes:
            address, prefix_type = strip_prefix(address, self._prefixes, PrefixMatch.HASH_MAP)
            if prefix_type is not None:  # LB-PREFIX
                routing_type = prefix_type
                if not self._prefix_keeps_fqqn:
                    fqqn_queue = None
        events: list[Event] = []
        tx = command.tx
        refusal = None if tx is None else self._send_refusal(tx, node)
        # a refused send changes nothing: the queue auto-creation would make is not made (LB-TX-SEND)
        if routing_type is RoutingType.ANYCAST and self._send_auto_create is not SendAutoCreate.NEVER \
                and not self._auto_create(node, address, events, refusal is None):
            return ADDRESS_DOES_NOT_EXIST
        if refusal is not None:
            return refusal
        session = None if tx is None else self._join_session(tx, node)
        number = self._next_message
        self._next_message = number + 1
        message = Waiting(number, address, routing_type, command.color, command.grouped, fqqn_queue)
        status = self._route(node, groups, message, events, session)
        if self._redistributors:
            self._deliver(events)
        return Sent(number, status, tuple(events))

    def _auto_create(self, node: str, address: str, events: list[Event], create: bool) -> bool:
        """Whether an ANYCAST send from ``node`` may go on: its address has a local queue (from 2.28.0 to
        2.31.0: any binding), a local queue named like the address is ANYCAST, or the node makes one now as
        ``auto-create-queues`` allows (LB-AUTO-CREATE; ``ServerSessionImpl.checkAutoCreate``); only when
        ``create``, else the send is refused for another reason and nothing is made."""
        own = self._by_address.get(address, ())
        if self._send_auto_create is SendAutoCreate.WITHOUT_BINDINGS:
            if own or self._wildcards.copies_for(address):
                return True
        elif any(q.node == node for q in own) or any(q.node == node for q in self._wildcards.copies_for(address)):
            return True
        located = self._queues.get((node, address))
        if located is not None:
            return located.routing_type is RoutingType.ANYCAST
        settings = self._node_settings.get((node, address)) or self._settings.get(address)
        if settings is None or not settings.auto_create_queues:
            return False
        if create:
            self._create_queue(CreateQueue(node, address, address, RoutingType.ANYCAST), events)
        return True

    def _route(self, node: str, groups: dict[str, dict[str, Group]], message: Waiting,
               events: list[Event], session: SessionRecord | None = None) -> RoutingStatus:
        """Route a new message from ``node``: one binding per group (LB-ROUND-ROBIN), or the FQQN's local queue.

        See LB-FQQN-LOCAL. In a transacted ``session`` the message is kept for the commit instead of landing
        (LB-TX-SEND, :meth:`_hold_send`).
        """
        address = message.address
        by_name = groups.get(address)
        if by_name is None:
            by_name = self._materialize(node, address)
            if by_name is None:
                return NO_BINDINGS
        landed: list[QueueRecord] = []
        if message.fqqn_queue is not None and self._fqqn_send is not FqqnSend.BALANCED:
            queue = self._queues.get((node, message.fqqn_queue))
            if queue is not None and self._wildcards.binds(queue.address, address) and (
                    message.routing_type is None or message.routing_type is queue.routing_type) and (
                    self._fqqn_send is FqqnSend.LOCAL_UNFILTERED or queue.filter is None
                    or queue.filter == message.color):
                landed.append(queue)
        else:
            lb_type = self._type_on(node, address, by_name)
            flags = self._flags_for(message, lb_type)
            pick = self._pick
            for group in by_name.values():
                members = group.members
                index, stored = pick(members, group.position, lb_type, flags)
                if index >= 0:
                    group.position = stored
                    group.kept = True
                    landed.append(members[index].queue)
        if not landed:
            return self._unrouted
        if len(landed) > 1:  # equivalent mutants (NumberReplacer, Gt_GtE, Gt_NotEq): landed is not empty here, and > 0, >= 1 and != 1 only add sorts of a single queue
            landed.sort(key=_by_key)
        if session is not None:
            return self._hold_send(session, landed, message)
        # a remote queue counts whatever it does: its node's store-and-forward queue took the message
        return OK if self._land_from(node, message, landed, events) else self._unrouted

    def _routed_to(self, queue: QueueRecord, message: Waiting, events: list[Event]) -> bool:
        """Routing brings ``message`` to ``queue``, where it vanishes when the queue is disabled or purging without
        consumers (``QueueImpl.route``; LB-QUEUE-ENABLED, LB-PURGE-ON-NO-CONSUMERS); whether the queue took it."""
        if not queue.enabled or (queue.purge_on_no_consumers and not queue.consumers):
            return False
        self._land(queue, message, events)
        return True

    def _flags_for(self, message: Waiting, lb_type: LbType) -> Callable[[Binding], int]:
        """The bits of a binding for ``message`` under ``lb_type``: eligible, preferred (LB-ELIGIBLE, LB-PREFERRED), ...

        Made once per send; the scan calls it only for the bindings it inspects.
        """
        routing_type = message.routing_type
        color = message.color
        fqqn_queue = message.fqqn_queue
        remote_ok = self._forwards_remotely(lb_type, routing_type)
        remote_prefers = lb_type is not OFF

        def flags(binding: Binding) -> int:
            queue = binding.queue
            if (routing_type is not None and routing_type is not queue.routing_type) or (
                    fqqn_queue is not None and fqqn_queue != queue.name) or (
                    queue.filter is not None and queue.filter != color):
                return 0
            if binding.local:
                return LOCAL_PREFERRED if queue.unfiltered or color in queue.by_filter else LOCAL_NOT_PREFERRED
            if not remote_ok:
                return 0
            bits = REMOTE_CONNECTED if binding.connected else ELIGIBLE
            if remote_prefers and queue.consumers and (not queue.by_filter or color in queue.by_filter):
                bits |= PREFERRED
            return bits
        return flags

    def _land(self, queue: QueueRecord, message: Waiting, events: list[Event]) -> None:
        """``message`` reaches ``queue``: the started matching consumer whose turn it is takes it, or it waits."""
        self._prompted.add(queue)  # addTail prompts delivery
        consumers = queue.consumers
        if consumers and (queue.unfiltered or message.color in queue.by_filter):  # equivalent mutants (AndWithOr): a fast path: without consumers the counts are 0, and when no filter matches _pick_consumer finds nobody
            index = self._pick_consumer(consumers, queue.consumer_position, message.color)
            if index >= 0:
                following = index + 1
                queue.consumer_position = following if following < len(consumers) else 0  # equivalent mutants (Lt_IsNot, Lt_NotEq): index < len(consumers), so following <= len, where != (and is not, on small ints) agrees with <
                queue.consumer_position_kept = True
                taker = consumers[index]
                if taker.manual_ack:  # held until its client acknowledges (LB-ACK)
                    taker.held.append(message)
                elif taker.transacted:  # acknowledged in its session's transaction (LB-TX-ACK)
                    taker.acked.append(message)
                events.append(Delivered(message.id, queue.node, queue.name, taker.name))
                return
        if queue.redistributor is None and queue.refused_by_every_filter(message.color):
            queue.unmatched = True
        queue.pending.append(message)
        events.append(Delivered(message.id, queue.node, queue.name, None))

    # -- redistribution ---------------------------------------------------------------------------------

    def _add_redistributor(self, queue: QueueRecord | None) -> None:
        """``QueueImpl.addRedistributor`` with the delay of the queue's address (RD-DELAY).

        A queue with consumers gets one only where the profile has
        ARTEMIS-2007 (2.19.0) and it has flagged a message every consumer refused (``unmatched``).
        """
        if queue is None:
            return
        delay = self._delays[queue.node].get(queue.address, -1)
        if delay == -1:
            return
        self._prompted.add(queue)  # one in place is prompted to try again ("just prompt delivery")
        if queue.redistributor is not None:
            return
        if queue.consumers and not (self._redistribute_unmatched and queue.unmatched):
            return
        queue.redistributor = self._clock + (delay if delay > 0 else 0)  # addRedistributor: only a positive delay waits
        queue.unmatched = False
        self._redistributors.add(queue)

    def _deliver(self, events: list[Event]) -> None:
        """One delivery attempt for every active redistributor whose queue the step prompted (or that became
        active during it), queues in creation order (RD-GROUPED).

        Each queue offers the messages that waited in it when the attempts
        began: a copy moved to a queue whose matching consumers are all
        paused waits there, and is not offered again until the next step.
        """
        clock, since, prompted = self._clock, self._since, self._prompted
        active = [(queue, active_at > since) for queue in self._redistributors
                  if (active_at := queue.redistributor) is not None and active_at <= clock and queue.pending]
        if len(active) > 1:  # equivalent mutants (Gt_GtE, Gt_NotEq): they only add sorts of an empty or one-queue list
            active.sort(key=lambda pair: _by_serial(pair[0]))
        offers = [(queue, fresh, tuple(queue.pending)) for queue, fresh in active]
        for queue, fresh, waiting in offers:
            if not fresh and queue not in prompted:
                continue  # prompted is live: a copy landing earlier in this round prompts a later queue
            for message in waiting:
                if not self._is_redistributable(message):
                    continue
                if not self._redistribute(queue, message, events):
                    break

    def _redistribute(self, origin: QueueRecord, message: Waiting, events: list[Event]) -> bool:
        """Move ``message`` from ``origin`` to the next target of its group; False is BUSY.

        See ``PostOfficeImpl.redistribute``, RD-TARGET.

        The copy's new message ID is taken once a target is found, or, where
        the profile predates ARTEMIS-4207 (2.29.0), as soon as the type
        allows redistribution, so a failed attempt uses one up.
        """
        address = message.address if self._by_message_address else origin.address  # RD-WILDCARD
        by_name = self._groups[origin.node].get(address)
        if by_name is None:
            by_name = self._materialize(origin.node, address) or {}
        lb_type = self._type_on(origin.node, address, by_name)
        if lb_type not in REDISTRIBUTING:
            return False  # equivalent mutants: under a type that does not redistribute every attempt returns at once without effect, so going on to the next message changes nothing
        number = -1  # equivalent mutants (NumberReplacer, USub_Invert): number is only tested with < 0
        if self._copy_before_target:
            number = self._next_message
            self._next_message = number + 1
        group_name = origin.name
        if message.fqqn_queue is not None and origin.routing_type is ANYCAST and self._fqqn_redistribution_group:
            group_name = message.address
        group = by_name.get(group_name)
        if group is None:
            return False
        color = message.color

        def is_target(binding: Binding) -> bool:
            candidate = binding.queue
            preferred = candidate.has_matching_consumer(color) if binding.local \
                else candidate.is_remote_preferred(color)
            return preferred and not self._is_origin(candidate, origin) \
                and self._target_filter_matches(candidate, message)

        members = group.members
        index = self._pick_target(members, group.position, is_target)
        if index < 0:
            return False
        following = index + 1
        group.position = following if following < len(members) else 0  # equivalent mutants (Lt_IsNot, Lt_NotEq): index < len(members), so != (and is not, on small ints) agrees with <  # state view (NumberReplacer): a stored -1 is out of range, so the next scan starts at 0 as from 0; else 1 is killed by a case
        group.kept = True
        origin.pending.remove(message)
        if number < 0:  # equivalent mutants (NumberReplacer, Lt_LtE): number is -1 or a message ID, and IDs start at 1
            number = self._next_message
            self._next_message = number + 1
        target = members[index].queue
        events.append(Redistributed(message.id, origin.node, origin.name, number, target.node, target.name))
        # a new reference: its delivery count starts again (LB-TX-MAX-DELIVERY)
        copy = message._replace(id=number, address=address, deliveries=0)
        if target.node == origin.node:
            self._routed_to(target, copy, events)
        else:  # over the cluster bridge, with the copy's own bridge ID (LB-BRIDGE-DUP)
            self._cross(origin.node, copy, (target,), events)
        return True

    # -- the other operations ------------------------------------------------------------------------------

    def _add_node(self, command: AddNode, events: list[Event]) -> Refused | None:
        if command.node in self._groups:
            return NODE_EXISTS
        node = command.node
        self._nodes.append(node)
        self._lb_types[node] = {address: entry.lb_type for address, entry in self._settings.items()}
        self._delays[node] = {address: entry.redistribution_delay for address, entry in self._settings.items()}
        groups: dict[str, dict[str, Group]] = {}
        self._groups[node] = groups
        plain = self._wildcards.plain
        for queue in self._queues.values():  # creation order, so every group is too
            self._bind(node, groups, queue)
            if queue.address in self._wildcards.wild:
                for address, wilds in plain.items():
                    if queue.address in wilds:
                        self._join(node, groups, address, queue.bindings[node])
        for address in list(self._by_address):
            self._record_types(address)
        return None

    def _type_on(self, node: str, address: str, by_name: dict[str, Group]) -> LbType:
        """The type ``node`` routes ``address`` under: the configured one once its bindings took it, else OFF
        (LB-TYPE-ADOPTED). A remote binding of an address with queues of its own was recorded when it came
        (:meth:`_record_types`), so only the groups of an address without queues (wildcard copies alone) need
        a look for one, which keeps the scan off the usual send."""
        if (node, address) in self._typed or (address not in self._by_address and any(
                not binding.local for group in by_name.values() for binding in group.members)):
            return self._lb_types[node].get(address, ON_DEMAND)
        return OFF

    def _record_types(self, address: str) -> None:
        """Every node whose bindings of ``address`` (or, for a wild one, of each address of a queue it matches) hold
        a remote binding has them take the configured type (LB-TYPE-ADOPTED)."""
        index = self._wildcards
        joined = [address]
        if index.enabled and index.is_wild(address):
            joined += [other for other in self._by_address if other != address and index.binds(address, other)]
        for each in joined:
            members = [*self._by_address.get(each, ()), *index.copies_for(each)]
            for node in self._nodes:
                if any(queue.node != node for queue in members):
                    self._typed.add((node, each))

    def _bind(self, node: str, groups: dict[str, dict[str, Group]], queue: QueueRecord) -> None:
        """Give ``node`` its binding of ``queue``, last in its group."""
        local = queue.node == node
        binding = Binding(queue, local, local or (node, queue.node) not in self._down)
        queue.bindings[node] = binding
        self._join(node, groups, queue.address, binding)

    @staticmethod
    def _join(node: str, groups: dict[str, dict[str, Group]], address: str, binding: Binding) -> None:
        """File ``binding`` last in its routing-name group of ``address`` on ``node`` (a wildcard queue's binding
        is filed under its own address and every plain address it is copied to, LB-WILDCARD-BINDINGS)."""
        by_name = groups.get(address)
        if by_name is None:
            by_name = groups[address] = {}
        routing_name = binding.queue.routing_name
        group = by_name.get(routing_name)
        if group is None:
            group = by_name[routing_name] = Group(node, address, routing_name)
        group.members.append(binding)

    def _materialize(self, node: str, address: str) -> dict[str, Group] | None:
        """A plain address's groups on first routing: copies of the matching wildcard queues' bindings, on
        every node at once (``WildcardAddressManager.getBindingsForRoutingAddress``); None when there are none."""
        copies = self._wildcards.copies_for(address)
        if not copies:
            return None
        self._copy_wildcards(address, copies)
        return self._groups[node][address]

    def _copy_wildcards(self, address: str, copies: list[QueueRecord]) -> None:
        """Give every node's groups of the plain ``address`` the bindings of ``copies`` (creation order)."""
        for each, groups in self._groups.items():
            for queue in copies:
                self._join(each, groups, address, queue.bindings[each])
        self._wildcards.add_plain(address)

    def _create_queue(self, command: CreateQueue, events: list[Event]) -> Refused | None:
        node = command.node
        if node not in self._groups:
            return UNKNOWN_NODE
        if (node, command.queue) in self._queues:
            return QUEUE_EXISTS
        if not command.enabled and not self._queue_enabled:
            return NOT_SUPPORTED
        queue = QueueRecord(node, command.queue, command.address, command.routing_type, command.filter,
                            self._next_serial)
        queue.enabled, queue.purge_on_no_consumers = command.enabled, command.purge_on_no_consumers
        self._next_serial += 1
        self._queues[queue.key] = queue
        self._by_address.setdefault(queue.address, []).append(queue)
        wildcards = self._wildcards
        joins: list[str] = []
        if wildcards.enabled:
            if wildcards.is_wild(queue.address):
                joins = wildcards.add_wild_queue(queue)
            elif queue.address not in wildcards.plain:
                self._copy_wildcards(queue.address, wildcards.copies_for(queue.address))
        for each in self._nodes:
            groups = self._groups[each]
            self._bind(each, groups, queue)
            for address in joins:
                self._join(each, groups, address, queue.bindings[each])
        self._record_types(queue.address)
        found = self._queues.get((node, queue.routing_name))
        if self._new_queue_redistributes and found is not None and any(other.node != node and other.consumers and (node, other.node) not in self._down
                                     for other in (*self._by_address[queue.address],
                                                   *wildcards.copies_for(queue.address))):
            self._add_redistributor(found)
        return None

    def _query_queue(self, command: QueryQueue) -> BalancingOutcome:
        """A queue query: no delivery round follows it (LB-QUERY-QUEUE)."""
        queue = self._queues.get((command.node, command.queue))
        if queue is None:
            return UNKNOWN_NODE if command.node not in self._nodes else QueueQueried(False)
        return QueueQueried(True, queue.address, queue.routing_type, queue.configured_filter,
                            len(queue.pending) + queue.held_count(), len(queue.consumers), queue.enabled,
                            queue.purge_on_no_consumers)

    def _update_queue(self, command: UpdateQueue, events: list[Event]) -> Refused | None:
        """New attributes for a live queue; what waits in it stays (LB-QUEUE-ENABLED, LB-PURGE-ON-NO-CONSUMERS)."""
        queue = self._queues.get((command.node, command.queue))
        if queue is None:
            return UNKNOWN_NODE if command.node not in self._nodes else QUEUE_NOT_FOUND
        if command.enabled is False and not self._queue_enabled:
            return NOT_SUPPORTED
        if command.enabled is not None:
            queue.enabled = command.enabled
        if command.purge_on_no_consumers is not None:
            queue.purge_on_no_consumers = command.purge_on_no_consumers
        if self._update_clears_filter:
            queue.filter = None  # LB-UPDATE-FILTER: every node's binding is this record
        return None

    def _delete_queue(self, command: DeleteQueue, events: list[Event]) -> Refused | None:
        queue = self._queues.get((command.node, command.queue))
        if queue is None:
            return QUEUE_NOT_FOUND
        if queue.consumers:
            return QUEUE_IN_USE
        events.extend(Dropped(message.id, queue.node, queue.name) for message in queue.pending)
        if self._sessions:
            self._forget_queue(queue)
        if self._forwarded:
            self._drop_crossings(queue)
        del self._queues[queue.key]
        siblings = self._by_address[queue.address]
        siblings.remove(queue)
        if not siblings:  # the cluster's last queue of its address: the bridge caches of it go (LB-BRIDGE-DUP),
            del self._by_address[queue.address]
            if not self._wildcards.copies_for(queue.address):  # unless a wildcard queue still binds it
                self._forget_address(queue.address)
        holders = [queue.address]
        if queue.address in self._wildcards.wild:
            holders += self._wildcards.remove_wild_queue(queue)
        for node, binding in queue.bindings.items():
            for address in holders:
                by_name = self._groups[node][address]
                group = by_name[queue.routing_name]
                group.members.remove(binding)
                if not group.members:
                    del by_name[queue.routing_name]
                    if not by_name:  # bindingsEmpty: the address's Bindings go, and with them its copies
                        del self._groups[node][address]
                        self._wildcards.drop_plain(address)
        queue.bindings.clear()
        self._redistributors.discard(queue)
        if self._typed:  # an address without bindings loses the type its bindings took (LB-TYPE-ADOPTED)
            self._typed = {key for key in self._typed
                           if self._by_address.get(key[1]) or self._wildcards.copies_for(key[1])}
        return None

    def _attach(self, command: Attach, events: list[Event]) -> Refused | None:
        node = command.node
        if node not in self._groups:
            return UNKNOWN_NODE
        queue = self._queues.get((node, command.queue))
        if queue is None:
            return QUEUE_NOT_FOUND
        if command.consumer in self._consumers:
            return CONSUMER_EXISTS
        if command.consumer in self._sessions:  # sessions and consumers share their names (LB-TX-SEND)
            return SESSION_EXISTS
        consumer = ConsumerRecord(command.consumer, queue, command.filter, command.pull, command.manual_ack,
                                  command.transacted)
        self._consumers[command.consumer] = consumer
        if command.transacted:  # its own session, named like it (LB-TX-ACK)
            self._sessions[command.consumer] = SessionRecord(node)
        queue.add_consumer(consumer)
        queue.redistributor = None
        queue.unmatched = False
        self._redistributors.discard(queue)
        self._reland_waiting(queue, events)
        name = self._trigger_name(command, queue)
        for other in self._nodes:
            if other != node:
                self._add_redistributor(self._queues.get((other, name)))
        return None

    def _close(self, command: Close, events: list[Event]) -> Refused | None:
        consumer = self._consumers.pop(command.consumer, None)
        if consumer is None:
            return CONSUMER_NOT_FOUND
        queue = consumer.queue
        queue.remove_consumer(consumer)
        purging = not queue.consumers and queue.purge_on_no_consumers  # purged before the close adds a redistributor
        if purging and self._close_at_head:  # 2.11: the consumer leaves, and the queue purges, before it gives back
            self._purge(queue, events)
        if consumer.held:
            self._return_held(queue, consumer, events)
        if purging and not self._close_at_head:  # ARTEMIS-4410: what it gave back is purged with the rest
            self._purge(queue, events)
        if not queue.consumers:
            self._add_redistributor(self._queues.get((queue.node, queue.routing_name)))
        if consumer.transacted:  # then its session closes, rolling back (ClientSessionImpl.closeChildren)
            self._close_session(consumer, events)
        return None

    @staticmethod
    def _purge(queue: QueueRecord, events: list[Event]) -> None:
        """What waits in a purge-on-no-consumers queue whose last consumer closed is dropped (LB-PURGE-ON-NO-CONSUMERS)."""
        events.extend(Dropped(message.id, queue.node, queue.name) for message in queue.pending)
        queue.pending.clear()

    def _receive(self, command: Receive, events: list[Event]) -> Refused | None:
        """A consumer of window 0 takes the first waiting message its filter matches, if any (LB-PULL)."""
        consumer = self._consumers.get(command.consumer)
        if consumer is None:
            return CONSUMER_NOT_FOUND
        if not consumer.pull:
            return NOT_PULLING
        message = take_first_match(consumer)
        if message is not None:
            if consumer.manual_ack:
                consumer.held.append(message)
            elif consumer.transacted:
                consumer.acked.append(message)
            queue = consumer.queue
            events.append(Delivered(message.id, queue.node, queue.name, consumer.name))
        return None

    def _ack(self, command: Ack, events: list[Event]) -> Refused | Failed | None:
        """A cumulative acknowledgement of what a consumer holds (LB-ACK); one of a message it does not hold
        fails (:meth:`_fail_ack`)."""
        consumer = self._consumers.get(command.consumer)
        if consumer is None:
            return CONSUMER_NOT_FOUND
        return None if acknowledge(consumer, command.message) else self._fail_ack(consumer, events)

    def _pause(self, command: Pause, events: list[Event]) -> Refused | None:
        consumer = self._consumers.get(command.consumer)
        if consumer is None:
            return CONSUMER_NOT_FOUND
        consumer.paused = True
        return None

    def _resume(self, command: Resume, events: list[Event]) -> Refused | None:
        consumer = self._consumers.get(command.consumer)
        if consumer is None:
            return CONSUMER_NOT_FOUND
        consumer.paused = False
        self._reland_waiting(consumer.queue, events)
        return None

    def _reland_waiting(self, queue: QueueRecord, events: list[Event]) -> None:
        """Offer ``queue``'s waiting messages, in order, to its started consumers again."""
        waiting = queue.pending
        queue.pending = []
        for message in waiting:
            self._land(queue, message, events)

    def _configure(self, command: Configure, events: list[Event]) -> Refused | None:
        """Settings for an address on every node, or on one (LB-TYPES)."""
        if command.node is not None and command.node not in self._lb_types:
            return UNKNOWN_NODE
        if command.lb_type is OFF_WITH_REDISTRIBUTION and not self._has_off_with_redistribution:
            return NOT_SUPPORTED
        address = command.address
        settings = AddressBalancing(command.lb_type, command.redistribution_delay, command.auto_create_queues)
        if command.node is not None:
            self._node_settings[(command.node, address)] = settings
            nodes: list[str] = [command.node]
        else:
            self._settings[address] = settings
            for node in self._nodes:
                self._node_settings.pop((node, address), None)
            nodes = self._nodes
        for node in nodes:
            self._lb_types[node][address] = command.lb_type
            self._delays[node][address] = command.redistribution_delay
        return None

    def _set_prefix(self, command: SetPrefix, events: list[Event]) -> Refused | None:
        if command.routing_type is None:
            self._prefixes.pop(command.prefix, None)
        else:
            self._prefixes[command.prefix] = command.routing_type
        return None

    def _set_link(self, command: SetLink, events: list[Event]) -> Refused | None:
        node, peer = command.node, command.peer
        if node not in self._groups or peer not in self._groups:
            return UNKNOWN_NODE
        if node == peer:
            return BAD_VALUE
        if command.connected:
            self._down.discard((node, peer))
        else:
            self._down.add((node, peer))
        for queue in self._queues.values():
            if queue.node == peer:
                queue.bindings[node].connected = command.connected
        return None

    def _tick(self, command: Tick, events: list[Event]) -> Refused | None:
        if command.ticks < 1:
            return BAD_VALUE
        self._clock += command.ticks
        return None

    # -- observation ---------------------------------------------------------------------------------------

    def snapshot(self) -> BalancingState:
        """The cluster as a spec state (built in :mod:`.snapshot`)."""
        return snapshot(self)

    def snapshot_like(self, seen: BalancingState) -> BalancingState:
        """:meth:`snapshot`, sharing with ``seen`` each part equal to its own (:mod:`.snapshot`; a lockstep check
        passes the spec's state it is about to compare with). A subclass that shows its state its own way
        (overrides :meth:`snapshot`) is shown that way."""
        if type(self).snapshot is not FastBalancingBroker.snapshot:
            return self.snapshot()
        return snapshot(self, seen)

    def check_valid(self) -> None:
        """Raise :class:`InvariantBroken` naming every kept view that disagrees with the queues it views."""
        problems = find_problems(self)
        if problems:
            raise InvariantBroken("fast balancing broker: " + "; ".join(problems))
