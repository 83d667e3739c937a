"""Addressing benchmark: the reference broker, the fast broker and a ``dict.get`` floor.

Introduction
------------
Seed 000 says of its own FQQN design: "String manipulations (like concat()
and String/SimpleString conversions) added performance cost. Need a way to
minimize the impact." The reference broker (``brokerspec.reference``) does
what the seed describes, on every request: it splits the client's name at
``::`` (three scans of the string), an FQQN lookup builds a composite
``BindingKey`` (a dataclass whose hash and equality run in Python), a bare
lookup consults the per-name count and sorts that name's candidate keys, and
every lookup builds a fresh outcome object. The fast broker
(``brokerspec.impl``) does that work once, when a queue is created: it keeps
the finished outcome of every bare name and of every FQQN in two dicts, so a
lookup is one dict probe for a bare name and two for an FQQN (a miss in the
bare-name dict, then a hit), with no split and no allocation. This script
measures how much that buys, and how close the fast broker comes to the
cheapest thing Python can do with a name: one ``dict.get``.

What is measured, in one run and one process
--------------------------------------------
Both brokers are built (untimed, build time reported for information) with
``--queues`` queues (default 100,000) spread over addresses of 100 queues
each (1,000 addresses by default). Under a profile whose queue names are
unique per address (``seed``), every tenth queue takes the name of a queue
on the next address: 10% of the queues repeat a name, so with 100,000
queues 10,000 of the 90,000 distinct names are bound on two addresses and
are ambiguous as bare names. Under the ``artemis-*`` profiles queue names
are unique broker-wide. Then, operations per second of:

``lookup``, three name mixes
    every queue once, by bare name; every queue once, by FQQN; every queue
    once, half of them (chosen at random) by bare name and half by FQQN.
    The lists are generated before timing and shuffled with a fixed seed.
    The reference answers with ``queue_query``, the fast broker with
    ``lookup``. The names are string objects of their own, not the ones the
    brokers hold, as names arriving from a client would be (a dict probe
    then compares characters instead of stopping at identity), allocated in
    the order they are looked up (see :func:`lookup_lists`). CPython caches
    a string's hash, so after the first pass no column pays for hashing.
``create_queue`` and ``delete_queue``
    with all those queues present, create ``--fresh`` new queues (default
    one tenth of ``--queues``) on the existing addresses, delete them by
    FQQN, create them again and delete them by bare name; repeated.
    ``create_queue`` counts both creations.
the floor
    for each lookup mix, the same loop over the same list calling
    ``get`` bound to a dict that holds every name of the list, inserted in
    layout order as the brokers' dicts were (padded with other keys to
    ``--queues`` entries): what one dict probe per name costs.

Every lookup case runs the same loop, ``for name in names: call(name)``
with ``call`` a bound method held in a local variable, so the brokers and
the floor pay the same loop overhead; the floor's call goes straight to C
while a broker's enters a Python method, and that difference is part of
what the floor ratio shows.

Timing: ``time.perf_counter``; a lookup round repeats the loop over its list
until at least ``--seconds-per-case`` have been spent inside timed loops; a
churn round repeats the create/delete cycle until each of its three cases
has had that much timed work. The figure is the best of ``--rounds`` rounds
(default 3), with the rounds of the reference, the fast broker and the floor
interleaved so that a slow spell of a shared machine hits one round, not one
column. The garbage
collector is disabled while a timed loop runs and enabled between loops.
Timings are never asserted: the script prints figures, says which of the two
targets they meet (fast broker at least 10x the reference in every case; a
lookup within 3x of the ``dict.get`` floor), and exits 0. Before timing it
checks that both brokers give equal lookup outcomes for every name and that
every create and delete succeeds, so the figures measure the intended work;
it exits 1 if they do not.

Run ``python benchmarks/addressing_bench.py [--queues 100000]
[--seconds-per-case 1.5] [--profile seed] [--json PATH]``, or ``--quick``
(10,000 queues, 0.2 s per case, one round) for a smoke run of a few seconds.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from brokerspec.impl import FastBroker
from brokerspec.reference import ReferenceBroker
from brokerspec.spec import PROFILES, Profile, QueueNameScope, get_profile
from brokerspec.spec.addressing import (
    AddressCreated,
    CreateAddress,
    CreateQueue,
    Ambiguous,
    NotFound,
    QueueCreated,
    QueueDeleted,
    Resolved,
    RoutingType,
)

QUEUES_PER_ADDRESS = 100
SHARED_NAME_EVERY = 10  # under per-address name scope, one queue in ten reuses a name
RANDOM_SEED = 20240000
IMPL_OVER_REFERENCE_TARGET = 10.0
FLOOR_TARGET = 3.0
FULL_QUEUES = 100_000
FULL_SECONDS = 1.5
FULL_ROUNDS = 3
QUICK_QUEUES = 10_000
QUICK_SECONDS = 0.2
SEPARATOR = "::"

LOOKUP_CASES = ("lookup: bare names", "lookup: FQQNs", "lookup: 50/50 mix")
CREATE_CASE = "create_queue"
DELETE_FQQN_CASE = "delete_queue by FQQN"
DELETE_BARE_CASE = "delete_queue by bare name"
CHURN_CASES = (CREATE_CASE, DELETE_FQQN_CASE, DELETE_BARE_CASE)

QueueSpec = tuple[str, str, RoutingType]


class BenchmarkError(Exception):
    """The brokers did not do the work the benchmark means to time."""


# -- the layout ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Layout:
    """Which queues exist: ``queues`` of them, 100 per address, some names shared when allowed."""

    queues: int
    share_names: bool

    @property
    def addresses(self) -> int:
        """How many addresses hold the queues."""
        return max(1, -(-self.queues // QUEUES_PER_ADDRESS))

    def address_names(self) -> list[str]:
        """The address names, as new string objects on every call."""
        return [f"addr{index:05d}" for index in range(self.addresses)]

    def queue_index_named_by(self, index: int) -> int:
        """The queue whose own name queue ``index`` takes (itself unless it shares a name)."""
        address, position = divmod(index, QUEUES_PER_ADDRESS)
        if self.share_names and self.addresses > 1 and position % SHARED_NAME_EVERY == SHARED_NAME_EVERY - 1:
            donor = ((address + 1) % self.addresses) * QUEUES_PER_ADDRESS + position - 1
            if donor < self.queues:
                return donor
        return index

    def queue_specs(self) -> list[QueueSpec]:
        """(address, queue name, routing type) of every queue, as new string objects on every call."""
        specs: list[QueueSpec] = []
        for index in range(self.queues):
            address = f"addr{index // QUEUES_PER_ADDRESS:05d}"
            name = f"q{self.queue_index_named_by(index):07d}"
            routing_type = RoutingType.ANYCAST if index % 2 == 0 else RoutingType.MULTICAST
            specs.append((address, name, routing_type))
        return specs

    def fresh_specs(self, count: int) -> list[QueueSpec]:
        """``count`` queues not in the layout, spread round-robin over its addresses."""
        return [
            (f"addr{index % self.addresses:05d}", f"fresh{index:07d}",
             RoutingType.ANYCAST if index % 2 == 0 else RoutingType.MULTICAST)
            for index in range(count)
        ]

    def describe(self) -> dict[str, int]:
        """Counts that say what was built."""
        names = [spec[1] for spec in self.queue_specs()]
        distinct = set(names)
        shared = len(names) - len(distinct)
        return {
            "queues": self.queues,
            "addresses": self.addresses,
            "queues_per_address": QUEUES_PER_ADDRESS,
            "distinct_queue_names": len(distinct),
            "queues_reusing_a_name": shared,
            "ambiguous_bare_names": shared,  # each shared name is bound on exactly two addresses
        }


# -- the two brokers ----------------------------------------------------------------------


@dataclass(frozen=True)
class Subject:
    """One broker as the benchmark drives it: three bound methods."""

    label: str
    lookup: Callable[[str], object]
    create_queue: Callable[[str, str, RoutingType], object]
    delete_queue: Callable[[str], object]


BOTH_TYPES = (RoutingType.ANYCAST, RoutingType.MULTICAST)


def timed(work: Callable[[], None]) -> float:
    """Seconds ``work`` takes with the garbage collector paused."""
    with gc_paused():
        start = time.perf_counter()
        work()
        return time.perf_counter() - start


def build(name: str, broker: ReferenceBroker | FastBroker, addresses: list[str],
          specs: list[QueueSpec]) -> float:
    """Fill ``broker`` with ``specs`` through its ``execute`` entry point; return the seconds it took."""
    start = time.perf_counter()
    for address in addresses:
        _expect(broker.execute(CreateAddress(address, frozenset(BOTH_TYPES))), AddressCreated,
                f"{name} create_address")
    for address, queue, routing_type in specs:
        _expect(broker.execute(CreateQueue(address, queue, routing_type)), QueueCreated, f"{name} create_queue")
    return time.perf_counter() - start


def build_reference(profile: Profile, addresses: list[str], specs: list[QueueSpec]) -> tuple[Subject, float]:
    """A reference broker holding ``specs``, and the seconds it took to build."""
    broker = ReferenceBroker(profile)
    elapsed = build("reference", broker, addresses, specs)
    return Subject("reference", broker.queue_query, broker.create_queue, broker.destroy_queue), elapsed


def build_impl(profile: Profile, addresses: list[str], specs: list[QueueSpec]) -> tuple[Subject, float]:
    """A fast broker holding ``specs``, and the seconds it took to build."""
    broker = FastBroker(profile)
    elapsed = build("impl", broker, addresses, specs)
    return Subject("impl", broker.lookup, broker.create_queue, broker.delete_queue), elapsed


def _expect(outcome: object, wanted: type, what: str) -> None:
    if not isinstance(outcome, wanted):
        raise BenchmarkError(f"{what} returned {outcome!r}, expected {wanted.__name__}")


# -- the name lists ---------------------------------------------------------------------


def own_copy(text: str) -> str:
    """An equal string that is a different object, as a name decoded from a client would be."""
    return (text + ".")[:-1]


def lookup_keys(layout: Layout, seed: int) -> dict[str, list[str]]:
    """Per mix, the name each queue is looked up by, in layout order (the order the brokers were filled)."""
    rng = random.Random(seed)
    specs = layout.queue_specs()  # string objects of their own, not the brokers'
    by_bare = set(rng.sample(range(len(specs)), len(specs) // 2))
    return {
        LOOKUP_CASES[0]: [name for _, name, _ in specs],
        LOOKUP_CASES[1]: [address + SEPARATOR + name for address, name, _ in specs],
        LOOKUP_CASES[2]: [name if index in by_bare else address + SEPARATOR + name
                          for index, (address, name, _) in enumerate(specs)],
    }


def lookup_lists(keys: dict[str, list[str]], seed: int) -> dict[str, list[str]]:
    """Per mix, the names to time: every queue once, in an order shuffled with a fixed seed.

    Each name is a new string object, allocated in the shuffled order, so
    walking the list reads the names' memory in order (a name just received
    from a client is in cache too) while the dicts they probe are reached at
    random; allocating them in layout order and then shuffling would add a
    cache miss per name to every column alike and so hide the differences.
    """
    rng = random.Random(seed)
    lists: dict[str, list[str]] = {}
    for case, names in keys.items():
        order = list(range(len(names)))
        rng.shuffle(order)
        lists[case] = [own_copy(names[index]) for index in order]
    return lists


def floor_dict(keys: list[str], entries: int) -> dict[str, int]:
    """A dict holding copies of ``keys`` inserted in layout order, as the brokers' dicts were,
    padded with other keys to ``entries`` entries."""
    table: dict[str, int] = {}
    for index, name in enumerate(keys):
        table.setdefault(own_copy(name), index)
    filler = 0
    while len(table) < entries:
        table[f"floor-filler{filler:07d}"] = -1
        filler += 1
    return table


# -- timing ---------------------------------------------------------------------------------


@contextmanager
def gc_paused() -> Iterator[None]:
    """Disable the cyclic garbage collector for the duration of a timed loop."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def time_calls(call: Callable[[str], object], names: list[str], min_seconds: float) -> tuple[int, float]:
    """Call ``call`` on every name, over and over until ``min_seconds`` were spent; (calls, seconds)."""
    clock = time.perf_counter
    calls = 0
    elapsed = 0.0
    with gc_paused():
        while True:
            start = clock()
            for name in names:
                call(name)
            elapsed += clock() - start
            calls += len(names)
            if elapsed >= min_seconds:
                return calls, elapsed


