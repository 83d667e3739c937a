"""The cluster bridge's duplicate IDs: every message that crosses to another node is checked in that node's cache.

Introduction
------------
A message reaches a queue on another node over the cluster bridge: when a
send is routed to a remote binding (at the send, or at the commit of a
transacted one) and when a redistributor moves a waiting message's copy. The
bridge sets the duplicate ID ``_AMQ_BRIDGE_DUP`` on what it forwards: the
sending node's ID and the forwarded message's own ID
(``BridgeImpl.beforeForwardingNoCopy``, ``getDuplicateBytes``; cluster
connections use duplicate detection by default). The receiving node checks
it in its cache ``BRIDGE.<address>`` instead of the user's duplicate ID
(``PostOfficeImpl.checkBridgeDuplicateID``): one it holds already is dropped
without a word, a new one is recorded (oldest evicted past
:data:`BRIDGE_ID_CACHE_SIZE`). One message routed to several queues on one
node crosses once. A redistributed copy has an ID of its own, so a message
that goes back and forth between two nodes is a new message on every hop
(``MessageRedistributionTest.testBackAndForth``,
``testBackAndForth2WithDuplicDetection``; ARTEMIS-4312) and never taken for
a duplicate (rule LB-BRIDGE-DUP).

What the cache is for shows when a bridge reconnects: it sends again what
it forwarded but had no confirmation of, and the receiving node drops it.
:class:`~.commands.Resend` is that fault: the bridge from one node to
another sends the last message it forwarded again, which its target already
holds, so nothing arrives twice. A node forgets an address's IDs when the
address loses its last binding, local or remote (``PostOfficeImpl.removeBinding``
-> ``deleteDuplicateCache``), and a queue deleted since takes its share of
the resent message with it.
"""

from __future__ import annotations

from ..frozen import FrozenMap, replace
from .commands import Resend
from .model import Forward, Message, QueueKey
from .outcomes import BalancingOutcome, Done, Refusal, Refused
from .queues import land
from .step import Step

BRIDGE_ID_CACHE_SIZE = 20000
"""``id-cache-size`` of the bridge caches (``ActiveMQDefaultConfiguration.DEFAULT_ID_CACHE_SIZE``)."""


def cross(step: Step, source: str, message: Message, keys: tuple[QueueKey, ...]) -> None:
    """``message`` crosses from ``source`` to the node of ``keys`` (all on one node) and lands in each of them,
    unless that node holds its bridge ID already (LB-BRIDGE-DUP)."""
    target = keys[0][0]
    bridge_id = (source, message.id)
    step.update(forwarded=step.state.forwarded.set((source, target), Forward(bridge_id, message, keys)))
    if not admit(step, target, message.address, bridge_id):
        return
    for key in keys:
        land(step, key, message)


def admit(step: Step, node: str, address: str, bridge_id: tuple[str, int]) -> bool:
    """Check ``bridge_id`` in ``node``'s cache of ``address``: False for a duplicate, else record it."""
    held = step.state.bridge_ids.get((node, address), ())
    if bridge_id in held:
        return False
    kept = (*held, bridge_id)[-BRIDGE_ID_CACHE_SIZE:]
    step.update(bridge_ids=step.state.bridge_ids.set((node, address), kept))
    return True


def land_from(step: Step, node: str, message: Message, keys: list[QueueKey] | tuple[QueueKey, ...],
              routed: bool = True) -> list[QueueKey]:
    """Land ``message``, routed on ``node``, in ``keys`` (sorted): local ones at once, each other node's over the
    bridge, once per node. The keys that took it: a local queue that drops it did not (unless not ``routed``:
    a transaction's message already passed that test), a remote binding always did."""
    accepted: list[QueueKey] = []
    for index, key in enumerate(keys):
        if key[0] == node:
            if land(step, key, message, routed):
                accepted.append(key)
            continue
        accepted.append(key)
        if index == 0 or keys[index - 1][0] != key[0]:
            cross(step, node, message, tuple(k for k in keys if k[0] == key[0]))
    return accepted


def forget_address(step: Step, address: str) -> None:
    """``address`` has no binding left in the cluster: every node drops its bridge IDs of it (as the
    duplicate-detection domain's DUP-FORGET-ON-LAST-QUEUE, ``PostOfficeImpl.removeBinding`` ->
    ``deleteDuplicateCache``)."""
    if any(key[1] == address for key in step.state.bridge_ids):
        step.update(bridge_ids=FrozenMap((k, v) for k, v in step.state.bridge_ids.items() if k[1] != address))


def drop_queue(step: Step, key: QueueKey) -> None:
    """Queue ``key`` is deleted: a later resend of a message forwarded to it does not reach it."""
    changed = {link: replace(f, queues=tuple(k for k in f.queues if k != key))
               for link, f in step.state.forwarded.items() if key in f.queues}
    if changed:
        forwarded = step.state.forwarded
        for link, forward in changed.items():
            forwarded = forwarded.set(link, forward)
        step.update(forwarded=forwarded)


def process_resend(step: Step, command: Resend) -> BalancingOutcome:
    """The bridge from ``node`` to ``peer`` sends the last message it forwarded again (LB-BRIDGE-DUP).

    ``BridgeImpl`` resends the references it had no confirmation of after it reconnects; the target finds
    the bridge ID in its cache and drops the message. Nothing forwarded, or a link that is down: nothing.
    """
    if command.node not in step.state.nodes or command.peer not in step.state.nodes:
        return Refused(Refusal.UNKNOWN_NODE, rule="LB-NODES")
    if command.node == command.peer:
        return Refused(Refusal.BAD_VALUE, rule="LB-DISCONNECTED")
    forward = step.state.forwarded.get((command.node, command.peer))
    if forward is None or (command.node, command.peer) in step.state.down_links:
        return Done(rule="LB-BRIDGE-DUP")
    if forward.queues and admit(step, command.peer, forward.message.address, forward.bridge_id):
        for key in forward.queues:
            land(step, key, forward.message)
    return Done(rule="LB-BRIDGE-DUP")
