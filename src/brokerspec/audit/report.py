"""The audit's report for people: Markdown and HTML with plots, and the printed summary.

Introduction
------------
``report.md`` and ``report.html`` hold the same content: the accounting
(rows in, checked, quarantined), the first divergences one by one (history,
step, operation, expected, observed, rules, and the ``brokerspec explain``
and ``brokerspec replay`` commands for the trace written for each history:
:mod:`.listing`), divergences by rule (with the rule's words and source), by
address, and over the history (by step or seq), each as a table and a
matplotlib plot, and links to the full tables. The PNG files are written to
``plots/``; the HTML embeds them, so it can be mailed on its own. The counts
on the plots' axes are whole numbers.

The title names a profile only for streams, which are judged under the
``--profile`` given; histories name their own in their headers, and the
report counts the histories per profile instead.
"""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from brokerspec.spec import Profile

from .listing import Listed

if TYPE_CHECKING:
    from .run import AuditResult

TABLES = (("divergences/", "every divergence (Parquet)"), ("quarantine/", "every quarantined row (Parquet)"),
          ("histories/", "rows checked and divergences per history or address (Parquet)"),
          ("summary.json", "the accounting and the time per phase"))


def rule_words(rule_id: str) -> tuple[str, str]:
    """A rule's summary and source from the spec's rule tables ("", "") when unknown."""
    from brokerspec.spec.addressing.rules import RULES as ADDRESSING
    from brokerspec.spec.duplicates.rules import RULES as DUPLICATES

    rule = DUPLICATES.get(rule_id) or ADDRESSING.get(rule_id)
    return (rule.summary, rule.source) if rule is not None else ("", "")


def _bar_plot(path: Path, title: str, labels: list[str], values: list[int], horizontal: bool) -> None:
    import matplotlib.pyplot as plt

    figure = bar_figure(title, labels, values, horizontal)
    figure.savefig(path, dpi=100)
    plt.close(figure)


def bar_figure(title: str, labels: list[str], values: list[int], horizontal: bool) -> Any:
    """A bar plot of divergence counts, its count axis ticked at whole numbers only."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    height = max(2.5, 0.3 * len(labels) + 1) if horizontal else 3.5
    figure, axes = plt.subplots(figsize=(8, height))
    if not labels:
        axes.text(0.5, 0.5, "no divergences", ha="center", va="center")
        axes.set_axis_off()
    elif horizontal:
        axes.barh(labels[::-1], values[::-1], color="#b5443a")
        axes.set_xlabel("divergences")
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    else:
        axes.bar(range(len(values)), values, color="#b5443a")
        axes.set_xticks(range(len(labels)), labels, rotation=45, ha="right", fontsize=7)
        axes.set_ylabel("divergences")
        axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_title(title)
    figure.tight_layout()
    return figure


def title_of(result: AuditResult, profile: Profile) -> str:
    """The report's title: the mode, and the profile only when the audit chose it (streams)."""
    if result.mode == "streams":
        return f"Audit report (streams, profile {profile.name})"
    return "Audit report (histories)"


def listing_lines(listing: list[Listed], total: int) -> list[str]:
    """The Markdown section listing divergences one by one, with what to run for each."""
    if not listing:
        return []
    more = total - len(listing)
    lines = [f"## Divergences, the first {len(listing):,} of {total:,}" if more else "## Divergences", "",
             "| history | step | operation | expected | observed | rules | explain | replay |",
             "|---|---:|---|---|---|---|---|---|"]
    for item in listing:
        commands = item.commands()
        explain, replay = ((f"`{_cell(c)}`" for c in commands) if commands is not None
                           else (_cell(f"{item.file}:{item.line}"), _cell(item.why_no_trace)))
        lines.append(f"| {_cell(item.history)} | {item.step} | {_cell(item.operation)} | {_cell(item.expected)} | "
                     f"{_cell(item.observed)} | {_cell(', '.join(item.rules))} | {explain} | {replay} |")
    lines.append("")
    if more:
        lines += [f"{more:,} more divergences are in `divergences/`, in the same order (history, step).", ""]
    return lines


