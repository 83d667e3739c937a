"""The record every planted bug is listed with, whatever its domain."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class PlantedBug:
    """A planted bug: its name, the broker class that has it, where it shows, and how CrossHair can see it.

    ``crosshair`` is a pair of dotted function names for ``crosshair diffbehavior``
    (the correct one first), or ``("check", planted)`` when the broken function's
    own contract should fail, or None; then ``why_not_crosshair`` says why.
    """

    name: str
    broker: type[Any]
    profiles: tuple[str, ...]
    crosshair: tuple[str, str] | None
    why_not_crosshair: str = ""


ALL = ("seed", "artemis-2.11", "artemis-latest")


def all_planted() -> list[tuple[str, PlantedBug]]:
    """Every planted bug of every domain, as (domain, bug), in domain order."""
    from . import addressing_bugs, balancing_bugs, duplicates_bugs, topologies_bugs

    modules = (("addressing", addressing_bugs), ("duplicates", duplicates_bugs), ("balancing", balancing_bugs),
               ("topologies", topologies_bugs))
    return [(domain, bug) for domain, module in modules for bug in module.PLANTED]
