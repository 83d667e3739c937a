"""Outcomes: what each topology operation results in, and where every message went.

Introduction
------------
Every successful outcome carries the *events* of its step, in order:

* :class:`Delivered` - a message (or a topic copy) reached a client
  consumer, with the brokers it passed on the way (its brokerPath);
* :class:`Waiting` - a queue message stays on a broker because nothing
  there may take it (it is *stranded* until demand appears);
* :class:`Dropped` - a topic copy found no subscription on a broker and is
  discarded (non-durable topics keep nothing).

A send's events describe the message's whole journey; any other operation
lists the waiting messages it set moving.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import ClassVar, Union

from ..outcome import Outcome


class Refusal(Enum):
    """Why an operation was refused."""

    UNKNOWN_BROKER = "UNKNOWN_BROKER"
    BROKER_EXISTS = "BROKER_EXISTS"
    SELF_LINK = "SELF_LINK"
    ALREADY_CONNECTED = "ALREADY_CONNECTED"
    """The two brokers already share a connector (either direction)."""
    NOT_CONNECTED = "NOT_CONNECTED"
    MIXED_DESIGNS = "MIXED_DESIGNS"
    """A broker may use network connectors or tree connectors, not both."""
    HAS_PARENT = "HAS_PARENT"
    """A broker declares at most one tree connector (seed 002 rule 2: many to one)."""
    NOT_IN_TREE = "NOT_IN_TREE"
    """``move`` of a broker that declares no tree connector."""
    PARENT_IS_LEAF = "PARENT_IS_LEAF"
    """A leaf has no children (seed 002 rule 1)."""
    CYCLE = "CYCLE"
    """The tree connector would make a cycle of parents."""
    CONSUMER_EXISTS = "CONSUMER_EXISTS"
    CONSUMER_NOT_FOUND = "CONSUMER_NOT_FOUND"
    PRODUCER_EXISTS = "PRODUCER_EXISTS"
    PRODUCER_NOT_FOUND = "PRODUCER_NOT_FOUND"


@dataclass(frozen=True)
class Delivered:
    """``message`` reached client consumer ``consumer`` on ``broker`` after passing the brokers in ``path``."""

    kind: ClassVar[str] = "delivered"
    message: int
    consumer: str
    broker: str
    path: tuple[str, ...]

    @property
    def hops(self) -> int:
        """How many bridges the message crossed."""
        return len(self.path)


@dataclass(frozen=True)
class Waiting:
    """``message`` stays queued on ``broker``, having passed the brokers in ``path``."""

    kind: ClassVar[str] = "waiting"
    message: int
    broker: str
    path: tuple[str, ...]


@dataclass(frozen=True)
class Dropped:
    """A copy of topic message ``message`` had no subscription on ``broker`` and is discarded."""

    kind: ClassVar[str] = "dropped"
    message: int
    broker: str
    path: tuple[str, ...]


Event = Union[Delivered, Waiting, Dropped]


@dataclass(frozen=True)
class Applied(Outcome):
    """The operation took effect; ``events`` are the moves of waiting messages it caused."""

    kind: ClassVar[str] = "applied"
    events: tuple[Event, ...] = ()


@dataclass(frozen=True)
class Sent(Outcome):
    """Message ``message`` was sent; ``events`` follow it (and its topic copies) to where each ended."""

    kind: ClassVar[str] = "sent"
    message: int
    events: tuple[Event, ...] = ()


@dataclass(frozen=True)
class Refused(Outcome):
    """The operation was refused and changed nothing."""

    kind: ClassVar[str] = "refused"
    reason: Refusal


@dataclass(frozen=True)
class Holding:
    """One registration a demand query reports, as a consumer advisory shows it: the broker that holds it, the
    brokerPath its advisory came through (empty for a client consumer) and its consumer priority."""

    broker: str
    path: tuple[str, ...]
    priority: int


@dataclass(frozen=True)
class DemandQueried(Outcome):
    """The brokers that hold demand for ``destination`` (a client consumer or a demand subscription), sorted,
    and every registration for it (``holdings``, sorted by broker, path and priority)."""

    kind: ClassVar[str] = "demand_queried"
    destination: str
    brokers: tuple[str, ...] = ()
    holdings: tuple[Holding, ...] = ()


TopologyOutcome = Union[Applied, Sent, Refused, DemandQueried]

OUTCOME_TYPES: tuple[type[Outcome], ...] = (Applied, Sent, Refused, DemandQueried)
