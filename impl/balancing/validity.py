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
    from .records import QueueRecord


def find_problems(broker: FastBalancingBroker) -> list[str]:
    """Every private invariant ``broker`` breaks (empty when it is sound)."""
    return [*_queue_problems(broker), *_group_problems(broker), *_consumer_problems(broker),
            *_message_problems(broker), *_setting_problems(broker), *_session_problems(broker),
            *_bridge_problems(broker)]


def _queue_problems(broker: FastBalancingBroker) -> list[str]:
    found: list[str] = []
    nodes = broker._nodes
    if len(set(nodes)) != len(nodes) or set(nodes) != set(broker._groups):
        found.append(f"nodes {nodes} and the nodes with groups {sorted(broker._groups)} differ")
    serials = [queue.serial for queue in broker._queues.values()]
    if serials != sorted(set(serials)):
        found.append("the queue table is not in increasing serial order")
    by_address: dict[str, list[QueueRecord]] = {}
    every_node = sorted(nodes)
    for key, queue in broker._queues.items():
        if key != queue.key or queue.key != (queue.node, queue.name):
            found.append(f"queue {queue.name} on {queue.node} is filed under {key}")
        if queue.node not in nodes:
            found.append(f"queue {queue.name} is on unknown node {queue.node}")
        if queue.serial >= broker._next_serial:
            found.append(f"queue {queue.name} on {queue.node} has a serial not yet issued")
        if sorted(queue.bindings) != every_node:
            found.append(f"queue {queue.name} on {queue.node} has bindings on {sorted(queue.bindings)}, "
                         f"not on every node")
        by_address.setdefault(queue.address, []).append(queue)
    if {a: [id(q) for q in qs] for a, qs in by_address.items()} != \
            {a: [id(q) for q in qs] for a, qs in broker._by_address.items()}:
        found.append("the address index does not list each address's queues in creation order")
    return found


def _group_problems(broker: FastBalancingBroker) -> list[str]:
    found: list[str] = []
    index = broker._wildcards
    listed = set(broker._by_address) | set(index.plain)
    for address, wilds in index.plain.items():
        if wilds != index.matching(address):
            found.append(f"the wildcard index gives {address} the wild addresses {wilds}, not "
                         f"{index.matching(address)}")
    if {a: [id(q) for q in qs] for a, qs in index.wild.items()} != \
            {a: [id(q) for q in qs] for a, qs in broker._by_address.items() if index.enabled and index.is_wild(a)}:
        found.append("the wildcard index does not list each wild address's queues in creation order")
    groupings: dict[str, dict[str, list[QueueRecord]]] = {}  # every node groups an address's queues alike
    for node, groups in broker._groups.items():
        if set(groups) != listed:
            found.append(f"node {node} has groups for {sorted(groups)}, the cluster has queues or wildcard copies "
                         f"on {sorted(listed)}")
        for address, by_name in groups.items():
            if address not in groupings:
                grouping: dict[str, list[QueueRecord]] = {}
                members = [*broker._by_address.get(address, ()), *index.copies_for(address)]
                for queue in sorted(members, key=lambda queue: queue.serial):
                    grouping.setdefault(queue.routing_name, []).append(queue)
                groupings[address] = grouping
            expected = groupings[address]
            if set(by_name) != set(expected):
                found.append(f"node {node} groups {address} as {sorted(by_name)}, not {sorted(expected)}")
            for routing_name, group in by_name.items():
                where = f"group {routing_name} of {address} on {node}"
                if (group.node, group.address, group.routing_name) != (node, address, routing_name):
                    found.append(f"{where} is labelled {group.node}/{group.address}/{group.routing_name}")
                if not group.members:
                    found.append(f"{where} is kept empty")
                if [id(b.queue) for b in group.members] != [id(q) for q in expected.get(routing_name, ())]:
                    found.append(f"{where} holds {[b.queue.key for b in group.members]}, not the group's queues "
                                 "in creation order")
                if group.position < 0 or (not group.kept and group.position != 0):
                    found.append(f"{where} has position {group.position} (kept: {group.kept})")
                for binding in group.members:
                    queue = binding.queue
                    if queue.bindings.get(node) is not binding:
                        found.append(f"{where}: the binding of {queue.key} is not the one its queue files")
                    local = queue.node == node
                    if binding.local != local:
                        found.append(f"{where}: the binding of {queue.key} says local={binding.local}")
                    if binding.connected != (local or (node, queue.node) not in broker._down):
                        found.append(f"{where}: the binding of {queue.key} says connected={binding.connected}")
    return found


