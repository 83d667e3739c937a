"""The model's name side: every name decision through the fast addressing broker, and the administration.

Introduction
------------
:class:`NameAdmin` is the part of :class:`~.model.Model` that asks the name
model (:class:`brokerspec.impl.addressing.FastBroker`, the ADDR-* rules of
``docs/addressing.md``) and keeps the broker's own queues and store in step
with what it decided: an address or queue created by management or
auto-created by a send or a subscription, a queue deleted with its messages,
an address deleted with its queues. Every decision goes through
:meth:`NameAdmin._decide`, which hands it to the :class:`~.record.Recorder`
(the ``--trace`` and ``--explain`` views). The address's last queue going
forgets its ID cache and the IDs open transactions hold for it
(DUP-FORGET-ON-LAST-QUEUE, DUP-FORGET-IN-FLIGHT).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brokerspec.impl.addressing import FastBroker
from brokerspec.spec import Outcome, Profile
from brokerspec.spec.addressing import (
    AddressCreated, AddressDeleted, Consume, CreateAddress, CreateQueue, DeleteAddress, DeleteQueue, Lookup,
    QueryAddress, QueueCreated, QueueDeleted, RoutingType, Send, SetAddressSettings, SetPrefix,
)

from .queues import Queue, queue_key

from .transactions import ModelParts

if TYPE_CHECKING:
    from .model import SendResult


class NameAdmin(ModelParts):
    """Names, queues and administration of a :class:`~.model.Model` (a mixin: the model holds the state)."""

    profile: Profile
    names: FastBroker
    tagged: dict[str, SendResult]

    def _decide(self, command: CreateAddress | CreateQueue | DeleteAddress | DeleteQueue | Send | Consume | Lookup
                | QueryAddress | SetPrefix | SetAddressSettings) -> Outcome:
        outcome = self.names.execute(command)
        if self.recorder.active:
            self.recorder.decision(command, outcome)
        return outcome

    def _made(self, created_address: str | None, created_queue: tuple[str, str] | None,
              routing_type: RoutingType) -> None:
        """Store and model what the name model auto-created: an address, a queue (address, name)."""
        if created_address is not None:
            self.store.put_address(created_address, (routing_type.value,))
        if created_queue is not None and queue_key(*created_queue) not in self.queues:
            address, name = created_queue
            queue = Queue(f"{address}::{name}", address, name, self._routing_type_of(address, name, routing_type))
            self.queues[queue.key] = queue
            self.store.put_binding(queue.key, address, name, queue.routing_type)

    def _routing_type_of(self, address: str, name: str, fallback: RoutingType) -> str:
        for queue in self.names.snapshot().queues.values():
            if queue.address == address and queue.name == name:
                return queue.routing_type.value
        return fallback.value

    def lookup(self, name: str) -> Outcome:
        """What a client name resolves to (ADDR-LOOKUP-*): a queue, none, or several."""
        return self._decide(Lookup(name))

    def query_address(self, name: str) -> Outcome:
        """Whether an address exists, its routing types and queues (ADDR-QUERY-ADDRESS)."""
        return self._decide(QueryAddress(name))

    def configure(self, command: SetPrefix | SetAddressSettings) -> Outcome:
        """An acceptor prefix or an address setting (ADDR-CONFIG-PREFIX, ADDR-CONFIG-SETTINGS), until the next
        restart: like Artemis's ``broker.xml`` settings, they are configuration, not stored state."""
        return self._decide(command)

    def remember(self, tag: str, result: SendResult) -> None:
        """Keep what a tagged send became, for ``getRouting``."""
        tagged = self.tagged
        tagged[tag] = result
        if len(tagged) > TAGGED_SENDS:
            del tagged[next(iter(tagged))]

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
            queue = Queue(f"{outcome.address}::{outcome.queue}", outcome.address, outcome.queue, routing_type.value)
            self.queues[queue.key] = queue
            self.store.put_binding(queue.key, outcome.address, outcome.queue, routing_type.value)
            self.store.commit()
        return outcome

    def delete_queue(self, name: str) -> Outcome:
        """Management: delete a queue with its messages; its subscriptions are left with nothing to take.

        The address's last queue going forgets its ID cache (DUP-FORGET-ON-LAST-QUEUE).
        """
        outcome = self._decide(DeleteQueue(name))
        if isinstance(outcome, QueueDeleted):
            self._drop_queue(queue_key(outcome.address, outcome.queue))
            if not any(q.address == outcome.address for q in self.queues.values()):
                self._forget_ids(outcome.address)
            if outcome.address not in self.names.snapshot().addresses:
                self.store.delete_address(outcome.address)
            self.store.commit()
        return outcome

    def delete_address(self, name: str, force: bool) -> Outcome:
        """Management: delete an address (with its queues when ``force``)."""
        outcome = self._decide(DeleteAddress(name, force))
        if isinstance(outcome, AddressDeleted):
            for fqqn in outcome.removed_queues:
                self._drop_queue(queue_key(outcome.address, fqqn[len(outcome.address) + 2:]))
            self._forget_ids(outcome.address)
            self.store.delete_address(outcome.address)
            self.store.commit()
        return outcome

    def _forget_ids(self, address: str) -> None:
        """The address has no queue left: its cache goes, and so do the IDs open transactions hold for it,
        which would otherwise enter a cache made later (DUP-FORGET-ON-LAST-QUEUE, DUP-FORGET-IN-FLIGHT)."""
        forgot = self.ids.forget_address(address)
        for tx in self.open_transactions:
            for pending in tx.sends:
                if pending.message.address == address and pending.key is not None:
                    pending.key = None
                    forgot = True
        if forgot:
            self.recorder.note("DUP-FORGET-ON-LAST-QUEUE", f"address {address}: ID cache forgotten")

    def _drop_queue(self, key: str) -> None:
        queue = self.queues.pop(key, None)
        if queue is None:
            return
        for entry in list(queue.entries()):
            self._release(entry)
        for subscription in queue.subscriptions:
            subscription.queue = None
            subscription.held.clear()
        self.store.delete_binding(key)
        self.dirty.discard(queue)


TAGGED_SENDS = 10_000
"""How many tagged sends' results the model remembers (the oldest go first)."""
