"""The divergences the report lists one by one, each with a trace that ``explain`` and ``replay`` read.

Introduction
------------
A history in an audited corpus is rarely a trace file of its own: a corpus
file holds many histories, told apart by their ``history`` field. So for
every history among the listed divergences the audit writes
``DIR/traces/HISTORY.jsonl``: the history's header and its steps up to the
last listed divergence, with the outcomes the broker recorded, and a note
naming the history. ``brokerspec explain`` on it shows the spec's state and
the deciding rule at each step; ``brokerspec replay`` on it runs the steps
through the spec, the reference and the fast implementation and stops at
the first recorded outcome the spec disagrees with. Trace files are written
with :func:`brokerspec.trace.write_new_trace`, so a second audit into the
same folder never overwrites the first one's.

Duplicate-detection streams are rows per address, not traces: a listed
stream divergence names its file and line instead.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..trace import TraceError, parse_trace, write_new_trace
from .inputs import HISTORIES
from .tables import HistoryLines, Tables


@dataclass(frozen=True)
class Listed:
    """One listed divergence and the trace written for its history (None for streams)."""

    history: str
    step: int
    operation: str
    expected: str
    observed: str
    rules: tuple[str, ...]
    file: str
    line: int
    trace: Path | None
    why_no_trace: str = ""

    def commands(self) -> tuple[str, str] | None:
        """The ``brokerspec explain`` and ``brokerspec replay`` commands for this divergence, quoted."""
        if self.trace is None:
            return None
        quoted = shlex.quote(str(self.trace))
        return f"brokerspec explain {quoted}", f"brokerspec replay {quoted}"


def trace_name(history: str) -> str:
    """A file name for a history's trace: the name with anything but letters, digits, ``.-_`` as ``_``.

    >>> trace_name("corpus/part 1.jsonl")
    'corpus_part_1.jsonl.jsonl'
    """
    return re.sub(r"[^A-Za-z0-9._-]", "_", history)[:100].lstrip(".") + ".jsonl"


def history_text(lines: list[tuple[int, str, int, str]], last_step: int) -> list[str]:
    """The lines of a history from its header up to ``last_step``, one per step, in step order.

    When two lines claim one step, the first in (file, line) order is the one
    the replay judged; the other was quarantined, so it is left out.
    """
    kept: dict[int, str] = {}
    for step, _, _, text in sorted(lines):
        if step <= last_step and step not in kept:
            kept[step] = text
    return [kept[step] for step in sorted(kept)]


def write_traces(tables: Tables, out: Path, mode: str) -> list[Listed]:
    """Write a trace per history among ``tables.listed`` under ``out/traces``; the listing in order."""
    paths: dict[str, Path | str] = {}
    if mode == HISTORIES:
        last: dict[str, int] = {}
        for row in tables.listed:
            last[str(row["history"])] = max(last.get(str(row["history"]), 0), int(row["step"]))
        for history, step in last.items():
            paths[history] = _write_one(history, step, tables.history_lines, out)
    listing = []
    for row in tables.listed:
        where = paths.get(str(row["history"]), "a stream row is no trace: see its file and line")
        listing.append(_listed(row, where if isinstance(where, Path) else None,
                               where if isinstance(where, str) else ""))
    return listing


def _write_one(history: str, step: int, lines: HistoryLines, out: Path) -> Path | str:
    text = history_text(lines.get(history, []), step)
    source = f"history {history!r}"
    try:
        trace = parse_trace(text, source)
    except TraceError as error:  # the replay read these lines, so this is a brokerspec bug if it happens
        return f"no trace: {error}"
    note = f"audited history {history!r}, steps 1 to {step} as recorded"
    trace = type(trace)(trace.profile, trace.steps, trace.domain, note, trace.source)
    return write_new_trace(out / "traces" / trace_name(history), trace)


def _listed(row: dict[str, Any], trace: Path | None, why: str) -> Listed:
    return Listed(str(row["history"]), int(row["step"]), str(row["operation"] or ""), str(row["expected"]),
                  str(row["observed"]), tuple(str(r) for r in row["rule_ids"]), str(row["file"] or ""),
                  int(row["line"] or 0), trace, why)