def _consumer_problems(broker: FastBalancingBroker) -> list[str]:
    found: list[str] = []
    for name, consumer in broker._consumers.items():
        queue = consumer.queue
        if consumer.name != name:
            found.append(f"consumer {consumer.name} is filed as {name}")
        if broker._queues.get(queue.key) is not queue or not any(c is consumer for c in queue.consumers):
            found.append(f"consumer {name} is not listed by queue {queue.name} on {queue.node}")
    for queue in broker._queues.values():
        where = f"queue {queue.name} on {queue.node}"
        names = [c.name for c in queue.consumers]
        if len(set(names)) != len(names):
            found.append(f"{where} lists {names}")
        for consumer in queue.consumers:
            if broker._consumers.get(consumer.name) is not consumer or consumer.queue is not queue:
                found.append(f"{where} lists consumer {consumer.name} that is not its own")
        filters = [c.filter for c in queue.consumers]
        counts: dict[str, int] = {}
        for text in filters:
            if text is not None:
                counts[text] = counts.get(text, 0) + 1
        if queue.unfiltered != filters.count(None) or queue.by_filter != counts:
            found.append(f"{where} counts {queue.unfiltered} unfiltered and {queue.by_filter}, "
                         f"its consumers' filters are {filters}")
        if queue.consumer_position < 0 or (not queue.consumer_position_kept and queue.consumer_position != 0):
            found.append(f"{where} has consumer position {queue.consumer_position}")
        waiting = {message.id for message in queue.pending}
        for consumer in queue.consumers:
            held = [message.id for message in consumer.held]
            if held and not consumer.manual_ack:
                found.append(f"consumer {consumer.name} holds {held} but acknowledges each message as it takes it")
            if len(set(held)) != len(held) or waiting & set(held):
                found.append(f"consumer {consumer.name} holds {held}: a message twice, or one waiting in {where}")
            if any(number >= broker._next_message for number in held):
                found.append(f"consumer {consumer.name} holds a message never issued: {held}")
    return found


def _message_problems(broker: FastBalancingBroker) -> list[str]:
    found: list[str] = []
    for queue in broker._queues.values():
        where = f"queue {queue.name} on {queue.node}"
        seen: set[int] = set()
        for message in queue.pending:
            if message.id >= broker._next_message:
                found.append(f"message {message.id} in {where} was never issued")
            if message.id in seen:
                found.append(f"message {message.id} waits twice in {where}")
            seen.add(message.id)
            if not broker._wildcards.binds(queue.address, message.address):
                found.append(f"message {message.id} for {message.address} waits in {where} of {queue.address}")
            if any(c.can_take(message.color) for c in queue.consumers):
                found.append(f"message {message.id} waits in {where} beside a started consumer that matches it")
    with_one = {id(q) for q in broker._queues.values() if q.redistributor is not None}
    if {id(q) for q in broker._redistributors} != with_one:
        found.append("the set of queues with a redistributor is not the queues that have one")
    return found


def _setting_problems(broker: FastBalancingBroker) -> list[str]:
    found: list[str] = []
    if set(broker._lb_types) != set(broker._nodes) or set(broker._delays) != set(broker._nodes):
        found.append(f"fast settings are kept for the nodes {sorted(broker._lb_types)}, not {sorted(broker._nodes)}")
    for node, address in broker._typed:
        if node not in broker._nodes:
            found.append(f"a type is recorded for the unknown node {node}")
        if not broker._by_address.get(address) and not broker._wildcards.copies_for(address):
            found.append(f"a type is recorded for {address}, which has no bindings")
    for node, _ in broker._node_settings:
        if node not in broker._nodes:
            found.append(f"settings are kept for the unknown node {node}")
    for node in broker._nodes:
        types, delays = broker._lb_types.get(node, {}), broker._delays.get(node, {})
        configured = set(broker._settings) | {a for n, a in broker._node_settings if n == node}
        if set(types) != configured or set(delays) != configured:
            found.append(f"node {node} keeps fast settings for {sorted(types)}, configured are {sorted(configured)}")
        for address in configured:
            settings = broker._node_settings.get((node, address)) or broker._settings[address]
            if types.get(address) is not settings.lb_type or delays.get(address) != settings.redistribution_delay:
                found.append(f"node {node}'s fast copies of {address}'s settings differ from {settings}")
    for node, peer in broker._down:
        if node == peer or node not in broker._groups or peer not in broker._groups:
            found.append(f"link {(node, peer)} names an unknown node or is a loop")
    return found


