"""Duplicate-detection benchmark: ID checks in memory, persisted commits, memory per cache.

Introduction
------------
Duplicate detection sits on every send that carries an ID: the broker looks
the ID up in its address's bounded cache and, when the ID is new, writes it
at the cursor, evicting the oldest (``PostOfficeImpl.checkDuplicateID``,
``DuplicateDetectionTest.testCacheSize``). The reference
(``brokerspec.reference.duplicates``) builds this the way Artemis does, to teach; the fast broker (``brokerspec.impl.duplicates``)
keeps a dict index, a preallocated slot list and a cursor, and makes each
accepted ID durable in SQLite. This script prints, in one run and one
process, three sets of figures:

1. Check-and-record operations per second, in memory, reference vs impl, at
   two levels (the first target asks the impl for at least 10x the
   reference):

   ``cache: contains + add``
       the cache structure alone, as ``checkDuplicateID`` drives it: look
       the ID up, add it when it is new. Reference: ``DuplicateIDCache``'s
       ``contains`` and ``add_to_cache_in_memory`` (no journal records, as
       with ``persist-id-cache`` off). Impl: an ``IdCache`` through the
       broker's seams ``_is_duplicate`` and ``_record``, on a broker object
       made without a store (``impl.duplicates.samples.ring_seams``); the
       slot log the broker empties after each operation is emptied after
       each pass, inside the timing. A third column, the *floor*, runs the
       same FIFO as one inline loop over a dict and a list with no calls:
       no pure-Python cache does less, so floor/reference is the most
       impl/reference can be at this level.
   ``broker: non-tx send``
       the whole broker: ``execute(Send(...))`` outside any transaction,
       with a string ID, to an address with one queue (the messages pile
       up; nothing receives), ``persist_id_cache=false``. The reference
       keeps everything in Python objects; the impl is opened with
       ``store_path=None``, an SQLite database in memory: every send still
       runs its SQL (the message counter and the message row in one store
       transaction) through SQLite, but nothing reaches a disk and nothing
       is synced. The output says how many SQL statements a send runs.

   Both levels replay one stream of IDs (``--stream``, default 100,000) on
   a cache of ``--cache-size`` slots (default 20,000) that starts full. A
   share of the stream (``--duplicate-share``, default 20%) repeats an ID
   still in the cache; the rest are new. The stream is cyclic: the cache is
   filled beforehand with the stream's last new IDs, so every pass, the
   first or the tenth, sees the same answers. An untimed first pass checks
   that both sides answer as the stream says (and, for the brokers, give
   equal outcomes), so the figures time the intended work.

2. Persisted commits per second, on disk: the fast broker with its store in
   a file (SQLite, WAL, ``synchronous=FULL``, the store the impl chose),
   each client transaction ``begin``, one send with a new ID, ``commit``;
   against ``benchmarks/store_choice.py``'s baseline, plain ``sqlite3``
   with its defaults and one ``INSERT`` + ``commit()`` per message. Both
   wait for the disk at every store commit, so these figures mostly measure
   the file system's sync latency; the output counts the store commits per
   client commit. Files go to a temporary folder (``--dir`` to choose).

3. Memory per cache: one cache filled with ``--cache-size`` distinct IDs of
   ``--id-bytes`` bytes (default 24, the size of an Artemis bridge ID), in
   the reference and in the impl, measured with ``tracemalloc`` as the net
   bytes still allocated after the fill. Two columns: the cache with its own
   ID objects, and the cache alone with the IDs allocated beforehand and
   shared (Artemis's measurement shares one array of IDs among all its
   caches). A persisted cache keeps a number per slot (the reference a
   journal record ID, the impl a write stamp), and so does the cache
   measured here. For comparison the table quotes Artemis's own figure,
   not ours: after ARTEMIS-3016 (apache/artemis PR #3363, 2020), 100 caches
   of 20,000 IDs (36-byte UUID strings shared by all caches, persist on)
   took 190 MB of heap, about 1.9 MB per cache, down from 280 MB.

Timing: ``time.perf_counter`` with the garbage collector paused; each case
repeats passes until ``--seconds-per-case`` of timed work; ``--rounds``
rounds (default 3) take the reference and the impl in turn, so a noisy
spell of a shared machine hits one round, not one column. The table shows
the best round and the impl/reference ratio of every round, so the noise
is visible. Persisted commits share ``--persist-seconds`` per case over the
same rounds and report the total. Timings are never asserted: the script
prints figures, says whether the 10x target is met, and exits 0 (1 only if
the brokers do not do the work the benchmark means to time).

Usage::

    .venv/bin/python benchmarks/duplicates_bench.py           # about a minute
    .venv/bin/python benchmarks/duplicates_bench.py --quick   # a few seconds
"""

