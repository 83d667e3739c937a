"""The figures an audit reports, whichever engine computed them, and the orders that make them repeatable.

Both engines (Spark in :mod:`.run`, one process in :mod:`.single`) fill one
:class:`Tables`. Rankings break ties by name and divergences are listed in
(history, step, file, line) order, so the two give the same report for the
same input, and a rerun gives the same report as the last run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

LISTED = 50
"""How many divergences the report lists one by one, each with its explain and replay commands."""

HistoryLines = dict[str, list[tuple[int, str, int, str]]]
"""A history's lines as (step, file, line, text), the header as step 0."""


@dataclass
class Tables:
    """What the replay found, counted, and the first divergences with their histories' lines."""

    rows_in: int
    checked: int
    groups: int
    divergent_groups: int
    quarantined: int
    quarantine_reasons: dict[str, int]
    divergences: int
    by_rule: dict[str, int]
    by_address: dict[str, int]
    over_history: list[tuple[int, int, int]]
    profiles: dict[str, int]
    listed: list[dict[str, Any]]
    history_lines: HistoryLines = field(default_factory=dict)
    shuffled: bool = True


def divergence_sort_key(row: Mapping[str, Any]) -> tuple[str, int, str, int]:
    """Divergences in the order the tables and the report list them."""
    return (str(row["history"]), int(row["step"] or 0), str(row["file"] or ""), int(row["line"] or 0))


def ranked(counts: Mapping[str, int], limit: int | None = None) -> dict[str, int]:
    """Counts from most to fewest, ties by name, cut to ``limit`` entries.

    >>> ranked({"b": 2, "a": 2, "c": 5}, 2)
    {'c': 5, 'a': 2}
    """
    order = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return dict(order[:limit] if limit is not None else order)


def bin_width(low: int, high: int, bins: int = 20) -> int:
    """The width of each of up to ``bins`` equal ranges covering ``low..high``."""
    return max(1, -(-(high - low + 1) // bins))


def binned(low: int, high: int, width: int, counts: Mapping[int, int]) -> list[tuple[int, int, int]]:
    """(first, last, divergences) per range, from the counts per range number."""
    return [(low + b * width, low + (b + 1) * width - 1, counts.get(b, 0))
            for b in range((high - low) // width + 1)]


def over_history(step_counts: Mapping[int, int], bins: int = 20) -> list[tuple[int, int, int]]:
    """Divergences by position in their history (step or seq), in up to ``bins`` equal ranges.

    >>> over_history({3: 1, 5: 2}, bins=2)
    [(3, 4, 1), (5, 6, 2)]
    """
    if not step_counts:
        return []
    low, high = min(step_counts), max(step_counts)
    width = bin_width(low, high, bins)
    counts: dict[int, int] = {}
    for step, count in step_counts.items():
        counts[(step - low) // width] = counts.get((step - low) // width, 0) + count
    return binned(low, high, width, counts)
