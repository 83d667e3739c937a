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
  auto-creates (the ADDR-* rules, ``docs/address-resolution.md``). The model
  creates a :class:`~.queues.Queue` for every queue the name model reports.
* **Routing.** A send goes to every queue of ``copies`` and to one of
  ``anycast_candidates``, taken round robin per address (seed ``003``: one
  routing name, turns kept per name; LB-ROUND-ROBIN).
* **Duplicate detection** (:mod:`.dedup`): the ``_AMQ_DUPL_ID`` header,
  checked after the routing decision and before anything is delivered.
* **Transactions** (:class:`Transaction`): a transacted send is routed at
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

from dataclasses import dataclass, field
from pathlib import Path

from brokerspec.impl.addressing import FastBroker
from brokerspec.spec import Outcome, Profile
from brokerspec.spec.addressing import (
    AddressCreated, AddressDeleted, Attached, Consume, CreateAddress, CreateQueue, DeleteAddress, DeleteQueue,
    QueueCreated, QueueDeleted, Rejected, Routed, RoutingType, Send,
)

from .dedup import DUPLICATE_ID_HEADER, IdCaches, compute_key
from .queues import Entry, Message, Queue, Sink, Subscription
from .record import Recorder
from .store import BrokerStore, open_store


@dataclass
class PendingSend:
    """A transacted send, routed, waiting for the commit."""

    message: Message
    targets: tuple[str, ...]
    key: bytes | None


@dataclass
class Transaction:
    """A STOMP transaction: its sends and acknowledgements, and why it must roll back, if it must."""

    name: str
    sends: list[PendingSend] = field(default_factory=list)
    acks: list[tuple[Subscription, Entry]] = field(default_factory=list)
    doom: str | None = None


@dataclass(frozen=True)
class SendResult:
    """What became of a send: the queues it reached, or why it reached none."""

    queues: tuple[str, ...] = ()
    duplicate: bool = False
    refused: Outcome | None = None
    """The name model's refusal (a :class:`Rejected`), when it refused."""


