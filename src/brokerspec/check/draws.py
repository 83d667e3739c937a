"""Draws: how a lockstep rule's arguments are read from the bytes of one step.

Introduction
------------
The checker's scenarios are drawn by Hypothesis as a few byte strings
(:mod:`.engine`): one for the starting state, one per step. A *draw* turns a
fixed stretch of those bytes into an argument value, so one step costs
Hypothesis one choice however many arguments its rule has, where a
rule-based machine makes a dozen (feature flags, a filtered rule, a nest of
``one_of`` per argument).

Every draw reads a fixed number of bytes (its :attr:`Draw.width`) at a
fixed offset, whatever value it picks, so shrinking one byte changes one
argument and leaves the others where they were. Byte 0 always gives the
first (simplest) value, and Hypothesis shrinks bytes towards 0: list the
values a draw picks from simplest first.

Weights are written as repetition, as the machines did with
``sampled_from``: ``pick(True, True, True, False)`` is True three times in
four.

>>> pick("a", "b").at(bytes([0]), 0), pick("a", "b").at(bytes([255]), 0)
('a', 'b')
>>> lists(pick(1, 2, 3), 1, 3).at(bytes([255, 0, 128, 255]), 0)
[1, 2, 3]
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

T = TypeVar("T")
U = TypeVar("U")
T_co = TypeVar("T_co", covariant=True)


class Draw(ABC, Generic[T_co]):
    """Reads one value from ``width`` bytes at a given offset."""

    width = 1

    @abstractmethod
    def at(self, data: bytes, offset: int) -> T_co:
        """The value the ``width`` bytes of ``data`` from ``offset`` stand for."""

    def map(self, function: Callable[[T_co], U]) -> Draw[U]:
        """This draw with ``function`` applied to its value."""
        return _Mapped(self, function)


class _Pick(Draw[T]):
    """One of a few values, by one byte: 0 is the first value."""

    def __init__(self, values: Sequence[T]) -> None:
        if not 0 < len(values) <= 256:
            raise ValueError(f"pick needs 1 to 256 values, got {len(values)}")
        self.values = tuple(values)
        self.count = len(self.values)

    def at(self, data: bytes, offset: int) -> T:
        return self.values[data[offset] * self.count >> 8]

    def __repr__(self) -> str:
        return f"pick{self.values!r}"


class _Either(Draw[T]):
    """One of several draws, chosen by a byte; the chosen one reads the bytes after it."""

    def __init__(self, branches: Sequence[Draw[T]]) -> None:
        if not 0 < len(branches) <= 256:
            raise ValueError(f"either needs 1 to 256 draws, got {len(branches)}")
        self.branches = tuple(branches)
        self.count = len(self.branches)
        self.width = 1 + max(branch.width for branch in self.branches)

    def at(self, data: bytes, offset: int) -> T:
        return self.branches[data[offset] * self.count >> 8].at(data, offset + 1)


class _Lists(Draw[list[T]]):
    """A list of ``low`` to ``high`` values: one byte for the length, then room for ``high`` elements."""

    def __init__(self, element: Draw[T], low: int, high: int) -> None:
        if not 0 <= low <= high:
            raise ValueError(f"a list of {low} to {high} elements is not a range")
        self.element, self.low, self.span = element, low, high - low + 1
        self.width = 1 + high * element.width

    def at(self, data: bytes, offset: int) -> list[T]:
        size = self.low + (data[offset] * self.span >> 8)
        step, element = self.element.width, self.element
        return [element.at(data, offset + 1 + index * step) for index in range(size)]


class _Tuples(Draw[tuple[Any, ...]]):
    """Several draws side by side."""

    def __init__(self, parts: Sequence[Draw[Any]]) -> None:
        self.parts = tuple(parts)
        self.offsets = tuple(sum(part.width for part in self.parts[:index]) for index in range(len(self.parts)))
        self.width = sum(part.width for part in self.parts)

    def at(self, data: bytes, offset: int) -> tuple[Any, ...]:
        return tuple(part.at(data, offset + shift) for part, shift in zip(self.parts, self.offsets))


class _Mapped(Draw[U]):
    def __init__(self, inner: Draw[T], function: Callable[[T], U]) -> None:
        self.inner, self.function, self.width = inner, function, inner.width

    def at(self, data: bytes, offset: int) -> U:
        return self.function(self.inner.at(data, offset))


def pick(*values: T) -> Draw[T]:
    """One of ``values`` (repeat a value to weigh it); byte 0 picks the first."""
    return _Pick(values)


def either(*branches: Draw[T]) -> Draw[T]:
    """A value of one of ``branches``, each as likely (repeat one to weigh it), like Hypothesis's ``one_of``."""
    return _Either(branches)


def integers(low: int, high: int) -> Draw[int]:
    """An integer from ``low`` to ``high``, each as likely; byte 0 gives ``low``."""
    return _Pick(range(low, high + 1))


def booleans() -> Draw[bool]:
    """False or True; byte 0 gives False."""
    return _Pick((False, True))


def optional(draw: Draw[T]) -> Draw[T | None]:
    """None or a value of ``draw``, each half the time."""
    nothing: Draw[T | None] = _Pick((None,))
    return _Either((nothing, draw))


def lists(element: Draw[T], low: int, high: int) -> Draw[list[T]]:
    """A list of ``low`` to ``high`` values of ``element`` (each length as likely)."""
    return _Lists(element, low, high)


def tuples(*parts: Draw[Any]) -> Draw[tuple[Any, ...]]:
    """A tuple of one value of each of ``parts``."""
    return _Tuples(parts)


def builds(function: Callable[..., T], *parts: Draw[Any], **named: Draw[Any]) -> Draw[T]:
    """``function`` called with one value of each of ``parts`` and of each of ``named`` (by its name)."""
    count, names = len(parts), tuple(named)
    return _Tuples(parts + tuple(named.values())).map(
        lambda values: function(*values[:count], **dict(zip(names, values[count:]))))
