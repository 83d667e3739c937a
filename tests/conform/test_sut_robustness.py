"""A SUT that crashes, hangs, writes garbage or the wrong version gets a clear verdict, and the run goes on."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from brokerspec.conform.catalogue import Case
from brokerspec.conform.protocol import FailureKind, SutFailure
from brokerspec.conform.runner import EXIT_CONFORMANCE_FAILURE, EXIT_SUT_FAILURE, Verdict, failure_kind, run_conformance
from brokerspec.conform.sut import SubprocessSut
from brokerspec.spec import get_profile
from brokerspec.spec.addressing import CreateAddress, CreateQueue, Lookup, RoutingType

BROKEN = Path(__file__).with_name("broken_sut.py")
SEED = get_profile("seed")
SCRIPT = (CreateAddress("a1", frozenset(RoutingType)), CreateQueue("a1", "q1", RoutingType.ANYCAST), Lookup("q1"))
CASES = [Case(f"addressing/robustness-{n}", "a small script", SCRIPT, ("ADDR-LOOKUP-BARE-ONE",), "test")
         for n in range(3)]


def broken(mode: str, timeout: float = 1.0) -> SubprocessSut:
    return SubprocessSut([sys.executable, str(BROKEN), mode], timeout=timeout)


@pytest.mark.parametrize(("mode", "kind", "says"), [
    ("crash", FailureKind.CRASHED, "exit code 7"),
    ("hang", FailureKind.TIMEOUT, "no reply within 1 s"),
    ("close", FailureKind.CRASHED, "output closed"),
    ("garbage", FailureKind.GARBAGE, "this is not json"),
    ("not-object", FailureKind.GARBAGE, "not a JSON object"),
    ("version", FailureKind.WRONG_VERSION, "version 99"),
    ("error", FailureKind.ERROR_REPLY, "operation not supported here"),
    ("seq", FailureKind.BAD_REPLY, "seq 999"),
    ("outcome", FailureKind.BAD_REPLY, "outcome.type"),
])
def test_each_misbehaviour_gets_its_verdict_naming_the_request(mode: str, kind: FailureKind, says: str) -> None:
    sut = broken(mode)
    started = time.monotonic()
    try:
        report = run_conformance(sut, CASES, SEED)
    finally:
        sut.close()
    assert [r.verdict for r in report.results] == [Verdict.SUT_FAILURE] * 3, "every case ran, none hung the run"
    first = report.results[0]
    assert failure_kind(first) is kind
    assert "op 2 (create_queue)" in first.message and says in first.message, first.message
    assert first.step == 2
    assert report.exit_code() == EXIT_SUT_FAILURE
    assert time.monotonic() - started < 60, "three cases, each bounded by the timeout"


def test_the_crash_verdict_quotes_the_last_stderr_line() -> None:
    sut = broken("crash")
    try:
        report = run_conformance(sut, CASES[:1], SEED)
    finally:
        sut.close()
    assert "giving up on purpose" in report.results[0].message


def test_a_process_is_started_again_after_each_failure() -> None:
    sut = broken("crash")
    try:
        run_conformance(sut, CASES, SEED)
    finally:
        sut.close()
    assert sut.starts == 3


def test_a_wrong_outcome_is_a_conformance_failure_not_a_sut_failure() -> None:
    sut = broken("wrong")
    try:
        report = run_conformance(sut, CASES, SEED)
    finally:
        sut.close()
    assert [r.verdict for r in report.results] == [Verdict.FAILED] * 3
    assert report.results[0].rule == "ADDR-QUEUE-CREATE" and report.results[0].step == 2
    assert "surely-not-this" in report.results[0].message
    assert report.exit_code() == EXIT_CONFORMANCE_FAILURE


def test_after_too_many_failures_in_a_row_the_rest_is_not_run_and_the_report_is_kept() -> None:
    sut = broken("hang", timeout=0.5)
    try:
        report = run_conformance(sut, CASES, SEED, max_sut_failures=2)
    finally:
        sut.close()
    assert [r.verdict for r in report.results] == [Verdict.SUT_FAILURE, Verdict.SUT_FAILURE, Verdict.NOT_RUN]
    assert "2 SUT failures in a row" in report.stopped
    assert report.to_json()["totals"]["not-run"] == 1


def test_a_handshake_that_hangs_stops_the_run_with_every_case_not_run() -> None:
    sut = broken("hello-hang", timeout=0.3)
    try:
        report = run_conformance(sut, CASES, SEED)
    finally:
        sut.close()
    assert report.hello is None and "handshake" in report.stopped and "timeout on hello" in report.stopped
    assert all(r.verdict is Verdict.NOT_RUN for r in report.results)
    assert report.exit_code() == EXIT_SUT_FAILURE


def test_a_program_that_cannot_start_is_a_crash_on_hello() -> None:
    sut = SubprocessSut(["/nonexistent/sut-program"], timeout=1)
    with pytest.raises(SutFailure) as raised:
        sut.hello(SEED, ("addressing",))
    assert raised.value.kind is FailureKind.CRASHED and "cannot start" in str(raised.value)


def test_execute_after_a_failure_fails_at_once() -> None:
    sut = broken("garbage")
    try:
        sut.reset("addressing", SEED)
        sut.execute(SCRIPT[0])
        with pytest.raises(SutFailure):
            sut.execute(SCRIPT[1])
        with pytest.raises(SutFailure) as raised:
            sut.execute(SCRIPT[2])
        assert raised.value.kind is FailureKind.CRASHED and "not running" in str(raised.value)
    finally:
        sut.close()
