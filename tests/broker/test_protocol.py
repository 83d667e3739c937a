"""One connection's STOMP 1.2 protocol: the state table, negotiation, and each frame refused with its ERROR."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from depth import scaled

from brokerspec.broker.frames import CLIENT_COMMANDS, SERVER_COMMANDS, Frame, FrameReader, encode
from brokerspec.broker.protocol import (
    ACK_MODES,
    MAY_BE_EMPTY,
    REQUIRED_HEADERS,
    SUPPORTED_VERSIONS,
    TRANSITIONS,
    Connect,
    ProtocolError,
    ServerProtocol,
    State,
    describe_transitions,
    error_frame,
    message_frame,
    negotiate_heartbeat,
    receipt_frame,
)

ALL_COMMANDS = CLIENT_COMMANDS + SERVER_COMMANDS
CONNECT = Frame("CONNECT", (("accept-version", "1.2"), ("host", "vhost")))

VALID: dict[str, Frame] = {
    "CONNECT": CONNECT,
    "STOMP": Frame("STOMP", CONNECT.headers),
    "SEND": Frame("SEND", (("destination", "/queue/a"), ("content-length", "2")), b"hi"),
    "SUBSCRIBE": Frame("SUBSCRIBE", (("destination", "/queue/a"), ("id", "0"), ("ack", "client"))),
    "UNSUBSCRIBE": Frame("UNSUBSCRIBE", (("id", "0"),)),
    "ACK": Frame("ACK", (("id", "m1"), ("transaction", "t1"))),
    "NACK": Frame("NACK", (("id", "m1"),)),
    "BEGIN": Frame("BEGIN", (("transaction", "t1"),)),
    "COMMIT": Frame("COMMIT", (("transaction", "t1"),)),
    "ABORT": Frame("ABORT", (("transaction", "t1"),)),
    "DISCONNECT": Frame("DISCONNECT"),
    "CONNECTED": Frame("CONNECTED", (("version", "1.2"),)),
    "MESSAGE": Frame("MESSAGE", (("destination", "/queue/a"), ("message-id", "1"), ("subscription", "0"))),
    "RECEIPT": Frame("RECEIPT", (("receipt-id", "1"),)),
    "ERROR": Frame("ERROR", (("message", "no"),)),
}
"""A frame of each command that carries every header its command needs."""

EXPECTED = {
    ("awaiting-connect", "CONNECT"): "open", ("awaiting-connect", "STOMP"): "open",
    **{("open", command): "open"
       for command in ("SEND", "SUBSCRIBE", "UNSUBSCRIBE", "ACK", "NACK", "BEGIN", "COMMIT", "ABORT")},
    ("open", "DISCONNECT"): "closed",
}
"""The protocol as the specification's "Connecting" and "Client Frames" describe it; every other pair is an error."""


def in_state(state: State) -> ServerProtocol:
    """A protocol brought into ``state`` by ordinary frames."""
    protocol = ServerProtocol()
    if state is not State.AWAITING_CONNECT:
        protocol.receive(CONNECT)
    if state is State.CLOSED:
        protocol.receive(VALID["DISCONNECT"])
    assert protocol.state is state
    return protocol


def refused(protocol: ServerProtocol, frame: Frame) -> ProtocolError:
    """The ProtocolError ``protocol`` raises on ``frame``, after checking the connection is then closed."""
    with pytest.raises(ProtocolError) as caught:
        protocol.receive(frame)
    assert protocol.state is State.CLOSED and protocol.must_close()
    return caught.value


def check_error_frame(error: ProtocolError, receipt: str | None) -> Frame:
    """The error's ERROR frame, after checking it carries the message, the receipt id and the detail."""
    frame = error.error_frame()
    assert frame.command == "ERROR"
    assert frame.header("message") == error.message and frame.header("receipt-id") == receipt
    assert frame.header("content-type") == "text/plain" and frame.body == error.detail.encode()
    assert FrameReader().feed(encode(frame)) == [frame]
    return frame


# The state table

