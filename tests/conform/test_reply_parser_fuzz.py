"""Whatever a SUT writes, the reply parser answers with a reply or a SutFailure, never another exception.

Each property feeds :func:`parse_reply` (and :func:`read_hello` or
:func:`read_outcome` on what it returns) one kind of hostile input: any
text or bytes, any JSON value, deep nesting, lone surrogates, duplicate
keys, and replies that are almost right.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brokerspec.check.domains import DOMAINS
from brokerspec.codec import OUTCOMES
from brokerspec.conform.protocol import (
    MAX_REPLY_BYTES,
    FailureKind,
    Hello,
    SutFailure,
    parse_reply,
    read_hello,
    read_outcome,
)
from brokerspec.jsonin import MAX_DEPTH

FUZZ = settings(max_examples=200, deadline=None)

HELLO = {"v": 1, "type": "hello", "profile": "seed", "domains": ["addressing"]}
RESET = {"v": 1, "type": "reset", "domain": "addressing", "profile": "seed", "overrides": {}}


def op(seq: int = 1) -> dict[str, Any]:
    return {"v": 1, "type": "op", "seq": seq, "op": "lookup", "args": {"name": "q1"}}


REQUESTS = st.sampled_from([HELLO, RESET, op(1), op(7)])
DOMAIN_NAMES = st.sampled_from(sorted(DOMAINS))


def judge(line: str | bytes, request: dict[str, Any], domain: str = "addressing") -> object:
    """What brokerspec makes of ``line`` as the reply to ``request``: a Hello, an outcome, a reply, or a SutFailure.

    Any other exception escapes and fails the test. A SutFailure must quote the SUT briefly and printably.
    """
    try:
        reply = parse_reply(line, request)
        assert type(reply) is dict and type(reply["v"]) is int and reply["v"] == 1
        if request["type"] == "hello":
            return read_hello(reply)
        if request["type"] == "op":
            assert type(reply["seq"]) is int and reply["seq"] == request["seq"]
            return read_outcome(reply, request, domain)
        return reply
    except SutFailure as failure:
        assert len(failure.message) <= 2000, failure.message[:200]
        assert failure.message.isprintable(), repr(failure.message[:200])
        return failure


# --- examples --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("line", "kind"), [
    ('{"v": 1, "type": "outcome", "seq": 1.0, "outcome": {"type": "not_found", "name": "q1"}}', FailureKind.BAD_REPLY),
    ('{"v": 1, "type": "outcome", "seq": true, "outcome": {"type": "not_found", "name": "q1"}}', FailureKind.BAD_REPLY),
    ('{"v": 1.0, "type": "outcome", "seq": 1, "outcome": {"type": "not_found", "name": "q1"}}',
     FailureKind.WRONG_VERSION),
    ('{"v": true, "type": "outcome", "seq": 1, "outcome": {"type": "not_found", "name": "q1"}}',
     FailureKind.WRONG_VERSION),
    ('{"v": 1, "type": "outcome", "seq": 2, "seq": 1, "outcome": {"type": "not_found", "name": "q1"}}',
     FailureKind.GARBAGE),
    ('{"v": 1, "type": "outcome", "seq": 1, "outcome": {"type": "not_found", "name": "\\ud800"}}',
     FailureKind.GARBAGE),
    ('{"v": 1, "type": "outcome", "seq": 1, "outcome": ' + "[" * 65 + "]" * 65 + "}", FailureKind.GARBAGE),
    ('{"v": 1, "type": "outcome", "seq": 9223372036854775808, "outcome": {}}', FailureKind.GARBAGE),
    ('{"v": 1, "type": "outcome", "seq": NaN, "outcome": {}}', FailureKind.GARBAGE),
    (b'{"v": 1, "type": "outcome", "seq": 1, "outcome": {"type": "not_found", "name": "q\xff"}}',
     FailureKind.GARBAGE),
    (b"x" * (MAX_REPLY_BYTES + 1), FailureKind.GARBAGE),
])
def test_hostile_replies_get_their_kind(line: str | bytes, kind: FailureKind) -> None:
    failure = judge(line, op(1))
    assert isinstance(failure, SutFailure) and failure.kind is kind, failure


def test_a_reply_of_exactly_the_longest_line_is_read() -> None:
    head = b'{"v": 1, "type": "outcome", "seq": 1, "outcome": {"type": "not_found", "name": "q1"}}'
    line = head + b" " * (MAX_REPLY_BYTES - len(head)) + b"\n"
    assert parse_reply(line, op(1))["seq"] == 1


def test_a_right_reply_as_bytes_is_read() -> None:
    line = b'{"v": 1, "type": "hello", "name": "b\xc3\xa9", "domains": ["addressing"]}\n'
    assert judge(line, HELLO) == Hello("b\u00e9", ("addressing",), None)


# --- properties ------------------------------------------------------------------------------------------


@FUZZ
@given(st.text(), REQUESTS)
def test_any_text_is_a_reply_or_a_sut_failure(line: str, request: dict[str, Any]) -> None:
    judge(line, request)


@FUZZ
@given(st.binary(), REQUESTS)
def test_any_bytes_are_a_reply_or_a_sut_failure(line: bytes, request: dict[str, Any]) -> None:
    judge(line, request)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.integers(min_value=2**63 - 2, max_value=2**70)
    | st.integers().map(lambda n: n * 10**5000) | st.floats() | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


@FUZZ
@given(JSON, REQUESTS)
def test_any_json_value_is_a_reply_or_a_sut_failure(value: object, request: dict[str, Any]) -> None:
    judge(_dumps(value), request)


@FUZZ
@given(st.integers(min_value=1, max_value=200_000), st.sampled_from(["[", '{"a":']), REQUESTS)
def test_deep_nesting_is_garbage_beyond_the_limit(depth: int, opener: str, request: dict[str, Any]) -> None:
    closer = "]" if opener == "[" else "}"
    line = '{"v": 1, "type": "outcome", "seq": 1, "outcome": ' + opener * depth + "1" * (opener != "[") + \
        closer * depth + "}"
    result = judge(line, request)
    if depth + 1 > MAX_DEPTH:
        assert isinstance(result, SutFailure) and result.kind is FailureKind.GARBAGE, result


@FUZZ
@given(st.integers(min_value=0xD800, max_value=0xDFFF), st.sampled_from(["name", "type", "key"]), REQUESTS)
def test_a_lone_surrogate_is_garbage(code: int, where: str, request: dict[str, Any]) -> None:
    escape = f"\\u{code:04x}"
    fields = {"name": f'"name": "q{escape}"', "type": f'"type": "not_found{escape}", "name": "q"',
              "key": f'"{escape}": 1, "type": "not_found", "name": "q"'}
    line = '{"v": 1, "type": "outcome", "seq": 1, "outcome": {' + fields[where] + "}}"
    result = judge(line, request)
    assert isinstance(result, SutFailure) and result.kind is FailureKind.GARBAGE, result


@FUZZ
@given(st.dictionaries(st.sampled_from(["v", "type", "seq", "outcome", "x"]), JSON, min_size=1),
       st.data(), REQUESTS)
def test_a_duplicate_key_is_garbage(members: dict[str, object], data: st.DataObject,
                                    request: dict[str, Any]) -> None:
    twice = data.draw(st.sampled_from(sorted(members)))
    again = data.draw(JSON)
    body = ", ".join(f"{json.dumps(key)}: {_dumps(value)}" for key, value in members.items())
    line = "{" + body + f", {json.dumps(twice)}: {_dumps(again)}" + "}"
    result = judge(line, request)
    assert isinstance(result, SutFailure) and result.kind is FailureKind.GARBAGE, result


def outcomes(domain: str) -> st.SearchStrategy[object]:
    """Outcome objects of ``domain``'s kinds with some of their fields, holding any JSON value; or any value."""
    def shaped(kind: str) -> st.SearchStrategy[object]:
        names = [f.name for f in dataclasses.fields(OUTCOMES[domain][kind])]
        fields = st.dictionaries(st.sampled_from([*names, "rule", "extra"]) if names else st.just("rule"), JSON)
        return fields.map(lambda chosen: {"type": kind, **chosen})
    return st.sampled_from(sorted(OUTCOMES[domain])).flatmap(shaped) | JSON


