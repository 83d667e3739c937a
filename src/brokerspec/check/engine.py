"""The scenario engine: Hypothesis draws a lockstep machine's scenarios as a handful of byte strings.

Introduction
------------
A lockstep machine is a class whose methods are marked :func:`rule` (one
step: build a command and run it) or :func:`initialize` (run once, first),
with a :mod:`.draws` draw per argument. :func:`run_scenarios` runs it as one
Hypothesis test of three values: the starting state's bytes, a *swarm* mask,
and a list of byte strings of :data:`GROUP` steps each, every step the same
length, so a step costs a quarter of one Hypothesis choice:

* byte 0 of a step picks the rule (0 skips the step, so Hypothesis shrinks an
  unneeded step away by zeroing it as well as by deleting it), the rest are
  the rule's arguments, each at a fixed offset (:class:`.draws.Draw`);
* the swarm mask leaves some rules out of half the scenarios (a scenario of
  sends without deletes reaches deeper states), as Hypothesis's feature
  flags did for ``RuleBasedStateMachine``; a step whose rule is left out
  takes the next rule that is not;
* a rule whose operations the run no longer draws (:func:`issues`, the
  machine's ``excluded`` set, which may grow while the run goes on) is left
  out the same way; when no rule is left, the scenario ends.

Why not ``RuleBasedStateMachine``: Hypothesis makes about twelve choices a
step there (feature flags, a filtered rule, nested ``one_of``\\s), some 300 µs
on the 2-core machine, which was 60-80% of a step of ``brokerspec check``
and of in-process ``fuzz`` (``docs/performance.md``). Shrinking is
Hypothesis's own: steps are deleted or zeroed, argument bytes lowered to
simpler values, then :mod:`.minimal` cuts the script to 1-minimal.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis.errors import UnsatisfiedAssumption
from hypothesis import strategies as st

from .draws import Draw

MIN_STEPS = 20
"""Steps drawn per scenario at least (Hypothesis shrinks the unneeded ones to skipped steps)."""
MAX_STEPS = 40
"""Steps drawn per scenario at most (as ``stateful_step_count`` was)."""
GROUP = 4
"""Steps per drawn byte string: Hypothesis's cost is per list element more than per byte, so four steps
share one (a scenario is 5 to 10 of them); a step is still zeroed on its own, a group deleted at once."""

_RULE = "_brokerspec_rule"
_ISSUED = "_brokerspec_issued_ops"
_Function = TypeVar("_Function", bound=Callable[..., None])


@dataclass(frozen=True)
class RuleSpec:
    """One rule of a machine: its method, its arguments' draws and their offsets in a step."""

    name: str
    function: Callable[..., None]
    arguments: tuple[tuple[str, Draw[Any], int], ...]
    """(name, draw, offset of its first byte in the rule's bytes)."""
    width: int
    initial: bool
    ops: tuple[str, ...] = ()
    """The operations the rule issues (empty: not marked with :func:`issues`, always drawn)."""

    def call(self, machine: object, data: bytes, offset: int) -> None:
        """Run the rule on ``machine`` with the arguments read from ``data`` at ``offset``."""
        self.function(machine, **{name: draw.at(data, offset + shift) for name, draw, shift in self.arguments})


def _mark(initial: bool, arguments: dict[str, Draw[Any]]) -> Callable[[_Function], _Function]:
    def mark(function: _Function) -> _Function:
        laid_out, width = [], 0
        for name, draw in arguments.items():
            laid_out.append((name, draw, width))
            width += draw.width
        setattr(function, _RULE, RuleSpec(function.__name__, function, tuple(laid_out), width, initial))
        return function

    return mark


def rule(**arguments: Draw[Any]) -> Callable[[_Function], _Function]:
    """Mark a method as a step of its machine, with one draw per argument."""
    return _mark(False, arguments)


def initialize(**arguments: Draw[Any]) -> Callable[[_Function], _Function]:
    """Mark a method as run once at the start of every scenario, before any step."""
    return _mark(True, arguments)


def issues(*ops: str) -> Callable[[_Function], _Function]:
    """Mark a rule (put above :func:`rule`) as issuing ``ops``: it is drawn only while the run draws one of them."""

    def mark(function: _Function) -> _Function:
        setattr(function, _ISSUED, ops)
        return function

    return mark


