"""The durable store: SQLite in WAL mode with ``synchronous=FULL``, one store transaction per operation.

Introduction
------------
Artemis writes a ``DUPLICATE_ID`` journal record inside the same journal
transaction as the message it guards, so the ID and the routing decision
become durable together (``storeDuplicateIDTransactional``, DUP-RESTART-NO-PERSIST), and a
client transaction's ID records are written with its commit. This store
does the same with SQLite: the broker opens at most one store transaction
per operation, lazily, at the first write, and commits it when the
operation has finished; :meth:`SqliteStore.commit` returns only when the
write-ahead log is on disk (``synchronous=FULL`` syncs the WAL at every
commit). An operation that changes nothing durable writes nothing.

What is durable (everything the spec's ``process_restart`` keeps):

``meta``
    ``next_message`` and ``global_size`` (a restart may change the latter).
``sizes``
    per-address ``id-cache-size`` settings (DUP-SIZE-FIXED).
``queues`` and ``messages``
    each queue's address and its waiting messages, each with its arrival
    sequence: a restart reloads a queue in sequence order.
``held``
    messages taken by a receive inside a transaction still open, by
    session and queue name, with their sequence, in the order taken. At a
    restart they wait in their queue again, in arrival order with the rest,
    unless their session's transaction is prepared: then they stay held by
    it (DUP-XA-PREPARED-RESTART). A commit deletes the session's rows, a
    rollback moves them back, and deleting the queue deletes them (the
    messages go with their queue).
``prepared``, ``prepared_messages`` and ``prepared_ids``
    each prepared transaction (XA, DUP-XA-PREPARE) by session: a row saying
    it is prepared, the messages it routes at its commit (number and target
    queue names, in send order), and the IDs it holds (cache and key, in the
    order the spec's ``keep_prepared`` lists them: instant adds,
    ``beforeCommit`` IDs, IDs waiting for the stored commit; none without
    ``persist-id-cache``). The prepare writes all of them in one store
    transaction; the second phase (commit or rollback) deletes them in the
    store transaction of its other writes; deleting an address's last
    queue deletes the address's ID rows (DUP-FORGET-IN-FLIGHT). Its held
    messages are its ``held`` rows.
``ids``
    one row per durable cache slot: cache (kind, address), slot, write
    stamp and key. IDs a reload into a cache of size 0 left dormant
    (``ZeroSizeCache.NO_OP``) are rows with negative slots and stamps, so
    they sort before every live row of their cache. Ordering a cache's rows by stamp gives its durable IDs
    oldest first (the spec's ``get_durable_ids``); holes and uncommitted
    instant adds have no row. Evicting an ID overwrites its slot's row,
    which is Artemis's delete record for the evicted ID (DUP-RING-FIFO).

Why SQLite rather than a hand-written journal: one SQLite commit costs one
WAL sync, the same as an append-only journal's ``fsync``, while SQLite
gives atomic multi-row transactions, recovery of a torn tail and indexed
deletes for free; ``benchmarks/store_choice.py`` measures the difference.

A store opened on ``None`` lives in memory (no file, nothing synced): the
broker still runs every write through it, and a restart reloads from it,
but nothing survives the process.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

SCHEMA_VERSION = 2  # equivalent mutants: written and checked by the same constant; only a store from another version differs

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta(name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS sizes(address TEXT PRIMARY KEY, size INTEGER NOT NULL) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS queues(name TEXT PRIMARY KEY, address TEXT NOT NULL) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS messages(queue TEXT NOT NULL, number INTEGER NOT NULL, seq INTEGER NOT NULL, "
    "PRIMARY KEY(queue, number))"
    " WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS held(session TEXT NOT NULL, queue TEXT NOT NULL, number INTEGER NOT NULL, "
    "seq INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS ids(bridge INTEGER NOT NULL, address TEXT NOT NULL, slot INTEGER NOT NULL,"
    " stamp INTEGER NOT NULL, key BLOB NOT NULL, PRIMARY KEY(bridge, address, slot)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS prepared(session TEXT PRIMARY KEY) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS prepared_messages(session TEXT NOT NULL, ord INTEGER NOT NULL, number INTEGER NOT NULL,"
    " targets TEXT NOT NULL, PRIMARY KEY(session, ord)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS prepared_ids(session TEXT NOT NULL, ord INTEGER NOT NULL, bridge INTEGER NOT NULL,"
    " address TEXT NOT NULL, key BLOB NOT NULL, PRIMARY KEY(session, ord)) WITHOUT ROWID",
)

PreparedMessages = list[tuple[int, tuple[str, ...]]]
"""A prepared transaction's messages: (number, target queue names), in send order."""
PreparedIds = list[tuple[bool, str, bytes]]
"""A prepared transaction's IDs: (bridge, address, key), in the order they enter their caches at the commit."""


