"""A SUT that crashes, hangs, writes garbage or the wrong version gets a clear verdict, and the run goes on."""

from __future__ import annotations

import os
import shlex
import sys
import threading
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
    ("nest", FailureKind.GARBAGE, "nested more than 64 levels"),
    ("bigint", FailureKind.GARBAGE, "beyond 64 bits"),
    ("bad-utf8", FailureKind.GARBAGE, "not UTF-8"),
    ("dup-key", FailureKind.GARBAGE, "the key 'seq' appears twice"),
    ("float-seq", FailureKind.BAD_REPLY, "seq 2.0"),
    ("flood", FailureKind.GARBAGE, "a reply line longer than 16 MiB"),
    ("partial", FailureKind.TIMEOUT, "no reply within 1 s"),
    ("fork", FailureKind.TIMEOUT, "no reply within 1 s"),
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
    assert len(first.message) < 1000, "a verdict quotes the SUT, it does not copy it"
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


# --- hostile SUTs ------------------------------------------------------------------------------


def live_members(group: int) -> list[int]:
    """The processes of process group ``group`` that are not yet dead (zombies count as dead)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # it ended while we looked
        state, _parent, pgrp = stat.rpartition(")")[2].split()[:3]
        if int(pgrp) == group and state != "Z":
            found.append(int(entry.name))
    return found


def members_after_a_moment(group: int) -> list[int]:
    """``live_members`` once SIGKILL has had a few seconds to take effect, or as soon as there are none."""
    deadline = time.monotonic() + 5
    while (left := live_members(group)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def test_a_sut_whose_child_keeps_its_output_open_times_out_promptly_and_leaves_no_process() -> None:
    sut = broken("fork")
    started = time.monotonic()
    try:
        sut.reset("addressing", SEED)
        group = sut.pid
        assert group is not None and os.getpgid(group) == group, "the SUT leads its own process group"
        sut.execute(SCRIPT[0])
        with pytest.raises(SutFailure) as raised:
            sut.execute(SCRIPT[1])
    finally:
        sut.close()
    assert raised.value.kind is FailureKind.TIMEOUT
    assert time.monotonic() - started < 15, "killed after the timeout, not left hanging on its pipe"
    assert members_after_a_moment(group) == [], "the grandchild is stopped with the SUT"


def test_a_shell_that_leaves_a_background_child_is_stopped_with_it(tmp_path: Path) -> None:
    pid_file = tmp_path / "sut.pid"
    script = f"echo $$ > {shlex.quote(str(pid_file))}; sleep 3601 & exec sleep 3602"
    sut = SubprocessSut(["sh", "-c", script], timeout=0.5)
    started = time.monotonic()
    with pytest.raises(SutFailure) as raised:
        sut.hello(SEED, ("addressing",))
    sut.close()
    assert raised.value.kind is FailureKind.TIMEOUT and raised.value.request == "hello"
    assert time.monotonic() - started < 15
    group = int(pid_file.read_text())
    assert members_after_a_moment(group) == [], "neither sleep outlives the SUT"


def reader_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name.startswith("sut-stdout-")]


def test_a_timeout_on_half_a_line_leaks_no_traceback_from_the_reader(monkeypatch: pytest.MonkeyPatch,
                                                                      capfd: pytest.CaptureFixture[str]) -> None:
    raised_in_threads: list[threading.ExceptHookArgs] = []
    monkeypatch.setattr(threading, "excepthook", raised_in_threads.append)
    before = set(reader_threads())
    sut = SubprocessSut([sys.executable, str(BROKEN), "partial", "1"])
    kinds = []
    try:
        for _ in range(16):  # the old race was lost about one time in three
            sut.timeout = 10.0  # time to start and greet a new process
            sut.reset("addressing", SEED)
            sut.timeout = 0.3
            with pytest.raises(SutFailure) as raised:
                sut.execute(SCRIPT[0])
            kinds.append(raised.value.kind)
    finally:
        sut.close()
    for thread in set(reader_threads()) - before:
        thread.join(timeout=5)
        assert not thread.is_alive(), "the reader ends once the SUT is gone"
    assert kinds == [FailureKind.TIMEOUT] * 16
    assert raised_in_threads == []
    assert "Traceback" not in capfd.readouterr().err


def test_a_garbage_reply_stops_the_process_and_the_next_case_starts_a_new_one() -> None:
    sut = broken("bad-utf8")
    try:
        report = run_conformance(sut, CASES, SEED)
    finally:
        sut.close()
    assert [failure_kind(r) for r in report.results] == [FailureKind.GARBAGE] * 3
    assert sut.starts == 3


def test_sut_text_is_quoted_as_plain_printable_text() -> None:
    sut = broken("control")
    try:
        report = run_conformance(sut, CASES[:1], SEED)
    finally:
        sut.close()
    message = report.results[0].message
    assert failure_kind(report.results[0]) is FailureKind.ERROR_REPLY
    assert "[/] [bold red]x[/] ]]> <&>" in message, "markup and XML specials are left as they are"
    assert not any(ord(char) < 32 or ord(char) == 127 for char in message), repr(message)
    assert "\\x00" in message and "\\x1b[31mred" in message, "control characters are shown, not sent"
