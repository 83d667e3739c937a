"""Topology benchmark: one consumer's demand plus 1,000 messages in the seed's retail tree, reference vs impl.

Introduction
------------
Seed 002 pictures a retailer with headquarters, regions and 1,000 stores per
region. This script builds that hierarchy at 10 regions x 1,000 stores
(10,011 brokers) with ``retail_commands``, under network connectors with
TTL 2 (duplex, the setting brokerspec measured on real brokers) and under the tree connector, and times,
in one run, the *work*:

1. a consumer opens on the last store of the last region and its demand
   propagates (advisories, demand subscriptions, dispatch lists);
2. 1,000 messages are sent: half at HQ, a quarter at the consumer's region,
   a quarter at random stores (seeded), each routed hop by hop until it is
   delivered or waits (stranded).

Building the network is done first and not timed (its time is shown). The
reference (``brokerspec.reference.topologies``, built the way ActiveMQ is,
to teach) and the fast broker (``brokerspec.impl.topologies``) run the same
commands; before timing, their outcomes for the whole work must be equal,
and a small tree (2 x 20) runs through the spec, the reference and the
impl with equal outcomes and equal states; otherwise the script exits 1.
The spec itself is not timed at full size: it derives demand afresh after
every command and copies its frozen state, so it is a reader's tool.

Timing: ``time.perf_counter`` with the garbage collector paused; each round
rebuilds the network untimed and times the work once per layer; the table
shows the best of ``--rounds`` rounds. The targets (impl under 1 s, and at
least 10x the reference) are printed as met or missed; nothing is asserted.

Usage::

    .venv/bin/python benchmarks/topologies_bench.py           # about a minute on 2 cores
    .venv/bin/python benchmarks/topologies_bench.py --quick   # 3 x 100 stores, a few seconds
"""

from __future__ import annotations

import argparse
import gc
import importlib
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if str(Path(__file__).resolve().parents[1]) not in sys.path:  # so that ``benchmarks.*`` imports when run as a script
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from brokerspec.impl.topologies import FastTopologyBroker  # noqa: E402
from brokerspec.spec import get_profile  # noqa: E402
from brokerspec.spec.topologies import (  # noqa: E402
    HQ,
    Send,
    Subscribe,
    TopologyCommand,
    TopologyOutcome,
    region_name,
    retail_commands,
    run,
    store_name,
)

REFERENCE_MODULE = "brokerspec.reference.topologies"
QUEUE = "queue://orders"
PROFILE = get_profile("artemis-latest")


class BenchmarkError(Exception):
    """The layers disagree, so the figures would time the wrong work."""


@dataclass(frozen=True)
class Case:
    """One design at one size: how to build it and the timed work."""

    design: str
    ttl: int
    regions: int
    stores: int
    messages: int
    seed: int

    @property
    def label(self) -> str:
        how = f"network TTL {self.ttl}" if self.design == "network" else "tree connector"
        return f"{how}, {self.regions} x {self.stores:,} stores"

    def build(self) -> list[TopologyCommand]:
        return retail_commands(self.regions, self.stores, self.design, self.ttl)

    def work(self) -> list[TopologyCommand]:
        rng = random.Random(self.seed)
        consumer_store = store_name(self.regions, max(self.stores, 1)) if self.stores else region_name(self.regions)
        commands: list[TopologyCommand] = [Subscribe("store-consumer", consumer_store, QUEUE)]
        for number in range(self.messages):
            if number % 2 == 0:
                sender = HQ
            elif number % 4 == 1:
                sender = region_name(self.regions)
            elif self.stores:
                sender = store_name(rng.randint(1, self.regions), rng.randint(1, self.stores))
            else:
                sender = region_name(rng.randint(1, self.regions))
            commands.append(Send(sender, QUEUE))
        return commands


def load_reference() -> tuple[Callable[[Any], Any] | None, str]:
    """``ReferenceTopologyBroker`` if it imports, else None and why not."""
    try:
        module = importlib.import_module(REFERENCE_MODULE)
        return module.ReferenceTopologyBroker, ""
    except Exception as problem:  # any failure to load means "skip its column", said in the output
        return None, f"{type(problem).__name__}: {problem}"


def build(factory: Callable[[Any], Any], commands: Sequence[TopologyCommand]) -> tuple[Any, float]:
    """A broker of ``factory`` with ``commands`` applied, and how long that took."""
    started = time.perf_counter()
    broker = factory(PROFILE)
    for command in commands:
        broker.execute(command)
    return broker, time.perf_counter() - started


