"""Synthetic corpora for the audit: histories recorded from the fast implementation, with faults planted.

Introduction
------------
``brokerspec generate`` writes what a broker's export would look like:

* ``--kind histories``: traces of both domains (addressing and duplicates),
  one per history, in a corpus file where every line carries ``history``;
* ``--kind streams``: duplicate-detection stream rows, one address group
  (two addresses that share transactions) per history, interleaved.

Every outcome is the one the fast implementation (``impl``) gave. A *fault*
is one outcome taken instead from a planted-bug broker
(:mod:`brokerspec.planted`) run in lockstep on the same commands: the first
step at which the buggy broker answered differently. The rest of that
history keeps the correct broker's answers, so a fault is one wrong
observation in an otherwise correct history, and ``faults.jsonl`` lists
exactly where each one is. The audit must find those and nothing else.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from brokerspec.spec import BrokerspecError, Outcome, Profile
from brokerspec.spec import addressing as A
from brokerspec.spec import duplicates as D

from ..codec import encode_command, encode_outcome
from ..trace import SCHEMA_VERSION
from .streams import STREAM_VERSION

class GenerateError(BrokerspecError):
    """A corpus that cannot be made as asked (for example, no planted bug shows under the profile)."""


@dataclass(frozen=True)
class Fault:
    """Where a fault was planted: the history, its step (or seq), the operation and the bug."""

    history: str
    step: int
    op: str
    bug: str


# --- workloads ----------------------------------------------------------------------------

_NAMES = ("a1", "a2", "q1", "q2")
_RT = (A.RoutingType.ANYCAST, A.RoutingType.MULTICAST)


def addressing_command(rng: random.Random) -> Any:
    """One random address-resolution command over a tiny name alphabet."""
    name = rng.choice(_NAMES)
    fqqn = f"{rng.choice(_NAMES[:2])}::{rng.choice(_NAMES[2:])}"
    pick = rng.random()
    if pick < 0.15:
        return A.CreateAddress(rng.choice(_NAMES[:2]), frozenset(rng.sample(_RT, rng.randint(1, 2))))
    if pick < 0.35:
        return A.CreateQueue(rng.choice(_NAMES[:2]), rng.choice(_NAMES[2:]), rng.choice(_RT))
    if pick < 0.45:
        return A.DeleteQueue(rng.choice((name, fqqn)))
    if pick < 0.5:
        return A.DeleteAddress(rng.choice(_NAMES[:2]), rng.random() < 0.5)
    if pick < 0.7:
        return A.Lookup(rng.choice((name, fqqn)))
    if pick < 0.85:
        return A.Send(rng.choice((name, fqqn)), rng.choice((None, *_RT)))
    return A.Consume(rng.choice((name, fqqn)), rng.choice((None, *_RT)))


_IDS = ("x", "y", "z", "w")


def duplicates_command(rng: random.Random) -> Any:
    """One random duplicate-detection command over a tiny alphabet (two addresses, two sessions)."""
    address = rng.choice(("a1", "a2"))
    session = rng.choice(("s1", "s2"))
    pick = rng.random()
    if pick < 0.08:
        return D.CreateQueue(address, f"{address}-q{rng.randint(1, 2)}")
    if pick < 0.11:
        return D.DeleteQueue(f"{address}-q{rng.randint(1, 2)}")
    if pick < 0.2:
        return D.Begin(session)
    if pick < 0.55:
        bridge = f"0{rng.randint(1, 3)}" if rng.random() < 0.15 else None
        return D.Send(session, address, D.DuplicateId(D.IdKind.STRING, rng.choice(_IDS)), bridge)
    if pick < 0.65:
        return D.Commit(session)
    if pick < 0.7:
        return D.Rollback(session)
    if pick < 0.75:
        return D.Receive(session, f"{address}-q1")
    if pick < 0.8:
        return D.DeleteId(address, D.DuplicateId(D.IdKind.STRING, rng.choice(_IDS)))
    if pick < 0.84:
        return D.SetIdCacheSize(address, rng.randint(1, 3))
    if pick < 0.9:
        return D.Restart(rng.choice((None, 2, 3)))
    return D.Send(session, address, D.DuplicateId(D.IdKind.STRING, rng.choice(_IDS)))


def _clean_and_bugs(domain: str) -> tuple[type[Any], list[Any]]:
    if domain == "addressing":
        from brokerspec.impl import FastBroker
        from brokerspec.planted.addressing_bugs import PLANTED as ADDRESSING_BUGS

        return FastBroker, list(ADDRESSING_BUGS)
    from brokerspec.impl.duplicates import FastDuplicatesBroker
    from brokerspec.planted.duplicates_bugs import PLANTED as DUPLICATES_BUGS

    return FastDuplicatesBroker, list(DUPLICATES_BUGS)


def _close(broker: Any) -> None:
    close = getattr(broker, "close", None)
    if close is not None:
        close()


def record_history(domain: str, profile: Profile, rng: random.Random, steps: int,
                   bug: type[Any] | None = None) -> tuple[list[tuple[Any, Outcome]], int | None]:
    """Commands and the clean impl's outcomes; with ``bug``, the first differing outcome swapped in.

    Returns the steps and the 1-based step of the planted fault (None when
    the bug did not show in this history).
    """
    clean_type, _ = _clean_and_bugs(domain)
    make = addressing_command if domain == "addressing" else duplicates_command
    clean = clean_type(profile)
    buggy = bug(profile) if bug is not None else None
    recorded: list[tuple[Any, Outcome]] = []
    fault: int | None = None
    try:
        for number in range(1, steps + 1):
            command = make(rng)
            outcome = clean.execute(command)
            if buggy is not None:
                wrong = buggy.execute(command)
                if wrong != outcome:
                    fault = number
                    outcome = wrong
                    _close(buggy)
                    buggy = None
            recorded.append((command, outcome))
    finally:
        _close(clean)
        if buggy is not None:
            _close(buggy)
    return recorded, fault


def history_lines(history: str, domain: str, profile: Profile, steps: list[tuple[Any, Outcome]]) -> Iterator[
        dict[str, Any]]:
    """The trace lines of one history, each carrying ``history``."""
    yield {"v": SCHEMA_VERSION, "type": "header", "history": history, "domain": domain, "profile": profile.name,
           "overrides": dict(profile.overrides)}
    for number, (command, outcome) in enumerate(steps, start=1):
        yield {"v": SCHEMA_VERSION, "type": "step", "history": history, "step": number, "op": command.op,
               "args": encode_command(command), "outcome": encode_outcome(outcome)}


def iter_histories(profile: Profile, histories: int, faults: int, seed: int, steps: int,
                   planted: list[Fault]) -> Iterator[list[dict[str, Any]]]:
    """The lines of each history in turn (alternating domains); planted faults are appended to ``planted``.

    One history at a time, so a writer can hold one history's lines and no more.
    """
    rng = random.Random(seed)
    faulty = set(rng.sample(range(histories), min(faults, histories)))
    for index in range(histories):
        domain = ("addressing", "duplicates")[index % 2]
        name = f"h{index:06d}"
        if index in faulty:
            recorded, _ = _faulty_history(domain, profile, rng, steps, name, planted)
        else:
            recorded, _ = record_history(domain, profile, random.Random(rng.random()), steps)
        yield list(history_lines(name, domain, profile, recorded))


def generate_histories(profile: Profile, histories: int, faults: int, seed: int, steps: int = 40) -> tuple[
        list[dict[str, Any]], list[Fault]]:
    """``histories`` histories alternating between the domains, ``faults`` of them with a planted fault.

    All lines in memory: for small corpora and tests. ``brokerspec generate`` streams them to their files
    (:mod:`.corpus`).
    """
    planted: list[Fault] = []
    lines = [line for history in iter_histories(profile, histories, faults, seed, steps, planted)
             for line in history]
    return lines, planted


def _faulty_history(domain: str, profile: Profile, rng: random.Random, steps: int, name: str,
                    planted: list[Fault]) -> tuple[list[tuple[Any, Outcome]], int | None]:
    _, bugs = _clean_and_bugs(domain)
    bugs = [b for b in bugs if profile.name in b.profiles]
    for _ in range(400):
        bug = rng.choice(bugs)
        recorded, fault = record_history(domain, profile, random.Random(rng.random()), steps, bug.broker)
        if fault is not None:
            planted.append(Fault(name, fault, recorded[fault - 1][0].op, bug.name))
            return recorded, fault
    raise GenerateError(f"no planted bug of {domain} showed in 400 histories of {steps} steps under "
                        f"{profile.name}; try more --steps")


# --- streams ------------------------------------------------------------------------------


def group_addresses(group: int) -> tuple[str, str]:
    """The two addresses of stream group ``group``."""
    return f"g{group:05d}-a", f"g{group:05d}-b"


def stream_group(profile: Profile, rng: random.Random, group: int, events: int,
                 bug: type[Any] | None = None) -> tuple[list[dict[str, Any]], int | None]:
    """The stream rows of one address group (two addresses, transactions across both) from the impl.

    Rows carry a group-local ``seq``; with ``bug`` the first row the buggy
    broker answers differently is taken from it (its index is returned).
    """
    from brokerspec.impl.duplicates import FastDuplicatesBroker

    addresses = group_addresses(group)
    brokers = [FastDuplicatesBroker(profile)] + ([bug(profile)] if bug is not None else [])
    for broker in brokers:
        for address in addresses:
            broker.execute(D.CreateQueue(address, f"{address}-q"))
    rows: list[dict[str, Any]] = []
    fault: int | None = None
    touched: dict[str, set[str]] = {}
    tx_number = 0
    open_tx: dict[str, str] = {}
    ids = [f"m{group}-{n}" for n in range(12)]
    try:
        while len(rows) < events:
            session = rng.choice(("s1", "s2", "s3"))
            pick = rng.random()
            if session not in open_tx and pick < 0.3:
                tx_number += 1
                open_tx[session] = f"g{group}-t{tx_number}"
                touched[session] = set()
                for broker in brokers:
                    broker.execute(D.Begin(session))
                continue
            if session in open_tx and pick < 0.12:
                end = D.Commit(session) if rng.random() < 0.8 else D.Rollback(session)
                answers = [broker.execute(end) for broker in brokers]
                verdicts = ["accepted" if isinstance(a, (D.Committed, D.RolledBack)) else "rejected"
                            for a in answers]
                op = "commit" if isinstance(end, D.Commit) else "rollback"
                spanned = sorted(touched.pop(session))
                for address in spanned:
                    rows.append({"address": address, "op": op, "duplicate_id": None, "tx": open_tx[session],
                                 "observed": verdicts[0], "_wrong": verdicts[-1], "_span": len(spanned)})
                del open_tx[session]
                continue
            address = rng.choice(addresses)
            key = rng.choice(ids) if rng.random() < 0.9 else None
            if rng.random() < 0.02:
                ids.append(f"m{group}-{len(ids)}")
                ids.pop(0)
            send = D.Send(session, address, D.DuplicateId(D.IdKind.STRING, key) if key is not None else None)
            answers = [broker.execute(send) for broker in brokers]
            verdicts = ["accepted" if isinstance(a, D.Sent) and a.status is not D.RoutingStatus.DUPLICATED_ID
                        else "rejected" for a in answers]
            if session in open_tx:
                touched[session].add(address)
            rows.append({"address": address, "op": "send", "duplicate_id": key, "tx": open_tx.get(session),
                         "observed": verdicts[0], "_wrong": verdicts[-1]})
    finally:
        for broker in brokers:
            _close(broker)
    for index, row in enumerate(rows):
        wrong = row.pop("_wrong")
        span = row.pop("_span", 1)
        if bug is not None and fault is None and wrong != row["observed"]:
            if span > 1:
                # A wrong commit answer is one answer for all of the transaction's addresses; followed by the
                # correct broker's rows it would leave the addresses disagreeing about what was recorded.
                return rows, None
            fault = index
            row["observed"] = wrong
    return rows, fault


STREAM_BUGS = frozenset({"id-added-at-send-not-at-commit", "newest-evicted-instead-of-oldest",
                         "duplicate-in-transaction-does-not-doom", "rejected-duplicate-moves-in-ring"})
"""The planted bugs a stream can show: a stream has no restarts, bridge IDs or queue deletions."""

StreamGroup = tuple[list[dict[str, Any]], "tuple[int, str] | None"]
"""One address group's rows in order (``address``, ``op``, ``duplicate_id``, ``tx``, ``observed``, no
``seq``), and (row index, bug name) of its planted fault, if any."""


def iter_stream_groups(profile: Profile, groups: int, faults: int, seed: int, events: int = 200) -> Iterator[
        StreamGroup]:
    """The rows of each address group in turn, ``faults`` groups with one planted fault each.

    One group at a time: the seeds drawn are the ones :func:`generate_streams` draws, so both give the
    same rows.
    """
    from brokerspec.planted.duplicates_bugs import PLANTED

    bugs = [b for b in PLANTED if b.name in STREAM_BUGS and profile.name in b.profiles]
    rng = random.Random(seed)
    faulty = set(rng.sample(range(groups), min(faults, groups)))
    for group in range(groups):
        if group in faulty:
            for _ in range(400):
                bug = rng.choice(bugs)
                rows, fault = stream_group(profile, random.Random(rng.random()), group, events, bug.broker)
                if fault is not None:
                    yield rows, (fault, bug.name)
                    break
            else:
                raise GenerateError(f"no planted bug showed in 400 stream groups of {events} rows under "
                                    f"{profile.name}; try more --steps")
        else:
            rows, _ = stream_group(profile, random.Random(rng.random()), group, events)
            yield rows, None


def generate_streams(profile: Profile, groups: int, faults: int, seed: int, events: int = 200) -> tuple[
        list[dict[str, Any]], list[Fault]]:
    """Stream rows of ``groups`` address groups, interleaved, ``faults`` groups with one planted fault each.

    The groups are interleaved round robin (row 1 of every group, then row 2 of every group still going...)
    and numbered globally. All rows in memory: for small corpora and tests; ``brokerspec generate`` writes
    the same rows with bounded memory (:mod:`.corpus`).
    """
    per_group: list[list[dict[str, Any]]] = []
    pending: list[tuple[int, int, str]] = []
    for group, (rows, fault) in enumerate(iter_stream_groups(profile, groups, faults, seed, events)):
        per_group.append(rows)
        if fault is not None:
            pending.append((group, fault[0], fault[1]))
    # Interleave the groups round robin and number the rows globally.
    merged: list[dict[str, Any]] = []
    place: dict[tuple[int, int], int] = {}
    cursors = [0] * groups
    live = [g for g in range(groups) if per_group[g]]
    while live:
        for group in list(live):
            index = cursors[group]
            row = per_group[group][index]
            place[(group, index)] = len(merged) + 1
            merged.append({"v": STREAM_VERSION, "address": row["address"], "seq": len(merged) + 1, "op": row["op"],
                           "duplicate_id": row["duplicate_id"], "tx": row["tx"], "observed": row["observed"]})
            cursors[group] += 1
            if cursors[group] == len(per_group[group]):
                live.remove(group)
    planted = [Fault(per_group[g][i]["address"], place[(g, i)], per_group[g][i]["op"], name)
               for g, i, name in pending]
    return merged, planted


# --- writing ------------------------------------------------------------------------------


def write_corpus(out: Path, rows: list[dict[str, Any]], faults: list[Fault], fmt: str, kind: str,
                 files: int = 1) -> list[Path]:
    """Write the rows as ``files`` files (JSON lines or Parquet) and ``faults.jsonl`` beside them."""
    out.mkdir(parents=True, exist_ok=True)
    data = out / "data"
    data.mkdir(exist_ok=True)
    chunks = _split(rows, files, kind)
    written: list[Path] = []
    for number, chunk in enumerate(chunks):
        if fmt == "jsonl":
            path = data / f"part-{number:05d}.jsonl"
            path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in chunk), encoding="utf-8")
        else:
            path = data / f"part-{number:05d}.parquet"
            _write_parquet(path, chunk, kind)
        written.append(path)
    (out / "faults.jsonl").write_text(
        "".join(json.dumps(f.__dict__) + "\n" for f in faults), encoding="utf-8")
    return written


def _split(rows: list[dict[str, Any]], files: int, kind: str) -> list[list[dict[str, Any]]]:
    """Rows split into files by their group (history, or address), so each group sits in one file."""
    key = "history" if kind == "histories" else "address"
    chunks: list[list[dict[str, Any]]] = [[] for _ in range(max(1, files))]
    for row in rows:
        chunks[_bucket(str(row[key]), len(chunks))].append(row)
    return [c for c in chunks if c]


def _bucket(name: str, count: int) -> int:
    import zlib

    return zlib.crc32(name.encode("utf-8")) % count


def stream_schema() -> Any:
    """The Arrow schema of a stream Parquet file, saying it is sorted by (address, seq)."""
    import pyarrow as pa

    from .inputs import SORTED_KEY

    return pa.schema([("v", pa.int32()), ("address", pa.string()), ("seq", pa.int64()), ("op", pa.string()),
                      ("duplicate_id", pa.string()), ("tx", pa.string()), ("observed", pa.string())],
                     metadata={SORTED_KEY: b"address,seq"})


def history_schema() -> Any:
    """The Arrow schema of a history Parquet file (JSON columns as text)."""
    import pyarrow as pa

    return pa.schema([("v", pa.int32()), ("history", pa.string()), ("type", pa.string()),
                      ("step", pa.int64()), ("op", pa.string()), ("args", pa.string()),
                      ("outcome", pa.string()), ("domain", pa.string()), ("profile", pa.string()),
                      ("overrides", pa.string()), ("note", pa.string())])


def flat_history_line(row: dict[str, Any]) -> dict[str, Any]:
    """A trace line as a Parquet history row: every column present, JSON values as JSON text."""
    from .engine import HISTORY_PARQUET_COLUMNS

    record = {name: row.get(name) for name in HISTORY_PARQUET_COLUMNS}
    for name in ("args", "outcome", "overrides"):
        if record[name] is not None:
            record[name] = json.dumps(record[name], ensure_ascii=False)
    return record


def _write_parquet(path: Path, rows: list[dict[str, Any]], kind: str) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    if kind == "streams":
        table = pa.Table.from_pylist(sorted(rows, key=lambda r: (r["address"], r["seq"])), schema=stream_schema())
    else:
        table = pa.Table.from_pylist([flat_history_line(row) for row in rows], schema=history_schema())
    pq.write_table(table, path)
