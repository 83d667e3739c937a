"""Duplicate detection on a real Artemis broker: sessions, transactions, IDs, restarts and crashes.

Introduction
------------
A spec session is a core client connection with two core sessions: one
that commits every send and acknowledgement itself (outside a
transaction) and one transacted session used between ``begin`` and its
``commit`` or ``rollback``. ``begin`` itself is the client's decision (a
core transacted session is always in a transaction), so ``transaction_open``
and ``no_transaction`` are the client's bookkeeping; everything else is read
from the broker:

=====================  =============================================================================
spec operation         on the broker, and what the outcome is read from
=====================  =============================================================================
``create_queue``       management ``createQueue`` of a MULTICAST queue (every queue of an address
                       gets a copy, as the spec's queues do); AMQ229019 is ``queue_exists``
``delete_queue``       management ``destroyQueue``; ``forgot_ids`` is whether the address was left
                       with no queue (``PostOfficeImpl.removeBinding``: its caches go
                       with its last binding)
``send``               a core producer send with ``_AMQ_DUPL_ID`` (String, SimpleString, byte[] or
                       Long, as the ID's kind says) and ``_AMQ_BRIDGE_DUP`` (byte[]); the status and
                       the queues are the probe's record of the send and its routing context, which
                       the client is not told
                       (``DuplicateDetectionTest.testSimpleDuplicateDetecion``);
                       ``rollback_only`` is the probe's answer about the session's transaction
                       right after the send; a send that throws is
                       ``send_failed`` (``ID_NOT_BYTES`` when the probe saw a ClassCastException)
``receive``            a core consumer's ``receiveImmediate`` and acknowledgement
``commit``             the transacted session's ``commit``; DUPLICATE_ID_REJECTED is ``DUPLICATE_ID``
``rollback``           the transacted session's ``rollback``
``set_id_cache_size``  the address setting ``id-cache-size`` (2.31.0 on, ARTEMIS-4159), re-read while
                       the broker runs; ``not_supported`` when the release's schema has no such setting
``restart``            open transactions are rolled back by the client, then a clean stop and a start
                       from the journal (with the new global ``id-cache-size`` in ``broker.xml``)
``crash``              SIGKILL and a start from the journal
=====================  =============================================================================

``dropped_ids`` of a restart or crash is the number of IDs in the caches
before the stop that are not in them after the start (the probe's cache
dumps). Message numbers are the client's: each send the broker neither
rejected as a duplicate nor failed takes the next number, carried in a tag
property, and a received message is named by its tag.

Not expressible: ``delete_id`` (no management operation removes one ID
from a cache; ``DuplicateIDCache.deleteFromCache`` is internal),
``reject_duplicates=false`` (only the broker's own move paths route without
the check), ``address_full`` (a full address cannot be made to fail one
chosen send) and, before 2.28.0, a restart with a cache size of 0 (the
release refuses to start with it).

Each reset works in fresh addresses and queues (a name prefix per reset,
taken off again in outcomes): a cache outlives the address's queues when
sends reached it without bindings
(``PostOfficeImpl.route`` checks the ID before it looks up bindings), and only new names start clean
without a restart.
"""

from __future__ import annotations

import dataclasses
import zipfile
from dataclasses import dataclass, field
from collections.abc import Callable
from typing import Any

from brokerspec.spec import Outcome, Profile
from brokerspec.spec.duplicates import (
    Begin,
    Commit,
    Crash,
    CreateQueue,
    DeleteId,
    DeleteQueue,
    IdKind,
    QueryId,
    Receive,
    Restart,
    Rollback,
    Send,
    SetIdCacheSize,
    compute_cache_key,
)
from brokerspec.spec.duplicates.model import DoomReason
from brokerspec.spec.duplicates.outcomes import (
    CommitFailed,
    Committed,
    Done,
    IdQueried,
    NoTransaction,
    NotSupported,
    QueueDeleted,
    QueueExists,
    QueueNotFound,
    Received,
    Restarted,
    RolledBack,
    RoutingStatus,
    SendFailed,
    SendFailure,
    Sent,
    TransactionOpen,
)

