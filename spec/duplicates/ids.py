"""Duplicate IDs: the values a client may set, and the cache key each becomes.

Introduction
------------
A client asks for duplicate detection by setting the message property
``_AMQ_DUPL_ID``; a bridge sets ``_AMQ_BRIDGE_DUP`` (``Message.HDR_DUPLICATE_DETECTION_ID``,
``HDR_BRIDGE_DUPLICATE_ID``). The broker turns
the property's value into a byte string and compares IDs byte by byte on the
whole array, with no normalisation (DUP-ID-KEY). This module models the value
types a property can hold and computes that byte string, the *cache key*.

The conversion (``Message.getDuplicateIDBytes`` in Artemis, the same in
2.11.0 and later; seed 001):

* a ``String`` becomes a ``SimpleString`` first; a ``SimpleString`` keeps
  each UTF-16 code unit as two bytes, low byte first, so ``"ab"`` is
  ``61 00 62 00``;
* a ``byte[]`` is used as it is;
* any other value (a ``Long`` set with ``putLongProperty``) is cast to
  ``byte[]`` and the cast fails: the send fails (DUP-ID-KEY).

Consequences the spec keeps: ``String "X"``, ``SimpleString "X"`` and the
bytes ``58 00`` are one ID; the UTF-8 bytes ``58`` are a different ID.

In commands an ID is a :class:`DuplicateId`: a kind and a text. For bytes the
text is hexadecimal (``"5800"``); for a long it is decimal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from ..errors import InvalidCommand


class IdKind(Enum):
    """The Java type of the duplicate-ID property's value (DUP-ID-KEY)."""

    STRING = "string"
    SIMPLE_STRING = "simple_string"
    BYTES = "bytes"
    LONG = "long"


_HEX = re.compile(r"(?:[0-9a-f]{2})*")
_DECIMAL = re.compile(r"-?[0-9]+")


@dataclass(frozen=True)
class DuplicateId:
    """One duplicate-ID property value, e.g. ``DuplicateId(IdKind.STRING, "order-7")``.

    Raises :class:`InvalidCommand` when ``value`` cannot be a value of ``kind``
    (bytes must be lower-case hexadecimal with an even number of digits; a
    long must be a decimal integer).
    """

    kind: IdKind
    value: str

    def __post_init__(self) -> None:
        if self.kind is IdKind.BYTES and not _HEX.fullmatch(self.value):
            raise InvalidCommand(f"a bytes duplicate ID is written as lower-case hex pairs, not {self.value!r}",
                                 "value")
        if self.kind is IdKind.LONG and not _DECIMAL.fullmatch(self.value):
            raise InvalidCommand(f"a long duplicate ID is written as a decimal integer, not {self.value!r}", "value")

    def __str__(self) -> str:
        return f"{self.kind.value}:{self.value}"


def encode_simple_string(text: str) -> bytes:
    """The bytes a ``SimpleString`` holds for ``text``: UTF-16 code units, low byte first (DUP-ID-KEY).

    post: len(__return__) % 2 == 0
    post: len(__return__) >= 2 * len(text)

    >>> encode_simple_string("ab").hex()
    '61006200'
    """
    return text.encode("utf-16-le", "surrogatepass")


def compute_cache_key(duplicate_id: DuplicateId) -> bytes | None:
    """The byte string the broker compares, or None when the value is not convertible (DUP-ID-KEY).

    post: (__return__ is None) == (duplicate_id.kind == IdKind.LONG)

    >>> compute_cache_key(DuplicateId(IdKind.STRING, "X")) == compute_cache_key(DuplicateId(IdKind.BYTES, "5800"))
    True
    >>> compute_cache_key(DuplicateId(IdKind.STRING, "X")) == compute_cache_key(DuplicateId(IdKind.BYTES, "58"))
    False
    """
    if duplicate_id.kind in (IdKind.STRING, IdKind.SIMPLE_STRING):
        return encode_simple_string(duplicate_id.value)
    if duplicate_id.kind is IdKind.BYTES:
        return bytes.fromhex(duplicate_id.value)
    return None


def describe_key(key: bytes) -> str:
    """A cache key for people: its text when it is a whole ``SimpleString``, else its hex.

    >>> describe_key(encode_simple_string("x1"))
    "'x1'"
    >>> describe_key(bytes.fromhex("78"))
    '0x78'
    """
    if len(key) % 2 == 0:
        try:
            text = key.decode("utf-16-le")
        except UnicodeDecodeError:
            text = ""
        if text and text.isprintable() and encode_simple_string(text) == key:
            return repr(text)
    return "0x" + key.hex() if key else "0x(empty)"
