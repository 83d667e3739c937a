"""The scenario engine and its draws: what a step's bytes stand for, what runs, and how a failure shrinks."""

from __future__ import annotations

from typing import Any

import pytest

from brokerspec.check import draws as d
from brokerspec.check.engine import MAX_STEPS, initialize, issues, rule, rules_of, run_scenarios
from brokerspec.check.machine import OpsMachine, with_excluded


def test_byte_zero_is_the_first_value_and_every_value_is_reachable() -> None:
    draw = d.pick("a", "b", "c")
    assert draw.at(bytes([0]), 0) == "a"
    assert {draw.at(bytes([byte]), 0) for byte in range(256)} == {"a", "b", "c"}
    assert d.integers(2, 5).at(bytes([0]), 0) == 2 and d.integers(2, 5).at(bytes([255]), 0) == 5


def test_repetition_weighs_a_value() -> None:
    draw = d.pick(True, True, True, False)
    assert sum(draw.at(bytes([byte]), 0) for byte in range(256)) == 192


def test_every_draw_reads_a_fixed_width_so_later_arguments_stay_put() -> None:
    either = d.either(d.pick(None), d.tuples(d.pick(1, 2), d.pick("x", "y")))
    assert either.width == 3
    both = d.tuples(either, d.pick("p", "q"))
    assert both.at(bytes([0, 255, 255, 255]), 0) == (None, "q")
    assert both.at(bytes([255, 255, 255, 255]), 0) == ((2, "y"), "q")
    listed = d.lists(d.pick(1, 2), 1, 3)
    assert listed.width == 4
    assert d.tuples(listed, d.pick("p", "q")).at(bytes([0, 255, 255, 255, 255]), 0) == ([2], "q")


def test_builds_passes_named_parts_by_name() -> None:
    draw = d.builds(lambda a, b=0, c=0: (a, b, c), d.pick(1), c=d.pick(7, 8), b=d.pick(5))
    assert draw.at(bytes([0, 255, 0]), 0) == (1, 5, 8)


def test_a_list_length_and_optional_are_drawn_from_their_own_byte() -> None:
    assert d.lists(d.pick(9), 2, 4).at(bytes([0, 0, 0, 0, 0]), 0) == [9, 9]
    assert d.optional(d.pick(4)).at(bytes([0, 0]), 0) is None
    assert d.optional(d.pick(4)).at(bytes([255, 0]), 0) == 4
    assert d.booleans().at(bytes([200]), 0) is True


@pytest.mark.parametrize("bad", [lambda: d.pick(), lambda: d.pick(*range(257)), lambda: d.either(),
                                 lambda: d.lists(d.pick(1), 3, 2)])
def test_impossible_draws_are_refused(bad: Any) -> None:
    with pytest.raises(ValueError):
        bad()


class Recorder(OpsMachine):
    """Records what the engine asked of it; fails once ``tick(3)`` follows a ``push``."""

    log: list[list[tuple[str, object]]] = []
    torn_down = 0

    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []
        Recorder.log.append(self.calls)

    def teardown(self) -> None:
        Recorder.torn_down += 1

    @initialize(size=d.integers(1, 3))
    def start(self, size: int) -> None:
        self.calls.append(("start", size))

    @issues("push")
    @rule(value=d.pick("a", "b", "c"))
    def push(self, value: str) -> None:
        self.calls.append(("push", value))

    @issues("tick")
    @rule(count=d.integers(0, 7))
    def tick(self, count: int) -> None:
        self.calls.append(("tick", count))
        if count == 3 and any(name == "push" for name, _ in self.calls):
            raise AssertionError("tick(3) after a push")


def _fresh() -> None:
    Recorder.log = []
    Recorder.torn_down = 0


def test_rules_are_found_in_class_order_with_their_operations() -> None:
    initial, steps = rules_of(Recorder)
    assert [spec.name for spec in initial] == ["start"]
    assert [(spec.name, spec.ops) for spec in steps] == [("push", ("push",)), ("tick", ("tick",))]


def test_a_machine_without_rules_is_refused() -> None:
    with pytest.raises(ValueError, match="no rule"):
        rules_of(OpsMachine)


def test_a_failure_is_shrunk_to_the_steps_that_cause_it() -> None:
    _fresh()
    with pytest.raises(AssertionError, match="tick.3. after a push"):
        run_scenarios(Recorder, max_examples=200, run_seed=1)
    last = Recorder.log[-1]  # Hypothesis replays the shrunk scenario last
    assert last == [("start", 1), ("push", "a"), ("tick", 3)]
    assert Recorder.torn_down == len(Recorder.log)  # every scenario, failing or not, was torn down


def test_scenarios_are_long_and_a_fixed_seed_repeats_them() -> None:
    _fresh()
    safe = with_excluded(Recorder, {"tick"})
    run_scenarios(safe, max_examples=30, run_seed=5, shrink=False)
    first = [list(calls) for calls in Recorder.log]
    assert len(first) == 30
    assert all(name != "tick" for calls in first for name, _ in calls)  # a left-out operation is never drawn
    assert max(len(calls) for calls in first) > 20 and all(len(calls) <= MAX_STEPS + 1 for calls in first)
    _fresh()
    run_scenarios(safe, max_examples=30, run_seed=5, shrink=False)
    assert Recorder.log == first


def test_a_scenario_ends_when_every_operation_is_left_out() -> None:
    _fresh()
    run_scenarios(with_excluded(Recorder, {"push", "tick"}), max_examples=5, run_seed=2, shrink=False)
    assert Recorder.log and all(calls == [calls[0]] and calls[0][0] == "start" for calls in Recorder.log)


def test_scenarios_begun_after_the_deadline_take_no_step() -> None:
    import time

    _fresh()
    run_scenarios(with_excluded(Recorder, {"tick"}), max_examples=30, run_seed=5, shrink=False,
                  deadline=time.monotonic() - 1)
    assert Recorder.log == []  # no scenario made a machine
    _fresh()
    run_scenarios(with_excluded(Recorder, {"tick"}), max_examples=30, run_seed=5, shrink=False,
                  deadline=time.monotonic() + 60)
    assert len(Recorder.log) == 30


def test_a_failure_found_before_the_deadline_is_still_shrunk_after_it() -> None:
    import time

    class Slow(Recorder):
        def __init__(self) -> None:
            super().__init__()
            time.sleep(0.002)

    _fresh()
    with pytest.raises(AssertionError, match="tick.3. after a push"):
        run_scenarios(Slow, max_examples=200, run_seed=1, deadline=time.monotonic() + 0.5)
    assert Recorder.log[-1] == [("start", 1), ("push", "a"), ("tick", 3)]
