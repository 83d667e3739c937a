"""The spec's cheaper copy of a state value gives what ``dataclasses.replace`` gives, checks included."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brokerspec.check.strategies import commands
from brokerspec.spec import InvalidCommand, get_profile
from brokerspec.spec.addressing import AddressingCommand, apply, initial_state
from brokerspec.spec.frozen import FrozenMap, replace
from brokerspec.spec.topologies.model import BridgeConfig


def _changes(value: Any) -> dict[str, Any]:
    """Each field of ``value`` set to the same field of a fresh default-ish state, so something changes."""
    return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}


@settings(max_examples=60, deadline=None)
@given(script=st.lists(commands(), min_size=1, max_size=12), profile=st.sampled_from(["seed", "artemis-latest"]))
def test_a_copy_of_every_state_reached_equals_dataclasses_replace(script: list[AddressingCommand],
                                                                  profile: str) -> None:
    first = state = initial_state(get_profile(profile))
    for command in script:
        state, _ = apply(state, command)
    for name, value in _changes(state).items():
        expected = dataclasses.replace(first, **{name: value})
        copied = replace(first, **{name: value})
        assert type(copied) is type(expected) and copied == expected and hash(copied) == hash(expected)
        assert _changes(copied) == _changes(expected)
    assert replace(state) == state and replace(state) is not state
    assert first == initial_state(get_profile(profile)), "the original is never changed"


def test_a_class_with_checks_still_runs_them() -> None:
    config = BridgeConfig()
    assert replace(config, consumer_ttl=3) == dataclasses.replace(config, consumer_ttl=3)
    with pytest.raises(InvalidCommand, match="consumer_ttl 0"):
        replace(config, consumer_ttl=0)


def test_an_unknown_field_is_refused() -> None:
    state = initial_state(get_profile("seed"))
    with pytest.raises(TypeError, match="has no field 'colour'"):
        replace(state, colour="red")


def test_a_frozen_map_reads_as_its_dict() -> None:
    data = {"a": 1, "b": 2}
    frozen = FrozenMap(data)
    assert frozen.get("a") == 1 and frozen.get("z") is None and frozen.get("z", 7) == 7
    assert "a" in frozen and "z" not in frozen
    assert list(frozen.keys()) == ["a", "b"] and list(frozen.values()) == [1, 2]
    assert list(frozen.items()) == [("a", 1), ("b", 2)] and frozen.keys() == {"a", "b"}
    assert frozen.set("c", 3).items() == {("a", 1), ("b", 2), ("c", 3)} and "c" not in frozen


@dataclasses.dataclass(frozen=True)
class _Checked:
    value: int

    def __post_init__(self) -> None:
        if self.value < 0:
            raise InvalidCommand("negative", "value")


@dataclasses.dataclass(frozen=True)
class _Plain:
    value: int


@dataclasses.dataclass(frozen=True)
class _WithInitVar:
    value: int
    scale: dataclasses.InitVar[int] = 1


@dataclasses.dataclass(frozen=True, slots=True)
class _Slotted:
    value: int


@dataclasses.dataclass(frozen=True)
class _HandWritten:
    value: int

    def __init__(self, text: str) -> None:
        object.__setattr__(self, "value", int(text))


@dataclasses.dataclass(frozen=True)
class _KeywordLast(_Plain):
    note: str = dataclasses.field(default="", kw_only=True)
    other: int = 0


@dataclasses.dataclass(frozen=True)
class _HandWrittenSameNames:
    value: int
    other: int

    def __init__(self, other: int, value: int) -> None:
        object.__setattr__(self, "value", value * 2)
        object.__setattr__(self, "other", other)


def test_only_a_class_whose_init_just_stores_its_fields_is_fillable() -> None:
    from brokerspec.spec.frozen import fillable, plain_fields

    assert fillable(_Checked) and plain_fields(_Checked) is None, "fillable, but its check must run"
    assert fillable(_Plain) and plain_fields(_Plain) == frozenset({"value"})
    assert not fillable(_WithInitVar), "__init__ takes an init-only argument that is no field"
    assert not fillable(_Slotted), "no __dict__ to fill"
    assert not fillable(_HandWritten), "its own __init__ does more than store"
    assert fillable(_KeywordLast), "a keyword-only field comes last in __init__, but it is still just stored"
    assert replace(_KeywordLast(1, note="n", other=2), other=3) == _KeywordLast(1, note="n", other=3)
    assert not fillable(_HandWrittenSameNames), "a hand-written __init__ is never filled, even with the same names"


def _field_values(draw: st.DrawFn, cls: type[Any]) -> tuple[Any, ...]:
    """A value for each field of ``cls`` in field order (types are not checked by the dataclass: any will do)."""
    return tuple(draw(st.one_of(st.none(), st.integers(-3, 3), st.text(max_size=3), st.booleans()))
                 for _ in dataclasses.fields(cls))


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_a_made_value_is_the_one_its_class_builds(data: st.DataObject) -> None:
    from brokerspec.spec import balancing
    from brokerspec.spec.frozen import maker

    classes = [balancing.BalancingState, balancing.QueueState, balancing.Consumer, balancing.Message,
               balancing.Session, balancing.PendingSend, balancing.Forward, _Plain, _KeywordLast]
    cls = data.draw(st.sampled_from(classes))
    values = data.draw(st.composite(_field_values)(cls))
    names = [f.name for f in dataclasses.fields(cls)]
    expected = cls(**dict(zip(names, values)))
    made: Any = maker(cls)(*values)
    assert type(made) is cls and made == expected and vars(made) == vars(expected)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(made, names[0], 1)


def test_a_maker_runs_a_class_s_checks_and_counts_the_values() -> None:
    from brokerspec.spec.frozen import maker

    assert maker(_Checked)(2) == _Checked(2)
    with pytest.raises(InvalidCommand, match="negative"):
        maker(_Checked)(-1)
    assert maker(_KeywordLast)(1, "n", 2) == _KeywordLast(1, note="n", other=2), "field order, not __init__ order"
    with pytest.raises(TypeError, match="_Plain takes 1 field values, got 2"):
        maker(_Plain)(1, 2)
