"""The STOMP 1.2 frame codec: round trips, every split of the input, and each malformed frame refused where it is."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from depth import scaled

from brokerspec.broker.frames import (
    CLIENT_COMMANDS,
    COMMANDS,
    SERVER_COMMANDS,
    Frame,
    FrameError,
    FrameReader,
    Limits,
    encode,
    escape,
    unescape,
)

RAW = ("CONNECT", "CONNECTED")
EXAMPLES = scaled(80, 1000)

names = st.text(st.characters(exclude_characters=":\r\n\0", exclude_categories=["Cs"]), min_size=1,
                max_size=12).filter(lambda name: name != "content-length")
special = st.sampled_from([":", "\n", "\r", "\\", "\\c", "\\n", "é", "ü", "日本", "\U0001f600", "\0"])
values = st.lists(st.one_of(special, st.text(max_size=6)), max_size=6).map("".join)


@st.composite
def frames(draw: st.DrawFn) -> Frame:
    """Any writable frame: escaped characters in every header of the frames that escape, a body with NULs
    (then with its content-length) or without."""
    command = draw(st.sampled_from(sorted(COMMANDS)))
    value = values.filter(lambda v: "\r" not in v and "\n" not in v) if command in RAW else values
    headers = draw(st.lists(st.tuples(names, value), max_size=6))
    body = draw(st.binary(max_size=40))
    if b"\0" in body or draw(st.booleans()):
        headers.insert(draw(st.integers(0, len(headers))), ("content-length", str(len(body))))
    return Frame(command, tuple(headers), body)


def feed_in_pieces(data: bytes, cuts: list[int], reader: FrameReader | None = None) -> tuple[list[Frame], int]:
    """The frames and heart-beats a reader gets from ``data`` cut at ``cuts``."""
    reader = reader or FrameReader()
    got: list[Frame] = []
    points = sorted({0, len(data), *(cut % (len(data) + 1) for cut in cuts)})
    for start, end in zip(points, points[1:]):
        got += reader.feed(data[start:end])
    return got, reader.heartbeats


def error_of(data: bytes, cuts: list[int] | None = None, limits: Limits = Limits()) -> FrameError:
    """The FrameError a reader raises on ``data`` (whole, or cut at ``cuts``)."""
    with pytest.raises(FrameError) as caught:
        feed_in_pieces(data, cuts or [], FrameReader(limits))
    return caught.value


# Round trips and splits

@settings(max_examples=EXAMPLES, deadline=None)
@given(frame=frames())
def test_a_frame_reads_back_as_it_was_written(frame: Frame) -> None:
    reader = FrameReader()
    assert reader.feed(encode(frame)) == [frame]
    assert reader.buffered == 0 and reader.heartbeats == 0


@settings(max_examples=EXAMPLES, deadline=None)
@given(stream=st.lists(st.tuples(frames(), st.lists(st.sampled_from([b"\n", b"\r\n"]), max_size=3)),
                       min_size=1, max_size=4),
       cuts=st.lists(st.integers(0, 10_000), max_size=12))
def test_every_split_of_a_stream_gives_the_same_frames_and_heartbeats(
        stream: list[tuple[Frame, list[bytes]]], cuts: list[int]) -> None:
    data = b"".join(b"".join(beats) + encode(frame) for frame, beats in stream)
    expected = [frame for frame, _ in stream]
    beats = sum(len(beats) for _, beats in stream)
    assert feed_in_pieces(data, []) == (expected, beats)
    assert feed_in_pieces(data, cuts) == (expected, beats)


def test_a_frame_fed_one_byte_at_a_time_gives_what_it_gives_whole() -> None:
    data = (b"\r\nSEND\r\ndestination:/q\\c1\r\ncontent-length:5\r\nx:y\r\n\r\na\0b\nc\0\n"
            b"MESSAGE\nmessage-id:m\n\nhello\0")
    whole = FrameReader().feed(data)
    reader = FrameReader()
    pieces = [frame for i in range(len(data)) for frame in reader.feed(data[i:i + 1])]
    assert pieces == whole
    assert whole[0] == Frame("SEND", (("destination", "/q:1"), ("content-length", "5"), ("x", "y")), b"a\0b\nc")
    assert whole[1].body == b"hello" and reader.heartbeats == 2


def test_lines_may_end_with_crlf_and_the_cr_is_not_kept() -> None:
    got = FrameReader().feed(b"SEND\r\ndestination:/q\r\nempty:\r\n\r\nbody\r\n\0")
    assert got == [Frame("SEND", (("destination", "/q"), ("empty", "")), b"body\r\n")]


def test_heartbeats_between_frames_are_dropped_and_counted() -> None:
    frame = encode(Frame("RECEIPT", (("receipt-id", "1"),)))
    reader = FrameReader()
    assert reader.feed(b"\n\r\n" + frame + b"\n\n" + frame + b"\r") == [Frame("RECEIPT", (("receipt-id", "1"),))] * 2
    assert (reader.heartbeats, reader.buffered) == (4, 1)
    assert reader.feed(b"\n") == [] and (reader.heartbeats, reader.buffered) == (5, 0)


def test_a_partial_frame_is_buffered_until_it_completes() -> None:
    reader = FrameReader()
    assert reader.feed(b"SEND\ncontent-length:4\n\nab") == []
    assert reader.buffered == len(b"SEND\ncontent-length:4\n\nab")
    assert reader.feed(b"\0\0") == [] and reader.buffered == 27
    assert reader.feed(b"\0") == [Frame("SEND", (("content-length", "4"),), b"ab\0\0")] and reader.buffered == 0


def test_the_first_of_repeated_headers_wins_and_all_are_kept() -> None:
    got = FrameReader().feed(b"SEND\nfoo:1\ncontent-length:3\nfoo:2\ncontent-length:5\n\nabc\0")
    assert got[0].headers == (("foo", "1"), ("content-length", "3"), ("foo", "2"), ("content-length", "5"))
    assert got[0].header("foo") == "1" and got[0].body == b"abc"
    assert got[0].with_header("bar", "3").headers[-1] == ("bar", "3") and got[0].header("bar") is None


@pytest.mark.parametrize("command", RAW)
def test_connect_and_connected_headers_are_read_raw(command: str) -> None:
    got = FrameReader().feed(f"{command}\nlogin:a\\cb\\t\npasscode:x:y\\\n\n\0".encode())
    assert got[0].headers == (("login", "a\\cb\\t"), ("passcode", "x:y\\"))


def test_other_frames_unescape_names_and_values() -> None:
    got = FrameReader().feed(b"SEND\na\\cb:c\\nd\\re\\\\f\\cg:h\n\n\0")
    assert got[0].headers == (("a:b", "c\nd\re\\f:g:h"),)


def test_escape_and_unescape_are_inverse_and_unescape_refuses_undefined_escapes() -> None:
    text = "a:b\nc\rd\\e\\c"
    assert escape(text) == "a\\cb\\nc\\rd\\\\e\\\\c" and unescape(escape(text)) == text
    for bad in ("\\t", "a\\", "\\C"):
        with pytest.raises(ValueError, match="undefined escape"):
            unescape(bad)


def test_encode_writes_headers_raw_in_connect_and_adds_nothing_but_the_nul() -> None:
    assert encode(Frame("CONNECT", (("passcode", "a:b\\"),))) == b"CONNECT\npasscode:a:b\\\n\n\0"
    assert encode(Frame("SEND", (("passcode", "a:b\\"),))) == b"SEND\npasscode:a\\cb\\\\\n\n\0"
    assert encode(Frame("DISCONNECT")) == b"DISCONNECT\n\n\0"


@pytest.mark.parametrize("frame, named", [
    (Frame("SE:ND"), "'SE:ND'"),
    (Frame("SEND\n"), "'SEND\\n'"),
    (Frame(""), "''"),
    (Frame("SEND", (("a\rb", "v"),)), "'a\\rb'"),
    (Frame("SEND", (("a:b", "v"),)), "'a:b'"),
    (Frame("SEND", (("a\0", "v"),)), "'a\\x00'"),
    (Frame("SEND", (("", "v"),)), "''"),
    (Frame("CONNECT", (("login", "a\nb"),)), "'a\\nb'"),
    (Frame("CONNECTED", (("server", "a\r"),)), "'a\\r'"),
    (Frame("SEND", (), b"a\0b"), "NUL"),
    (Frame("SEND", (("content-length", "2"),), b"abc"), "'2'"),
])
def test_encode_refuses_what_cannot_be_written_and_names_it(frame: Frame, named: str) -> None:
    with pytest.raises(ValueError) as caught:
        encode(frame)
    assert named in str(caught.value)


# Malformed input

GOOD = encode(Frame("SEND", (("destination", "/q"),), b"one")) + b"\r\n" + encode(
    Frame("MESSAGE", (("content-length", "3"),), b"t\0o")) + b"\n\n"

SMALL = Limits(max_frame_bytes=200, max_headers=3, max_header_line=20, max_command_line=10)

BAD = [
    ("bad-escape", b"SEND\nfoo:a\\tb\n\n\0", "undefined escape '\\\\t'", "SEND", Limits()),
    ("bad-escape-at-end", b"SEND\nfoo:ab\\\n\n\0", "undefined escape", "SEND", Limits()),
    ("bad-escape-in-name", b"SEND\nf\\x:a\n\n\0", "undefined escape '\\\\x'", "SEND", Limits()),
    ("unknown-command", b"FROB\n\n\0", "unknown command 'FROB'", None, Limits()),
    ("lowercase-command", b"send\n\n\0", "unknown command 'send'", None, Limits()),
    ("command-not-utf8", b"SE\xffND\n\n\0", "command is not UTF-8", None, Limits()),
    ("stray-cr", b"\rSEND\n\n\0", "unknown command '\\rSEND'", None, Limits()),
    ("content-length-word", b"SEND\ncontent-length:abc\n\nabc\0", "not a non-negative integer: 'abc'", "SEND",
     Limits()),
    ("content-length-negative", b"SEND\ncontent-length:-1\n\n\0", "not a non-negative integer: '-1'", "SEND",
     Limits()),
    ("content-length-signed", b"SEND\ncontent-length:+3\n\nabc\0", "'+3'", "SEND", Limits()),
    ("content-length-spaced", b"SEND\ncontent-length: 3\n\nabc\0", "' 3'", "SEND", Limits()),
    ("content-length-empty", b"SEND\ncontent-length:\n\n\0", "not a non-negative integer: ''", "SEND", Limits()),
    ("no-nul-after-body", b"SEND\ncontent-length:2\n\nabc\0", "0x63 after the 2-byte body", "SEND", Limits()),
    ("header-not-utf8", b"SEND\nfoo:\xc3\x28\n\n\0", "header line 1 is not UTF-8", "SEND", Limits()),
    ("header-name-not-utf8", b"SEND\na:b\n\xfe:x\n\n\0", "header line 2 is not UTF-8", "SEND", Limits()),
    ("header-without-colon", b"SEND\nfoo\n\n\0", "header line 1 has no colon: 'foo'", "SEND", Limits()),
    ("header-empty-name", b"SEND\n:foo\n\n\0", "header line 1 has an empty name", "SEND", Limits()),
    ("command-too-long", b"SUBSCRIBES\n\n\0", "command line longer than 9 bytes: 'SUBSCRIBES'", None,
     Limits(max_command_line=9)),
    ("command-garbage", b"x" * 200, "command line longer than 10 bytes", None, SMALL),
    ("header-line-too-long", b"SEND\n" + b"h:" + b"v" * 19 + b"\n\n\0", "header line longer than 20 bytes",
     "SEND", SMALL),
    ("header-line-unending", b"SEND\nh:" + b"v" * 100, "header line longer than 20 bytes", "SEND", SMALL),
    ("too-many-headers", b"SEND\na:1\nb:2\nc:3\nd:4\n\n\0", "more than 3 headers", "SEND", SMALL),
    ("body-too-long", b"SEND\n\n" + b"x" * 300 + b"\0", "frame longer than 200 bytes", "SEND", SMALL),
    ("content-length-too-long", b"SEND\ncontent-length:195\n\n", "content-length 195 makes the frame longer",
     "SEND", SMALL),
    ("headers-too-long", b"MESSAGE\n" + b"h:12345678901234567\n" * 3, "frame longer than 60 bytes", "MESSAGE",
     Limits(max_frame_bytes=60, max_header_line=20)),
]


@pytest.mark.parametrize("data, reason, command, limits", [case[1:] for case in BAD], ids=[case[0] for case in BAD])
def test_each_malformed_frame_is_refused_naming_the_problem_and_where_it_starts(
        data: bytes, reason: str, command: str | None, limits: Limits) -> None:
    error = error_of(GOOD + data, limits=limits)
    assert reason in error.reason, error.reason
    assert error.offset == len(GOOD) and error.command == command
    assert error.frames == tuple(FrameReader().feed(GOOD)) and len(error.frames) == 2
    assert len(error.reason) <= 100
    alone = error_of(data, limits=limits)
    assert (alone.reason, alone.offset, alone.frames) == (error.reason, 0, ())


@pytest.mark.parametrize("data, limits", [case[1::3] for case in BAD], ids=[case[0] for case in BAD])
def test_fed_a_byte_at_a_time_a_malformed_frame_gives_the_same_error(data: bytes, limits: Limits) -> None:
    whole = error_of(GOOD + data, limits=limits)
    pieces = error_of(GOOD + data, list(range(len(GOOD + data))), limits)
    assert (pieces.reason, pieces.offset, pieces.command) == (whole.reason, whole.offset, whole.command)


@settings(max_examples=EXAMPLES, deadline=None)
@given(case=st.sampled_from(BAD), cuts=st.lists(st.integers(0, 10_000), max_size=8))
def test_every_split_of_a_malformed_stream_gives_the_same_error(
        case: tuple[str, bytes, str, str | None, Limits], cuts: list[int]) -> None:
    _, data, _, _, limits = case
    whole, pieces = error_of(GOOD + data, limits=limits), error_of(GOOD + data, cuts, limits)
    assert (pieces.reason, pieces.offset, pieces.command) == (whole.reason, whole.offset, whole.command)


def test_after_an_error_the_reader_refuses_everything() -> None:
    reader = FrameReader()
    with pytest.raises(FrameError) as first:
        reader.feed(b"BAD\n\n\0")
    with pytest.raises(FrameError) as again:
        reader.feed(encode(Frame("SEND")))
    assert again.value.reason == first.value.reason and again.value.frames == ()
    assert "unknown command 'BAD'" in str(again.value) and "at byte 0" in str(again.value)


def test_a_long_value_is_cut_short_in_the_reason() -> None:
    error = error_of(b"SEND\ncontent-length:" + b"9" * 30 + b"x" * 500 + b"\n\n\0")
    assert "..." in error.reason and len(error.reason) < 100


@pytest.mark.parametrize("head, chunk, limits, bound", [
    (b"SEND\n\n", b"x" * 64, Limits(max_frame_bytes=1000), 1000),
    (b"SEND\nh:", b"v" * 64, Limits(max_header_line=500), 5 + 500 + 2),
    (b"", b"Y" * 16, Limits(), 64 + 2),
    (b"SEND\n", b"h:1\n", Limits(max_frame_bytes=1000), 1000),
])
def test_over_limit_input_is_refused_before_more_than_a_piece_past_the_limit_is_buffered(
        head: bytes, chunk: bytes, limits: Limits, bound: int) -> None:
    reader = FrameReader(limits)
    reader.feed(head)
    fed = len(head)
    with pytest.raises(FrameError):
        while fed <= bound:
            reader.feed(chunk)
            fed += len(chunk)
            assert reader.buffered == fed


def test_the_limits_are_inclusive() -> None:
    frame = encode(Frame("SEND", (("h", "v" * 18),), b"x" * 10))
    exact = Limits(max_frame_bytes=len(frame), max_headers=1, max_header_line=20, max_command_line=4)
    assert FrameReader(exact).feed(frame)[0].body == b"x" * 10
    counted = encode(Frame("SEND", (("content-length", "10"),), b"y" * 10))
    assert FrameReader(Limits(max_frame_bytes=len(counted))).feed(counted)[0].body == b"y" * 10
    with pytest.raises(FrameError, match="frame longer"):
        FrameReader(Limits(max_frame_bytes=len(counted) - 1)).feed(counted)
    with pytest.raises(FrameError, match="frame longer"):
        FrameReader(Limits(max_frame_bytes=len(frame) - 1)).feed(frame)


def test_every_known_command_reads_and_the_two_sides_are_apart() -> None:
    for command in CLIENT_COMMANDS + SERVER_COMMANDS:
        assert FrameReader().feed(f"{command}\n\n\0".encode()) == [Frame(command)]
    assert not set(CLIENT_COMMANDS) & set(SERVER_COMMANDS) and len(COMMANDS) == 15


def test_a_large_body_arrives_whole_through_small_pieces() -> None:
    body = bytes(range(256)) * 4096
    data = (encode(Frame("SEND", (("content-length", str(len(body))),), body))
            + encode(Frame("SEND", (), b"z" * 100_000)))
    reader = FrameReader()
    got = [frame for i in range(0, len(data), 4096) for frame in reader.feed(data[i:i + 4096])]
    assert [frame.body for frame in got] == [body, b"z" * 100_000] and reader.buffered == 0


def outcome(data: bytes, cuts: list[int], limits: Limits) -> tuple[list[Frame], int] | tuple[str, int, str | None]:
    """What a reader makes of ``data`` cut at ``cuts``: its frames and heart-beats, or its error."""
    reader = FrameReader(limits)
    try:
        return feed_in_pieces(data, cuts, reader)
    except FrameError as error:
        return error.reason, error.offset, error.command


pieces = st.sampled_from([b"SEND", b"MESSAGE", b"CONNECT", b"\n", b"\r\n", b"\r", b"a:b", b"content-length:",
                          b"3", b"x" * 12, b"\\c", b"\\t", b":", b"\0", b"\xff"])


@settings(max_examples=scaled(150, 2000), deadline=None)
@given(data=st.lists(pieces, max_size=30).map(b"".join), cuts=st.lists(st.integers(0, 10_000), max_size=10),
       limits=st.builds(Limits, max_frame_bytes=st.integers(1, 60), max_headers=st.integers(0, 4),
                        max_header_line=st.integers(0, 20), max_command_line=st.integers(1, 10)))
def test_any_input_under_any_limits_reads_the_same_however_it_is_cut(data: bytes, cuts: list[int],
                                                                    limits: Limits) -> None:
    assert outcome(data, cuts, limits) == outcome(data, [], limits)
