"""Load-balancing benchmark: routing decisions per second, spec vs reference vs impl, in one run.

Introduction
------------
A send on a node goes through that node's bindings of its address, and in
each routing-name group one binding is chosen by round robin with a
preference for bindings whose consumers match (``BindingsImpl.route`` and
``getNextBinding`` in Artemis's ``BindingsImpl``). One such
choice in one group is a *routing decision*; a send to an address with one
ANYCAST group and ten MULTICAST queues makes eleven. The spec
(``brokerspec.spec.balancing.apply``) derives every node's groups from the
list of queues at every send and rebuilds its frozen state as it goes; the
reference (``brokerspec.reference.balancing``) builds the cluster as
Artemis does, to teach; the fast broker (``brokerspec.impl.balancing``)
keeps each node's groups with their flags and positions and scans only the
group being routed. This script prints routing decisions per second of all
three for two clusters:

``1 node x 1,000 bindings``
    one node holding 1,000 queues;
``8 nodes x 100 bindings``
    eight nodes and 100 queues spread over them in turn, so every node's
    post office holds 100 bindings, about 12 of them local and the rest
    remote (``RemoteQueueBindingImpl``).

The workload is scripted and the same for every layer. Queues come 50 to
an address; on each address every fifth queue is MULTICAST (its own group,
``LocalQueueBinding.getRoutingName``) and the others ANYCAST (one group);
some ANYCAST queues filter on a colour. The addresses take the load-balancing types ON_DEMAND, STRICT, OFF
and OFF_WITH_REDISTRIBUTION (ON_DEMAND again where the profile lacks it) in
turn, with redistribution off (delay -1). A third of the ANYCAST queues and
half of the MULTICAST ones have a consumer, some of them filtered. The
timed work is a fixed list of sends (``--sends``, default 4,000) from
random nodes to random addresses, with random colours, one in five with a
routing type, one in ten grouped.

Before timing, the first ``--check-sends`` sends (default 300) run through
every layer from the same setup; their outcomes must equal the spec's, and
the fast broker's snapshot must equal the spec's state afterwards, so the
figures time the intended work (exit 1 otherwise).

Timing: ``time.perf_counter`` with the garbage collector paused. A pass
starts from a freshly built cluster (built untimed) and runs the sends in
order until they run out or the case's ``--seconds-per-case`` of timed
work is spent, so the slow spec times a prefix of the list and the fast
broker the whole list several times over. ``--rounds`` rounds (default 3)
take the layers in turn; the table shows the best round. A last row,
"outcomes only", times nothing but building each send's outcome (the
``Sent`` and its ``Delivered`` events) from recorded values: every layer
must return those objects, so it bounds what any broker can reach. Timings
are never asserted: the script prints the figures and whether the impl is
at least 10x the reference (the target), and exits 0.

Usage::

    .venv/bin/python benchmarks/balancing_bench.py           # about a minute on 2 cores
    .venv/bin/python benchmarks/balancing_bench.py --quick   # tiny clusters, a few seconds
"""

from __future__ import annotations

import argparse
import gc
import importlib
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if str(Path(__file__).resolve().parent) not in sys.path:  # so that the other benchmarks import when this is imported by path
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from addressing_bench import gc_paused, machine_info  # noqa: E402
from bench_tables import render_table  # noqa: E402
from brokerspec.impl.balancing import FastBalancingBroker  # noqa: E402
from brokerspec.spec import PROFILES, Profile, get_profile  # noqa: E402
from brokerspec.spec.addressing.names import RoutingType  # noqa: E402
from brokerspec.spec.balancing import (  # noqa: E402
    AddNode,
    Attach,
    BalancingCommand,
    BalancingOutcome,
    BalancingState,
    Configure,
    CreateQueue,
    Delivered,
    LbType,
    Refused,
    RoutingStatus,
    Send,
    Sent,
    apply,
    initial_state,
)

TARGET = 10.0
QUEUES_PER_ADDRESS = 50
MULTICAST_EVERY = 5
COLOURS = ("red", "blue", None, None)
RANDOM_SEED = 20240401
CHUNK = 8
"""Sends between two looks at the clock."""
FULL_CASES = ((1, 1000), (8, 100))
QUICK_CASES = ((1, 100), (8, 40))
REFERENCE_MODULE = "brokerspec.reference.balancing"

Execute = Callable[[BalancingCommand], BalancingOutcome]


class BenchmarkError(Exception):
    """The layers did not do the work the benchmark means to time."""


