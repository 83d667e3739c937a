"""The base classes every domain's outcomes and rejection reasons share.

Introduction
------------
Outcomes are values, never exceptions (STYLE point 3). Each domain defines
its own outcome dataclasses as subclasses of :class:`Outcome`; the class
attribute ``kind`` names the outcome in traces and reports. Every outcome
carries, outside equality, the ID of the rule that decided it (``rule``):
the spec fills it in, implementations may leave it empty, comparisons ignore
it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar


@dataclass(frozen=True)
class Outcome:
    """Base of every outcome: carries the deciding rule's ID, ignored by equality."""

    kind: ClassVar[str] = "outcome"
    rule: str = field(default="", compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class Reason:
    """Base of every rejection reason."""

    kind: ClassVar[str] = "reason"


def is_query(command: object) -> bool:
    """Whether ``command`` (a command or its class) is a *query*: an operation that reads without changing anything.

    A query's class says so with ``query = True``. Queries exist in every domain (an address query, a
    queue query, a duplicate-ID query, a demand query); a system under test answers them from SUT
    protocol version 2 on, and a version 1 SUT is never asked one.
    """
    kind = command if isinstance(command, type) else type(command)
    return bool(getattr(kind, "query", False))
