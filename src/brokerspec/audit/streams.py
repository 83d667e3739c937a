"""Auditing production duplicate-detection streams, one address at a time.

Introduction
------------
A *duplicate-detection stream* is what a broker can export cheaply in
production: one row per message sent, and one per transaction end, each
with the address, the duplicate ID, the transaction and what the broker
answered. The rows (format version 1, ``docs/audit.md``) are:

============  ===============================================================
column        meaning
============  ===============================================================
``v``         format version, 1
``address``   the address the row is about
``seq``       the row's place in the recorded order; increases within an address
``op``        ``send``, ``commit`` or ``rollback``
``duplicate_id``  the message's duplicate ID (a string), or null (sends only)
``tx``        the transaction, or null for a send outside one
``observed``  ``accepted`` or ``rejected``: routed or not (send), succeeded or failed (commit)
============  ===============================================================

A transaction that sends to several addresses has a ``commit`` (or
``rollback``) row at each of them.

Why partitioning by address is exact
------------------------------------
Every rule a row is judged by reads and writes the state of its own address
only: the address's ID ring (DUP-CACHE-PER-ADDRESS, DUP-RING-FIFO) and the
part of each open transaction that was sent to it. So the rows of one
address, in ``seq`` order, get the same verdicts whether they are replayed
alone or interleaved with every other address. The one rule that crosses
addresses is the commit of a rollback-only transaction
(DUP-COMMIT-ROLLBACK-ONLY): a duplicate at one address makes the commit
fail at all of them. The per-address pass therefore does not judge commit
rows; it reports, per commit row, whether *this* address doomed the
transaction, and :func:`judge_commits` judges every commit row once the
facts of all addresses are in (a group-by on the transaction). Which IDs a
commit records at an address needs only that address: the transaction's
IDs sent there, in send order, when the commit succeeded (the broker's
answer when this address did not doom it; never when it did).

The ring here is a mutable copy of :mod:`brokerspec.spec.duplicates.ring`
for speed (same order of "point the index, then evict", same quirks); a
property test keeps the two equal. String IDs are compared as strings:
two strings have the same DUP-ID-KEY bytes exactly when they are equal.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

STREAM_VERSION = 1
STREAM_FIELDS = ("v", "address", "seq", "op", "duplicate_id", "tx", "observed")
_KNOWN_FIELDS = frozenset(STREAM_FIELDS)
OPS = ("send", "commit", "rollback")
VERDICTS = ("accepted", "rejected")

# What a row of the per-address pass is (first field of every output tuple).
DIVERGENCE = "divergence"
QUARANTINE = "quarantine"
COMMIT = "commit"
SUMMARY = "summary"


Row = tuple[str, int, str, "str | None", "str | None", str, str, int]
"""A stream row as the replay takes it: address, seq, op, duplicate_id, tx, observed, file, line."""


class IdRing:
    """A bounded FIFO ID cache, as ``spec/duplicates/ring.py`` keeps it, but mutable (DUP-RING-FIFO).

    >>> ring = IdRing(2)
    >>> for key in ("a", "b", "c"):
    ...     ring.add(key)
    >>> "a" in ring, "c" in ring
    (False, True)
    """

    __slots__ = ("size", "slots", "position", "index")

    def __init__(self, size: int) -> None:
        self.size = size
        self.slots: list[str] = []
        self.position = 0
        self.index: dict[str, int] = {}

    def __contains__(self, key: str) -> bool:
        return key in self.index

    def add(self, key: str) -> None:
        """Point the index at the cursor, overwrite the slot, drop what it held, move on (DUP-RING-FIFO)."""
        size = self.size
        if size <= 0:
            return
        position = self.position
        index = self.index
        index[key] = position
        slots = self.slots
        if position < len(slots):
            evicted = slots[position]
            slots[position] = key
            if evicted in index:  # even when it is the ID just written: the spec's quirk
                del index[evicted]
        else:
            slots.append(key)
        self.position = 0 if position == size - 1 else position + 1


class _OpenTx:
    __slots__ = ("ids", "doomed")

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.doomed = False


class AddressAuditor:
    """Replays the rows of one address in ``seq`` order and says where the broker parted from the rules."""

    def __init__(self, address: str, cache_size: int) -> None:
        self.address = address
        self.ring = IdRing(cache_size)
        self.open: dict[str, _OpenTx] = {}
        self.ended: dict[str, int] = {}
        self.last_seq: int | None = None
        self.checked = 0
        self.divergences = 0

    def feed(self, row: Row) -> tuple[object, ...] | None:
        """Judge one valid row; return an output tuple (see :func:`audit_sorted_rows`) or None when it agrees."""
        address, seq, op, _, tx, _, file, line = row
        if self.last_seq is not None and seq <= self.last_seq:
            return (QUARANTINE, address, seq, op, file, line,
                    f"seq {seq} does not follow seq {self.last_seq} of address {address!r}: "
                    f"seq must increase within an address")
        if tx is not None and tx in self.ended:
            return (QUARANTINE, address, seq, op, file, line,
                    f"transaction {tx!r} already ended at seq {self.ended[tx]} of address "
                    f"{address!r}; a transaction ID names one transaction")
        self.last_seq = seq
        self.checked += 1
        if op == "send":
            return self._send(row)
        if op == "commit":
            return self._commit(row)
        return self._rollback(row)

    def _diverged(self, row: Row, expected: str, rule: str) -> tuple[object, ...]:
        address, seq, op, duplicate_id, tx, observed, file, line = row
        self.divergences += 1
        return (DIVERGENCE, address, seq, op, file, line, expected, observed, rule, tx, duplicate_id)

    def _send(self, row: Row) -> tuple[object, ...] | None:
        key, tx_name, observed = row[3], row[4], row[5]
        if tx_name is None:
            if key is not None and key in self.ring:
                expected, rule = "rejected", "DUP-NONTX-DUPLICATE"
            else:
                expected, rule = "accepted", "DUP-ROUTED"
                if key is not None:
                    self.ring.add(key)
        else:
            tx = self.open.get(tx_name)
            if tx is None:
                tx = self.open[tx_name] = _OpenTx()
            if key is not None and key in self.ring:
                expected, rule = "rejected", "DUP-TX-DUPLICATE"
                tx.doomed = True
            else:
                expected, rule = "accepted", "DUP-TX-HELD"
                if key is not None:
                    tx.ids.append(key)
        return None if observed == expected else self._diverged(row, expected, rule)

    def _commit(self, row: Row) -> tuple[object, ...]:
        address, seq, op, _, tx_name, observed, file, line = row
        assert tx_name is not None
        tx = self.open.pop(tx_name, None)
        self.ended[tx_name] = seq
        doomed = tx is not None and tx.doomed
        if tx is not None and not doomed and observed == "accepted":
            for key in tx.ids:
                self.ring.add(key)
        return (COMMIT, address, seq, op, file, line, tx_name, doomed, observed)

    def _rollback(self, row: Row) -> tuple[object, ...] | None:
        tx_name = row[4]
        assert tx_name is not None
        self.open.pop(tx_name, None)
        self.ended[tx_name] = row[1]
        return None if row[5] == "accepted" else self._diverged(row, "accepted", "DUP-ROLLBACK")

    def summary(self) -> tuple[object, ...]:
        """The address's accounting row: rows checked and divergences found by this pass."""
        return (SUMMARY, self.address, self.checked, self.divergences)


