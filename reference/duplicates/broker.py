"""The reference duplicate-detection broker: one entry point over the parts.

Introduction
------------
:class:`ReferenceDuplicatesBroker` is the broker as a whole, built from the
parts the other modules describe:

* a :class:`StorageManager` and its journal, which outlive restarts
  (:mod:`.journal`);
* the configuration (global ``id-cache-size``, ``persist-id-cache``), the
  per-address ``id-cache-size`` settings and the queues (:mod:`.queues`),
  which outlive restarts too;
* a :class:`PostOffice` with its ID caches (:mod:`.post_office`,
  :mod:`.cache`), rebuilt at every start;
* one :class:`ServerSession` per client name (:mod:`.session`).

The profile chooses the version's behaviour: when an instant add enters its
cache (``nontx_add`` for normal IDs outside a transaction, ``bridge_add``
for bridge IDs; DUP-NONTX-VISIBILITY, DUP-BRIDGE-DUPLICATE), which IDs a reload
keeps (DUP-RESTART-RELOAD), whether IDs are
persisted at all (DUP-RESTART-NO-PERSIST), and whether per-address sizes exist (ARTEMIS-4159,
2.31.0).

:meth:`ReferenceDuplicatesBroker.execute` runs one command and returns the
same outcome the spec's ``apply`` does (without the rule ID);
:meth:`ReferenceDuplicatesBroker.snapshot` shows the broker as a spec state.

A restart and a crash are the same here: every operation finishes before
the next begins, so nothing is ever half-written. Both lose the open
transactions (the journal ignores records without a commit record) and
rebuild the caches from the journal (:mod:`.loader`); a prepared
transaction is not lost: the journal holds it, and it is given back to the
session that prepared it, whose name its xid is (:mod:`.prepared`,
DUP-XA-PREPARED-RESTART).
"""

from __future__ import annotations

from brokerspec.spec import Outcome, Profile
from brokerspec.spec.duplicates import (
    Begin,
    CacheKind,
    CacheName,
    Commit,
    Crash,
    CreateQueue,
    DeleteId,
    QueryId,
    DeleteQueue,
    Done,
    DuplicateId,
    DuplicatesCommand,
    DuplicatesState,
    IdDeleted,
    IdQueried,
    NotSupported,
    Prepare,
    QueueDeleted,
    QueueExists,
    QueueNotFound,
    Receive,
    Restart,
    Restarted,
    Rollback,
    Send,
    SendFailure,
    SetIdCacheSize,
)

from .journal import StorageManager
from .loader import restart_broker_state
from .post_office import Configuration, PostOffice, get_duplicate_id_bytes
from .queues import Bindings, Queue
from .session import ServerSession
from .snapshot import render_state
from .transaction import Transaction, TransactionState