def run_work(broker: Any, work: Sequence[TopologyCommand]) -> tuple[list[TopologyOutcome], float]:
    """Execute ``work`` on ``broker`` with the collector paused; the outcomes and the seconds taken."""
    gc.collect()
    gc.disable()
    try:
        started = time.perf_counter()
        outcomes = [broker.execute(command) for command in work]
        elapsed = time.perf_counter() - started
    finally:
        gc.enable()
    return outcomes, elapsed


def check_small(layers: dict[str, Callable[[Any], Any]]) -> None:
    """Spec, reference and impl agree on a 2 x 20 tree of each design, outcome by outcome and state by state."""
    for design in ("network", "tree"):
        case = Case(design, 2, 2, 20, 60, 5)
        commands = case.build() + case.work()
        state, expected = run(commands)
        for name, factory in layers.items():
            broker = factory(PROFILE)
            outcomes = [broker.execute(command) for command in commands]
            if outcomes != expected:
                first = next(i for i, (a, b) in enumerate(zip(outcomes, expected)) if a != b)
                raise BenchmarkError(f"{name} parts from the spec on the small {design} tree at command "
                                     f"{first + 1}: {commands[first]}: {outcomes[first]} vs {expected[first]}")
            if broker.snapshot() != state:
                raise BenchmarkError(f"{name}'s state differs from the spec's on the small {design} tree")


def render_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain text table, first column left-aligned, the others right-aligned."""
    widths = [max(len(str(row[i])) for row in [headers, *rows]) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)])


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="3 regions x 100 stores (a smoke run)")
    parser.add_argument("--regions", type=int, default=10, help="regions (default 10)")
    parser.add_argument("--stores", type=int, default=1000, help="stores per region (default 1,000)")
    parser.add_argument("--messages", type=int, default=1000, help="messages sent in the timed work (default 1,000)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; the best is shown (default 3)")
    parser.add_argument("--seed", type=int, default=1, help="seed for the random senders (default 1)")
    args = parser.parse_args(argv)
    if args.quick:
        args.regions, args.stores, args.rounds = 3, 100, 1
    if args.rounds < 1 or args.messages < 0:
        parser.error("--rounds must be at least 1 and --messages at least 0")
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the figures; 0 unless the layers disagree (never because of timings)."""
    args = parse_args(argv)
    run_start = time.perf_counter()
    reference, why_not = load_reference()
    layers: dict[str, Callable[[Any], Any]] = {}
    if reference is None:
        print(f"note: the reference does not import, so its column is skipped: {why_not}")
    else:
        layers["reference"] = reference
    layers["impl"] = FastTopologyBroker
    try:
        check_small(layers)
        print(f"checked: {', '.join(layers)} give the spec's outcomes and states on 2 x 20 trees of both designs")
        rows = []
        for design, ttl in (("network", 2), ("tree", -1)):
            case = Case(design, ttl, args.regions, args.stores, args.messages, args.seed)
            commands, work = case.build(), case.work()
            best: dict[str, float] = {}
            built: dict[str, float] = {}
            agreed: list[TopologyOutcome] | None = None
            for _ in range(args.rounds):
                for name, factory in layers.items():
                    broker, build_seconds = build(factory, commands)
                    outcomes, seconds = run_work(broker, work)
                    if agreed is None:
                        agreed = outcomes
                    elif outcomes != agreed:
                        raise BenchmarkError(f"{name} gives other outcomes than {next(iter(layers))} on {case.label}")
                    best[name] = min(seconds, best.get(name, seconds))
                    built[name] = min(build_seconds, built.get(name, build_seconds))
            assert agreed is not None
            delivered = sum(1 for o in agreed[1:] if any(e.kind == "delivered" for e in getattr(o, "events", ())))
            impl = best["impl"]
            ratio = best["reference"] / impl if "reference" in best else None
            rows.append([case.label, f"{args.regions * (args.stores + 1) + 1:,}",
                         f"{built.get('reference', float('nan')):.2f}", f"{built['impl']:.2f}",
                         f"{best['reference']:.3f}" if "reference" in best else "-", f"{impl:.3f}",
                         f"{ratio:.1f}x" if ratio is not None else "-", f"{delivered:,}/{args.messages:,}",
                         "met" if impl < 1.0 else "missed",
                         "-" if ratio is None else "met" if ratio >= 10 else "missed"])
            print(f"  done: {case.label}")
    except BenchmarkError as problem:
        print(f"error: {problem}", file=sys.stderr)
        return 1
    print()
    print(f"One consumer's demand plus {args.messages:,} messages, best of {args.rounds} round(s), gc paused "
          f"(seconds; build untimed and shown for reference)")
    print(render_table(["case", "brokers", "build ref s", "build impl s", "reference s", "impl s",
                        "impl vs ref", "delivered", "impl < 1 s", "impl >= 10x ref"], rows))
    print(f"run time: {time.perf_counter() - run_start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
