"""The step: one operation's state under construction, the events it caused and the choices it made.

Introduction
------------
Every load-balancing operation works on a :class:`Step`: it reads and
replaces ``step.state``, appends the events it causes (where messages went),
marks the queues whose delivery it prompted, and makes each of its choices
through ``step.choose``, which asks a :class:`Chooser`. :data:`STRICT` makes
Artemis's own choice every time; permissive judging (:mod:`.judge`) passes
a chooser that follows whichever allowed choice a broker made.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..frozen import replace
from .choice import ChoicePoint
from .model import BalancingState, QueueKey, QueueState
from .outcomes import Event


class Chooser(Protocol):
    """Picks one of the allowed candidates at a choice point."""

    def pick(self, allowed: tuple[int, ...], strict: int) -> int:
        """One of ``allowed``; ``strict`` (a member of it) is Artemis's own choice."""
        ...


class StrictChooser:
    """Always Artemis's own choice."""

    def pick(self, allowed: tuple[int, ...], strict: int) -> int:
        return strict


STRICT = StrictChooser()


class Step:
    """The state being built by one operation, and the events it has caused so far."""

    def __init__(self, state: BalancingState, chooser: Chooser) -> None:
        self.state = state
        self.chooser = chooser
        self.events: list[Event] = []
        self.start_clock = state.clock
        self.prompted: set[QueueKey] = set()
        """Queues whose delivery this step prompted (``QueueImpl.deliverAsync``): only their redistributors try."""
        self.choices: list[ChoicePoint] = []
        """Every choice made so far, in order (what fairness over a run is judged on)."""

    def choose(self, kind: str, key: tuple[str, ...], candidates: tuple[str, ...], allowed: tuple[int, ...],
               strict: int) -> int:
        """Let the chooser pick one of ``allowed``, and record the choice."""
        picked = self.chooser.pick(allowed, strict)
        self.choices.append(ChoicePoint(kind, key, candidates, allowed, strict, picked))
        return picked

    def put_queue(self, queue: QueueState) -> None:
        self.state = replace(self.state, queues=self.state.queues.set((queue.node, queue.name), queue))

    def update(self, **changes: Any) -> None:
        self.state = replace(self.state, **changes)

    def new_message_id(self) -> int:
        number = self.state.next_message
        self.update(next_message=number + 1)
        return number