# -- the workload ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Workload:
    """A cluster of ``nodes`` nodes and ``bindings`` queues: the commands that build it and the sends to time."""

    nodes: int
    bindings: int
    setup: list[BalancingCommand]
    sends: list[Send]
    decisions: list[int]
    """Per send, the routing-name groups its address has on every node: the decisions it makes."""

    @property
    def label(self) -> str:
        """How the table names the case."""
        return f"{self.nodes} node{'s' if self.nodes > 1 else ''} x {self.bindings:,} bindings"

    def decisions_in(self, sends: int) -> int:
        """The routing decisions made by the first ``sends`` sends."""
        return sum(self.decisions[:sends])


def node_name(number: int) -> str:
    """The ``number``-th node (0-based): ``n1`` is the node every cluster starts with."""
    return f"n{number + 1}"


def lb_types(profile: Profile) -> tuple[LbType, ...]:
    """The types the addresses take in turn; OFF_WITH_REDISTRIBUTION only where the profile has it (LB-TYPES)."""
    last = LbType.OFF_WITH_REDISTRIBUTION if profile.balancing.off_with_redistribution else LbType.ON_DEMAND
    return (LbType.ON_DEMAND, LbType.STRICT, LbType.OFF, last)


def make_workload(nodes: int, bindings: int, sends: int, profile: Profile, seed: int) -> Workload:
    """The scripted cluster and sends described in the module introduction."""
    rng = random.Random(seed)
    setup: list[BalancingCommand] = [AddNode(node_name(number)) for number in range(1, nodes)]
    addresses = [f"orders{number}" for number in range(-(-bindings // QUEUES_PER_ADDRESS))]
    types = lb_types(profile)
    setup.extend(Configure(address, types[number % len(types)], -1) for number, address in enumerate(addresses))
    multicast = dict.fromkeys(addresses, 0)
    anycast: set[str] = set()
    consumers: list[Attach] = []
    for number in range(bindings):
        address = addresses[number // QUEUES_PER_ADDRESS]
        place = number % QUEUES_PER_ADDRESS
        node = node_name(number % nodes)
        queue = f"{address}.q{place}"
        if place % MULTICAST_EVERY == MULTICAST_EVERY - 1:
            setup.append(CreateQueue(node, address, queue, RoutingType.MULTICAST))
            multicast[address] += 1
            if place % (2 * MULTICAST_EVERY) == MULTICAST_EVERY - 1:
                consumers.append(Attach(f"c{number}", node, queue))
            continue
        queue_filter = "red" if place % 8 == 3 else "blue" if place % 8 == 6 else None
        setup.append(CreateQueue(node, address, queue, RoutingType.ANYCAST, queue_filter))
        anycast.add(address)
        if place % 3 == 0:
            consumers.append(Attach(f"c{number}", node, queue, (None, "red", None, "blue")[place % 4]))
    setup.extend(consumers)
    commands: list[Send] = []
    for _ in range(sends):
        routing_type = rng.choices((None, RoutingType.MULTICAST, RoutingType.ANYCAST), (8, 1, 1))[0]
        commands.append(Send(node_name(rng.randrange(nodes)), rng.choice(addresses), routing_type,
                             rng.choice(COLOURS), rng.random() < 0.1))
    groups = {address: multicast[address] + (address in anycast) for address in addresses}
    return Workload(nodes, bindings, setup, commands, [groups[send.address] for send in commands])


# -- the layers ----------------------------------------------------------------------------------------


@dataclass
class Layer:
    """One implementation: how to get a freshly built cluster's ``execute``."""

    name: str
    fresh: Callable[[], Execute]


def spec_layer(workload: Workload, profile: Profile) -> Layer:
    """The spec's ``apply`` from the built state (immutable, so built once)."""
    built = initial_state(profile)
    for command in workload.setup:
        built, outcome = apply(built, command)
        if isinstance(outcome, Refused):
            raise BenchmarkError(f"spec: building the cluster, {command} was refused: {outcome}")

    def fresh() -> Execute:
        current: list[BalancingState] = [built]

        def execute(command: BalancingCommand) -> BalancingOutcome:
            current[0], outcome = apply(current[0], command)
            return outcome
        return execute
    return Layer("spec", fresh)


def broker_layer(name: str, factory: Callable[[Profile], Any], workload: Workload, profile: Profile) -> Layer:
    """A broker object with ``execute``, built anew (untimed) for every pass."""

    def fresh() -> Execute:
        broker = factory(profile)
        for command in workload.setup:
            outcome = broker.execute(command)
            if isinstance(outcome, Refused):
                raise BenchmarkError(f"{name}: building the cluster, {command} was refused: {outcome}")
        execute: Execute = broker.execute
        return execute
    return Layer(name, fresh)


def floor_layer(workload: Workload, profile: Profile) -> Layer:
    """Only building the outcomes: each send's ``Sent`` and its ``Delivered`` events from recorded values.

    Every layer must return these objects, one event per landing (about ten
    per send here), so no broker can beat this row; it bounds the ratios.
    """
    broker = FastBalancingBroker(profile)
    for command in workload.setup:
        broker.execute(command)
    recorded: list[tuple[int, RoutingStatus, tuple[tuple[Any, ...], ...]]] = []
    for command in workload.sends:
        outcome = broker.execute(command)
        if not isinstance(outcome, Sent) or any(not isinstance(e, Delivered) for e in outcome.events):
            raise BenchmarkError(f"floor: {command} gave {outcome}, not a Sent with landings only")
        recorded.append((outcome.message, outcome.status,
                         tuple((e.message, e.node, e.queue, e.consumer) for e in outcome.events
                               if isinstance(e, Delivered))))

    def fresh() -> Execute:
        position = iter(recorded)

        def execute(command: BalancingCommand) -> BalancingOutcome:
            message, status, events = next(position)
            return Sent(message, status, tuple(Delivered(*event) for event in events))
        return execute
    return Layer("outcomes only", fresh)


def load_reference() -> tuple[Callable[[Profile], Any] | None, str]:
    """``ReferenceBalancingBroker`` if it imports, else None and why not."""
    try:
        module = importlib.import_module(REFERENCE_MODULE)
        return module.ReferenceBalancingBroker, ""
    except Exception as problem:  # the reference is written concurrently; any failure to load means "skip it"
        return None, f"{type(problem).__name__}: {problem}"


def check_layers(workload: Workload, profile: Profile, layers: list[Layer], sample: int) -> None:
    """The first ``sample`` sends give every layer the spec's outcomes; the impl's snapshot is the spec's state."""
    sends = workload.sends[:sample]
    state = initial_state(profile)
    for command in workload.setup:
        state, _ = apply(state, command)
    expected: list[BalancingOutcome] = []
    for command in sends:
        state, outcome = apply(state, command)
        if not isinstance(outcome, Sent):
            raise BenchmarkError(f"spec: {command} gave {outcome}, not a Sent")
        expected.append(outcome)
    if not any(event for outcome in expected if isinstance(outcome, Sent) for event in outcome.events):
        raise BenchmarkError("the sampled sends reached no queue")
    for layer in layers:
        execute = layer.fresh()
        for number, (command, wanted) in enumerate(zip(sends, expected)):
            got = execute(command)
            if got != wanted:
                raise BenchmarkError(f"{layer.name}, send {number + 1} ({command}): {got}, the spec says {wanted}")
    impl = FastBalancingBroker(profile)
    for command in (*workload.setup, *sends):
        impl.execute(command)
    impl.check_valid()
    if impl.snapshot() != state:
        raise BenchmarkError(f"impl: after {sample} sends its snapshot differs from the spec's state")


# -- timing --------------------------------------------------------------------------------------------


@dataclass
class Figures:
    """One case: per layer and round, (sends, routing decisions, seconds)."""

    workload: Workload
    rounds: dict[str, list[tuple[int, int, float]]] = field(default_factory=dict)

    def best(self, layer: str) -> float | None:
        """The layer's best routing decisions per second, or None when it did not run."""
        found = self.rounds.get(layer)
        return max(decisions / seconds for _, decisions, seconds in found) if found else None

    def ratio(self, over: str) -> float | None:
        """Best impl over the best of ``over``."""
        impl, other = self.best("impl"), self.best(over)
        return impl / other if impl is not None and other else None


def time_layer(layer: Layer, workload: Workload, seconds: float) -> tuple[int, int, float]:
    """(sends, decisions, seconds) of timed passes over the sends, each on a fresh cluster, until ``seconds``."""
    clock = time.perf_counter
    total_sends = total_decisions = 0
    elapsed = 0.0
    sends = workload.sends
    while elapsed < seconds:
        execute = layer.fresh()
        gc.collect()
        done = 0
        with gc_paused():
            start = clock()
            while done < len(sends) and elapsed + clock() - start < seconds:
                for command in sends[done:done + CHUNK]:
                    execute(command)
                done += CHUNK
            elapsed += clock() - start
        done = min(done, len(sends))
        total_sends += done
        total_decisions += workload.decisions_in(done)
    return total_sends, total_decisions, elapsed


# -- output --------------------------------------------------------------------------------------------


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}x"


def report(results: list[Figures]) -> None:
    """The table of routing decisions per second and the ratios."""
    rows = []
    for figures in results:
        workload = figures.workload
        per_send = workload.decisions_in(len(workload.sends)) / len(workload.sends)
        over_reference = figures.ratio("reference")
        floor = figures.best("outcomes only")
        reference = figures.best("reference")
        rows.append((workload.label, f"{per_send:.1f}", _rate(figures.best("spec")), _rate(reference),
                     _rate(figures.best("impl")), _rate(floor), _ratio(figures.ratio("spec")), _ratio(over_reference),
                     _ratio(floor / reference if floor and reference else None),
                     "-" if over_reference is None else ("met" if over_reference >= TARGET else "MISSED")))
    print()
    print(render_table("routing decisions per second (best round)",
                       ("case", "decisions/send", "spec", "reference", "impl", "outcomes only", "impl/spec",
                        "impl/reference", "ceiling/reference", f"target {TARGET:g}x reference"), rows))
    print("  'outcomes only' builds each send's outcome from recorded values and does nothing else: every layer "
          "returns those objects, so 'ceiling/reference' is the most any broker could gain over the reference")
    for figures in results:
        spec_rounds = figures.rounds.get("spec", [])
        impl_rounds = figures.rounds.get("impl", [])
        sends = sum(count for count, _, _ in spec_rounds)
        print(f"  {figures.workload.label}: the spec timed {sends:,} sends over {len(spec_rounds)} round(s), each "
              f"pass restarting the list of {len(figures.workload.sends):,} on a fresh cluster; impl/spec by round: "
              + " ".join(f"{(i[1] / i[2]) / (s[1] / s[2]):.1f}" for s, i in zip(spec_rounds, impl_rounds)))
    print("  a routing decision is one routing-name group's choice of binding (BindingsImpl.getNextBinding); decisions/send is "
          "the average number of groups a send's address has")


# -- the run -------------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 1 x 100 and 8 x 40 bindings, 400 sends, 0.1 s per case, one round")
    parser.add_argument("--sends", type=int, default=None, help="sends in the timed list (default 4,000; quick 400)")
    parser.add_argument("--check-sends", type=int, default=None,
                        help="sends checked against the spec before timing (default 300; quick 100)")
    parser.add_argument("--seconds-per-case", type=float, default=None,
                        help="timed seconds per layer, case and round (default 3; quick 0.1)")
    parser.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 3; quick 1)")
    parser.add_argument("--profile", default="artemis-latest", choices=sorted(PROFILES),
                        help="semantic profile (default artemis-latest)")
    parser.add_argument("--seed", type=int, default=RANDOM_SEED, help="seed of the scripted sends")
    args = parser.parse_args(argv)
    args.sends = args.sends if args.sends is not None else (400 if args.quick else 4000)
    args.check_sends = args.check_sends if args.check_sends is not None else (100 if args.quick else 300)
    args.seconds_per_case = args.seconds_per_case if args.seconds_per_case is not None else (
        0.1 if args.quick else 3.0)
    args.rounds = args.rounds if args.rounds is not None else (1 if args.quick else 3)
    if args.sends < 1 or args.check_sends < 1 or args.rounds < 1 or args.seconds_per_case <= 0:
        parser.error("--sends, --check-sends and --rounds must be at least 1, the seconds positive")
    args.check_sends = min(args.check_sends, args.sends)
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the figures; 0 unless the layers disagree (never because of timings)."""
    args = parse_args(argv)
    run_start = time.perf_counter()
    info = machine_info()
    profile = get_profile(args.profile)
    print(f"Python {info['python']} ({info['implementation']}) on {info['platform']}; "
          f"{info['cpu_count']} cores ({info['usable_cores']} usable); the benchmark uses one")
    reference, why_not = load_reference()
    if reference is None:
        print(f"note: the reference ({REFERENCE_MODULE}.ReferenceBalancingBroker) does not import, so its "
              f"column is skipped: {why_not}")
    rounds = f"best of {args.rounds} interleaved rounds" if args.rounds > 1 else "one round"
    print(f"profile {profile.label}; {args.sends:,} scripted sends per case, the first {args.check_sends:,} "
          f"checked against the spec; {rounds}, >= {args.seconds_per_case:g} s of timed sends per layer and "
          f"round; gc paused while timing")
    results: list[Figures] = []
    try:
        for nodes, bindings in (QUICK_CASES if args.quick else FULL_CASES):
            workload = make_workload(nodes, bindings, args.sends, profile, args.seed)
            layers = [spec_layer(workload, profile)]
            if reference is not None:
                layers.append(broker_layer("reference", reference, workload, profile))
            layers.append(broker_layer("impl", FastBalancingBroker, workload, profile))
            check_layers(workload, profile, layers[1:], args.check_sends)
            layers.append(floor_layer(workload, profile))
            print(f"  checked: {workload.label}: {', '.join(layer.name for layer in layers[1:])} give the spec's "
                  f"outcomes for the first {args.check_sends:,} sends; the impl's snapshot is the spec's state")
            figures = Figures(workload)
            for _ in range(args.rounds):
                for layer in layers:
                    figures.rounds.setdefault(layer.name, []).append(
                        time_layer(layer, workload, args.seconds_per_case))
            results.append(figures)
    except BenchmarkError as problem:
        print(f"error: {problem}", file=sys.stderr)
        return 1
    report(results)
    print(f"run time: {time.perf_counter() - run_start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