@pytest.mark.parametrize("state", list(State), ids=lambda state: state.value)
@pytest.mark.parametrize("command", ALL_COMMANDS)
def test_every_state_and_command_does_what_the_table_says(state: State, command: str) -> None:
    protocol = in_state(state)
    frame = VALID[command].with_header("receipt", "r-7")
    following = TRANSITIONS.get((state, command))
    if following is None:
        error = refused(protocol, frame)
        assert command in error.message and state.value in error.detail
        check_error_frame(error, "r-7")
    else:
        result = protocol.receive(frame)
        assert protocol.state is following
        assert isinstance(result, Connect) if command in ("CONNECT", "STOMP") else result == frame


def test_the_table_is_the_specification_and_describe_transitions_reads_it() -> None:
    described = describe_transitions()
    assert len(described) == len(State) * len(ALL_COMMANDS) == len({row[:2] for row in described})
    allowed = {(state, command): following for state, command, following in described if following != "error"}
    assert allowed == EXPECTED
    assert {(state.value, command): following.value for (state, command), following in TRANSITIONS.items()} == EXPECTED


def test_the_required_headers_are_those_of_the_specification() -> None:
    assert {command: set(names) for command, names in REQUIRED_HEADERS.items() if names} == {
        "CONNECT": {"accept-version", "host"}, "STOMP": {"accept-version", "host"}, "SEND": {"destination"},
        "SUBSCRIBE": {"destination", "id"}, "UNSUBSCRIBE": {"id"}, "ACK": {"id"}, "NACK": {"id"},
        "BEGIN": {"transaction"}, "COMMIT": {"transaction"}, "ABORT": {"transaction"},
    }


def test_after_disconnect_and_after_an_error_every_frame_is_refused() -> None:
    for first in (VALID["DISCONNECT"], Frame("SEND")):
        protocol = in_state(State.OPEN)
        try:
            protocol.receive(first)
        except ProtocolError:
            pass
        assert protocol.must_close()
        error = refused(protocol, VALID["SEND"])
        assert "after the connection closed" in error.message


# Connecting

@pytest.mark.parametrize("offered", ["1.2", "1.0,1.1,1.2", "1.2,2.0", " 1.1 , 1.2 ", "1.1,1.2,1.0"])
def test_a_client_offering_1_2_among_others_gets_1_2(offered: str) -> None:
    protocol = ServerProtocol()
    connect = protocol.receive(Frame("STOMP", (("accept-version", offered), ("host", "h"), ("login", "me"),
                                                ("passcode", "a:b"))))
    assert connect == Connect("1.2", "h", "me", "a:b", (0, 0)) and protocol.connect == connect
    assert protocol.state is State.OPEN and not protocol.must_close()


@pytest.mark.parametrize("offered", ["1.0,1.1", "1.0", "1.1", "2.0", "1.2.1", "12"])
def test_a_client_offering_no_version_of_ours_is_refused_with_the_versions_we_speak(offered: str) -> None:
    frame = Frame("CONNECT", (("accept-version", offered), ("host", "h"), ("receipt", "c1")))
    error = refused(ServerProtocol(), frame)
    assert error.message == "Supported protocol versions are 1.2" and repr(offered) in error.detail
    assert check_error_frame(error, "c1").header("version") == ",".join(SUPPORTED_VERSIONS) == "1.2"


def test_a_1_0_client_without_accept_version_is_told_1_2_is_required() -> None:
    error = refused(ServerProtocol(), Frame("CONNECT", (("host", "h"),)))
    assert "1.2 is required" in error.message and "accept-version" in error.detail
    assert check_error_frame(error, None).header("version") == "1.2"


def test_host_is_required_but_may_name_the_default_virtual_host() -> None:
    assert "host" in refused(ServerProtocol(), Frame("CONNECT", (("accept-version", "1.2"),))).message
    connect = ServerProtocol().receive(Frame("CONNECT", (("accept-version", "1.2"), ("host", ""))))
    assert isinstance(connect, Connect) and connect.host == ""


