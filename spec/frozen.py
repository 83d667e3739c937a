"""Immutable mappings for spec state.

Introduction
------------
Spec state is a value: two states with the same content are equal, can be
hashed, and no operation can change one in place. Python has no built-in
immutable dict, so this module provides :class:`FrozenMap`, a small read-only
mapping whose "updates" (:meth:`FrozenMap.set`, :meth:`FrozenMap.remove`)
return new maps. It is deliberately simple: every update copies. The spec is
written to be read, not to be fast; the fast implementation lives in ``impl``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class FrozenMap(Mapping[K, V], Generic[K, V]):
    """A read-only mapping with value equality and a hash.

    >>> m = FrozenMap({"a": 1})
    >>> m.set("b", 2)
    FrozenMap({'a': 1, 'b': 2})
    >>> m
    FrozenMap({'a': 1})
    >>> m.set("b", 2) == FrozenMap({"b": 2, "a": 1})
    True
    """

    __slots__ = ("_data", "_hash")

    def __init__(self, items: Mapping[K, V] | Iterable[tuple[K, V]] = ()) -> None:
        self._data: dict[K, V] = dict(items)
        self._hash: int | None = None

    def __getitem__(self, key: K) -> V:
        return self._data[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._data.items()))
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenMap):
            return self._data == other._data
        return NotImplemented

    def __repr__(self) -> str:
        return f"FrozenMap({self._data!r})"

    def set(self, key: K, value: V) -> FrozenMap[K, V]:
        """Return a copy in which ``key`` maps to ``value``."""
        data = dict(self._data)
        data[key] = value
        return FrozenMap(data)

    def remove(self, key: K) -> FrozenMap[K, V]:
        """Return a copy without ``key`` (which must be present)."""
        data = dict(self._data)
        del data[key]
        return FrozenMap(data)
