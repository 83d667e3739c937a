"""What a close, a rollback or a failed acknowledgement gives back to a queue, as the spec tells it.

Introduction
------------
Artemis gives messages back to their queue in three ways, all through
``QueueImpl.postRollback`` after a transaction's ``RefsOperation.afterRollback``
(or, for a close, ``ServerConsumerImpl.cancelRefs``): a consumer that closes
holding messages (LB-CLOSE-RETURNS), a transacted session that rolls back
(LB-TX-ROLLBACK), and an acknowledgement of a message the consumer does not
hold, whose own transaction rolls back what it acknowledged on the way
(``ServerConsumerImpl.acknowledge``; LB-ACK). The functions here say how such a
step starts: its :class:`Returned` and :class:`Dropped` events, the queue's
waiting instances for :func:`~.placement.reconcile` to match, and the step's
primary (the queue offers them again, or drops them). They change nothing on
the broker; :mod:`.consumers` and :mod:`.sessions` call them.
"""

from __future__ import annotations

from collections.abc import Sequence

from brokerspec.spec import BalancingOptions
from brokerspec.spec.balancing import MAX_DELIVERY_ATTEMPTS, Delivered, Dropped, Event, Returned
from brokerspec.spec.profiles import ReturnOrder

from .placement import Instance, Primary, QueueKey

Start = tuple[tuple[Event, ...], tuple[Instance, ...], Primary]
"""The events before reconciling, the queue's waiting instances, and the step's primary."""


def ordered(back: Sequence[Instance], waiting: Sequence[Instance], order: ReturnOrder) -> tuple[Instance, ...]:
    """A queue's waiting instances once ``back`` are in it again: before the others (HEAD, ``QueueImpl.addHead``) or
    among them by message ID, the order in which they reached the queue (ARRIVAL, ``addSorted``)."""
    if order is ReturnOrder.HEAD:
        return (*back, *waiting)
    return tuple(sorted((*back, *waiting), key=lambda instance: instance.id))


def give_back(key: QueueKey, acked: Sequence[Instance], held: Sequence[Instance], waiting: Sequence[Instance],
              order: ReturnOrder, purge: bool, spent: dict[int, int]) -> Start:
    """``RefsOperation.afterRollback`` giving ``acked`` and then ``held`` back to queue ``key``.

    Each acknowledged instance spends a delivery (``spent``, by spec ID, is
    updated); one that reaches :data:`MAX_DELIVERY_ATTEMPTS` is dropped first
    (``QueueImpl.checkRedelivery`` without a dead-letter address). The rest are
    Returned, then dropped when the queue purges and has no consumer
    (``purge``, ``QueueImpl.postRollback``), else put among ``waiting`` in
    ``order`` and offered again. The events before reconciling, the queue's
    waiting instances, and the step's primary.
    """
    events: list[Event] = []
    back: list[Instance] = []
    for instance in acked:
        spent[instance.id] = spent.get(instance.id, 0) + 1
    for instance in (*acked, *held):
        if spent.get(instance.id, 0) >= MAX_DELIVERY_ATTEMPTS:
            events.append(Dropped(instance.id, *key))
        else:
            back.append(instance)
    if not back:
        return tuple(events), tuple(waiting), Primary()
    events.extend(Returned(instance.id, *key) for instance in back)
    if purge:
        events.extend(Dropped(instance.id, *key) for instance in back)
        return tuple(events), tuple(waiting), Primary()
    return tuple(events), ordered(back, waiting, order), Primary("offer", key)


def told(waiting: Sequence[Instance], primary: Primary) -> tuple[tuple[Event, ...], tuple[Instance, ...]]:
    """A step's ``primary`` on a queue without consumers, as events: its offers find no taker, its drop drops all;
    the queue's waiting instances after."""
    if primary.kind == "offer":
        return tuple(Delivered(i.id, i.key[0], i.key[1], None) for i in waiting), tuple(waiting)
    if primary.kind == "drop":
        return tuple(Dropped(i.id, i.key[0], i.key[1]) for i in waiting), ()
    return (), tuple(waiting)


def close_return(held: Sequence[Instance], waiting: Sequence[Instance], options: BalancingOptions,
                 purge: bool) -> Start:
    """How a close that gives back ``held`` starts (LB-CLOSE-RETURNS, ``ServerConsumerImpl.close`` and
    ``cancelRefs``). ``purge``: the queue purges on no consumers and the closing consumer was its last.

    HEAD (2.11) removes the consumer first: ``QueueManagerImpl.doIt`` purges
    what waits, then the held messages come back (``QueueImpl.postRollback``)
    to a queue without consumers, which purges them too (``purgeAfterRollback``;
    found against Artemis 2.11.0). ARRIVAL (2.31.0 on, ARTEMIS-4410) returns
    them first (``cancelRefs`` before ``removeItself``): offered to no consumer,
    they are purged with the rest.
    """
    key = held[0].key
    head = options.close_return_order is ReturnOrder.HEAD
    if purge and head:
        dropped = tuple(Dropped(i.id, key[0], key[1]) for i in waiting)
        returned = tuple(Returned(i.id, key[0], key[1]) for i in held)
        return (*dropped, *returned), tuple(held), Primary("drop", key)
    first: list[Event] = [Returned(i.id, key[0], key[1]) for i in held]
    offered = ordered(held, waiting, options.close_return_order)
    if purge:
        first.extend(Delivered(i.id, key[0], key[1], None) for i in offered)
        return tuple(first), offered, Primary("drop", key)
    return tuple(first), offered, Primary("offer", key)


def acknowledged(held: Sequence[Instance], message: int | None) -> tuple[Instance, ...] | None:
    """What stays held after acknowledging ``message`` (None: all); None when the consumer does not hold it."""
    ids = [instance.id for instance in held]
    if message is None:
        return ()
    if message not in ids:
        return None
    return tuple(held[ids.index(message) + 1:])