def time_churn(subject: Subject, fresh: list[QueueSpec], by_fqqn: list[str], by_name: list[str],
               min_seconds: float) -> dict[str, tuple[int, float]]:
    """Create ``fresh``, delete by FQQN, create again, delete by bare name; repeat until every
    one of the three cases has had ``min_seconds`` of timed work. Returns (operations, seconds) per case.
    """
    create = subject.create_queue
    delete = subject.delete_queue

    def create_all() -> None:
        for address, name, routing_type in fresh:
            create(address, name, routing_type)

    def delete_all(names: list[str]) -> Callable[[], None]:
        def run() -> None:
            for name in names:
                delete(name)
        return run

    created = deleted_fqqn = deleted_bare = 0
    t_create = t_fqqn = t_bare = 0.0
    while True:
        t_create += timed(create_all)
        t_fqqn += timed(delete_all(by_fqqn))
        t_create += timed(create_all)
        t_bare += timed(delete_all(by_name))
        created += 2 * len(fresh)
        deleted_fqqn += len(by_fqqn)
        deleted_bare += len(by_name)
        if min(t_create, t_fqqn, t_bare) >= min_seconds:
            return {
                CREATE_CASE: (created, t_create),
                DELETE_FQQN_CASE: (deleted_fqqn, t_fqqn),
                DELETE_BARE_CASE: (deleted_bare, t_bare),
            }