@dataclass
class StoredState:
    """Everything the store holds, as read at start-up."""

    next_message: int
    global_size: int
    sizes: dict[str, int] = field(default_factory=dict)
    queues: dict[str, str] = field(default_factory=dict)
    messages: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    """Queue name -> its waiting (arrival sequence, number) pairs, in sequence order."""
    held: list[tuple[str, str, int, int]] = field(default_factory=list)
    """(session, queue, number, sequence) of each message an open transaction took."""
    ids: dict[tuple[bool, str], list[bytes]] = field(default_factory=dict)
    prepared: dict[str, tuple[PreparedMessages, PreparedIds]] = field(default_factory=dict)
    """Session -> its prepared transaction's messages and IDs."""


class SqliteStore:
    """The broker's durable state in one SQLite database (or in memory when ``path`` is None)."""

    def __init__(self, path: Path | None, initial_global_size: int) -> None:
        self.path = path
        self._initial_global_size = initial_global_size
        self._in_transaction = False
        self._conn = self._connect()

    # -- connections ---------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(":memory:" if self.path is None else str(self.path), isolation_level=None,
                               check_same_thread=False)  # equivalent mutants: matters only if a broker is used from another thread; none is
        if self.path is not None:  # equivalent mutants: WAL and synchronous change how commits reach disk, not what is read back; no-ops in memory
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
        conn.execute("BEGIN IMMEDIATE")
        for statement in _SCHEMA:
            conn.execute(statement)
        conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
        conn.execute("INSERT OR IGNORE INTO meta VALUES ('next_message', 1)")
        conn.execute("INSERT OR IGNORE INTO meta VALUES ('global_size', ?)", (self._initial_global_size,))
        conn.execute("COMMIT")
        version = conn.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()[0]  # equivalent mutants (NumberReplacer): the row has one column
        if version != SCHEMA_VERSION:  # equivalent mutants (NotEq_Gt, NotEq_Lt): a store this code made always holds SCHEMA_VERSION
            conn.close()
            raise ValueError(f"store {self.path} has schema version {version}, this broker reads {SCHEMA_VERSION}")
        return conn

    def reopen(self) -> None:
        """Close the connection cleanly and open a new one (a clean restart); in memory, keep the one there is."""
        self.rollback()
        if self.path is None:
            return
        self._conn.close()
        self._conn = self._connect()

    def abandon(self) -> None:
        """Open a new connection and drop the old one without closing it (a crash); in memory, keep the one there is.

        The new connection is opened first, so the old one is never the last
        connection to the file and dropping it cannot checkpoint or remove
        the write-ahead log: only what SQLite made durable is read back.
        """
        self._in_transaction = False
        if self.path is None:
            self.rollback()
            return
        self._conn = self._connect()

    def close(self) -> None:
        """Commit nothing further and close the connection."""
        self.rollback()
        self._conn.close()

    # -- transactions ----------------------------------------------------------------

    def _write(self, sql: str, parameters: tuple[object, ...]) -> None:
        if not self._in_transaction:  # equivalent mutants: autocommitting each write differs only if a crash came inside an operation; a crash is an operation of its own
            self._conn.execute("BEGIN")
            self._in_transaction = True
        self._conn.execute(sql, parameters)

    def commit(self) -> None:
        """Make the operation's writes durable (nothing happens if it wrote nothing)."""
        if self._in_transaction:
            self._in_transaction = False
            self._conn.execute("COMMIT")

    def rollback(self) -> None:
        """Abandon the operation's writes."""
        if self._in_transaction:
            self._in_transaction = False  # equivalent mutants: reached only when an operation's writes are abandoned after an exception
            self._conn.execute("ROLLBACK")

    # -- writes ----------------------------------------------------------------------

    def put_id(self, bridge: bool, address: str, slot: int, stamp: int, key: bytes) -> None:
        """Record that ``slot`` of a cache durably holds ``key`` (replacing the evicted ID's record)."""
        self._write("INSERT OR REPLACE INTO ids VALUES (?, ?, ?, ?, ?)", (bridge, address, slot, stamp, key))

    def delete_id(self, bridge: bool, address: str, slot: int) -> None:
        """Record that ``slot`` of a cache holds nothing durable (a hole, a pending add, an eviction by one)."""
        self._write("DELETE FROM ids WHERE bridge = ? AND address = ? AND slot = ?", (bridge, address, slot))

    def drop_caches(self, address: str) -> None:
        """Forget both caches of ``address``; dormant rows (negative slots) stay, as Artemis leaves them.

        See DUP-FORGET-ON-LAST-QUEUE.
        """
        self._write("DELETE FROM ids WHERE bridge IN (0, 1) AND address = ? AND slot >= 0", (address,))

    def drop_all_ids(self) -> None:
        """Forget every ID record (a reload writes the survivors back)."""
        self._write("DELETE FROM ids", ())

    def create_queue(self, name: str, address: str) -> None:
        """Record a new queue."""
        self._write("INSERT INTO queues VALUES (?, ?)", (name, address))

    def delete_queue(self, name: str) -> None:
        """Forget a queue and its waiting messages (messages held by transactions stay held)."""
        self._write("DELETE FROM queues WHERE name = ?", (name,))
        self._write("DELETE FROM messages WHERE queue = ?", (name,))
        self._write("DELETE FROM held WHERE queue = ?", (name,))

    def add_message(self, queue: str, number: int, seq: int) -> None:
        """Record message ``number`` waiting in ``queue`` with arrival sequence ``seq``."""
        self._write("INSERT INTO messages VALUES (?, ?, ?)", (queue, number, seq))

    def remove_message(self, queue: str, number: int) -> None:
        """Record that message ``number`` left ``queue``."""
        self._write("DELETE FROM messages WHERE queue = ? AND number = ?", (queue, number))

    def hold(self, session: str, queue: str, number: int, seq: int) -> None:
        """Record that ``session``'s open transaction took message ``number`` (sequence ``seq``) from ``queue``."""
        self._write("INSERT INTO held VALUES (?, ?, ?, ?)", (session, queue, number, seq))

    def release(self, session: str) -> None:
        """Forget what ``session``'s transaction held (it committed, rolled back or was lost)."""
        self._write("DELETE FROM held WHERE session = ?", (session,))

    def release_lost(self, prepared: list[str]) -> None:
        """Forget the messages held by every session but the ``prepared`` ones (a restart has put them back)."""
        marks = ", ".join("?" * len(prepared))
        self._write(f"DELETE FROM held WHERE session NOT IN ({marks})", tuple(prepared))

    def put_prepared(self, session: str, messages: PreparedMessages, ids: PreparedIds) -> None:
        """Record ``session``'s transaction as prepared, with its messages and its IDs (DUP-XA-PREPARE)."""
        self._write("INSERT INTO prepared VALUES (?)", (session,))
        for order, (number, targets) in enumerate(messages):
            self._write("INSERT INTO prepared_messages VALUES (?, ?, ?, ?)",
                        (session, order, number, json.dumps(list(targets))))
        self.put_prepared_ids(session, ids)

    def put_prepared_ids(self, session: str, ids: PreparedIds) -> None:
        """Record the IDs ``session``'s prepared transaction holds."""
        for order, (bridge, address, key) in enumerate(ids):
            self._write("INSERT INTO prepared_ids VALUES (?, ?, ?, ?, ?)", (session, order, bridge, address, key))

    def forget_prepared(self, session: str) -> None:
        """Forget ``session``'s prepared transaction: its second phase has run (DUP-XA-SECOND-PHASE)."""
        self._write("DELETE FROM prepared WHERE session = ?", (session,))
        self._write("DELETE FROM prepared_messages WHERE session = ?", (session,))
        self._write("DELETE FROM prepared_ids WHERE session = ?", (session,))

    def drop_prepared_ids(self, address: str) -> None:
        """Forget the IDs prepared transactions hold for the caches of ``address`` (DUP-FORGET-IN-FLIGHT)."""
        self._write("DELETE FROM prepared_ids WHERE address = ?", (address,))

    def set_next_message(self, number: int) -> None:
        """Record the number the next message gets."""
        self._write("UPDATE meta SET value = ? WHERE name = 'next_message'", (number,))

    def set_global_size(self, size: int) -> None:
        """Record the broker-wide ``id-cache-size``."""
        self._write("UPDATE meta SET value = ? WHERE name = 'global_size'", (size,))

    def set_size(self, address: str, size: int) -> None:
        """Record an address's ``id-cache-size`` setting."""
        self._write("INSERT OR REPLACE INTO sizes VALUES (?, ?)", (address, size))

    # -- reading ---------------------------------------------------------------------

    def load(self) -> StoredState:
        """Read everything back: the start of a reload."""
        conn = self._conn
        meta = dict(conn.execute("SELECT name, value FROM meta"))
        state = StoredState(next_message=meta["next_message"], global_size=meta["global_size"])
        state.sizes = dict(conn.execute("SELECT address, size FROM sizes"))
        state.queues = dict(conn.execute("SELECT name, address FROM queues"))
        for queue, number, seq in conn.execute("SELECT queue, number, seq FROM messages ORDER BY queue, seq"):
            state.messages.setdefault(queue, []).append((seq, number))
        state.held = list(conn.execute("SELECT session, queue, number, seq FROM held ORDER BY rowid"))
        for bridge, address, key in conn.execute("SELECT bridge, address, key FROM ids ORDER BY stamp"):
            state.ids.setdefault((bool(bridge), address), []).append(bytes(key))
        state.prepared = self.read_prepared()
        return state

    def read_prepared(self) -> dict[str, tuple[PreparedMessages, PreparedIds]]:
        """Every prepared transaction's messages and IDs, by session."""
        conn = self._conn
        found: dict[str, tuple[PreparedMessages, PreparedIds]] = {
            session: ([], []) for (session,) in conn.execute("SELECT session FROM prepared")}
        for session, number, targets in conn.execute(
                "SELECT session, number, targets FROM prepared_messages ORDER BY session, ord"):
            found[session][0].append((number, tuple(json.loads(targets))))
        for session, bridge, address, key in conn.execute(
                "SELECT session, bridge, address, key FROM prepared_ids ORDER BY session, ord"):
            found[session][1].append((bool(bridge), address, bytes(key)))
        return found

    def read_ids(self) -> dict[tuple[bool, str], list[tuple[int, bytes]]]:
        """Every ID record as (slot, key) in stamp order, per cache (for consistency checks)."""
        rows: dict[tuple[bool, str], list[tuple[int, bytes]]] = {}
        for bridge, address, slot, key in self._conn.execute(
                "SELECT bridge, address, slot, key FROM ids ORDER BY stamp"):
            rows.setdefault((bool(bridge), address), []).append((slot, bytes(key)))
        return rows
