"""The audit's report for people: Markdown and HTML with plots, and the printed summary.

Introduction
------------
``report.md`` and ``report.html`` hold the same content: the accounting
(rows in, checked, quarantined), divergences by rule (with the rule's words
and source), by address, and over the history (by step or seq), each as a
table and a matplotlib plot. The PNG files are written to ``plots/``; the
HTML embeds them, so it can be mailed on its own.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import TYPE_CHECKING

from brokerspec.spec import Profile

if TYPE_CHECKING:
    from .run import AuditResult


def rule_words(rule_id: str) -> tuple[str, str]:
    """A rule's summary and source from the spec's rule tables ("", "") when unknown."""
    from brokerspec.spec.addressing.rules import RULES as ADDRESSING
    from brokerspec.spec.duplicates.rules import RULES as DUPLICATES

    rule = DUPLICATES.get(rule_id) or ADDRESSING.get(rule_id)
    return (rule.summary, rule.source) if rule is not None else ("", "")


def _bar_plot(path: Path, title: str, labels: list[str], values: list[int], horizontal: bool) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    height = max(2.5, 0.3 * len(labels) + 1) if horizontal else 3.5
    figure, axes = plt.subplots(figsize=(8, height))
    if not labels:
        axes.text(0.5, 0.5, "no divergences", ha="center", va="center")
        axes.set_axis_off()
    elif horizontal:
        axes.barh(labels[::-1], values[::-1], color="#b5443a")
        axes.set_xlabel("divergences")
    else:
        axes.bar(range(len(values)), values, color="#b5443a")
        axes.set_xticks(range(len(labels)), labels, rotation=45, ha="right", fontsize=7)
        axes.set_ylabel("divergences")
    axes.set_title(title)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def write_report(result: AuditResult, out: Path, profile: Profile) -> tuple[Path, Path]:
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

    lines = [f"# Audit report ({result.mode}, profile {profile.name})", "",
             "## Accounting", "", "| | rows |", "|---|---:|",
             f"| rows in | {result.rows_in:,} |", f"| rows checked | {result.checked:,} |",
             f"| rows quarantined | {result.quarantined:,} |", "",
             f"rows in = rows checked + rows quarantined: **{'yes' if result.balanced else 'NO'}**", "",
             f"{result.divergences:,} divergences in {result.divergent_groups:,} of {result.groups:,} "
             f"{'addresses' if result.mode == 'streams' else 'histories'}.", ""]
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
    lines += ["", "Every divergence, with the expected and observed outcome, is in `divergences/` (Parquet).", ""]
    markdown = "\n".join(lines)
    md_path = out / "report.md"
    md_path.write_text(markdown, encoding="utf-8")
    html_path = out / "report.html"
    html_path.write_text(_to_html(markdown, plots), encoding="utf-8")
    return md_path, html_path


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


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
            cells = [html.escape(c.strip().replace("\\|", "|")) for c in line.strip("|").split(" | ")]
            if not all(set(c) <= set("-:") for c in cells):
                table.append(cells)
            continue
        flush_table()
        if line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            body.append(f"<h{level}>{html.escape(line[level:].strip())}</h{level}>")
        elif line.startswith("!["):
            name = line[line.index("(") + 1:line.rindex(")")].split("/")[-1]
            data = base64.b64encode((plots / name).read_bytes()).decode("ascii")
            body.append(f'<p><img alt="{html.escape(name)}" src="data:image/png;base64,{data}"></p>')
        elif line.strip():
            text = html.escape(line)
            while "**" in text:
                text = text.replace("**", "<b>", 1).replace("**", "</b>", 1)
            body.append(f"<p>{text.replace('`', '')}</p>")
    flush_table()
    style = ("body{font-family:sans-serif;max-width:60em;margin:2em auto}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>brokerspec audit</title>"
            f"<style>{style}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")
