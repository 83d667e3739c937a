"""Auditing whole recorded histories (traces of any domain) against the spec, one history at a time.

Introduction
------------
A history is a trace (``docs/trace-format.md``): a header naming the domain
and profile, then numbered steps, each with the outcome the broker gave.
Replaying it means running every step through the spec's ``apply`` from the
domain's initial state and comparing the spec's outcome with the recorded
one. The spec's state depends on every earlier step of the same history and
on nothing else, so histories can be replayed in any order and on any
worker, as long as each history's lines arrive together and in step order
(the header first): that is why partitioning by history is exact.

After a divergence the replay goes on from the spec's own state: each
later step is judged as if the broker had done what the spec said. A line
that cannot be read is quarantined, and so is every later line of its
history, because the spec's state after a missing step is unknown.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from brokerspec.spec import BrokerspecError

from .. import jsonin
from ..check.domains import get_domain
from ..codec import encode_outcome
from ..trace import TraceError, TraceStep, load_line, read_header, read_step
from .lines import ReadOnce, split_step

DIVERGENCE = "divergence"
QUARANTINE = "quarantine"
SUMMARY = "summary"
COLUMN_ERROR = "\u0000column-error"
"""The key under which a Parquet history row whose JSON column cannot be read carries the reason (a key no
trace line can have: a NUL is no field name of the format)."""

HistoryRow = tuple[str, int, str, int, str]
"""One line of a history as the replay takes it: history, step (0 for the header), file, line, text."""


def step_key(text: str, seen: ReadOnce[bool] | None = None) -> tuple[str | None, int | None, str | None]:
    """A line's ``history`` field, its step number (0 for a header) and a reason when it has neither.

    This is the cheap first look used to route lines to their history; the
    full check happens in :func:`audit_history_rows`. With ``seen``, a step
    line whose rest an earlier line had without a reason is not read again
    (:mod:`.lines`).
    """
    split = split_step(text) if seen is not None and seen.useful else None
    if split is not None and seen is not None and seen.get("key", split[2]):
        return split[0], split[1], None
    found = _read_key(text)
    if split is not None and seen is not None and found == (split[0], split[1], None):
        seen.keep("key", split[2], True)
    return found


def _read_key(text: str) -> tuple[str | None, int | None, str | None]:
    try:
        record = jsonin.loads(text)
    except jsonin.JsonInputError as error:
        return None, None, str(error)
    if not isinstance(record, dict):
        return None, None, f"expected a JSON object, got {type(record).__name__}"
    history = record.get("history")
    if history is not None and (not isinstance(history, str) or not history):
        return None, None, f"history: expected a non-empty string, got {history!r}"
    kind = record.get("type")
    if COLUMN_ERROR in record:
        step = record.get("step")
        return history, (0 if kind == "header" else step if type(step) is int else None), str(record[COLUMN_ERROR])
    if kind == "header":
        return history, 0, None
    step = record.get("step")
    if kind == "step" and type(step) is int and step >= 1:
        return history, step, None
    if kind != "step":
        return history, None, f"type: expected \"header\" or \"step\", got {kind!r}"
    return history, None, f"step: expected a step number from 1, got {step!r}"


def address_of(command: Any) -> str | None:
    """The address a command is about, for grouping divergences (the part before ``::`` of an FQQN)."""
    for name in ("address", "name", "queue"):
        value = getattr(command, name, None)
        if isinstance(value, str):
            return value.split("::", 1)[0]
    return None


def _outcome_text(outcome: Any) -> str:
    return json.dumps(encode_outcome(outcome), sort_keys=True, ensure_ascii=False)


class HistoryAuditor:
    """Replays the lines of one history in step order against the spec."""

    def __init__(self, history: str, seen: ReadOnce[TraceStep] | None = None) -> None:
        self.history = history
        self.seen = seen
        self.domain_name = ""
        self.profile_name = ""
        self.domain: Any = None
        self.state: Any = None
        self.next_step = 0
        self.broken: str | None = None
        self.checked = 0
        self.divergences = 0

    def feed(self, row: HistoryRow) -> tuple[object, ...] | None:
        """Judge one line; return an output tuple or None when it agrees."""
        history, step, file, line, text = row
        if self.broken is not None:
            return (QUARANTINE, history, step, "", file, line, self.broken)
        try:
            if self.next_step == 0:
                self._header(load_line(text, file, line), row)
                return None
            return self._step(self._read(row), row)
        except (TraceError, BrokerspecError) as error:
            reason = error.message if isinstance(error, TraceError) else str(error)
            field = f"{error.field}: " if isinstance(error, TraceError) and error.field else ""
            self.broken = f"follows the quarantined line {file}:{line} of history {history!r}"
            return (QUARANTINE, history, step, "", file, line, field + reason)

    def _header(self, record: dict[str, Any], row: HistoryRow) -> None:
        history, _, file, line, _ = row
        if record.get("type") != "header":
            raise TraceError(file, line, "type", f"history {history!r} has no header line before its steps")
        profile, domain_name, _ = read_header(record, file, line)
        self.domain_name, self.profile_name = domain_name, profile.name
        self.domain = get_domain(domain_name)
        self.state = self.domain.initial_state(profile)
        self.next_step = 1
        self.checked += 1

    def _read(self, row: HistoryRow) -> TraceStep:
        """The step line's command and outcome; a rest read before in this domain is not read again."""
        history, _, file, line, text = row
        split = split_step(text) if self.seen is not None and self.seen.useful else None
        if split is None or self.seen is None or split[0] != history or split[1] != self.next_step:
            return read_step(load_line(text, file, line), file, line, self.next_step, self.domain_name)
        traced = self.seen.get(self.domain_name, split[2])
        if traced is None:
            traced = read_step(load_line(text, file, line), file, line, self.next_step, self.domain_name)
            self.seen.keep(self.domain_name, split[2], traced)
        return traced

    def _step(self, traced: TraceStep, row: HistoryRow) -> tuple[object, ...] | None:
        history, step, file, line, _ = row
        self.next_step += 1
        self.checked += 1
        self.state, expected = self.domain.apply(self.state, traced.command)
        if traced.outcome is None or traced.outcome == expected:
            return None
        self.divergences += 1
        return (DIVERGENCE, history, step, traced.command.op, file, line, _outcome_text(expected),
                _outcome_text(traced.outcome), expected.rule, address_of(traced.command))

    def summary(self) -> tuple[object, ...]:
        """The history's accounting row: lines checked, divergences, domain and profile."""
        return (SUMMARY, self.history, self.checked, self.divergences, self.domain_name, self.profile_name)


def audit_history_rows(rows: Iterable[HistoryRow]) -> Iterator[tuple[object, ...]]:
    """Replay lines sorted by (history, step); yield divergences, quarantines and one summary per history.

    Output tuples, by their first field:

    * ``divergence``: history, step, op, file, line, expected (JSON), observed (JSON), rule, address
    * ``quarantine``: history, step, op, file, line, reason
    * ``summary``: history, lines checked, divergences, domain, profile
    """
    auditor: HistoryAuditor | None = None
    seen: ReadOnce[TraceStep] = ReadOnce()
    for row in rows:
        if auditor is None or row[0] != auditor.history:
            if auditor is not None:
                yield auditor.summary()
            auditor = HistoryAuditor(row[0], seen)
        result = auditor.feed(row)
        if result is not None:
            yield result
    if auditor is not None:
        yield auditor.summary()
