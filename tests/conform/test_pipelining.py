"""Pipelining over the SUT protocol: announced in the hello, requests written ahead, replies checked in order.

The protocol rules are docs/sut-protocol.md's (section "Pipelining"); the fake SUT is pipeline_sut.py.
"""

from __future__ import annotations

import io
import json
import sys
import time
from importlib.resources import files
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped, unused-ignore]

from brokerspec.conform.protocol import FailureKind, SutFailure, batch_stop, read_hello
from brokerspec.conform.serve import serve
from brokerspec.conform.sut import InProcessSut, SubprocessSut
from brokerspec.spec import Outcome, get_profile
from brokerspec.spec.addressing import CreateAddress, CreateQueue, Lookup, RoutingType

from node_example import NODE_SUT, node_or_skip

FAKE = Path(__file__).with_name("pipeline_sut.py")
SEED = get_profile("seed")
SCRIPT = tuple(CreateAddress(f"a{n % 4}", frozenset(RoutingType)) if n % 3 == 0
               else CreateQueue(f"a{n % 4}", f"q{n % 5}", RoutingType.ANYCAST) if n % 3 == 1 else Lookup(f"q{n % 5}")
               for n in range(20))


def fake(mode: str, k: int = 3, timeout: float = 5.0, max_in_flight: int = 256) -> SubprocessSut:
    """The fake SUT greeted and reset; ``timeout`` holds from then on (the start-up gets 15 s, on a busy machine)."""
    sut = SubprocessSut([sys.executable, str(FAKE), mode, str(k)], timeout=5.0, max_in_flight=max_in_flight)
    sut.hello(SEED, ("addressing",))
    sut.reset("addressing", SEED)
    sut.timeout = timeout
    return sut


def expected(script: tuple[object, ...] = SCRIPT) -> list[Outcome]:
    sut = InProcessSut("impl")
    sut.reset("addressing", SEED)
    return [sut.execute(command) for command in script]


def test_a_sut_that_does_not_announce_pipelining_gets_one_request_at_a_time() -> None:
    sut = fake("one-at-a-time")
    try:
        assert sut.in_flight == 1
        assert sut.execute_many(SCRIPT) == expected()
        sut.reset("addressing", SEED)
        assert sut.execute_many(SCRIPT) == expected()
        assert sut.starts == 1, sut.stderr_tail()
    finally:
        sut.close()


def test_the_one_at_a_time_fake_does_catch_a_client_that_writes_ahead() -> None:
    """The check above can fail: the same fake, told to expect one request at a time, refuses a batch written ahead."""
    sut = fake("one-at-a-time")
    sut.in_flight = 8  # as if the SUT had announced it
    try:
        with pytest.raises(SutFailure) as raised:
            sut.execute_many(SCRIPT)
        assert raised.value.kind is FailureKind.CRASHED and "exit code 9" in raised.value.message
    finally:
        sut.close()


@pytest.mark.parametrize("window", [2, 3, 8])
def test_a_pipelining_sut_gets_requests_ahead_but_never_more_than_it_announced(window: int) -> None:
    sut = fake("window", window)
    try:
        assert sut.in_flight == window
        assert sut.execute_many(SCRIPT) == expected()
        assert sut.starts == 1, sut.stderr_tail()
    finally:
        sut.close()
    assert "nothing was pipelined" not in sut.stderr_tail()
    assert "in flight" not in sut.stderr_tail()


def test_the_client_caps_what_it_writes_ahead() -> None:
    sut = fake("window", 8, max_in_flight=1)
    try:
        assert sut.in_flight == 1
        assert sut.execute_many(SCRIPT) == expected()
    finally:
        sut.close()
    assert "nothing was pipelined" in sut.stderr_tail(), "the fake sees whether requests came ahead"


def test_a_reply_out_of_order_is_a_bad_reply_naming_the_request_and_the_batch_index() -> None:
    sut = fake("reorder", 4)
    try:
        with pytest.raises(SutFailure) as raised:
            sut.execute_many(SCRIPT)
    finally:
        sut.close()
    failure = raised.value
    assert failure.kind is FailureKind.BAD_REPLY and failure.request == "op 4 (create_address)"
    assert "answers seq 5, not 4" in failure.message and "later request's" in failure.message
    stop = batch_stop(failure)
    assert stop is not None and stop.index == 3 and list(stop.completed) == expected()[:3]


def test_a_reply_to_no_request_in_flight_is_a_bad_reply() -> None:
    sut = fake("unknown", 5)
    try:
        with pytest.raises(SutFailure) as raised:
            sut.execute_many(SCRIPT)
    finally:
        sut.close()
    assert raised.value.kind is FailureKind.BAD_REPLY and raised.value.request == "op 5 (create_queue)"
    assert "answers seq 999, not 5" in raised.value.message and "no request in flight" in raised.value.message