# -- checks that the timed work is the intended work -----------------------------------------


def check_lookups_agree(reference: Subject, impl: Subject, lists: dict[str, list[str]]) -> dict[str, dict[str, int]]:
    """Both brokers give equal outcomes for every name; returns the outcome kinds per case."""
    kinds: dict[str, dict[str, int]] = {}
    for case, names in lists.items():
        counts = {"resolved": 0, "ambiguous": 0, "not_found": 0}
        for name in names:
            expected = reference.lookup(name)
            actual = impl.lookup(name)
            if expected != actual:
                raise BenchmarkError(f"{case}: lookup({name!r}) gave {actual!r} from impl, {expected!r} from reference")
            if isinstance(actual, Resolved):
                counts["resolved"] += 1
            elif isinstance(actual, Ambiguous):
                counts["ambiguous"] += 1
            elif isinstance(actual, NotFound):
                counts["not_found"] += 1
        if counts["not_found"]:
            raise BenchmarkError(f"{case}: {counts['not_found']} names from the layout were not found")
        kinds[case] = counts
    return kinds


def check_churn(subject: Subject, fresh: list[QueueSpec], by_fqqn: list[str], by_name: list[str]) -> None:
    """One untimed churn cycle in which every create and delete must succeed (also a warm-up)."""
    for address, name, routing_type in fresh:
        _expect(subject.create_queue(address, name, routing_type), QueueCreated, f"{subject.label} create_queue")
    for name in by_fqqn:
        _expect(subject.delete_queue(name), QueueDeleted, f"{subject.label} delete by FQQN")
    for address, name, routing_type in fresh:
        _expect(subject.create_queue(address, name, routing_type), QueueCreated, f"{subject.label} create_queue")
    for name in by_name:
        _expect(subject.delete_queue(name), QueueDeleted, f"{subject.label} delete by bare name")


