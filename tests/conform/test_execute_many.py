"""``execute_many``: a batch of commands answers as the same commands one by one, and a failure says where it stopped."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from brokerspec.conform.protocol import FailureKind, SutFailure, batch_stop
from brokerspec.conform.sut import InProcessSut, SubprocessSut, SutSubject, execute_many
from brokerspec.spec import Outcome, get_profile
from brokerspec.spec.addressing import CreateAddress, CreateQueue, Lookup, RoutingType
from brokerspec.spec.duplicates import Begin

SEED = get_profile("seed")
SCRIPT = (CreateAddress("a1", frozenset(RoutingType)), CreateQueue("a1", "q1", RoutingType.ANYCAST), Lookup("q1"),
          Lookup("q2"), CreateAddress("a1", frozenset(RoutingType)))


def serve() -> SubprocessSut:
    return SubprocessSut([sys.executable, "-m", "brokerspec.conform.serve", "--layer", "impl"], timeout=5.0)


def one_by_one(sut: InProcessSut | SubprocessSut) -> list[Outcome]:
    sut.reset("addressing", SEED)
    return [sut.execute(command) for command in SCRIPT]


def test_a_batch_answers_as_the_commands_one_by_one_in_process_and_over_the_pipe() -> None:
    in_process = InProcessSut("impl")
    expected = one_by_one(in_process)
    assert len(set(map(type, expected))) > 2, "the script reaches several kinds of outcome"
    in_process.reset("addressing", SEED)
    assert in_process.execute_many(SCRIPT) == expected
    sut = serve()
    try:
        sut.hello(SEED, ("addressing",))
        sut.reset("addressing", SEED)
        assert sut.execute_many(SCRIPT) == expected
        sut.reset("addressing", SEED)
        assert SutSubject(sut, "addressing", SEED).execute_many(SCRIPT) == expected
    finally:
        sut.close()


def test_a_failed_batch_names_the_command_and_keeps_the_outcomes_before_it() -> None:
    """A duplicates command sent to an addressing broker cannot be decoded by the server: an error reply."""
    sut = serve()
    try:
        sut.hello(SEED, ("addressing",))
        sut.reset("addressing", SEED)
        with pytest.raises(SutFailure) as raised:
            sut.execute_many([*SCRIPT[:2], Begin("s1"), Lookup("q1")])
        assert raised.value.kind is FailureKind.ERROR_REPLY
        assert raised.value.request == "op 3 (begin)"
        stop = batch_stop(raised.value)
        assert stop is not None and stop.index == 2
        sut.reset("addressing", SEED)
        assert list(stop.completed) == [sut.execute(command) for command in SCRIPT[:2]]
    finally:
        sut.close()


class Exploding:
    """A subject whose third command raises, as a buggy in-process broker may."""

    def __init__(self) -> None:
        self.inner = InProcessSut("impl")
        self.inner.reset("addressing", SEED)
        self.count = 0

    def execute(self, command: Any) -> Outcome:
        self.count += 1
        if self.count == 3:
            raise RuntimeError("boom")
        return self.inner.execute(command)


def test_a_sut_without_execute_many_runs_the_batch_one_by_one_and_marks_the_exception() -> None:
    subject = Exploding()
    with pytest.raises(RuntimeError, match="boom") as raised:
        execute_many(subject, SCRIPT)  # type: ignore[arg-type]
    stop = batch_stop(raised.value)
    assert stop is not None and stop.index == 2 and len(stop.completed) == 2
    assert subject.count == 3, "nothing after the failing command was executed"
    assert batch_stop(RuntimeError("elsewhere")) is None