def rules_of(machine: type) -> tuple[tuple[RuleSpec, ...], tuple[RuleSpec, ...]]:
    """The machine's initialize rules and its step rules, each in the order the class defines them."""
    found: dict[str, RuleSpec] = {}
    for kind in reversed(machine.__mro__):
        for name, value in vars(kind).items():
            spec = getattr(value, _RULE, None)
            if isinstance(spec, RuleSpec):
                found[name] = dataclasses.replace(spec, ops=tuple(getattr(value, _ISSUED, ())))
    initial = tuple(spec for spec in found.values() if spec.initial)
    steps = tuple(spec for spec in found.values() if not spec.initial)
    if not steps:
        raise ValueError(f"{machine.__name__} has no rule to draw")
    return initial, steps


def scenario_settings(max_examples: int, shrink: bool = True) -> settings:
    """Hypothesis settings for lockstep runs: no deadline, no database, shrinking on unless told otherwise."""
    return settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        phases=(Phase.generate, Phase.shrink) if shrink else (Phase.generate,),
        report_multiple_bugs=False,
        print_blob=False,
    )


def _rule_for(byte: int, steps: tuple[RuleSpec, ...], chosen: list[bool], instance: Any,
              excluded: set[str] | None) -> RuleSpec | None:
    """The rule a step's first byte (1-255) names, or the next one the swarm and the run still draw; None when
    no rule is left. ``excluded`` is the machine's live set of left-out operations (None when it has none)."""
    count = len(steps)
    first = (byte - 1) * count // 255
    for turn in range(count):
        index = (first + turn) % count
        spec = steps[index]
        if chosen[index] and (not excluded or not spec.ops or instance.draws_any(spec.ops)):
            return spec
    return None


def run_scenarios(machine: type, max_examples: int, run_seed: int | None = None, shrink: bool = True,
                  deadline: float | None = None) -> None:
    """Run up to ``max_examples`` scenarios of ``machine`` (a class as :mod:`this module <.engine>` describes).

    Whatever a scenario raises ends the run, shrunk by Hypothesis unless ``shrink`` is False, and is raised
    here. The machine may have ``excluded`` (a set of operation names) and ``draws_any(ops)``; every scenario
    ends with its ``teardown()``. Once ``time.monotonic()`` passes ``deadline``, the scenarios not yet begun
    take no step (Hypothesis's own count of examples cannot be cut short otherwise), unless one has failed:
    then every replay of the shrink runs in full. The scenarios begun before it are drawn as without it.
    """
    failed = False
    initial, steps = rules_of(machine)
    start_width = sum(spec.width for spec in initial)
    step_width = 1 + max(spec.width for spec in steps)
    count = len(steps)

    @settings(scenario_settings(max_examples, shrink))
    @given(start=st.binary(min_size=start_width, max_size=start_width),
           swarm=st.binary(min_size=1 + count, max_size=1 + count),
           script=st.lists(st.binary(min_size=GROUP * step_width, max_size=GROUP * step_width),
                           min_size=MIN_STEPS // GROUP, max_size=MAX_STEPS // GROUP))
    def scenario(start: bytes, swarm: bytes, script: list[bytes]) -> None:
        nonlocal failed
        if deadline is not None and not failed and time.monotonic() >= deadline:
            return
        instance = machine()
        try:
            offset = 0
            for spec in initial:
                spec.call(instance, start, offset)
                offset += spec.width
            chosen = [True] * count if swarm[0] < 128 else [byte < 160 for byte in swarm[1:]]
            if not any(chosen):
                chosen = [True] * count  # a mask that leaves every rule out leaves none out
            excluded = getattr(instance, "excluded", None)  # the same set all scenario long, though it may grow
            for group in script:
                for at in range(0, len(group), step_width):
                    if group[at] == 0:
                        continue  # a skipped step
                    drawn = _rule_for(group[at], steps, chosen, instance, excluded)
                    if drawn is None:
                        return  # every rule's operations are left out: nothing to draw
                    drawn.call(instance, group, at + 1)
        except UnsatisfiedAssumption:
            raise  # a discarded scenario (hypothesis.reject) is not a failure
        except BaseException:
            failed = True
            raise
        finally:
            instance.teardown()

    if run_seed is not None:
        scenario = seed(run_seed)(scenario)
    scenario()