from __future__ import annotations

import argparse
import gc
import random
import sqlite3
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

if str(Path(__file__).resolve().parent) not in sys.path:  # so that the other benchmarks import when this is imported by path
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from addressing_bench import gc_paused, machine_info  # noqa: E402
from store_choice import Figure, run_sqlite_default  # noqa: E402
from store_choice import timed as timed_commits  # noqa: E402
from bench_tables import filesystem_of, render_table  # noqa: E402
from brokerspec.impl.duplicates import FastDuplicatesBroker, IdCache, SlotLog  # noqa: E402
from brokerspec.impl.duplicates.samples import ring_seams  # noqa: E402
from brokerspec.reference.duplicates import DuplicateIDCache, ReferenceDuplicatesBroker, StorageManager  # noqa: E402
from brokerspec.spec import PROFILES, InstantAdd, Outcome, Profile, get_profile  # noqa: E402
from brokerspec.spec.duplicates import (  # noqa: E402
    Begin,
    CacheKind,
    CacheName,
    Commit,
    Committed,
    CreateQueue,
    DuplicateId,
    IdKind,
    RoutingStatus,
    Send,
    Sent,
)

TARGET = 10.0
ADDRESS = "orders"
QUEUE = "orders-q"
SESSION = "s1"
RANDOM_SEED = 20240301
CACHE_NAME = CacheName(CacheKind.NORMAL, ADDRESS)
ARTEMIS_CACHES = 100
ARTEMIS_MB_AFTER = 190.0
ARTEMIS_MB_BEFORE = 280.0
MB = 1_000_000
Item = TypeVar("Item")

CACHE_CASE = "cache: contains + add"
BROKER_CASE = "broker: non-tx send"
PERSISTED_CASE = "broker: begin+send+commit, WAL+FULL"
BASELINE_CASE = "baseline: sqlite3 defaults, insert+commit"


class BenchmarkError(Exception):
    """The brokers did not do the work the benchmark means to time."""


# -- the stream of IDs ---------------------------------------------------------------------------


def id_text(number: int, id_bytes: int) -> str:
    """The ``number``-th ID as a string whose cache key (UTF-16, ``Message.getDuplicateIDBytes``) is ``id_bytes`` long."""
    return f"i{number:0{id_bytes // 2 - 1}x}"


def key_of(text: str) -> bytes:
    """The cache key of a string ID: a new bytes object on every call, as a key decoded from a client is."""
    return text.encode("utf-16-le")


@dataclass(frozen=True)
class Stream:
    """A cyclic stream of IDs: which ID each send carries, whether it is a duplicate, and the fill before it."""

    texts: list[str]
    duplicate: list[bool]
    prefill: list[str]

    @property
    def duplicates(self) -> int:
        """How many sends of one pass repeat an ID still in the cache."""
        return sum(self.duplicate)


