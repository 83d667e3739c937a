"""Running the lockstep checker for a time budget, and keeping what it finds.

Introduction
------------
Hypothesis counts examples, not seconds, so :func:`check_for` runs the state
machine in batches until the budget is spent or a divergence is found. A
found divergence has already been shrunk by Hypothesis; it is then cut to a
1-minimal script (:mod:`.minimal`: no single step can go) and written as a
trace file (the commands, with the diverging layer's observed outcomes) so
``brokerspec replay`` reproduces it exactly.

``--seed`` makes a run repeatable: batch *i* runs with seed ``seed + i``.

A run may leave operations out (``excluded``, see :class:`.machine.OpsMachine`);
a batch that takes no step at all (every operation left out) ends the run.
"""

from __future__ import annotations

import time
from enum import Enum
from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis.errors import Flaky

from brokerspec.spec import Profile

from ..trace import Trace, TraceStep, write_new_trace
from .domains import ADDRESSING, Domain
from .engine import run_scenarios
from .lockstep import Divergence, DivergenceError, SubjectFactory
from .machine import RunStats, make_machine
from .minimal import lockstep_replay, one_minimal

BATCH_EXAMPLES = 25
DEADLINE_GRACE = 5.0
DEADLINE_GRACE_SHARE = 0.25
"""A budgeted run's batches stop beginning scenarios this long past the budget: the larger of the seconds and
the share of the budget (a fast subject's batch ends well inside it; a slow one's would not)."""


@dataclass(frozen=True)
class CheckResult:
    """What one budgeted run found."""

    profile: Profile
    domain: str
    examples: int
    steps: int
    seconds: float
    divergence: Divergence | None
    trace_path: Path | None
    drawn: Mapping[tuple[str, str], frozenset[object]] = field(default_factory=dict, compare=False)
    """(operation, argument) -> the distinct values the run drew for it (see :class:`.machine.RunStats`)."""


def run_machine(profile: Profile, subjects: Mapping[str, SubjectFactory], max_examples: int,
                run_seed: int | None = None, stats: RunStats | None = None,
                domain: Domain = ADDRESSING, permissive: bool = False, shrink: bool = True,
                excluded: AbstractSet[str] | None = None, wide: bool = False, window: int = 1,
                deadline: float | None = None) -> Divergence | None:
    """Run the state machine of ``domain`` once; return the divergence (shrunk unless ``shrink`` is False), or
    None if none was found. ``excluded``: operations left out; ``wide``: the domain's wide alphabet; ``window``:
    deferred comparison of a single batching subject (see :func:`.machine.make_machine`)."""
    machine = make_machine(profile, subjects, stats, domain, permissive, excluded, wide, window)
    try:
        run_scenarios(machine, max_examples, run_seed, shrink, deadline)
    except DivergenceError as error:
        return error.divergence
    except Flaky as error:  # pragma: no cover - the spec and layers are deterministic
        raise RuntimeError(f"the checker saw a flaky failure under {profile.label}: {error}") from error
    return None


def check_for(profile: Profile, subjects: Mapping[str, SubjectFactory], seconds: float, out_dir: Path,
              run_seed: int | None = None, on_batch: Callable[[RunStats], None] | None = None,
              domain: Domain = ADDRESSING, permissive: bool = False, stats: RunStats | None = None,
              excluded: AbstractSet[str] | None = None, window: int = 1) -> CheckResult:
    """Check ``subjects`` against the spec of ``domain`` under ``profile`` for about ``seconds``.

    ``stats`` (a fresh one when None) counts as the run goes, so a caller still has the counts when a subject's
    failure ends the run with an exception. ``excluded`` holds the operations the run leaves out; the caller may
    add to it while the run goes on. A batch that takes no step ends the run: nothing is left to draw. ``window``
    above 1 defers the comparison of a single subject that takes batches (:class:`.lockstep.Lockstep`); the found
    script is cut to 1-minimal step by step, which reports the same divergence.
    """
    stats = stats if stats is not None else RunStats()
    started = time.monotonic()
    batch = 0
    divergence: Divergence | None = None
    # A batch of a slow subject (a real broker, seconds a scenario) could outlast the budget many times over:
    # past the budget and a grace, the scenarios a batch has not begun take no step.
    deadline = started + seconds + max(DEADLINE_GRACE, DEADLINE_GRACE_SHARE * seconds)
    while divergence is None and (batch == 0 or time.monotonic() - started < seconds):
        batch_seed = None if run_seed is None else run_seed + batch
        steps_before = stats.steps
        divergence = run_machine(profile, subjects, BATCH_EXAMPLES, batch_seed, stats, domain, permissive,
                                 excluded=excluded, wide=batch % 2 == 1, window=window, deadline=deadline)
        batch += 1
        if on_batch is not None:
            on_batch(stats)
        if stats.steps == steps_before:
            break
    trace_path = None
    if divergence is not None:
        divergence = one_minimal(divergence, lockstep_replay(profile, subjects, domain, permissive))
        trace_path = write_divergence(out_dir, profile, divergence)
    drawn = {key: frozenset(values) for key, values in stats.drawn.items()}
    return CheckResult(profile, domain.name, stats.examples, stats.steps, time.monotonic() - started, divergence,
                       trace_path, drawn)


def divergence_trace(profile: Profile, divergence: Divergence) -> Trace:
    """The trace of a divergence: its commands with the diverging layer's observed outcomes."""
    observed = list(divergence.observed) + [None] * (len(divergence.commands) - len(divergence.observed))
    steps = tuple(TraceStep(c, o) for c, o in zip(divergence.commands, observed))
    note = f"{divergence.layer} parted from the spec at step {divergence.step}: {divergence.what}"
    return Trace(profile, steps, domain=divergence.domain, note=note)


def write_divergence(out_dir: Path, profile: Profile, divergence: Divergence) -> Path:
    """Write a divergence as a trace file named after profile, layer and time; return its path."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    safe = "".join(ch if ch.isalnum() or ch in "-._" else "_" for ch in profile.label)
    path = out_dir / f"{divergence.domain}-{safe}-{divergence.layer}-{stamp}.jsonl"
    return write_new_trace(path, divergence_trace(profile, divergence))


def describe_drawn(drawn: Mapping[tuple[str, str], frozenset[object]], shown: int = 8) -> list[tuple[str, int, str]]:
    """The values a run drew, one row per ``operation.argument``: how many distinct ones, and some of them.

    >>> describe_drawn({("subscribe", "priority"): frozenset({0, 5, -3})})
    [('subscribe.priority', 3, '-3, 0, 5')]
    """
    rows = []
    for (op, name), values in sorted(drawn.items()):
        if all(type(v) is int for v in values):
            listed = [str(v) for v in sorted(values, key=lambda v: int(str(v)))]
        else:
            listed = sorted((_show_value(v) for v in values), key=lambda text: (len(text), text))
        sample = ", ".join(listed[:shown]) + (", ..." if len(listed) > shown else "")
        rows.append((f"{op}.{name}", len(values), sample))
    return rows


def _show_value(value: object) -> str:
    text = value.value if isinstance(value, Enum) else value
    shown = repr(text) if isinstance(text, str) else str(text)
    return shown if len(shown) <= 40 else shown[:37] + "..."
