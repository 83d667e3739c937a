"""The model layer: the fast brokers' semantics with real messages, behind the sessions layer.

Introduction
------------
The Qpid design (seed ``004``) puts a model of addresses, queues and
messages between the sessions and the store. Here it is made of
brokerspec's own pieces, so that a running broker decides exactly as the
spec says:

* **Names.** :class:`~brokerspec.impl.addressing.FastBroker` under the
  broker's profile decides every name question: what a destination resolves
  to (FQQN ``address::queue``, prefixes, ambiguity), which queues a send
  reaches, which queue a subscription attaches to, and what either
  auto-creates (the ADDR-* rules, ``docs/addressing.md``; :mod:`.admin`). The model
  creates a :class:`~.queues.Queue` for every queue the name model reports.
* **Routing.** A send goes to every queue of ``copies`` and to one of
  ``anycast_candidates``, taken round robin per address (seed ``003``: one
  routing name, turns kept per name; LB-ROUND-ROBIN).
* **Duplicate detection** (:mod:`.dedup`): the ``_AMQ_DUPL_ID`` header,
  checked after the routing decision and before anything is delivered.
* **Transactions** (:mod:`.transactions`): a transacted send is routed at
  the send and lands at the commit (LB-TX-SEND, LB-TX-COMMIT; a queue
  deleted meanwhile gets nothing); its ID waits for the commit (DUP-TX-HELD);
  an acknowledgement in a transaction takes effect at the commit and an
  abort gives the message back (LB-TX-ACK, LB-TX-ROLLBACK); a duplicate
  makes the commit fail and roll back (DUP-TX-DUPLICATE, DUP-COMMIT-ROLLBACK-ONLY).
* **Durability** (:mod:`.store`): each operation writes in one store
  transaction, committed before it returns.

Every method runs to completion without waiting, on the I/O layer's one
thread: the model needs no locks. Deliveries are not pushed: after each
operation the sessions layer calls :meth:`Model.pump`, which hands out what
waits to the subscriptions that are ready.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from brokerspec.impl.addressing import FastBroker
from brokerspec.spec import Outcome, Profile, ReturnOrder
from brokerspec.spec.addressing import Attached, Consume, CreateAddress, CreateQueue, Rejected, Routed, RoutingType, Send

from .admin import NameAdmin
from .dedup import DUPLICATE_ID_HEADER, IdCaches, compute_key
from .queues import Entry, Message, Queue, Sink, Subscription, queue_key
from .record import Recorder
from .store import BrokerStore, open_store
from .transactions import PendingSend, Transaction, TransactionWork


ID_BATCH = 1000
"""Message numbers reserved in the store at a time."""


@dataclass(frozen=True)
class SendResult:
    """What became of a send: the queues it reached (their keys, :func:`.queues.queue_key`), or why it reached none."""

    queues: tuple[str, ...] = ()
    duplicate: bool = False
    refused: Outcome | None = None
    """The name model's refusal (a :class:`Rejected`), when it refused."""
    address: str = ""
    rollback_only: bool = False
    """Whether the send's transaction is rollback-only now."""

    @property
    def reached(self) -> list[tuple[str, str]]:
        """The queues reached as (address, name) pairs."""
        return [(address, name) for address, name in map(json.loads, self.queues)]

    @property
    def status(self) -> str:
        """Artemis's routing status for a send that did not fail: OK, NO_BINDINGS or DUPLICATED_ID."""
        if self.duplicate:
            return "DUPLICATED_ID"
        return "OK" if self.queues else "NO_BINDINGS"


