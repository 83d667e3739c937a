"""Pipe benchmark: steps per second through the SUT protocol, one request at a time and pipelined.

Introduction
------------
A system under test answers brokerspec over a pipe (``docs/sut-protocol.md``),
one JSON line per request and per reply. This script times, on brokerspec's
own fast implementation (``impl``), the same work three ways:

* in process (:class:`brokerspec.conform.sut.InProcessSut`): no JSON, no pipe,
  the floor;
* over the pipe to ``python -m brokerspec.conform.serve --layer impl``, one
  request at a time (:meth:`SubprocessSut.execute`, or a server that does not
  announce pipelining);
* over the pipe with pipelining: the server announces it in its hello and the
  client writes a scenario's requests ahead of their replies
  (:meth:`SubprocessSut.execute_many`).

Two workloads. *Scripts*: random addressing scripts of ``--steps`` commands,
each after a reset, as a fuzzer's scenarios are; every way must give the same
outcomes (a digest is compared, and the script exits 1 when they differ).
*Fuzz*: :func:`brokerspec.conform.fuzz.fuzz` for ``--fuzz-seconds`` on the
addressing domain with a fixed seed, steps per second as its report counts
them; whether the fuzzer hands its scenarios over as batches is up to the
checker, so the pipelined fuzz figure only differs from the other once it does.

The code before the throughput work (``benchmarks/baseline.py``) is timed in
the same run, in interleaved rounds (before, after, before, after...), each
round in a fresh child process (and its own server); the best round is kept.
Figures are wall-clock steps per second, the time a user waits. Usage::

    python benchmarks/pipe_bench.py [--scripts 200] [--steps 20] [--fuzz-seconds 8] [--rounds 3] [--quick]
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from baseline import NoBaseline, baseline_package, run_with  # noqa: E402
from bench_tables import render_table  # noqa: E402

MODES = ("in process", "pipe, one at a time", "pipe, pipelined")


# --- what a child process measures (runs against either commit) ---------------------------


def scripts_of(count: int, steps: int, seed: int) -> list[list[Any]]:
    """``count`` random addressing scripts of ``steps`` commands over a few names, so outcomes vary."""
    from brokerspec.spec.addressing import CreateAddress, CreateQueue, DeleteQueue, Lookup, RoutingType, Send

    chooser = random.Random(seed)
    addresses, queues = ["a1", "a2", "a3"], ["q1", "q2", "q3", "q4"]
    kinds = list(RoutingType)

    def command() -> Any:
        pick = chooser.randrange(6)
        if pick == 0:
            return CreateAddress(chooser.choice(addresses), frozenset(chooser.sample(kinds, chooser.randint(1, 2))))
        if pick == 1:
            return CreateQueue(chooser.choice(addresses), chooser.choice(queues), chooser.choice(kinds))
        if pick == 2:
            return DeleteQueue(chooser.choice(queues))
        if pick == 3:
            return Send(chooser.choice(addresses), chooser.choice([None, *kinds]))
        name = chooser.choice(queues)
        return Lookup(f"{chooser.choice(addresses)}::{name}" if pick == 4 else name)

    return [[command() for _ in range(steps)] for _ in range(count)]


def _serve(pipelining: bool) -> list[str]:
    """The server's command line; ``pipelining`` False asks it not to announce (where it can announce at all)."""
    from brokerspec.conform import serve

    argv = [sys.executable, "-m", "brokerspec.conform.serve", "--layer", "impl"]
    return argv + (["--pipelining", "1"] if not pipelining and hasattr(serve, "PIPELINING") else [])


def _play(sut: Any, scripts: list[list[Any]], batch: bool) -> tuple[float, float, str]:
    """Wall and CPU seconds to reset and run every script, and a digest of the outcomes."""
    from brokerspec.spec import get_profile

    seed = get_profile("seed")
    digest = hashlib.sha256()
    wall, cpu = time.perf_counter(), time.process_time()
    for script in scripts:
        sut.reset("addressing", seed)
        outcomes = sut.execute_many(script) if batch else [sut.execute(command) for command in script]
        digest.update(repr(outcomes).encode())
    return time.perf_counter() - wall, time.process_time() - cpu, digest.hexdigest()[:16]


def _fuzz_rate(sut: Any, seconds: float, seed: int) -> dict[str, Any]:
    from brokerspec.conform.fuzz import fuzz
    from brokerspec.spec import get_profile

    with tempfile.TemporaryDirectory() as out:
        report = fuzz(sut, get_profile("seed"), ("addressing",), seconds, Path(out), run_seed=seed)
    steps = sum(run.steps for run in report.runs)
    spent = sum(run.seconds for run in report.runs)
    return {"steps": steps, "seconds": spent}