def make_stream(length: int, size: int, share: float, id_bytes: int, seed: int) -> Stream:
    """``length`` IDs, ``share`` of them repeating one of the last ``size`` new IDs, the rest new.

    The new IDs are numbered 0..n-1 in stream order and the cache is filled
    beforehand with the last ``size`` of them, oldest first; a repeat picks
    one of the ``size`` most recent new IDs, counting cyclically. With
    n > ``size``, replaying the stream leaves the cache as it found it, so
    every pass gets the same answers.
    """
    rng = random.Random(seed)
    repeats = round(length * share)
    fresh = length - repeats
    if fresh <= size:
        raise ValueError(f"a stream of {length} with {share:.0%} duplicates has {fresh} new IDs; "
                         f"it needs more than the cache's {size} to be replayable")
    repeat_at = set(rng.sample(range(length), repeats))
    texts: list[str] = []
    duplicate: list[bool] = []
    new = 0
    for position in range(length):
        if position in repeat_at:
            texts.append(id_text((new - 1 - rng.randrange(size)) % fresh, id_bytes))
            duplicate.append(True)
        else:
            texts.append(id_text(new, id_bytes))
            duplicate.append(False)
            new += 1
    return Stream(texts, duplicate, [id_text(number, id_bytes) for number in range(fresh - size, fresh)])


# -- level (a): the cache structure alone ------------------------------------------------------------


def reference_cache(size: int, persist: bool) -> tuple[DuplicateIDCache, StorageManager]:
    """An empty reference cache and its storage manager."""
    storage = StorageManager()
    return DuplicateIDCache(CACHE_NAME, size, storage, persist, InstantAdd.IMMEDIATE), storage


def reference_cache_pass(cache: DuplicateIDCache) -> Callable[[list[bytes]], int]:
    """A pass over keys on the reference cache: ``contains``, then ``add_to_cache_in_memory`` when new."""
    contains = cache.contains
    add = cache.add_to_cache_in_memory

    def run(keys: list[bytes]) -> int:
        duplicates = 0
        for key in keys:
            if contains(key):
                duplicates += 1
            else:
                add(key, None)
        return duplicates
    return run


def impl_cache_pass(cache: IdCache) -> Callable[[list[bytes]], int]:
    """A pass over keys on the impl cache through the broker's seams; the slot log emptied at the end."""
    broker = ring_seams(FastDuplicatesBroker)
    is_duplicate = broker._is_duplicate
    record = broker._record
    touched = cache.log.touched

    def run(keys: list[bytes]) -> int:
        duplicates = 0
        for key in keys:
            if is_duplicate(cache, key):
                duplicates += 1
            else:
                record(cache, key, "")
        touched.clear()
        return duplicates
    return run


def floor_cache_pass(size: int, prefill: list[bytes]) -> Callable[[list[bytes]], int]:
    """The floor: a FIFO of ``size`` keys as one inline loop over a local dict and list, no calls.

    The least work a check-and-record can be in pure Python: one ``in``
    probe and, for a new key, one slot write, one index insert and one index
    delete, with no function call. No pure-Python cache goes faster, so
    floor/reference bounds impl/reference at this level.
    """
    index: dict[bytes, int] = {}
    slots: list[bytes | None] = [None] * size
    cursor = 0
    for key in prefill:
        index[key] = cursor
        slots[cursor] = key
        cursor = (cursor + 1) % size

    def run(keys: list[bytes]) -> int:
        nonlocal cursor
        position = cursor
        duplicates = 0
        for key in keys:
            if key in index:
                duplicates += 1
                continue
            evicted = slots[position]
            if evicted is not None:
                del index[evicted]
            slots[position] = key
            index[key] = position
            position += 1
            if position == size:
                position = 0
        cursor = position
        return duplicates
    return run


def check_answers(label: str, answers: Sequence[bool], stream: Stream) -> None:
    """Every answer is the one the stream was built to give."""
    for position, (answer, expected) in enumerate(zip(answers, stream.duplicate)):
        if answer != expected:
            raise BenchmarkError(f"{label}: ID {stream.texts[position]!r} at position {position} "
                                 f"answered duplicate={answer}, the stream says {expected}")
    if len(answers) != len(stream.duplicate):
        raise BenchmarkError(f"{label}: {len(answers)} answers for {len(stream.duplicate)} IDs")


