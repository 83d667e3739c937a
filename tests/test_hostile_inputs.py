"""Hostile input files: every one is refused with ``FILE:LINE: message`` and exit 2, none gives a traceback.

Each attack below is one that once got through: JSON that Python's reader handles badly (deep nesting,
huge integers, duplicate keys, NaN, lone surrogates), option values that ``int()`` takes too kindly, and
files that cannot be read at all.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brokerspec import jsonin
from brokerspec.cli import main
from brokerspec.spec import BrokerspecError, get_profile
from brokerspec.spec.profiles import INT_OPTION_MAX
from brokerspec.trace import TraceError, parse_trace, read_trace

HEADER = {"v": 1, "type": "header", "domain": "addressing", "profile": "seed", "overrides": {}}
STEP = {"v": 1, "type": "step", "step": 1, "op": "lookup", "args": {"name": "q1"}}


def text_of(*records: object) -> str:
    return "\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n"


# --- the one reader ---------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "says"), [
    ('{"v": 2, "v": 1}', "the key 'v' appears twice"),
    ("NaN", "NaN is not a JSON value"),
    ("[-Infinity]", "-Infinity is not a JSON value"),
    ("[1e999]", "too large for a double"),
    ('"\\ud800"', "lone surrogate U+D800"),
    ('{"\\udfff": 1}', "lone surrogate U+DFFF"),
    ("[" * 65 + "]" * 65, "nested more than 64 levels"),
    ("[" * 200_000 + "]" * 200_000, "nested more than 64 levels"),
    ("1" + "0" * 5000, "thousands of digits"),
    (str(2**63), "does not fit in 64 bits"),
    (str(-(2**63) - 1), "does not fit in 64 bits"),
    (b'"\xff"', "not UTF-8 text: byte 0xff at offset 1"),
    ('{"a": 1} x', "not valid JSON: Extra data (column 10)"),
])
def test_the_reader_refuses_each_hostile_text_with_a_reason(text: str | bytes, says: str) -> None:
    with pytest.raises(jsonin.JsonInputError) as caught:
        jsonin.loads(text)
    assert says in str(caught.value)


def test_the_reader_keeps_what_is_strict_json() -> None:
    assert jsonin.loads('{"a": [1, 2.5, "\\ud83d\\ude00", null, true]}') == {"a": [1, 2.5, "\U0001F600", None, True]}
    assert jsonin.loads(str(2**63 - 1)) == 2**63 - 1 and jsonin.loads(str(-(2**63))) == -(2**63)
    nested = "[" * 64 + "]" * 64
    assert jsonin.loads(nested) is not None


# --- the trace reader --------------------------------------------------------------------------


@pytest.mark.parametrize(("line", "says"), [
    ("[" * 100_000 + "]" * 100_000, "nested more than 64 levels"),
    ('{"v": 1, "type": "step", "step": 1, "op": "lookup", "args": {"name": "q1"}, "x": ' + "9" * 5000 + "}",
     "thousands of digits"),
    ('{"v": 1, "type": "step", "step": 1, "op": "lookup", "args": {"name": "q\\ud800"}}', "lone surrogate"),
    ('{"v": 1, "type": "step", "step": 1, "step": 1, "op": "lookup", "args": {"name": "q"}}',
     "the key 'step' appears twice"),
    ('{"v": 1, "type": "step", "step": 1.0, "op": "lookup", "args": {"name": "q"}}', "expected step number 1"),
    ('{"v": 1, "type": "step", "step": 1, "op": "lookup", "args": {"name": NaN}}', "NaN is not a JSON value"),
])
def test_a_hostile_step_line_is_refused_at_its_line(line: str, says: str) -> None:
    with pytest.raises(TraceError) as caught:
        parse_trace(text_of(HEADER, line).split("\n"), "t.jsonl")
    assert caught.value.line == 2 and says in str(caught.value)
    assert str(caught.value).startswith("t.jsonl:2")


def test_a_duplicate_version_key_is_not_read_as_the_last_one() -> None:
    header = '{"v": 2, "type": "header", "domain": "addressing", "profile": "seed", "overrides": {}, "v": 1}'
    with pytest.raises(TraceError, match=r"^t\.jsonl:1: the key 'v' appears twice"):
        parse_trace([header], "t.jsonl")


@pytest.mark.parametrize(("value", "says"), [
    ("1_0", "digits 0-9"),
    ("\u0661\u0662", "digits 0-9"),  # Arabic-Indic digits: int() reads them as 12
    ("12.0", "digits 0-9"),
    ("-3", "0 or more"),
    (str(INT_OPTION_MAX + 1), "at most 2,147,483,647"),
    ("9" * 5000, "at most 2,147,483,647"),
])
def test_whole_number_options_take_ascii_digits_up_to_the_bound(value: str, says: str) -> None:
    with pytest.raises(BrokerspecError, match=says):
        get_profile("seed").with_option("duplicates.id_cache_size", value)
    header = {**HEADER, "domain": "duplicates", "overrides": {"duplicates.id_cache_size": value}}
    with pytest.raises(TraceError, match=r"^t\.jsonl:1: overrides\.duplicates\.id_cache_size: .*" + says):
        parse_trace([json.dumps(header)], "t.jsonl")


def test_the_bound_itself_is_accepted() -> None:
    profile = get_profile("seed").with_option("duplicates.id_cache_size", f" {INT_OPTION_MAX} ")
    assert profile.duplicates.id_cache_size == INT_OPTION_MAX


def test_check_refuses_an_option_beyond_its_bound_as_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", "--domain", "duplicates", "--budget", "1s", "--set",
                 f"duplicates.id_cache_size={INT_OPTION_MAX + 1}"])
    err = capsys.readouterr().err
    assert code == 2 and "at most 2,147,483,647" in err and "Traceback" not in err


def test_an_unreadable_file_is_named_without_a_line_zero(tmp_path: Path) -> None:
    for path in (tmp_path / "missing.jsonl", tmp_path):
        with pytest.raises(TraceError) as caught:
            read_trace(path)
        assert str(caught.value).startswith(f"{path}: cannot read the file"), str(caught.value)
        assert ":0" not in str(caught.value)


@pytest.mark.parametrize("command", ["replay", "explain"])
def test_the_commands_turn_a_hostile_trace_into_file_line_and_exit_2(
        command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(text_of(HEADER, "[" * 100_000 + "]" * 100_000))
    assert main([command, str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:2: nested more than 64 levels" in err and "Traceback" not in err


# --- fuzzing the trace reader -------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20)
field_names = st.sampled_from(["v", "type", "step", "op", "args", "outcome", "history", "domain", "profile",
                               "overrides", "note", "name"])
almost_steps = st.fixed_dictionaries(
    {"v": st.sampled_from([1, 1.0, True, 2]), "type": st.sampled_from(["step", "header", 7]),
     "step": st.sampled_from([1, 2, 1.0, "1", None]), "op": st.sampled_from(["lookup", "send", "nope", 3]),
     "args": st.dictionaries(field_names, json_values, max_size=3)},
    optional={"outcome": st.dictionaries(st.sampled_from(["type", "name", "reason", "rule"]), json_values,
                                         max_size=3)}).map(json.dumps)
hostile_texts = st.sampled_from([
    "[" * 5000 + "]" * 5000, "1" * 5000, '"\\ud800"', '{"v": 1, "v": 1}', "NaN", "\x00", "\ufeff{}", "{}\u2028"])
lines = st.one_of(st.text(max_size=40), json_values.map(json.dumps), almost_steps, hostile_texts)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(header=st.one_of(st.just(json.dumps(HEADER)), lines), body=st.lists(lines, max_size=4))
def test_no_trace_text_yields_anything_but_a_trace_or_a_trace_error(header: str, body: list[str]) -> None:
    text = "\n".join([header, *body])
    try:
        trace = parse_trace(text.split("\n"), "fuzz.jsonl")
    except TraceError as error:
        assert str(error).startswith("fuzz.jsonl")
        return
    assert trace.profile.name == "seed" and len(trace.steps) <= len(body)
