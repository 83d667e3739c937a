"""The fast balancing broker's private invariants: every kept view against the queues it views.

Introduction
------------
:meth:`FastBalancingBroker.check_valid` calls :func:`find_problems`, which
lists, in words, every way the broker's redundant structures disagree:

* the queue table: each queue filed under its own (node, name), on a known
  node, with a serial not yet reused and the table in serial order (which
  :meth:`~.broker.FastBalancingBroker._add_node` relies on);
* the address index lists exactly the queues of each address, in order;
* each node's groups hold exactly the bindings the spec's ``get_group``
  derives, in creation order (a plain address's with the matching wildcard
  queues copied in, exactly where the wildcard index says it has groups), with the right local and connected flags
  (LB-QUEUE-PER-NODE, LB-GROUPS, LB-DISCONNECTED), each binding also filed with its queue; no empty group;
* consumers: the table and each queue's list agree, and the filter counts
  are the counts of the filters, paused consumers included; only a
  consumer that acknowledges later holds messages, each issued, held once,
  and not waiting in its queue at the same time (LB-ACK);
* waiting messages: issued, at most once in a queue (a MULTICAST send
  leaves one message, one ID, in several queues), for the queue's own
  address or one its wild address matches, and taken by no started consumer of its queue;
* the set of queues with a redistributor is exactly those that have one;
  settings and links agree with their fast copies;
* sessions: each on a known node; a consumer is transacted exactly when a
  session has its name, on its node; only a transacted consumer keeps
  acknowledgements, each issued, kept once, neither held nor waiting
  (LB-TX-ACK); a kept send's message is issued, new (no delivery yet), and
  routed to live queues, each once, in key order (a deleted queue leaves
  every transaction, LB-TX-COMMIT); no message's delivery count is negative
  or has reached ``MAX_DELIVERY_ATTEMPTS`` (LB-TX-MAX-DELIVERY); only a
  transacted consumer's session is rollback-only (a failed acknowledgement, LB-ACK);
* bridges: each cache belongs to a known node, holds at most the spec's
  ``BRIDGE_ID_CACHE_SIZE`` IDs, each from another known node and of an
  issued message; each kept crossing links two known nodes, carries an
  issued message, and names live queues of its target, once each, in key
  order (LB-BRIDGE-DUP).

This module reads the broker's private fields; it belongs to the broker.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brokerspec.spec.balancing import MAX_DELIVERY_ATTEMPTS
from brokerspec.spec.balancing.bridges import BRIDGE_ID_CACHE_SIZE

if TYPE_CHECKING:
    from .broker import FastBalancingBroker
    from .records import Binding, Group, QueueRecord


def find_problems(broker: FastBalancingBroker) -> list[str]:
    """Every private invariant ``broker`` breaks (empty when it is sound).

    It runs after every step of a lockstep check, so each part compares whole containers where it can
    (lists of records compare by identity, records having no equality of their own) and walks each queue once.
    """
    found: list[str] = []
    _queue_problems(broker, found)
    _group_problems(broker, found)
    _consumer_problems(broker, found)
    _message_problems(broker, found)
    _setting_problems(broker, found)
    _session_problems(broker, found)
    _bridge_problems(broker, found)
    return found


def _queue_place(queue: QueueRecord) -> str:
    """How a problem names a queue (built only for a problem: the checks run after every step)."""
    return f"queue {queue.name} on {queue.node}"


def _queue_problems(broker: FastBalancingBroker, found: list[str]) -> None:
    nodes = broker._nodes
    node_set = set(nodes)
    repeated = len(node_set) != len(nodes)  # then no queue can have a binding on each of them
    if repeated or broker._groups.keys() != node_set:
        found.append(f"nodes {nodes} and the nodes with groups {sorted(broker._groups)} differ")
    queues = broker._queues
    serials = [queue.serial for queue in queues.values()]
    if serials != sorted(set(serials)):
        found.append("the queue table is not in increasing serial order")
    by_address: dict[str, list[QueueRecord]] = {}
    next_serial = broker._next_serial
    for key, queue in queues.items():
        if key != queue.key or key != (queue.node, queue.name):
            found.append(f"queue {queue.name} on {queue.node} is filed under {key}")
        if queue.node not in node_set:
            found.append(f"queue {queue.name} is on unknown node {queue.node}")
        if queue.serial >= next_serial:
            found.append(f"queue {queue.name} on {queue.node} has a serial not yet issued")
        if repeated or queue.bindings.keys() != node_set:
            found.append(f"queue {queue.name} on {queue.node} has bindings on {sorted(queue.bindings)}, "
                         f"not on every node")
        by_address.setdefault(queue.address, []).append(queue)
    if by_address != broker._by_address:
        found.append("the address index does not list each address's queues in creation order")


def _group_problems(broker: FastBalancingBroker, found: list[str]) -> None:
    index = broker._wildcards
    by_address = broker._by_address
    listed = by_address.keys() | index.plain.keys()
    for address, wilds in index.plain.items():
        if wilds != index.matching(address):
            found.append(f"the wildcard index gives {address} the wild addresses {wilds}, not "
                         f"{index.matching(address)}")
    if index.wild != ({a: qs for a, qs in by_address.items() if index.is_wild(a)} if index.enabled else {}):
        found.append("the wildcard index does not list each wild address's queues in creation order")
    groupings: dict[str, dict[str, list[QueueRecord]]] = {}  # every node groups an address's queues alike
    down = broker._down
    for node, groups in broker._groups.items():
        if groups.keys() != listed:
            found.append(f"node {node} has groups for {sorted(groups)}, the cluster has queues or wildcard copies "
                         f"on {sorted(listed)}")
        for address, by_name in groups.items():
            expected = groupings.get(address)
            if expected is None:
                expected = groupings[address] = {}
                members = [*by_address.get(address, ()), *index.copies_for(address)]
                for queue in sorted(members, key=lambda queue: queue.serial):
                    expected.setdefault(queue.routing_name, []).append(queue)
            if by_name.keys() != expected.keys():
                found.append(f"node {node} groups {address} as {sorted(by_name)}, not {sorted(expected)}")
            for routing_name, group in by_name.items():
                bindings = group.members
                if group.node != node or group.address != address or group.routing_name != routing_name \
                        or not bindings or [binding.queue for binding in bindings] != expected.get(routing_name, []) \
                        or group.position < 0 or (not group.kept and group.position != 0):
                    _group_label_problems(group, node, address, routing_name, expected, found)
                for binding in bindings:
                    queue = binding.queue
                    local = queue.node == node
                    if queue.bindings.get(node) is not binding or binding.local != local \
                            or binding.connected != (local or (node, queue.node) not in down):
                        _binding_problems(binding, node, address, routing_name, down, found)


def _group_label_problems(group: Group, node: str, address: str, routing_name: str,
                          expected: dict[str, list[QueueRecord]], found: list[str]) -> None:
    """What is wrong with a group other than its bindings' flags (the caller saw that something is)."""
    where = f"group {routing_name} of {address} on {node}"
    if (group.node, group.address, group.routing_name) != (node, address, routing_name):
        found.append(f"{where} is labelled {group.node}/{group.address}/{group.routing_name}")
    if not group.members:
        found.append(f"{where} is kept empty")
    if [binding.queue for binding in group.members] != expected.get(routing_name, []):
        found.append(f"{where} holds {[b.queue.key for b in group.members]}, not the group's queues in creation order")
    if group.position < 0 or (not group.kept and group.position != 0):
        found.append(f"{where} has position {group.position} (kept: {group.kept})")


