"""Lockstep benchmark: steps per second of ``brokerspec check`` and of in-process fuzzing, before and after.

Introduction
------------
For each domain, one timed run of the lockstep state machine
(:func:`brokerspec.check.runner.run_machine`, a fixed seed and number of
scenarios, shrinking off) with

* ``check``: the spec, the reference and the fast implementation, as
  ``brokerspec check`` runs them (under ``seed`` for address resolution,
  ``artemis-latest`` elsewhere; load balancing strict);
* ``fuzz``: the fast implementation as a SUT in process (``brokerspec fuzz
  --sut inproc:impl``): behind the fuzzer's guard, outcomes only, load
  balancing judged permissively as ``fuzz`` does by default.

and, where this checkout's domain has operations the code before lacks, a third run:

* ``check, same ops``: ``check`` of this checkout with those operations left out (as ``fuzz
  --exclude-op`` leaves them out: a rule that would draw one is not drawn, and the features they
  carry, such as transacted or acknowledging consumers, go with them), against the before side's
  ``check``. The ``check`` row compares the machinery and the semantics together; this one compares
  the machinery on the kinds of step both sides draw. The operations left out are printed.

Each figure is CPU seconds of the run alone (imports, process start and
a warm-up of :data:`WARM_UP` scenarios left out), in a child process importing this checkout (*after*) or the
commit before the throughput work (*before*, :mod:`baseline`), the two
interleaved round by round; the best round counts. Without the git history
the before column says it is unavailable.

``--shrink`` adds the shrinking table: for every planted bug, the length of
the script Hypothesis shrinks it to (and after the 1-minimal cut) before and
after, same seed and scenarios. It takes minutes; ``--quick`` keeps one bug
per domain.

Usage::

    python benchmarks/check_bench.py [--examples 150] [--rounds 3] [--seed 1] [--domains D,...] [--no-before]
                                     [--shrink] [--shrink-examples 300] [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from baseline import NoBaseline, baseline_package, run_with  # noqa: E402

DOMAINS = ("addressing", "duplicates", "balancing", "topologies")
MODES = ("check", "fuzz")
SAME_OPS = "check, same ops"
"""The run of ``check`` without the operations the code before lacks (after side only; see the introduction)."""
WARM_UP = 5
"""Scenarios run, untimed, before the timed run (another seed): first-use costs (imports inside functions,
Hypothesis's set-up, caches filled on first use) belong to a process's start, not to its steps per second."""


def _profile_name(domain: str) -> str:
    return "seed" if domain == "addressing" else "artemis-latest"


def operations(domain: str) -> list[str]:
    """The operations the importing checkout's ``domain`` has (``brokerspec.codec.COMMANDS``, before and after)."""
    from brokerspec.codec import COMMANDS

    return sorted(COMMANDS[domain])


def measure(domain: str, mode: str, examples: int, seed: int, excluded: Sequence[str] = ()) -> dict[str, Any]:
    """One timed run: steps, scenarios and CPU seconds (APIs present before and after the throughput work);
    ``excluded`` operations are left out (``run_machine`` takes them at both commits; only this checkout is
    given any)."""
    from brokerspec.check.domains import get_domain
    from brokerspec.check.machine import RunStats
    from brokerspec.check.runner import run_machine
    from brokerspec.spec import get_profile

    chosen = get_domain(domain)
    profile = get_profile(_profile_name(domain))
    permissive = False
    if mode == "check":
        subjects: dict[str, Any] = dict(chosen.layers)
    else:
        from brokerspec.conform import fuzz as fuzzing
        from brokerspec.conform.sut import InProcessSut, subject_factory

        sut = InProcessSut("impl")
        sut.hello(profile, (domain,))
        guard = fuzzing.FirstFailure(sut)
        make = getattr(fuzzing, "guarded_factory", subject_factory)  # what fuzz itself uses at each commit
        subjects = {"sut": make(guard, domain)}
        permissive = chosen.judge is not None
    left_out = set(excluded) or None
    run_machine(profile, subjects, WARM_UP, seed + 1000, RunStats(), chosen, permissive, shrink=False,
                excluded=left_out)
    stats = RunStats()
    started = time.process_time()
    found = run_machine(profile, subjects, examples, seed, stats, chosen, permissive, shrink=False, excluded=left_out)
    seconds = time.process_time() - started
    return {"steps": stats.steps, "examples": stats.examples, "seconds": seconds,
            "found": None if found is None else found.step}


def shrunk_lengths(quick: bool, examples: int, seed: int) -> list[dict[str, Any]]:
    """Every planted bug (one per domain when ``quick``): the shrunk script's length, Hypothesis's and 1-minimal."""
    from brokerspec.check.domains import get_domain
    from brokerspec.check.minimal import lockstep_replay, one_minimal
    from brokerspec.check.runner import run_machine
    from brokerspec.planted.registry import all_planted
    from brokerspec.spec import get_profile

    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for domain_name, bug in all_planted():
        if quick and domain_name in seen:
            continue
        seen.add(domain_name)
        domain = get_domain(domain_name)
        profile = get_profile(bug.profiles[0])
        subjects = {"planted": bug.broker}
        found = run_machine(profile, subjects, examples, seed, None, domain)
        row: dict[str, Any] = {"domain": domain_name, "bug": bug.name, "profile": profile.name,
                               "shrunk": None, "minimal": None}
        if found is not None:
            row["shrunk"] = len(found.commands)
            row["minimal"] = len(one_minimal(found, lockstep_replay(profile, subjects, domain)).commands)
        rows.append(row)
    return rows


def _table(title: str, header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines = [title, "", "| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |",
             "|" + "|".join("-" * (w + 1) + ":" if i else "-" * (w + 2) for i, w in enumerate(widths)) + "|"]
    lines += ["| " + " | ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))) + " |"
              for r in rows]
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The options (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="20 scenarios, one round, one planted bug per domain")
    parser.add_argument("--examples", type=int, default=None, help="scenarios per timed run (default 150; quick 20)")
    parser.add_argument("--rounds", type=int, default=None, help="interleaved rounds, best counts (default 3)")
    parser.add_argument("--seed", type=int, default=1, help="Hypothesis seed of every timed run (default 1)")
    parser.add_argument("--domains", default=",".join(DOMAINS), help="comma-separated domains (default all)")
    parser.add_argument("--no-before", action="store_true", help="time this checkout only")
    parser.add_argument("--shrink", action="store_true", help="also the shrunk-length table of the planted bugs")
    parser.add_argument("--shrink-examples", type=int, default=300,
                        help="scenarios per planted bug in the shrink table (default 300), seed 7")
    args = parser.parse_args(argv)
    args.examples = args.examples if args.examples is not None else (20 if args.quick else 150)
    args.rounds = args.rounds if args.rounds is not None else (1 if args.quick else 3)
    args.domains = [d.strip() for d in args.domains.split(",") if d.strip()]
    unknown = [d for d in args.domains if d not in DOMAINS]
    if unknown or args.examples < 1 or args.rounds < 1 or args.shrink_examples < 1:
        parser.error(f"--domains takes {', '.join(DOMAINS)}; counts are at least 1 (got domains {unknown})")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Print the steps-per-second table (and the shrink table with ``--shrink``); 0 when every run completed."""
    args = parse_args(argv)
    sides: dict[str, Path | None] = {"after": None}
    why_not = ""
    with _before(args.no_before) as before:
        if isinstance(before, str):
            why_not = before
        else:
            sides = {"before": before, "after": None}
        best: dict[tuple[str, str, str], float] = {}
        spread: dict[tuple[str, str, str], list[float]] = {}
        newer = _newer_operations(sides, args.domains)
        for round_ in range(args.rounds):
            for domain in args.domains:
                runs: list[tuple[str, str, Path | None, list[str]]] = [
                    (mode, side, path, []) for mode in MODES for side, path in sides.items()]
                if newer.get(domain):
                    runs.append((SAME_OPS, "after", None, newer[domain]))
                for mode, side, path, excluded in runs:
                    figure = run_with(path, "check_bench", "measure",
                                      {"domain": domain, "mode": "check" if mode == SAME_OPS else mode,
                                       "examples": args.examples, "seed": args.seed + round_,
                                       "excluded": excluded})
                    rate = figure["steps"] / max(figure["seconds"], 1e-9)
                    key = (domain, mode, side)
                    spread.setdefault(key, []).append(rate)
                    best[key] = max(best.get(key, 0.0), rate)
        _print_rates(args, sides, best, spread)
        for domain, left_out in newer.items():
            if left_out:
                print(f"{SAME_OPS}, {domain}: left out {', '.join(left_out)} (operations the code before lacks)")
        if why_not:
            print(f"\nbefore: unavailable ({why_not})")
        if args.shrink:
            shrink_rows = {side: run_with(path, "check_bench", "shrunk_lengths",
                                          {"quick": args.quick, "examples": args.shrink_examples, "seed": 7})
                           for side, path in sides.items()}
            print()
            print(_shrink_table(shrink_rows, args.shrink_examples))
    return 0


def _print_rates(args: argparse.Namespace, sides: dict[str, Path | None], best: dict[tuple[str, str, str], float],
                 spread: dict[tuple[str, str, str], list[float]]) -> None:
    """The steps-per-second table, printed as soon as the timing is done (the shrink table takes minutes)."""
    rows = []
    for domain in args.domains:
        for mode in (*MODES, SAME_OPS):
            if (domain, mode, "after") not in best:
                continue
            after = best[(domain, mode, "after")]
            if "before" in sides:
                key = (domain, "check" if mode == SAME_OPS else mode, "before")
                was = best[key]
                paired = statistics.median(a / b for a, b in zip(spread[(domain, mode, "after")], spread[key]))
                before_cells = [f"{was:,.0f}", f"{after / was:.2f}x", f"{paired:.2f}x"]
            else:
                before_cells = ["unavailable", "-", "-"]
            median = statistics.median(spread[(domain, mode, "after")])
            rows.append([domain, mode, before_cells[0], f"{after:,.0f}", f"{median:,.0f}", *before_cells[1:]])
    print(_table(f"Lockstep steps per CPU second ({args.examples} scenarios a run, best of {args.rounds} "
                 f"interleaved rounds, seeds {args.seed}..{args.seed + args.rounds - 1}; 'paired': the median "
                 "over rounds of after/before on the same seed)",
                 ["domain", "run", "before", "after", "after median", "after/before", "paired"], rows), flush=True)


def _newer_operations(sides: dict[str, Path | None], domains: Sequence[str]) -> dict[str, list[str]]:
    """Per domain, the operations this checkout has and the code before lacks (none without a before side)."""
    if "before" not in sides:
        return {}
    return {domain: sorted(set(run_with(None, "check_bench", "operations", {"domain": domain}))
                           - set(run_with(sides["before"], "check_bench", "operations", {"domain": domain})))
            for domain in domains}


def _shrink_table(found: dict[str, list[dict[str, Any]]], examples: int) -> str:
    after = found["after"]
    before = {(r["domain"], r["bug"]): r for r in found.get("before", [])}

    def cell(row: dict[str, Any] | None, key: str) -> str:
        return "unavailable" if row is None else ("missed" if row[key] is None else str(row[key]))

    rows = [[f"{r['domain']}: {r['bug']}", r["profile"], cell(before.get((r["domain"], r["bug"])), "shrunk"),
             cell(r, "shrunk"), cell(before.get((r["domain"], r["bug"])), "minimal"), cell(r, "minimal")]
            for r in after]
    return _table(f"Shrunk script length per planted bug ({examples} scenarios, seed 7)",
                  ["planted bug", "profile", "shrunk before", "shrunk after", "1-minimal before", "1-minimal after"],
                  rows)


class _before:
    """The baseline package as a context, or the reason there is none (a string) when it cannot be had."""

    def __init__(self, skip: bool) -> None:
        self.skip = skip
        self.context: Any = None

    def __enter__(self) -> Path | str:
        if self.skip:
            return "--no-before"
        try:
            self.context = baseline_package()
            path: Path = self.context.__enter__()
        except NoBaseline as missing:
            self.context = None
            return str(missing)
        return path

    def __exit__(self, *exc: object) -> None:
        if self.context is not None:
            self.context.__exit__(*exc)


if __name__ == "__main__":
    sys.exit(main())
