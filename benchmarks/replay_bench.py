"""Replay benchmark: CPU per line of history replay, per event of duplicate-stream replay, per decode.

Introduction
------------
The audit replays each recorded history line through the spec
(:func:`brokerspec.audit.histories.audit_history_rows`: read the JSON line,
decode its command and outcome, apply the command, compare the outcomes) and
each duplicate-detection stream row through the per-address ring
(:func:`brokerspec.audit.streams.audit_sorted_rows`). This script times both in
one process, with :func:`time.process_time` (CPU, not wall time), on the same
files for the code before the throughput work (``benchmarks/baseline.py``) and
for this checkout, in interleaved rounds (before, after, before, after...),
each round in a fresh child process, best round kept.

The corpus, written once by this checkout:

* histories of addressing and duplicates from ``brokerspec generate`` (the
  fast implementation's outcomes, one planted fault per ten histories), split
  into one file per domain;
* histories of load balancing and topologies made by running the catalogue's
  scripts, shuffled and joined into histories of ``--steps`` steps, through
  the spec, with every tenth history given one wrong outcome;
* duplicate-detection streams from ``brokerspec generate --kind streams``.

Figures: µs of CPU per line to key a line (its history and step, the cheap
first look the audit takes to route it) and to replay it, per domain, and the
replay over all domains; µs per event to read a stream row (JSON and checks)
and to replay it; µs to decode one command and one outcome. Both sides must
give the same verdicts (divergences, quarantined lines, lines checked, and a
digest of every output row): the script exits 1 when they differ, and prints
no ratio. Usage::

    python benchmarks/replay_bench.py [--histories 1000] [--steps 40] [--groups 500] [--rounds 3]
                                      [--seed 1] [--no-before] [--json PATH] [--quick]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from baseline import NoBaseline, baseline_package, run_with  # noqa: E402
from bench_tables import render_table  # noqa: E402
from readable import describe, make_readable  # noqa: E402

PROFILE = "artemis-latest"
CATALOGUE_DOMAINS = ("balancing", "topologies")


# --- the corpus (this checkout) -----------------------------------------------------------


def generate(out: Path, kind: str, count: int, steps: int, seed: int) -> Path:
    """Run ``brokerspec generate`` into ``out`` and return its data folder."""
    argv = ["generate", "--kind", kind, "--histories", str(count), "--faults", str(max(1, count // 10)),
            "--steps", str(steps), "--seed", str(seed), "--profile", PROFILE, "--files", "1", "--out", str(out)]
    code = f"import sys; from brokerspec.cli import main; sys.exit(main({argv!r}))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"brokerspec generate failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return out / "data"


def split_by_domain(data: Path, folder: Path) -> None:
    """Each history of a generated corpus into the file of its domain (``folder/DOMAIN.jsonl``)."""
    domain_of: dict[str, str] = {}
    files: dict[str, list[str]] = {}
    for path in sorted(data.glob("*.jsonl")):
        for text in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(text)
            if record["type"] == "header":
                domain_of[record["history"]] = record["domain"]
            files.setdefault(domain_of[record["history"]], []).append(text)
    for domain, lines in files.items():
        (folder / f"{domain}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def catalogue_histories(domain: str, count: int, steps: int, seed: int) -> list[str]:
    """``count`` histories of ``domain``: catalogue scripts joined, run through the spec, some outcomes wrong."""
    from brokerspec.check.domains import get_domain
    from brokerspec.codec import encode_command, encode_outcome
    from brokerspec.conform.catalogue import all_cases
    from brokerspec.spec import get_profile

    rng = random.Random(seed)
    profile = get_profile(PROFILE)
    spec = get_domain(domain)
    pool = [command for case in all_cases() if case.domain == domain and PROFILE in case.profiles
            for command in case.commands]
    lines: list[str] = []
    for number in range(count):
        history = f"{domain[:3]}{number:06d}"
        lines.append(json.dumps({"v": 1, "type": "header", "history": history, "domain": domain,
                                 "profile": PROFILE, "overrides": {}}))
        state = spec.initial_state(profile)
        start = rng.randrange(len(pool))
        wrong_at = rng.randint(1, steps) if number % 10 == 0 else 0
        seen: list[Any] = []
        for step in range(1, steps + 1):
            command = pool[(start + step) % len(pool)]
            state, outcome = spec.apply(state, command)
            if step == wrong_at:
                outcome = next((other for other in reversed(seen) if other != outcome), outcome)
            seen.append(outcome)
            lines.append(json.dumps({"v": 1, "type": "step", "history": history, "step": step, "op": command.op,
                                     "args": encode_command(command), "outcome": encode_outcome(outcome)}))
    return lines


def write_corpus(folder: Path, histories: int, steps: int, groups: int, seed: int) -> Path:
    """The whole corpus under ``folder``: ``histories/DOMAIN.jsonl`` and ``streams/*.jsonl``."""
    (folder / "histories").mkdir(parents=True)
    split_by_domain(generate(folder / "generated", "histories", histories, steps, seed), folder / "histories")
    for domain in CATALOGUE_DOMAINS:
        lines = catalogue_histories(domain, histories // 2, steps, seed)
        (folder / "histories" / f"{domain}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    generate(folder / "streams", "streams", groups, 200, seed)
    return folder


# --- the timing function (runs in a child, before or after) -------------------------------


def _digest(results: list[tuple[object, ...]]) -> str:
    return hashlib.sha256(repr(sorted(map(repr, results))).encode()).hexdigest()[:16]


def measure(folder: str, cache_size: int = 20000) -> dict[str, Any]:
    """One round over the corpus in ``folder``: CPU µs per line, event and decode, and the verdicts.

    Uses only what both commits have: ``histories.step_key`` and ``audit_history_rows``,
    ``streams.validate_record``, ``audit_sorted_rows`` and ``judge_commits``, ``jsonin.loads`` and the codec.
    """
    from brokerspec import jsonin
    from brokerspec.audit import histories, streams
    from brokerspec.codec import decode_command, decode_outcome

    figures: dict[str, Any] = {"histories": {}, "decode": {}}
    read_once = _read_once()
    for path in sorted(Path(folder, "histories").glob("*.jsonl")):
        texts = path.read_text(encoding="utf-8").splitlines()
        start = time.process_time()
        if read_once is None:
            keys = [histories.step_key(text) for text in texts]
        else:
            seen = read_once[0]()
            keys = [histories.step_key(text, seen) for text in texts]  # type: ignore[call-arg, unused-ignore]
        keyed = time.process_time() - start
        rows = sorted((str(h), s or 0, path.name, n, text) for n, ((h, s, _), text) in enumerate(zip(keys, texts), 1))
        start = time.process_time()
        results = list(histories.audit_history_rows(rows))
        replayed = time.process_time() - start
        kinds = Counter(str(result[0]) for result in results)
        checked = sum(int(str(result[2])) for result in results if result[0] == "summary")
        figures["histories"][path.stem] = {
            "lines": len(rows), "key_s": keyed, "replay_s": replayed, "digest": _digest(results),
            "verdicts": {"divergences": kinds["divergence"], "quarantined": kinds["quarantine"], "checked": checked}}
        if read_once is not None:  # the worst case: no line's rest was read before
            original = histories.ReadOnce  # type: ignore[attr-defined, unused-ignore]
            histories.ReadOnce = read_once[1]  # type: ignore[attr-defined, unused-ignore]
            try:
                start = time.process_time()
                fresh = list(histories.audit_history_rows(rows))
                figures["histories"][path.stem]["replay_new_s"] = time.process_time() - start
            finally:
                histories.ReadOnce = original  # type: ignore[attr-defined, unused-ignore]
            if fresh != results:
                raise AssertionError(f"{path.name}: reading every line gave other results than reading once")
        records = [jsonin.loads(text) for text in texts]
        commands = [(r["op"], r["args"]) for r in records if r["type"] == "step"]
        outcomes = [r["outcome"] for r in records if r["type"] == "step" and "outcome" in r]
        start = time.process_time()
        for op, args in commands:
            decode_command(op, args, domain=path.stem)
        middle = time.process_time()
        for outcome in outcomes:
            decode_outcome(outcome, domain=path.stem)
        figures["decode"][path.stem] = {"commands": len(commands), "command_s": middle - start,
                                        "outcomes": len(outcomes), "outcome_s": time.process_time() - middle}
    lines = [(path.name, n, text) for path in sorted(Path(folder, "streams", "data").glob("*.jsonl"))
             for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if text.strip()]
    start = time.process_time()
    checked_rows = [(streams.validate_record(jsonin.loads(text)), file, n) for file, n, text in lines]
    parsed = time.process_time() - start
    events: list[tuple[Any, ...]] = sorted((*values, file, n) for values, file, n in checked_rows
                                           if not isinstance(values, str))
    start = time.process_time()
    results = list(streams.audit_sorted_rows(events, cache_size))
    replayed = time.process_time() - start
    facts = [streams.CommitFact(str(r[1]), int(str(r[2])), str(r[4]), int(str(r[5])), str(r[6]), bool(r[7]),
                                str(r[8])) for r in results if r[0] == streams.COMMIT]
    wrong = list(streams.judge_commits(facts))
    kinds = Counter(str(result[0]) for result in results)
    figures["streams"] = {"events": len(events), "parse_s": parsed, "replay_s": replayed, "digest": _digest(results),
                          "verdicts": {"divergences": kinds["divergence"] + len(wrong),
                                       "quarantined": kinds["quarantine"] + len(lines) - len(events),
                                       "commits": kinds["commit"]}}
    return figures


def _read_once() -> tuple[Any, Any] | None:
    """This checkout's reader of distinct lines and one that never finds a line, or None (the code before)."""
    try:
        from brokerspec.audit.lines import ReadOnce
    except ImportError:
        return None

    class NeverFound(ReadOnce[Any]):
        """Looks every line up and finds none: what a corpus of all different lines costs."""

        def get(self, kind: str, rest: str) -> Any:
            self.tries += 1
            return None

    return ReadOnce, NeverFound


# --- rounds, tables -----------------------------------------------------------------------


def best_of(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """The first round's counts with every ``*_s`` figure the least over the rounds."""
    def merge(first: Any, others: list[Any]) -> Any:
        if isinstance(first, dict):
            return {key: merge(value, [other[key] for other in others]) for key, value in first.items()}
        return first

    merged: dict[str, Any] = merge(rounds[0], rounds[1:])

    def least(node: dict[str, Any], path: tuple[str, ...]) -> None:
        for key, value in node.items():
            if isinstance(value, dict):
                least(value, (*path, key))
            elif key.endswith("_s"):
                values = []
                for round_ in rounds:
                    entry: Any = round_
                    for part in path:
                        entry = entry[part]
                    values.append(entry[key])
                node[key] = min(values)

    least(merged, ())
    return merged


RULES_CHANGED = {
    "balancing": "the load-balancing rules changed after the commit before the throughput work (rules the real "
                 "Artemis corrected, transactions, acknowledgements, queue queries), so the older spec judges the "
                 "same lines otherwise; every other domain must agree"}
"""Domains whose spec decides otherwise than at :data:`baseline.BEFORE_THROUGHPUT`, and why: a difference in their
verdicts drops their before figure instead of failing the run (any other difference still fails it)."""


def verdicts(figures: dict[str, Any]) -> dict[str, Any]:
    """What must be equal before and after: every verdict count and digest."""
    table = {domain: (f["verdicts"], f["digest"]) for domain, f in figures["histories"].items()}
    table["streams"] = (figures["streams"]["verdicts"], figures["streams"]["digest"])
    return table


def _us(seconds: float, count: int) -> float:
    return seconds / max(count, 1) * 1e6


def _cells(before: float | None, after: float) -> list[str]:
    if before is None:
        return ["unavailable", f"{after:.2f}", "-"]
    return [f"{before:.2f}", f"{after:.2f}", f"{before / after:.1f}x" if after > 0 else "-"]


def report(before: dict[str, Any] | None, after: dict[str, Any], rounds: int) -> None:
    """The three tables: history replay per line, stream replay per event, decode per value."""
    rows = []
    totals: dict[str, Any] = {"lines": 0, "after": 0.0, "before": 0.0}
    for domain, fig in after["histories"].items():
        old = before["histories"].get(domain) if before else None
        lines = fig["lines"]
        totals["lines"] += lines
        totals["after"] += fig["replay_s"]
        totals["before"] += old["replay_s"] if old else 0.0
        totals["missing"] = totals.get("missing", 0) + (old is None)
        fresh = fig.get("replay_new_s")
        totals["fresh"] = totals.get("fresh", 0.0) + (fresh or 0.0)
        rows.append([domain, f"{lines:,}",
                     *_cells(_us(old["key_s"], lines) if old else None, _us(fig["key_s"], lines))[:2],
                     *_cells(_us(old["replay_s"], lines) if old else None, _us(fig["replay_s"], lines)),
                     "-" if fresh is None else f"{_us(fresh, lines):.2f}", f"{fig['verdicts']['divergences']:,}"])
    rows.append(["all domains", f"{totals['lines']:,}", "", "",
                 *_cells(_us(totals["before"], totals["lines"]) if before and not totals["missing"] else None,
                         _us(totals["after"], totals["lines"])),
                 f"{_us(totals['fresh'], totals['lines']):.2f}" if totals.get("fresh") else "-", ""])
    print(render_table(f"History replay, µs of CPU per line (best of {rounds} round(s); target: replay at most 20)",
                       ["domain", "lines", "key before", "key after", "replay before", "replay after", "speed-up",
                        "after, every line new", "divergences"], rows))
    fig = after["streams"]
    old = before["streams"] if before else None
    events = fig["events"]
    print()
    print(render_table("Duplicate-stream replay, µs of CPU per event (target: replay at most 2)",
                       ["phase", "events", "before", "after", "speed-up"],
                       [["read a row (JSON, checks)", f"{events:,}",
                         *_cells(_us(old["parse_s"], events) if old else None, _us(fig["parse_s"], events))],
                        ["replay", f"{events:,}",
                         *_cells(_us(old["replay_s"], events) if old else None, _us(fig["replay_s"], events))]]))
    rows = []
    for domain, fig in after["decode"].items():
        old = before["decode"][domain] if before else None
        for what in ("command", "outcome"):
            count = fig[f"{what}s"]
            rows.append([f"{domain} {what}", f"{count:,}",
                         *_cells(_us(old[f"{what}_s"], count) if old else None, _us(fig[f"{what}_s"], count))])
    print()
    print(render_table("Decoding one value from its JSON data, µs of CPU", ["what", "values", "before", "after",
                                                                           "speed-up"], rows))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--histories", type=int, default=1000,
                        help="generated histories (addressing and duplicates); half as many per catalogue domain")
    parser.add_argument("--steps", type=int, default=40, help="steps per history")
    parser.add_argument("--groups", type=int, default=500, help="stream address groups (200 events each)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds per side, best kept")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-before", action="store_true", help="time this checkout only")
    parser.add_argument("--json", type=Path, help="also write every round's figures of both sides here")
    parser.add_argument("--quick", action="store_true", help="40 histories, 20 groups, one round")
    args = parser.parse_args(argv)
    if args.quick:
        args.histories, args.groups, args.rounds = 40, 20, 1
    for name in ("histories", "steps", "groups", "rounds"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    """Write the corpus, time both sides in interleaved rounds, print the tables; 1 when verdicts differ."""
    args = parse_args(argv)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="replay-bench-") as temp:
        folder = write_corpus(Path(temp) / "corpus", args.histories, args.steps, args.groups, args.seed)
        print(f"corpus written in {time.perf_counter() - started:.1f} s")
        after_rounds: list[dict[str, Any]] = []
        before_rounds: list[dict[str, Any]] = []
        arguments = {"folder": str(folder)}
        try:
            if args.no_before:
                raise NoBaseline("--no-before was given")
            with baseline_package() as package:
                for path in sorted((folder / "histories").glob("*.jsonl")):
                    dropped = make_readable(path, package)
                    if dropped:
                        print(describe(dropped, path.stem))
                for _ in range(args.rounds):
                    before_rounds.append(run_with(package, "replay_bench", "measure", arguments))
                    after_rounds.append(run_with(None, "replay_bench", "measure", arguments))
        except NoBaseline as why:
            print(f"the before column is unavailable: {why}")
            after_rounds = [run_with(None, "replay_bench", "measure", arguments) for _ in range(args.rounds)]
    after = best_of(after_rounds)
    before = best_of(before_rounds) if before_rounds else None
    if args.json is not None:
        args.json.write_text(json.dumps({"before": before_rounds, "after": after_rounds}, indent=1), encoding="utf-8")
    differ: list[str] = []
    if before is not None:
        was, now = verdicts(before), verdicts(after)
        differ = sorted(name for name in set(was) | set(now) if was.get(name) != now.get(name))
        if set(differ) - set(RULES_CHANGED):
            print("error: the verdicts differ before and after, so no figure is shown:", file=sys.stderr)
            for name in differ:
                print(f"  {name}: before {was.get(name)}, after {now.get(name)}", file=sys.stderr)
            return 1
        for name in differ:  # the spec itself judges otherwise now: no before figure for that domain
            print(f"{name}: no before figure, the verdicts differ (before {was[name][0]}, after {now[name][0]}): "
                  f"{RULES_CHANGED[name]}")
            del before["histories"][name]
    agree = "" if before is None else " (equal before and after" + (
        f", but in {', '.join(differ)})" if differ else ")")
    print("verdicts: " + "; ".join(f"{name} {counts}" for name, (counts, _) in verdicts(after).items()) + agree)
    print()
    report(before, after, args.rounds)
    print(f"\nrun time: {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
