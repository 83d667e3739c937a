"""Deferred comparison: a subject that takes batches is asked a window of commands at once.

The spec alone decides what is drawn next, so a SUT that pipelines its requests
(``execute_many``) need not answer each step before the next is drawn. The
lockstep then queues the commands and compares the replies in order when the
window fills and at the end of the scenario; whatever it finds must be what the
step-by-step driver finds: the same step, script and observed outcomes
(``brokerspec.check.lockstep``), and the fuzz guard's drop rule (the first
``error`` reply to an operation the SUT never answered drops it,
``docs/sut-protocol.md``) must hold inside a batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis.errors import UnsatisfiedAssumption

from brokerspec.check.domains import ADDRESSING, BALANCING
from brokerspec.check.lockstep import Divergence, DivergenceError, Lockstep, SubjectFactory
from brokerspec.conform.fuzz import FirstFailure, GuardedSubject, fuzz
from brokerspec.conform.protocol import FailureKind, SutFailure, mark_batch_stop
from brokerspec.conform.sut import InProcessSut
from brokerspec.impl import FastBroker
from brokerspec.spec import Outcome, Profile, get_profile
from brokerspec.spec.addressing import CreateAddress, CreateQueue, Lookup, RoutingType, Send

SEED = get_profile("seed")
SCRIPT: tuple[Any, ...] = (
    CreateAddress("a1", frozenset(RoutingType)),
    CreateQueue("a1", "q1", RoutingType.ANYCAST),
    Lookup("q1"),
    Send("q1", None),
    Lookup("a1::q1"),
    CreateQueue("a1", "q2", RoutingType.MULTICAST),
    Lookup("q2"),
    Send("a1::q2", None),
    Lookup("nope"),
    Lookup("q1"),
)


class Batching:
    """The fast broker as a SUT would be seen: outcomes only, with ``execute_many``; it answers step ``wrong``
    with the outcome of a lookup of another name (a planted disagreement) and cannot answer step ``fails``."""

    batches: list[int] = []

    def __init__(self, profile: Profile, wrong: int = 0, fails: int = 0, error: Exception | None = None) -> None:
        self.broker = FastBroker(profile)
        self.wrong, self.fails, self.error = wrong, fails, error
        self.steps = 0

    def execute(self, command: Any) -> Outcome:
        self.steps += 1
        if self.steps == self.fails:
            raise self.error or SutFailure(FailureKind.CRASHED, f"op ({command.op})", "the SUT exited")
        if self.steps == self.wrong:
            return self.broker.execute(Lookup("a1::nope"))
        outcome: Outcome = self.broker.execute(command)
        return outcome

    def execute_many(self, commands: Sequence[Any]) -> list[Outcome]:
        type(self).batches.append(len(commands))
        outcomes: list[Outcome] = []
        for index, command in enumerate(commands):
            try:
                outcomes.append(self.execute(command))
            except Exception as error:
                mark_batch_stop(error, index, outcomes)
                raise
        return outcomes


def factory(**planted: Any) -> dict[str, SubjectFactory]:
    return {"sut": lambda profile: Batching(profile, **planted)}


def play(window: int, **planted: Any) -> Divergence:
    """Play SCRIPT with a planted subject; the divergence found (at a step or when the scenario ends)."""
    lockstep = Lockstep(SEED, factory(**planted), ADDRESSING, window=window)
    with pytest.raises(DivergenceError) as found:
        for command in SCRIPT:
            lockstep.step(command)
        lockstep.finish()
    return found.value.divergence


@pytest.mark.parametrize("wrong", [1, 4, 5, 9, 10])
@pytest.mark.parametrize("window", [2, 4, 32])
def test_a_deferred_disagreement_is_the_step_by_step_one(wrong: int, window: int) -> None:
    Batching.batches = []
    deferred = play(window, wrong=wrong)
    assert Batching.batches and max(Batching.batches) <= window, "the commands went in batches of the window"
    stepwise = play(1, wrong=wrong)
    assert deferred.step == wrong and deferred.what == "the outcomes differ"
    assert deferred == stepwise
    assert deferred.commands == SCRIPT[:wrong] and len(deferred.observed) == wrong
    assert deferred.explain() == stepwise.explain()


def test_nothing_is_asked_before_the_window_fills_and_the_rest_at_the_end() -> None:
    Batching.batches = []
    lockstep = Lockstep(SEED, factory(), ADDRESSING, window=4)
    for command in SCRIPT:
        lockstep.step(command)
    assert Batching.batches == [4, 4] and len(lockstep.pending) == 2
    lockstep.finish()
    assert Batching.batches == [4, 4, 2] and not lockstep.pending
    assert lockstep.observed["sut"] == lockstep.outcomes


def test_a_subject_that_fails_inside_a_batch_fails_at_that_step() -> None:
    lockstep = Lockstep(SEED, factory(fails=6), ADDRESSING, window=32)
    with pytest.raises(SutFailure, match="the SUT exited"):
        for command in SCRIPT:
            lockstep.step(command)
        lockstep.finish()
    assert lockstep.observed["sut"] == lockstep.outcomes[:5], "the five replies before it were compared"


def test_a_disagreement_before_a_failure_in_the_same_batch_is_reported_not_the_failure() -> None:
    divergence = play(32, wrong=3, fails=6)
    assert divergence.step == 3 and divergence == play(1, wrong=3, fails=6)


def test_an_exception_inside_a_batch_is_a_finding_at_its_step_as_step_by_step() -> None:
    deferred = play(8, fails=7, error=KeyError("q9"))
    assert deferred.step == 7 and deferred.what == "it raised an exception"
    assert deferred == play(1, fails=7, error=KeyError("q9"))


def test_only_a_lone_subject_that_takes_batches_and_shows_no_state_is_deferred() -> None:
    assert Lockstep(SEED, factory(), ADDRESSING, window=8).window == 8
    assert Lockstep(SEED, {"sut": Batching, "other": Batching}, ADDRESSING, window=8).window == 1
    assert Lockstep(SEED, {"impl": FastBroker}, ADDRESSING, window=8).window == 1
    with pytest.raises(ValueError, match="at least one command"):
        Lockstep(SEED, factory(), ADDRESSING, window=0)


def test_permissive_judging_follows_the_replies_in_order() -> None:
    from brokerspec.impl.balancing import FastBalancingBroker
    from brokerspec.spec.balancing import AddNode, Attach, CreateQueue as BalancingQueue, Send as BalancingSend

    class Balancer(FastBalancingBroker):
        def execute_many(self, commands: Sequence[Any]) -> list[Outcome]:
            return [self.execute(c) for c in commands]

    Balancer.snapshot = None  # type: ignore[assignment,method-assign]  # a SUT shows outcomes only
    profile = get_profile("artemis-latest")
    script = [AddNode("n2"), BalancingQueue("n1", "a1", "q1", RoutingType.ANYCAST),
              BalancingQueue("n2", "a1", "q1", RoutingType.ANYCAST), Attach("c1", "n2", ("n2", "q1")[1])]
    script += [BalancingSend("n1", "a1") for _ in range(6)]
    observed = {}
    for window in (1, 4):
        lockstep = Lockstep(profile, {"sut": Balancer}, BALANCING, permissive=True, window=window)
        for command in script:
            lockstep.step(command)
        lockstep.finish()
        observed[window] = lockstep.observed["sut"]
        assert lockstep.window == window
    assert observed[1] == observed[4] and len(observed[4]) == len(script)


# --- the fuzz guard inside a batch ----------------------------------------------------------------------------------


class Pipelining(InProcessSut):
    """brokerspec's own layer behind ``execute_many``, announcing pipelining; ``refused`` operations get an
    ``error`` reply, and every batch's size is kept."""

    in_flight = 8

    def __init__(self, layer: str, *refused: str) -> None:
        super().__init__(layer)
        self.refused = set(refused)
        self.batches: list[int] = []
        self.singles = 0

    def execute(self, command: Any) -> Outcome:
        self.singles += 1
        return self._one(command)

    def _one(self, command: Any) -> Outcome:
        if command.op in self.refused:
            raise SutFailure(FailureKind.ERROR_REPLY, f"op ({command.op})", f"{command.op} is not supported")
        return super().execute(command)

    def execute_many(self, commands: Sequence[Any]) -> list[Outcome]:
        self.batches.append(len(commands))
        outcomes: list[Outcome] = []
        for index, command in enumerate(commands):
            try:
                outcomes.append(self._one(command))
            except Exception as error:
                mark_batch_stop(error, index, outcomes)
                raise
        return outcomes