class Model(NameAdmin, TransactionWork):
    """One broker's addresses, queues, messages, ID caches and store (names: :class:`~.admin.NameAdmin`,
    transactions: :class:`~.transactions.TransactionWork`)."""

    def __init__(self, profile: Profile, path: Path | None = None, recorder: Recorder | None = None) -> None:
        self.profile = profile
        self.store: BrokerStore = open_store(path)
        self.recorder = recorder or Recorder(profile)
        options = profile.duplicates
        self.ids = IdCaches(self.store, options.id_cache_size, options.persist_id_cache)
        self.names = FastBroker(profile)
        self.queues: dict[str, Queue] = {}
        self.turns: dict[str, int] = {}
        self.next_message = 1
        self.reserved = 1
        """Message numbers below this are reserved in the store; the next start begins here."""
        self.next_seq = 1
        self.dirty: set[Queue] = set()
        self._rollback_in_arrival_order = profile.duplicates.return_order is ReturnOrder.ARRIVAL
        self._close_in_arrival_order = profile.balancing.close_return_order is ReturnOrder.ARRIVAL
        self.open_transactions: set[Transaction] = set()
        """Every transaction begun and not yet ended (their held IDs go when their address forgets its cache)."""
        self.tagged: dict[str, SendResult] = {}
        """The last sends that carried a ``_BS_TAG`` header, by tag: what each became
        (the management operation ``getRouting`` reads it, as Artemis's probe plugin records a routing context;
        at most :data:`~.admin.TAGGED_SENDS`)."""
        self._load()

    # -- start and restart ---------------------------------------------------------------

    def _load(self) -> None:
        """Rebuild everything from the store: names, queues, durable messages, IDs (DUP-RESTART-RELOAD)."""
        image = self.store.load_image()
        self.next_message = self.reserved = image.state.next_message
        for name, types in sorted(image.addresses.items()):
            self._decide(CreateAddress(name, frozenset(RoutingType(t) for t in types)))
        for binding in image.bindings:
            self._decide(CreateQueue(binding.address, binding.queue, RoutingType(binding.routing_type)))
            made = Queue(f"{binding.address}::{binding.queue}", binding.address, binding.queue,
                         binding.routing_type)
            self.queues[made.key] = made
        loaded: dict[int, Message] = {}  # one message however many queues hold it: its body goes with the last
        for key, pairs in image.state.messages.items():
            queue = self.queues.get(key)
            for seq, number in pairs:
                stored = image.bodies.get(number)
                if queue is None or stored is None:
                    continue
                message = loaded.get(number)
                if message is None:
                    message = loaded[number] = Message(number, stored.address, stored.headers, stored.body, True)
                self._enqueue(queue, message, seq)
                self.next_seq = max(self.next_seq, seq + 1)
        self.ids.reload(image.state.ids)
        for number in self.store.orphan_bodies():
            self.store.delete_body(number)
        self.store.commit()

    def restart(self, crash: bool = False) -> None:
        """Drop memory and rebuild it from the store: a clean restart, or a crash's reopen."""
        if crash:
            self.store.abandon()
        else:
            self.store.reopen()
        self.names = FastBroker(self.profile)
        self.queues.clear()
        self.turns.clear()
        self.dirty.clear()
        self.recorder.reset()
        self._load()

    def close(self) -> None:
        """Close the store (everything committed stays)."""
        self.store.close()
        self.recorder.close()

    # -- sending --------------------------------------------------------------------------

    def send(self, destination: str, routing_type: RoutingType | None, headers: tuple[tuple[str, str], ...],
             body: bytes, durable: bool, tx: Transaction | None = None) -> SendResult:
        """Route a message; outside a transaction it lands at once, inside one at the commit."""
        outcome = self._decide(Send(destination, routing_type))
        if isinstance(outcome, Rejected):
            return SendResult(refused=outcome)
        if not isinstance(outcome, Routed):  # pragma: no cover - a send is routed or rejected
            raise TypeError(f"send decided {outcome!r}")
        address = outcome.address
        on_address = len(address) + 2  # every queue a send names is on its address: "address::" + name
        created = None if outcome.created_queue is None else (address, outcome.created_queue[on_address:])
        self._made(outcome.created_address, created, routing_type or RoutingType.MULTICAST)
        value = next((v for k, v in headers if k == DUPLICATE_ID_HEADER), None)
        key = compute_key(value) if value is not None else None
        if key is not None and self.ids.is_duplicate(address, key):
            if tx is None:
                self.recorder.note("DUP-NONTX-DUPLICATE", f"send to {address}: duplicate ID {value!r} dropped")
                self.store.commit()
                return SendResult(duplicate=True, address=address)
            if tx.doom is None:
                tx.doom = f"duplicate ID {value!r} on address {address}"
            self.recorder.note("DUP-TX-DUPLICATE", f"transaction {tx.name}: duplicate ID {value!r}, rollback-only")
            self.store.commit()
            return SendResult(duplicate=True, address=address, rollback_only=True)
        targets = tuple(queue_key(address, fqqn[on_address:])
                        for fqqn in outcome.copies + self._anycast_turn(address, outcome.anycast_candidates))
        message = Message(self._number(), address, headers, body, durable)
        if tx is not None:
            tx.sends.append(PendingSend(message, targets, key))
            self.recorder.note("LB-TX-SEND", f"transaction {tx.name}: message {message.number} routed to "
                               f"{list(targets)}, lands at the commit")
            self.store.commit()
            return SendResult(queues=targets, address=address, rollback_only=tx.doom is not None)
        self._land(message, targets)
        if key is not None:
            self.ids.record(address, key)
            self.recorder.note("DUP-NONTX-VISIBILITY", f"send to {address}: ID {value!r} recorded")
        self.store.commit()
        return SendResult(queues=targets, address=address)

    def deliver_reply(self, reply_to: str, headers: tuple[tuple[str, str], ...], body: bytes) -> bool:
        """Put a management reply straight into the queue ``reply_to`` names exactly (``address::queue``, or
        a queue named like its address), past prefixes, settings and routing, none of which a case can then
        turn against the reply; False when there is no such queue."""
        address, separator, name = reply_to.partition("::")
        queue = self.queues.get(queue_key(address, name if separator else address))
        if queue is None:
            return False
        message = Message(self._number(), address, headers, body, False)
        seq = self.next_seq
        self.next_seq += 1
        self._enqueue(queue, message, seq)
        return True

    def _number(self) -> int:
        """The next message number. Numbers are reserved in the store a batch at a time, so that none is
        given twice across restarts without a store write per message (Artemis's ``BatchingIDGenerator``
        stores a checkpoint every ``ID_BATCH`` IDs the same way)."""
        number = self.next_message
        self.next_message += 1
        if number >= self.reserved:
            self.reserved = number + ID_BATCH
            self.store.set_next_message(self.reserved)
        return number

    def _anycast_turn(self, address: str, candidates: tuple[str, ...]) -> tuple[str, ...]:
        """One of ``candidates``, in turns per address (LB-ROUND-ROBIN)."""
        if not candidates:
            return ()
        turn = self.turns.get(address, 0) % len(candidates)
        self.turns[address] = turn + 1
        return (candidates[turn],)

    def _land(self, message: Message, targets: tuple[str, ...]) -> None:
        """Put ``message`` into each live target queue, durably when it is persistent."""
        landed = [self.queues[key] for key in targets if key in self.queues]
        if message.durable and landed:
            self.store.put_body(message.number, message.address, message.headers, message.body)
        for queue in landed:
            seq = self.next_seq
            self.next_seq += 1
            self._enqueue(queue, message, seq)
            if message.durable:
                self.store.add_message(queue.key, message.number, seq)

    def _enqueue(self, queue: Queue, message: Message, seq: int) -> None:
        message.refs += 1
        queue.waiting.append(Entry(message, queue, seq))
        self.dirty.add(queue)

    def _release(self, entry: Entry) -> None:
        """An entry leaves its queue for good (acknowledged, or its queue deleted)."""
        message = entry.message
        message.refs -= 1
        if message.durable:
            self.store.remove_message(entry.queue.key, message.number)
            if message.refs == 0:
                self.store.delete_body(message.number)

    # -- consuming ------------------------------------------------------------------------

    def subscribe(self, destination: str, routing_type: RoutingType | None, key: str, auto_ack: bool,
                  sink: Sink) -> Subscription | Rejected:
        """Attach a subscription to the queue the name model picks (ADDR-CONSUME-*), or its refusal."""
        outcome = self._decide(Consume(destination, routing_type))
        if isinstance(outcome, Rejected):
            return outcome
        if not isinstance(outcome, Attached):  # pragma: no cover - a consume attaches or is rejected
            raise TypeError(f"consume decided {outcome!r}")
        created = None if outcome.created_queue is None else (outcome.address, outcome.queue)
        self._made(outcome.created_address, created, routing_type or RoutingType.MULTICAST)
        self.store.commit()
        queue = self.queues[queue_key(outcome.address, outcome.queue)]
        subscription = Subscription(key, queue, auto_ack, sink)
        queue.subscriptions.append(subscription)
        self.dirty.add(queue)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        """Detach a subscription; what it held goes back to the queue's head (LB-CLOSE-RETURNS)."""
        queue = subscription.queue
        if queue is None:
            return
        queue.detach(subscription)
        held = list(subscription.held.values())
        subscription.held.clear()
        subscription.queue = None
        if held:
            queue.give_back(held, self._close_in_arrival_order)
            self.dirty.add(queue)
            self.recorder.note("LB-CLOSE-RETURNS", f"{len(held)} unacknowledged messages back to {queue.fqqn}")

    def pump(self) -> list[tuple[Subscription, Entry]]:
        """Hand waiting messages to ready subscriptions, in turns; the deliveries for the sessions layer to send."""
        deliveries: list[tuple[Subscription, Entry]] = []
        for queue in list(self.dirty):
            while queue.waiting:
                subscription = queue.next_ready()
                if subscription is None:
                    break
                entry = queue.waiting.popleft()
                entry.deliveries += 1
                if subscription.auto_ack:
                    self._release(entry)
                else:
                    subscription.held[entry.message.number] = entry
                deliveries.append((subscription, entry))
            if not queue.waiting or not queue.subscriptions:
                self.dirty.discard(queue)
        if deliveries:
            self.store.commit()
        return deliveries

    def ack(self, subscription: Subscription, number: int, cumulative: bool, tx: Transaction | None) -> bool:
        """Acknowledge a held message (and, for ``client`` mode, those before it); False if it was not held."""
        entries = (subscription.take_up_to(number) if cumulative
                   else [e for e in (subscription.held.pop(number, None),) if e is not None])
        if not entries:
            return False
        if tx is not None:
            tx.acks.extend((subscription, entry) for entry in entries)
            return True
        for entry in entries:
            self._release(entry)
        self.store.commit()
        return True

    def nack(self, subscription: Subscription, number: int) -> bool:
        """Give a held message back to its queue's head; False if it was not held."""
        entry = subscription.held.pop(number, None)
        if entry is None:
            return False
        entry.queue.give_back([entry], self._close_in_arrival_order)
        self.dirty.add(entry.queue)
        return True