def check_values(address: object, seq: object, op: object, duplicate_id: object, tx: object,
                 observed: object) -> str | None:
    """Why these values cannot be audited, naming the field; None when they can."""
    if not isinstance(address, str) or not address:
        return f"address: expected a non-empty string, got {address!r}"
    if type(seq) is not int or not -(2 ** 63) <= seq < 2 ** 63:
        return f"seq: expected a 64-bit integer, got {seq!r}"
    if op not in OPS:
        return f"op: expected one of {', '.join(OPS)}, got {op!r}"
    if duplicate_id is not None:
        if op != "send":
            return f"duplicate_id: only a send carries a duplicate ID, got {duplicate_id!r} on a {op}"
        if not isinstance(duplicate_id, str):
            return f"duplicate_id: expected a string or null, got {duplicate_id!r}"
    if tx is not None and (not isinstance(tx, str) or not tx):
        return f"tx: expected a non-empty string or null, got {tx!r}"
    if tx is None and op != "send":
        return f"tx: a {op} needs the transaction it ends"
    if observed not in VERDICTS:
        return f"observed: expected one of {', '.join(VERDICTS)}, got {observed!r}"
    return None


def validate_record(record: object) -> tuple[object, ...] | str:
    """A decoded JSON line as (address, seq, op, duplicate_id, tx, observed), or why it is no stream row."""
    if not isinstance(record, dict):
        return f"expected a JSON object, got {type(record).__name__}"
    if not _KNOWN_FIELDS.issuperset(record):
        unknown = sorted(set(record) - _KNOWN_FIELDS)
        return f"unknown field {unknown[0]!r}; a stream row has {', '.join(STREAM_FIELDS)}"
    version = record.get("v")
    if type(version) is not int or version != STREAM_VERSION:
        return f"v: unsupported stream version {version!r}; this brokerspec reads version {STREAM_VERSION}"
    values = tuple(record.get(name) for name in STREAM_FIELDS[1:])
    problem = check_values(*values)
    return problem if problem is not None else values


