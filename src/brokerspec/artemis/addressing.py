"""Address resolution on a real Artemis broker: each spec operation as client and management calls.

Introduction
------------
The adapter performs an operation the way a client or an administrator of a
real broker would, then reports what the broker did in the spec's outcome
vocabulary. It never consults the spec: every field of an outcome is read
from the broker (a management query, a queue query, the probe's record of
where a message went, the AMQ code of a refusal).

=====================  =============================================================================
spec operation         on the broker
=====================  =============================================================================
``create_address``     management ``createAddress(name, routingTypes)``
``delete_address``     management ``deleteAddress(name, force)``
``create_queue``       management ``createQueue(address, routingType, name, ...)``, durable, no filter
``delete_queue``       a core session's ``deleteQueue(name)`` (acceptor prefixes stripped, as the spec
                       strips them); consumers this adapter opened on it are closed first, since the
                       address model has no consumers of its own
``lookup``             a core session's ``queueQuery(name)``
``send``               a core producer's send to ``name`` with ``_AMQ_ROUTING_TYPE`` set from the
                       routing type; where it went is the probe's record of the routing context
``consume``            a consumer of Artemis's core JMS client (``ActiveMQConnectionFactory``): a JMS
                       queue for ANYCAST or no routing type, a JMS topic for MULTICAST on an FQQN
``set_prefix``         the acceptor's ``anycastPrefix`` / ``multicastPrefix``, then a restart
``set_address_settings``  an ``address-setting`` in ``broker.xml``, re-read by the running broker
=====================  =============================================================================

Not expressible over these clients (the operation gets a
:class:`~.sut.NotExpressible` error reply, which the fidelity report counts
apart from disagreements): a MULTICAST consume that the JMS client turns
into a subscription (it makes a subscription queue with a generated name for a topic consumer on an
address, or on an FQQN before 2.12, rather than attaching to the queue of
that name), and an address-settings match that is empty (``broker.xml`` has
no way to say it).

Outcome fields the broker does not name are read as follows: ``copies``
are the MULTICAST queues the message reached (every queue it reached, for
an FQQN send); ``anycast_candidates`` are the address's ANYCAST queues (and,
for a message without a routing type, a MULTICAST queue named like the
address, which shares their routing name) when the message reached exactly
one of them (the broker picked one; the
spec names the set it picks from), else the ANYCAST queues it reached;
``created_*`` are the addresses and queues that exist after the operation
and did not before.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any

from brokerspec.spec import ConsumerModel, Outcome, Profile
from brokerspec.spec.addressing import (
    AddressQueried,
    Consume,
    CreateAddress,
    CreateQueue,
    DeleteAddress,
    DeleteQueue,
    Lookup,
    QueryAddress,
    RoutingType,
    Send,
    SetAddressSettings,
    SetPrefix,
)
from brokerspec.spec.addressing.outcomes import (
    AddressCreated,
    AddressDeleted,
    AddressExists,
    AddressHasQueues,
    AddressNotFound,
    Attached,
    Configured,
    InvalidName,
    NotFound,
    QueueCreated,
    QueueDeleted,
    QueueExists,
    QueueNotFound,
    QueueRoutingTypeMismatch,
    Reason,
    Rejected,
    Resolved,
    RoutingTypeNotAllowed,
    Routed,
)

from .driver import CallFailed, Cause
from .node import RELOAD_SENTINEL, Node
from .outcomes import NotExpressible, UnexpectedRefusal, new_tag

SEPARATOR = "::"
GENERATED = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
"""A queue name the JMS client makes up for a subscription (a random UUID)."""

LEGACY_QUEUE_PREFIX = "jms.queue."
"""The JMS client's 1.x queue prefix, which it tries when a queue by the name given cannot be used."""
LEGACY_PREFIXES = (LEGACY_QUEUE_PREFIX, "jms.topic.")
"""The 1.x prefixes the JMS client falls back to, for a queue and for a topic (an FQQN topic consumer too)."""


def fqqn(address: str, queue: str) -> str:
    """``address::queue``."""
    return f"{address}{SEPARATOR}{queue}"


def settled_settings(settings: tuple[tuple[str, Any], ...]) -> tuple[tuple[str, Any], ...]:
    """Address settings without the reload sentinels, which differ on every rewrite and mean nothing to a domain."""
    return tuple(s for s in settings if not s[0].startswith(RELOAD_SENTINEL))


