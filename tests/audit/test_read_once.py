"""Reading each distinct step line once gives exactly what reading every line gives, errors included."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brokerspec.audit import histories, lines
from brokerspec.audit.histories import audit_history_rows, step_key
from brokerspec.audit.lines import ReadOnce, split_step

HEADER = {"v": 1, "type": "header", "domain": "duplicates", "profile": "artemis-latest", "overrides": {}}


def step_text(history: str, number: int, rest: str) -> str:
    return f'{{"v": 1, "type": "step", "history": "{history}", "step": {number}, {rest}'


GOOD_RESTS = [
    '"op": "create_queue", "args": {"address": "a", "queue": "q"}, "outcome": {"type": "done"}}',
    '"op": "begin", "args": {"session": "s"}, "outcome": {"type": "done"}}',
    '"op": "begin", "args": {"session": "s"}, "outcome": {"type": "in_transaction", "session": "s"}}',
    '"op": "commit", "args": {"session": "s"}, "outcome": {"type": "committed", "messages": []}}',
    '"op": "rollback", "args": {"session": "s"}, "outcome": {"type": "done"}}',
    ('"op": "send", "args": {"session": "s", "address": "a", "duplicate_id": {"kind": "string", "value": "k"}, '
     '"bridge_id": null, "reject_duplicates": true, "address_full": false}, "outcome": {"type": "done"}}'),
]
BAD_RESTS = [
    '"op": "begin", "args": {"session": 5}, "outcome": {"type": "done"}}',  # a wrong type
    '"op": "begin", "args": {"session": "s"}, "outcome": {"type": "done"}, "op": "commit"}',  # a key twice
    '"op": "begin", "args": {"session": "s"}, "outcome": {"type": "done"}} trailing',
    '"op": "begin", "args": {"session": "s"}, "outcome": {"type": "done"}, "history": "other"}',
    '"op": "begin", "args": {"session": "s"}, "outcome": {"type": "done"}, "step": 1}',
    '"op": "fly", "args": {}, "outcome": {"type": "done"}}',
    '"op": "begin", "args": {"session": "s"}}',  # no outcome: read, and never compared
]
NAMES = ["h", "h-2", "a.b:c@d/e+f=g_h", "x" * 200]


def test_a_line_is_split_only_when_it_starts_as_brokerspec_writes_one() -> None:
    rest = GOOD_RESTS[1]
    assert split_step(step_text("h-1", 12, rest)) == ("h-1", 12, rest)
    assert split_step(json.dumps({"v": 1, "type": "step", "history": "h", "step": 3, "op": "x"})) == ("h", 3,
                                                                                                     '"op": "x"}')
    for text in [
        step_text("h", 0, rest), step_text("h", 10**18, rest), step_text("x" * 201, 1, rest),
        step_text('h\\"', 1, rest), step_text("h\\u0041", 1, rest), step_text("é", 1, rest),
        step_text("", 1, rest), step_text("h", 1, rest).replace('"v": 1', '"v": 2'),
        '{"v":1,"type":"step","history":"h","step":1,"op":"x"}', ' ' + step_text("h", 1, rest),
        step_text("h", 1, rest).replace('"step": 1', '"step": 01'),
        step_text("h", 1, rest).replace('"step": 1', '"step": 1.0'),
    ]:
        assert split_step(text) is None, text


def _rows(texts: list[str]) -> list[tuple[str, int, str, int, str]]:
    """Rows as the keyer makes them, sorted as the replay wants them."""
    keyed = [(step_key(text), text) for text in texts]
    return sorted(((h or "f.jsonl", s if s is not None else 0, "f.jsonl", n, text)
                   for n, ((h, s, _), text) in enumerate(keyed, 1)), key=lambda r: (r[0], r[1], r[3]))


def _read_every_line(monkeypatch: pytest.MonkeyPatch, texts: list[str]) -> list[tuple[object, ...]]:
    with monkeypatch.context() as patch:
        patch.setattr(histories, "ReadOnce", lambda: None)
        return list(audit_history_rows(_rows(texts)))


@st.composite
def corpora(draw: st.DrawFn) -> list[str]:
    """Histories whose step lines come from a few rests, some bad, some with a step out of order."""
    texts: list[str] = []
    for history in draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=4, unique=True)):
        domain = draw(st.sampled_from(["duplicates", "duplicates", "addressing"]))  # rests decode differently
        texts.append(json.dumps({**HEADER, "history": history, "domain": domain}))
        for number in range(1, draw(st.integers(1, 12)) + 1):
            rest = draw(st.sampled_from(GOOD_RESTS) if draw(st.integers(0, 9)) else st.sampled_from(BAD_RESTS))
            shown = number + 1 if draw(st.integers(0, 19)) == 0 else number
            texts.append(step_text(history, shown, rest))
    return texts


@settings(max_examples=150, deadline=None)
@given(texts=corpora(), limit=st.sampled_from([1, 2, 8192]))
def test_the_replay_gives_what_reading_every_line_gives(texts: list[str], limit: int) -> None:
    with pytest.MonkeyPatch.context() as patch:
        expected = _read_every_line(patch, texts)
        patch.setattr(histories, "ReadOnce", lambda: ReadOnce(limit))
        assert list(audit_history_rows(_rows(texts))) == expected


@settings(max_examples=100, deadline=None)
@given(texts=corpora())
def test_the_keyer_gives_what_reading_every_line_gives(texts: list[str]) -> None:
    seen: ReadOnce[bool] = ReadOnce()
    for text in texts + texts:
        assert step_key(text, seen) == step_key(text)
    kept = any(split_step(text) is not None and step_key(text)[2] is None for text in texts)
    assert (seen.hits > 0) == kept, "the second time round, every line kept the first time is found"


def test_repeated_lines_are_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[str] = []
    from brokerspec.trace import load_line as real

    def counting(text: str, source: str, number: int) -> dict[str, Any]:
        reads.append(text)
        return real(text, source, number)

    monkeypatch.setattr(histories, "load_line", counting)
    texts = [json.dumps({**HEADER, "history": f"h{n}"}) for n in range(3)]
    texts += [step_text(f"h{n}", 1, GOOD_RESTS[0]) for n in range(3)]
    results = list(audit_history_rows(_rows(texts)))
    assert [r[0] for r in results] == ["summary"] * 3 and all(r[3] == 0 for r in results)
    assert len(reads) == 3 + 1, "three headers and the one distinct step line"


def test_a_reader_that_finds_nothing_stops_looking() -> None:
    seen: ReadOnce[bool] = ReadOnce()
    for number in range(lines.TRIAL):
        assert seen.useful
        assert seen.get("key", f"rest {number}") is None
    assert not seen.useful
    full: ReadOnce[bool] = ReadOnce(limit=2)
    for number in range(3):
        full.keep("key", f"rest {number}", True)
    assert len(full.known) == 1, "a full reader forgets what it kept and starts again"
