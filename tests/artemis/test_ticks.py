"""The logical clock as wall-clock time for the cluster adapter (no broker needed)."""

from __future__ import annotations

import pytest

from brokerspec.artemis.outcomes import NotExpressible
from brokerspec.artemis.ticks import MARGIN, TickClock
from brokerspec.spec.balancing import Attach, Send, Tick


def test_a_positive_delay_is_written_in_milliseconds_and_others_as_they_are() -> None:
    clock = TickClock(tick_seconds=2.0)
    assert [clock.milliseconds(d) for d in (-1, 0, -2, 3)] == [-1, 0, -2, 6000]
    assert clock.delays == {3}


def test_a_tick_waits_only_for_redistributors_it_makes_due() -> None:
    clock = TickClock(tick_seconds=2.0)
    clock.milliseconds(2)
    clock.record(Attach("c", "n2", "q"), 10.0, 10.5)  # at clock 0: due at clock 2
    clock.record(Send("n1", "q"), 11.0, 11.2)  # a send adds no redistributor
    assert clock.advance(1, 11.0) == 0.0 and clock.clock == 1
    assert clock.advance(1, 12.0) == pytest.approx(10.5 + 4.0 + MARGIN - 12.0)
    assert clock.advance(5, 20.0) == 0.0 and clock.clock == 7


def test_a_step_that_outlasts_a_pending_delay_makes_the_case_not_expressible() -> None:
    clock = TickClock(tick_seconds=2.0)
    clock.milliseconds(1)
    clock.record(Attach("c", "n2", "q"), 10.0, 10.1)
    clock.check(11.9)
    with pytest.raises(NotExpressible, match="longer than a tick"):
        clock.check(12.1)
    clock.advance(1, 12.1)
    clock.check(30.0)  # due now: the spec expects it to have run
    clock.record(Tick(), 30.0, 30.1)
    assert len(clock.triggers) == 1
