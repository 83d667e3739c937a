"""Immutable mappings for spec state.

Introduction
------------
Spec state is a value: two states with the same content are equal, can be
hashed, and no operation can change one in place. Python has no built-in
immutable dict, so this module provides :class:`FrozenMap`, a small read-only
mapping whose "updates" (:meth:`FrozenMap.set`, :meth:`FrozenMap.remove`)
return new maps. It is deliberately simple: every update copies. The spec is
written to be read, not to be fast; the fast implementation lives in ``impl``.
Reading a map (``get``, ``in``, ``items()``...) goes straight to the dict it
wraps, and :func:`replace` copies a state value without
:func:`dataclasses.replace`'s per-call look at the class's fields: replaying
a recorded history applies the spec to every line, and those were most of
its cost.
"""

from __future__ import annotations

import dataclasses
import inspect
from operator import attrgetter
from collections.abc import Callable, ItemsView, Iterable, Iterator, KeysView, Mapping, Sequence, ValuesView
from typing import Any, Generic, TypeVar, overload

K = TypeVar("K")
V = TypeVar("V")
T = TypeVar("T")
S = TypeVar("S")
D = TypeVar("D")


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

    def __contains__(self, key: object) -> bool:
        return key in self._data

    @overload
    def get(self, key: K, /) -> V | None: ...
    @overload
    def get(self, key: K, default: V | D, /) -> V | D: ...

    def get(self, key: K, default: object = None, /) -> object:
        return self._data.get(key, default)

    def keys(self) -> KeysView[K]:
        return self._data.keys()

    def values(self) -> ValuesView[V]:
        return self._data.values()

    def items(self) -> ItemsView[K, V]:
        return self._data.items()

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


_FILLABLE: dict[type[Any], bool] = {}


def fillable(cls: type[Any]) -> bool:
    """Whether a value of dataclass ``cls`` may be built by filling in its fields, then running its
    ``__post_init__`` if it has one: exactly what its generated ``__init__`` does.

    That holds when the generated ``__init__`` takes every field and nothing else (no init-only
    pseudo-field, no hand-written ``__init__``) and instances have a ``__dict__`` (no slots). Looked up
    once per class.
    """
    if cls not in _FILLABLE:
        fields = dataclasses.fields(cls)
        parameters = list(inspect.signature(cls.__init__).parameters)[1:]
        # dataclasses compiles the __init__ it writes from text, so its code comes from "<string>"; the
        # parameters are compared by name, since a keyword-only field (an outcome's rule) comes last
        generated = getattr(getattr(cls.__init__, "__code__", None), "co_filename", "") == "<string>"
        _FILLABLE[cls] = (cls.__dataclass_params__.init and generated and cls.__dictoffset__ != 0
                          and all(f.init for f in fields) and sorted(parameters) == sorted(f.name for f in fields))
    return _FILLABLE[cls]


_PLAIN_FIELDS: dict[type[Any], frozenset[str] | None] = {}


def plain_fields(cls: type[Any]) -> frozenset[str] | None:
    """The field names of dataclass ``cls`` if a value of it may be built by filling in its fields, else None.

    That holds for a :func:`fillable` class with nothing to check (no ``__post_init__``): its ``__init__``
    would only store the fields. :func:`replace` and the codec's decoders build such values directly; any
    other class goes through its ``__init__``. Looked up once per class.
    """
    if cls not in _PLAIN_FIELDS:
        plain = fillable(cls) and not hasattr(cls, "__post_init__")
        _PLAIN_FIELDS[cls] = frozenset(f.name for f in dataclasses.fields(cls)) if plain else None
    return _PLAIN_FIELDS[cls]


def replace(value: T, /, **changes: Any) -> T:
    """A copy of the frozen dataclass ``value`` with ``changes``: what :func:`dataclasses.replace` returns.

    A class with :func:`plain_fields` is copied field by field and the changes written over; any other
    class goes through :func:`dataclasses.replace`, which runs its checks.

    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Point:
    ...     x: int
    ...     y: int = 0
    >>> replace(Point(1, 2), y=5), Point(1, 2)
    (Point(x=1, y=5), Point(x=1, y=2))
    >>> replace(Point(1), z=3)
    Traceback (most recent call last):
    ...
    TypeError: Point has no field 'z'
    """
    cls = type(value)
    names = plain_fields(cls)
    if names is None:
        return dataclasses.replace(value, **changes)  # type: ignore[type-var]
    if not names.issuperset(changes):
        raise TypeError(f"{cls.__name__} has no field {sorted(set(changes) - names)[0]!r}")
    copy = object.__new__(cls)
    copy.__dict__.update(value.__dict__)
    copy.__dict__.update(changes)
    return copy