from .driver import CallFailed
from .node import Node
from .outcomes import NotExpressible, UnexpectedRefusal, new_tag
from .releases import distribution_home

ROLLED_BACK_STATES = ("ROLLBACK_ONLY", "ROLLEDBACK")
"""Transaction states after which the commit can only fail."""


@dataclass
class ClientSession:
    """One spec session as the client holds it."""

    name: str
    in_transaction: bool = False
    numbers: list[int] = field(default_factory=list)
    """The numbers of the messages the open transaction routed, in send order."""
    doom: DoomReason | None = None
    """What the client saw doom the open transaction first."""
    bridge_ids: list[tuple[str, str]] = field(default_factory=list)
    """(cache, hex ID) of every bridged send the open transaction routed: instant adds while it is open."""
    opened: set[str] = field(default_factory=set)


def supports_address_id_cache_size(version: str) -> bool:
    """Whether the release's configuration schema has the address setting ``id-cache-size`` (ARTEMIS-4159)."""
    jar = distribution_home(version) / "lib" / f"artemis-server-{version}.jar"
    with zipfile.ZipFile(jar) as archive:
        schema = archive.read("schema/artemis-configuration.xsd").decode("utf-8")
    return schema.count('name="id-cache-size"') >= 2


def accepts_zero_id_cache_size(version: str) -> bool:
    """Whether the release starts with ``id-cache-size`` 0: its parser checks ``GT_ZERO`` before 2.28.0 (ARTEMIS-4115)."""
    major, minor = (int(part) for part in version.split(".")[:2])
    return (major, minor) >= (2, 28)


