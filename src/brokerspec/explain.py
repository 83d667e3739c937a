"""``brokerspec explain TRACE``: a trace step by step, with the spec's state as tables and the deciding rule.

Introduction
------------
For each step, :func:`explain_trace` applies the command to the spec and
yields an :class:`ExplainedStep`: the command, the spec's outcome, the rule
that decided it (ID and summary), the outcome the trace recorded when it
differs, and the parts of the spec state that the step changed. The first
step shows every part. :func:`state_tables` turns a state part into a rich
table whatever its shape: a mapping becomes rows of key and value (or of the
value's fields, when it is a record), a tuple of records becomes rows of
fields, anything else one line. So the queues, the per-name counts, the ID
rings, the round-robin positions and the demand subscriptions all read as
tables without code per domain.

Names and notes come from the trace file, that is from outside: they are
printed literally (:func:`~brokerspec.clitools.literal`), never as markup,
with control characters escaped.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from brokerspec.spec import Outcome

from .check.domains import get_domain
from .check.lockstep import format_command
from .clitools import literal
from .conform.catalogue import RULE_TABLES
from .trace import Trace


@dataclass(frozen=True)
class ExplainedStep:
    """One step of a trace as the spec sees it."""

    number: int
    command: Any
    outcome: Outcome
    rule: str
    rule_summary: str
    recorded: Outcome | None
    changed: dict[str, Any]
    """The state parts this step changed (every part at step 1), by name."""

    @property
    def recorded_differs(self) -> bool:
        """Whether the trace recorded another outcome than the spec's."""
        return self.recorded is not None and self.recorded != self.outcome


def explain_trace(trace: Trace) -> Iterator[ExplainedStep]:
    """The spec's account of every step of ``trace``."""
    domain = get_domain(trace.domain)
    rules = RULE_TABLES[trace.domain]
    state = domain.initial_state(trace.profile)
    for number, step in enumerate(trace.steps, start=1):
        before = state
        state, outcome = domain.apply(state, step.command)
        changed = {part: getattr(state, part) for part in domain.state_parts
                   if number == 1 or getattr(state, part) != getattr(before, part)}
        rule = rules.get(outcome.rule) if outcome.rule else None
        yield ExplainedStep(number, step.command, outcome, outcome.rule or "-",
                            "" if rule is None else rule.summary, step.outcome, changed)


def show(value: Any) -> str:
    """A value in few characters: enums by value, collections joined, records as ``field=value`` (no ``rule``)."""
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, str):
        return value
    if isinstance(value, (frozenset, set)):
        return "{" + ", ".join(sorted(show(v) for v in value)) + "}"
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(show(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{show(k)}: {show(v)}" for k, v in value.items()) + "}"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return f"{type(value).__name__}(" + ", ".join(
            f"{f.name}={show(getattr(value, f.name))}" for f in dataclasses.fields(value) if f.name != "rule") + ")"
    return repr(value)


def cell(value: Any) -> Text:
    """A table cell: the value shown as plain text (never read as rich markup, control characters escaped)."""
    return literal(show(value))


def _is_record(value: Any) -> bool:
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


def state_tables(part: str, value: Any) -> RenderableType:
    """One state part as a table (or a line when it has no rows)."""
    if isinstance(value, Mapping):
        if not value:
            return literal(f"{part}: (empty)")
        table = Table(title=part, title_justify="left")
        first = next(iter(value.values()))
        if _is_record(first):
            names = [f.name for f in dataclasses.fields(first)]
            table.add_column("key")
            for name in names:
                table.add_column(name)
            for key, item in value.items():
                table.add_row(cell(key), *(cell(getattr(item, n)) for n in names))
        else:
            table.add_column("key")
            table.add_column("value")
            for key, item in value.items():
                table.add_row(cell(key), cell(item))
        return table
    if isinstance(value, tuple) and value and all(_is_record(v) for v in value):
        names = [f.name for f in dataclasses.fields(value[0])]
        table = Table(title=part, title_justify="left")
        for name in names:
            table.add_column(name)
        for item in value:
            table.add_row(*(cell(getattr(item, n)) for n in names))
        return table
    return literal(f"{part}: {show(value)}")


def print_explanation(console: Console, trace: Trace) -> int:
    """Print every step; the number of steps whose recorded outcome differs from the spec's."""
    console.print(literal(f"{trace.domain} trace under {trace.profile.label}, {len(trace.steps)} steps"
                          + (f"; note: {trace.note}" if trace.note else "")))
    differing = 0
    for step in explain_trace(trace):
        console.rule(literal(f"step {step.number}: {format_command(step.command)}"))
        console.print(literal(f"spec: {show(step.outcome)}"))
        console.print(literal(f"rule {step.rule}: {step.rule_summary}" if step.rule_summary else f"rule {step.rule}"))
        if step.recorded_differs:
            differing += 1
            console.print(literal(f"recorded: {show(step.recorded)}  <- differs from the spec", style="bold red"))
        if step.changed:
            console.print(Group(*(state_tables(part, value) for part, value in step.changed.items())))
        else:
            console.print(Text("state unchanged", style="dim"))
    summary = (f"{differing} step{'s' if differing != 1 else ''} recorded an outcome the spec does not give"
               if differing else "every recorded outcome is the spec's")
    console.print(summary, markup=False)
    return differing
