"""Commands and outcomes survive a JSON round trip; unreadable trace files get precise errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brokerspec.check.strategies import commands
from brokerspec.codec import CodecError, decode_command, decode_outcome, encode_command, encode_outcome
from brokerspec.spec import get_profile
from brokerspec.spec.addressing import AddressingCommand, Lookup, apply, initial_state
from brokerspec.trace import (Trace, TraceError, TraceStep, dump_trace, parse_trace, read_trace, write_new_trace,
                             write_trace)


@settings(max_examples=200, deadline=None)
@given(script=st.lists(commands(), max_size=25), profile=st.sampled_from(["seed", "artemis-latest"]))
def test_round_trip_of_commands_outcomes_and_traces(script: list[AddressingCommand], profile: str) -> None:
    state = initial_state(get_profile(profile))
    steps = []
    for command in script:
        state, outcome = apply(state, command)
        assert decode_command(command.op, encode_command(command)) == command
        decoded = decode_outcome(encode_outcome(outcome))
        assert decoded == outcome and decoded.rule == outcome.rule
        steps.append(TraceStep(command, outcome))
    trace = Trace(get_profile(profile), tuple(steps), note="round trip")
    assert parse_trace(dump_trace(trace).split("\n"), "x") == trace


def test_unusual_characters_survive_a_file(tmp_path: Path) -> None:
    trace = Trace(get_profile("seed"), (TraceStep(Lookup("a\u2028b\u0085c\u2029d")),), note="line\u2028sep")
    assert read_trace(write_trace(tmp_path / "t.jsonl", trace)) == trace


def test_failure_traces_never_overwrite_an_earlier_one(tmp_path: Path) -> None:
    first = Trace(get_profile("seed"), (TraceStep(Lookup("first")),), note="one")
    second = Trace(get_profile("seed"), (TraceStep(Lookup("second")),), note="two")
    paths = [write_new_trace(tmp_path / "out" / "f.jsonl", t) for t in (first, second, second)]
    assert [p.name for p in paths] == ["f.jsonl", "f-2.jsonl", "f-3.jsonl"]
    assert read_trace(paths[0]) == first and read_trace(paths[1]) == second


def test_codec_errors_name_the_path() -> None:
    with pytest.raises(CodecError, match=r"^args\.routing_type: expected one of ANYCAST, MULTICAST"):
        decode_command("send", {"name": "a", "routing_type": "BROADCAST"})
    with pytest.raises(CodecError, match=r"^args\.routing_types: a set must not repeat"):
        decode_command("create_address", {"address": "a", "routing_types": ["ANYCAST", "ANYCAST"]})
    with pytest.raises(CodecError, match=r"^outcome\.reason\.type: expected one of"):
        decode_outcome({"type": "rejected", "reason": {"type": "bad_luck"}})
    with pytest.raises(CodecError, match=r"^args\.force: expected true or false"):
        decode_command("delete_address", {"address": "a", "force": "yes"})
    with pytest.raises(CodecError, match=r"^op: expected an operation name"):
        decode_command(7, {})


HEADER = '{"v": 1, "type": "header", "domain": "addressing", "profile": "seed", "overrides": {}}'


@pytest.mark.parametrize(("lines", "line", "field", "fragment"), [
    ([], 1, "", "the trace is empty"),
    (["not json"], 1, "", "not valid JSON"),
    (["[1, 2]"], 1, "", "expected a JSON object"),
    (['{"v": 2, "type": "header"}'], 1, "v", "unsupported schema version 2"),
    (['{"v": true, "type": "header"}'], 1, "v", "unsupported schema version True"),
    (['{"v": 1, "type": "step"}'], 1, "type", "the first line must be the header"),
    ([HEADER.replace('"seed"', '"nope"')], 1, "profile", "unknown profile 'nope'"),
    ([HEADER.replace('"addressing"', '"routing"', 1)], 1, "domain", "expected one of addressing"),
    ([HEADER.replace('{}', '{"addressing.nope": "1"}')], 1, "overrides.addressing.nope", "unknown option"),
    ([HEADER.replace(', "overrides": {}', '')], 1, "overrides", "missing field"),
    ([HEADER.replace('{}', '{}, "colour": "red"')], 1, "colour", "unknown field"),
    ([HEADER, '{"v": 1, "type": "step", "step": 1, "op": "fly", "args": {}}'], 2, "op", "unknown addressing operation 'fly'"),
    ([HEADER, '{"v": 1, "type": "step", "step": 2, "op": "lookup", "args": {"name": "q"}}'], 2, "step",
     "expected step number 1"),
    ([HEADER, '{"v": 1, "type": "step", "step": true, "op": "lookup", "args": {"name": "q"}}'], 2, "step",
     "expected step number 1"),
    ([HEADER, '{"v": 1, "type": "step", "step": 1, "op": "lookup", "args": {}}'], 2, "args.name", "missing field"),
    ([HEADER, '{"v": 1, "type": "step", "step": 1, "op": "lookup", "args": {"name": 3}}'], 2, "args.name",
     "expected a string"),
    ([HEADER, '{"v": 1, "type": "step", "step": 1, "op": "lookup", "args": {"name": "q", "x": 1}}'], 2,
     "args.x", "unknown field"),
    ([HEADER, '{"v": 1, "type": "step", "step": 1, "op": "lookup", "args": {"name": "q"}, "outcome": null}'], 2,
     "outcome", "expected an object"),
    ([HEADER, '{"v": 1, "type": "header", "domain": "addressing", "profile": "seed", "overrides": {}}'], 2,
     "type", "expected a step line"),
])
def test_bad_traces_are_located(lines: list[str], line: int, field: str, fragment: str) -> None:
    with pytest.raises(TraceError) as caught:
        parse_trace(lines, "bad.jsonl")
    error = caught.value
    assert (error.file, error.line, error.field) == ("bad.jsonl", line, field)
    assert fragment in error.message
    assert str(error).startswith(f"bad.jsonl:{line}")


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="cannot read the file"):
        read_trace(tmp_path / "missing.jsonl")
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(TraceError, match="not UTF-8"):
        read_trace(binary)