class Model:
    """One broker's addresses, queues, messages, ID caches and store."""

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
        self.next_seq = 1
        self.dirty: set[Queue] = set()
        self._load()

    # -- start and restart ---------------------------------------------------------------

    def _load(self) -> None:
        """Rebuild everything from the store: names, queues, durable messages, IDs (DUP-RESTART-RELOAD)."""
        image = self.store.load_image()
        self.next_message = image.state.next_message
        for name, types in sorted(image.addresses.items()):
            self._decide(CreateAddress(name, frozenset(RoutingType(t) for t in types)))
        for binding in image.bindings:
            self._decide(CreateQueue(binding.address, binding.queue, RoutingType(binding.routing_type)))
            self.queues[binding.fqqn] = Queue(binding.fqqn, binding.address, binding.queue, binding.routing_type)
        for fqqn, pairs in image.state.messages.items():
            queue = self.queues.get(fqqn)
            for seq, number in pairs:
                stored = image.bodies.get(number)
                if queue is None or stored is None:
                    continue
                message = Message(number, stored.address, stored.headers, stored.body, True)
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

    # -- the name model -------------------------------------------------------------------

    def _decide(self, command: CreateAddress | CreateQueue | DeleteAddress | DeleteQueue | Send | Consume) -> Outcome:
        outcome = self.names.execute(command)
        if self.recorder.active:
            self.recorder.decision(command, outcome)
        return outcome

    def _made(self, created_address: str | None, created_queue: str | None, routing_type: RoutingType) -> None:
        """Store and model what the name model auto-created."""
        if created_address is not None:
            self.store.put_address(created_address, (routing_type.value,))
        if created_queue is not None and created_queue not in self.queues:
            address, _, name = created_queue.partition("::")
            queue_type = self._routing_type_of(address, name, routing_type)
            self.queues[created_queue] = Queue(created_queue, address, name, queue_type)
            self.store.put_binding(created_queue, address, name, queue_type)

    def _routing_type_of(self, address: str, name: str, fallback: RoutingType) -> str:
        for queue in self.names.snapshot().queues.values():
            if queue.address == address and queue.name == name:
                return queue.routing_type.value
        return fallback.value

    def create_address(self, name: str, routing_types: frozenset[RoutingType]) -> Outcome:
        """Management: make an address (ADDR-ADDRESS-CREATE)."""
        outcome = self._decide(CreateAddress(name, routing_types))
        if isinstance(outcome, AddressCreated):
            self.store.put_address(name, tuple(sorted(t.value for t in routing_types)))
            self.store.commit()
        return outcome

    def create_queue(self, address: str, name: str, routing_type: RoutingType) -> Outcome:
        """Management: make a queue on an address (ADDR-QUEUE-CREATE)."""
        outcome = self._decide(CreateQueue(address, name, routing_type))
        if isinstance(outcome, QueueCreated):
            fqqn = f"{outcome.address}::{outcome.queue}"
            self.queues[fqqn] = Queue(fqqn, outcome.address, outcome.queue, routing_type.value)
            self.store.put_binding(fqqn, outcome.address, outcome.queue, routing_type.value)
            self.store.commit()
        return outcome

    def delete_queue(self, name: str) -> Outcome:
        """Management: delete a queue with its messages; its subscriptions are left with nothing to take.

        The address's last queue going forgets its ID cache (DUP-FORGET-ON-LAST-QUEUE).
        """
        outcome = self._decide(DeleteQueue(name))
        if isinstance(outcome, QueueDeleted):
            self._drop_queue(f"{outcome.address}::{outcome.queue}")
            if not any(q.address == outcome.address for q in self.queues.values()):
                if self.ids.forget_address(outcome.address):
                    self.recorder.note("DUP-FORGET-ON-LAST-QUEUE", f"address {outcome.address}: ID cache forgotten")
            if outcome.address not in self.names.snapshot().addresses:
                self.store.delete_address(outcome.address)
            self.store.commit()
        return outcome

    def delete_address(self, name: str, force: bool) -> Outcome:
        """Management: delete an address (with its queues when ``force``)."""
        outcome = self._decide(DeleteAddress(name, force))
        if isinstance(outcome, AddressDeleted):
            for fqqn in outcome.removed_queues:
                self._drop_queue(fqqn)
            self.ids.forget_address(outcome.address)
            self.store.delete_address(outcome.address)
            self.store.commit()
        return outcome

    def _drop_queue(self, fqqn: str) -> None:
        queue = self.queues.pop(fqqn, None)
        if queue is None:
            return
        for entry in list(queue.entries()):
            self._release(entry)
        for subscription in queue.subscriptions:
            subscription.queue = None
            subscription.held.clear()
        self.store.delete_binding(fqqn)
        self.dirty.discard(queue)

    # -- sending --------------------------------------------------------------------------

    def send(self, destination: str, routing_type: RoutingType | None, headers: tuple[tuple[str, str], ...],
             body: bytes, durable: bool, tx: Transaction | None = None) -> SendResult:
        """Route a message; outside a transaction it lands at once, inside one at the commit."""
        outcome = self._decide(Send(destination, routing_type))
        if isinstance(outcome, Rejected):
            return SendResult(refused=outcome)
        if not isinstance(outcome, Routed):  # pragma: no cover - a send is routed or rejected
            raise TypeError(f"send decided {outcome!r}")
        self._made(outcome.created_address, outcome.created_queue, routing_type or RoutingType.MULTICAST)
        address = outcome.address
        value = next((v for k, v in headers if k == DUPLICATE_ID_HEADER), None)
        key = compute_key(value) if value is not None else None
        if key is not None and self.ids.is_duplicate(address, key):
            if tx is None:
                self.recorder.note("DUP-NONTX-DUPLICATE", f"send to {address}: duplicate ID {value!r} dropped")
                self.store.commit()
                return SendResult(duplicate=True)
            if tx.doom is None:
                tx.doom = f"duplicate ID {value!r} on address {address}"
            self.recorder.note("DUP-TX-DUPLICATE", f"transaction {tx.name}: duplicate ID {value!r}, rollback-only")
            self.store.commit()
            return SendResult(duplicate=True)
        targets = outcome.copies + self._anycast_turn(address, outcome.anycast_candidates)
        message = Message(self.next_message, address, headers, body, durable)
        self.next_message += 1
        self.store.set_next_message(self.next_message)
        if tx is not None:
            tx.sends.append(PendingSend(message, targets, key))
            self.recorder.note("LB-TX-SEND", f"transaction {tx.name}: message {message.number} routed to "
                               f"{list(targets)}, lands at the commit")
            self.store.commit()
            return SendResult(queues=targets)
        self._land(message, targets)
        if key is not None:
            self.ids.record(address, key)
            self.recorder.note("DUP-NONTX-VISIBILITY", f"send to {address}: ID {value!r} recorded")
        self.store.commit()
        return SendResult(queues=targets)

    def _anycast_turn(self, address: str, candidates: tuple[str, ...]) -> tuple[str, ...]:
        """One of ``candidates``, in turns per address (LB-ROUND-ROBIN)."""
        if not candidates:
            return ()
        turn = self.turns.get(address, 0) % len(candidates)
        self.turns[address] = turn + 1
        return (candidates[turn],)

    def _land(self, message: Message, targets: tuple[str, ...]) -> None:
        """Put ``message`` into each live target queue, durably when it is persistent."""
        landed = [self.queues[fqqn] for fqqn in targets if fqqn in self.queues]
        if message.durable and landed:
            self.store.put_body(message.number, message.address, message.headers, message.body)
        for queue in landed:
            seq = self.next_seq
            self.next_seq += 1
            self._enqueue(queue, message, seq)
            if message.durable:
                self.store.add_message(queue.fqqn, message.number, seq)

    def _enqueue(self, queue: Queue, message: Message, seq: int) -> None:
        message.refs += 1
        queue.waiting.append(Entry(message, queue, seq))
        self.dirty.add(queue)

    def _release(self, entry: Entry) -> None:
        """An entry leaves its queue for good (acknowledged, or its queue deleted)."""
        message = entry.message
        message.refs -= 1
        if message.durable:
            self.store.remove_message(entry.queue.fqqn, message.number)
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
        self._made(outcome.created_address, outcome.created_queue, routing_type or RoutingType.MULTICAST)
        self.store.commit()
        queue = self.queues[f"{outcome.address}::{outcome.queue}"]
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
            queue.give_back(held)
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
        entry.queue.give_back([entry])
        self.dirty.add(entry.queue)
        return True

    # -- transactions ---------------------------------------------------------------------

    def commit(self, tx: Transaction) -> str | None:
        """Commit: sends land in order and their IDs enter the caches; acknowledgements take effect.

        A rollback-only transaction rolls back instead and the reason is
        returned (DUP-COMMIT-ROLLBACK-ONLY).
        """
        if tx.doom is not None:
            self.abort(tx)
            self.recorder.note("DUP-COMMIT-ROLLBACK-ONLY", f"transaction {tx.name}: commit failed, rolled back")
            return tx.doom
        for pending in tx.sends:
            self._land(pending.message, pending.targets)
            if pending.key is not None:
                self.ids.record(pending.message.address, pending.key)
        for _, entry in tx.acks:
            self._release(entry)
        self.store.commit()
        self.recorder.note("DUP-TX-HELD", f"transaction {tx.name}: {len(tx.sends)} sends landed, "
                           f"{sum(p.key is not None for p in tx.sends)} IDs recorded")
        return None

    def abort(self, tx: Transaction) -> None:
        """Roll back: the sends are forgotten, acknowledged messages go back to their queues (LB-TX-ROLLBACK)."""
        for _, entry in tx.acks:
            if entry.queue.fqqn in self.queues:
                entry.queue.give_back([entry])
                self.dirty.add(entry.queue)
        tx.sends.clear()
        tx.acks.clear()