def _binding_problems(binding: Binding, node: str, address: str, routing_name: str, down: set[tuple[str, str]],
                      found: list[str]) -> None:
    """What is wrong with one binding of a node's group (the caller saw that something is)."""
    where = f"group {routing_name} of {address} on {node}"
    queue = binding.queue
    if queue.bindings.get(node) is not binding:
        found.append(f"{where}: the binding of {queue.key} is not the one its queue files")
    local = queue.node == node
    if binding.local != local:
        found.append(f"{where}: the binding of {queue.key} says local={binding.local}")
    if binding.connected != (local or (node, queue.node) not in down):
        found.append(f"{where}: the binding of {queue.key} says connected={binding.connected}")


def _consumer_problems(broker: FastBalancingBroker, found: list[str]) -> None:
    consumers, queues, next_message = broker._consumers, broker._queues, broker._next_message
    for name, consumer in consumers.items():
        queue = consumer.queue
        if consumer.name != name:
            found.append(f"consumer {consumer.name} is filed as {name}")
        if queues.get(queue.key) is not queue or consumer not in queue.consumers:
            found.append(f"consumer {name} is not listed by queue {queue.name} on {queue.node}")
    for queue in queues.values():
        listed = queue.consumers
        if not listed:
            if queue.unfiltered or queue.by_filter:
                found.append(f"{_queue_place(queue)} counts {queue.unfiltered} unfiltered and {queue.by_filter}, "
                             f"its consumers' filters are []")
        else:
            names = [c.name for c in listed]
            if len(set(names)) != len(names):
                found.append(f"{_queue_place(queue)} lists {names}")
            filters = []
            for consumer in listed:
                if consumers.get(consumer.name) is not consumer or consumer.queue is not queue:
                    found.append(f"{_queue_place(queue)} lists consumer {consumer.name} that is not its own")
                filters.append(consumer.filter)
            counts: dict[str, int] = {}
            for text in filters:
                if text is not None:
                    counts[text] = counts.get(text, 0) + 1
            if queue.unfiltered != filters.count(None) or queue.by_filter != counts:
                found.append(f"{_queue_place(queue)} counts {queue.unfiltered} unfiltered and {queue.by_filter}, "
                             f"its consumers' filters are {filters}")
        if queue.consumer_position < 0 or (not queue.consumer_position_kept and queue.consumer_position != 0):
            found.append(f"{_queue_place(queue)} has consumer position {queue.consumer_position}")
        waiting: set[int] | None = None
        for consumer in listed:
            if not consumer.held:
                continue
            held = [message.id for message in consumer.held]
            if not consumer.manual_ack:
                found.append(f"consumer {consumer.name} holds {held} but acknowledges each message as it takes it")
            if waiting is None:
                waiting = {message.id for message in queue.pending}
            if len(set(held)) != len(held) or not waiting.isdisjoint(held):
                found.append(f"consumer {consumer.name} holds {held}: a message twice, or one waiting in "
                             f"{_queue_place(queue)}")
            if max(held) >= next_message:
                found.append(f"consumer {consumer.name} holds a message never issued: {held}")


