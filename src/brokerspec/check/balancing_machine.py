"""The lockstep state machine for load balancing and redistribution.

Introduction
------------
One thin rule-based machine: each rule is named after a broker operation
and only builds the command; :class:`~brokerspec.check.lockstep.Lockstep`
runs it through the spec and every subject. Clusters are small (one to four
nodes, made by the ``initialize`` step) and names collide on purpose: the
queue name ``a1`` is also an address, so an ANYCAST queue named like its
address (the one the redistribution triggers find by routing name) is
common; two colours feed both queue and consumer filters. Consumers come and
go, pause and resume, links go down and up, and the logical clock ticks, so delayed
redistribution fires within a few steps.

Now and then a consumer attaches with window 0 (it takes a message only when
it receives, LB-PULL) or acknowledges later (it holds what it takes, LB-ACK).
Four rules make sure such consumers do something: one that acknowledges
later takes a few messages; a receive, usually by a pulling consumer (one is
attached where messages wait when none is open); an acknowledgement, usually
of a message the consumer holds (the first, the last or one between, all of
them, or now and then one it does not hold); and a close of a consumer that
holds messages, which gives them back to its queue (LB-CLOSE-RETURNS).
A run that leaves ``receive`` out attaches no consumer of window 0, and one
that leaves ``ack`` out no consumer that acknowledges later: a SUT without
those operations (the Artemis adapter, ``fuzz --exclude-op``) then still
gets every other scenario.

A bridge now and then resends the last message it forwarded, as after a
reconnection, which its target must drop (LB-BRIDGE-DUP).

Transactions come from :class:`~.balancing_tx.TransactionRules`: sends in a
session delivered at its commit, transacted consumers, commits, rollbacks
and runs of rollbacks that spend a message's deliveries.

Nodes, consumers and queues to act on are picked as a plain function of the
state and an index drawn by Hypothesis, so almost every step does something
and shrunk scripts stay free of refused no-ops.
"""

from __future__ import annotations

from collections.abc import Mapping

from brokerspec.spec import Profile
from brokerspec.spec.addressing import RoutingType
from brokerspec.spec.balancing import (
    Ack,
    AddNode,
    Attach,
    Close,
    Configure,
    CreateQueue,
    DeleteQueue,
    LbType,
    Pause,
    QueryQueue,
    Receive,
    Resend,
    Resume,
    Send,
    SetLink,
    SetPrefix,
    Tick,
    UpdateQueue,
)

from .balancing_tx import TransactionRules
from .domains import BALANCING
from . import draws as d
from .engine import initialize, issues, rule
from .lockstep import Lockstep, SubjectFactory
from .machine import OpsMachine, RunStats

EXTRA_NODES = ("n2", "n3", "n4")
ADDRESSES = d.pick("a1", "a1", "a1", "a2", "a1.x", "a1.x.x", "a1.#", "*.x")
QUEUES = d.pick("a1", "q1", "q2")
ROUTING_TYPES = d.pick(RoutingType.ANYCAST, RoutingType.ANYCAST, RoutingType.MULTICAST)
MESSAGE_ROUTING_TYPES = d.pick(None, None, RoutingType.ANYCAST, RoutingType.MULTICAST)
COLOURS = d.pick(None, None, "red", "blue")
CONSUMERS = d.pick("c1", "c2", "c3", "c4")
LB_TYPES = d.pick(*LbType)
DELAYS = d.pick(-1, 0, 0, 2)
PICK = d.integers(0, 7)
BY_FQQN = d.pick(False, False, True)
PULL = d.pick(False, False, False, True)
"""Whether a consumer attaches with window 0 (LB-PULL): one in four."""
MANUAL_ACK = d.pick(False, False, True)
"""Whether a consumer's client acknowledges later (LB-ACK): one in three."""
ACKED = d.integers(0, 7)
"""Which message an acknowledgement names: 0-4 one of those held (0 the first, 4 the last), 5 and 6 all of them,
7 a message never issued (NOT_DELIVERED: refused, or failing and giving back what the consumer holds)."""
PREFIXES = ("any:", "multi:")
"""Acceptor prefixes the machine sets and sends with (LB-PREFIX)."""
SEND_PREFIXES = d.pick("", "", "", *PREFIXES)
"""Whether a consumer attaches by FQQN (RD-TRIGGER-FQQN-CONSUMER)."""
WIDE_ADDRESSES = d.pick("a1", "a1", "a2", "a3", "a1.x", "a2.x", "x.x", "a1.x.x", "a1.#", "*.x", "#.x", "#")
WIDE_QUEUES = d.pick("a1", "q1", "q2", "q3", "q4", "a2")
WIDE_COLOURS = d.pick(None, None, "red", "blue", "green")
WIDE_CONSUMER_NAMES = ("c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8")
WIDE_CONSUMERS = d.pick(*WIDE_CONSUMER_NAMES)
WIDE_DELAYS = d.pick(-1, 0, 0, 2, 5)
"""The wide alphabet (``wide=True``): more addresses, queues, consumers and filters, longer delays, so that a
group, a node's bindings and a consumer list grow past the sizes the narrow alphabet reaches."""