def check_churn_left_no_trace(subject: Subject, by_fqqn: list[str]) -> None:
    """After the timed cycles no fresh queue remains."""
    for name in by_fqqn:
        _expect(subject.lookup(name), NotFound, f"{subject.label} lookup after churn")


# -- results ------------------------------------------------------------------------------------


@dataclass
class CaseResult:
    """The per-round rates of one case, and the best."""

    case: str
    reference: list[float] = field(default_factory=list)
    impl: list[float] = field(default_factory=list)
    floor: list[float] = field(default_factory=list)

    @property
    def is_lookup(self) -> bool:
        """Whether the case has a floor."""
        return bool(self.floor)

    @property
    def best_reference(self) -> float:
        """The best reference rate (ops/s)."""
        return max(self.reference)

    @property
    def best_impl(self) -> float:
        """The best fast-broker rate (ops/s)."""
        return max(self.impl)

    @property
    def best_floor(self) -> float | None:
        """The best floor rate (ops/s), for lookup cases."""
        return max(self.floor) if self.floor else None

    @property
    def impl_over_reference(self) -> float:
        """How many times faster the fast broker is than the reference."""
        return self.best_impl / self.best_reference

    @property
    def floor_over_impl(self) -> float | None:
        """How many times slower the fast broker is than ``dict.get``."""
        floor = self.best_floor
        return None if floor is None else floor / self.best_impl

    def as_json(self) -> dict[str, Any]:
        """The figures as plain data."""
        return {
            "case": self.case,
            "reference_ops_per_s": self.best_reference,
            "impl_ops_per_s": self.best_impl,
            "impl_over_reference": self.impl_over_reference,
            "floor_ops_per_s": self.best_floor,
            "floor_over_impl": self.floor_over_impl,
            "rounds": {"reference": self.reference, "impl": self.impl, "floor": self.floor},
            "impl_at_least_10x_reference": self.impl_over_reference >= IMPL_OVER_REFERENCE_TARGET,
            "within_3x_of_floor": (None if self.floor_over_impl is None
                                   else self.floor_over_impl <= FLOOR_TARGET),
        }


