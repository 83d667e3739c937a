"""The codec's decoders, built once per class, decode exactly as reading the annotations on every value did.

The oracle below is the decoder as it was before classes got compiled decoders: it asks
:func:`typing.get_type_hints` on every value and walks the annotation afresh. The tests draw JSON data
shaped by every command, outcome and reason class of every domain (valid, and with fields dropped, added
or replaced by arbitrary JSON), and demand the same value, or the same error path and message, from both.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from enum import Enum
from typing import Any, Union

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brokerspec import codec
from brokerspec.codec import COMMANDS, OUTCOMES, REASONS_BY_KIND, CodecError, decode_command, decode_outcome
from brokerspec.spec import BrokerspecError, Reason

# --- the oracle: decoding by reading the annotations on every value -------------------------------


def _oracle_tagged(data: object, registry: dict[str, type[Any]], path: str) -> Any:
    if not isinstance(data, dict):
        raise CodecError(path, f"expected an object, got {codec._show(data)}")
    kind = data.get("type")
    if not isinstance(kind, str) or kind not in registry:
        raise CodecError(f"{path}.type", f"expected one of {', '.join(sorted(registry))}, got {codec._show(kind)}")
    return _oracle_dataclass(registry[kind], {k: v for k, v in data.items() if k != "type"}, path)


def _oracle_dataclass(cls: type[Any], data: object, path: str) -> Any:
    if not isinstance(data, dict):
        raise CodecError(path, f"expected an object, got {codec._show(data)}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise CodecError(f"{path}.{unknown[0]}", f"unknown field; {cls.__name__} has {', '.join(fields) or 'none'}")
    values: dict[str, Any] = {}
    for name, f in fields.items():
        if name not in data:
            if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING:
                continue
            raise CodecError(f"{path}.{name}", "missing field")
        values[name] = _oracle_value(hints[name], data[name], f"{path}.{name}")
    try:
        return cls(**values)
    except BrokerspecError as error:
        field = getattr(error, "field", "")
        raise CodecError(f"{path}.{field}" if field else path, str(error)) from None


def _oracle_value(hint: Any, value: object, path: str) -> Any:
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        options = typing.get_args(hint)
        if value is None and type(None) in options:
            return None
        present = [option for option in options if option is not type(None)]
        tags: dict[str, Any] = {getattr(option, "kind", ""): option for option in present}
        if isinstance(value, dict) and "" not in tags:
            return _oracle_tagged(value, tags, path)
        if len(present) == 1:
            return _oracle_value(present[0], value, path)
        errors = []
        for option in present:
            try:
                return _oracle_value(option, value, path)
            except CodecError as error:
                errors.append(error.message)
        raise CodecError(path, " or ".join(errors))
    if origin in (frozenset, tuple):
        item = typing.get_args(hint)[0]
        if not isinstance(value, list):
            raise CodecError(path, f"expected a list, got {codec._show(value)}")
        members = [_oracle_value(item, v, f"{path}[{i}]") for i, v in enumerate(value)]
        if origin is tuple:
            return tuple(members)
        if len(set(members)) != len(members):
            raise CodecError(path, f"a set must not repeat a member, got {codec._show(value)}")
        return frozenset(members)
    if isinstance(hint, type) and issubclass(hint, Enum):
        choices = [m.value for m in hint]
        if value not in choices:
            raise CodecError(path, f"expected one of {', '.join(map(str, choices))}, got {codec._show(value)}")
        return hint(value)
    if hint is Reason:
        return _oracle_tagged(value, REASONS_BY_KIND, path)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _oracle_dataclass(hint, value, path)
    expected = {bool: (bool, "true or false"), str: (str, "a string"), int: (int, "an integer")}[hint]
    if not isinstance(value, expected[0]) or (hint is int and isinstance(value, bool)):
        raise CodecError(path, f"expected {expected[1]}, got {codec._show(value)}")
    return value


# --- JSON data shaped by the annotations, then damaged -------------------------------------------

ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["", "a1", "x", "ANYCAST", "rejected", "0a"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["type", "name", "zz"]), inner,
                                                                max_size=2),
    max_leaves=6)
TEXT = st.sampled_from(["a1", "q1", "a1::q1", "x", "0a1b", "", "é::q"])


def _shaped(hint: Any, depth: int = 0) -> st.SearchStrategy[Any]:
    """JSON data a value of type ``hint`` encodes to (mostly), drawn from the annotation."""
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        return st.one_of(*(st.none() if option is type(None) else _shaped(option, depth)
                           for option in typing.get_args(hint)))
    if origin in (frozenset, tuple):
        return st.lists(_shaped(typing.get_args(hint)[0], depth + 1), max_size=0 if depth > 2 else 3)
    if isinstance(hint, type) and issubclass(hint, Enum):
        return st.sampled_from([m.value for m in hint])
    if hint is Reason:
        return st.sampled_from(sorted(REASONS_BY_KIND)).flatmap(lambda kind: _object(REASONS_BY_KIND[kind], depth))
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _object(hint, depth)
    return {bool: st.booleans(), str: TEXT, int: st.integers(-2, 40)}[hint]


def _object(cls: type[Any], depth: int) -> st.SearchStrategy[dict[str, Any]]:
    hints = typing.get_type_hints(cls)
    fields = {f.name: _shaped(hints[f.name], depth + 1) for f in dataclasses.fields(cls) if f.name != "rule"}
    tag = {"type": st.just(cls.kind)} if isinstance(getattr(cls, "kind", None), str) else {}
    return st.fixed_dictionaries({**tag, **fields}, optional={"rule": st.sampled_from(["", "ADDR-X"])})


@st.composite
def damaged(draw: st.DrawFn, data: Any) -> Any:
    """``data`` with, sometimes, one object member dropped, added or replaced, or a list item replaced."""
    objects: list[dict[str, Any]] = []
    lists: list[list[Any]] = []

    def collect(value: Any) -> None:
        if isinstance(value, dict):
            objects.append(value)
            for member in value.values():
                collect(member)
        elif isinstance(value, list):
            lists.append(value)
            for member in value:
                collect(member)

    collect(data)
    how = draw(st.sampled_from(["none", "none", "drop", "add", "replace", "item"]))
    if how == "item" and any(lists):
        items = draw(st.sampled_from([items for items in lists if items]))
        items[draw(st.integers(0, len(items) - 1))] = draw(ANY_JSON)
        return data
    if how in ("none", "item") or not objects:
        return data
    target = draw(st.sampled_from(objects))
    if how == "drop" and target:
        del target[draw(st.sampled_from(sorted(target)))]
    elif how == "add":
        target[draw(st.sampled_from(["zz", "name", "type", "rule"]))] = draw(ANY_JSON)
    elif target:
        target[draw(st.sampled_from(sorted(target)))] = draw(ANY_JSON)
    return data


def _result(decode: typing.Callable[[], Any]) -> tuple[str, Any]:
    try:
        value = decode()
    except CodecError as error:
        return "error", (error.path, error.message)
    fields = list(vars(value).items()) if hasattr(value, "__dict__") else None  # every field set, in order
    return "value", (type(value), value, getattr(value, "rule", None), fields)


COMMAND_CASES = [(domain, op) for domain, ops in COMMANDS.items() for op in sorted(ops)]
OUTCOME_CASES = [(domain, kind) for domain, kinds in OUTCOMES.items() for kind in sorted(kinds)]


@pytest.mark.parametrize(("domain", "op"), COMMAND_CASES, ids=[f"{d}.{o}" for d, o in COMMAND_CASES])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_command_decodes_as_the_annotations_say(domain: str, op: str, data: st.DataObject) -> None:
    cls = COMMANDS[domain][op]
    args = data.draw(_object(cls, 0).map(lambda d: {k: v for k, v in d.items() if k not in ("type", "rule")}))
    args = data.draw(damaged(args))
    assert _result(lambda: decode_command(op, args, domain=domain)) == _result(
        lambda: _oracle_dataclass(cls, args, "args"))


@pytest.mark.parametrize(("domain", "kind"), OUTCOME_CASES, ids=[f"{d}.{k}" for d, k in OUTCOME_CASES])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_outcome_decodes_as_the_annotations_say(domain: str, kind: str, data: st.DataObject) -> None:
    encoded = data.draw(damaged(data.draw(_object(OUTCOMES[domain][kind], 0))))
    assert _result(lambda: decode_outcome(encoded, domain=domain)) == _result(
        lambda: _oracle_tagged(encoded, OUTCOMES[domain], "outcome"))


def test_the_oracle_and_the_decoder_both_refuse_what_is_damaged() -> None:
    """The comparison above has teeth: damaged data is refused, the same way, by both."""
    damaged_send = {"name": "a1", "routing_type": "BROADCAST"}
    assert _result(lambda: decode_command("send", damaged_send)) == _result(
        lambda: _oracle_dataclass(COMMANDS["addressing"]["send"], damaged_send, "args")) == (
        "error", ("args.routing_type", "expected one of ANYCAST, MULTICAST, got 'BROADCAST'"))


def test_a_class_s_annotations_are_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading annotations is the cost the compiled decoders remove: a second decode reads none."""
    decode_outcome({"type": "rejected", "reason": {"type": "queue_exists", "queue": "q1", "address": "a1"}})
    decode_command("create_queue", {"address": "a1", "queue": "q1", "routing_type": "ANYCAST"})
    calls: list[object] = []
    real = typing.get_type_hints

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(typing, "get_type_hints", counting)
    for _ in range(3):
        decoded = decode_outcome({"type": "rejected", "reason": {"type": "queue_exists", "queue": "q1",
                                                                 "address": "a1"}})
        assert decode_command("create_queue", {"address": "a1", "queue": "q1", "routing_type": "ANYCAST"})
    assert calls == []
    assert codec.encode_outcome(decoded) == {"type": "rejected", "reason": {"type": "queue_exists", "queue": "q1",
                                                                            "address": "a1"}}


