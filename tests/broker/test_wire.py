"""The broker over the wire, with stomp.py as a user would connect: frames, management, acks, transactions.

One broker serves the module (``xdist_group`` keeps its tests on one worker); each test uses its own names.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from brokerspec.broker.frames import Frame, FrameReader, encode

from stomp_running import Client, RunningBroker

pytestmark = pytest.mark.xdist_group("stomp-broker")


@pytest.fixture(scope="module")
def broker() -> Iterator[RunningBroker]:
    running = RunningBroker()
    yield running
    running.stop()


@pytest.fixture
def admin(broker: RunningBroker) -> Iterator[Client]:
    client = Client(broker.port)
    yield client
    client.close()


@pytest.fixture
def client(broker: RunningBroker) -> Iterator[Client]:
    client = Client(broker.port)
    yield client
    client.close()


def anycast_queue(admin: Client, name: str) -> None:
    assert admin.manage("createAddress", name, "ANYCAST") == (True, None)
    assert admin.manage("createQueue", name, "ANYCAST", name) == (True, None)


def raw(port: int, *frames: Frame) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    for frame in frames:
        sock.sendall(encode(frame))
    return sock


def read_frames(sock: socket.socket, count: int) -> list[Frame]:
    reader, got = FrameReader(), list[Frame]()
    while len(got) < count:
        data = sock.recv(65536)
        if not data:
            break
        got.extend(reader.feed(data))
    return got


CONNECT = Frame("CONNECT", (("accept-version", "1.2"), ("host", "localhost")))


def test_a_message_travels_with_its_headers_and_a_body_holding_nul_bytes(admin: Client, client: Client) -> None:
    anycast_queue(admin, "wire.basic")
    client.connection.subscribe("wire.basic", id="s", ack="auto", headers={"subscription-type": "ANYCAST"})
    client.send("wire.basic", "a\x00b", receipt="r1", colour="blue", destination__type="ANYCAST")
    message = client.next()
    assert message.body == "a\x00b"
    assert message.headers["colour"] == "blue"
    assert message.headers["destination"] == "wire.basic"
    assert message.headers["subscription"] == "s"


def test_management_answers_and_refusals_name_the_reason(admin: Client) -> None:
    anycast_queue(admin, "wire.mgmt")
    ok, names = admin.manage("getQueueNames")
    assert ok and "wire.mgmt" in names
    ok, reason = admin.manage("createAddress", "wire.mgmt", "ANYCAST")
    assert not ok and "address_exists" in reason and "wire.mgmt" in reason
    ok, reason = admin.manage("dropEverything")
    assert not ok and "unknown operation 'dropEverything'" in reason
    ok, reason = admin.manage("createQueue", "wire.mgmt", "SIDEWAYS", "q")
    assert not ok and "SIDEWAYS" in reason


def test_artemis_refuses_a_second_queue_of_the_same_name_on_another_address(admin: Client) -> None:
    for address in ("wire.same1", "wire.same2"):
        assert admin.manage("createAddress", address, "MULTICAST")[0]
    assert admin.manage("createQueue", "wire.same1", "MULTICAST", "wire.same")[0]
    ok, reason = admin.manage("createQueue", "wire.same2", "MULTICAST", "wire.same")
    assert not ok and "queue_exists" in reason


def test_a_bare_name_on_two_addresses_is_ambiguous_and_an_fqqn_is_not() -> None:
    seed = RunningBroker(profile="seed")
    try:
        admin = Client(seed.port)
        for address in ("amb1", "amb2"):
            assert admin.manage("createAddress", address, "MULTICAST")[0]
            assert admin.manage("createQueue", address, "MULTICAST", "shared")[0]
        admin.close()
        fqqn = Client(seed.port)
        fqqn.connection.subscribe("amb2::shared", id="s", ack="auto")
        fqqn.send("amb2", "to two", receipt="r", destination__type="MULTICAST")
        assert fqqn.next().body == "to two"
        fqqn.close()
        bare = Client(seed.port)
        bare.connection.subscribe("shared", id="s", ack="auto", headers={"subscription-type": "MULTICAST"})
        error = bare.errors.get(timeout=10)
        assert "ambiguous_name" in error.body and "amb1::shared" in error.body
        bare.close()
    finally:
        seed.stop()


def test_unacknowledged_messages_go_to_another_subscriber_when_a_client_dies(admin: Client,
                                                                              broker: RunningBroker) -> None:
    anycast_queue(admin, "wire.dies")
    dying = raw(broker.port, CONNECT, Frame("SUBSCRIBE", (("destination", "wire.dies"), ("id", "s"),
                                                          ("ack", "client-individual"), ("receipt", "sub"))))
    assert [f.command for f in read_frames(dying, 2)] == ["CONNECTED", "RECEIPT"]
    for number in range(3):
        admin.send("wire.dies", f"m{number}", receipt=f"d{number}", destination__type="ANYCAST")
    assert [f.body for f in read_frames(dying, 3)] == [b"m0", b"m1", b"m2"]
    survivor = Client(broker.port)
    survivor.connection.subscribe("wire.dies", id="s", ack="client-individual")
    assert survivor.none_within(0.3)
    dying.close()
    bodies = [survivor.next().body for _ in range(3)]
    assert bodies == ["m0", "m1", "m2"]
    survivor.close()


def test_a_transaction_lands_at_its_commit_and_an_abort_lands_nothing(admin: Client, client: Client) -> None:
    anycast_queue(admin, "wire.tx")
    client.connection.subscribe("wire.tx", id="s", ack="auto")
    client.connection.begin("t1")
    client.send("wire.tx", "in t1", transaction="t1", destination__type="ANYCAST")
    assert client.none_within(0.3)
    client.connection.commit("t1")
    assert client.next().body == "in t1"
    client.connection.begin("t2")
    client.send("wire.tx", "in t2", transaction="t2", destination__type="ANYCAST")
    client.connection.abort("t2")
    client.send("wire.tx", "after", receipt="r", destination__type="ANYCAST")
    assert client.next().body == "after"


def test_a_duplicate_is_dropped_outside_a_transaction_and_fails_the_commit_inside_one(admin: Client,
                                                                                      broker: RunningBroker) -> None:
    anycast_queue(admin, "wire.dup")
    client = Client(broker.port)
    client.connection.subscribe("wire.dup", id="s", ack="auto")
    client.send("wire.dup", "first", receipt="r1", _AMQ_DUPL_ID="order-1", destination__type="ANYCAST")
    client.send("wire.dup", "again", receipt="r2", _AMQ_DUPL_ID="order-1", destination__type="ANYCAST")
    assert client.next().body == "first"
    assert client.none_within(0.3)
    assert admin.manage("listDuplicateIds", "wire.dup") == (True, ["order-1"])
    client.connection.begin("t")
    client.send("wire.dup", "in tx", transaction="t", _AMQ_DUPL_ID="order-1", destination__type="ANYCAST")
    client.connection.commit("t")
    error = client.errors.get(timeout=10)
    assert error.headers["message"] == "transaction rolled back" and "order-1" in error.body
    client.close()


def test_a_malformed_frame_gets_an_error_naming_it_and_disturbs_no_one_else(admin: Client, client: Client,
                                                                            broker: RunningBroker) -> None:
    anycast_queue(admin, "wire.bad")
    client.connection.subscribe("wire.bad", id="s", ack="auto")
    bad = raw(broker.port, CONNECT)
    read_frames(bad, 1)
    bad.sendall(b"SEND\ndestination:wire.bad\ncontent-length:zz\n\nbody\x00")
    frames = read_frames(bad, 1)
    assert frames[0].command == "ERROR" and "content-length" in frames[0].body.decode()
    assert bad.recv(10) == b""
    client.send("wire.bad", "still fine", receipt="ok", destination__type="ANYCAST")
    assert client.next().body == "still fine"


def test_a_protocol_error_carries_the_receipt_id(broker: RunningBroker) -> None:
    sock = raw(broker.port, CONNECT, Frame("SEND", (("receipt", "r-77"),), b"x"))
    connected, error = read_frames(sock, 2)
    assert connected.command == "CONNECTED"
    assert error.command == "ERROR" and error.header("receipt-id") == "r-77"
    assert "destination" in (error.header("message") or "")


def test_a_client_that_never_reads_holds_no_one_back(admin: Client, broker: RunningBroker) -> None:
    from brokerspec.broker.io import HIGH_WATER

    anycast_queue(admin, "wire.slow")
    stalled = raw(broker.port, CONNECT, Frame("SUBSCRIBE", (("destination", "wire.slow"), ("id", "s"),
                                                            ("ack", "auto"), ("receipt", "sub"))))
    read_frames(stalled, 2)
    reader = Client(broker.port)
    reader.connection.subscribe("wire.slow", id="s", ack="auto", headers={"receipt": "sub"})
    reader.wait_receipt("sub")
    payload = "x" * 65536
    sent = 300  # about 20 MB: more than the kernel's socket buffers take for the stalled client
    for _ in range(sent - 1):
        admin.send("wire.slow", payload, destination__type="ANYCAST")
    admin.send("wire.slow", payload, receipt="sent", destination__type="ANYCAST")
    got = 0
    while not reader.none_within(1.0):
        got += 1
    buffered = broker.call(lambda: max(c.transport.get_write_buffer_size() for c in broker.server.connections
                                       if c.transport is not None))
    # Strict turns would give the reader half; a stalled client that stops taking deliveries leaves it the rest.
    assert got > sent * 0.6, f"the reader got {got} of {sent} messages"
    assert buffered <= HIGH_WATER + 2 * len(payload)
    stalled.close()
    reader.close()


def test_the_trace_of_a_session_replays_against_the_spec(tmp_path: Path) -> None:
    from brokerspec.replay import replay
    from brokerspec.trace import read_trace

    trace_path = tmp_path / "broker.jsonl"
    running = RunningBroker(trace=trace_path)
    try:
        client = Client(running.port)
        client.connection.subscribe("orders", id="s", ack="auto", headers={"subscription-type": "ANYCAST"})
        client.send("orders", "1", receipt="r1", destination__type="ANYCAST")
        client.send("orders::orders", "2", receipt="r2")
        client.send("news", "3", receipt="r3", destination__type="MULTICAST")
        assert [client.next().body for _ in range(2)] == ["1", "2"]
        client.close()
    finally:
        running.stop()
    trace = read_trace(trace_path)
    assert [step.command.op for step in trace.steps] == ["consume", "send", "send", "send"]
    report = replay(trace, {})
    assert not report.disagrees
    assert running.model.recorder.divergences == 0


def test_heart_beats_are_sent_and_a_silent_client_is_closed() -> None:
    running = RunningBroker(heartbeat=(100, 100))
    try:
        beats = raw(running.port, Frame("CONNECT", (("accept-version", "1.2"), ("host", "h"),
                                                    ("heart-beat", "0,100"))))
        connected = read_frames(beats, 1)[0]
        assert connected.header("heart-beat") == "100,0"
        assert beats.recv(1) == b"\n"
        silent = raw(running.port, Frame("CONNECT", (("accept-version", "1.2"), ("host", "h"),
                                                     ("heart-beat", "100,0"))))
        read_frames(silent, 1)
        started = time.monotonic()
        assert silent.recv(10) == b""
        assert time.monotonic() - started < 5
    finally:
        running.stop()