def write_report(result: AuditResult, out: Path, profile: Profile,
                 listing: list[Listed] | None = None) -> tuple[Path, Path]:
    """Write ``report.md``, ``report.html`` and ``plots/*.png``; return the two report paths."""
    plots = out / "plots"
    plots.mkdir(parents=True, exist_ok=True)
    position = "seq" if result.mode == "streams" else "step"
    over_labels = [f"{low}-{high}" for low, high, _ in result.over_history]
    figures = [
        ("by-rule.png", "Divergences by rule", list(result.by_rule), list(result.by_rule.values()), True),
        ("by-address.png", "Divergences by address (top 30)", list(result.by_address),
         list(result.by_address.values()), True),
        ("over-history.png", f"Divergences by {position}", over_labels, [n for _, _, n in result.over_history],
         False),
    ]
    for name, title, labels, values, horizontal in figures:
        _bar_plot(plots / name, title, labels, values, horizontal)

    lines = [f"# {title_of(result, profile)}", "",
             "## Accounting", "", "| | rows |", "|---|---:|",
             f"| rows in | {result.rows_in:,} |", f"| rows checked | {result.checked:,} |",
             f"| rows quarantined | {result.quarantined:,} |", "",
             f"rows in = rows checked + rows quarantined: **{'yes' if result.balanced else 'NO'}**", "",
             f"{result.divergences:,} divergences in {result.divergent_groups:,} of {result.groups:,} "
             f"{'addresses' if result.mode == 'streams' else 'histories'}.", ""]
    if result.profiles:
        lines += ["Profiles named in the histories' headers:", "", "| profile | histories |", "|---|---:|"]
        lines += [f"| {_cell(name)} | {count:,} |" for name, count in result.profiles.items()]
        lines += [""]
    lines += listing_lines(listing or [], result.divergences)
    if result.quarantine_reasons:
        lines += ["### Quarantined rows by reason", "", "| reason | rows |", "|---|---:|"]
        lines += [f"| {_cell(r)} | {n:,} |" for r, n in result.quarantine_reasons.items()]
        lines += ["", "Every quarantined row, with its file and line, is in `quarantine/`.", ""]
    lines += ["## Divergences by rule", "", "| rule | divergences | what it says | source |", "|---|---:|---|---|"]
    for rule, count in result.by_rule.items():
        words, source = rule_words(rule)
        lines.append(f"| {rule} | {count:,} | {_cell(words)} | {_cell(source)} |")
    lines += ["", "![by rule](plots/by-rule.png)", "", "## Divergences by address", "",
              "| address | divergences |", "|---|---:|"]
    lines += [f"| {_cell(a)} | {n:,} |" for a, n in result.by_address.items()]
    lines += ["", "![by address](plots/by-address.png)", "", f"## Divergences by {position}", "",
              f"| {position} | divergences |", "|---|---:|"]
    lines += [f"| {low}-{high} | {n:,} |" for low, high, n in result.over_history]
    lines += ["", f"![by {position}](plots/over-history.png)", "", "## Where the time went", "",
              "| phase | seconds |", "|---|---:|"]
    lines += [f"| {phase} | {s:.1f} |" for phase, s in result.seconds.items()]
    lines += ["", "## Full tables", ""]
    lines += [f"- [{name}]({name}): {what}" for name, what in TABLES]
    lines += [""]
    markdown = "\n".join(lines)
    md_path = out / "report.md"
    md_path.write_text(markdown, encoding="utf-8")
    html_path = out / "report.html"
    html_path.write_text(_to_html(markdown, plots), encoding="utf-8")
    return md_path, html_path


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ").replace("`", "'")


def table_cells(line: str) -> list[str]:
    r"""The cells of a Markdown table row, split at the pipes that are not escaped.

    >>> table_cells("| a \\| b | `c` |")
    ['a | b', '`c`']
    """
    inner = line.strip()
    inner = inner[1:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner[1:]
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", inner)]


def is_alignment_row(cells: list[str]) -> bool:
    """Whether a table row is the Markdown alignment row (``|---|---:|``) rather than data."""
    return all(re.fullmatch(r":?-+:?", cell) for cell in cells)


CODE = re.compile(r"`([^`]*)`")


def _inline(text: str) -> str:
    """Escaped text with `code` spans as <code>."""
    return CODE.sub(r"<code>\1</code>", html.escape(text))


def _to_html(markdown: str, plots: Path) -> str:
    """The report's Markdown (headings, tables, images, paragraphs) as one self-contained HTML page."""
    body: list[str] = []
    table: list[list[str]] = []

    def flush_table() -> None:
        if not table:
            return
        head, *rows = table
        body.append("<table><tr>" + "".join(f"<th>{c}</th>" for c in head) + "</tr>")
        body.extend("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
        body.append("</table>")
        table.clear()

    for line in markdown.split("\n"):
        if line.startswith("|"):
            cells = table_cells(line)
            if not is_alignment_row(cells):
                table.append([_inline(c) for c in cells])
            continue
        flush_table()
        if line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            body.append(f"<h{level}>{html.escape(line[level:].strip())}</h{level}>")
        elif line.startswith("!["):
            name = line[line.index("(") + 1:line.rindex(")")].split("/")[-1]
            data = base64.b64encode((plots / name).read_bytes()).decode("ascii")
            body.append(f'<p><img alt="{html.escape(name)}" src="data:image/png;base64,{data}"></p>')
        elif line.startswith("- ["):
            name, what = line[3:].split("](", 1)[0], line.split("): ", 1)[1]
            body.append(f'<p><a href="{html.escape(name)}">{html.escape(name)}</a>: {html.escape(what)}</p>')
        elif line.strip():
            text = html.escape(line)
            while "**" in text:
                text = text.replace("**", "<b>", 1).replace("**", "</b>", 1)
            body.append("<p>" + CODE.sub(r"<code>\1</code>", text) + "</p>")
    flush_table()
    style = ("body{font-family:sans-serif;max-width:60em;margin:2em auto}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>brokerspec audit</title>"
            f"<style>{style}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")
