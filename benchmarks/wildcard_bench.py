"""Wildcard routing benchmark: sends per second through wildcard bindings, impl vs reference, in one run.

Introduction
------------
A queue bound to a wild address (``r7.#``) is a binding of every plain
address the wildcard matches (rule LB-WILDCARD-BINDINGS, Artemis's
``WildcardAddressManager``). The reference (``brokerspec.reference.balancing``)
copies wildcard bindings into a plain address's bindings the way Artemis
does, matching every wild address against the plain one when the plain
address first gets bindings; the fast broker (``brokerspec.impl.balancing``)
keeps an index of the wild addresses with queues and of the plain addresses
they reach (``impl/balancing/wildcards.py``). The spec derives every send's
bindings from the whole list of queues.

The workload: one node, ``--addresses`` plain addresses (default 10,000)
``rK.dN``, each with one MULTICAST queue of its own, and ``--wildcards`` wildcard
queues (default 100): half ``rK.#``, half ``rK.*``, one per region, so every plain
address is reached by exactly one. The wildcard queues are made first, so every plain queue's
creation copies one in. The timed work is ``--sends`` sends (default 5,000) to
random plain addresses. Two baselines are measured in the same run: the same
plain addresses and sends without any wildcard queue (what wildcards cost
each layer), and the spec on a prefix of the sends.

Before timing, the first ``--check-sends`` sends (default 200) run through
spec, reference and impl from the same setup and must give the same outcomes,
each landing on two queues (its own and a wildcard's); exit 1 otherwise.
Timings use ``time.perf_counter`` with the garbage collector paused; the best
of ``--rounds`` rounds (default 3) is shown. Nothing is asserted about speed.

Usage::

    .venv/bin/python benchmarks/wildcard_bench.py           # about a minute on 2 cores
    .venv/bin/python benchmarks/wildcard_bench.py --quick   # 500 addresses, a few seconds
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from addressing_bench import gc_paused, machine_info  # noqa: E402
from bench_tables import render_table  # noqa: E402
from brokerspec.impl.balancing import FastBalancingBroker  # noqa: E402
from brokerspec.reference.balancing import ReferenceBalancingBroker  # noqa: E402
from brokerspec.spec import Profile, get_profile  # noqa: E402
from brokerspec.spec.addressing.names import RoutingType  # noqa: E402
from brokerspec.spec.balancing import (  # noqa: E402
    BalancingCommand,
    BalancingOutcome,
    CreateQueue,
    Delivered,
    Send,
    Sent,
    apply,
    initial_state,
)

SEED = 20261127


def make_setup(addresses: int, wildcards: int) -> tuple[list[CreateQueue], list[str]]:
    """The queues (wildcard ones first) and the plain addresses: one region per wildcard queue, so each plain
    address is reached by exactly one (``--wildcards`` regions also without wildcard queues, for the baseline)."""
    regions = max(wildcards, 1)
    plain = [f"r{number % regions}.d{number}" for number in range(addresses)]
    setup: list[CreateQueue] = []
    for number in range(wildcards):
        pattern = f"r{number}.{'#' if number % 2 == 0 else '*'}"
        setup.append(CreateQueue("n1", pattern, f"w{number}", RoutingType.MULTICAST))
    setup.extend(CreateQueue("n1", address, f"q{number}", RoutingType.MULTICAST) for number, address in enumerate(plain))
    return setup, plain


def make_sends(plain: list[str], count: int) -> list[Send]:
    rng = random.Random(SEED)
    return [Send("n1", rng.choice(plain)) for _ in range(count)]


def build(factory: Callable[[Profile], Any], profile: Profile, setup: list[CreateQueue]) -> tuple[Any, float]:
    """A broker with ``setup`` done, and the seconds the setup took."""
    broker = factory(profile)
    start = time.perf_counter()
    for command in setup:
        broker.execute(command)
    return broker, time.perf_counter() - start


def time_sends(execute: Callable[[BalancingCommand], BalancingOutcome], sends: list[Send]) -> float:
    """Sends per second over ``sends``."""
    with gc_paused():
        start = time.perf_counter()
        for command in sends:
            execute(command)
        elapsed = time.perf_counter() - start
    return len(sends) / elapsed


def check(profile: Profile, setup: list[CreateQueue], sends: list[Send]) -> None:
    """Spec, reference and impl agree on ``sends``, each landing on its own queue and one wildcard queue."""
    state = initial_state(profile)
    for command in setup:
        state, _ = apply(state, command)
    reference = ReferenceBalancingBroker(profile)
    impl = FastBalancingBroker(profile)
    for queue in setup:
        reference.execute(queue)
        impl.execute(queue)
    for send in sends:
        state, expected = apply(state, send)
        for name, broker in (("reference", reference), ("impl", impl)):
            got = broker.execute(send)
            if got != expected:
                raise SystemExit(f"{name} parts from the spec at {send}: {got} != {expected}")
        landings = [e for e in expected.events if isinstance(e, Delivered)] if isinstance(expected, Sent) else []
        if len(landings) != 2 or not any(e.queue.startswith("w") for e in landings):
            raise SystemExit(f"the spec routed {send} to {landings}, not to its own queue and one wildcard's")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--addresses", type=int, default=10_000)
    parser.add_argument("--wildcards", type=int, default=100)
    parser.add_argument("--sends", type=int, default=5_000)
    parser.add_argument("--spec-sends", type=int, default=100)
    parser.add_argument("--check-sends", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="500 addresses, 10 wildcard queues, 500 sends")
    args = parser.parse_args(argv)
    if args.quick:
        args.addresses, args.wildcards, args.sends, args.spec_sends, args.check_sends = 500, 10, 500, 20, 50
    profile = get_profile("artemis-latest")
    setup, plain = make_setup(args.addresses, args.wildcards)
    bare = [command for command in setup if not command.queue.startswith("w")]
    sends = make_sends(plain, args.sends)
    check(profile, setup, sends[:args.check_sends])
    print(f"machine: {machine_info()}")
    print(f"{args.addresses:,} plain addresses, {args.wildcards} wildcard queues, {args.sends:,} sends; "
          f"checked: the first {args.check_sends} sends agree in spec, reference and impl")
    best: dict[tuple[str, str], tuple[float, float]] = {}
    layers = (("reference", ReferenceBalancingBroker), ("impl", FastBalancingBroker))
    for _ in range(args.rounds):
        for kind, queues in (("with wildcards", setup), ("no wildcards", bare)):
            for name, factory in layers:
                broker, built = build(factory, profile, queues)
                rate = time_sends(broker.execute, sends)
                old = best.get((name, kind))
                best[(name, kind)] = (max(rate, old[0]) if old else rate, min(built, old[1]) if old else built)
    state = initial_state(profile)
    for command in setup:
        state, _ = apply(state, command)
    current = [state]

    def spec_execute(command: BalancingCommand) -> BalancingOutcome:
        current[0], outcome = apply(current[0], command)
        return outcome
    spec_rate = time_sends(spec_execute, sends[:args.spec_sends])
    rows = []
    for name, _ in layers:
        rate, built = best[(name, "with wildcards")]
        bare_rate, bare_built = best[(name, "no wildcards")]
        rows.append([name, f"{rate:,.0f}", f"{bare_rate:,.0f}", f"{rate / bare_rate:.2f}x", f"{built:.2f}",
                     f"{bare_built:.2f}"])
    rows.append(["spec", f"{spec_rate:,.0f}", "", "", "", ""])
    print(render_table("sends per second (best of rounds) and setup seconds",
                       ["layer", "sends/s", "sends/s no wildcards", "wildcard cost", "setup s", "setup s no wc"],
                       rows))
    impl_rate, reference_rate = best[("impl", "with wildcards")][0], best[("reference", "with wildcards")][0]
    print(f"impl/reference with wildcards: {impl_rate / reference_rate:.1f}x; impl/spec: {impl_rate / spec_rate:.0f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
