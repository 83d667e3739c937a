"""Message routing: where a message goes from the broker that holds it.

Introduction
------------
A broker treats a message that arrives over a bridge exactly like one a
client sent: it dispatches it to its own registrations for the
destination (ActiveMQ 5.17.2: ``DemandForwardingBridgeSupport.serviceLocalCommand``
sends the copy on as a new message). A registration is *eligible*
when it is a client consumer, or a demand subscription whose bridge's
``NetworkBridgeFilter`` lets the message through:

* the far broker is not on the message's brokerPath (no loops), and
* messageTTL is -1 or the path is shorter than messageTTL;

or, on a broker whose queue policy has ``replayWhenNoConsumers`` and that
has no client consumer of the queue, a demand subscription whose far
broker *is* on the path (the message goes back; messageTTL is not checked
on this branch, ``ConditionalNetworkBridgeFilter``).

A **queue** message goes to one eligible registration: the highest
priority wins; among equals, the first in the broker's dispatch list, which
then moves to the end of the list (``Queue.doActualDispatch`` rotates,
giving round robin). Forwarding appends the broker to the brokerPath; the
next broker chooses again. With no eligible registration the message
waits on the broker. A **topic** message is copied to every eligible
registration; a broker with none drops its copy. Consumers are never
full (no prefetch limit is modelled), so "first eligible" never skips one
for being busy.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..frozen import FrozenMap, replace
from .model import MAX_HOPS, Bridge, BridgeConfig, Message, Registration, TopologyState, get_bridge_map, is_topic
from .outcomes import Delivered, Dropped, Event, Waiting


def is_within_message_ttl(config: BridgeConfig, path: tuple[str, ...]) -> bool:
    """Whether a message with brokerPath ``path`` may cross one more bridge (``NetworkBridgeFilter``).

    pre: config.message_ttl == -1 or config.message_ttl >= 1
    post: __return__ == (config.message_ttl == -1 or len(path) < config.message_ttl)
    """
    return config.message_ttl == -1 or len(path) < config.message_ttl


def is_forwardable(config: BridgeConfig, remote: str, path: tuple[str, ...], replay: bool) -> bool:
    """Whether a message with brokerPath ``path`` may go over a bridge to ``remote``.

    ``replay`` is True when the holding broker replays to brokers on the path
    (its policy says so and it has no client consumer of the queue).

    post: (not __return__) or len(path) < MAX_HOPS
    post: (not __return__) or replay or remote not in path
    """
    if len(path) >= MAX_HOPS:
        return False
    if remote in path:
        return replay
    return is_within_message_ttl(config, path)


def get_registrations(state: TopologyState, broker: str, destination: str) -> tuple[Registration, ...]:
    """The registrations ``broker`` holds for ``destination``, sorted by key."""
    return tuple([r for r in state.demand if r.broker == broker and r.destination == destination])


def get_eligible(state: TopologyState, broker: str, message: Message,
                 bridges: Mapping[tuple[str, str], Bridge]) -> tuple[Registration, ...]:
    """The registrations on ``broker`` that may take ``message`` now, sorted by key."""
    registrations = get_registrations(state, broker, message.destination)
    has_client = any(r.via is None for r in registrations)
    replay = broker in state.replay and not is_topic(message.destination) and not has_client
    eligible = []
    for reg in registrations:
        if reg.via is None:
            eligible.append(reg)
        elif is_forwardable(bridges[(broker, reg.via)].config, reg.via, message.path, replay):
            eligible.append(reg)
    return tuple(eligible)


def choose(dispatch: tuple[str, ...], eligible: tuple[Registration, ...]) -> Registration:
    """The registration a queue message goes to: the highest priority, then the first in the dispatch list.

    pre: len(eligible) > 0
    pre: all(r.key in dispatch for r in eligible)
    post: __return__ in eligible
    post: all(r.priority <= __return__.priority for r in eligible)
    """
    top = max(r.priority for r in eligible)
    best = {r.key: r for r in eligible if r.priority == top}
    for key in dispatch:
        if key in best:
            return best[key]
    raise ValueError("every eligible registration must be on the dispatch list")


def rotate(dispatch: tuple[str, ...], chosen: str) -> tuple[str, ...]:
    """The dispatch list after ``chosen`` took a message: it moves to the end.

    pre: chosen in dispatch
    pre: len(set(dispatch)) == len(dispatch)
    post: sorted(__return__) == sorted(dispatch)
    post: __return__[-1] == chosen
    """
    return tuple(k for k in dispatch if k != chosen) + (chosen,)


def route(state: TopologyState, broker: str, message: Message) -> tuple[TopologyState, tuple[Event, ...]]:
    """Dispatch ``message`` on ``broker`` and follow it (and its copies) to where each ends."""
    bridges = get_bridge_map(state)
    return _route(state, broker, message, bridges)


def _route(state: TopologyState, broker: str, message: Message,
           bridges: Mapping[tuple[str, str], Bridge]) -> tuple[TopologyState, tuple[Event, ...]]:
    eligible = get_eligible(state, broker, message, bridges)
    if is_topic(message.destination):
        if not eligible:
            return state, (Dropped(message.id, broker, message.path),)
        events: tuple[Event, ...] = ()
        for reg in eligible:
            state, more = _deliver_or_forward(state, broker, message, reg, bridges)
            events += more
        return state, events
    if not eligible:
        held = state.waiting.get(broker, ()) + (message,)
        return _with_waiting(state, broker, held), (Waiting(message.id, broker, message.path),)
    dispatch_key = (broker, message.destination)
    chosen = choose(state.dispatch[dispatch_key], eligible)
    state = _with_dispatch(state, dispatch_key, rotate(state.dispatch[dispatch_key], chosen.key))
    return _deliver_or_forward(state, broker, message, chosen, bridges)


def _deliver_or_forward(state: TopologyState, broker: str, message: Message, reg: Registration,
                        bridges: Mapping[tuple[str, str], Bridge]) -> tuple[TopologyState, tuple[Event, ...]]:
    if reg.via is None:
        return state, (Delivered(message.id, reg.key, broker, message.path),)
    forwarded = Message(message.id, message.destination, message.path + (broker,))
    return _route(state, reg.via, forwarded, bridges)


def settle(state: TopologyState) -> tuple[TopologyState, tuple[Event, ...]]:
    """Move every waiting message that may now move; repeat until none can.

    Brokers are visited by name, each broker's messages oldest first. A
    message that moves is routed afresh from its broker (its events follow);
    one that still cannot move stays where it is, in its place.
    """
    events: tuple[Event, ...] = ()
    moved = bool(state.waiting)
    while moved:
        moved = False
        bridges = get_bridge_map(state)
        for broker in sorted(state.waiting):
            for message in state.waiting.get(broker, ()):
                if not get_eligible(state, broker, message, bridges):
                    continue
                rest = tuple(m for m in state.waiting[broker] if m is not message)
                state = _with_waiting(state, broker, rest)
                state, more = _route(state, broker, message, bridges)
                events += more
                moved = True
                break
            if moved:
                break
    return state, events


def _with_waiting(state: TopologyState, broker: str, held: tuple[Message, ...]) -> TopologyState:
    waiting = state.waiting.set(broker, held) if held else state.waiting.remove(broker)
    return replace(state, waiting=waiting)


def _with_dispatch(state: TopologyState, key: tuple[str, str], order: tuple[str, ...]) -> TopologyState:
    return replace(state, dispatch=state.dispatch.set(key, order))


def update_dispatch(old: FrozenMap[tuple[str, str], tuple[str, ...]],
                    demand: tuple[Registration, ...]) -> FrozenMap[tuple[str, str], tuple[str, ...]]:
    """The dispatch lists for new demand: survivors keep their order, newcomers join at the end by key.

    Only queues have dispatch lists (topics copy to all).
    """
    present: dict[tuple[str, str], list[str]] = {}
    for reg in demand:
        if not is_topic(reg.destination):
            present.setdefault((reg.broker, reg.destination), []).append(reg.key)
    lists: dict[tuple[str, str], tuple[str, ...]] = {}
    for where in sorted(present):
        alive = set(present[where])
        listed = old.get(where, ())
        if len(listed) == len(alive) and alive == set(listed):
            lists[where] = listed  # the same registrations: the list stays as it is
        else:
            kept = tuple(k for k in listed if k in alive)
            lists[where] = kept + tuple(sorted(alive.difference(kept)))
    return FrozenMap(lists)