def measure(scripts: int, steps: int, seed: int, fuzz_seconds: float) -> dict[str, Any]:
    """Every figure of one round, for the brokerspec this process imports (JSON data)."""
    from brokerspec.conform.sut import InProcessSut, SubprocessSut
    from brokerspec.spec import get_profile

    played = scripts_of(scripts, steps, seed)
    figures: dict[str, Any] = {"steps": scripts * steps, "scripts": {}, "fuzz": {}}
    in_process = InProcessSut("impl")
    in_process.hello(get_profile("seed"), ("addressing",))
    _play(in_process, played, batch=False)
    wall, cpu, digest = _play(in_process, played, batch=False)
    figures["scripts"][MODES[0]] = {"wall_s": wall, "cpu_s": cpu, "digest": digest}
    pipelined = hasattr(SubprocessSut, "execute_many")
    sut = SubprocessSut(_serve(pipelining=True))
    try:
        sut.hello(get_profile("seed"), ("addressing",))
        _play(sut, played, batch=False)  # a pass unmeasured: both sides build their per-class codecs once
        wall, cpu, digest = _play(sut, played, batch=False)
        figures["scripts"][MODES[1]] = {"wall_s": wall, "cpu_s": cpu, "digest": digest}
        if pipelined:
            wall, cpu, digest = _play(sut, played, batch=True)
            figures["scripts"][MODES[2]] = {"wall_s": wall, "cpu_s": cpu, "digest": digest}
    finally:
        sut.close()
    if fuzz_seconds > 0:
        figures["fuzz"][MODES[0]] = _fuzz_rate(InProcessSut("impl"), fuzz_seconds, seed)
        for mode, announce in ((MODES[1], False), (MODES[2], True)):
            if announce and not pipelined:
                continue
            sut = SubprocessSut(_serve(pipelining=announce))
            try:
                figures["fuzz"][mode] = _fuzz_rate(sut, fuzz_seconds, seed)
            finally:
                sut.close()
    return figures


# --- rounds, tables -----------------------------------------------------------------------


def best(rounds: list[dict[str, Any]], table: str, mode: str) -> dict[str, Any] | None:
    """The round of ``mode`` in ``table`` with the most steps per second (None when no round has it)."""
    found: list[dict[str, Any]] = [r[table][mode] for r in rounds if mode in r[table]]
    if not found:
        return None
    return max(found, key=lambda figure: rate(figure, rounds[0]["steps"]) or 0.0)


def rate(figure: dict[str, Any] | None, steps: int) -> float | None:
    """Steps per second of one figure (a scripts figure has wall seconds; a fuzz figure its own steps)."""
    if figure is None:
        return None
    if "wall_s" in figure:
        return steps / figure["wall_s"] if figure["wall_s"] > 0 else None
    return figure["steps"] / figure["seconds"] if figure["seconds"] > 0 else None


def _n(value: float | None) -> str:
    return "unavailable" if value is None else f"{value:,.0f}"


def _x(top: float | None, bottom: float | None) -> str:
    return "-" if top is None or bottom is None or bottom <= 0 else f"{top / bottom:.2f}x"


def report(before: list[dict[str, Any]] | None, after: list[dict[str, Any]], rounds: int) -> None:
    """The two tables, scripts and fuzz, each mode's steps/s before and after and against in process."""
    steps = after[0]["steps"]
    for table, title, extra in (
            ("scripts", f"Scripts through the SUT protocol, steps/s of wall time ({steps:,} steps; best of {rounds})",
             True),
            ("fuzz", f"brokerspec fuzz on addressing, steps/s (best of {rounds}; targets: 3,000 over the pipe, "
                     "8,000 in process)", False)):
        if not after[0][table]:
            continue
        floor = rate(best(after, table, MODES[0]), steps)
        rows = []
        for mode in MODES:
            now = best(after, table, mode)
            if now is None:
                continue
            was = rate(best(before, table, mode), steps) if before else None
            row = [mode, _n(was), _n(rate(now, steps)), _x(rate(now, steps), was), _x(rate(now, steps), floor)]
            if extra:
                row.append(f"{now['cpu_s'] / steps * 1e6:.0f}")
            rows.append(row)
        headers = ["mode", "before", "after", "after/before", "of in process"]
        print(render_table(title, headers + (["client µs CPU/step"] if extra else []), rows))
        print()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--scripts", type=int, default=200, help="random scripts per round")
    parser.add_argument("--steps", type=int, default=20, help="commands per script")
    parser.add_argument("--fuzz-seconds", type=float, default=8.0,
                        help="fuzzing budget per mode and round (0: no fuzz table)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds per side, best kept")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-before", action="store_true", help="time this checkout only")
    parser.add_argument("--quick", action="store_true", help="30 scripts, 0.5 s of fuzzing per mode, one round")
    args = parser.parse_args(argv)
    if args.quick:
        args.scripts, args.fuzz_seconds, args.rounds = 30, 0.5, 1
    for name in ("scripts", "steps", "rounds"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    if args.fuzz_seconds < 0:
        parser.error("--fuzz-seconds must not be negative")
    return args


def main(argv: list[str] | None = None) -> int:
    """Time both sides in interleaved rounds and print the tables; 1 when the outcomes differ anywhere."""
    args = parse_args(argv)
    started = time.perf_counter()
    arguments = {"scripts": args.scripts, "steps": args.steps, "seed": args.seed, "fuzz_seconds": args.fuzz_seconds}
    before: list[dict[str, Any]] | None = []
    after: list[dict[str, Any]] = []
    try:
        if args.no_before:
            raise NoBaseline("--no-before was given")
        with baseline_package() as package:
            for _ in range(args.rounds):
                assert before is not None
                before.append(run_with(package, "pipe_bench", "measure", arguments))
                after.append(run_with(None, "pipe_bench", "measure", arguments))
    except NoBaseline as why:
        print(f"the before column is unavailable: {why}")
        before = None
        after = [run_with(None, "pipe_bench", "measure", arguments) for _ in range(args.rounds)]
    digests = {f"{side} {mode}": figure["digest"] for side, rounds in (("before", before or []), ("after", after))
               for r in rounds for mode, figure in r["scripts"].items()}
    if len(set(digests.values())) != 1:
        print("error: the outcomes differ between the ways of running the scripts, so no figure is shown:",
              file=sys.stderr)
        for name, digest in sorted(digests.items()):
            print(f"  {name}: {digest}", file=sys.stderr)
        return 1
    print(f"every way gave the same outcomes (digest {next(iter(digests.values()))})\n")
    report(before, after, args.rounds)
    print(f"run time: {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
