"""``brokerspec explain TRACE``: a trace step by step, with the spec's state as tables and the deciding rule.

Introduction
------------
For each step, :func:`explain_trace` applies the command to the spec and
yields an :class:`ExplainedStep`: the command, the spec's outcome, the rule
that decided it (ID, summary and source: the seed document, Artemis or
ActiveMQ file, test or JIRA key it was read from), the outcome the trace recorded when it
differs, and the parts of the spec state that the step changed. The first
step shows every part. :func:`state_tables` turns a state part into a rich
table whatever its shape: a mapping becomes rows of key and value (or of the
value's fields, when it is a record), a tuple of records becomes rows of
fields, anything else one line. So the queues, the per-name counts, the ID
rings, the round-robin positions and the demand subscriptions all read as
tables without code per domain.

A trace that ``brokerspec diff`` wrote records two sides
(:attr:`~brokerspec.trace.Trace.sides`); :func:`print_sides` shows it side
by side: per step a table with a column for each side, holding the outcome
the trace recorded, the outcome and rule this spec gives under the side's
profile, and the state parts the step changed. A side that is a git
revision has no spec here, so only its recorded outcome and rule ID are
shown. The step where the sides part is marked.

Names and trace notes come from the trace file, that is from outside: they are
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

from brokerspec.spec import Outcome, Profile

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
    rule_source: str = ""
    """Where the rule comes from: a seed document, an Artemis or ActiveMQ file, test or JIRA key."""

    @property
    def recorded_differs(self) -> bool:
        """Whether the trace recorded another outcome than the spec's."""
        return self.recorded is not None and self.recorded != self.outcome


def explain_trace(trace: Trace, profile: Profile | None = None, to_side: bool = False) -> Iterator[ExplainedStep]:
    """The spec's account of every step of ``trace`` (under ``profile``, by default the trace's own).

    ``to_side`` compares each step with the *to* side's recorded outcome
    (``to_outcome``) instead of ``outcome``.
    """
    domain = get_domain(trace.domain)
    rules = RULE_TABLES[trace.domain]
    state = domain.initial_state(profile or trace.profile)
    for number, step in enumerate(trace.steps, start=1):
        before = state
        state, outcome = domain.apply(state, step.command)
        changed = {part: getattr(state, part) for part in domain.state_parts
                   if number == 1 or getattr(state, part) != getattr(before, part)}
        rule = rules.get(outcome.rule) if outcome.rule else None
        yield ExplainedStep(number, step.command, outcome, outcome.rule or "-",
                            "" if rule is None else rule.summary, step.to_outcome if to_side else step.outcome,
                            changed, "" if rule is None else rule.source)


def rule_line(step: ExplainedStep) -> str:
    """``rule ID: summary (source: ...)``, as much of it as is known."""
    text = f"rule {step.rule}: {step.rule_summary}" if step.rule_summary else f"rule {step.rule}"
    return text + (f" (source: {step.rule_source})" if step.rule_source else "")


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
    if trace.sides is not None:
        return print_sides(console, trace)
    console.print(literal(f"{trace.domain} trace under {trace.profile.label}, {len(trace.steps)} steps"
                          + (f"; note: {trace.note}" if trace.note else "")))
    differing = 0
    for step in explain_trace(trace):
        console.rule(literal(f"step {step.number}: {format_command(step.command)}"))
        console.print(literal(f"spec: {show(step.outcome)}"))
        console.print(literal(rule_line(step)))
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


def parting_step(trace: Trace) -> int | None:
    """The first step whose two recorded outcomes differ (or where one side recorded none); None if none does."""
    for number, step in enumerate(trace.steps, start=1):
        if step.outcome != step.to_outcome:
            return number
    return None


def print_sides(console: Console, trace: Trace) -> int:
    """Print a trace of two sides side by side; the number of recorded outcomes this spec does not give."""
    assert trace.sides is not None
    names = [side.name for side in trace.sides]
    console.print(literal(f"{trace.domain} trace of two sides, {len(trace.steps)} steps"
                          + (f"; note: {trace.note}" if trace.note else "")))
    for role, side in zip(("from", "to"), trace.sides):
        what = side.profile.label + (f", the spec at git commit {side.revision}" if side.revision else "")
        console.print(literal(f"{role}: {side.name} ({what})"))
    accounts = [None if side.revision else list(explain_trace(trace, side.profile, to_side=index == 1))
                for index, side in enumerate(trace.sides)]
    parted = parting_step(trace)
    differing = 0
    for number, step in enumerate(trace.steps, start=1):
        here = number == parted
        console.rule(literal(f"step {number}: {format_command(step.command)}"
                             + ("  <- the sides part here" if here else ""), style="bold red" if here else ""))
        table = Table(show_header=True, header_style="bold", row_styles=None)
        table.add_column("")
        for name in names:
            table.add_column(literal(name))
        recorded = (step.outcome, step.to_outcome)
        table.add_row("recorded", *(literal("(not recorded)" if o is None else show(o), "bold red" if here else "")
                                    for o in recorded))
        spec_cells: list[RenderableType] = []
        rule_cells: list[RenderableType] = []
        state_cells: list[RenderableType] = []
        for index, account in enumerate(accounts):
            if account is None:
                spec_cells.append(Text("(a git revision: its spec is not part of this brokerspec)", style="dim"))
                outcome = recorded[index]
                rule_cells.append(literal(f"rule {outcome.rule or '-'} (as recorded)" if outcome else "-"))
                state_cells.append(Text("-", style="dim"))
                continue
            explained = account[number - 1]
            mismatch = explained.recorded_differs
            differing += mismatch
            spec_cells.append(literal(show(explained.outcome) + ("  <- not what was recorded" if mismatch else ""),
                                      "bold red" if mismatch else ""))
            rule_cells.append(literal(rule_line(explained)))
            state_cells.append(Group(*(state_tables(part, value) for part, value in explained.changed.items()))
                               if explained.changed else Text("state unchanged", style="dim"))
        table.add_row("spec", *spec_cells)
        table.add_row("rule", *rule_cells)
        table.add_row("state", *state_cells)
        console.print(table)
    if parted is None:
        console.print(literal(f"{names[0]} and {names[1]} recorded the same outcome at every step"))
    else:
        console.print(literal(f"{names[0]} and {names[1]} part at step {parted}", style="bold"))
    if differing:
        console.print(literal(f"{differing} recorded outcome{'s' if differing != 1 else ''} this spec does not give "
                              f"under the side's profile", style="bold red"))
    return differing