CachePass = Callable[[list[bytes]], int]


def cache_subjects(stream: Stream, size: int) -> tuple[CachePass, CachePass, CachePass]:
    """Both caches and the floor filled with the stream's prefill, checked on one pass; their timed passes."""
    reference, _ = reference_cache(size, persist=False)
    for text in stream.prefill:
        reference.add_to_cache_in_memory(key_of(text), None)
    impl = IdCache(CACHE_NAME, size, SlotLog())
    seams = ring_seams(FastDuplicatesBroker)
    for text in stream.prefill:
        seams._record(impl, key_of(text), "")
    impl.log.touched.clear()
    reference_answers: list[bool] = []
    impl_answers: list[bool] = []
    for text in stream.texts:
        key = key_of(text)
        found = reference.contains(key)
        reference_answers.append(found)
        if not found:
            reference.add_to_cache_in_memory(key, None)
        found = seams._is_duplicate(impl, key)
        impl_answers.append(found)
        if not found:
            seams._record(impl, key, "")
    impl.log.touched.clear()
    check_answers("reference cache", reference_answers, stream)
    check_answers("impl cache", impl_answers, stream)
    problems = impl.problems()
    if problems or len(impl.index) != size or len(reference.cache) != size:
        raise BenchmarkError(f"after one pass the caches hold {len(reference.cache)} and {len(impl.index)} IDs, "
                             f"not {size}; impl problems: {problems}")
    floor = floor_cache_pass(size, [key_of(text) for text in stream.prefill])
    if floor([key_of(text) for text in stream.texts]) != stream.duplicates:
        raise BenchmarkError("the floor loop did not find the stream's duplicates")
    return reference_cache_pass(reference), impl_cache_pass(impl), floor


# -- level (b): the whole broker in memory ---------------------------------------------------------


def count_statements(conn: sqlite3.Connection, work: Callable[[], object]) -> list[str]:
    """The SQL statements ``conn`` runs while ``work`` runs."""
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        work()
    finally:
        conn.set_trace_callback(None)
    return seen


def broker_subjects(stream: Stream, profile: Profile) -> tuple[Callable[[list[Send]], int], Callable[[list[Send]], int],
                                                              list[Send], float, FastDuplicatesBroker]:
    """Both brokers with one queue and a full cache, checked on one pass; pass functions, sends, statements/send."""
    reference = ReferenceDuplicatesBroker(profile)
    impl = FastDuplicatesBroker(profile, None)
    sends = [Send(SESSION, ADDRESS, DuplicateId(IdKind.STRING, text)) for text in stream.texts]
    prefill = [Send(SESSION, ADDRESS, DuplicateId(IdKind.STRING, text)) for text in stream.prefill]
    for broker in (reference, impl):
        broker.execute(CreateQueue(ADDRESS, QUEUE))
        for command in prefill:
            outcome = broker.execute(command)
            if not isinstance(outcome, Sent) or outcome.status is not RoutingStatus.OK:
                raise BenchmarkError(f"{type(broker).__name__}: filling the cache, {command} gave {outcome!r}")
    impl_outcomes: list[Outcome] = []
    statements = count_statements(impl._store._conn, lambda: impl_outcomes.extend(impl.execute(c) for c in sends))
    answers: list[bool] = []
    for command, theirs in zip(sends, impl_outcomes):
        ours = reference.execute(command)
        if ours != theirs:
            raise BenchmarkError(f"{command}: the reference gave {ours!r}, the impl {theirs!r}")
        if not isinstance(ours, Sent):
            raise BenchmarkError(f"{command} gave {ours!r}, not a Sent")
        answers.append(ours.status is RoutingStatus.DUPLICATED_ID)
    check_answers("brokers", answers, stream)
    impl.check_valid()

    def run_on(execute: Callable[[Send], Outcome]) -> Callable[[list[Send]], int]:
        def run(commands: list[Send]) -> int:
            for command in commands:
                execute(command)
            return len(commands)
        return run
    return run_on(reference.execute), run_on(impl.execute), sends, len(statements) / len(sends), impl