def guarded(sut: Pipelining) -> tuple[FirstFailure, Lockstep]:
    guard = FirstFailure(sut)
    sut.hello(SEED, ("addressing",))
    return guard, Lockstep(SEED, {"sut": lambda profile: GuardedSubject(guard, "addressing", profile)},
                           ADDRESSING, window=32)


def test_an_error_reply_inside_a_batch_to_an_operation_never_answered_drops_it() -> None:
    guard, lockstep = guarded(Pipelining("impl", "send"))
    with pytest.raises(UnsatisfiedAssumption):
        for command in SCRIPT:
            lockstep.step(command)
        lockstep.finish()
    assert guard.failure is None and guard.excluded == {"send"} and set(guard.dropped) == {"send"}
    assert guard.script == list(SCRIPT[:4]) and guard.judged == 3 and guard.answered == {"create_address",
                                                                                           "create_queue", "lookup"}


def test_an_error_reply_inside_a_batch_to_an_operation_answered_before_in_it_is_kept_as_the_failure() -> None:
    class SecondLookupRefused(Pipelining):
        def _one(self, command: Any) -> Outcome:
            if command.op == "lookup" and "lookup" not in self.refused:
                self.refused.add("lookup")  # from the next lookup on
                return InProcessSut.execute(self, command)
            return super()._one(command)

    guard, lockstep = guarded(SecondLookupRefused("impl"))
    with pytest.raises(SutFailure):
        for command in SCRIPT:
            lockstep.step(command)
        lockstep.finish()
    assert guard.failure is not None and guard.failure.kind is FailureKind.ERROR_REPLY and not guard.excluded
    assert guard.script == list(SCRIPT[:5]), "the script ends at the second lookup, the failing step"