def make_balancing_machine(profile: Profile, subjects: Mapping[str, SubjectFactory], counts: RunStats,
                           permissive: bool = False, window: int = 1, wide: bool = False) -> type[OpsMachine]:
    """A state machine class running ``subjects`` in lockstep with the load-balancing spec (``wide``: the
    wide alphabet)."""
    addresses = WIDE_ADDRESSES if wide else ADDRESSES
    queue_names = WIDE_QUEUES if wide else QUEUES
    colours = WIDE_COLOURS if wide else COLOURS
    consumers = WIDE_CONSUMERS if wide else CONSUMERS
    delays = WIDE_DELAYS if wide else DELAYS
    initial_queues = 6 if wide else 3

    class BalancingLockstep(TransactionRules, OpsMachine):
        """Spec and subjects in lockstep over a small cluster."""

        def __init__(self) -> None:
            super().__init__()
            self.lockstep = Lockstep(profile, subjects, BALANCING, permissive, window)
            counts.examples += 1

        def teardown(self) -> None:
            try:
                self.lockstep.finish()  # deferred replies are compared before the scenario ends
            finally:
                self.lockstep.close()

        def run(self, command: object) -> None:
            if self.leaves_out(command):
                return
            counts.note(command)
            self.lockstep.step(command)

        def consumer_kind(self, pull: bool, manual_ack: bool) -> tuple[bool, bool]:
            """``pull`` and ``manual_ack`` as drawn, each only while the run draws the operation it needs."""
            return pull and "receive" not in self.excluded, manual_ack and "ack" not in self.excluded

        def node(self, pick: int) -> str:
            nodes: tuple[str, ...] = self.lockstep.state.nodes
            return nodes[pick % len(nodes)]

        def queue(self, pick: int) -> tuple[str, str]:
            """An existing queue (node, name), or a name on node n1 when there is none."""
            keys = sorted(self.lockstep.state.queues, key=lambda k: self.lockstep.state.queues[k].serial)
            return keys[pick % len(keys)] if keys else ("n1", "q1")

        @initialize(nodes=d.integers(0, 3), lb_type=LB_TYPES, delay=delays,
                    queues=d.lists(d.tuples(PICK, queue_names, ROUTING_TYPES, colours, d.booleans()), 0,
                                   initial_queues))
        def form_cluster(self, nodes: int, lb_type: LbType, delay: int,
                         queues: list[tuple[int, str, RoutingType, str | None, bool]]) -> None:
            """One to four nodes, address a1's settings, and a few queues on a1 (some on every node)."""
            for name in EXTRA_NODES[:nodes]:
                self.run(AddNode(name))
            self.run(Configure("a1", lb_type, delay))
            for pick, name, routing_type, queue_filter, everywhere in queues:
                if everywhere:
                    self.create_everywhere(name, routing_type, queue_filter)
                else:
                    self.run(CreateQueue(self.node(pick), "a1", name, routing_type))

        @issues("create_queue")
        @rule(queue=queue_names, routing_type=ROUTING_TYPES, queue_filter=colours)
        def create_everywhere(self, queue: str, routing_type: RoutingType, queue_filter: str | None) -> None:
            """The same queue of a1 on every node, the usual clustered deployment: groups span the nodes.

            The first node's copy takes the filter, so filters differ across the group.
            """
            for index, node in enumerate(self.lockstep.state.nodes):
                self.run(CreateQueue(node, "a1", queue, routing_type, queue_filter if index == 0 else None))

        @issues("create_queue")
        @rule(pick=PICK, address=addresses, queue=queue_names, routing_type=ROUTING_TYPES, queue_filter=colours,
              enabled=d.pick(True, True, True, False), purging=d.pick(False, False, False, True))
        def create_queue(self, pick: int, address: str, queue: str, routing_type: RoutingType,
                         queue_filter: str | None, enabled: bool, purging: bool) -> None:
            self.run(CreateQueue(self.node(pick), address, queue, routing_type, queue_filter, enabled, purging))

        @issues("update_queue")
        @rule(pick=PICK, enabled=d.pick(None, True, False), purging=d.pick(None, True, False))
        def update_queue(self, pick: int, enabled: bool | None, purging: bool | None) -> None:
            """Disable or enable a queue, or make it purge while it has no consumers (or stop it)."""
            node, name = self.queue(pick)
            self.run(UpdateQueue(node, name, enabled, purging))

        @issues("delete_queue")
        @rule(pick=PICK)
        def delete_queue(self, pick: int) -> None:
            node, name = self.queue(pick)
            self.run(DeleteQueue(node, name))

        @issues("query_queue")
        @rule(pick=PICK, elsewhere=d.booleans())
        def query_queue(self, pick: int, elsewhere: bool) -> None:
            """An existing queue, or its name asked of another node (where it may not exist)."""
            node, name = self.queue(pick)
            self.run(QueryQueue(self.node(pick + 1) if elsewhere else node, name))

        def fqqn_address(self, key: tuple[str, str], by_fqqn: bool) -> str | None:
            """The address part for a consumer attaching by FQQN: the queue's own address (None: by name)."""
            queue = self.lockstep.state.queues.get(key)
            return None if not by_fqqn else queue.address if queue is not None else "a1"

        @issues("attach")
        @rule(consumer=consumers, pick=PICK, consumer_filter=colours, by_fqqn=BY_FQQN, pull=PULL,
              manual_ack=MANUAL_ACK)
        def attach(self, consumer: str, pick: int, consumer_filter: str | None, by_fqqn: bool, pull: bool,
                   manual_ack: bool) -> None:
            node, name = self.queue(pick)
            self.run(Attach(consumer, node, name, consumer_filter, self.fqqn_address((node, name), by_fqqn),
                            *self.consumer_kind(pull, manual_ack)))

        @issues("attach")
        @rule(consumer=consumers, pick=PICK, consumer_filter=colours, by_fqqn=BY_FQQN, pull=PULL,
              manual_ack=MANUAL_ACK)
        def attach_where_messages_wait(self, consumer: str, pick: int, consumer_filter: str | None,
                                       by_fqqn: bool, pull: bool, manual_ack: bool) -> None:
            """Attach on another node's member of a group in which messages wait: remote demand appears.

            That is the commonest redistribution trigger; drawing the queue at
            random reaches it too rarely. Without waiting messages this is a
            plain attach.
            """
            state = self.lockstep.state
            targets = sorted(
                {(other.node, other.name) for queue in state.queues.values() if queue.pending
                 for other in state.queues.values()
                 if other.node != queue.node and other.address == queue.address
                 and other.routing_name == queue.routing_name},
                key=lambda key: state.queues[key].serial,
            )
            node, name = targets[pick % len(targets)] if targets else self.queue(pick)
            self.run(Attach(consumer, node, name, consumer_filter, self.fqqn_address((node, name), by_fqqn),
                            *self.consumer_kind(pull, manual_ack)))

        if wide:
            @issues("attach")
            @rule(pick=PICK, count=d.integers(2, 6), consumer_filter=colours)
            def attach_several(self, pick: int, count: int, consumer_filter: str | None) -> None:
                """Several new consumers on one queue (wide alphabet only), so a consumer list grows long."""
                node, name = self.queue(pick)
                fresh = [c for c in WIDE_CONSUMER_NAMES if c not in self.lockstep.state.consumers]
                for index, consumer in enumerate(fresh[:count]):
                    self.run(Attach(consumer, node, name, consumer_filter if index == 0 else None))

        @issues("close")
        @rule(consumer=consumers)
        def close(self, consumer: str) -> None:
            """Close ``consumer``, or the first open one when it is not open."""
            open_ones = self.lockstep.state.consumers
            self.run(Close(consumer if consumer in open_ones or not open_ones else min(open_ones)))

        def fresh_consumer(self) -> str | None:
            """A consumer name of the alphabet that is not open, or None when all are."""
            names = WIDE_CONSUMER_NAMES if wide else ("c1", "c2", "c3", "c4")
            return next((name for name in names if name not in self.lockstep.state.consumers), None)

        def waiting_queue(self, pick: int) -> tuple[str, str]:
            """A queue in which messages wait, or any queue (:meth:`queue`) when none has any."""
            state = self.lockstep.state
            keys = sorted((key for key, queue in state.queues.items() if queue.pending),
                          key=lambda key: state.queues[key].serial)
            return keys[pick % len(keys)] if keys else self.queue(pick)

        @issues("attach", "send")
        @rule(pick=PICK, count=d.integers(1, 3), color=colours)
        def hold_messages(self, pick: int, count: int, color: str | None) -> None:
            """A consumer whose client acknowledges later takes messages and holds them (LB-ACK): an open one, or a
            new one on a queue where messages wait (it takes them at once), then a few sends to its queue's
            address from its node."""
            if "ack" in self.excluded:
                return
            state = self.lockstep.state
            keeping = sorted(name for name, c in state.consumers.items() if c.manual_ack and not c.pull)
            fresh = self.fresh_consumer()
            if keeping and (fresh is None or pick % 2):
                consumer = state.consumers[keeping[pick % len(keeping)]]
                node, name = consumer.node, consumer.queue
            elif fresh is not None:
                node, name = self.waiting_queue(pick)
                self.run(Attach(fresh, node, name, manual_ack=True))
            else:
                return
            queue = self.lockstep.state.queues.get((node, name))
            for _ in range(count if queue is not None else 0):
                self.run(Send(node, queue.address if queue is not None else "a1", None, color))

        @issues("close")
        @rule(pick=PICK)
        def close_holding(self, pick: int) -> None:
            """Close a consumer that holds messages unacknowledged, so they go back to its queue
            (LB-CLOSE-RETURNS); a plain close when none holds any."""
            consumers = self.lockstep.state.consumers
            holding = sorted(name for name, c in consumers.items() if c.held) or sorted(consumers)
            if holding:
                self.run(Close(holding[pick % len(holding)]))

        @issues("receive")
        @rule(pick=PICK, anyone=d.pick(False, False, False, True), manual_ack=MANUAL_ACK)
        def receive(self, pick: int, anyone: bool, manual_ack: bool) -> None:
            """A consumer of window 0 receives (LB-PULL): an open one, else a new one attached (``manual_ack`` or
            not) on a queue where messages wait; now and then any open consumer, which a consumer that is pushed
            to refuses (NOT_PULLING)."""
            consumers = self.lockstep.state.consumers
            if anyone:
                names = sorted(consumers)
                self.run(Receive(names[pick % len(names)] if names else "c1"))
                return
            pulling = sorted(name for name, c in consumers.items() if c.pull)
            fresh = self.fresh_consumer()
            if not pulling and fresh is not None:
                node, name = self.waiting_queue(pick)
                self.run(Attach(fresh, node, name, pull=True, manual_ack=self.consumer_kind(True, manual_ack)[1]))
                pulling = [fresh] if fresh in self.lockstep.state.consumers else []
            self.run(Receive(pulling[pick % len(pulling)] if pulling else "c1"))

        @issues("ack")
        @rule(pick=PICK, which=ACKED)
        def ack(self, pick: int, which: int) -> None:
            """A consumer acknowledges (LB-ACK): one that holds messages when there is one, up to a message it
            holds, or all of it, or (``which`` 7) a message never issued (NOT_DELIVERED), which fails and gives back what
            it holds."""
            state = self.lockstep.state
            holding = sorted(name for name, c in state.consumers.items() if c.held)
            names = holding or sorted(state.consumers)
            name = names[pick % len(names)] if names else "c1"
            consumer = state.consumers.get(name)
            held = [m.id for m in consumer.held] if consumer is not None else []
            if which == 7 or not held:  # 7: a message never issued, which fails and gives back what is held
                message: int | None = state.next_message + 100 if which == 7 else None
            elif which >= 5:
                message = None
            else:
                message = held[which * (len(held) - 1) // 4]
            self.run(Ack(name, message))

        @issues("pause", "resume")
        @rule(consumer=consumers, resume=d.booleans())
        def pause_or_resume(self, consumer: str, resume: bool) -> None:
            """Stop or start ``consumer``'s session (the first open consumer when it is not open)."""
            open_ones = self.lockstep.state.consumers
            name = consumer if consumer in open_ones or not open_ones else min(open_ones)
            self.run(Resume(name) if resume else Pause(name))

        @issues("send")
        @rule(pick=PICK, address=addresses, routing_type=MESSAGE_ROUTING_TYPES, color=colours,
              grouped=d.pick(False, False, False, True), fqqn_queue=d.pick(None, None, None, "a1", "q1"),
              prefix=SEND_PREFIXES)
        def send(self, pick: int, address: str, routing_type: RoutingType | None, color: str | None,
                 grouped: bool, fqqn_queue: str | None, prefix: str) -> None:
            self.run(Send(self.node(pick), prefix + address, routing_type, color, grouped, fqqn_queue))

        @issues("set_prefix")
        @rule(prefix=d.pick(*PREFIXES), routing_type=d.pick(RoutingType.ANYCAST, RoutingType.MULTICAST, None))
        def set_prefix(self, prefix: str, routing_type: RoutingType | None) -> None:
            """An acceptor prefix on every node, or its removal (LB-PREFIX)."""
            self.run(SetPrefix(prefix, routing_type))

        @issues("send")
        @rule(pick=PICK, count=d.integers(2, 4), color=colours, grouped=d.pick(False, False, True))
        def send_several(self, pick: int, count: int, color: str | None, grouped: bool) -> None:
            """A burst to a1, so round robin visibly turns."""
            for _ in range(count):
                self.run(Send(self.node(pick), "a1", None, color, grouped))

        @issues("send")
        @rule(pick=PICK)
        def stall_consumer(self, pick: int) -> None:
            """A consumer falls behind: its session stops while a message it matches and one it does not
            arrive from its node at its queue's address (without consumers, two plain sends)."""
            state = self.lockstep.state
            names = sorted(state.consumers)
            if names:
                consumer = state.consumers[names[pick % len(names)]]
                self.run(Pause(consumer.name))
                node, address, color = consumer.node, state.queues[(consumer.node, consumer.queue)].address, \
                    consumer.filter
            else:
                node, address, color = self.node(pick), "a1", "red"
            self.run(Send(node, address, None, color))
            self.run(Send(node, address, None, "blue" if color != "blue" else "red"))

        @issues("configure")
        @rule(address=addresses, lb_type=LB_TYPES, delay=delays, pick=PICK, on_one_node=d.pick(False, False, True),
              auto_create=d.pick(False, True))
        def configure(self, address: str, lb_type: LbType, delay: int, pick: int, on_one_node: bool,
                      auto_create: bool) -> None:
            """An address's settings on every node, or now and then on one node only (LB-TYPES); half of them let
            an ANYCAST send make its own queue (LB-AUTO-CREATE)."""
            self.run(Configure(address, lb_type, delay, self.node(pick) if on_one_node else None, auto_create))

        @issues("set_link")
        @rule(pick=PICK, hop=d.integers(1, 3), connected=d.booleans())
        def set_link(self, pick: int, hop: int, connected: bool) -> None:
            nodes: tuple[str, ...] = self.lockstep.state.nodes
            peer = nodes[(pick + hop) % len(nodes)]
            self.run(SetLink(self.node(pick), peer, connected))

        @issues("resend")
        @rule(pick=PICK, hop=d.integers(1, 3))
        def resend(self, pick: int, hop: int) -> None:
            """A cluster bridge resends what it forwarded last, as after a reconnection (LB-BRIDGE-DUP): a link
            that forwarded something when there is one."""
            state = self.lockstep.state
            links = sorted(state.forwarded)
            if links:
                self.run(Resend(*links[pick % len(links)]))
            else:
                nodes: tuple[str, ...] = state.nodes
                self.run(Resend(self.node(pick), nodes[(pick + hop) % len(nodes)]))

        @issues("tick")
        @rule(ticks=d.pick(1, 1, 2))
        def tick(self, ticks: int) -> None:
            self.run(Tick(ticks))

    kind = "Permissive" if permissive else ""
    BalancingLockstep.__name__ = f"Balancing{kind}Lockstep[{profile.label}{', wide' if wide else ''}]"
    BalancingLockstep.__qualname__ = BalancingLockstep.__name__
    return BalancingLockstep