# -- timing ----------------------------------------------------------------------------------------


def time_passes(run: Callable[[list[Item]], int], items: list[Item], min_seconds: float) -> float:
    """Operations per second of ``run(items)``, repeated until ``min_seconds`` of timed work."""
    clock = time.perf_counter
    operations = 0
    elapsed = 0.0
    with gc_paused():
        while elapsed < min_seconds:
            start = clock()
            run(items)
            elapsed += clock() - start
            operations += len(items)
    return operations / elapsed


@dataclass
class Rates:
    """One in-memory case: per round, the reference's and the impl's operations per second."""

    case: str
    reference: list[float] = field(default_factory=list)
    impl: list[float] = field(default_factory=list)
    floor: list[float] = field(default_factory=list)

    @property
    def ratio(self) -> float:
        """Best impl over best reference."""
        return max(self.impl) / max(self.reference)

    def best_floor(self) -> str:
        """The best floor rate, or ``-`` for a case without one."""
        return f"{max(self.floor):,.0f}" if self.floor else "-"

    def floor_over_reference(self) -> str:
        """How far above the reference the floor is: the most impl/reference could be."""
        return f"{max(self.floor) / max(self.reference):.1f}x" if self.floor else "-"

    def round_ratios(self) -> str:
        """impl/reference of each round, in round order."""
        return " ".join(f"{impl / reference:.1f}" for reference, impl in zip(self.reference, self.impl))


# -- memory ------------------------------------------------------------------------------------------