ODD_VALUES: list[Any] = [None, False, True, 0, 1, -1, "", "x", "ANYCAST", [], ["x"], [None], {}, {"type": "x"}]
ALL_CLASSES = ([(domain, op, cls) for domain, ops in COMMANDS.items() for op, cls in sorted(ops.items())]
               + [(domain, kind, cls) for domain, kinds in OUTCOMES.items() for kind, cls in sorted(kinds.items())])


@pytest.mark.parametrize(("domain", "name", "cls"), ALL_CLASSES,
                         ids=[f"{d}.{n}.{c.__name__}" for d, n, c in ALL_CLASSES])
@settings(max_examples=3, deadline=None)
@given(data=st.data())
def test_every_field_of_every_class_given_each_odd_value(domain: str, name: str, cls: type[Any],
                                                         data: st.DataObject) -> None:
    """Every field in turn, and the first item of every list, holds each of a few odd JSON values."""
    is_command = cls in COMMANDS[domain].values()
    valid = data.draw(_object(cls, 0))
    if is_command:
        valid = {k: v for k, v in valid.items() if k not in ("type", "rule")}

    def decoded() -> tuple[str, Any]:
        if is_command:
            return _result(lambda: decode_command(name, valid, domain=domain))
        return _result(lambda: decode_outcome(valid, domain=domain))

    def expected() -> tuple[str, Any]:
        if is_command:
            return _result(lambda: _oracle_dataclass(cls, valid, "args"))
        return _result(lambda: _oracle_tagged(valid, OUTCOMES[domain], "outcome"))

    def places(value: Any) -> typing.Iterator[tuple[Any, Any]]:
        if isinstance(value, dict):
            for key in list(value):
                yield value, key
                yield from places(value[key])
        elif isinstance(value, list) and value:
            yield value, 0
            yield from places(value[0])

    assert decoded() == expected()
    for container, key in list(places(valid)):
        kept = container[key]
        for odd in ODD_VALUES:
            container[key] = odd
            assert decoded() == expected(), (key, odd)
        container[key] = kept


