"""The fast broker's demand: indexed registrations, incremental where it is safe, recomputed where not.

Introduction
------------
:class:`DemandTable` keeps every registration in a dict per (broker,
destination) and the bridges into each broker in a list, so propagation
touches only the bridges an advisory crosses. Adding one consumer
propagates only its own advisories, breadth first, as the spec's pass for
the latest consumer to arrive does: it joins existing conduit subscriptions
without leading them (rule TOPO-NC-ORDER); removing one drops the
registrations that stood for it alone. Both are exact only when no
tie-break of the spec can change (``brokerspec.spec.topologies.demand``):

* a removed consumer that shared a conduit subscription with others
  changes that subscription's members (and perhaps its lead);
* duplicate suppression compares subscriptions of different consumers.

In those cases, and after any change of the topology itself, the table is
rebuilt by the same breadth-first pass the spec describes. The rules that
decide single steps are methods (the *seams*), so a planted-bug subclass can
break exactly one: :meth:`Rules.within_consumer_ttl`, :meth:`Rules.is_loop`,
:meth:`Rules.tree_forwarded`, :meth:`Rules.can_conduit`,
:meth:`Rules.within_message_ttl` (in :mod:`.broker`) and
:meth:`DemandTable.remove_consumer`.
"""

from __future__ import annotations

from brokerspec.spec.topologies import BridgeConfig, Role, is_permitted, is_topic

PRIORITY_BASE = -5


class Link:
    """A directed bridge local=>remote with its settings (``tree`` for a tree link)."""

    __slots__ = ("local", "remote", "config", "tree", "consumer_ttl", "message_ttl", "conduit")

    def __init__(self, local: str, remote: str, config: BridgeConfig, tree: bool) -> None:
        self.local = local
        self.remote = remote
        self.config = config
        self.tree = tree
        self.consumer_ttl = config.consumer_ttl
        self.message_ttl = config.message_ttl
        self.conduit = config.conduit


class Reg:
    """A registration; a conduit one keeps its members (remote key -> (arrival rank, path, priority, origins))."""

    __slots__ = ("broker", "destination", "key", "via", "path", "origins", "priority", "network", "conduit",
                 "members")

    def __init__(self, broker: str, destination: str, key: str, via: str | None, path: tuple[str, ...],
                 origins: frozenset[str], priority: int, network: bool, conduit: bool) -> None:
        self.broker = broker
        self.destination = destination
        self.key = key
        self.via = via
        self.path = path
        self.origins = origins
        self.priority = priority
        self.network = network
        self.conduit = conduit
        self.members: dict[str, tuple[int, tuple[str, ...], int, frozenset[str]]] = {}

    def copy(self) -> Reg:
        """A snapshot of this registration as it stands (what its advisory carries onward)."""
        twin = Reg(self.broker, self.destination, self.key, self.via, self.path, self.origins, self.priority,
                   self.network, self.conduit)
        return twin

    def refresh(self) -> None:
        """Take path and priority from the lead member (the first to arrive) and origins from all members."""
        lead = min(self.members, key=lambda k: (self.members[k][0], len(self.members[k][1]), k))
        _, self.path, self.priority, _ = self.members[lead]
        origins: set[str] = set()
        for _, _, _, member_origins in self.members.values():
            origins |= member_origins
        self.origins = frozenset(origins)


class Restart(Exception):
    """Raised inside a pass: a settled subscription must be barred (suppression) and the pass run again."""

    def __init__(self, ident: tuple[str, str, str]) -> None:
        super().__init__(ident)
        self.ident = ident


class NeedsRebuild(Exception):
    """Raised by an incremental change that the tie-break rules make unsafe; the caller rebuilds."""


class Rules:
    """The single-step rules, as overridable methods (the seams)."""

    parents: dict[str, str]
    roles: dict[str, Role]

    def within_consumer_ttl(self, ttl: int, path: tuple[str, ...]) -> bool:
        """consumerTTL (``DemandForwardingBridgeSupport.serviceRemoteConsumerAdvisory``)."""
        return ttl == -1 or len(path) < ttl  # equivalent mutants (Eq_LtE): a TTL is -1 or positive

    def is_loop(self, local: str, path: tuple[str, ...]) -> bool:
        """The loop check ("already routed through this broker once", ``serviceRemoteConsumerAdvisory``)."""
        return local in path

    def can_conduit(self, config: BridgeConfig, destination: str, remote_is_network: bool) -> bool:
        """``ConduitBridge.canConduit``."""
        return config.conduit and (is_topic(destination) or not remote_is_network or config.conduit_network_queues)

    def tree_forwarded(self, link: Link, remote: Reg) -> bool:
        """Seed 002 rules 3-5: up always; down only what started here (branch or root) or came from above."""
        sender = link.remote
        parent = self.parents.get(sender)
        if parent == link.local:
            return True
        if remote.via is None:
            return self.roles.get(sender) is not Role.LEAF
        return remote.via == parent

    def accepts(self, link: Link, remote: Reg) -> bool:
        """Whether ``link`` turns ``remote``'s advisory into a candidate on its local broker."""
        if link.tree:
            return self.tree_forwarded(link, remote) and not self.is_loop(link.local, remote.path)
        return (self.within_consumer_ttl(link.consumer_ttl, remote.path) and not self.is_loop(link.local, remote.path)
                and is_permitted(link.config, remote.destination))

    def priority(self, config: BridgeConfig, path: tuple[str, ...], remote_priority: int) -> int:
        """The demand subscription's priority (``DemandForwardingBridgeSupport.doCreateDemandSubscription``)."""
        if not config.decrease_priority:
            return remote_priority
        return PRIORITY_BASE - (len(path) + 1) if len(path) > 1 else PRIORITY_BASE  # equivalent mutants (Gt_NotEq): the path holds at least the remote broker


