"""The spec's logical clock on a real cluster: positive redistribution delays as wall-clock time.

Introduction
------------
In the spec a redistribution delay counts ticks of a logical clock: a
redistributor added at clock ``c`` with delay ``d`` acts once a ``tick`` has
brought the clock to ``c + d``, and not before. Artemis counts milliseconds
(``redistribution-delay``; ``QueueImpl.addRedistributor`` schedules the
redistributor that far ahead). :class:`TickClock` maps one onto the other:
a delay of ``d`` ticks is written as ``d`` times :data:`TICK_SECONDS`, and a
``tick`` waits until every redistributor that the spec says is now due has
had its time on the broker (the end of the step that could have added it,
plus its delay, plus a margin), then lets the cluster settle.

The mapping holds only while the steps between ticks are short against a
tick: a redistributor must not fire on the broker before the spec's clock
reaches it. :meth:`TickClock.check` watches for that after every step (over
the steps that can add a redistributor: a consumer attaching or closing
and a queue being created, ``PostOfficeImpl.onNotification``) and makes the
case not expressible when the timing could not be kept, rather than judge
the broker on a race.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from brokerspec.spec.balancing import Attach, Close, CreateQueue

from .outcomes import NotExpressible

TICK_SECONDS = 3.0
"""Wall-clock seconds per tick of the spec's clock."""

MARGIN = 0.5
"""Seconds a tick waits beyond a due redistributor's time, for it to run."""

TRIGGERS = (Attach, Close, CreateQueue)
"""The operations whose notifications can add a redistributor (``PostOfficeImpl.onNotification``)."""


@dataclass(frozen=True)
class Trigger:
    """A step that could have added a redistributor: the clock it ran at and when (monotonic seconds)."""

    clock: int
    start: float
    end: float


@dataclass
class TickClock:
    """The logical clock of one case, and the steps that could start a delayed redistribution."""

    tick_seconds: float = TICK_SECONDS
    clock: int = 0
    delays: set[int] = field(default_factory=set)
    """Every positive delay the case configured, in ticks."""
    triggers: list[Trigger] = field(default_factory=list)

    def milliseconds(self, delay: int) -> int:
        """The ``redistribution-delay`` for a spec delay: ticks as milliseconds when positive, else as it is."""
        if delay <= 0:
            return delay
        self.delays.add(delay)
        return round(delay * self.tick_seconds * 1000)

    def record(self, command: Any, start: float, end: float) -> None:
        """Remember a step that could have added a redistributor."""
        if isinstance(command, TRIGGERS):
            self.triggers.append(Trigger(self.clock, start, end))

    def advance(self, ticks: int, now: float) -> float:
        """Move the clock on by ``ticks``; the seconds to wait for every redistributor now due to have run."""
        target = self.clock + ticks
        due = [t.end + d * self.tick_seconds + MARGIN for t in self.triggers for d in self.delays
               if self.clock < t.clock + d <= target]
        self.clock = target
        return max([0.0, *(moment - now for moment in due)])

    def check(self, now: float) -> None:
        """NotExpressible if a redistributor not yet due in the spec may already have run on the broker."""
        for trigger in self.triggers:
            for delay in self.delays:
                if trigger.clock + delay > self.clock and trigger.start + delay * self.tick_seconds < now:
                    raise NotExpressible(
                        f"the steps between ticks took longer than a tick ({self.tick_seconds:g} s of "
                        f"redistribution-delay per tick), so a redistributor the spec has not yet made due may "
                        "already have run on the broker")