def otherwise(found: str | None, fallback: str) -> str:
    """``found`` unless the broker's message did not give it; an empty name the message gives is kept."""
    return fallback if found is None else found


def quoted_after(message: str, pattern: str) -> str | None:
    """The first group of ``pattern`` in ``message``, or None."""
    found = re.search(pattern, message)
    return found.group(1) if found else None


class AddressingAdapter:
    """The address-resolution domain on one Artemis node."""

    def __init__(self, node: Node) -> None:
        self.node = node
        self.base = node.config
        self.profile: Profile | None = None
        self.consumers: list[str] = []
        self.sessions: list[str] = []
        """The core sessions of the core-client consumers (one each)."""
        self.subscriptions: dict[str, str] = {}
        """Consumer -> queue, for the JMS topic consumers on an FQQN (non-durable subscriptions)."""
        self.tags = 0

    # --- lifecycle -------------------------------------------------------------------------------

    def reset(self, profile: Profile) -> None:
        """An empty broker: this adapter's consumers closed, default settings and prefixes, no address left."""
        self.profile = profile
        self.close_consumers()
        config = self.node.config
        settings = settled_settings(self.base.address_settings)
        if dict(config.prefixes) != dict(self.base.prefixes):
            # the restart re-reads broker.xml whole: the settings go back with the prefixes, or a scenario
            # that changed both would leave its settings (auto-creation off, say) to every later one
            self.node.reconfigure(dataclasses.replace(config, prefixes=self.base.prefixes, address_settings=settings),
                                  restart=True)
        elif settled_settings(config.address_settings) != settings:
            self.node.reconfigure(dataclasses.replace(config, address_settings=settings), restart=False)
        for address in sorted(self.node.addresses()):
            self.node.manage("deleteAddress", address, True)
        left = self.node.addresses() | set(self.node.queues())
        if left:
            raise UnexpectedRefusal(f"the broker still holds {sorted(left)} after the reset")

    def leave(self) -> None:
        """Another domain's cases come next: close this adapter's consumers."""
        self.close_consumers()

    def close_consumers(self, keep_queues: bool = False) -> None:
        """Close every consumer this adapter opened; with ``keep_queues``, the queues stay as they were.

        A JMS topic consumer on an FQQN is a non-durable subscription to the
        queue it names, and closing it deletes that queue, whoever made it
        (``ActiveMQMessageConsumer.close`` deletes its ``autoDeleteQueueName``).
        The spec has no closing consumer, so where its queues must outlive the
        consumers (before a deletion, a restart), a queue that went with its
        consumer is made again as it was. The JMS client deletes through a core
        session, so from 2.20 an auto-created address goes with its last queue
        (ARTEMIS-3541); a session's ``createQueue`` auto-creates it again.
        """
        kept = {}
        if keep_queues:
            for queue in sorted(set(self.subscriptions.values())):
                query = self.node.call("queue_query", name=queue)
                if query["exists"]:
                    kept[queue] = (query, self.node.routing_types(query["address"]))
        for consumer in self.consumers:
            try:
                self.node.call("close_consumer", id=consumer)
            except CallFailed:
                pass
        for session in self.sessions:
            try:
                self.node.call("close_session", id=session)
            except CallFailed:
                pass
        self.consumers, self.sessions, self.subscriptions = [], [], {}
        for queue, (query, routing_types) in kept.items():
            if self.node.call("queue_query", name=queue)["exists"]:
                continue
            try:
                self.node.call("create_queue", address=query["address"], routing_type=query["routing_type"],
                               name=queue, durable=True, auto_created=bool(query["auto_created"]))
            except CallFailed as failure:
                raise NotExpressible(f"closing a JMS topic consumer deleted its queue {queue!r}, and the broker "
                                     f"would not make it again as it was: {failure}") from None
            if self.node.routing_types(query["address"]) != routing_types:
                raise NotExpressible(f"closing a JMS topic consumer deleted the auto-created address "
                                     f"{query['address']!r}, which came back with other routing types")

    def execute(self, command: Any) -> Outcome:
        """Perform ``command`` on the broker; what it did, as an outcome."""
        handlers: dict[type[Any], Callable[[Any], Outcome]] = {
            CreateAddress: self.create_address, DeleteAddress: self.delete_address,
            CreateQueue: self.create_queue, DeleteQueue: self.delete_queue, Lookup: self.lookup,
            Send: self.send, Consume: self.consume, SetPrefix: self.set_prefix,
            SetAddressSettings: self.set_address_settings, QueryAddress: self.query_address}
        return handlers[type(command)](command)

    # --- operations ------------------------------------------------------------------------------

    def create_address(self, command: CreateAddress) -> Outcome:
        before = self.node.addresses()
        types = ",".join(sorted(t.value for t in command.routing_types))
        try:
            self.node.manage("createAddress", command.address, types)
        except CallFailed as failure:
            return Rejected(self.reason(failure, command.address))
        created = sorted(self.node.addresses() - before)
        return AddressCreated(created[0] if len(created) == 1 else command.address)

    def delete_address(self, command: DeleteAddress) -> Outcome:
        before, before_addresses = self.node.queues(), self.node.addresses()
        if command.force:
            held = self.address_part(command.address)
            self.refuse_separator_queues([n for n, (address, _) in before.items() if address in (held, command.address)])
        try:
            self.node.manage("deleteAddress", command.address, command.force)
        except CallFailed as failure:
            if failure.has_code("AMQ229205"):
                held = self.address_part(command.address) if command.address not in before_addresses \
                    else command.address
                on_it = sorted(fqqn(address, name) for name, (address, _) in before.items() if address == held)
                return Rejected(AddressHasQueues(command.address, tuple(on_it)))
            return Rejected(self.reason(failure, command.address))
        after = self.node.queues()
        removed = sorted(fqqn(a, n) for n, (a, _) in before.items() if n not in after)
        gone = sorted(before_addresses - self.node.addresses())
        if len(gone) != 1:
            raise UnexpectedRefusal(f"deleteAddress succeeded but {len(gone)} addresses went: {gone}")
        return AddressDeleted(gone[0], tuple(removed))

    def create_queue(self, command: CreateQueue) -> Outcome:
        before = self.node.queues()
        try:
            self.node.manage("createQueue", command.address, command.routing_type.value, command.queue, None, True,
                             -1, False, False)
        except CallFailed as failure:
            return Rejected(self.reason(failure, command.queue, address=command.address,
                                        routing_type=command.routing_type))
        created = {n: v for n, v in self.node.queues().items() if n not in before}
        if len(created) != 1:
            raise UnexpectedRefusal(f"createQueue succeeded but {len(created)} queues appeared: {sorted(created)}")
        (name, (address, _)), = created.items()
        return QueueCreated(address, name)

    def delete_queue(self, command: DeleteQueue) -> Outcome:
        name = self.without_prefix(command.name)
        self.refuse_separator_queues([q for q in self.node.queues() if q == name.split(SEPARATOR, 1)[-1]])
        query = self.node.call("queue_query", name=command.name)
        self.close_consumers(keep_queues=True)
        try:
            self.node.call("delete_queue", name=command.name)
        except CallFailed as failure:
            return Rejected(self.reason(failure, command.name))
        if not query["exists"]:
            raise UnexpectedRefusal(f"deleteQueue({command.name!r}) succeeded on a queue the query did not find")
        return QueueDeleted(query["address"], query["name"])

    def lookup(self, command: Lookup) -> Outcome:
        query = self.node.call("queue_query", name=command.name)
        if not query["exists"]:
            return NotFound(query["name"])
        return Resolved(query["address"], query["name"], RoutingType(query["routing_type"]))

    def query_address(self, command: QueryAddress) -> Outcome:
        """The client's address query (a binding query: existence and queue names), and the address's routing
        types from management. For an FQQN the broker names the queues ``address::queue``; the spec names them bare."""
        address = self.address_part(command.address)
        query = self.node.call("address_query", name=command.address)
        if not query["exists"]:
            return AddressQueried(address, False)
        queues = tuple(sorted(name.split(SEPARATOR, 1)[1] if SEPARATOR in name else name for name in query["queues"]))
        routing_types = frozenset(RoutingType(t) for t in self.node.routing_types(address))
        return AddressQueried(address, True, routing_types, queues)

    def send(self, command: Send) -> Outcome:
        if SEPARATOR in self.without_prefix(command.name) \
                and any(command.name.startswith(prefix) for prefix in self.node.config.prefixes):
            raise NotExpressible("a core send of an FQQN behind an acceptor prefix: ServerSessionImpl.send builds an "
                                 "AddressInfo, which drops the queue part, before it removes the prefix, so the "
                                 "message goes to the whole address (a quirk the spec does not model)")
        addresses, queues = self.node.addresses(), self.node.queues()
        tag = new_tag(self)
        session = "addressing-producer"
        self.node.call("session", id=session, transacted=False)
        try:
            self.node.driver.call("send", session=session, address=command.name,
                                  routing_type=None if command.routing_type is None else command.routing_type.value,
                                  properties={"_BS_TAG": {"kind": "string", "value": tag}})
        except CallFailed as failure:
            self.node.probe.read()
            return Rejected(self.reason(failure, self.address_part(command.name),
                                        routing_type=command.routing_type))
        finally:
            self.node.driver.call("close_session", id=session)
        events = self.node.probe.for_tag(tag)
        routes = [e for e in events if e["event"] == "route"]
        after = self.node.queues()
        reached = [q for route in routes for q in route["queues"]]
        address = routes[0]["address"] if routes else self.address_part(command.name)
        new_addresses = sorted(self.node.addresses() - addresses)
        new_queues = sorted(fqqn(a, n) for n, (a, _) in after.items() if n not in queues)
        created_address = new_addresses[0] if new_addresses else None
        created_queue = new_queues[0] if new_queues else None
        if len(new_addresses) > 1 or len(new_queues) > 1:
            raise UnexpectedRefusal(f"one send created {new_addresses} and {new_queues}")
        if SEPARATOR in self.without_prefix(command.name):
            copies = sorted(fqqn(after[q][0], q) for q in reached if q in after)
            return Routed(address, tuple(copies), (), created_address, created_queue)
        typed = command.routing_type is not None or any(command.name.startswith(p) for p in self.node.config.prefixes)
        joined = not typed and any(a == address and t == "ANYCAST" for a, t in after.values())

        def grouped(name: str, routing_type: str) -> bool:
            """In the ANYCAST queues' routing-name group: one of them, or a MULTICAST queue named like the address
            when the message has no routing type (``BindingsImpl`` groups by routing name)."""
            return routing_type == "ANYCAST" or (joined and name == address)

        copies = sorted(fqqn(after[q][0], q) for q in reached if q in after and not grouped(q, after[q][1]))
        anycast = sorted(fqqn(after[q][0], q) for q in reached if q in after and grouped(q, after[q][1]))
        if len(anycast) == 1:
            anycast = sorted(fqqn(a, n) for n, (a, t) in after.items() if a == address and grouped(n, t))
        return Routed(address, tuple(copies), tuple(anycast), created_address, created_queue)

    def consume_core(self, command: Consume) -> Outcome:
        """A core-client consumer (``ClientSession.createConsumer``) on its own session; the queue it attached to
        is the one whose consumer count grew."""
        assert self.profile is not None
        before = self.consumer_counts()
        consumer = f"addressing-consumer-{len(self.consumers) + 1}"
        self.node.call("session", id=consumer, transacted=False)
        self.sessions.append(consumer)
        try:
            self.node.call("consumer", session=consumer, id=consumer, queue=command.name, filter=None)
        except CallFailed as failure:
            return Rejected(self.reason(failure, command.name))
        self.consumers.append(consumer)
        after = self.consumer_counts()
        attached = [q for q, (address, count) in after.items() if count > before.get(q, ("", 0))[1]]
        if len(attached) != 1:
            raise UnexpectedRefusal(f"the consumer opened but {len(attached)} queues gained one: {attached}")
        return Attached(after[attached[0]][0], attached[0])

    def consume(self, command: Consume) -> Outcome:
        assert self.profile is not None
        if self.profile.addressing.consumer is ConsumerModel.CORE:
            return self.consume_core(command)
        name = self.without_prefix(command.name)
        if command.routing_type is RoutingType.MULTICAST and SEPARATOR not in name:
            raise NotExpressible("a MULTICAST consumer by bare name: a JMS topic consumer makes a subscription "
                                 "queue of its own instead of attaching to the queue of that name")
        if command.routing_type is RoutingType.MULTICAST and SEPARATOR in name.split(SEPARATOR, 1)[1]:
            raise NotExpressible("a MULTICAST consumer on an FQQN whose queue part holds '::': closing it makes "
                                 "the JMS client delete that queue, which Artemis cannot do (see deleting such a queue)")
        before_addresses, before = self.node.addresses(), self.consumer_counts()
        consumer = f"addressing-consumer-{len(self.consumers) + 1}"
        try:
            self.node.driver.call("jms_consumer", id=consumer, protocol="core", url=self.node.broker.url,
                                  destination=command.name,
                                  kind="topic" if command.routing_type is RoutingType.MULTICAST else "queue")
        except CallFailed as failure:
            return Rejected(self.reason(failure, command.name, routing_type=command.routing_type))
        self.consumers.append(consumer)
        after = self.consumer_counts()
        attached = [q for q, (address, count) in after.items() if count > before.get(q, ("", 0))[1]]
        if len(attached) != 1:
            raise UnexpectedRefusal(f"the consumer opened but {len(attached)} queues gained one: {attached}")
        queue = attached[0]
        if queue not in before and GENERATED.fullmatch(queue):
            raise NotExpressible("the JMS client attached to a subscription queue it named itself (a random UUID)")
        legacy = fqqn(after[queue][0], queue) if after[queue][0] != queue else queue
        if legacy.startswith(LEGACY_PREFIXES) and not name.startswith(LEGACY_PREFIXES):
            # an FQQN falls back too: a1::a1 becomes the queue a1 on the address jms.queue.a1
            raise NotExpressible(f"the JMS client found no queue {name!r} it may use and fell back to the 1.x name "
                                 f"{legacy!r} (ActiveMQSession.internalCreateQueueCompatibility), a client "
                                 "compatibility retry under another name that the spec's consume does not make")
        address = after[queue][0]
        if command.routing_type is RoutingType.MULTICAST:
            self.subscriptions[consumer] = queue
        new_addresses = sorted(self.node.addresses() - before_addresses)
        created_queue = fqqn(address, queue) if queue not in before else None
        return Attached(address, queue, new_addresses[0] if new_addresses else None, created_queue)

    def set_prefix(self, command: SetPrefix) -> Outcome:
        prefixes = dict(self.node.config.prefixes)
        if command.routing_type is None:
            prefixes.pop(command.prefix, None)
        else:
            prefixes[command.prefix] = command.routing_type.value
        if "" in prefixes:
            # the acceptor splits its prefix list with String.split(","), which drops a trailing empty element
            # (AbstractProtocolManager.setAnycastPrefix): the empty prefix must not come last in its list
            prefixes = {"": prefixes[""], **{k: v for k, v in prefixes.items() if k}}
        self.close_consumers(keep_queues=True)
        self.node.reconfigure(dataclasses.replace(self.node.config, prefixes=prefixes), restart=True)
        return Configured()

    def set_address_settings(self, command: SetAddressSettings) -> Outcome:
        if command.match == "":
            raise NotExpressible("an address-setting with an empty match: broker.xml has no way to say it")
        values = {"auto_create_addresses": str(command.auto_create_addresses).lower(),
                  "auto_create_queues": str(command.auto_create_queues).lower(),
                  "default_address_routing_type": command.default_address_routing_type.value,
                  "default_queue_routing_type": command.default_queue_routing_type.value}
        settings = (*self.node.config.address_settings, (command.match, values))
        self.node.reconfigure(dataclasses.replace(self.node.config, address_settings=settings), restart=False)
        return Configured()

    @staticmethod
    def refuse_separator_queues(queues: list[str]) -> None:
        """NotExpressible when a deletion would meet a queue whose own name holds ``::``.

        Artemis creates such a queue (``createQueue`` on the address
        ``a1::q1::x`` makes ``q1::x``) but cannot delete it:
        ``SimpleAddressManager.removeBinding`` takes the exact name out of the
        name map, then ``removeBindingInternal`` strips it as an FQQN, finds no
        binding ``x`` on the address and throws ``IllegalStateException``
        ("Cannot find binding q1::x"), leaving the queue half removed. The
        spec deletes it; the broker's failure is a finding (docs/artemis-fidelity.md),
        not an outcome.
        """
        named = sorted(q for q in queues if SEPARATOR in q)
        if named:
            raise NotExpressible(f"deleting the queue {named[0]!r}, whose name holds '::': Artemis cannot "
                                 "remove such a binding (removeBindingInternal strips the name again)")

    # --- reading the broker ----------------------------------------------------------------------

    def without_prefix(self, name: str) -> str:
        """``name`` without the first configured acceptor prefix it starts with (what the acceptor strips)."""
        for prefix in self.node.config.prefixes:
            if name.startswith(prefix):
                return name[len(prefix):]
        return name

    def address_part(self, name: str) -> str:
        """The address a client name routes to: the part before the first ``::``, prefix stripped."""
        return self.without_prefix(name).split(SEPARATOR, 1)[0]

    def consumer_counts(self) -> dict[str, tuple[str, int]]:
        """Every queue's address and consumer count."""
        counts: dict[str, tuple[str, int]] = {}
        for name, (address, _) in self.node.queues().items():
            counts[name] = (address, self.node.consumer_count(name))
        return counts

    def reason(self, failure: CallFailed, name: str, address: str | None = None,
               routing_type: RoutingType | None = None) -> Reason:
        """The refusal ``failure`` as a spec reason, from its AMQ code, Artemis exception type or the JMS client's words.

        Names in a reason are the broker's where its message gives one
        (an address it did not find, the address that holds a queue), else
        the name the operation was given.
        """
        text = " ".join(c.message for c in failure.causes)
        if failure.has_type("INTERNAL_ERROR"):
            text += " " + self.node.broker.unexpected_exception()
            failure = CallFailed(failure.command, (*failure.causes, Cause("log", text, None)))
        if failure.has_code("AMQ229204"):
            return AddressExists(self.after(text, "Address already exists: ", name))
        if failure.has_code("AMQ229019"):
            queue = quoted_after(text, r"Queue (\S+) already exists") or name
            return QueueExists(queue, otherwise(quoted_after(text, r"on address (\S*)"), address or ""))
        if failure.has_code("AMQ229018"):
            # the name map's own guard (SimpleAddressManager.addBinding): a queue whose name holds "::" slips past
            # the existence check, which strips the name as an FQQN, and is refused here as the same queue
            queue = quoted_after(text, r", filter=\S*, name=(.*?), clusterName=") or name
            holder = otherwise(quoted_after(text, r"LocalQueueBinding \[address=(.*?), queue="), address or "")
            return QueueExists(queue, holder)
        if failure.has_code("AMQ229203"):
            return AddressNotFound(self.after(text, "Address Does Not Exist: ", address or name))
        if failure.mentions("address can't be null or empty") and address is not None:
            return InvalidName(address, text)  # the queue factory (or 2.11's QueueConfig builder) names the address
        if failure.has_code("AMQ229216") or failure.mentions("can't be null or empty"):
            return InvalidName(name, text)
        if failure.has_code("AMQ229207"):
            # the broker names the address it holds, which may be the empty one (createAddress(":::") makes "")
            refused = otherwise(quoted_after(text, r"Supported routing types for address: (.*?) are \["),
                                address or name)
            allowed = frozenset(RoutingType(t) for t in self.node.routing_types(refused))
            wanted = RoutingType(quoted_after(text, r"routing type: (\w+),") or "ANYCAST")
            return RoutingTypeNotAllowed(refused, wanted, allowed)
        if failure.mentions("does not support JMS queue semantics"):
            query = self.node.call("queue_query", name=self.without_prefix(name))
            if query["exists"]:
                return QueueRoutingTypeMismatch(query["address"], query["name"], RoutingType(query["routing_type"]),
                                                RoutingType.ANYCAST)
        if failure.has_code("AMQ229017") or failure.has_type("QUEUE_DOES_NOT_EXIST") or failure.mentions(
                "does not exist") or failure.mentions("There is no queue with name") or failure.mentions(
                "There is no topic with name"):
            return QueueNotFound(name)
        raise UnexpectedRefusal(f"the broker refused with something brokerspec cannot name: {failure}")

    @staticmethod
    def after(text: str, marker: str, otherwise: str) -> str:
        """The rest of the line after ``marker`` in ``text`` (the name a broker message ends with), else ``otherwise``."""
        if marker not in text:
            return otherwise
        return text.split(marker, 1)[1].split(" ", 1)[0]