def _rate(calls: int, seconds: float) -> float:
    return calls / seconds if seconds > 0 else float("inf")


def _ops(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}x"


def _verdict(met: bool) -> str:
    return "met" if met else "MISSED"


def target_lines(results: list[CaseResult]) -> list[str]:
    """The two targets, per case, and whether each was met."""
    lines = [f"Target 1: impl at least {IMPL_OVER_REFERENCE_TARGET:g}x reference (per case)"]
    met_1 = 0
    for result in results:
        met = result.impl_over_reference >= IMPL_OVER_REFERENCE_TARGET
        met_1 += met
        lines.append(f"  {result.case:<28} {result.impl_over_reference:7.1f}x  {_verdict(met)}")
    lines.append(f"  -> met in {met_1} of {len(results)} cases")
    lookups = [r for r in results if r.is_lookup]
    lines.append(f"Target 2: lookup within {FLOOR_TARGET:g}x of the dict.get floor (per lookup case; floor/impl)")
    met_2 = 0
    for result in lookups:
        ratio = result.floor_over_impl
        met = ratio is not None and ratio <= FLOOR_TARGET
        met_2 += met
        lines.append(f"  {result.case:<28} {_ratio(ratio):>8}  {_verdict(met)}")
    lines.append(f"  -> met in {met_2} of {len(lookups)} cases")
    return lines


