"""``snapshot_like(seen)``: the snapshot with ``seen``'s equal parts shared, never a different verdict.

The lockstep check hands each balancing broker the spec's state it is about to
compare with (``Lockstep.step``), so a state that agrees costs an identity test.
Each test here can fail: the snapshot shared with any state must equal the one
built from scratch, share only parts that are equal, and a broker whose state
is wrong in one nested field must still be caught, with that field named.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from brokerspec.check.domains import BALANCING
from brokerspec.check.lockstep import DivergenceError, Lockstep
from brokerspec.check.runner import run_machine
from brokerspec.impl.balancing import FastBalancingBroker
from brokerspec.impl.balancing.records import Waiting
from brokerspec.reference.balancing.broker import ReferenceBalancingBroker
from brokerspec.spec import Profile, get_profile
from brokerspec.spec.addressing import RoutingType
from brokerspec.spec.balancing import (
    AddNode,
    Attach,
    BalancingState,
    Configure,
    CreateQueue,
    LbType,
    Send,
    initial_state,
)
from depth import scaled

Broker = FastBalancingBroker | ReferenceBalancingBroker


def _shared_parts_are_equal(made: Any, seen: Any, where: str) -> None:
    """Every part of ``made`` that *is* a part of ``seen`` at the same place; such a part must be equal anyway,
    and the walk checks each dataclass and map of ``made`` field by field."""
    if dataclasses.is_dataclass(made) and not isinstance(made, type):
        for f in dataclasses.fields(made):
            _shared_parts_are_equal(getattr(made, f.name), getattr(seen, f.name, None), f"{where}.{f.name}")
    elif hasattr(made, "items") and hasattr(seen, "get"):
        for key, value in made.items():
            _shared_parts_are_equal(value, seen.get(key), f"{where}[{key!r}]")
    elif isinstance(made, tuple) and isinstance(seen, tuple) and len(made) == len(seen):
        for index, (value, old) in enumerate(zip(made, seen)):
            _shared_parts_are_equal(value, old, f"{where}[{index}]")
    if made is seen:
        assert made == seen, where


class Doubting:
    """A broker whose ``snapshot_like`` checks itself: shared with the spec's state, with the state of the step
    before, with a state of another cluster and with nothing, the snapshot equals the one built from scratch."""

    other: BalancingState | None = None

    def __init__(self, inner: Broker) -> None:
        self.inner = inner
        self.before: BalancingState | None = None
        self.shared = 0

    def execute(self, command: Any) -> Any:
        return self.inner.execute(command)

    def snapshot(self) -> BalancingState:
        return self.inner.snapshot()

    def check_valid(self) -> None:
        check = getattr(self.inner, "check_valid", None)
        if check is not None:
            check()

    def snapshot_like(self, seen: BalancingState) -> BalancingState:
        plain = self.inner.snapshot()
        for hint in (seen, self.before, Doubting.other):
            if hint is None:
                continue
            made = self.inner.snapshot_like(hint)
            assert made == plain and type(made) is type(plain)
            _shared_parts_are_equal(made, hint, "state")
            self.shared += made is hint
        self.before = seen
        return self.inner.snapshot_like(seen)


def _other_cluster(profile: Profile) -> BalancingState:
    state = initial_state(profile)
    for command in (AddNode("n2"), CreateQueue("n1", "a1", "q9", RoutingType.MULTICAST, "red"),
                    Attach("c1", "n1", "a1", "red"), Send("n1", "a1", color="red")):
        state, _ = BALANCING.apply(state, command)
    return state


@pytest.mark.parametrize("broker", [FastBalancingBroker, ReferenceBalancingBroker], ids=lambda b: b.__name__)
def test_a_snapshot_shared_with_any_state_equals_one_built_from_scratch(broker: Callable[[Profile], Broker]) -> None:
    profile = get_profile("artemis-latest")
    Doubting.other = _other_cluster(profile)
    made: list[Doubting] = []

    def factory(p: Profile) -> Doubting:
        made.append(Doubting(broker(p)))
        return made[-1]

    assert run_machine(profile, {"doubting": factory}, max_examples=scaled(40, 400), run_seed=5,
                       domain=BALANCING) is None
    assert sum(d.shared for d in made) > 0, "no snapshot was shared with the spec's state: nothing was checked"


class _CountsOneDeliveryMore(FastBalancingBroker):
    """A fast broker that reports one delivery more for the first waiting message of each queue."""

    def snapshot_like(self, seen: BalancingState) -> BalancingState:
        saved = {key: list(queue.pending) for key, queue in self._queues.items()}
        for queue in self._queues.values():
            if queue.pending:
                first: Waiting = queue.pending[0]
                queue.pending[0] = first._replace(deliveries=first.deliveries + 1)
        try:
            return super().snapshot_like(seen)
        finally:
            for key, pending in saved.items():
                self._queues[key].pending = pending


def test_a_state_wrong_in_one_nested_field_is_caught_with_that_field_named() -> None:
    profile = get_profile("artemis-latest")
    lockstep = Lockstep(profile, {"wrong": _CountsOneDeliveryMore}, BALANCING)
    with pytest.raises(DivergenceError) as caught:
        for command in (Configure("a1", LbType.ON_DEMAND, -1), CreateQueue("n1", "a1", "a1", RoutingType.ANYCAST),
                        Send("n1", "a1")):
            lockstep.step(command)
    divergence = caught.value.divergence
    assert (divergence.step, divergence.what) == (3, "the states differ after the step")
    assert "deliveries" in "\n".join(divergence.details)


class _ShowsAnotherClock(FastBalancingBroker):
    """A fast broker whose own ``snapshot`` (a state view of its own) is one tick ahead."""

    def snapshot(self) -> BalancingState:
        return dataclasses.replace(super().snapshot(), clock=self._clock + 1)


class _ReferenceShowsAnotherClock(ReferenceBalancingBroker):
    def snapshot(self) -> BalancingState:
        return dataclasses.replace(super().snapshot(), clock=self.clock.now + 1)


@pytest.mark.parametrize("broker", [_ShowsAnotherClock, _ReferenceShowsAnotherClock], ids=lambda b: b.__name__)
def test_a_subclass_that_shows_its_state_its_own_way_is_judged_by_that_view(broker: Callable[[Profile], Broker]
                                                                            ) -> None:
    lockstep = Lockstep(get_profile("artemis-latest"), {"own view": broker}, BALANCING)
    with pytest.raises(DivergenceError) as caught:
        lockstep.step(Configure("a1", LbType.ON_DEMAND, -1))
    assert caught.value.divergence.what == "the states differ after the step"
    assert "clock" in "\n".join(caught.value.divergence.details)
