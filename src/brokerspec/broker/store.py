"""The store layer: durable addresses, queues, messages and duplicate IDs in the fast broker's SQLite store.

Introduction
------------
The Qpid broker design (seed ``004``) keeps durable state behind a store
with a transaction log for recovery. brokerspec's fast duplicate-detection
broker already has one: :class:`brokerspec.impl.duplicates.store.SqliteStore`,
SQLite in WAL mode with ``synchronous=FULL``, one store transaction per
operation, committed before the operation answers. :class:`BrokerStore`
is that store with three more tables, the ones a broker clients connect to
needs and the spec's abstract messages do not:

``addresses``
    each address a client or the management destination made, with its
    routing types (comma separated), so a restart rebuilds the name model.
``bindings``
    each queue's address, bare name and routing type (the inherited
    ``queues`` table keeps the name and address only).
``bodies``
    each durable message's address, headers (JSON) and body, by message
    number. One row however many queues hold the message; the model
    deletes it when the last queue lets go.

Everything else is inherited: waiting messages are ``messages`` rows
(queue, number, arrival sequence), duplicate IDs are ``ids`` rows (one per
cache slot, in stamp order, DUP-RESTART-NO-PERSIST), ``meta`` holds the
next message number.

What a restart keeps (Artemis's journal keeps the same; ``docs/broker.md``):
durable messages that were committed (a persistent send outside a
transaction, or a transaction's persistent sends at its commit), in queue
order, minus what was acknowledged; the duplicate IDs recorded with them
(when ``persist_id_cache`` is on); every address and queue. A message
delivered but not acknowledged is still a ``messages`` row, so it is
delivered again after the restart. Non-persistent messages and open
transactions are lost, as in Artemis.

The crash discipline is the inherited one: a write happens inside the
operation's store transaction and :meth:`commit` returns only when the WAL
is on disk. The sessions layer commits before it sends a ``RECEIPT`` or
before the next frame is read, so a client that saw a receipt (or a
``COMMIT`` answered) holds a promise the store already kept.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from brokerspec.impl.duplicates.store import SqliteStore, StoredState

_BROKER_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS addresses(name TEXT PRIMARY KEY, types TEXT NOT NULL) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS bindings(name TEXT PRIMARY KEY, address TEXT NOT NULL, queue TEXT NOT NULL,"
    " routing_type TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS bodies(number INTEGER PRIMARY KEY, address TEXT NOT NULL, headers TEXT NOT NULL,"
    " body BLOB NOT NULL)",
)


@dataclass(frozen=True)
class StoredBinding:
    """One queue as the store holds it."""

    fqqn: str
    address: str
    queue: str
    routing_type: str


@dataclass(frozen=True)
class StoredBody:
    """One durable message's content."""

    address: str
    headers: tuple[tuple[str, str], ...]
    body: bytes


@dataclass
class BrokerImage:
    """Everything a restart reads back."""

    state: StoredState
    addresses: dict[str, tuple[str, ...]] = field(default_factory=dict)
    bindings: list[StoredBinding] = field(default_factory=list)
    bodies: dict[int, StoredBody] = field(default_factory=dict)


class BrokerStore(SqliteStore):
    """The fast broker's SQLite store with the tables a runnable broker adds."""

    def _connect(self) -> sqlite3.Connection:
        conn = super()._connect()
        conn.execute("BEGIN IMMEDIATE")
        for statement in _BROKER_SCHEMA:
            conn.execute(statement)
        conn.execute("COMMIT")
        return conn

    def put_address(self, name: str, routing_types: tuple[str, ...]) -> None:
        """Record an address and its routing types (a second call replaces them)."""
        self._write("INSERT OR REPLACE INTO addresses VALUES (?, ?)", (name, ",".join(routing_types)))

    def delete_address(self, name: str) -> None:
        """Forget an address (its queues are deleted one by one before)."""
        self._write("DELETE FROM addresses WHERE name = ?", (name,))

    def put_binding(self, fqqn: str, address: str, queue: str, routing_type: str) -> None:
        """Record a queue: the inherited ``queues`` row and its binding details."""
        self.create_queue(fqqn, address)
        self._write("INSERT INTO bindings VALUES (?, ?, ?, ?)", (fqqn, address, queue, routing_type))

    def delete_binding(self, fqqn: str) -> None:
        """Forget a queue, its binding and its waiting messages."""
        self.delete_queue(fqqn)
        self._write("DELETE FROM bindings WHERE name = ?", (fqqn,))

    def put_body(self, number: int, address: str, headers: tuple[tuple[str, str], ...], body: bytes) -> None:
        """Record a durable message's content."""
        self._write("INSERT OR REPLACE INTO bodies VALUES (?, ?, ?, ?)",
                    (number, address, json.dumps([list(pair) for pair in headers]), body))

    def delete_body(self, number: int) -> None:
        """Forget a message's content: no queue holds it any more."""
        self._write("DELETE FROM bodies WHERE number = ?", (number,))

    def load_image(self) -> BrokerImage:
        """Read everything back, dropping bodies no queue holds (a crash between two writes cannot leave any:
        they are written in one store transaction; a transaction rolled back before its commit can)."""
        image = BrokerImage(self.load())
        conn = self._conn
        image.addresses = {name: tuple(t for t in types.split(",") if t)
                           for name, types in conn.execute("SELECT name, types FROM addresses")}
        image.bindings = [StoredBinding(*row) for row in
                          conn.execute("SELECT name, address, queue, routing_type FROM bindings ORDER BY rowid")]
        held = {number for pairs in image.state.messages.values() for _, number in pairs}
        for number, address, headers, body in conn.execute("SELECT number, address, headers, body FROM bodies"):
            if number in held:
                image.bodies[number] = StoredBody(address, tuple((str(k), str(v)) for k, v in json.loads(headers)),
                                                  bytes(body))
        return image

    def orphan_bodies(self) -> list[int]:
        """Message numbers whose content is stored but which no queue holds."""
        return [number for (number,) in self._conn.execute(
            "SELECT number FROM bodies WHERE number NOT IN (SELECT number FROM messages)")]


def open_store(path: Path | None) -> BrokerStore:
    """The broker's store at ``path`` (created if missing), or one in memory when ``path`` is None."""
    return BrokerStore(path, 0)