def print_table(title: str, results: list[CaseResult]) -> None:
    """The figures as a table, with rich when it is importable."""
    headers = ("case", "reference ops/s", "impl ops/s", "impl/reference", "floor ops/s",
               "impl vs floor (floor/impl)")
    rows = [
        (r.case, _ops(r.best_reference), _ops(r.best_impl), _ratio(r.impl_over_reference),
         _ops(r.best_floor), _ratio(r.floor_over_impl))
        for r in results
    ]
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:  # pragma: no cover - rich is a dependency, the fallback is for bare environments
        widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(headers)]
        print(title)
        print(" | ".join(h.ljust(w) for h, w in zip(headers, widths)))
        print("-+-".join("-" * w for w in widths))
        for row in rows:
            print(" | ".join(row[0].ljust(widths[0]) if i == 0 else cell.rjust(widths[i])
                             for i, cell in enumerate(row)))
        return
    table = Table(title=title)
    for index, header in enumerate(headers):
        table.add_column(header, justify="left" if index == 0 else "right", no_wrap=True)
    for row in rows:
        table.add_row(*row)
    console = Console() if sys.stdout.isatty() else Console(width=140)
    console.print(table)


def machine_info() -> dict[str, Any]:
    """Python and machine facts printed with the figures."""
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        usable = os.cpu_count() or 0
    return {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "usable_cores": usable,
    }


