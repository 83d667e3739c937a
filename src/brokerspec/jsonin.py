"""Reading JSON that comes from outside: trace lines, audit rows, SUT replies, fault lists.

Introduction
------------
Python's :func:`json.loads` is lenient where brokerspec must not be, and
fails in ways that are not :class:`json.JSONDecodeError`:

* ``NaN``, ``Infinity`` and ``-Infinity`` are accepted, though JSON has no
  such values;
* a key given twice keeps the last value silently, so ``{"v":2,"v":1}``
  reads as version 1;
* a string may hold a lone surrogate (``"\\ud800"``), which cannot be
  written out as UTF-8 later, so the failure surfaces far from the input;
* very deep nesting raises :class:`RecursionError`, and an integer of more
  than 4,300 digits a plain :class:`ValueError`.

:func:`loads` reads one JSON text and turns every one of these into a
:class:`JsonInputError` with a message a person can act on. Every place
that reads JSON from outside goes through it, so one rule holds
everywhere: a value is well-formed JSON with unique keys, nested at most
:data:`MAX_DEPTH` deep, whose integers fit in 64 bits and numbers in a double (a Java ``long``, what
the brokers themselves use) and whose strings are valid Unicode text.

Most texts cannot break a bound, and :func:`loads` reads those without
walking the value afterwards: an ASCII text with no ``\\u`` escape holds only
ASCII strings, and one with at most :data:`MAX_DEPTH` opening brackets cannot
nest deeper than that, so only a number could be out of range, and the
reader stops at any number that might be (more than 18 characters, or a
double that overflowed) and reads the text again the careful way. Either way
the answer, and the message for a text refused, is the same.
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_DEPTH = 64
"""The deepest nesting of arrays and objects accepted (a trace step needs five levels)."""

INT_MIN = -(2**63)
INT_MAX = 2**63 - 1
"""Integers must lie in a Java ``long``'s range."""


class JsonInputError(ValueError):
    """A JSON text brokerspec will not read; ``message`` says why, ``column`` where (1-based, when known)."""

    def __init__(self, message: str, column: int | None = None) -> None:
        super().__init__(message if column is None else f"{message} (column {column})")
        self.message = message
        self.column = column


def loads(text: str | bytes) -> Any:
    """The JSON value in ``text``; :class:`JsonInputError` for anything but strict, bounded JSON.

    >>> loads('{"v": 1, "names": ["a::b"]}')
    {'v': 1, 'names': ['a::b']}
    >>> loads('{"v": 2, "v": 1}')
    Traceback (most recent call last):
    ...
    brokerspec.jsonin.JsonInputError: the key 'v' appears twice in one object
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as error:
            raise JsonInputError(f"not UTF-8 text: byte 0x{text[error.start]:02x} at offset {error.start} "
                                 f"({error.reason})") from None
    quick = text.isascii() and "\\u" not in text and text.count("{") + text.count("[") <= MAX_DEPTH
    try:
        if quick:
            try:
                return _QUICK.decode(text)
            except _LookCloser:
                pass
        if text.startswith("\ufeff"):  # as json.loads refuses it
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        value = _STRICT.decode(text)
    except json.JSONDecodeError as error:
        raise JsonInputError(f"not valid JSON: {error.msg}", error.colno) from None
    except RecursionError:
        raise JsonInputError(f"nested more than {MAX_DEPTH} levels deep") from None
    except JsonInputError:
        raise
    except ValueError:  # Python's own limit on the digits of an integer it converts
        raise JsonInputError("an integer of thousands of digits, far beyond 64 bits") from None
    _check_value(value)
    return value


class _LookCloser(Exception):
    """A number that might break a bound, met by the quick reader: the text is read again and walked."""


def _small_int(digits: str) -> int:
    """An integer literal of at most 18 characters, which always fits in 64 bits; a longer one is looked at."""
    if len(digits) > 18:
        raise _LookCloser
    return int(digits)


def _finite_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise _LookCloser
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise JsonInputError(f"the key {_show(key)} appears twice in one object")
            seen.add(key)
    return result


def _no_constant(name: str) -> Any:
    raise JsonInputError(f"{name} is not a JSON value")


_STRICT = json.JSONDecoder(object_pairs_hook=_unique_keys, parse_constant=_no_constant)
"""The reader whose every value :func:`_check_value` then walks."""
_QUICK = json.JSONDecoder(object_pairs_hook=_unique_keys, parse_constant=_no_constant, parse_int=_small_int,
                          parse_float=_finite_float)
"""The quick reader, for ASCII text with no ``\\u`` escape and few brackets: such a text can break a bound
only with a number, and a number that might stops the read (:class:`_LookCloser`)."""


def _check_value(value: Any) -> None:
    """Depth and string checks, without recursion (the value may be as deep as the parser allowed)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            _check_text(item)
        elif type(item) is int and not INT_MIN <= item <= INT_MAX:
            shown = str(item) if item.bit_length() < 200 else f"of {len(str(item))} digits"
            raise JsonInputError(f"the integer {shown} does not fit in 64 bits")
        elif isinstance(item, float) and not math.isfinite(item):
            raise JsonInputError("a number too large for a double")
        elif isinstance(item, dict | list):
            if depth >= MAX_DEPTH:
                raise JsonInputError(f"nested more than {MAX_DEPTH} levels deep")
            if isinstance(item, dict):
                for key, member in item.items():
                    _check_text(key)
                    stack.append((member, depth + 1))
            else:
                stack.extend((member, depth + 1) for member in item)


def _check_text(text: str) -> None:
    if text.isascii():
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise JsonInputError(f"a string holds a lone surrogate U+{ord(text[error.start]):04X}, "
                             "which is not Unicode text") from None


def _show(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:40] + "...")
