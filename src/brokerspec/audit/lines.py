"""Reading each distinct step line once: a line that differs from one already read only in its history and step.

Introduction
------------
A recorded history repeats itself. Over a corpus, most step lines differ
from an earlier line only in the ``history`` name and the ``step`` number:
the same operation with the same arguments and the same outcome (in the
generated corpora of ``brokerspec generate`` 80-95% of them). Reading such
a line (the JSON, the checks, decoding its command and outcome) costs more
than the spec's rule it is replayed through, so the audit reads each
distinct *rest* once and keeps what it gave.

A step line is split only when it starts exactly as brokerspec writes one
(:data:`STEP_START`): ``{"v": 1, "type": "step", "history": "H", "step": N,``
and one space, with ``H`` of letters, digits and ``_.:@/+=-`` and ``N`` a
step number of at most 18 digits. Read from the line's first character,
those are the object's first four members, whatever follows: none of them
can be part of a string. So two lines with the same rest are the same JSON
object but for those two values, and whatever reading the first gave, the
second gives the same, with its own history and step. Any other line, and
any line whose rest has not been read, is read the full way, which also
gives every error. Only lines read without error are kept, at most
:data:`KEPT` rests per reader.

Splitting and looking up a line that turns out to be new costs about a
sixth of reading it. So a reader that has found fewer than one line in
:data:`WORTH` already read after its first :data:`TRIAL` lines stops
looking (:attr:`ReadOnce.useful`), and a corpus of all different lines is
read at the old cost.
"""

from __future__ import annotations

import re
from typing import Generic, TypeVar

from ..trace import SCHEMA_VERSION

STEP_START = re.compile(
    r'\{"v": ' + str(SCHEMA_VERSION) + r', "type": "step", "history": "([A-Za-z0-9_.:@/+=-]{1,200})", '
    r'"step": ([1-9][0-9]{0,17}), ')
"""The start of a step line as brokerspec writes one (``json.dumps`` with its default separators)."""

KEPT = 8192
"""Distinct rests a :class:`ReadOnce` keeps; when full it forgets them all and starts again."""

TRIAL = 1024
"""Lines a :class:`ReadOnce` looks up before it judges whether looking up is worth it."""

WORTH = 4
"""Looking up goes on while at least one line in this many was read before."""

V = TypeVar("V")


def split_step(text: str) -> tuple[str, int, str] | None:
    """``(history, step, rest)`` of a line that starts as :data:`STEP_START`; None for any other line.

    >>> split_step('{"v": 1, "type": "step", "history": "h7", "step": 3, "op": "lookup"}')
    ('h7', 3, '"op": "lookup"}')
    >>> split_step('{"type": "step", "v": 1, "history": "h7", "step": 3, "op": "lookup"}') is None
    True
    """
    start = STEP_START.match(text)
    if start is None:
        return None
    return start.group(1), int(start.group(2)), text[start.end():]


class ReadOnce(Generic[V]):
    """What reading each rest gave (one domain's, or the keyer's), for rests read before."""

    def __init__(self, limit: int = KEPT) -> None:
        self.limit = max(1, limit)
        self.known: dict[tuple[str, str], V] = {}
        self.tries = self.hits = 0

    @property
    def useful(self) -> bool:
        """Whether lines should still be looked up: during the trial, then while enough are found."""
        return self.tries < TRIAL or self.hits * WORTH >= self.tries

    def get(self, kind: str, rest: str) -> V | None:
        """What the rest gave when read as ``kind``, or None when it has not been read."""
        self.tries += 1
        found = self.known.get((kind, rest))
        if found is not None:
            self.hits += 1
        return found

    def keep(self, kind: str, rest: str, value: V) -> None:
        """Remember what reading ``rest`` as ``kind`` gave (it was read without error)."""
        if len(self.known) >= self.limit:
            self.known.clear()
        self.known[(kind, rest)] = value