class ReferenceDuplicatesBroker:
    """A broker's duplicate detection, built the way Artemis builds it."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.options = profile.duplicates
        self.configuration = Configuration(self.options.id_cache_size, self.options.persist_id_cache)
        self.storage = StorageManager()
        self.address_settings: dict[str, int] = {}
        self.bindings = Bindings()
        self.may_have_dormant = False
        """Set once a reload left stored IDs unloaded; until then there are none to look for."""
        self.post_office = PostOffice(self.configuration, self.options, self.storage, self.address_settings,
                                      self.bindings)
        self.sessions: dict[str, ServerSession] = {}

    # -- the one entry point -----------------------------------------------------------

    def execute(self, command: DuplicatesCommand) -> Outcome:
        """Run one command and return its outcome."""
        if isinstance(command, Send):
            bridge_id = None if command.bridge_id is None else bytes.fromhex(command.bridge_id)
            return self.get_session(command.session).send(
                self.post_office, command.address, command.duplicate_id, bridge_id,
                command.reject_duplicates, command.address_full,
                command.auto_create and self.options.send_auto_create)
        if isinstance(command, Receive):
            return self.get_session(command.session).receive(self.post_office, command.queue)
        if isinstance(command, Begin):
            return self.get_session(command.session).begin(self.post_office)
        if isinstance(command, Commit):
            return self.get_session(command.session).commit()
        if isinstance(command, Rollback):
            return self.get_session(command.session).rollback()
        if isinstance(command, Prepare):
            return self.get_session(command.session).prepare()
        if isinstance(command, CreateQueue):
            return self.create_queue(command.address, command.queue)
        if isinstance(command, DeleteQueue):
            return self.destroy_queue(command.queue)
        if isinstance(command, DeleteId):
            return self.delete_id(command.address, command.duplicate_id)
        if isinstance(command, SetIdCacheSize):
            return self.set_id_cache_size(command.address, command.size)
        if isinstance(command, QueryId):
            return self.query_id(command)
        if isinstance(command, Restart):
            return self.restart(command.id_cache_size)
        if isinstance(command, Crash):
            return self.restart(None)
        raise TypeError(f"not a duplicate-detection command: {command!r}")  # pragma: no cover - the union is closed

    def get_session(self, name: str) -> ServerSession:
        """The session called ``name``, opened on first use."""
        session = self.sessions.get(name)
        if session is None:
            session = self.sessions[name] = ServerSession(name)
        return session

    # -- management --------------------------------------------------------------------

    def create_queue(self, address: str, name: str) -> Outcome:
        """Create a queue bound to ``address``; queue names are unique in the broker."""
        if not self.bindings.add_binding(Queue(name, address, self.storage.generate_id())):
            return QueueExists(name)
        return Done()

    def destroy_queue(self, name: str) -> Outcome:
        """Delete a queue and its messages; the last queue of an address takes the address's IDs with it.

        See DUP-FORGET-ON-LAST-QUEUE.
        """
        forgot = self.post_office.remove_binding(name)
        if forgot is None:
            return QueueNotFound(name)
        return QueueDeleted(forgot)

    def delete_id(self, address: str, duplicate_id: DuplicateId) -> Outcome:
        """``DuplicateIDCache.deleteFromCache`` on ``address``'s cache, if it has one (DUP-DELETE-ID)."""
        key = get_duplicate_id_bytes(duplicate_id)
        cache = self.post_office.duplicate_id_caches.get(CacheName(CacheKind.NORMAL, address))
        if isinstance(key, SendFailure) or cache is None or not cache.contains(key):
            return IdDeleted(False)
        cache.delete_from_cache(key)
        return IdDeleted(True)

    def query_id(self, command: QueryId) -> Outcome:
        """``DuplicateIDCache.contains`` on the cache the ID would be checked in, if it exists (DUP-QUERY-ID)."""
        if command.bridge_id is not None:
            name, key = CacheName(CacheKind.BRIDGE, command.address), bytes.fromhex(command.bridge_id)
        else:
            assert command.duplicate_id is not None
            name, found = CacheName(CacheKind.NORMAL, command.address), get_duplicate_id_bytes(command.duplicate_id)
            if isinstance(found, SendFailure):
                return IdQueried(False)
            key = found
        cache = self.post_office.duplicate_id_caches.get(name)
        return IdQueried(cache is not None and cache.contains(key))

    def set_id_cache_size(self, address: str, size: int) -> Outcome:
        """Set ``address``'s ``id-cache-size``; caches that exist keep their size (DUP-SIZE-FIXED, ARTEMIS-4159)."""
        if not self.options.per_address_size:
            return NotSupported(SetIdCacheSize.op)
        self.address_settings[address] = size
        return Done()

    def restart(self, id_cache_size: int | None) -> Outcome:
        """Stop and start again, with a new global ``id-cache-size`` when given.

        See DUP-RESTART-NO-PERSIST, DUP-RESTART-RELOAD; prepared transactions
        are not lost, and not counted (DUP-XA-PREPARED-RESTART).
        """
        lost = [session.tx for session in self.sessions.values()
                if session.tx is not None and session.tx.state is not TransactionState.PREPARED]
        self.sessions.clear()
        if id_cache_size is not None:
            self.configuration.id_cache_size = id_cache_size
        self.post_office, dropped, prepared = restart_broker_state(
            self.configuration, self.options, self.storage, self.address_settings, self.bindings)
        for xid, tx in prepared:
            self.get_session(xid).tx = tx
        self.may_have_dormant = self.may_have_dormant or self.post_office.left_dormant
        return Restarted(len(lost), dropped)

    def dormant_ids(self) -> dict[CacheName, tuple[bytes, ...]]:
        """Stored IDs that no cache in memory holds (a reload into size 0 left them, ``ZeroSizeCache.NO_OP``)."""
        if not self.may_have_dormant:
            return {}
        in_memory = {slot.record_id for cache in self.post_office.duplicate_id_caches.values() for slot in cache.ids}
        found: dict[CacheName, tuple[bytes, ...]] = {}
        for name, records in self.storage.read_duplicate_ids().items():
            left = tuple(key for key, record_id in records if record_id not in in_memory)
            if left:
                found[name] = left
        return found

    # -- observation -------------------------------------------------------------------

    def open_transactions(self) -> dict[str, Transaction]:
        """Each session's open transaction, by session name."""
        return {name: session.tx for name, session in self.sessions.items() if session.tx is not None}

    def snapshot(self) -> DuplicatesState:
        """The broker rendered as a spec state."""
        return render_state(self.options, self.configuration.id_cache_size, self.address_settings,
                            self.post_office.duplicate_id_caches, self.bindings, self.open_transactions(),
                            self.storage.next_message_number, self.dormant_ids())
