"""Making a found script 1-minimal: no single step (nor two steps together) can be left out and still show a
difference.

Introduction
------------
Hypothesis shrinks a failing scenario well, but not to a guaranteed point:
its shrinker works on the choices that drew the commands, and a step that
nothing needs can survive because removing it changes what later draws
produce. A script a person reads should hold only steps that matter. So
after every divergence the checker, ``fuzz`` and ``diff`` find,
:func:`one_minimal` replays the script with one step left out at a time;
whenever some difference remains it keeps the shorter script and starts
again, until leaving out any single step makes every difference go away.
Then it tries leaving out two steps together, and starts over if that
keeps a difference.

The replay is the same :class:`~.lockstep.Lockstep` the search used, so the
difference that remains is one the search itself would report, though it
may show at another step or in other words than the first one. A replay
that cannot be judged (a SUT that fails, or cannot do an operation) counts
as showing no difference: the step stays.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from itertools import combinations
from typing import Any

from hypothesis.errors import UnsatisfiedAssumption

from brokerspec.spec import Profile

from .domains import Domain
from .lockstep import Divergence, DivergenceError, Lockstep, SubjectFactory, SubjectFailure

Replay = Callable[[Sequence[Any]], Divergence | None]
"""Plays a script from a fresh start; the divergence it shows, or None."""


def lockstep_replay(profile: Profile, subjects: Mapping[str, SubjectFactory], domain: Domain,
                    permissive: bool = False) -> Replay:
    """A :data:`Replay` through a fresh :class:`Lockstep` of ``subjects`` for each script."""

    def replay(commands: Sequence[Any]) -> Divergence | None:
        lockstep = Lockstep(profile, subjects, domain, permissive)
        try:
            for command in commands:
                lockstep.step(command)
        except DivergenceError as error:
            return error.divergence
        except (SubjectFailure, UnsatisfiedAssumption):
            return None
        finally:
            lockstep.close()
        return None

    return replay


def one_minimal(divergence: Divergence, replay: Replay, max_replays: int = 500) -> Divergence:
    """``divergence`` with its script cut until no single step, and no two steps together, can go; at most
    ``max_replays`` replays.

    The steps after the diverging one are dropped first (they cannot matter). Two steps at a time catch
    what one at a time cannot: a rule that picks its target by position among what exists (``pick %
    len(queues)``) re-aims every later step when one step goes, so a step may only be removable together
    with the step it re-aims.
    """
    best = dataclasses.replace(divergence, commands=divergence.commands[:divergence.step],
                               observed=divergence.observed[:divergence.step])
    commands = list(best.commands)
    replays = 0
    while True:
        index = 0
        while index < len(commands) and replays < max_replays:
            replays += 1
            found = replay(commands[:index] + commands[index + 1:])
            if found is None:
                index += 1  # this step is needed; try the next
                continue
            best = found
            commands = list(found.commands[:found.step])
            index = 0  # a removal can make an earlier step removable: start over
        pair = None
        for first, second in combinations(range(len(commands)), 2):
            if replays >= max_replays:
                break
            replays += 1
            pair = replay(commands[:first] + commands[first + 1:second] + commands[second + 1:])
            if pair is not None:
                break
        if pair is None:
            return best
        best = pair
        commands = list(pair.commands[:pair.step])


def is_one_minimal(divergence: Divergence, replay: Replay) -> bool:
    """Whether leaving out any single step of the divergence's script makes every difference go away."""
    commands = list(divergence.commands[:divergence.step])
    return all(replay(commands[:i] + commands[i + 1:]) is None for i in range(len(commands)))
