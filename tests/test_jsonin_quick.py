"""The quick read of plainly bounded JSON texts answers exactly as reading and walking every value does.

:func:`brokerspec.jsonin.loads` skips the walk of the value for ASCII text without ``\\u`` escapes and
with few brackets, and stops at any number that might be out of range. The oracle here is the careful
read alone (``json.loads`` with the same hooks, then the walk): both must give the same value or the same
refusal, for texts drawn near every bound.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brokerspec import jsonin


def careful(text: str) -> tuple[str, Any]:
    """What reading ``text`` the careful way gives: the value, or the refusal's message."""
    try:
        if text.startswith("\ufeff"):
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        value = jsonin._STRICT.decode(text)
        jsonin._check_value(value)
    except json.JSONDecodeError as error:
        return "refused", str(jsonin.JsonInputError(f"not valid JSON: {error.msg}", error.colno))
    except RecursionError:
        return "refused", f"nested more than {jsonin.MAX_DEPTH} levels deep"
    except jsonin.JsonInputError as error:
        return "refused", str(error)
    except ValueError:
        return "refused", "an integer of thousands of digits, far beyond 64 bits"
    return "value", value


def quick(text: str) -> tuple[str, Any]:
    try:
        return "value", jsonin.loads(text)
    except jsonin.JsonInputError as error:
        return "refused", str(error)


NUMBERS = st.one_of(
    st.integers(-(2**64), 2**64).map(str),
    st.sampled_from([str(2**63 - 1), str(2**63), str(-(2**63)), str(-(2**63) - 1), "9" * 18, "-" + "9" * 18,
                     "1" + "0" * 18, "1e308", "1e309", "-1e309", "1.5E+400", "2.5", "0.0", "1" * 400 + ".0",
                     "1" * 5000, "NaN", "Infinity", "-Infinity", "1" + "0" * 4299]))
PIECES = st.one_of(NUMBERS, st.sampled_from(['"a"', '"\\ud800"', '"\\u00e9"', '"é"', '"a\\\\u"', "true", "null",
                                             '"\\ud83d\\ude00"', '"\ufeff"']))


@st.composite
def texts(draw: st.DrawFn) -> str:
    """A JSON-ish text: nested arrays and objects of drawn pieces, sometimes with a repeated key or a flaw."""
    depth = draw(st.sampled_from([0, 1, 3, 63, 64, 65]))
    items = draw(st.lists(PIECES, min_size=1, max_size=4))
    body = "{" + ", ".join(f'"k{draw(st.integers(0, 3))}": {item}' for item in items) + "}"
    if draw(st.booleans()):
        body = "[" + ", ".join(items) + "]"
    text = "[" * depth + body + "]" * depth
    flaw = draw(st.sampled_from(["", "", "", " x", ",", "\ufeff"]))
    return flaw + text if flaw == "\ufeff" else text + flaw


@settings(max_examples=400, deadline=None)
@given(text=texts())
def test_the_quick_read_answers_as_the_careful_one(text: str) -> None:
    assert quick(text) == careful(text)


@pytest.mark.parametrize("text", [
    '{"v": 1, "n": ' + str(2**63) + "}", '{"v": 1, "n": 1e400}', '{"a": "\\ud800"}', "[" * 65 + "]" * 65,
    '{"v": 1, "v": ' + "9" * 5000 + "}", '{"n": ' + "9" * 5000 + ', "n": 1}',
])
def test_texts_near_a_bound_are_refused_as_before(text: str) -> None:
    assert quick(text) == careful(text) and quick(text)[0] == "refused"


def test_a_plain_line_is_read_without_walking_its_value(monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk is what the quick read saves: a plain trace line never reaches it."""
    walked: list[object] = []
    monkeypatch.setattr(jsonin, "_check_value", walked.append)
    line = ('{"v": 1, "type": "step", "step": 12, "op": "lookup", "args": {"name": "a1::q1"}, '
            '"outcome": {"type": "not_found", "name": "a1::q1"}}')
    assert jsonin.loads(line)["args"] == {"name": "a1::q1"}
    assert walked == []
    jsonin.loads('{"name": "\\u00e9"}')
    assert len(walked) == 1