class DuplicatesAdapter:
    """The duplicate-detection domain on one Artemis node."""

    def __init__(self, node: Node) -> None:
        self.node = node
        self.resets = 0
        self.prefix = "r0_"
        self.sessions: dict[str, ClientSession] = {}
        self.numbers: dict[str, int] = {}
        self.next_number = 1
        self.seen: list[dict[str, Any]] = []

    # --- lifecycle -------------------------------------------------------------------------------

    def reset(self, profile: Profile) -> None:
        """Fresh names, no sessions, and the profile's global cache settings (a restart if they changed)."""
        self.close_sessions()
        for address in sorted(self.node.addresses()):
            self.node.manage("deleteAddress", address, True)
        self.resets += 1
        self.prefix = f"r{self.resets}_"
        self.numbers, self.next_number = {}, 1
        options = profile.duplicates
        config = self.node.config
        wanted = dataclasses.replace(config, id_cache_size=options.id_cache_size,
                                     persist_id_cache=options.persist_id_cache,
                                     address_settings=tuple(s for s in config.address_settings
                                                            if "id_cache_size" not in s[1]))
        if wanted != config:
            self.node.reconfigure(wanted, restart=True)

    def leave(self) -> None:
        """Another domain's cases come next: close this adapter's sessions."""
        self.close_sessions()

    def close_sessions(self) -> None:
        """Close every core session this adapter opened."""
        for session in self.sessions.values():
            for core in session.opened:
                try:
                    self.node.driver.call("close_session", id=core)
                except CallFailed:
                    pass
        self.sessions = {}

    def execute(self, command: Any) -> Outcome:
        """Perform ``command`` on the broker; what it did, as an outcome."""
        handlers: dict[type[Any], Callable[[Any], Outcome]] = {
            CreateQueue: self.create_queue, DeleteQueue: self.delete_queue, Begin: self.begin,
            Send: self.send, Receive: self.receive, Commit: self.commit, Rollback: self.rollback,
            DeleteId: self.delete_id, SetIdCacheSize: self.set_id_cache_size, Restart: self.restart,
            Crash: self.restart, QueryId: self.query_id}
        return handlers[type(command)](command)

    # --- names and sessions ----------------------------------------------------------------------

    def real(self, name: str) -> str:
        """The broker's name for a spec address or queue of this reset."""
        return self.prefix + name

    def spec_name(self, name: str) -> str:
        """The spec's name for a broker queue of this reset."""
        return name.removeprefix(self.prefix)

    def session(self, name: str) -> ClientSession:
        """The client state of spec session ``name``."""
        return self.sessions.setdefault(name, ClientSession(name))

    def core_session(self, session: ClientSession) -> str:
        """The core session the spec session uses now (transacted inside a transaction), opened on first use."""
        core = f"dup-{session.name}-{'tx' if session.in_transaction else 'auto'}"
        if core not in session.opened:
            self.node.call("session", id=core, transacted=session.in_transaction)
            session.opened.add(core)
        return core

    def ask(self, core: str, question: str) -> dict[str, Any]:
        """Ask the probe ``question`` through ``core``'s session; its answer.

        A transacted core session sends without waiting for the broker (its
        errors surface at the commit), so the question is followed by a
        blocking round trip on the same session: once that returns, the broker
        has handled every send the session made before, and the probe has
        written about each. Everything the probe wrote is kept in
        :attr:`seen` for the caller.
        """
        tag = new_tag(self)
        try:
            self.node.driver.call("send", session=core, address="$bs.probe",
                                  properties={"_BS_TAG": {"kind": "string", "value": tag},
                                              "_BS_PROBE": {"kind": "string", "value": question}})
        except CallFailed as failure:
            if not failure.mentions("brokerspec probe answered"):
                raise
        self.node.driver.call("sync", session=core)
        self.seen = self.node.probe.read()
        answers = [e for e in self.seen if e.get("tag") == tag and e["event"] == question]
        if len(answers) != 1:
            raise UnexpectedRefusal(f"the probe did not answer {question!r} ({len(answers)} answers)")
        return answers[0]

    # --- operations ------------------------------------------------------------------------------

    def create_queue(self, command: CreateQueue) -> Outcome:
        try:
            self.node.manage("createQueue", self.real(command.address), "MULTICAST", self.real(command.queue), None,
                             True, -1, False, True)
        except CallFailed as failure:
            if failure.has_code("AMQ229019"):
                return QueueExists(command.queue)
            raise UnexpectedRefusal(str(failure)) from None
        return Done()

    def delete_queue(self, command: DeleteQueue) -> Outcome:
        query = self.node.call("queue_query", name=self.real(command.queue))
        if not query["exists"]:
            return QueueNotFound(command.queue)
        try:
            self.node.manage("destroyQueue", self.real(command.queue), True, False)
        except CallFailed as failure:
            if failure.has_code("AMQ229017"):
                return QueueNotFound(command.queue)
            raise UnexpectedRefusal(str(failure)) from None
        left = self.node.call("address_query", name=query["address"])
        return QueueDeleted(not left["queues"])

    def begin(self, command: Begin) -> Outcome:
        session = self.session(command.session)
        if session.in_transaction:
            return TransactionOpen(command.session)
        session.in_transaction, session.numbers, session.doom, session.bridge_ids = True, [], None, []
        return Done()

    def send(self, command: Send) -> Outcome:
        if not command.reject_duplicates:
            raise NotExpressible("a send that skips the duplicate check: only the broker's own move paths do that")
        if command.address_full:
            raise NotExpressible("a send that fails after the duplicate check: a full address cannot be made to "
                                 "fail one chosen send")
        session = self.session(command.session)
        core = self.core_session(session)
        tag = new_tag(self)
        properties: dict[str, dict[str, str]] = {"_BS_TAG": {"kind": "string", "value": tag}}
        if command.duplicate_id is not None:
            kind = command.duplicate_id.kind
            properties["_AMQ_DUPL_ID"] = {"kind": kind.value, "value": command.duplicate_id.value}
        if command.bridge_id is not None:
            properties["_AMQ_BRIDGE_DUP"] = {"kind": "bytes", "value": command.bridge_id}
        failure: CallFailed | None = None
        try:
            self.node.driver.call("send", session=core, address=self.real(command.address), properties=properties)
        except CallFailed as error:
            failure = error
        state = self.ask(core, "tx")["tx"]
        doomed = session.in_transaction and state in ROLLED_BACK_STATES
        events = [e for e in self.seen if e.get("tag") == tag]
        errors = [e for e in events if e["event"] == "error"]
        if failure is not None or errors:
            if errors and errors[0]["error"].endswith("ClassCastException") and command.duplicate_id is not None \
                    and command.duplicate_id.kind is IdKind.LONG:
                self.doom(session, doomed, DoomReason.SEND_FAILED)
                return SendFailed(SendFailure.ID_NOT_BYTES, rollback_only=doomed)
            raise UnexpectedRefusal(f"the send failed: {failure or errors[0]}")
        sends = [e for e in events if e["event"] == "send"]
        if len(sends) != 1:
            raise UnexpectedRefusal(f"the probe saw {len(sends)} sends of one message")
        status = RoutingStatus(sends[0]["status"])
        if status is RoutingStatus.DUPLICATED_ID:
            reason = DoomReason.BRIDGE_DUPLICATE if command.bridge_id is not None else DoomReason.DUPLICATE_ID
            self.doom(session, doomed, reason)
            return Sent(status, rollback_only=doomed)
        number = self.next_number
        self.next_number += 1
        self.numbers[tag] = number
        if session.in_transaction:
            session.numbers.append(number)
            if command.bridge_id is not None:
                session.bridge_ids.append((f"BRIDGE.{self.real(command.address)}", command.bridge_id))
        routes = [e for e in events if e["event"] == "route"]
        queues = sorted({self.spec_name(q) for route in routes for q in route["queues"]})
        return Sent(status, number, tuple(queues), rollback_only=doomed)

    def doom(self, session: ClientSession, doomed: bool, reason: DoomReason) -> None:
        """Remember the first thing the client saw doom its open transaction."""
        if doomed and session.doom is None:
            session.doom = reason

    def receive(self, command: Receive) -> Outcome:
        """One consumer for one message: opened, ``receiveImmediate``, acknowledged, closed.

        A consumer left open after a rollback can be handed the messages the
        rollback returned before any other session sees them; the spec's
        receive takes the first waiting message from the queue, so no
        consumer outlives its receive.
        """
        session = self.session(command.session)
        core = self.core_session(session)
        consumer = f"{core}-{command.queue}"
        try:
            self.node.driver.call("consumer", session=core, id=consumer, queue=self.real(command.queue))
        except CallFailed as failure:
            if failure.has_type("QUEUE_DOES_NOT_EXIST"):
                return QueueNotFound(command.queue)
            raise UnexpectedRefusal(str(failure)) from None
        try:
            message = self.node.driver.call("receive", consumer=consumer)["message"]
        finally:
            self.node.driver.call("close_consumer", id=consumer)
        if message is None:
            return Received(None)
        tag = message["properties"].get("_BS_TAG")
        if tag not in self.numbers:
            raise UnexpectedRefusal(f"received a message brokerspec did not number (tag {tag!r})")
        return Received(self.numbers[tag])

    def commit(self, command: Commit) -> Outcome:
        session = self.session(command.session)
        if not session.in_transaction:
            return NoTransaction(command.session)
        core = self.core_session(session)
        numbers, doom = tuple(session.numbers), session.doom
        session.in_transaction, session.numbers, session.doom, session.bridge_ids = False, [], None, []
        try:
            self.node.driver.call("commit", session=core)
        except CallFailed as failure:
            if failure.has_type("DUPLICATE_ID_REJECTED"):
                return CommitFailed(DoomReason.DUPLICATE_ID)
            if doom is not None:
                return CommitFailed(doom)
            raise UnexpectedRefusal(f"the commit failed: {failure}") from None
        return Committed(numbers)

    def rollback(self, command: Rollback) -> Outcome:
        session = self.session(command.session)
        if not session.in_transaction:
            return NoTransaction(command.session)
        core = self.core_session(session)
        session.in_transaction, session.numbers, session.doom, session.bridge_ids = False, [], None, []
        self.node.driver.call("rollback", session=core)
        return RolledBack()

    def query_id(self, command: QueryId) -> Outcome:
        """No client call or management operation reads a duplicate-ID cache (a probing send would add the ID it
        asks about), so the broker's probe answers: it reads every cache's IDs in slot order."""
        if command.bridge_id is not None:
            cache, key = f"BRIDGE.{self.real(command.address)}", command.bridge_id
        else:
            assert command.duplicate_id is not None
            found = compute_cache_key(command.duplicate_id)
            if found is None:
                return IdQueried(False)
            cache, key = self.real(command.address), found.hex()
        probe_session = "dup-query"
        self.node.call("session", id=probe_session, transacted=False)
        try:
            caches = self.ask(probe_session, "caches")["caches"]
        finally:
            self.node.driver.call("close_session", id=probe_session)
        if not isinstance(caches, dict):
            raise UnexpectedRefusal(f"the probe could not read the caches: {caches}")
        return IdQueried(key in caches.get(cache, ()))

    def delete_id(self, command: DeleteId) -> Outcome:
        raise NotExpressible("deleting one ID from a cache: no management operation does it "
                             "(DuplicateIDCache.deleteFromCache is internal to the broker)")

    def set_id_cache_size(self, command: SetIdCacheSize) -> Outcome:
        if not supports_address_id_cache_size(self.node.broker.version):
            return NotSupported(command.op)
        config = self.node.config
        settings = (*config.address_settings, (self.real(command.address), {"id_cache_size": str(command.size)}))
        self.node.reconfigure(dataclasses.replace(config, address_settings=settings), restart=False)
        return Done()

    def restart(self, command: Restart | Crash) -> Outcome:
        crash = isinstance(command, Crash)
        if isinstance(command, Restart) and command.id_cache_size == 0 \
                and not accepts_zero_id_cache_size(self.node.broker.version):
            raise NotExpressible(f"a restart with id-cache-size 0: Artemis {self.node.broker.version} refuses to "
                                 "start with it (FileConfigurationParser, GT_ZERO, AMQ229039); 0 is accepted from "
                                 "2.28.0 (ARTEMIS-4115)")
        open_sessions = [s for s in self.sessions.values() if s.in_transaction]
        uncommitted: list[tuple[str, str]] = [item for s in open_sessions for item in s.bridge_ids]
        if not crash:
            for session in open_sessions:
                self.node.driver.call("rollback", session=self.core_session(session))
            uncommitted = []
        probe_session = "dup-probe"
        self.node.call("session", id=probe_session, transacted=False)
        before = self.own_caches(self.ask(probe_session, "caches")["caches"])
        persisted = self.node.config.persist_id_cache
        self.close_sessions()
        if isinstance(command, Restart) and command.id_cache_size is not None:
            self.node.broker.write_config(dataclasses.replace(self.node.config, id_cache_size=command.id_cache_size))
        self.node.restart(crash=crash)
        self.node.call("session", id=probe_session, transacted=False)
        after = self.own_caches(self.ask(probe_session, "caches")["caches"])
        self.node.driver.call("close_session", id=probe_session)
        dropped = 0
        for name, ids in before.items():
            stored = list(ids) if persisted else []
            for cache, key in uncommitted:
                if cache == name and key in stored:
                    stored.remove(key)
            dropped += max(0, len(stored) - len(after.get(name, ())))
        return Restarted(len(open_sessions), dropped)

    def own_caches(self, caches: dict[str, list[str]]) -> dict[str, list[str]]:
        """The caches of this reset's addresses (normal and bridge), from a probe dump of every cache."""
        return {name: ids for name, ids in caches.items()
                if name.startswith(self.prefix) or name.startswith(f"BRIDGE.{self.prefix}")}
