"""Duplicate detection on a real Artemis broker: sessions, transactions, IDs, restarts and crashes.

Introduction
------------
A spec session is a core client connection with two core sessions: one
that commits every send and acknowledgement itself (outside a
transaction) and one XA session whose branches are the spec session's
transactions (:mod:`.xa`): ``begin`` starts a branch, ``prepare`` ends and
prepares it, ``commit`` and ``rollback`` end it in one phase or, once it is
prepared, in the second. The branch's xid is kept, so a prepared transaction
is ended from a new XA session after a restart or a crash, as a transaction
manager recovering it would. ``transaction_open``, ``transaction_prepared``
and ``no_transaction`` are the client's bookkeeping (an XA client knows which
branches it started and prepared); everything else is read from the broker:

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
                       ``send_failed`` (``ID_NOT_BYTES`` when the probe saw a ClassCastException,
                       ``ADDRESS_DOES_NOT_EXIST`` for AMQ229203). An ``auto_create`` send is
                       ANYCAST, to an address given its own address setting first:
                       ``auto-create-queues`` and ``auto-create-addresses`` on, auto-deletion
                       off (auto-deleted queues are not modelled, DUP-AUTO-CREATE)
``receive``            a core consumer's ``receiveImmediate`` and acknowledgement
``begin``              ``XAResource.start(xid, TMNOFLAGS)`` on the spec session's XA session
``prepare``            ``end(xid, TMSUCCESS)`` and ``prepare(xid)``; a refused prepare (its cause
                       DUPLICATE_ID_REJECTED for ``DUPLICATE_ID``), or an ``end`` refused because a
                       bridge duplicate already rolled the branch back, is ``prepare_failed`` with
                       the reason the client saw doom it, and the branch is forgotten with
                       ``rollback(xid)``; a prepared branch is prepared again (AMQ221079: ignored)
``commit``             open: ``end`` and ``commit(xid, true)``, DUPLICATE_ID_REJECTED is
                       ``DUPLICATE_ID``; prepared: ``commit(xid, false)``
``rollback``           open: ``end`` and ``rollback(xid)``; prepared: ``rollback(xid)``
``set_id_cache_size``  the address setting ``id-cache-size`` (2.31.0 on, ARTEMIS-4159), re-read while
                       the broker runs; ``not_supported`` when the release's schema has no such setting
``restart``            open transactions are rolled back by the client, prepared ones left prepared,
                       then a clean stop and a start from the journal (with the new global
                       ``id-cache-size`` in ``broker.xml``)
``crash``              SIGKILL and a start from the journal
=====================  =============================================================================

``dropped_ids`` of a restart or crash is the number of IDs in the caches
before the stop that are not in them after the start (the probe's cache
dumps), leaving out the bridge IDs a transaction that did not commit added at
once: a lost one's go with it, and a prepared one's are attached to it again
until its second phase (DUP-XA-PREPARED-RESTART). ``lost_transactions``
counts the open transactions that were not prepared. Message numbers are the
client's: each send the broker neither rejected as a duplicate nor failed
takes the next number, carried in a tag property, and a received message is
named by its tag.

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
without a restart. A reset first rolls back every branch the adapter started
and every prepared branch of brokerspec's the broker still holds
(``XAResource.recover``), so no transaction of an earlier case holds messages
or IDs into the next.
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
    Prepare,
    QueryId,
    Receive,
    Restart,
    Rollback,
    Send,
    SetIdCacheSize,
    TxState,
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
    PrepareFailed,
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
    TransactionPrepared,
)

from .driver import CallFailed
from .node import Node
from .outcomes import NotExpressible, UnexpectedRefusal, new_tag
from .releases import distribution_home
from .xa import Branches, Xid, new_xid

ROLLED_BACK_STATES = ("ROLLBACK_ONLY", "ROLLEDBACK")
"""Transaction states after which the commit can only fail."""


@dataclass
class ClientSession:
    """One spec session as the client holds it."""

    name: str
    state: TxState = TxState.NONE
    """``NONE``, ``ACTIVE`` (an open branch, doomed or not: the client learns that only from the probe) or
    ``PREPARED``."""
    xid: Xid | None = None
    """The branch of the transaction, open or prepared."""
    numbers: list[int] = field(default_factory=list)
    """The numbers of the messages the transaction routed, in send order."""
    doom: DoomReason | None = None
    """What the client saw doom the open transaction first."""
    bridge_ids: list[tuple[str, str]] = field(default_factory=list)
    """(cache, hex ID) of every bridged send the transaction routed: instant adds while it is open."""
    opened: set[str] = field(default_factory=set)
    """The core sessions opened for it on the running broker."""

    @property
    def in_transaction(self) -> bool:
        """Whether it has a transaction open (not prepared): its sends and receives go into the branch."""
        return self.state is TxState.ACTIVE

    def end_transaction(self) -> None:
        """The transaction is over (committed, rolled back or lost): the session works outside one again."""
        self.state, self.xid, self.numbers, self.doom, self.bridge_ids = TxState.NONE, None, [], None, []


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
        self.begun = 0
        """Transactions begun through this adapter, which numbers their xids."""
        self.resets = 0
        self.prefix = "r0_"
        self.sessions: dict[str, ClientSession] = {}
        self.numbers: dict[str, int] = {}
        self.next_number = 1
        self.seen: list[dict[str, Any]] = []
        self.auto_creating: set[str] = set()
        """The broker addresses given an auto-creating address setting (kept across resets: new names each)."""
        self.stranded: list[tuple[str, str]] = []
        """(cache, hex ID) an auto-creating send left in memory only, failing outside a transaction
        (DUP-AUTO-CREATE-NAME-TAKEN): a restart loses them without dropping them."""

    @property
    def branches(self) -> Branches:
        """The XA calls, on the node's driver."""
        return Branches(self.node.driver)

    # --- lifecycle -------------------------------------------------------------------------------

    def reset(self, profile: Profile) -> None:
        """Fresh names, no sessions, no branch of brokerspec's in doubt, and the profile's global cache settings
        (a restart if they changed)."""
        self.close_sessions()
        self.roll_back_in_doubt()
        for address in sorted(self.node.addresses()):
            self.node.manage("deleteAddress", address, True)
        self.resets += 1
        self.prefix = f"r{self.resets}_"
        self.numbers, self.next_number, self.stranded = {}, 1, []
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

    def close_sessions(self, keep_prepared: bool = False) -> None:
        """Close every core session this adapter opened; roll back every transaction first unless
        ``keep_prepared``, when open ones are left to the broker (a crash follows) and prepared ones are kept,
        by xid, for after the restart."""
        for session in self.sessions.values():
            if session.xid is not None and not keep_prepared:
                self.abandon(session)
            for core in session.opened:
                try:
                    self.node.driver.call("close_session", id=core)
                except CallFailed:
                    pass
            session.opened.clear()
        self.sessions = {name: session for name, session in self.sessions.items()
                         if keep_prepared and session.state is TxState.PREPARED}

    def abandon(self, session: ClientSession) -> None:
        """Roll back the session's transaction, open or prepared, whatever the broker says; it is over."""
        xid, core = session.xid, self.xa_session(session)
        assert xid is not None
        if session.state is TxState.ACTIVE:
            self.branches.end(core, xid)
        try:
            self.branches.forget(core, xid)
        except CallFailed:
            pass  # a branch that cannot be rolled back now is found again by the next reset's recovery
        session.end_transaction()

    def roll_back_in_doubt(self) -> None:
        """Roll back every prepared branch of brokerspec's the broker holds (an earlier case's, or one left when a
        driver was lost)."""
        core = "dup-recovery"
        self.node.call("session", id=core, xa=True)
        try:
            for xid in self.branches.in_doubt(core):
                self.branches.forget(core, xid)
        finally:
            self.node.driver.call("close_session", id=core)

    def execute(self, command: Any) -> Outcome:
        """Perform ``command`` on the broker; what it did, as an outcome."""
        handlers: dict[type[Any], Callable[[Any], Outcome]] = {
            CreateQueue: self.create_queue, DeleteQueue: self.delete_queue, Begin: self.begin,
            Send: self.send, Receive: self.receive, Commit: self.commit, Rollback: self.rollback,
            DeleteId: self.delete_id, SetIdCacheSize: self.set_id_cache_size, Restart: self.restart,
            Crash: self.restart, QueryId: self.query_id, Prepare: self.prepare}
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
        """The core session the spec session uses now (its XA session inside a transaction), opened on first use."""
        if session.state is not TxState.NONE:
            return self.xa_session(session)
        core = f"dup-{session.name}-auto"
        if core not in session.opened:
            self.node.call("session", id=core, transacted=False)
            session.opened.add(core)
        return core

    def xa_session(self, session: ClientSession) -> str:
        """The spec session's XA session, opened on first use (again after a restart)."""
        core = f"dup-{session.name}-xa"
        if core not in session.opened:
            self.node.call("session", id=core, xa=True)
            session.opened.add(core)
        return core

    def ask(self, core: str, question: str) -> dict[str, Any]:
        """Ask the probe ``question`` through ``core``'s session (:meth:`.Node.ask`); its answer. Everything the
        probe wrote meanwhile is kept in :attr:`seen` for the caller."""
        answer, self.seen = self.node.ask(core, question)
        return answer

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
        if session.state is not TxState.NONE:
            return TransactionOpen(command.session)
        self.begun += 1
        xid = new_xid(self.prefix, session.name, self.begun)
        self.branches.start(self.xa_session(session), xid)
        session.end_transaction()
        session.state, session.xid = TxState.ACTIVE, xid
        return Done()

    def send(self, command: Send) -> Outcome:
        if self.session(command.session).state is TxState.PREPARED:
            return TransactionPrepared(command.session)
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
        routing: dict[str, str] = {}
        if command.auto_create:
            self.allow_auto_create(self.real(command.address))
            routing["routing_type"] = "ANYCAST"
        try:
            self.node.driver.call("send", session=core, address=self.real(command.address), properties=properties,
                                  **routing)
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
            if command.auto_create and (errors and errors[0]["error"].endswith("AddressDoesNotExistException")
                                        or failure is not None and failure.has_type("ADDRESS_DOES_NOT_EXIST")):
                self.doom(session, doomed, DoomReason.SEND_FAILED)
                if not session.in_transaction:
                    self.note_stranded(command)
                return SendFailed(SendFailure.ADDRESS_DOES_NOT_EXIST, rollback_only=doomed)
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

    def allow_auto_create(self, address: str) -> None:
        """Give ``address`` an address setting that auto-creates queues and addresses (auto-deletion is off in
        every setting brokerspec writes), once."""
        if address in self.auto_creating:
            return
        config = self.node.config
        setting = (address, {"auto_create_queues": "true", "auto_create_addresses": "true"})
        self.node.reconfigure(dataclasses.replace(config, address_settings=(*config.address_settings, setting)),
                              restart=False)
        self.auto_creating.add(address)

    def note_stranded(self, command: Send) -> None:
        """Remember the ID a failed auto-creating send left in memory: the transaction the broker started for the
        send is never ended, so its record is never durable (DUP-AUTO-CREATE-NAME-TAKEN)."""
        if command.bridge_id is not None:
            self.stranded.append((f"BRIDGE.{self.real(command.address)}", command.bridge_id))
        elif command.duplicate_id is not None and (key := compute_cache_key(command.duplicate_id)) is not None:
            self.stranded.append((self.real(command.address), key.hex()))

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
        if session.state is TxState.PREPARED:
            return TransactionPrepared(command.session)
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

    def prepare(self, command: Prepare) -> Outcome:
        """End the branch and prepare it; a doomed one fails and is forgotten (DUP-XA-PREPARE-ROLLBACK-ONLY)."""
        session = self.session(command.session)
        xid = session.xid
        if xid is None:
            return NoTransaction(command.session)
        core = self.xa_session(session)
        if session.state is TxState.PREPARED:
            try:
                self.branches.prepare(core, xid)
            except CallFailed as failure:
                raise UnexpectedRefusal(f"preparing a prepared branch again failed: {failure}") from None
            return Done()
        doom = session.doom
        refused = self.branches.end(core, xid)
        if refused is None:
            try:
                self.branches.prepare(core, xid)
            except CallFailed as failure:
                refused = failure
        if refused is None:
            session.state = TxState.PREPARED
            return Done()
        self.branches.forget(core, xid)
        session.end_transaction()
        if refused.has_type("DUPLICATE_ID_REJECTED"):
            return PrepareFailed(DoomReason.DUPLICATE_ID)
        if doom is not None:
            return PrepareFailed(doom)
        raise UnexpectedRefusal(f"the prepare failed: {refused}")

    def commit(self, command: Commit) -> Outcome:
        session = self.session(command.session)
        xid = session.xid
        if xid is None:
            return NoTransaction(command.session)
        core = self.xa_session(session)
        numbers, doom, prepared = tuple(session.numbers), session.doom, session.state is TxState.PREPARED
        session.end_transaction()
        ended = None if prepared else self.branches.end(core, xid)
        try:
            self.branches.commit(core, xid, one_phase=not prepared)
        except CallFailed as failure:
            if prepared:
                raise UnexpectedRefusal(f"the second phase of a prepared branch failed: {failure}") from None
            if failure.has_type("DUPLICATE_ID_REJECTED"):
                return CommitFailed(DoomReason.DUPLICATE_ID)
            if doom is not None:
                return CommitFailed(doom)
            raise UnexpectedRefusal(f"the commit failed: {failure}" + (f" (after {ended})" if ended else "")) from None
        return Committed(numbers)

    def rollback(self, command: Rollback) -> Outcome:
        session = self.session(command.session)
        xid = session.xid
        if xid is None:
            return NoTransaction(command.session)
        core = self.xa_session(session)
        if session.state is TxState.ACTIVE:
            self.branches.end(core, xid)  # refused only for a branch a bridge duplicate rolled back already
        session.end_transaction()
        self.branches.forget(core, xid)
        return RolledBack()

    def query_id(self, command: QueryId) -> Outcome:
        """No client call or management operation reads a duplicate-ID cache (a probing send would add the ID it
        asks about), so the broker's probe answers: it reads every cache's IDs that the cache's own duplicate check
        finds (``DuplicateIDCache.contains``; a slot may still hold an ID the check no longer finds, when the same
        ID took two slots and one was overwritten)."""
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
            caches = self.ask(probe_session, "caches")["live"]
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
        open_sessions = [s for s in self.sessions.values() if s.state is TxState.ACTIVE]
        prepared = [s for s in self.sessions.values() if s.state is TxState.PREPARED]
        uncommitted: list[tuple[str, str]] = [item for s in prepared for item in s.bridge_ids] + self.stranded
        self.stranded = []
        if crash:
            uncommitted += [item for s in open_sessions for item in s.bridge_ids]
        else:
            for session in open_sessions:
                self.abandon(session)
        probe_session = "dup-probe"
        self.node.call("session", id=probe_session, transacted=False)
        before = self.own_caches(self.ask(probe_session, "caches")["caches"])
        persisted = self.node.config.persist_id_cache
        self.close_sessions(keep_prepared=True)
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