def test_a_sut_that_dies_mid_batch_is_a_crash_on_the_first_request_left_unanswered() -> None:
    sut = fake("die", 6)
    try:
        with pytest.raises(SutFailure) as raised:
            sut.execute_many(SCRIPT)
        assert sut.pid is None, "the process is gone"
    finally:
        sut.close()
    failure = raised.value
    assert failure.kind is FailureKind.CRASHED and failure.request == "op 6 (lookup)"
    assert "exit code 5" in failure.message
    stop = batch_stop(failure)
    assert stop is not None and stop.index == 5 and list(stop.completed) == expected()[:5]


def test_a_sut_that_hangs_mid_batch_times_out_on_that_request() -> None:
    sut = fake("hang", 2, timeout=0.5)
    try:
        with pytest.raises(SutFailure) as raised:
            sut.execute_many(SCRIPT)
    finally:
        sut.close()
    assert raised.value.kind is FailureKind.TIMEOUT and raised.value.request == "op 2 (create_queue)"
    assert "no reply within 0.5 s" in raised.value.message


def test_after_an_error_reply_mid_batch_the_replies_in_flight_are_read_and_the_process_goes_on() -> None:
    sut = fake("error", 4)
    try:
        with pytest.raises(SutFailure) as raised:
            sut.execute_many(SCRIPT)
        assert raised.value.kind is FailureKind.ERROR_REPLY and raised.value.request == "op 4 (create_address)"
        assert "op refused on purpose" in raised.value.message
        stop = batch_stop(raised.value)
        assert stop is not None and stop.index == 3
        sut.reset("addressing", SEED)
        assert sut.execute_many(SCRIPT[:3]) == expected()[:3], "the stream is in step again after the reset"
        assert sut.starts == 1
    finally:
        sut.close()


def test_the_hello_announcement_is_read_strictly() -> None:
    base = {"v": 1, "type": "hello", "name": "x", "domains": ["addressing"]}
    assert read_hello(base).pipelining == 1
    assert read_hello({**base, "pipelining": 16}).pipelining == 16
    for wrong in (0, -1, 2.0, True, "8", None):
        with pytest.raises(SutFailure, match="pipelining") as raised:
            read_hello({**base, "pipelining": wrong})
        assert raised.value.kind is FailureKind.BAD_REPLY


def test_brokerspec_serve_announces_pipelining_and_leaves_it_out_when_told() -> None:
    hello = '{"v": 1, "type": "hello", "profile": "seed", "domains": ["addressing"]}\n'
    for pipelining, announced in ((256, 256), (1, None)):
        out = io.StringIO()
        assert serve("impl", io.StringIO(hello), out, pipelining) == 0
        assert json.loads(out.getvalue()).get("pipelining") == announced


def test_the_protocol_schema_takes_the_announcement_and_refuses_what_the_reader_refuses() -> None:
    schema = json.loads((files("brokerspec") / "schemas" / "sut-protocol-v1.schema.json").read_text(encoding="utf-8"))
    validator = Draft202012Validator(schema)
    base = {"v": 1, "type": "hello", "name": "x", "domains": ["addressing"]}
    for good in (base, {**base, "pipelining": 1}, {**base, "pipelining": 256}):
        assert validator.is_valid(good), good
        read_hello(good)
    for wrong in (0, -3, 2.5, "8", None, True):
        assert not validator.is_valid({**base, "pipelining": wrong}), wrong
        with pytest.raises(SutFailure):
            read_hello({**base, "pipelining": wrong})


def test_the_node_example_announces_pipelining_and_answers_a_batch_as_the_impl_does() -> None:
    sut = SubprocessSut([node_or_skip(), str(NODE_SUT)], timeout=10.0)
    try:
        assert sut.hello(SEED, ("addressing",)).pipelining == 64
        assert sut.in_flight == 64
        sut.reset("addressing", SEED)
        assert sut.execute_many(SCRIPT) == expected()
    finally:
        sut.close()


def test_a_request_that_cannot_be_written_is_a_crash_saying_the_input_is_closed() -> None:
    """The SUT closed its input after answering op 3 and kept running: op 4 cannot be written, no waiting."""
    sut = fake("close-input", 3, timeout=30.0)
    started = time.monotonic()
    try:
        with pytest.raises(SutFailure) as raised:
            sut.execute_many(SCRIPT)
    finally:
        sut.close()
    assert raised.value.kind is FailureKind.CRASHED and raised.value.request == "op 4 (create_address)"
    assert "its input is closed" in raised.value.message
    assert time.monotonic() - started < 20, "the failure comes at once, not at the timeout"
    stop = batch_stop(raised.value)
    assert stop is not None and stop.index == 3 and list(stop.completed) == expected()[:3]
