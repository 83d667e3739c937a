"""The plain-text tables the benchmark scripts print (no Rich: the figures are meant to be pasted anywhere)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


def render_table(title: str, headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain-text table: first column left-aligned, the others right-aligned."""
    widths = [max(len(header), *(len(row[index]) for row in rows)) for index, header in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(cell.ljust(widths[0]) if index == 0 else cell.rjust(widths[index])
                         for index, cell in enumerate(cells)).rstrip()

    rule = "-" * len(line(headers))
    return "\n".join([title, rule, line(headers), rule, *(line(row) for row in rows), rule])


def filesystem_of(path: Path) -> str:
    """The type of the file system ``path`` is on, from /proc/mounts (``unknown`` elsewhere)."""
    try:
        mounts = [line.split() for line in Path("/proc/mounts").read_text().splitlines()]
    except OSError:
        return "unknown"
    resolved = str(path.resolve())
    best = ("", "unknown")
    for fields in mounts:
        if len(fields) >= 3 and (resolved == fields[1] or resolved.startswith(fields[1].rstrip("/") + "/")):
            if len(fields[1]) >= len(best[0]):
                best = (fields[1], fields[2])
    return best[1]
