"""Balancing traces: what dump_trace writes validates against the schema and reads back equal; replay works."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped, unused-ignore]
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brokerspec.check.domains import BALANCING
from brokerspec.codec import CodecError, decode_outcome, encode_outcome
from brokerspec.replay import replay
from brokerspec.spec import get_profile
from brokerspec.spec.balancing import (
    BalancingCommand,
    Delivered,
    Redistributed,
    RoutingStatus,
    Sent,
    apply,
    initial_state,
)
from brokerspec.trace import Trace, TraceError, TraceStep, dump_trace, parse_trace, read_trace, write_trace
from balancing_cases import cluster, commands

SCHEMA: dict[str, Any] = json.loads((files("brokerspec") / "schemas" / "trace-v1.schema.json").read_text("utf-8"))
VALIDATOR: Any = jsonschema.Draft202012Validator(SCHEMA)


def spec_trace(script: list[BalancingCommand], profile: str = "artemis-latest") -> Trace:
    state = initial_state(get_profile(profile))
    steps = []
    for command in script:
        state, outcome = apply(state, command)
        steps.append(TraceStep(command, outcome))
    return Trace(get_profile(profile), tuple(steps), domain="balancing")


@settings(max_examples=60, deadline=None)
@given(st.lists(commands, min_size=1, max_size=20))
def test_balancing_traces_validate_and_round_trip(script: list[BalancingCommand]) -> None:
    trace = spec_trace(script)
    text = dump_trace(trace)
    for line in text.splitlines():
        errors = list(VALIDATOR.iter_errors(json.loads(line)))
        assert errors == [], (line, [e.message for e in errors])
    assert parse_trace(text.splitlines(), "t.jsonl") == trace


def test_events_are_written_with_their_type() -> None:
    outcome = Sent(4, RoutingStatus.OK, (Delivered(4, "n1", "q", None), Redistributed(4, "n1", "q", 5, "n2", "q")))
    data = encode_outcome(outcome)
    assert [e["type"] for e in data["events"]] == ["delivered", "redistributed"]
    assert decode_outcome(data, domain="balancing") == outcome
    data["events"][0]["type"] = "teleported"
    with pytest.raises(CodecError, match=r"outcome\.events\[0\]\.type"):
        decode_outcome(data, domain="balancing")


def test_a_balancing_trace_replays_against_reference_and_impl(tmp_path: Path) -> None:
    from brokerspec.spec.balancing import Attach, LbType, Send

    script = [*cluster(3, LbType.ON_DEMAND, 0), Send("n1", "a1"), Attach("c", "n2", "a1"), Send("n3", "a1")]
    path = write_trace(tmp_path / "b.jsonl", spec_trace(script))
    report = replay(read_trace(path), BALANCING.layers)
    assert report.first_difference is None


def test_schema_and_reader_both_refuse_an_empty_filter() -> None:
    line = {"v": 1, "type": "step", "step": 1, "op": "attach",
            "args": {"consumer": "c1", "node": "n1", "queue": "q1", "filter": ""}}
    assert [e.message for e in VALIDATOR.iter_errors(line)]
    header = json.dumps({"v": 1, "type": "header", "domain": "balancing", "profile": "seed", "overrides": {}})
    with pytest.raises(TraceError, match="args.filter"):
        parse_trace([header, json.dumps(line)], "t.jsonl")