def net_allocated(build: Callable[[], object]) -> tuple[int, object]:
    """Bytes allocated by ``build`` and still live afterwards (tracemalloc), and what it built."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        built = build()
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return after - before, built


def fill_reference(size: int, keys: Iterable[bytes], storage: StorageManager) -> DuplicateIDCache:
    """A persisted reference cache holding ``keys``, each slot with its journal record ID."""
    cache = DuplicateIDCache(CACHE_NAME, size, storage, True, InstantAdd.IMMEDIATE)
    for key in keys:
        cache.add_to_cache_in_memory(key, storage.generate_id())
    return cache


def fill_impl(size: int, keys: Iterable[bytes], log: SlotLog) -> IdCache:
    """An impl cache holding ``keys`` through the ``_record`` seam, each slot with its write stamp."""
    cache = IdCache(CACHE_NAME, size, log)
    record = ring_seams(FastDuplicatesBroker)._record
    for key in keys:
        record(cache, key, "")
    log.touched.clear()
    return cache


def measure_memory(size: int, id_bytes: int) -> dict[str, tuple[int, int]]:
    """Per side, net bytes of one full cache (with its own keys, with keys allocated beforehand)."""
    texts = [id_text(number, id_bytes) for number in range(size)]
    storage = StorageManager()
    log = SlotLog()
    results: dict[str, tuple[int, int]] = {}
    for side, fill in (("reference", lambda keys: fill_reference(size, keys, storage)),
                       ("impl", lambda keys: fill_impl(size, keys, log))):
        owning, cache = net_allocated(lambda: fill(key_of(text) for text in texts))
        del cache
        shared_keys = [key_of(text) for text in texts]
        sharing, cache = net_allocated(lambda: fill(iter(shared_keys)))
        results[side] = (owning, sharing)
        del cache, shared_keys
    keys_and_list, keys = net_allocated(lambda: [key_of(text) for text in texts])
    results["keys"] = (keys_and_list - sys.getsizeof(keys), 0)
    return results


# -- output --------------------------------------------------------------------------------------------


def _verdict(ratio: float) -> str:
    return "met" if ratio >= TARGET else "MISSED"


# -- persisted commits -------------------------------------------------------------------------------------


def run_persisted_broker(profile: Profile, folder: Path, seconds: float) -> Figure:
    """Client transactions on the fast broker with its store on disk: begin, one send with a new ID, commit."""
    broker = FastDuplicatesBroker(profile, folder / "broker.sqlite")
    try:
        broker.execute(CreateQueue(ADDRESS, QUEUE))
        begin = Begin(SESSION)
        commit = Commit(SESSION)

        def transaction(number: int) -> None:
            broker.execute(begin)
            broker.execute(Send(SESSION, ADDRESS, DuplicateId(IdKind.STRING, f"p{number}")))
            outcome = broker.execute(commit)
            if not isinstance(outcome, Committed) or len(outcome.messages) != 1:
                raise BenchmarkError(f"commit of transaction {number} gave {outcome!r}")

        figure = timed_commits(PERSISTED_CASE, seconds, transaction)
        broker.check_valid()
        return figure
    finally:
        broker.close()


def store_commits_per_transaction(profile: Profile, folder: Path) -> float:
    """How many store commits (each a WAL sync) one client transaction costs, counted on 10 of them."""
    broker = FastDuplicatesBroker(profile, folder / "count.sqlite")
    try:
        broker.execute(CreateQueue(ADDRESS, QUEUE))

        def ten() -> None:
            for number in range(10):
                broker.execute(Begin(SESSION))
                broker.execute(Send(SESSION, ADDRESS, DuplicateId(IdKind.STRING, f"c{number}")))
                broker.execute(Commit(SESSION))
        statements = count_statements(broker._store._conn, ten)
    finally:
        broker.close()
    return sum(statement.strip().upper() == "COMMIT" for statement in statements) / 10


# -- the run -------------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: stream 30,000, 0.2 s per case, one round, 0.5 s of persisted commits")
    parser.add_argument("--cache-size", type=int, default=20_000, help="slots per cache (default 20,000)")
    parser.add_argument("--stream", type=int, default=None, help="IDs per pass (default 100,000; quick 30,000)")
    parser.add_argument("--duplicate-share", type=float, default=0.2,
                        help="share of the stream that repeats an ID in the cache (default 0.2)")
    parser.add_argument("--id-bytes", type=int, default=24, help="bytes per ID key, even, >= 8 (default 24)")
    parser.add_argument("--seconds-per-case", type=float, default=None,
                        help="timed seconds per in-memory case per round (default 2; quick 0.2)")
    parser.add_argument("--rounds", "--repeat", dest="rounds", type=int, default=None,
                        help="interleaved rounds (default 3; quick 1)")
    parser.add_argument("--persist-seconds", type=float, default=None,
                        help="seconds per persisted case, over all rounds (default 9; quick 0.5)")
    parser.add_argument("--dir", type=Path, default=None, help="where the store files go (default: a temporary folder)")
    parser.add_argument("--profile", default="seed", choices=sorted(PROFILES), help="semantic profile (default seed)")
    args = parser.parse_args(argv)
    args.stream = args.stream if args.stream is not None else (30_000 if args.quick else 100_000)
    args.seconds_per_case = args.seconds_per_case if args.seconds_per_case is not None else (0.2 if args.quick else 2.0)
    args.rounds = args.rounds if args.rounds is not None else (1 if args.quick else 3)
    args.persist_seconds = args.persist_seconds if args.persist_seconds is not None else (0.5 if args.quick else 9.0)
    if args.cache_size < 1 or args.rounds < 1 or args.seconds_per_case <= 0 or args.persist_seconds <= 0:
        parser.error("--cache-size and --rounds must be at least 1, the seconds positive")
    if args.id_bytes < 8 or args.id_bytes % 2 or not 0 <= args.duplicate_share < 1:
        parser.error("--id-bytes must be even and at least 8, --duplicate-share in [0, 1)")
    if args.stream - round(args.stream * args.duplicate_share) <= args.cache_size:
        parser.error("the stream must hold more new IDs than the cache has slots (raise --stream)")
    return args


def report_in_memory(args: argparse.Namespace, stream: Stream, profile: Profile) -> None:
    """Part 1: check, then time, both levels over interleaved rounds; print the table."""
    cache_runs = cache_subjects(stream, args.cache_size)
    keys = [key_of(text) for text in stream.texts]
    reference_send, impl_send, sends, statements, impl_broker = broker_subjects(stream, profile)
    print(f"  checked: both caches and both brokers ({profile.label}) answer as the stream says; "
          f"the brokers' outcomes are equal")
    cache_rates = Rates(CACHE_CASE)
    broker_rates = Rates(BROKER_CASE)
    seconds = args.seconds_per_case
    gc.collect()
    try:
        for _ in range(args.rounds):
            cache_rates.reference.append(time_passes(cache_runs[0], keys, seconds))
            cache_rates.impl.append(time_passes(cache_runs[1], keys, seconds))
            cache_rates.floor.append(time_passes(cache_runs[2], keys, seconds))
            broker_rates.reference.append(time_passes(reference_send, sends, seconds))
            broker_rates.impl.append(time_passes(impl_send, sends, seconds))
    finally:
        impl_broker.close()
    print()
    print(render_table(
        "1. check-and-record in memory (ops/s)",
        ("case", "reference ops/s", "impl ops/s", "impl/reference", "ratio by round", f"target {TARGET:g}x",
         "floor ops/s", "floor/reference"),
        [(rates.case, f"{max(rates.reference):,.0f}", f"{max(rates.impl):,.0f}", f"{rates.ratio:.1f}x",
          rates.round_ratios(), _verdict(rates.ratio), rates.best_floor(), rates.floor_over_reference())
         for rates in (cache_rates, broker_rates)]))
    print(f"  {CACHE_CASE}: reference DuplicateIDCache.contains + add_to_cache_in_memory; "
          f"impl IdCache through FastDuplicatesBroker._is_duplicate + _record; floor: the same FIFO as one inline "
          f"loop over a dict and a list, no calls (no pure-Python cache beats it, so floor/reference bounds "
          f"impl/reference)")
    print(f"  {BROKER_CASE}: execute(Send(..., DuplicateId(STRING, ...))) outside a transaction, one queue bound, "
          f"persist_id_cache=false; impl store_path=None (SQLite in memory, no file, no sync), "
          f"{statements:.1f} SQL statements per send on average (a duplicate writes nothing)")
    met = sum(rates.ratio >= TARGET for rates in (cache_rates, broker_rates))
    print(f"  target impl >= {TARGET:g}x reference: met at {met} of 2 levels "
          f"(cache {cache_rates.ratio:.1f}x, whole broker {broker_rates.ratio:.1f}x)")


def report_persisted(args: argparse.Namespace, profile: Profile) -> None:
    """Part 2: the broker's transactions on disk against the plain SQLite baseline, rounds interleaved."""
    figures: dict[str, list[Figure]] = {PERSISTED_CASE: [], BASELINE_CASE: []}
    per_round = args.persist_seconds / args.rounds
    with tempfile.TemporaryDirectory(prefix="duplicates-bench-", dir=args.dir) as name:
        root = Path(name)
        syncs = store_commits_per_transaction(profile, root)
        for number in range(args.rounds):
            folder = root / f"round-{number}"
            folder.mkdir()
            figures[PERSISTED_CASE].append(run_persisted_broker(profile, folder, per_round))
            figures[BASELINE_CASE].append(run_sqlite_default(folder, per_round))
        filesystem = filesystem_of(root)
    totals = {case: Figure(case, sum(f.commits for f in found), sum(f.seconds for f in found))
              for case, found in figures.items()}
    baseline = totals[BASELINE_CASE].rate
    print()
    print(render_table(
        f"2. persisted commits per second ({args.persist_seconds:g} s per case over {args.rounds} round(s), "
        f"{filesystem} file system under {root.parent})",
        ("case", "commits", "seconds", "commits/s", "x baseline", "commits/s by round"),
        [(case, f"{total.commits:,}", f"{total.seconds:.2f}", f"{total.rate:,.0f}",
          f"{total.rate / baseline if baseline else 0.0:.2f}x",
          " ".join(f"{figure.rate:,.0f}" for figure in figures[case])) for case, total in totals.items()]))
    print(f"  {PERSISTED_CASE}: FastDuplicatesBroker({profile.label}) on a file; a commit is one client "
          f"transaction (begin, one send with a new ID, commit), {syncs:g} store commits each, every one a WAL sync")
    print(f"  {BASELINE_CASE}: store_choice.run_sqlite_default (rollback journal, synchronous=FULL), "
          f"one store commit per message")