# -- the run -------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--queues", type=int, default=None,
                        help=f"queues present (default {FULL_QUEUES:,}; {QUICK_QUEUES:,} with --quick)")
    parser.add_argument("--seconds-per-case", type=float, default=None,
                        help=f"minimum timed seconds per case per round (default {FULL_SECONDS}; "
                             f"{QUICK_SECONDS} with --quick)")
    parser.add_argument("--rounds", type=int, default=None,
                        help="rounds per case; the best is reported (default 3; 1 with --quick)")
    parser.add_argument("--fresh", type=int, default=None,
                        help="queues created and deleted per churn batch (default: a tenth of --queues)")
    parser.add_argument("--profile", default="seed", choices=sorted(PROFILES), help="semantic profile (default seed)")
    parser.add_argument("--quick", action="store_true",
                        help=f"{QUICK_QUEUES:,} queues, {QUICK_SECONDS} s per case and one round, for a smoke test")
    parser.add_argument("--json", metavar="PATH", default=None, help="also write the figures as JSON to PATH")
    args = parser.parse_args(argv)
    if args.queues is None:
        args.queues = QUICK_QUEUES if args.quick else FULL_QUEUES
    if args.seconds_per_case is None:
        args.seconds_per_case = QUICK_SECONDS if args.quick else FULL_SECONDS
    if args.rounds is None:
        args.rounds = 1 if args.quick else FULL_ROUNDS
    if args.fresh is None:
        args.fresh = max(1, args.queues // 10)
    if args.queues < 1 or args.fresh < 1 or args.rounds < 1 or args.seconds_per_case <= 0:
        parser.error("--queues, --fresh and --rounds must be at least 1 and --seconds-per-case positive")
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the figures; 0 unless the brokers misbehave (never because of timings)."""
    args = parse_args(argv)
    run_start = time.perf_counter()
    profile = get_profile(args.profile)
    layout = Layout(args.queues, share_names=profile.addressing.name_scope is QueueNameScope.ADDRESS)
    info = machine_info()
    shape = layout.describe()
    print(f"Python {info['python']} ({info['implementation']}) on {info['platform']}; "
          f"{info['cpu_count']} cores ({info['usable_cores']} usable); the benchmark uses one")
    print(f"profile: {profile.label} (queue names unique per {profile.addressing.name_scope.value.lower()})")
    print(f"layout: {shape['queues']:,} queues on {shape['addresses']:,} addresses ({QUEUES_PER_ADDRESS} each); "
          f"{shape['distinct_queue_names']:,} distinct names, {shape['ambiguous_bare_names']:,} of them bound on "
          f"two addresses (ambiguous as bare names)")
    rounds = f"best of {args.rounds} rounds" if args.rounds > 1 else "one round"
    print(f"timing: time.perf_counter, {rounds}, each >= {args.seconds_per_case} s of timed loops per case; "
          f"gc disabled during timed loops; churn batch {args.fresh:,} queues")

    try:
        addresses = layout.address_names()
        reference, reference_build = build_reference(profile, addresses, layout.queue_specs())
        impl, impl_build = build_impl(profile, layout.address_names(), layout.queue_specs())
        print(f"build (untimed for the cases; gc enabled): reference {reference_build:.2f} s, "
              f"impl {impl_build:.2f} s")
        keys = lookup_keys(layout, RANDOM_SEED)
        floors = {case: floor_dict(names, layout.queues) for case, names in keys.items()}
        lists = lookup_lists(keys, RANDOM_SEED + 1)
        del keys
        kinds = check_lookups_agree(reference, impl, lists)
        rng = random.Random(RANDOM_SEED + 2)
        fresh = layout.fresh_specs(args.fresh)
        rng.shuffle(fresh)
        by_fqqn = [address + SEPARATOR + name for address, name, _ in fresh]
        by_name = [own_copy(name) for _, name, _ in fresh]
        rng.shuffle(by_fqqn)
        rng.shuffle(by_name)
        for subject in (reference, impl):
            check_churn(subject, fresh, by_fqqn, by_name)
    except BenchmarkError as problem:
        print(f"error: {problem}", file=sys.stderr)
        return 1
    for case, counts in kinds.items():
        print(f"  {case}: {len(lists[case]):,} names per pass, outcomes resolved {counts['resolved']:,}, "
              f"ambiguous {counts['ambiguous']:,} (reference and impl agree on every name)")

    gc.collect()
    results = {case: CaseResult(case) for case in (*LOOKUP_CASES, *CHURN_CASES)}
    seconds = args.seconds_per_case
    for _ in range(args.rounds):
        for case in LOOKUP_CASES:
            names = lists[case]
            results[case].reference.append(_rate(*time_calls(reference.lookup, names, seconds)))
            results[case].impl.append(_rate(*time_calls(impl.lookup, names, seconds)))
            results[case].floor.append(_rate(*time_calls(floors[case].get, names, seconds)))
        for subject in (reference, impl):
            churn = time_churn(subject, fresh, by_fqqn, by_name, seconds)
            for case, (calls, elapsed) in churn.items():
                rates = results[case].reference if subject is reference else results[case].impl
                rates.append(_rate(calls, elapsed))
    try:
        for subject in (reference, impl):
            check_churn_left_no_trace(subject, by_fqqn)
    except BenchmarkError as problem:
        print(f"error: {problem}", file=sys.stderr)
        return 1

    ordered = list(results.values())
    print()
    print_table(f"addressing, {layout.queues:,} queues, profile {profile.label} (ops/s, {rounds})", ordered)
    lines = target_lines(ordered)
    for line in lines:
        print(line)
    run_seconds = time.perf_counter() - run_start
    print(f"run time: {run_seconds:.1f} s")

    if args.json:
        document = {
            "benchmark": "addressing",
            "machine": info,
            "profile": profile.label,
            "layout": shape,
            "settings": {
                "seconds_per_case": seconds, "rounds": args.rounds, "fresh": args.fresh,
                "random_seed": RANDOM_SEED, "gc_disabled_during_timed_loops": True,
            },
            "build_seconds": {"reference": reference_build, "impl": impl_build},
            "lookup_outcomes": kinds,
            "targets": {
                "impl_over_reference_at_least": IMPL_OVER_REFERENCE_TARGET,
                "floor_over_impl_at_most": FLOOR_TARGET,
            },
            "cases": [result.as_json() for result in ordered],
            "run_seconds": run_seconds,
        }
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=2)
            handle.write("\n")
        print(f"figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