# --- encoding: field names looked up once per class -----------------------------------------------


def _oracle_encode(value: object) -> Any:
    """The encoder as it was: ``dataclasses.fields`` asked on every value."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, frozenset):
        return sorted(_oracle_encode(v) for v in value)
    if isinstance(value, tuple):
        return [_oracle_encode(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        kind = getattr(value, "kind", None)
        data: dict[str, Any] = {"type": kind} if isinstance(kind, str) else {}
        data.update({f.name: _oracle_encode(getattr(value, f.name)) for f in dataclasses.fields(value)
                     if f.name != "rule"})
        if getattr(value, "rule", ""):
            data["rule"] = value.rule  # type: ignore[attr-defined]
        return data
    return value


@pytest.mark.parametrize(("domain", "name", "cls"), ALL_CLASSES,
                         ids=[f"{d}.{n}.{c.__name__}" for d, n, c in ALL_CLASSES])
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_every_class_encodes_as_before(domain: str, name: str, cls: type[Any], data: st.DataObject) -> None:
    drawn = data.draw(_object(cls, 0))
    is_command = cls in COMMANDS[domain].values()
    try:
        value = (_oracle_dataclass(cls, {k: v for k, v in drawn.items() if k not in ("type", "rule")}, "args")
                 if is_command else _oracle_tagged(drawn, OUTCOMES[domain], "outcome"))
    except CodecError:
        return  # drawn data a command refuses (a malformed hex ID...): nothing to encode
    expected = _oracle_encode(value)
    if is_command:
        expected.pop("type", None)
        assert codec.encode_command(value) == expected
    else:
        assert codec.encode_outcome(value) == expected
        assert decode_outcome(codec.encode_outcome(value), domain=domain) == value