def _message_problems(broker: FastBalancingBroker, found: list[str]) -> None:
    next_message, index = broker._next_message, broker._wildcards
    with_one: set[int] = set()
    for queue in broker._queues.values():
        if queue.redistributor is not None:
            with_one.add(id(queue))
        if not queue.pending:
            continue
        seen: set[int] = set()
        for message in queue.pending:
            if message.id >= next_message:
                found.append(f"message {message.id} in {_queue_place(queue)} was never issued")
            if message.id in seen:
                found.append(f"message {message.id} waits twice in {_queue_place(queue)}")
            seen.add(message.id)
            if message.address != queue.address and not index.binds(queue.address, message.address):
                found.append(f"message {message.id} for {message.address} waits in {_queue_place(queue)} "
                             f"of {queue.address}")
            if any(c.can_take(message.color) for c in queue.consumers):
                found.append(f"message {message.id} waits in {_queue_place(queue)} beside a started consumer "
                             "that matches it")
    if {id(q) for q in broker._redistributors} != with_one:
        found.append("the set of queues with a redistributor is not the queues that have one")


def _setting_problems(broker: FastBalancingBroker, found: list[str]) -> None:
    nodes = broker._nodes
    node_set = set(nodes)
    if broker._lb_types.keys() != node_set or broker._delays.keys() != node_set:
        found.append(f"fast settings are kept for the nodes {sorted(broker._lb_types)}, not {sorted(broker._nodes)}")
    for node, address in broker._typed:
        if node not in node_set:
            found.append(f"a type is recorded for the unknown node {node}")
        if not broker._by_address.get(address) and not broker._wildcards.copies_for(address):
            found.append(f"a type is recorded for {address}, which has no bindings")
    own: dict[str, set[str]] = {}
    for node, address in broker._node_settings:
        if node not in node_set:
            found.append(f"settings are kept for the unknown node {node}")
        own.setdefault(node, set()).add(address)
    settings, node_settings = broker._settings, broker._node_settings
    for node in nodes:
        types, delays = broker._lb_types.get(node, {}), broker._delays.get(node, {})
        configured = settings.keys() | own.get(node, set())
        if types.keys() != configured or delays.keys() != configured:
            found.append(f"node {node} keeps fast settings for {sorted(types)}, configured are {sorted(configured)}")
        for address in configured:
            setting = node_settings.get((node, address)) or settings[address]
            if types.get(address) is not setting.lb_type or delays.get(address) != setting.redistribution_delay:
                found.append(f"node {node}'s fast copies of {address}'s settings differ from {setting}")
    for node, peer in broker._down:
        if node == peer or node not in broker._groups or peer not in broker._groups:
            found.append(f"link {(node, peer)} names an unknown node or is a loop")