def test_a_failure_after_a_diverging_reply_is_not_kept() -> None:
    class Wrong(Pipelining):
        def _one(self, command: Any) -> Outcome:
            if command == SCRIPT[2]:
                return super()._one(Lookup("a1::nope"))
            return super()._one(command)

    sut = Wrong("impl", "send")
    guard, lockstep = guarded(sut)
    with pytest.raises(DivergenceError) as found:
        for command in SCRIPT:
            lockstep.step(command)
        lockstep.finish()
    assert found.value.divergence.step == 3
    assert guard.failure is None and not guard.excluded, "step by step the SUT never saw the refused send"


def test_fuzz_defers_for_a_pipelining_sut_and_its_finding_replays_step_by_step(tmp_path: Path) -> None:
    """Both modes find the planted bug. The shrunk scripts may differ (a deferred failure is seen after more
    draws, so Hypothesis's shrinker takes another path), but each replays step by step to itself."""
    name = "planted:delete-removes-same-named-twin"
    for in_flight in (1, 8):
        sut = Pipelining(name)
        sut.in_flight = in_flight
        report = fuzz(sut, SEED, ("addressing",), 0.0, tmp_path / str(in_flight), run_seed=1)
        (divergence,) = [r.divergence for r in report.divergences]
        assert divergence is not None and divergence.what == "the outcomes differ"
        if in_flight > 1:
            assert sut.batches and max(sut.batches) <= 32, "the fuzzer sent batches"
        else:
            assert not sut.batches and sut.singles > 0, "a SUT without pipelining is asked step by step"
        _, again = guarded(Pipelining(name))
        again.window = 1
        with pytest.raises(DivergenceError) as replayed:
            for command in divergence.commands:
                again.step(command)
        assert replayed.value.divergence == divergence
