"""The load-balancing domain on a real Artemis cluster: each spec operation as client and management calls.

Introduction
------------
The cluster (:class:`~.cluster.ArtemisCluster`) has nodes n1..n3 running
from the start; the spec's ``add_node`` makes a running node part of the
case, and an operation naming a node the case has not added is refused the
way the spec refuses it, without asking the broker (a node's membership is
the script's bookkeeping, as are consumer names, which Artemis does not
have). Everything else is asked of the broker:

* ``create_queue``: the address is created on every node first, as it is
  before a case's first send to it (a symmetric cluster: a node drops the
  notice of a queue whose address it lacks,
  ``ClusterConnectionImpl.doBindingAdded``, and with auto-creation off a
  typed send to a missing address is refused), then the queue on its node, with the filter ``color = '<colour>'``; Artemis's QUEUE_EXISTS is
  the spec's QUEUE_EXISTS.
* ``delete_queue``: ``destroyQueue`` without removing consumers; AMQ229017
  is QUEUE_NOT_FOUND, AMQ229025 (consumers present) QUEUE_IN_USE.
* ``attach``, ``close``, ``pause``, ``resume``, ``receive``, ``ack``
  (:mod:`.consumers`): a core consumer on its own session (transacted for a
  transacted consumer), pushed to through
  a message listener or, with window 0, pulling one message per
  ``receiveImmediate``; it acknowledges each message at once, or holds it
  until ``ack`` acknowledges it (cumulatively, as the broker does), and a
  close gives back what it holds. Pause and resume stop and start its
  session (the consumer stays registered, so it still counts for routing,
  as the spec says).
* ``send``: a core message tagged for the probe, with the property
  ``color`` and, when grouped, a group ID of its own; the status is the
  one the probe saw the session's send return. A send in a session, and
  ``commit`` and ``rollback``, are :mod:`.sessions`'s; ``resend`` (a bridge
  losing a confirmation) is not expressible.
* ``configure``: the load-balancing type is the cluster connection's
  ``message-load-balancing`` (one per cluster connection, so one at a time,
  changed by restarting the cluster when an address that needs another
  type gets a queue or a send, and while the case has no consumer: queues
  and waiting messages are durable and outlive it); the delay is the
  address's ``redistribution-delay``. A type the release's
  ``MessageLoadBalancingType`` lacks is NOT_SUPPORTED.
* ``tick``: a positive redistribution delay is wall-clock time in Artemis;
  :mod:`.ticks` maps ticks onto seconds, and a tick waits until every
  redistributor the spec makes due has had its time. ``set_link`` cannot
  cut one bridge over a client protocol (not expressible).

After each operation the adapter waits until the cluster has settled (every
node's remote bindings show the queues and consumer counts of the case,
nothing is in a store-and-forward queue or being delivered, and the
snapshots stay the same for a moment, ``ArtemisCluster.settle``), then tells where every message went (:mod:`.placement`).
Each case runs under fresh names (``bsN-`` before every address, queue and
consumer) so that nothing a case leaves can reach the next.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from brokerspec.spec import BalancingOptions, Outcome, PrefixMatch, Profile
from brokerspec.spec.addressing.names import strip_prefix
from brokerspec.spec.profiles import SendAutoCreate, WildcardMatching
from brokerspec.spec.addressing import RoutingType
from brokerspec.spec.balancing import (
    Ack,
    AddNode,
    Attach,
    Close,
    Commit,
    Configure,
    CreateQueue,
    DeleteQueue,
    Done,
    LbType,
    Pause,
    QueryQueue,
    QueueQueried,
    Receive,
    Refusal,
    Refused,
    Resend,
    Resume,
    Rollback,
    RoutingStatus,
    Send,
    Sent,
    SetLink,
    SetPrefix,
    Tick,
    UpdateQueue,
)
from brokerspec.spec.balancing.wildcards import is_wild

from .cluster import ArtemisCluster, Snapshot
from .consumers import ConsumerInfo, color_filter, now_held
from .driver import CallFailed
from .outcomes import NotExpressible, UnexpectedRefusal
from .placement import Instance, Place, Primary, QueueKey, first_landings, reconcile
from .sessions import SessionSteps, TxSession
from .ticks import TickClock

OURS = re.compile(r"^bs\d+\.")
"""The names this adapter gives: every case's own prefix, a word of its own, so that a wildcard address of the
spec (``#``, ``a.*``) stays a wildcard of the same words under it (``bs3.#`` matches every address of case 3)."""

WILD_SEND = (
    "a send to a wild address that no queue is bound to: from 2.17.0 Artemis looks its words up in the wildcard tree "
    "as though they were plain and files what it found under the wild address, where later plain addresses pick "
    "it up (WildcardAddressManager.getBindingsForRoutingAddress); the spec says NO_BINDINGS, as 2.11.0 does, and "
    "does not model that")
"""Why such a send is not expressible (docs/load-balancing.md, what the spec simplifies)."""

TX_REFUSED_SEND = (
    "a transacted send the adapter's session bookkeeping refuses, of an ANYCAST message to an address without a "
    "queue on its node: the spec refuses it with ADDRESS_DOES_NOT_EXIST first when the node would not auto-create "
    "the queue (LB-AUTO-CREATE), which only the broker decides, by a send the refusal keeps the adapter from making")
"""Why such a send is not expressible."""

@dataclass
class QueueInfo:
    """A queue the case created: its address, routing name and creation order."""

    address: str
    routing_name: str
    serial: int


def has_queue_enabled(version: str) -> bool:
    """Whether the release's queues have the ``enabled`` attribute (2.14.0 on), and so queue configurations."""
    return tuple(int(part) for part in version.split(".")[:2]) >= (2, 14)


def disabled_queue_json(name: str, address: str, command: CreateQueue) -> str:
    """The queue configuration (2.12 on) that makes ``command``'s queue disabled, as management's JSON.

    A queue without a filter has no ``filter-string`` at all: ``QueueConfiguration.fromJSON`` reads a JSON null
    as the text ``null``, which would become the queue's filter (found fuzzing Artemis 2.40.0).
    """
    configuration: dict[str, Any] = {"name": name, "address": address, "routing-type": command.routing_type.value,
                                     "durable": True, "enabled": False,
                                     "purge-on-no-consumers": command.purge_on_no_consumers}
    if command.filter is not None:
        configuration["filter-string"] = color_filter(command.filter)
    return json.dumps(configuration)


def colour_of(expression: str | None) -> str | None:
    """The spec's filter (a colour) for a filter expression :func:`color_filter` wrote, or None."""
    if expression is None:
        return None
    start, end = "color = '", "'"
    if not (expression.startswith(start) and expression.endswith(end)):
        raise UnexpectedRefusal(f"a queue filter brokerspec did not write: {expression!r}")
    return expression[len(start):-len(end)].replace("''", "'")


class BalancingAdapter(SessionSteps):
    """The load-balancing domain on ``cluster``."""

    def __init__(self, cluster: ArtemisCluster) -> None:
        self.cluster = cluster
        self.runs = 0
        self.prefix = ""
        self.nodes: list[str] = []
        self.queues: dict[QueueKey, QueueInfo] = {}
        self.purging: set[QueueKey] = set()
        """The queues made or updated purge-on-no-consumers."""
        self.consumers: dict[str, ConsumerInfo] = {}
        self.held: dict[str, tuple[Instance, ...]] = {}
        self.waiting: dict[QueueKey, tuple[Instance, ...]] = {}
        self.lb_types: dict[str, LbType] = {}
        self.node_lb_types: dict[tuple[str, str], LbType] = {}
        """(node, address) -> the type a configure on that node alone gave it."""
        self.node_delays: dict[tuple[str, str], tuple[int, bool]] = {}
        self.delays: dict[str, tuple[int, bool]] = {}
        """address -> (redistribution delay, auto-create-queues) as configured on every node; node_delays: on one."""
        self.sessions: set[str] = set()
        self.tx: dict[str, TxSession] = {}
        self.acked: dict[str, tuple[Instance, ...]] = {}
        self.spent: dict[int, int] = {}
        self.cleared_filters: set[QueueKey] = set()
        """The queues whose filter an ``updateQueue`` cleared (LB-UPDATE-FILTER), made so again after a restart."""
        self.addresses: set[str] = set()
        """The case's addresses known to exist on every node (broker names)."""
        self.next_id = 1
        self.serials = 0
        self.ticks = TickClock()
        self.options = BalancingOptions()
        self.prefixes: dict[str, RoutingType] = {}
        """The acceptor prefixes of the case (spec names)."""
        self.names: set[str] = set()
        """The case's addresses, by the spec's names."""

    # --- lifecycle -------------------------------------------------------------------------------

    def reset(self, profile: Profile) -> None:
        """A fresh case: the last one's consumers closed and its queues and settings removed, new names."""
        self.leave()
        for node in self.cluster.nodes.values():
            for name in node.manage("getQueueNames"):
                if OURS.match(name):
                    node.manage("destroyQueue", name, True)
        if self.delays or self.node_delays:
            self.cluster.set_address_settings(())
        self.runs += 1
        self.prefix = f"bs{self.runs}."
        self.nodes = ["n1"]
        self.queues, self.waiting, self.lb_types, self.delays = {}, {}, {}, {}
        self.node_lb_types, self.node_delays = {}, {}
        self.addresses, self.purging = set(), set()
        self.tx, self.spent, self.cleared_filters = {}, {}, set()
        self.next_id, self.serials = 1, 0
        self.ticks = TickClock()
        self.options = profile.balancing
        self.names = set()
        if self.prefixes:
            self.cluster.set_prefixes({})
        self.prefixes = {}

    def leave(self) -> None:
        """Close the case's consumers and sessions (a producer session reopens at its next send)."""
        for consumer in self.consumers.values():
            self._quietly("close_session", id=consumer.session)
        for session in self.sessions:
            self._quietly("close_session", id=session)
        self.consumers, self.sessions, self.held, self.acked = {}, set(), {}, {}
        self.tx = {name: TxSession("", session.node) for name, session in self.tx.items() if not session.consumer}
        self.cluster.driver.call("deliveries")

    def restart(self, why: str) -> None:
        """Before the adapter restarts the cluster for ``why``: not expressible while the case has consumers or
        uncommitted sends, which the restart would lose."""
        if self.consumers:
            raise NotExpressible(f"{why} changes only with a restart of every node, which would close the case's "
                                 "consumers")
        if any(session.sends for session in self.tx.values()):
            raise NotExpressible(f"{why} changes only with a restart of every node, which would roll back the "
                                 "case's open transactions")
        self.leave()

    def restarted(self) -> None:
        """After a restart: each queue whose filter an update cleared has it cleared again. ``updateQueue`` sets the
        queue's filter but persists its binding, whose filter stays the old one (``PostOfficeImpl.updateQueue``:
        ``queue.setFilter``, then ``storageManager.updateQueueBinding(txID, queueBinding)``), so a reload brings it
        back (found fuzzing Artemis 2.40.0); the same update clears it again."""
        for node, queue in sorted(self.cleared_filters):
            self.cluster.nodes[node].manage("updateQueue", json.dumps({"name": self.real(queue)}))

    def _quietly(self, command: str, **fields: Any) -> None:
        try:
            self.cluster.driver.call(command, **fields)
        except CallFailed:
            pass

    def real(self, name: str) -> str:
        """The broker's name for the spec's address, queue or consumer ``name`` in this case."""
        return self.prefix + name

    def execute(self, command: Any) -> Outcome:
        """Perform ``command`` on the cluster; what it did, as an outcome."""
        handlers: dict[type[Any], Callable[[Any], Outcome]] = {
            AddNode: self.add_node, CreateQueue: self.create_queue, DeleteQueue: self.delete_queue,
            Attach: self.attach, Close: self.close, Pause: self.pause, Resume: self.resume, Send: self.send,
            Configure: self.configure, SetLink: self.set_link, SetPrefix: self.set_prefix, Tick: self.tick,
            QueryQueue: self.query_queue, UpdateQueue: self.update_queue, Receive: self.receive, Ack: self.ack,
            Commit: self.commit, Rollback: self.rollback, Resend: self.resend,
        }
        start = time.monotonic()
        outcome = handlers[type(command)](command)
        if not isinstance(outcome, Refused):
            self.ticks.record(command, start, time.monotonic())
        self.ticks.check(time.monotonic())
        return outcome

    # --- the cluster settling ----------------------------------------------------------------------

    def expected_remotes(self) -> dict[tuple[str, str], int]:
        """(node, remote binding name) -> consumer count, for every queue of the case on every other node."""
        counts = {key: 0 for key in self.queues}
        for consumer in self.consumers.values():
            counts[consumer.key] += 1
        ids = self.cluster.node_ids
        return {(other, self.real(queue) + ids[node]): count for (node, queue), count in counts.items()
                for other in self.cluster.names if other != node}

    def step_events(self, primary: Primary = Primary(), landings: tuple[Instance, ...] = ()) -> tuple[Any, ...]:
        """Settle, then tell where every message went; the adapter's picture moves on."""
        snapshot, deliveries, records = self.settled_step()
        return self.account(snapshot, deliveries, primary, landings, records)

    def settled_step(self) -> tuple[Snapshot, list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
        """The cluster settled: its snapshot, the deliveries meanwhile, and every node's probe records since the
        last step."""
        snapshot, deliveries = self.cluster.settle(self.expected_remotes(), OURS, self.holding)
        return snapshot, deliveries, {name: self.cluster.events(name) for name in self.cluster.names}

    def queue_serials(self) -> dict[QueueKey, int]:
        return {key: info.serial for key, info in self.queues.items()}

    def peers(self) -> dict[str, str]:
        """The store-and-forward queues' names -> the node each leads to."""
        return {f"$.artemis.internal.sf.c0.{node_id}": name for name, node_id in self.cluster.node_ids.items()}

    def account(self, snapshot: Snapshot, deliveries: list[dict[str, Any]], primary: Primary,
                landings: tuple[Instance, ...], records: dict[str, list[dict[str, Any]]]) -> tuple[Any, ...]:
        """The events of a settled step (:func:`~.placement.reconcile`).

        A waiting message that left its queue and is nowhere, while the
        probe saw it arrive on another node and reach no queue there, was
        lost in transit by the broker (finding 7 of docs/artemis-fidelity.md);
        that is said as such.
        """
        by_real = {c.real: (name, c.key) for name, c in self.consumers.items()}
        places: list[Place] = []
        for delivery in deliveries:
            name, key = by_real.get(delivery["consumer"], (delivery["consumer"], ("?", "?")))
            places.append(Place(str(delivery["properties"].get("_BS_TAG")), key, name))
        order: dict[QueueKey, tuple[str, ...]] = {}
        for queue in snapshot.queues:
            if queue.name.startswith(self.prefix):
                key = (queue.node, queue.name[len(self.prefix):])
                order[key] = queue.tags
                places.extend(Place(tag, key, None) for tag in queue.tags)
        known = dict(self.queues)

        def group(key: QueueKey) -> object:
            info = known.get(key)
            return key if info is None else (info.address, info.routing_name)

        def serial(key: QueueKey) -> int:
            info = known.get(key)
            return 0 if info is None else info.serial

        try:
            result = reconcile(self.waiting, landings, places, order, primary, group, serial, self.next_id)
        except UnexpectedRefusal as refusal:
            lost = sorted({(r["tag"], node) for node, found in records.items() for r in found
                           if r.get("event") == "route" and r.get("tx") == "COMMITTED" and not r.get("queues")
                           and any(i.tag == r["tag"] for queue in self.waiting.values() for i in queue)})
            if not lost:
                raise
            raise UnexpectedRefusal(f"{refusal.what}; the broker moved " + ", ".join(
                f"{tag} to {node}, which routed it to no queue" for tag, node in lost)
                + ": the message is lost (a copy whose routing type the target queue lacks is dropped, "
                "LocalQueueBinding.route)") from None
        self.waiting, self.next_id = result.waiting, result.next_id
        self.held = now_held(self.held, result.taken, self.consumers)
        self.acked = now_held(self.acked, result.taken, self.consumers, acked=True)
        return result.events

    # --- operations ------------------------------------------------------------------------------

    def add_node(self, command: AddNode) -> Outcome:
        if command.node in self.nodes:
            return Refused(Refusal.NODE_EXISTS)
        if command.node not in self.cluster.names:
            raise NotExpressible(f"the cluster has {len(self.cluster.names)} nodes, {', '.join(self.cluster.names)}")
        self.nodes.append(command.node)
        return Done(self.step_events())

    def ensure_type(self, address: str) -> None:
        """The cluster connection has ``address``'s load-balancing type, by a restart of the cluster if need be.

        The queues and their waiting messages are durable and outlive the
        restart; consumers would not, so with one open the change is not
        expressible, as it is while another address with queues needs another
        type (Artemis has one type per cluster connection).
        """
        wanted = {node: self.type_on(node, address) for node in self.cluster.names}
        if all(self.cluster.lb_types[node] == kind.value for node, kind in wanted.items()):
            return
        for node, kind in wanted.items():
            clash = sorted({info.address for info in self.queues.values() if info.address != address
                            and self.type_on(node, info.address) is not kind})
            if clash:
                raise NotExpressible(f"{address} needs the load-balancing type {kind.value} on {node} while "
                                     f"{', '.join(clash)} needs another: Artemis has one type per cluster "
                                     "connection, and the adapter runs one on each node")
        self.restart(f"{address} needs another load-balancing type: a cluster connection's type")
        self.cluster.set_lb_types({node: kind.value for node, kind in wanted.items()})
        self.restarted()

    def type_on(self, node: str, address: str) -> LbType:
        """The type the spec gives ``address`` on ``node``: the node's own, else the cluster's, else ON_DEMAND."""
        return self.node_lb_types.get((node, address)) or self.lb_types.get(address, LbType.ON_DEMAND)

    def ensure_address(self, name: str) -> str:
        """The address ``name`` on every node (a symmetric cluster's configuration); its broker name."""
        address = self.real(name)
        if address not in self.addresses:
            self.names.add(name)
            if self.settings_for_every_address():
                self.write_settings()  # before its first use, so that no wildcard setting applies to it
            for node in self.cluster.nodes.values():
                if not node.call("address_query", name=address)["exists"]:
                    node.manage("createAddress", address, "ANYCAST,MULTICAST")
            self.addresses.add(address)
        return address

    def settings_for_every_address(self) -> bool:
        """Whether some configured address is wild: Artemis would apply its setting to every address it
        matches (``HierarchicalRepository``), where the spec looks settings up by exact address, so then
        every address of the case gets a setting of its own (an exact match wins)."""
        return any(is_wild(self.options, address) for address in (*self.delays, *(a for _, a in self.node_delays)))

    def write_settings(self) -> None:
        """Every node's address settings: the configured delays, and the default for each other address of the
        case when :meth:`settings_for_every_address`."""
        delays = dict(self.delays)
        if self.settings_for_every_address():
            delays.update({name: (-1, False) for name in self.names if name not in delays})

        def entries(chosen: dict[str, tuple[int, bool]]) -> tuple[tuple[str, dict[str, str]], ...]:
            return tuple((self.real(address), {"redistribution_delay": str(self.ticks.milliseconds(delay)),
                                               "auto_create_queues": str(auto).lower()})
                         for address, (delay, auto) in sorted(chosen.items()))
        per_node = {node: entries(delays | {a: d for (n, a), d in self.node_delays.items() if n == node})
                    for node in self.cluster.names if any(n == node for n, _ in self.node_delays)}
        self.cluster.set_address_settings(entries(delays), per_node)

    def create_queue(self, command: CreateQueue) -> Outcome:
        if command.node not in self.nodes:
            return Refused(Refusal.UNKNOWN_NODE)
        if not command.enabled and not has_queue_enabled(self.cluster.version):
            return Refused(Refusal.NOT_SUPPORTED)
        self.ensure_type(command.address)
        address = self.ensure_address(command.address)
        node = self.cluster.nodes[command.node]
        try:
            if command.enabled and not command.purge_on_no_consumers:
                node.call("create_queue", address=address, routing_type=command.routing_type.value,
                          name=self.real(command.queue), filter=color_filter(command.filter), durable=True)
            elif command.enabled:  # every release has this management operation
                node.manage("createQueue", address, command.routing_type.value, self.real(command.queue),
                            color_filter(command.filter), True, -1, True, False)
            else:  # a queue configuration, 2.12 on
                node.manage("createQueue", disabled_queue_json(self.real(command.queue), address, command), False)
        except CallFailed as failure:
            if failure.has_type("QUEUE_EXISTS") or failure.mentions("AMQ229019"):
                return Refused(Refusal.QUEUE_EXISTS)
            raise UnexpectedRefusal(str(failure)) from None
        self.serials += 1
        if command.purge_on_no_consumers:
            self.purging.add((command.node, command.queue))
        routing_name = command.address if command.routing_type is RoutingType.ANYCAST else command.queue
        self.queues[(command.node, command.queue)] = QueueInfo(command.address, routing_name, self.serials)
        return Done(self.step_events())

    def update_queue(self, command: UpdateQueue) -> Outcome:
        """``updateQueue`` by management: a queue configuration naming only what changes (2.12 on), or before that
        the operation that takes the purge flag."""
        if command.node not in self.nodes:
            return Refused(Refusal.UNKNOWN_NODE)
        if (command.node, command.queue) not in self.queues:
            return Refused(Refusal.QUEUE_NOT_FOUND)
        if command.enabled is False and not has_queue_enabled(self.cluster.version):
            return Refused(Refusal.NOT_SUPPORTED)
        node = self.cluster.nodes[command.node]
        name = self.real(command.queue)
        try:
            if has_queue_enabled(self.cluster.version):
                change: dict[str, Any] = {"name": name}
                if command.enabled is not None:
                    change["enabled"] = command.enabled
                if command.purge_on_no_consumers is not None:
                    change["purge-on-no-consumers"] = command.purge_on_no_consumers
                node.manage("updateQueue", json.dumps(change))
            elif command.purge_on_no_consumers is not None:
                node.manage("updateQueue", name, None, None, command.purge_on_no_consumers)
        except CallFailed as failure:
            raise UnexpectedRefusal(str(failure)) from None
        if command.purge_on_no_consumers is not None:
            (self.purging.add if command.purge_on_no_consumers else self.purging.discard)((command.node, command.queue))
        if has_queue_enabled(self.cluster.version):  # a configuration without a filter clears it (LB-UPDATE-FILTER)
            self.cleared_filters.add((command.node, command.queue))
        return Done(self.step_events())

    def query_queue(self, command: QueryQueue) -> Outcome:
        """The node's queue query (``ClientSession.queueQuery``): binding, filter and counts, in the spec's names."""
        if command.node not in self.nodes:
            return Refused(Refusal.UNKNOWN_NODE)
        query = self.cluster.nodes[command.node].call("queue_query", name=self.real(command.queue))
        if not query["exists"]:
            return QueueQueried(False)
        address = str(query["address"])
        purging, enabled = query.get("purge_on_no_consumers"), query.get("enabled")
        return QueueQueried(True, address[len(self.prefix):] if address.startswith(self.prefix) else address,
                            RoutingType(query["routing_type"]), colour_of(query["filter"]), int(query["messages"]),
                            int(query["consumers"]), True if enabled is None else bool(enabled), bool(purging))

    def delete_queue(self, command: DeleteQueue) -> Outcome:
        key = (command.node, command.queue)
        if command.node not in self.nodes:
            return Refused(Refusal.QUEUE_NOT_FOUND)
        try:
            self.cluster.nodes[command.node].manage("destroyQueue", self.real(command.queue), False)
        except CallFailed as failure:
            if failure.has_code("AMQ229017"):
                return Refused(Refusal.QUEUE_NOT_FOUND)
            if failure.has_code("AMQ229025"):
                return Refused(Refusal.QUEUE_IN_USE)
            raise UnexpectedRefusal(str(failure)) from None
        self.queues.pop(key, None)
        self.purging.discard(key)
        self.cleared_filters.discard(key)
        return Done(self.step_events(Primary("drop", key)))

    def send(self, command: Send) -> Outcome:
        if command.node not in self.nodes:
            return Refused(Refusal.UNKNOWN_NODE)
        plain, prefix_type = strip_prefix(command.address, self.prefixes, PrefixMatch.HASH_MAP)
        prefix = command.address[:len(command.address) - len(plain)] if prefix_type is not None else ""
        if self.options.wildcard_routing and self.options.wildcard_matching is WildcardMatching.TREE \
                and is_wild(self.options, plain) and not any(info.address == plain for info in self.queues.values()):
            raise NotExpressible(WILD_SEND)
        effective = prefix_type or command.routing_type
        if command.tx is not None:
            refused = self.tx_refusal(command.tx, command.node)
            if refused is not None:
                if effective is RoutingType.ANYCAST and self.options.send_auto_create is not SendAutoCreate.NEVER \
                        and not any(key[0] == command.node and info.address == plain
                                    for key, info in self.queues.items()):
                    raise NotExpressible(TX_REFUSED_SEND)
                return Refused(refused)
        self.ensure_type(plain)
        node = self.cluster.nodes[command.node]
        session = f"{self.prefix}producer-{command.node}"
        if command.tx is not None:
            session = self.tx_session(command.tx, command.node)
        elif session not in self.sessions:
            node.call("session", id=session)
            self.sessions.add(session)
        message, tag = self.next_id, f"{self.prefix}{self.next_id}"
        self.next_id += 1
        properties: dict[str, Any] = {"_BS_TAG": {"kind": "string", "value": tag}}
        if command.color is not None:
            properties["color"] = {"kind": "string", "value": command.color}
        if command.grouped:
            properties["_AMQ_GROUP_ID"] = {"kind": "simple_string", "value": f"group-{tag}"}
        address = prefix + self.ensure_address(plain)  # the acceptor strips the prefix (LB-PREFIX)
        if command.fqqn_queue is not None:
            address = f"{address}::{self.real(command.fqqn_queue)}"
        routing_type = None if command.routing_type is None else command.routing_type.value
        try:
            self.cluster.driver.call("send", session=session, address=address, properties=properties,
                                     routing_type=routing_type)
        except CallFailed as failure:
            if failure.has_type("ADDRESS_DOES_NOT_EXIST") and effective is RoutingType.ANYCAST:
                self.next_id = message  # LB-AUTO-CREATE: refused before any message was made
                return Refused(Refusal.ADDRESS_DOES_NOT_EXIST)
            raise UnexpectedRefusal(str(failure)) from None
        if effective is RoutingType.ANYCAST and (command.node, plain) not in self.queues:
            self.note_auto_created(command.node, plain)
        snapshot, deliveries, records = self.settled_step()
        status = next((r["status"] for r in records[command.node] if r.get("tag") == tag and r["event"] == "send"),
                      None)
        if status not in ("OK", "NO_BINDINGS"):
            raise UnexpectedRefusal(f"the send of {tag} ended {status}")
        if command.tx is not None:  # routed now, landing at the commit (LB-TX-SEND)
            self.hold_send(command.tx, message, tag, command.node, records)
            return Sent(message, RoutingStatus(status), self.account(snapshot, deliveries, Primary(), (), records))
        landings = tuple(Instance(message, tag, key)
                         for key in first_landings(command.node, tag, records, self.peers(), self.prefix))
        events = self.account(snapshot, deliveries, Primary("send"), landings, records)
        return Sent(message, RoutingStatus(status), events)

    def note_auto_created(self, node: str, address: str) -> None:
        """Count the queue named like ``address`` that an ANYCAST send may have made on ``node``
        (LB-AUTO-CREATE), before the cluster is awaited: the other nodes' remote bindings of it are expected."""
        if self.cluster.nodes[node].call("queue_query", name=self.real(address))["exists"]:
            self.serials += 1
            self.queues[(node, address)] = QueueInfo(address, address, self.serials)

    def configure(self, command: Configure) -> Outcome:
        if command.node is not None and command.node not in self.nodes:
            return Refused(Refusal.UNKNOWN_NODE)
        if not self.cluster.driver.call("lb_type", name=command.lb_type.value)["exists"]:
            return Refused(Refusal.NOT_SUPPORTED)
        if command.node is None:
            self.lb_types[command.address] = command.lb_type
            self.delays[command.address] = (command.redistribution_delay, command.auto_create_queues)
            for key in [key for key in self.node_lb_types if key[1] == command.address]:
                del self.node_lb_types[key]
                del self.node_delays[key]
        else:
            self.node_lb_types[(command.node, command.address)] = command.lb_type
            self.node_delays[(command.node, command.address)] = (command.redistribution_delay,
                                                                 command.auto_create_queues)
        if any(info.address == command.address for info in self.queues.values()):
            self.ensure_type(command.address)  # else when the address's first queue or send needs it
        self.names.add(command.address)
        self.write_settings()
        return Done(self.step_events())

    def set_prefix(self, command: SetPrefix) -> Outcome:
        """Acceptor prefixes are acceptor parameters: every node restarts with the new set (queues and waiting
        messages are durable and outlive it; consumers would not, so with one open it is not expressible)."""
        prefixes = dict(self.prefixes)
        if command.routing_type is None:
            prefixes.pop(command.prefix, None)
        else:
            prefixes[command.prefix] = command.routing_type
        if prefixes != self.prefixes:
            if any(not prefix or OURS.match(prefix) or prefix.startswith("$") for prefix in prefixes):
                raise NotExpressible("a prefix that the adapter's own names or the cluster's internal addresses "
                                     "start with would be stripped from them too")
            self.restart("an acceptor's prefixes")
            self.cluster.set_prefixes({prefix: kind.value for prefix, kind in prefixes.items()})
            self.restarted()
            self.prefixes = prefixes
        return Done(self.step_events())

    def set_link(self, command: SetLink) -> Outcome:
        if command.node not in self.nodes or command.peer not in self.nodes:
            return Refused(Refusal.UNKNOWN_NODE)
        if command.node == command.peer:
            return Refused(Refusal.BAD_VALUE)
        raise NotExpressible("one direction of a cluster bridge cannot be cut over the client protocols")

    def tick(self, command: Tick) -> Outcome:
        if command.ticks < 1:
            return Refused(Refusal.BAD_VALUE)
        time.sleep(self.ticks.advance(command.ticks, time.monotonic()))
        return Done(self.step_events())