def audit_sorted_rows(rows: Iterable[tuple[object, ...]], cache_size: int) -> Iterator[tuple[object, ...]]:
    """Replay raw rows sorted by (address, seq); yield divergences, quarantines, commit facts and summaries.

    Each input row is (address, seq, op, duplicate_id, tx, observed, file, line), values not yet checked.
    Output tuples, by their first field:

    * ``divergence``: address, seq, op, file, line, expected, observed, rule, tx, duplicate_id
    * ``quarantine``: address, seq, op, file, line, reason
    * ``commit``: address, seq, op, file, line, tx, doomed here, observed (judged by :func:`judge_commits`)
    * ``summary``: address, rows checked, divergences (one per run of an address, after its rows)
    """
    auditor: AddressAuditor | None = None
    for row in rows:
        problem = check_values(*row[:6])
        if problem is not None:
            yield (QUARANTINE, row[0], row[1], row[2], row[6], row[7], problem)
            continue
        address = row[0]
        if auditor is None or address != auditor.address:
            if auditor is not None:
                yield auditor.summary()
            auditor = AddressAuditor(str(address), cache_size)
        result = auditor.feed(row)  # type: ignore[arg-type]
        if result is not None:
            yield result
    if auditor is not None:
        yield auditor.summary()


@dataclass(frozen=True)
class CommitFact:
    """A commit row's facts from the per-address pass."""

    address: str
    seq: int
    file: str
    line: int
    tx: str
    doomed_here: bool
    observed: str


def judge_commits(facts: Iterable[CommitFact]) -> Iterator[tuple[CommitFact, str, str]]:
    """Each commit row whose answer is wrong, with the expected answer and the rule.

    A transaction doomed at any of its addresses must fail its commit at all
    of them; one doomed nowhere must succeed (DUP-COMMIT-ROLLBACK-ONLY, DUP-COMMIT).
    """
    by_tx: dict[str, list[CommitFact]] = {}
    for fact in facts:
        by_tx.setdefault(fact.tx, []).append(fact)
    for group in by_tx.values():
        doomed = any(f.doomed_here for f in group)
        expected, rule = ("rejected", "DUP-COMMIT-ROLLBACK-ONLY") if doomed else ("accepted", "DUP-COMMIT")
        for fact in group:
            if fact.observed != expected:
                yield fact, expected, rule