def report_memory(args: argparse.Namespace) -> None:
    """Part 3: net bytes of one full cache on each side, next to Artemis's own figure."""
    size = args.cache_size
    memory = measure_memory(size, args.id_bytes)
    artemis_per_cache = ARTEMIS_MB_AFTER * MB / ARTEMIS_CACHES
    rows = [(f"{side} ({'DuplicateIDCache' if side == 'reference' else 'IdCache'})",
             f"{owning / MB:.2f}", f"{sharing / MB:.2f}", f"{sharing / size:.0f}",
             f"{sharing / artemis_per_cache:.2f}x") for side, (owning, sharing) in memory.items() if side != "keys"]
    rows.append((f"the {size:,} {args.id_bytes}-byte keys alone", f"{memory['keys'][0] / MB:.2f}", "-",
                 f"{memory['keys'][0] / size:.0f}", "-"))
    rows.append(("Artemis after ARTEMIS-3016 (its figure, not ours)", "-", f"{artemis_per_cache / MB:.2f}",
                 f"{artemis_per_cache / size:.0f}", "1.00x"))
    print()
    print(render_table(
        f"3. memory per {size:,}-entry cache (tracemalloc, net bytes after filling; MB = 10^6 bytes)",
        ("cache", "MB with its keys", "MB, keys shared", "bytes/ID, shared", "x Artemis"), rows))
    print(f"  Artemis's figure: {ARTEMIS_MB_AFTER:g} MB of heap for {ARTEMIS_CACHES} caches x 20,000 IDs "
          f"(36-byte UUID strings shared by every cache, persist on), {ARTEMIS_MB_BEFORE:g} MB before the change "
          f"(apache/artemis PR #3363); compare it with the 'keys shared' column")
    print("  not counted: the impl's SQLite store and its page cache (allocated by SQLite, outside tracemalloc)")


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the figures; 0 unless the brokers misbehave (never because of timings)."""
    args = parse_args(argv)
    run_start = time.perf_counter()
    info = machine_info()
    base = get_profile(args.profile).with_option("duplicates.id_cache_size", str(args.cache_size))
    print(f"Python {info['python']} ({info['implementation']}) on {info['platform']}; "
          f"{info['cpu_count']} cores ({info['usable_cores']} usable); the benchmark uses one")
    stream = make_stream(args.stream, args.cache_size, args.duplicate_share, args.id_bytes, RANDOM_SEED)
    rounds = f"best of {args.rounds} interleaved rounds" if args.rounds > 1 else "one round"
    print(f"stream: {len(stream.texts):,} IDs per pass, {stream.duplicates:,} of them ({args.duplicate_share:.0%}) "
          f"still in the cache; {args.id_bytes}-byte keys; a {args.cache_size:,}-slot cache, full before the "
          f"first pass")
    print(f"timing: time.perf_counter, {rounds}, each >= {args.seconds_per_case:g} s of timed passes per case; "
          f"gc paused while timing")
    try:
        report_in_memory(args, stream, base.with_option("duplicates.persist_id_cache", "false"))
        report_persisted(args, base.with_option("duplicates.persist_id_cache", "true"))
    except BenchmarkError as problem:
        print(f"error: {problem}", file=sys.stderr)
        return 1
    report_memory(args)
    print(f"run time: {time.perf_counter() - run_start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