def maker(cls: type[T]) -> Callable[..., T]:
    """A function that builds a value of dataclass ``cls`` from all its fields' values, in field order.

    For a class with :func:`plain_fields` the value's fields are filled in directly, which is what its
    generated ``__init__`` does at about half the cost (a frozen class's ``__init__`` stores each field through
    ``object.__setattr__``); any other class is called with the values as keywords, so its checks run. The
    fast brokers' snapshots build a spec state after every step of a lockstep check, from a handful of these
    values each time. (:class:`Maker` shows one at work.)
    """
    kind: type[Any] = cls  # a dataclass
    names = tuple(f.name for f in dataclasses.fields(kind))
    plain = plain_fields(cls) is not None
    new = object.__new__

    def make(*values: Any) -> T:
        if len(values) != len(names):
            raise TypeError(f"{cls.__name__} takes {len(names)} field values, got {len(values)}")
        if not plain:
            return cls(**dict(zip(names, values)))
        value = new(cls)
        value.__dict__.update(zip(names, values))
        return value

    make.__qualname__ = make.__name__ = f"make_{cls.__name__}"
    return make


class Maker(Generic[T]):
    """Builds values of a dataclass from its fields' values in field order (:func:`maker`), or hands back an
    equal value it is shown instead of building one.

    :meth:`like` is for a snapshot that will be compared with a known state (a lockstep check compares every
    subject's snapshot with the spec's state after every step): a part equal to the state's part *is* that
    part, so building it costs no new value and comparing it costs an identity test. A value handed back is
    equal to the one that would have been built, field by field (``==``), so the snapshot compares with
    anything exactly as the one built from scratch would.

    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Point:
    ...     x: int
    ...     y: int = 0
    >>> point = Maker(Point)
    >>> seen = Point(1, 2)
    >>> point.new(1, 2) == seen, point.like(seen, 1, 2) is seen, point.like(seen, 1, 3), point.like(None, 1, 2) == seen
    (True, True, Point(x=1, y=3), True)
    >>> point.new(1)
    Traceback (most recent call last):
    ...
    TypeError: Point takes 2 field values, got 1
    """

    __slots__ = ("cls", "new", "fields")

    def __init__(self, cls: type[T]) -> None:
        self.cls = cls
        self.new: Callable[..., T] = maker(cls)
        """Build a value from every field's value."""
        kind: type[Any] = cls  # a dataclass
        names = [f.name for f in dataclasses.fields(kind)]
        self.fields: Callable[[T], tuple[Any, ...]] = (
            attrgetter(*names) if len(names) > 1 else (lambda value: (getattr(value, names[0]),)))
        """A value's fields' values in field order."""

    def like(self, seen: T | None, *values: Any) -> T:
        """``seen`` if it is of this class and its fields equal ``values``, else a new value of them."""
        if seen.__class__ is self.cls and self.fields(seen) == values:  # None is of no dataclass
            return seen
        return self.new(*values)


def map_like(seen: FrozenMap[K, V] | None, data: Mapping[K, V]) -> FrozenMap[K, V]:
    """``seen`` if it holds what ``data`` holds (``==``), else a map of ``data`` (``data`` itself when it is a
    :class:`FrozenMap`): :meth:`Maker.like` for a map.

    >>> seen = FrozenMap({"a": 1})
    >>> map_like(seen, {"a": 1}) is seen, map_like(seen, FrozenMap({"a": 1})) is seen, map_like(seen, {"a": 2})
    (True, True, FrozenMap({'a': 2}))
    """
    if data.__class__ is FrozenMap:  # class tests, not isinstance: a Mapping's isinstance goes through the ABC
        made: FrozenMap[K, V] = data
        return seen if seen.__class__ is FrozenMap and seen._data == made._data else made
    if seen.__class__ is FrozenMap and seen._data == data:
        return seen
    return FrozenMap(data)


def each_like(seen: tuple[T, ...], items: Sequence[S], make: Callable[[T | None, S], T]) -> tuple[T, ...]:
    """``make(old, item)`` for each of ``items``, ``old`` being the value of ``seen`` in its place (None when
    ``seen`` has another length: an item added or taken shifts the rest); ``seen`` itself when every value
    made is ``seen``'s own (each handed back by :meth:`Maker.like`): :meth:`Maker.like` for a tuple.

    >>> seen = ("a", "b")
    >>> keep = lambda old, item: old if old == item else item.upper()
    >>> each_like(seen, ["a", "b"], keep) is seen, each_like(seen, ["a", "c"], keep), each_like(seen, ["a"], keep)
    (True, ('a', 'C'), ('A',))
    """
    if not items:
        return ()
    olds: Sequence[T | None] = seen if len(seen) == len(items) else (None,) * len(items)
    made = [make(old, item) for old, item in zip(olds, items)]
    return seen if len(seen) == len(made) and all(new is old for new, old in zip(made, seen)) else tuple(made)