def _session_problems(broker: FastBalancingBroker) -> list[str]:
    found: list[str] = []
    for name, session in broker._sessions.items():
        if session.node not in broker._nodes:
            found.append(f"session {name} is on unknown node {session.node}")
        consumer = broker._consumers.get(name)
        if consumer is not None and consumer.queue.node != session.node:
            found.append(f"session {name} is on {session.node}, its consumer on {consumer.queue.node}")
        if session.rollback_only and consumer is None:
            found.append(f"session {name} is rollback-only, with no consumer whose acknowledgement failed")
        for held in session.sends:
            message = held.message
            if message.id >= broker._next_message or message.deliveries:
                found.append(f"session {name} keeps message {message.id}, never issued or delivered already")
            keys = [queue.key for queue in held.queues]
            if not keys or keys != sorted(set(keys)):
                found.append(f"session {name} keeps message {message.id} for the queues {keys}, not once each "
                             "in key order")
            if any(broker._queues.get(queue.key) is not queue for queue in held.queues):
                found.append(f"session {name} keeps message {message.id} for a queue that is gone")
    for name, consumer in broker._consumers.items():
        if consumer.transacted != (name in broker._sessions):
            found.append(f"consumer {name} and the session named like it disagree about its transaction")
        acked = [message.id for message in consumer.acked]
        if acked and not consumer.transacted:
            found.append(f"consumer {name} keeps acknowledgements {acked} in a transaction it does not have")
        kept = [*acked, *(message.id for message in consumer.held)]
        waiting = {message.id for message in consumer.queue.pending}
        if len(set(kept)) != len(kept) or waiting & set(acked):
            found.append(f"consumer {name} keeps {acked} acknowledged: a message twice, one it holds, or one "
                         "waiting in its queue")
        if any(number >= broker._next_message for number in acked):
            found.append(f"consumer {name} keeps an acknowledgement of a message never issued: {acked}")
    for queue in broker._queues.values():
        counts = [m.deliveries for m in queue.pending] + [m.deliveries for c in queue.consumers
                                                          for m in (*c.held, *c.acked)]
        if any(count < 0 or count >= MAX_DELIVERY_ATTEMPTS for count in counts):
            found.append(f"queue {queue.name} on {queue.node} keeps a message with delivery count out of "
                         f"[0, {MAX_DELIVERY_ATTEMPTS}): {counts}")
    return found


def _bridge_problems(broker: FastBalancingBroker) -> list[str]:
    found: list[str] = []
    nodes = broker._nodes
    for (node, address), cache in broker._bridge_ids.items():
        where = f"the bridge cache of {address} on {node}"
        if node not in nodes or not cache or len(cache) > BRIDGE_ID_CACHE_SIZE:
            found.append(f"{where} is on an unknown node, empty, or holds more than {BRIDGE_ID_CACHE_SIZE} IDs")
        if any(source == node or source not in nodes or number >= broker._next_message for source, number in cache):
            found.append(f"{where} holds an ID from itself, an unknown node or of a message never issued: "
                         f"{list(cache)}")
    for (source, target), (message, queues) in broker._forwarded.items():
        where = f"the last crossing from {source} to {target}"
        if source == target or source not in nodes or target not in nodes:
            found.append(f"{where} links unknown nodes or a node to itself")
        if message.id >= broker._next_message:
            found.append(f"{where} carries message {message.id}, never issued")
        keys = [queue.key for queue in queues]
        if keys != sorted(set(keys)) or any(key[0] != target for key in keys) or any(
                broker._queues.get(queue.key) is not queue for queue in queues):
            found.append(f"{where} names the queues {keys}: not live queues of {target}, once each in key order")
    return found
