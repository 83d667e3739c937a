"""Rendering results for people: rich tables for check summaries and replays.

Every cell and title that holds text from outside (trace file names,
operation arguments, a SUT's error messages) is a :class:`~rich.text.Text`
made by :func:`~brokerspec.clitools.literal`: printed as written, never read
as markup, with control characters escaped.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from brokerspec.spec import Outcome

from .check.lockstep import format_command
from .check.runner import CheckResult, describe_drawn
from .clitools import literal
from .codec import encode_outcome
from .replay import ReplayReport


def short_outcome(outcome: Outcome | None) -> str:
    """An outcome in one short line: its type, its reason and its fields."""
    if outcome is None:
        return "-"
    data = encode_outcome(outcome)
    kind = data.pop("type")
    data.pop("rule", None)
    reason = data.pop("reason", None)
    if isinstance(reason, dict):
        kind = f"{kind}: {reason.pop('type')}"
        data = reason
    fields = ", ".join(f"{k}={v}" for k, v in data.items() if v not in (None, [], ""))
    return f"{kind}({fields})" if fields else kind


def check_table(results: Sequence[CheckResult]) -> Table:
    """One row per domain and profile: how much was checked and what was found.

    A profile-free domain's row says so instead of naming the profile it ran under.
    """
    from .check_progress import profile_label

    table = Table(title="brokerspec check: spec vs reference vs impl")
    for column in ("domain", "profile", "scenarios", "steps", "seconds", "result", "trace"):
        table.add_column(column, justify="right" if column in ("scenarios", "steps", "seconds") else "left")
    for r in results:
        if r.divergence is None:
            verdict = Text("agree", style="green")
        else:
            verdict = Text(f"{r.divergence.layer} parted at step {r.divergence.step}", style="bold red")
        table.add_row(r.domain, literal(profile_label(r.domain, r.profile)), str(r.examples), str(r.steps),
                      f"{r.seconds:.1f}", verdict, literal(r.trace_path or ""))
    return table


def replay_table(report: ReplayReport) -> Table:
    """The trace step by step: recorded outcome, spec, and each layer, differences in red."""
    first = report.first_difference
    table = Table(title=literal(f"replay of {report.trace.source} ({report.trace.domain}) under "
                                f"{report.trace.profile.label}"))
    table.add_column("step", justify="right")
    table.add_column("operation")
    table.add_column("recorded")
    table.add_column("spec")
    names = list(report.steps[0].layers) if report.steps else []
    for name in names:
        table.add_column(literal(name))
    for step in report.steps:
        marker = " <- first difference" if first is not None and step.number == first.number else ""
        if step.recorded_parts:
            recorded = literal(short_outcome(step.recorded), style="red")
        elif step.recorded_differs:
            recorded = literal(short_outcome(step.recorded) + " (not judged)", style="yellow")
        else:
            recorded = literal(short_outcome(step.recorded))
        cells: list[Text | str] = [str(step.number) + marker, literal(format_command(step.command)), recorded,
                                   literal(short_outcome(step.spec))]
        for name in names:
            layer = step.layers[name]
            if layer.error is not None:
                cells.append(literal(layer.error, style="bold magenta" if layer.failure else "bold red"))
                continue
            text = "=" if layer.outcome == step.spec else short_outcome(layer.outcome)
            if layer.allowed and layer.outcome != step.spec:
                text += " (allowed)"
            if not layer.state_matches:
                text += " (state differs)"
            if layer.invariant_problem is not None:
                text += " (private invariants broken)"
            cells.append(literal(text, style="" if layer.agrees_with(step.spec) else "bold red"))
        table.add_row(*cells)
    return table


REPLAY_LEGEND = (
    ("=", "the layer gave the spec's outcome"),
    ("(allowed)", "another outcome the rules allow, where they allow several (a SUT, unless --strict)"),
    ("-", "nothing recorded for this step"),
    ("(not judged)", "a recorded outcome other than the spec's that does not count (a SUT is replayed; "
                     "--judge-recorded counts it)"),
    ("(state differs)", "the layer's state is not the spec's (brokerspec's own layers; a SUT shows outcomes only)"),
    ("(private invariants broken)", "the layer's own consistency checks failed"),
    ("(stopped: ...)", "the layer failed at an earlier step and was not asked again"),
    ("red", "parts from the spec; magenta: how a SUT failed (crashed, hung, wrote garbage, an error reply)"),
    ("<- first difference", "the first step where anything that counts parted from the spec"),
)
"""The replay table's symbols and what each means, printed under the table."""


def replay_legend(report: ReplayReport) -> Text:
    """The legend printed under :func:`replay_table`: every symbol, then what the verdict counts."""
    width = max(len(symbol) for symbol, _ in REPLAY_LEGEND)
    lines = [f"  {symbol:<{width}}  {meaning}" for symbol, meaning in REPLAY_LEGEND]
    judged = all(step.recorded_judged for step in report.steps)
    lines.append("recorded outcomes count in the verdict" if judged else
                 "recorded outcomes are shown, not judged: the verdict is the layers' and the SUT's")
    return literal("legend:\n" + "\n".join(lines), style="dim")


def make_console(width: int | None = None) -> Console:
    """A console for command output; 200 columns when writing to a file or pipe, so tables stay whole."""
    console = Console(width=width, soft_wrap=False)
    if width is None and not console.is_terminal:
        console = Console(width=200, soft_wrap=False)
    return console


def drawn_table(results: Sequence[CheckResult]) -> Table:
    """What each domain's run drew: per operation argument, how many distinct values, and some of them."""
    table = Table(title="values drawn (distinct values per operation argument)")
    table.add_column("domain")
    table.add_column("argument")
    table.add_column("distinct", justify="right")
    table.add_column("values")
    for result in results:
        for argument, count, sample in describe_drawn(result.drawn):
            table.add_row(result.domain, argument, str(count), Text(sample))
    return table