@pytest.mark.parametrize("client, server, expected", [
    (None, (5000, 5000), (0, 0)),
    ("0,0", (5000, 5000), (0, 0)),
    ("4000,10000", (5000, 2000), (10000, 4000)),
    ("4000,10000", (0, 0), (0, 0)),
    ("0,10000", (5000, 2000), (10000, 0)),
    ("4000,0", (5000, 2000), (0, 4000)),
    ("4000,10000", (20000, 0), (20000, 0)),
    ("1000, 1000", (500, 3000), (1000, 3000)),
])
def test_heartbeats_are_negotiated_as_heart_beating_says(client: str | None, server: tuple[int, int],
                                                         expected: tuple[int, int]) -> None:
    headers = CONNECT.headers + ((("heart-beat", client),) if client is not None else ())
    protocol = ServerProtocol(server="test/1", heartbeat=server)
    connect = protocol.receive(Frame("CONNECT", headers))
    assert isinstance(connect, Connect) and connect.heartbeat == expected
    assert protocol.connected_frame("s-1").headers == (
        ("version", "1.2"), ("heart-beat", f"{expected[0]},{expected[1]}"), ("server", "test/1"), ("session", "s-1"))


periods = st.integers(0, 60_000)


@settings(max_examples=scaled(100, 1000), deadline=None)
@given(cx=periods, cy=periods, sx=periods, sy=periods)
def test_a_client_reading_the_connected_frame_agrees_on_the_periods(cx: int, cy: int, sx: int, sy: int) -> None:
    sends, expects = negotiate_heartbeat((cx, cy), (sx, sy))
    assert sends == (max(sx, cy) if sx and cy else 0) and expects == (max(cx, sy) if cx and sy else 0)
    assert negotiate_heartbeat((sx, sy), (cx, cy)) == (expects, sends), "the client's own view, from the server's"
    assert negotiate_heartbeat((sends, expects), (cx, cy)) == (expects, sends), "and from the CONNECTED frame's"


@pytest.mark.parametrize("beat", ["abc", "1000", "1000,", ",1000", "-1,0", "1,2,3", "1.5,2", "", "0x10,0",
                                  "9999999999,0"])
def test_a_malformed_heartbeat_is_refused_naming_it(beat: str) -> None:
    error = refused(ServerProtocol(), CONNECT.with_header("heart-beat", beat).with_header("receipt", "hb"))
    assert "malformed heart-beat" in error.message and repr(beat) in error.detail
    check_error_frame(error, "hb")


def test_the_connected_frame_needs_a_connect_and_the_server_setting_must_be_valid() -> None:
    with pytest.raises(ProtocolError, match="not connected"):
        ServerProtocol().connected_frame("s")
    with pytest.raises(ValueError, match="-1"):
        ServerProtocol(heartbeat=(-1, 0))


# Each frame refused

MISSING = [(command, name) for command, names in REQUIRED_HEADERS.items() for name in names
           if name != "accept-version"]


@pytest.mark.parametrize("command, name", MISSING)
@pytest.mark.parametrize("receipt", [None, "rcpt-1"])
def test_a_frame_missing_a_required_header_is_refused_naming_it(command: str, name: str,
                                                                receipt: str | None) -> None:
    frame = VALID[command]
    frame = Frame(command, tuple(h for h in frame.headers if h[0] != name), frame.body)
    if receipt is not None:
        frame = frame.with_header("receipt", receipt)
    protocol = ServerProtocol() if command in ("CONNECT", "STOMP") else in_state(State.OPEN)
    error = refused(protocol, frame)
    assert error.message == f"missing header {name}" and command in error.detail
    assert error.receipt_id == receipt
    check_error_frame(error, receipt)


@pytest.mark.parametrize("command, name",
                         [case for case in MISSING if case[1] not in MAY_BE_EMPTY] + [("CONNECT", "accept-version")])
def test_a_required_header_may_not_be_empty(command: str, name: str) -> None:
    frame = VALID[command]
    frame = Frame(command, ((name, ""),) + frame.headers, frame.body)
    protocol = ServerProtocol() if command in ("CONNECT", "STOMP") else in_state(State.OPEN)
    assert refused(protocol, frame).message == f"empty header {name}"