@FUZZ
@given(DOMAIN_NAMES.flatmap(lambda domain: st.tuples(st.just(domain), outcomes(domain))),
       st.integers(min_value=1, max_value=50))
def test_an_almost_right_outcome_reply_is_an_outcome_or_a_sut_failure(domain_and_outcome: tuple[str, object],
                                                                      seq: int) -> None:
    domain, outcome = domain_and_outcome
    line = _dumps({"v": 1, "type": "outcome", "seq": seq, "outcome": outcome})
    result = judge(line, op(seq), domain)
    assert not isinstance(result, SutFailure) or result.kind in (FailureKind.BAD_REPLY, FailureKind.GARBAGE)


@FUZZ
@given(JSON | st.text(), JSON | st.lists(st.text()), JSON | st.lists(st.text()) | st.just(None), st.booleans())
def test_an_almost_right_hello_is_a_hello_or_a_sut_failure(name: object, domains: object, profiles: object,
                                                           with_profiles: bool) -> None:
    reply: dict[str, object] = {"v": 1, "type": "hello", "name": name, "domains": domains}
    if with_profiles:
        reply["profiles"] = profiles
    result = judge(_dumps(reply), HELLO)
    assert isinstance(result, Hello) or isinstance(result, SutFailure) and result.kind in (
        FailureKind.BAD_REPLY, FailureKind.GARBAGE)


@FUZZ
@given(JSON, st.one_of(st.none(), st.booleans(), st.floats(), st.integers(), st.text()), st.integers(1, 50))
def test_a_sequence_number_is_the_json_integer_asked_for(outcome: object, seq: object, asked: int) -> None:
    line = _dumps({"v": 1, "type": "outcome", "seq": seq, "outcome": outcome})
    result = judge(line, op(asked))
    if type(seq) is not int or seq != asked:
        assert isinstance(result, SutFailure) and result.kind in (FailureKind.BAD_REPLY, FailureKind.GARBAGE)


def _dumps(value: object) -> str:
    """``value`` as a JSON text, integers of thousands of digits included (``str`` refuses them by default)."""
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        return json.dumps(value)
    finally:
        sys.set_int_max_str_digits(limit)
