"""The fast topology broker: indexed, mutable, incremental where the rules allow.

Introduction
------------
:class:`FastTopologyBroker` keeps the network in plain dicts: connectors by
(source, target), directed links by (local, remote), tree parents and roles,
and the demand in a :class:`~.demand.DemandTable`. A consumer opening or
closing changes only its own registrations (the table falls back to a
rebuild when a tie-break could move); a topology change rebuilds the table.
Each queue's dispatch list is a Python list rotated in place; waiting
messages are spec ``Message`` values in per-broker lists. Spec values are
built only in :meth:`snapshot`; :meth:`check_valid` compares the indexes
with each other and with the spec's derivation.

Seams for planted mistakes (one rule each): the :class:`~.demand.Rules`
methods, :meth:`within_message_ttl`, and ``DemandTable.remove_consumer``
through :meth:`_make_table`.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from typing import Any

from brokerspec.spec import FrozenMap, InvariantBroken, Profile
from brokerspec.spec.topologies import (
    MAX_HOPS,
    AddBroker,
    AddProducer,
    Applied,
    DemandQueried,
    Holding,
    BridgeConfig,
    Connect,
    Connector,
    Consumer,
    Delivered,
    Disconnect,
    Dropped,
    Event,
    Message,
    Move,
    NetworkConnector,
    Producer,
    Refusal,
    Refused,
    Registration,
    RemoveProducer,
    Role,
    Send,
    Sent,
    SetReplay,
    SetTtl,
    QueryDemand,
    Subscribe,
    TopologyCommand,
    TopologyOutcome,
    TopologyState,
    TreeConnect,
    TreeConnector,
    Unsubscribe,
    Waiting,
    is_topic,
)

from .demand import DemandTable, Link, NeedsRebuild, Reg, Rules

TREE_CONFIG = BridgeConfig(consumer_ttl=-1, message_ttl=-1, conduit=True, conduit_network_queues=True,  # equivalent mutants (Delete_USub, USub_UAdd): accepts never reads a tree link's consumer_ttl
                           suppress_duplicate_topics=False)  # equivalent mutants: tree links form a forest, so no two subscriptions on a broker share a consumer; it only forces rebuilds
"""The settings of a tree link: no TTLs, everything conduits, no suppression (spec ``get_bridges``)."""


class FastTopologyBroker(Rules):
    """The whole network in indexed, mutable form; speaks the spec's commands and outcomes."""

    def __init__(self, profile: Profile | None = None) -> None:
        self._brokers: list[str] = []
        self._known: set[str] = set()
        self._connectors: dict[tuple[str, str], Connector] = {}
        self._design: dict[str, str] = {}
        self.parents: dict[str, str] = {}
        self.roles: dict[str, Role] = {}
        self._children: dict[str, set[str]] = {}
        self._links: dict[tuple[str, str], Link] = {}
        self._connector_count: dict[str, int] = {}
        self._suppressing = {False: 0, True: 0}
        self._replay: set[str] = set()
        self._consumers: dict[str, Consumer] = {}
        self._producers: dict[str, Producer] = {}
        self._table = self._make_table()
        self._dispatch: dict[tuple[str, str], list[str]] = {}
        self._waiting: dict[str, list[Message]] = {}
        self._next_message = 1
        self._handlers: dict[type, Callable[[Any], TopologyOutcome]] = {
            AddBroker: self._add_broker, Connect: self._connect, TreeConnect: self._tree_connect,
            Disconnect: self._disconnect, Move: self._move, SetTtl: self._set_ttl, SetReplay: self._set_replay,
            Subscribe: self._subscribe, Unsubscribe: self._unsubscribe, AddProducer: self._add_producer,
            RemoveProducer: self._remove_producer, Send: self._send, QueryDemand: self._query_demand,
        }

    def _make_table(self) -> DemandTable:
        """The demand table (a seam: a planted subclass may return a broken one)."""
        return DemandTable(self)

    # --- the protocol --------------------------------------------------------------

    def execute(self, command: TopologyCommand) -> TopologyOutcome:
        """Apply one command; the outcome the spec would give."""
        handler = self._handlers.get(type(command))
        if handler is None:
            raise TypeError(f"not a topology command: {command!r}")
        return handler(command)

    def within_message_ttl(self, ttl: int, path: tuple[str, ...]) -> bool:
        """messageTTL (``NetworkBridgeFilter``)."""
        return ttl == -1 or len(path) < ttl  # equivalent mutants (Eq_LtE): a TTL is -1 or positive

    # --- topology --------------------------------------------------------------------

    def _query_demand(self, command: QueryDemand) -> TopologyOutcome:
        """The brokers with a registration for the destination (TOPO-QUERY-DEMAND)."""
        held = [reg for (_, destination), table in self._table.regs.items() if destination == command.destination
                for reg in table.values()]
        holdings = sorted((reg.broker, reg.path, reg.priority) for reg in held)
        return DemandQueried(command.destination, tuple(sorted({reg.broker for reg in held})),
                             tuple(Holding(*holding) for holding in holdings))

    def _refused(self, reason: Refusal) -> Refused:
        return Refused(reason)

    def _add_broker(self, command: AddBroker) -> TopologyOutcome:
        if command.broker in self._known:
            return self._refused(Refusal.BROKER_EXISTS)
        self._brokers.append(command.broker)
        self._known.add(command.broker)
        self._table.limit = len(self._brokers) + 1  # equivalent mutants: any bound of n-1 levels or more is never reached: the loop check keeps a path under n brokers
        return Applied()

    def _linked(self, a: str, b: str) -> bool:
        return (a, b) in self._connectors or (b, a) in self._connectors

    def _connect(self, command: Connect) -> TopologyOutcome:
        source, target = command.source, command.target
        if source not in self._known or target not in self._known:
            return self._refused(Refusal.UNKNOWN_BROKER)
        if source == target:
            return self._refused(Refusal.SELF_LINK)
        reverse = self._connectors.get((target, source))
        if (source, target) in self._connectors or (reverse is not None and (
                command.duplex or not isinstance(reverse, NetworkConnector) or reverse.duplex)):
            return self._refused(Refusal.ALREADY_CONNECTED)
        if self._design.get(source) == "tree" or self._design.get(target) == "tree":
            return self._refused(Refusal.MIXED_DESIGNS)
        self._put_connector(NetworkConnector(source, target, command.duplex, command.config))
        return self._after_topology_change()

    def _tree_refusal(self, broker: str, parent: str, role: Role) -> Refusal | None:
        if broker == parent:
            return Refusal.SELF_LINK
        if self._design.get(broker) == "network" or self._design.get(parent) == "network":
            return Refusal.MIXED_DESIGNS
        if self.roles.get(parent) is Role.LEAF or (role is Role.LEAF and self._children.get(broker)):
            return Refusal.PARENT_IS_LEAF
        ancestor: str | None = parent
        while ancestor is not None:
            if ancestor == broker:
                return Refusal.CYCLE
            ancestor = self.parents.get(ancestor)
        return None

    def _tree_connect(self, command: TreeConnect) -> TopologyOutcome:
        source, target = command.source, command.target
        if source not in self._known or target not in self._known:
            return self._refused(Refusal.UNKNOWN_BROKER)
        if source in self.parents:
            return self._refused(Refusal.HAS_PARENT)
        if source != target and self._linked(source, target):
            return self._refused(Refusal.ALREADY_CONNECTED)
        refusal = self._tree_refusal(source, target, command.role)
        if refusal is not None:
            return self._refused(refusal)
        self._put_connector(TreeConnector(source, target, command.role))
        return self._after_topology_change()

    def _disconnect(self, command: Disconnect) -> TopologyOutcome:
        if command.source not in self._known or command.target not in self._known:
            return self._refused(Refusal.UNKNOWN_BROKER)
        if (command.source, command.target) not in self._connectors:
            return self._refused(Refusal.NOT_CONNECTED)
        self._drop_connector((command.source, command.target))
        return self._after_topology_change()

    def _move(self, command: Move) -> TopologyOutcome:
        broker, parent = command.broker, command.parent
        if broker not in self._known or parent not in self._known:
            return self._refused(Refusal.UNKNOWN_BROKER)
        old_parent = self.parents.get(broker)
        if old_parent is None:
            return self._refused(Refusal.NOT_IN_TREE)
        if parent != old_parent and self._linked(broker, parent):
            return self._refused(Refusal.ALREADY_CONNECTED)
        role = self.roles[broker]
        old = self._connectors[(broker, old_parent)]
        self._drop_connector((broker, old_parent))
        refusal = self._tree_refusal(broker, parent, role)
        if refusal is not None:
            self._put_connector(old)
            return self._refused(refusal)
        self._put_connector(TreeConnector(broker, parent, role))
        return self._after_topology_change()

    def _set_ttl(self, command: SetTtl) -> TopologyOutcome:
        if command.source not in self._known or command.target not in self._known:
            return self._refused(Refusal.UNKNOWN_BROKER)
        connector = self._connectors.get((command.source, command.target))
        if not isinstance(connector, NetworkConnector):
            return self._refused(Refusal.NOT_CONNECTED)
        config = connector.config
        new_config = BridgeConfig(command.consumer_ttl, command.message_ttl, config.conduit,
                                  config.conduit_network_queues, config.decrease_priority,
                                  config.suppress_duplicate_queues, config.suppress_duplicate_topics,
                                  config.include, config.exclude)
        self._drop_connector((command.source, command.target))
        self._put_connector(NetworkConnector(connector.source, connector.target, connector.duplex, new_config))
        return self._after_topology_change()

    def _set_replay(self, command: SetReplay) -> TopologyOutcome:
        if command.broker not in self._known:
            return self._refused(Refusal.UNKNOWN_BROKER)
        if command.enabled:
            self._replay.add(command.broker)
        else:
            self._replay.discard(command.broker)
        return Applied(tuple(self._settle()))

    def _put_connector(self, connector: Connector) -> None:
        key = (connector.source, connector.target)
        self._connectors[key] = connector
        kind = "tree" if isinstance(connector, TreeConnector) else "network"
        for broker in key:
            self._design[broker] = kind
            self._connector_count[broker] = self._connector_count.get(broker, 0) + 1
        if isinstance(connector, TreeConnector):
            self.parents[connector.source] = connector.target
            self.roles[connector.source] = connector.role
            self._children.setdefault(connector.target, set()).add(connector.source)
            self._add_link(Link(connector.source, connector.target, TREE_CONFIG, True))
            self._add_link(Link(connector.target, connector.source, TREE_CONFIG, True))  # equivalent mutants (ReplaceTrueWithFalse): an upward link always forwards, as a TTL -1 unfiltered bridge does
        else:
            self._add_link(Link(connector.source, connector.target, connector.config, False))
            if connector.duplex:
                self._add_link(Link(connector.target, connector.source, connector.config, False))

    def _drop_connector(self, key: tuple[str, str]) -> None:
        connector = self._connectors.pop(key)
        self._remove_link(key)
        if isinstance(connector, TreeConnector) or connector.duplex:
            self._remove_link((key[1], key[0]))
        if isinstance(connector, TreeConnector):
            del self.parents[connector.source]
            del self.roles[connector.source]
            self._children[connector.target].discard(connector.source)
        for broker in key:
            self._connector_count[broker] -= 1
            if not self._connector_count[broker]:
                del self._connector_count[broker]
                self._design.pop(broker, None)

    def _add_link(self, link: Link) -> None:
        """Index a bridge: by its ends, in its remote broker's list (ordered by local broker), and its suppression."""
        self._links[(link.local, link.remote)] = link
        bisect.insort(self._table.into.setdefault(link.remote, []), link, key=lambda other: other.local)
        self._count_suppression(link.config, 1)

    def _remove_link(self, pair: tuple[str, str]) -> None:
        link = self._links.pop(pair, None)
        if link is None:
            return
        into = self._table.into[link.remote]
        into.remove(link)
        if not into:
            del self._table.into[link.remote]
        self._count_suppression(link.config, -1)

    def _count_suppression(self, config: BridgeConfig, change: int) -> None:
        """Keep ``DemandTable.suppressing``: the destination kinds some bridge suppresses duplicates for."""
        for topic, on in ((False, config.suppress_duplicate_queues), (True, config.suppress_duplicate_topics)):
            if on:
                self._suppressing[topic] += change
                if self._suppressing[topic]:
                    self._table.suppressing.add(topic)
                else:
                    self._table.suppressing.discard(topic)

    def _after_topology_change(self) -> TopologyOutcome:
        if self._consumers or self._table.regs:  # equivalent mutants (AddNot, ReplaceOrWithAnd): regs is non-empty exactly when a consumer is open (each has its own registration)
            self._rebuild()
        return Applied(tuple(self._settle()))

    def _rebuild(self) -> None:
        touched = self._table.rebuild([self._client(c) for c in self._consumers.values()])
        self._update_dispatch(touched)

    # --- clients ---------------------------------------------------------------------

    def _client(self, consumer: Consumer) -> Reg:
        return Reg(consumer.broker, consumer.destination, consumer.id, None, (), frozenset({consumer.id}),
                   consumer.priority, False, False)

    def _subscribe(self, command: Subscribe) -> TopologyOutcome:
        if command.broker not in self._known:
            return self._refused(Refusal.UNKNOWN_BROKER)
        if command.consumer in self._consumers:
            return self._refused(Refusal.CONSUMER_EXISTS)
        consumer = Consumer(command.consumer, command.broker, command.destination, command.priority)
        self._consumers[command.consumer] = consumer
        before = {place: set(table) for place, table in self._table.regs.items()
                  if place[1] == consumer.destination}  # equivalent mutants: before only narrows the places refreshed; refreshing an unchanged place keeps its dispatch order
        try:
            self._table.add_consumer(self._client(consumer))
        except NeedsRebuild:
            self._rebuild()
            return Applied(tuple(self._settle()))
        touched = {place for place, table in self._table.regs.items()
                   if place[1] == consumer.destination and set(table) != before.get(place)}  # equivalent mutants (AndWithOr, Eq_GtE, Eq_LtE): extra places only; refreshing an unchanged place keeps its dispatch order
        self._update_dispatch(touched)
        return Applied(tuple(self._settle()))

    def _unsubscribe(self, command: Unsubscribe) -> TopologyOutcome:
        consumer = self._consumers.pop(command.consumer, None)
        if consumer is None:
            return self._refused(Refusal.CONSUMER_NOT_FOUND)
        places = {place for place in self._table.regs if place[1] == consumer.destination}  # equivalent mutants (Eq_GtE, Eq_LtE): extra places only; refreshing an unchanged place keeps its dispatch order
        try:
            self._table.remove_consumer(self._client(consumer))
        except NeedsRebuild:
            self._rebuild()
            return Applied(tuple(self._settle()))
        self._update_dispatch(places)
        return Applied(tuple(self._settle()))

    def _add_producer(self, command: AddProducer) -> TopologyOutcome:
        if command.broker not in self._known:
            return self._refused(Refusal.UNKNOWN_BROKER)
        if command.producer in self._producers:
            return self._refused(Refusal.PRODUCER_EXISTS)
        self._producers[command.producer] = Producer(command.producer, command.broker, command.destination)
        return Applied()

    def _remove_producer(self, command: RemoveProducer) -> TopologyOutcome:
        if self._producers.pop(command.producer, None) is None:
            return self._refused(Refusal.PRODUCER_NOT_FOUND)
        return Applied()

    def _update_dispatch(self, places: set[tuple[str, str]]) -> None:
        regs = self._table.regs
        for place in places:
            if is_topic(place[1]):
                continue
            table = regs.get(place)
            if not table:
                self._dispatch.pop(place, None)
                continue
            old = self._dispatch.get(place, [])
            kept = [key for key in old if key in table]
            known = set(kept)
            kept.extend(sorted(key for key in table if key not in known))
            self._dispatch[place] = kept

    # --- messages --------------------------------------------------------------------

    def _send(self, command: Send) -> TopologyOutcome:
        if command.broker not in self._known:
            return self._refused(Refusal.UNKNOWN_BROKER)
        number = self._next_message
        self._next_message += 1
        events: list[Event] = []
        self._route(command.broker, Message(number, command.destination), events)
        return Sent(number, tuple(events))

    def _eligible(self, broker: str, message: Message) -> list[Reg]:
        table = self._table.regs.get((broker, message.destination))
        if not table:
            return []
        path = message.path
        topic = is_topic(message.destination)
        replay = False
        if broker in self._replay and not topic:
            replay = not any(reg.via is None for reg in table.values())
        eligible = []
        for reg in table.values():
            via = reg.via
            if via is None:
                eligible.append(reg)
            elif len(path) < MAX_HOPS and (  # equivalent mutants (Lt_NotEq, Lt_IsNot): a path grows one broker a hop from empty and stops at MAX_HOPS, so is never longer
                    replay if via in path else self.within_message_ttl(self._links[(broker, via)].message_ttl, path)):
                eligible.append(reg)
        return eligible

    def _route(self, broker: str, message: Message, events: list[Event]) -> None:
        while True:
            eligible = self._eligible(broker, message)
            if is_topic(message.destination):
                if not eligible:
                    events.append(Dropped(message.id, broker, message.path))
                    return
                forward = message.path + (broker,)
                for reg in sorted(eligible, key=lambda r: r.key):
                    if reg.via is None:
                        events.append(Delivered(message.id, reg.key, broker, message.path))
                    else:
                        self._route(reg.via, Message(message.id, message.destination, forward), events)
                return
            if not eligible:
                self._waiting.setdefault(broker, []).append(message)
                events.append(Waiting(message.id, broker, message.path))
                return
            if len(eligible) == 1:  # equivalent mutants: a fast path; the general choice picks the only one too
                chosen = eligible[0]  # equivalent mutants: a list of one
            else:
                top = max(reg.priority for reg in eligible)
                best = {reg.key: reg for reg in eligible if reg.priority == top}  # equivalent mutants (Eq_GtE): top is the maximum
                chosen = next(best[key] for key in self._dispatch[(broker, message.destination)] if key in best)
            order = self._dispatch[(broker, message.destination)]
            if order[-1] != chosen.key:
                order.remove(chosen.key)
                order.append(chosen.key)
            if chosen.via is None:
                events.append(Delivered(message.id, chosen.key, broker, message.path))
                return
            message = Message(message.id, message.destination, message.path + (broker,))
            broker = chosen.via

    def _settle(self) -> list[Event]:
        events: list[Event] = []
        moved = True
        while moved and self._waiting:
            moved = False
            for broker in sorted(self._waiting):
                held = self._waiting[broker]
                for index, message in enumerate(held):
                    if self._eligible(broker, message):
                        del held[index]
                        if not held:
                            del self._waiting[broker]
                        self._route(broker, message, events)
                        moved = True
                        break
                if moved:
                    break
        return events

    # --- views -------------------------------------------------------------------------

    def snapshot(self) -> TopologyState:
        """The network as a spec state."""
        demand = sorted(
            (Registration(r.broker, r.destination, r.key, r.via, r.path, r.origins, r.priority, r.network, r.conduit)
             for table in self._table.regs.values() for r in table.values()),
            key=lambda r: (r.broker, r.destination, r.key))
        return TopologyState(
            brokers=tuple(self._brokers),
            connectors=FrozenMap(self._connectors),
            replay=frozenset(self._replay),
            consumers=FrozenMap(self._consumers),
            producers=FrozenMap(self._producers),
            demand=tuple(demand),
            dispatch=FrozenMap({place: tuple(order) for place, order in self._dispatch.items()}),
            waiting=FrozenMap({broker: tuple(held) for broker, held in self._waiting.items()}),
            next_message=self._next_message,
        )

    def check_valid(self) -> None:
        """Raise InvariantBroken naming each private index that disagrees with the others."""
        from .validity import find_problems

        problems = find_problems(self)
        if problems:
            raise InvariantBroken("; ".join(problems))