@pytest.mark.parametrize("command", ["SEND", "SUBSCRIBE"])
def test_an_empty_destination_is_left_to_the_name_model(command: str) -> None:
    frame = VALID[command]
    frame = Frame(command, tuple((k, "" if k == "destination" else v) for k, v in frame.headers), frame.body)
    assert in_state(State.OPEN).receive(frame) == frame


@pytest.mark.parametrize("ack", [*ACK_MODES, None])
def test_subscribe_takes_each_ack_mode_and_none(ack: str | None) -> None:
    frame = Frame("SUBSCRIBE", (("destination", "/q"), ("id", "1")) + ((("ack", ack),) if ack else ()))
    assert in_state(State.OPEN).receive(frame) == frame


@pytest.mark.parametrize("ack", ["Client", "individual", "", "auto "])
def test_subscribe_with_an_unknown_ack_mode_is_refused(ack: str) -> None:
    frame = Frame("SUBSCRIBE", (("destination", "/q"), ("id", "1"), ("ack", ack), ("receipt", "s")))
    error = refused(in_state(State.OPEN), frame)
    assert error.message == f"unknown ack mode {ack!r}" and "client-individual" in error.detail
    check_error_frame(error, "s")


@pytest.mark.parametrize("command", [c for c in CLIENT_COMMANDS if c != "SEND"])
def test_only_send_may_carry_a_body(command: str) -> None:
    frame = Frame(command, VALID[command].headers + (("content-length", "1"), ("receipt", "b")), b"x")
    protocol = ServerProtocol() if command in ("CONNECT", "STOMP") else in_state(State.OPEN)
    error = refused(protocol, frame)
    assert command in error.message and "body" in error.message and "body of 1 byte(s)" in error.detail
    check_error_frame(error, "b")
    empty = Frame(command, VALID[command].headers + (("content-length", "0"),))
    protocol = ServerProtocol() if command in ("CONNECT", "STOMP") else in_state(State.OPEN)
    protocol.receive(empty)
    assert protocol.state is TRANSITIONS[(State.AWAITING_CONNECT if command in ("CONNECT", "STOMP")
                                          else State.OPEN, command)]


# Server frames

def test_message_frame_puts_its_headers_first_and_always_a_content_length() -> None:
    frame = message_frame("/queue/a", "m-1", "sub-0", b"a\0b", (("x", "1"), ("destination", "/other")), ack="k-1")
    assert frame.headers == (("destination", "/queue/a"), ("message-id", "m-1"), ("subscription", "sub-0"),
                             ("ack", "k-1"), ("content-length", "3"), ("x", "1"), ("destination", "/other"))
    assert frame.header("destination") == "/queue/a"
    assert FrameReader().feed(encode(frame)) == [frame]
    plain = message_frame("/q", "m", "s", b"")
    assert plain.header("ack") is None and plain.header("content-length") == "0" and plain.command == "MESSAGE"


def test_receipt_and_error_frames() -> None:
    assert receipt_frame("r:1") == Frame("RECEIPT", (("receipt-id", "r:1"),))
    assert FrameReader().feed(encode(receipt_frame("r:1\n"))) == [receipt_frame("r:1\n")]
    frame = error_frame("bad\nthing", "détail\0", "r2")
    assert frame.headers == (("message", "bad\nthing"), ("receipt-id", "r2"), ("content-type", "text/plain"),
                             ("content-length", str(len("détail\0".encode()))))
    assert frame.body == "détail\0".encode() and FrameReader().feed(encode(frame)) == [frame]
    assert error_frame("m").header("receipt-id") is None and error_frame("m").body == b""


def test_a_protocol_error_reads_as_its_message_and_detail() -> None:
    error = ProtocolError("short", "longer", "r")
    assert str(error) == "short: longer" and str(ProtocolError("short")) == "short"
    assert error.error_frame().header("receipt-id") == "r"
