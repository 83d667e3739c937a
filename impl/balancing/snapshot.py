"""The fast balancing broker as a spec state.

Introduction
------------
:func:`snapshot` reads the broker's records (:mod:`.records`) and writes the
spec's :class:`~brokerspec.spec.balancing.BalancingState`; the sessions, the
bridge caches and the last crossings come written by their own parts
(:mod:`.sessions`, :mod:`.bridges`).
A lockstep check does this after every step and compares the result with the
spec's state, so it is built to be cheap twice over:

* values are made with :class:`~brokerspec.spec.frozen.Maker` (fields filled
  in directly) and an empty list is the shared empty tuple;
* given ``seen`` (the state it is about to be compared with), every part equal
  to ``seen``'s part *is* that part (:meth:`~brokerspec.spec.frozen.Maker.like`,
  :func:`~brokerspec.spec.frozen.map_like`): no value is built for it, and the
  comparison finds it by identity. Equality decides each hand-back, field by
  field, so the snapshot equals the one built without ``seen``, whatever
  ``seen`` is: the check's verdict cannot change.

This module reads the broker's private fields; it belongs to the broker.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from brokerspec.spec import BalancingOptions
from brokerspec.spec.balancing import BalancingState, Consumer, Message, QueueState
from brokerspec.spec.frozen import each_like, map_like

from .records import CONSUMER, MESSAGE, QUEUE, STATE, Waiting

if TYPE_CHECKING:
    from .broker import FastBalancingBroker

_NOTHING_SEEN = BalancingState(nodes=(), options=BalancingOptions())
"""What a snapshot without ``seen`` pairs its parts with: empty maps, so every value is built."""


def spec_messages(waiting: Sequence[Waiting], seen: tuple[Message, ...]) -> tuple[Message, ...]:
    """``waiting`` as spec messages; ``seen`` itself when they equal it one by one."""
    return each_like(seen, waiting, lambda old, message: MESSAGE.like(old, *message))


def snapshot(broker: FastBalancingBroker, seen: BalancingState | None = None) -> BalancingState:
    """``broker``'s cluster as a spec state, sharing with ``seen`` each part equal to its own."""
    was = seen if seen is not None else _NOTHING_SEEN
    queues: dict[tuple[str, str], QueueState] = {}
    consumer_positions: dict[tuple[str, str], int] = {}
    for key, queue in broker._queues.items():
        old = was.queues.get(key)
        queues[key] = QUEUE.like(
            old, queue.node, queue.name, queue.address, queue.routing_type, queue.filter, queue.serial,
            tuple([c.name for c in queue.consumers]) if queue.consumers else (),
            spec_messages(queue.pending, old.pending if old is not None else ()),
            queue.redistributor, queue.unmatched, queue.enabled, queue.purge_on_no_consumers,
            queue.configured_filter)
        if queue.consumer_position_kept:
            consumer_positions[key] = queue.consumer_position
    consumers: dict[str, Consumer] = {}
    for name, c in broker._consumers.items():
        before = was.consumers.get(name)
        held, acked = (before.held, before.acked) if before is not None else ((), ())
        consumers[name] = CONSUMER.like(before, name, c.queue.node, c.queue.name, c.filter, c.paused, c.pull,
                                        c.manual_ack, spec_messages(c.held, held), c.transacted,
                                        spec_messages(c.acked, acked))
    positions = {(node, group.address, group.routing_name): group.position
                 for node, groups in broker._groups.items() for by_name in groups.values()
                 for group in by_name.values() if group.kept}
    return STATE.like(
        seen,
        tuple(broker._nodes),
        broker.profile.balancing,
        map_like(was.queues, queues),
        map_like(was.consumers, consumers),
        map_like(was.positions, positions),
        map_like(was.consumer_positions, consumer_positions),
        map_like(was.settings, broker._settings),
        map_like(was.node_settings, broker._node_settings),
        frozenset(broker._down),
        frozenset(broker._typed),
        map_like(was.prefixes, broker._prefixes),
        map_like(was.sessions, broker._session_states()),
        map_like(was.bridge_ids, broker._bridge_id_states()),
        map_like(was.forwarded, broker._forwarded_states()),
        broker._clock,
        broker._next_message,
        broker._next_serial,
    )
