"""Where each message went in one step, told as the load-balancing spec's events.

Introduction
------------
The spec narrates a step as events (:mod:`brokerspec.spec.balancing.outcomes`):
a message *delivered* to a queue and a consumer (or waiting there), a
waiting message *redistributed* to another queue as a copy under a new ID,
a waiting message *dropped* with its queue. A real cluster narrates nothing;
the adapter sees three things and :func:`reconcile` turns them into events:

* the *instances* waiting before the step: one per (message, queue), in
  each queue's order, each with the spec ID the adapter gave it;
* the *landings* of the step's send: the queues the broker routed the new
  message to, read from the probe's route records on the sending node and
  on the nodes its store-and-forward queues lead to;
* the *places* every message is in after the step: taken by a consumer
  (the driver's deliveries, the consumer naming its queue) or waiting in a
  queue (the probe's browse of each queue).

Each instance is matched to a place: its own queue if the message is there,
else a place of the same message, one in the same routing-name group first
(redistribution moves a message within the group named like its queue, or
for an FQQN message the address's, ``BindingsImpl.redistribute``). An instance whose place is another queue
was redistributed; one with no place went with its deleted queue.

Messages a consumer holds unacknowledged (LB-ACK) are in no place the
adapter sees (the broker counts them as delivering, and a browse does not
show them), so they are no instance either: :attr:`Reconciled.taken` tells
the adapter what each consumer took, and a close that gives them back makes
them waiting instances of their queue again, matched like any other.

The events come in the spec's order: the step's own events first (the
send's landings by node and queue; a consumer's attach or resume offering
its queue's waiting messages in order; a delete dropping them in order),
then every move, by the originating queue's creation order and the
message's place in it, each a :class:`Redistributed` followed by the
copy's :class:`Delivered`. Copies take the next IDs in that order: the
2.29.0 rule (ARTEMIS-4207), where a failed attempt uses up no ID; before,
it did, which no client can see.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from brokerspec.spec.balancing import Delivered, Dropped, Event, Redistributed

from .outcomes import UnexpectedRefusal

QueueKey = tuple[str, str]
"""(node, spec queue name)."""


@dataclass(frozen=True)
class Instance:
    """Message ``id`` (the spec's ID) waiting, or just landed, in queue ``key``; ``tag`` is the broker's name for it."""

    id: int
    tag: str
    key: QueueKey


@dataclass(frozen=True)
class Place:
    """Where a message is after the step: taken by ``consumer`` from queue ``key``, or (None) waiting in it."""

    tag: str
    key: QueueKey
    consumer: str | None


@dataclass(frozen=True)
class Primary:
    """What the step itself does: "send" (its landings), "offer" (queue ``key`` offers its waiting messages
    to a new or resumed consumer), "drop" (queue ``key`` was deleted), or "" (nothing of its own)."""

    kind: str = ""
    key: QueueKey | None = None


@dataclass(frozen=True)
class Reconciled:
    """The step's events, the instances waiting after it (in each queue's order) and the next free ID.

    ``taken``: each instance a consumer took in the step, as it is now (a copy under its new ID, in the queue it
    was moved to), with the consumer's name, in the order of the events; what a consumer that acknowledges later
    takes it holds, and the adapter keeps it out of ``waiting`` and out of every later step's matching until it
    is acknowledged, or comes back when its consumer closes (LB-ACK, LB-CLOSE-RETURNS).
    """

    events: tuple[Event, ...]
    waiting: dict[QueueKey, tuple[Instance, ...]]
    next_id: int
    taken: tuple[tuple[str, Instance], ...] = ()


def first_landings(node: str, tag: str, records: Mapping[str, Sequence[Mapping[str, Any]]],
                   peers: Mapping[str, str], prefix: str) -> list[QueueKey]:
    """The queues the send of ``tag`` on ``node`` reached first, from the probe's route records.

    The sending node's first route record names its local queues and the
    store-and-forward queues (``peers``: name -> node) it sent the message
    across; each such node's first route record of the message names the
    queues it reached there. Names are the broker's, ``prefix`` and all.
    """
    return landings_of(node, tag, routed_queues(node, tag, records), records, peers, prefix)


def routed_queues(node: str, tag: str, records: Mapping[str, Sequence[Mapping[str, Any]]]) -> tuple[str, ...]:
    """The queues (broker names, store-and-forward ones included) the first route record of ``tag`` on ``node``
    names: where the send was routed, in a transaction too (``PostOfficeImpl.processRoute`` adds the references to
    it, and the probe's ``afterMessageRoute`` sees them then)."""
    routes = [r for r in records[node] if r.get("tag") == tag and r.get("event") == "route"]
    return tuple(dict.fromkeys(routes[0]["queues"] if routes else ()))


def landings_of(node: str, tag: str, queues: Sequence[str], records: Mapping[str, Sequence[Mapping[str, Any]]],
                peers: Mapping[str, str], prefix: str) -> list[QueueKey]:
    """The queues ``tag``, routed on ``node`` to ``queues`` (:func:`routed_queues`), reached: the local ones, and on
    each node a store-and-forward queue leads to, the queues its first route record there names (for a transacted
    send, the record its commit's crossing made)."""
    found: list[QueueKey] = []
    for queue in queues:
        if queue in peers:
            there = [r for r in records[peers[queue]] if r.get("tag") == tag and r.get("event") == "route"]
            found.extend((peers[queue], q[len(prefix):]) for q in (there[0]["queues"] if there else ()))
        elif queue.startswith(prefix):
            found.append((node, queue[len(prefix):]))
    return found


def match(instances: Sequence[Instance], places: Sequence[Place],
          group: Callable[[QueueKey], object]) -> dict[Instance, Place | None]:
    """Each instance's place: its own queue first, else a free place of its tag in the same group."""
    free = list(places)
    found: dict[Instance, Place | None] = {}
    for instance in instances:
        own = next((p for p in free if p.tag == instance.tag and p.key == instance.key), None)
        if own is not None:
            free.remove(own)
            found[instance] = own
    for instance in instances:
        if instance in found:
            continue
        mine = [p for p in free if p.tag == instance.tag]
        # a move stays in a group named like the queue, or the address's (ARTEMIS-3918): prefer the same group
        moved = next((p for p in mine if group(p.key) == group(instance.key)), mine[0] if mine else None)
        if moved is not None:
            free.remove(moved)
        found[instance] = moved
    if free:
        raise UnexpectedRefusal("messages turned up where none was routed or waiting: "
                                + ", ".join(f"{p.tag} in {p.key[1]} on {p.key[0]}"
                                            + ("" if p.consumer is None else f", taken by {p.consumer}") for p in free))
    return found


def reconcile(waiting: Mapping[QueueKey, Sequence[Instance]], landings: Sequence[Instance],
              places: Sequence[Place], waiting_order: Mapping[QueueKey, Sequence[str]], primary: Primary,
              group: Callable[[QueueKey], object], serial: Callable[[QueueKey], int], next_id: int) -> Reconciled:
    """The events of one step (see the module's introduction).

    ``waiting_order`` is each queue's waiting tags in the broker's order
    after the step; ``group`` gives a queue's (address, routing name) and
    ``serial`` its creation order.
    """
    before = [i for key in sorted(waiting, key=serial) for i in waiting[key]]
    found = match([*before, *landings], places, group)
    events: list[Event] = []

    def here(instance: Instance) -> str | None:
        place = found[instance]
        return place.consumer if place is not None and place.key == instance.key else None

    if primary.kind == "send":  # a commit's sends in order, each send's landings by node and queue
        for instance in sorted(landings, key=lambda i: (i.id, i.key)):
            events.append(Delivered(instance.id, instance.key[0], instance.key[1], here(instance)))
    for instance in before:
        place = found[instance]
        offered = primary.kind == "offer" and instance.key == primary.key
        if place is None:
            if primary.kind == "drop" and instance.key == primary.key:
                events.append(Dropped(instance.id, instance.key[0], instance.key[1]))
                continue
            raise UnexpectedRefusal(f"message {instance.tag} left {instance.key[1]} on {instance.key[0]} "
                                    "and is nowhere")
        if offered or (place.key == instance.key and place.consumer is not None):
            events.append(Delivered(instance.id, instance.key[0], instance.key[1], here(instance)))
    for instance in landings:
        if found[instance] is None:
            raise UnexpectedRefusal(f"message {instance.tag} landed in {instance.key[1]} on {instance.key[0]} "
                                    "and is nowhere")
    order = {i: (serial(i.key), n) for n, i in enumerate([*before, *landings])}
    renamed: dict[tuple[str, QueueKey], int] = {}
    settled = {i: p for i, p in found.items() if p is not None}
    for instance in sorted((i for i, p in settled.items() if p.key != i.key), key=lambda i: order[i]):
        place = settled[instance]
        copy, next_id = next_id, next_id + 1
        events.append(Redistributed(instance.id, instance.key[0], instance.key[1], copy, place.key[0], place.key[1]))
        events.append(Delivered(copy, place.key[0], place.key[1], place.consumer))
        renamed[(place.tag, place.key)] = copy
    ids = {(i.tag, i.key): i.id for i, p in settled.items() if p.key == i.key}
    ids.update(renamed)
    after: dict[QueueKey, tuple[Instance, ...]] = {}
    for key, tags in waiting_order.items():
        if tags:
            after[key] = tuple(Instance(ids[(tag, key)], tag, key) for tag in tags)
    tag_of = {i.id: i.tag for i in [*before, *landings]} | {copy: tag for (tag, _), copy in renamed.items()}
    taken = tuple((e.consumer, Instance(e.message, tag_of[e.message], (e.node, e.queue))) for e in events
                  if isinstance(e, Delivered) and e.consumer is not None)
    return Reconciled(tuple(events), after, next_id, taken)