class DemandTable:
    """Registrations by (broker, destination) and key, with the propagation passes."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.regs: dict[tuple[str, str], dict[str, Reg]] = {}
        self.into: dict[str, list[Link]] = {}
        self.suppressing: set[bool] = set()
        """The destination kinds (``is_topic``) some bridge suppresses duplicates for: those always rebuild."""
        self.limit = 1  # equivalent mutants: _add_broker sets it before any pass (a pass needs a consumer on a known broker)
        """A path can never be longer than the number of brokers; a guard against a broken loop check."""
        self.arrivals = 0
        """How many consumers' passes have run since the last rebuild: the next one's arrival rank."""
        self.settled: set[tuple[str, str, str]] = set()
        """Registrations whose advisories have gone out (suppression may not just delete them)."""

    # --- whole passes --------------------------------------------------------------

    def rebuild(self, consumers: list[Reg]) -> set[tuple[str, str]]:
        """Recompute everything from the client registrations, given in arrival order; the places touched."""
        before = set(self.regs)
        barred: set[tuple[str, str, str]] = set()
        while True:
            self.regs = {}
            self.arrivals = 0
            self.settled = set()
            try:
                for client in consumers:
                    self._pass(client, barred)
            except Restart as restart:
                barred.add(restart.ident)
                continue
            return before | set(self.regs)

    def add_consumer(self, client: Reg) -> None:
        """Propagate one new consumer's advisories; NeedsRebuild when suppression could change a tie-break."""
        if is_topic(client.destination) in self.suppressing:
            raise NeedsRebuild()
        self._pass(client, set())

    def remove_consumer(self, client: Reg) -> None:
        """Drop every registration that stood for this consumer alone (the cascade); NeedsRebuild otherwise."""
        if is_topic(client.destination) in self.suppressing:
            raise NeedsRebuild()
        doomed: list[tuple[tuple[str, str], str]] = []
        for place, table in self.regs.items():
            if place[1] != client.destination:  # equivalent mutants (NotEq_Gt, NotEq_Lt): consumer IDs are unique, so no other destination's registration holds this key
                continue
            for key, reg in table.items():
                if client.key in reg.origins:
                    if len(reg.origins) != 1:  # equivalent mutants: the consumer's own registration has one origin, so each variant agrees or always rebuilds
                        raise NeedsRebuild()
                    doomed.append((place, key))
        for place, key in doomed:
            del self.regs[place][key]
            if not self.regs[place]:
                del self.regs[place]

    def _pass(self, client: Reg, barred: set[tuple[str, str, str]]) -> None:
        """Breadth first from one client consumer, the latest to arrive."""
        rank = self.arrivals
        self.arrivals += 1
        frontier = [client]
        self._put(client)
        level = 0  # equivalent mutants: the level bound is never reached: a path has under n brokers, so a pass ends within n levels
        while frontier:
            level += 1  # equivalent mutants: the level bound is never reached: the loop check ends a pass within n levels
            if level > self.limit:  # equivalent mutants (Gt_Eq, Gt_GtE, Gt_Is): never true either: a pass ends within n levels and the limit is n+1
                break  # equivalent mutants: never reached: a pass ends within n levels and the limit is n+1
            for reg in frontier:
                self.settled.add((reg.broker, reg.destination, reg.key))
            created: dict[tuple[str, str, str], Reg] = {}
            for remote in frontier:
                for link in self.into.get(remote.broker, ()):
                    self._offer(link, remote, created, barred, rank)
            frontier = [reg.copy() for reg in created.values() if self._get(reg) is reg]

    def _offer(self, link: Link, remote: Reg, created: dict[tuple[str, str, str], Reg],
               barred: set[tuple[str, str, str]], rank: int) -> None:
        rules = self.rules
        if not rules.accepts(link, remote):
            return
        config = link.config
        destination = remote.destination
        path = remote.path + (link.remote,)
        priority = rules.priority(config, path, remote.priority)
        conduit = rules.can_conduit(config, destination, remote.network)
        key = f"{link.local}<{link.remote}:" + ("*" if conduit else remote.key)
        ident = (link.local, destination, key)
        if ident in barred:
            return
        place = (link.local, destination)
        table = self.regs.setdefault(place, {})
        existing = table.get(key)
        member = (rank, path, priority, remote.origins)
        if conduit and existing is not None:
            existing.members[remote.key] = member
            existing.refresh()
            return
        if config.suppress_duplicate_topics if is_topic(destination) else config.suppress_duplicate_queues:
            for other_key, other in list(table.items()):
                if not other.network or not other.origins & remote.origins:
                    continue
                if other.priority >= priority:
                    return
                if (place[0], destination, other_key) in self.settled:
                    raise Restart((place[0], destination, other_key))
                del table[other_key]
        reg = Reg(link.local, destination, key, link.remote, path, remote.origins, priority, True, conduit)
        reg.members[remote.key] = member
        table[key] = reg
        created[ident] = reg

    def _put(self, reg: Reg) -> None:
        self.regs.setdefault((reg.broker, reg.destination), {})[reg.key] = reg

    def _get(self, reg: Reg) -> Reg | None:
        return self.regs.get((reg.broker, reg.destination), {}).get(reg.key)