def _session_problems(broker: FastBalancingBroker, found: list[str]) -> None:
    node_set, consumers, queues = set(broker._nodes), broker._consumers, broker._queues
    next_message = broker._next_message
    for name, session in broker._sessions.items():
        if session.node not in node_set:
            found.append(f"session {name} is on unknown node {session.node}")
        consumer = consumers.get(name)
        if consumer is not None and consumer.queue.node != session.node:
            found.append(f"session {name} is on {session.node}, its consumer on {consumer.queue.node}")
        if session.rollback_only and consumer is None:
            found.append(f"session {name} is rollback-only, with no consumer whose acknowledgement failed")
        for held in session.sends:
            message = held.message
            if message.id >= next_message or message.deliveries:
                found.append(f"session {name} keeps message {message.id}, never issued or delivered already")
            keys = [queue.key for queue in held.queues]
            if not keys or keys != sorted(set(keys)):
                found.append(f"session {name} keeps message {message.id} for the queues {keys}, not once each "
                             "in key order")
            if any(queues.get(queue.key) is not queue for queue in held.queues):
                found.append(f"session {name} keeps message {message.id} for a queue that is gone")
    sessions = broker._sessions
    for name, consumer in consumers.items():
        if consumer.transacted != (name in sessions):
            found.append(f"consumer {name} and the session named like it disagree about its transaction")
        if not consumer.acked and not consumer.held:
            continue
        acked = [message.id for message in consumer.acked]
        if acked and not consumer.transacted:
            found.append(f"consumer {name} keeps acknowledgements {acked} in a transaction it does not have")
        kept = [*acked, *(message.id for message in consumer.held)]
        if len(set(kept)) != len(kept) or (
                acked and not {message.id for message in consumer.queue.pending}.isdisjoint(acked)):
            found.append(f"consumer {name} keeps {acked} acknowledged: a message twice, one it holds, or one "
                         "waiting in its queue")
        if acked and max(acked) >= next_message:
            found.append(f"consumer {name} keeps an acknowledgement of a message never issued: {acked}")
    for queue in queues.values():
        counts = [m.deliveries for m in queue.pending]
        for consumer in queue.consumers:
            counts += [m.deliveries for m in consumer.held]
            counts += [m.deliveries for m in consumer.acked]
        if counts and (min(counts) < 0 or max(counts) >= MAX_DELIVERY_ATTEMPTS):
            found.append(f"queue {queue.name} on {queue.node} keeps a message with delivery count out of "
                         f"[0, {MAX_DELIVERY_ATTEMPTS}): {counts}")


def _bridge_problems(broker: FastBalancingBroker, found: list[str]) -> None:
    nodes, next_message = broker._nodes, broker._next_message
    for (node, address), cache in broker._bridge_ids.items():
        where = f"the bridge cache of {address} on {node}"
        if node not in nodes or not cache or len(cache) > BRIDGE_ID_CACHE_SIZE:
            found.append(f"{where} is on an unknown node, empty, or holds more than {BRIDGE_ID_CACHE_SIZE} IDs")
        if any(source == node or source not in nodes or number >= next_message for source, number in cache):
            found.append(f"{where} holds an ID from itself, an unknown node or of a message never issued: "
                         f"{list(cache)}")
    for (source, target), (message, queues) in broker._forwarded.items():
        where = f"the last crossing from {source} to {target}"
        if source == target or source not in nodes or target not in nodes:
            found.append(f"{where} links unknown nodes or a node to itself")
        if message.id >= next_message:
            found.append(f"{where} carries message {message.id}, never issued")
        keys = [queue.key for queue in queues]
        if keys != sorted(set(keys)) or any(key[0] != target for key in keys) or any(
                broker._queues.get(queue.key) is not queue for queue in queues):
            found.append(f"{where} names the queues {keys}: not live queues of {target}, once each in key order")
