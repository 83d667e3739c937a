"""Turning commands and outcomes into JSON values and back.

Introduction
------------
Commands, outcomes and rejection reasons are frozen dataclasses whose field
annotations say exactly what each field holds. This module reads those
annotations to encode a value as plain JSON data and to decode JSON data
back, checking every field: a missing field, an unknown field or a value of
the wrong type raises :class:`CodecError` naming the field's path (for
example ``args.routing_type`` or ``outcome.reason.address``). A class's
annotations are read the first time one of its values is decoded and turned
into a decoder that is kept (evaluating them costs far more than a decode), so
reading a recorded history or a SUT's replies pays for them once, not once a
line.

Encoding: strings, booleans and integers as themselves; enums by value
(``"ANYCAST"``); ``frozenset`` as a sorted list; ``tuple[str, ...]`` as a
list; ``None`` as ``null``; an outcome or reason as an object with a
``"type"`` key (``"rejected"``, ``"queue_exists"``, ...), as is any other
value whose class names a ``kind`` (a load-balancing event). An outcome's rule
ID is written under ``"rule"`` when known and is optional on reading.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from enum import Enum
from collections.abc import Callable
from typing import Any, TypeVar, Union

from brokerspec.spec import BrokerspecError, Outcome, Reason, addressing, balancing, duplicates, topologies
from brokerspec.spec.frozen import fillable

T = TypeVar("T")

COMMANDS: dict[str, dict[str, type[Any]]] = {
    "addressing": {c.op: c for c in addressing.COMMAND_TYPES},
    "duplicates": {c.op: c for c in duplicates.COMMAND_TYPES},
    "balancing": {c.op: c for c in balancing.COMMAND_TYPES},
    "topologies": {c.op: c for c in topologies.COMMAND_TYPES},
}
"""Each domain's command types by operation name (two domains may use the same name)."""
OUTCOMES: dict[str, dict[str, type[Outcome]]] = {
    "addressing": {o.kind: o for o in addressing.OUTCOME_TYPES},
    "duplicates": {o.kind: o for o in duplicates.OUTCOME_TYPES},
    "balancing": {o.kind: o for o in balancing.OUTCOME_TYPES},
    "topologies": {o.kind: o for o in topologies.OUTCOME_TYPES},
}
"""Each domain's outcome types by kind."""
REASONS_BY_KIND: dict[str, type[Reason]] = {r.kind: r for r in addressing.REASON_TYPES}
COMMANDS_BY_OP = COMMANDS["addressing"]
OUTCOMES_BY_KIND = OUTCOMES["addressing"]


class CodecError(ValueError):
    """A JSON value that does not decode; ``path`` names the offending field."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


def encode_command(command: object) -> dict[str, Any]:
    """The command's arguments as JSON data (its ``op`` is written separately)."""
    return {name: encode_value(getattr(command, name)) for name in _field_names(command)}


def encode_outcome(outcome: Outcome) -> dict[str, Any]:
    """The outcome as a JSON object with a ``type`` key."""
    data: dict[str, Any] = {"type": outcome.kind}
    for name in _field_names(outcome):
        if name != "rule":
            data[name] = encode_value(getattr(outcome, name))
    if outcome.rule:
        data["rule"] = outcome.rule
    return data


_AS_THEMSELVES = frozenset({str, int, bool, type(None)})
"""Types whose values are their own JSON data."""


def encode_value(value: object) -> Any:
    """Any field value as JSON data."""
    if type(value) in _AS_THEMSELVES:
        return value
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, frozenset):
        return sorted(encode_value(v) for v in value)
    if isinstance(value, tuple):
        return [encode_value(v) for v in value]
    if isinstance(value, Outcome):
        return encode_outcome(value)
    if isinstance(value, Reason):
        data: dict[str, Any] = {"type": value.kind}
        data.update({name: encode_value(getattr(value, name)) for name in _field_names(value)})
        return data
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        kind = getattr(value, "kind", None)
        tagged: dict[str, Any] = {"type": kind} if isinstance(kind, str) else {}
        tagged.update({name: encode_value(getattr(value, name)) for name in _field_names(value)})
        return tagged
    return value


_FIELD_NAMES: dict[type[Any], tuple[str, ...]] = {}


def _field_names(value: object) -> tuple[str, ...]:
    """The names of a dataclass value's fields, in order, looked up once per class."""
    names = _FIELD_NAMES.get(type(value))
    if names is None:
        names = _FIELD_NAMES[type(value)] = tuple(f.name for f in dataclasses.fields(value))  # type: ignore[arg-type]
    return names


def decode_command(op: object, args: object, path: str = "args", domain: str = "addressing") -> Any:
    """Build ``domain``'s command named ``op`` from its JSON ``args``."""
    if not isinstance(op, str):
        raise CodecError("op", f"expected an operation name (a string), got {_show(op)}")
    known = COMMANDS[domain]
    command_type = known.get(op)
    if command_type is None:
        raise CodecError("op", f"unknown {domain} operation {op!r}; known: {', '.join(sorted(known))}")
    return _decode_dataclass(command_type, args, path)


def decode_outcome(data: object, path: str = "outcome", domain: str = "addressing") -> Outcome:
    """Build one of ``domain``'s outcomes from its JSON object."""
    return _decode_tagged(data, OUTCOMES[domain], path)


def _decode_tagged(data: object, registry: dict[str, type[T]], path: str) -> T:
    if not isinstance(data, dict):
        raise CodecError(path, f"expected an object, got {_show(data)}")
    kind = data.get("type")
    if not isinstance(kind, str) or kind not in registry:
        raise CodecError(f"{path}.type", f"expected one of {', '.join(sorted(registry))}, got {_show(kind)}")
    return _class_decoder(registry[kind])(data, path, True)  # type: ignore[no-any-return]


Decoder = Callable[[object, str], Any]
"""A compiled decoder of one field type: (JSON value, path) -> the value, or :class:`CodecError`."""
ClassDecoder = Callable[[object, str, bool], Any]
"""A compiled decoder of one dataclass: (JSON object, path, whether its ``type`` key is the tag) -> instance."""

_CLASS_DECODERS: dict[type[Any], ClassDecoder] = {}


def _decode_dataclass(cls: type[T], data: object, path: str) -> T:
    return _class_decoder(cls)(data, path, False)  # type: ignore[no-any-return]


def _class_decoder(cls: type[Any]) -> ClassDecoder:
    """The decoder of ``cls``, built from its annotations the first time it is needed and kept.

    Reading the annotations (:func:`typing.get_type_hints` evaluates every
    one of them from its text) costs far more than decoding a value, so it
    is done once per class, not once per value.
    """
    decoder = _CLASS_DECODERS.get(cls)
    if decoder is None:
        decoder = _CLASS_DECODERS[cls] = _compile_class(cls)
    return decoder


def _compile_class(cls: type[Any]) -> ClassDecoder:
    hints = typing.get_type_hints(cls)
    fields = dataclasses.fields(cls)
    known = frozenset(f.name for f in fields)
    listed = ", ".join(f.name for f in fields) or "none"
    plan = tuple((f.name, "." + f.name,
                  f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING,
                  _taken_as_is(hints[f.name]), _value_decoder(hints[f.name])) for f in fields)
    known_with_tag = known | {"type"}
    type_is_a_field = "type" in known
    # A class whose generated __init__ only stores its fields (and then runs __post_init__) is filled in
    # directly, defaults for the fields left out, and its __post_init__ run on the result: what its
    # __init__ would do, without the frozen class's one object.__setattr__ call per field.
    direct = fillable(cls)
    post_init = getattr(cls, "__post_init__", None)
    defaults: dict[str, Callable[[], Any]] = {}
    for f in fields:
        if f.default is not dataclasses.MISSING:
            defaults[f.name] = lambda value=f.default: value  # type: ignore[misc]
        elif f.default_factory is not dataclasses.MISSING:
            defaults[f.name] = f.default_factory

    def decode(data: object, path: str, tagged: bool) -> Any:
        if not isinstance(data, dict):
            raise CodecError(path, f"expected an object, got {_show(data)}")
        if tagged and type_is_a_field:  # the tag is no field value: leave it out, as for any other class
            data = {k: v for k, v in data.items() if k != "type"}
            tagged = False
        if not (known_with_tag if tagged else known).issuperset(data):
            unknown = sorted(set(data) - known - ({"type"} if tagged else set()))
            raise CodecError(f"{path}.{unknown[0]}", f"unknown field; {cls.__name__} has {listed}")
        values: dict[str, Any] = {}
        for name, suffix, has_default, as_is, decode_value in plan:
            if name in data:
                value = data[name]
                values[name] = value if type(value) is as_is else decode_value(value, path + suffix)
            elif not has_default:
                raise CodecError(path + suffix, "missing field")
            elif direct:
                values[name] = defaults[name]()
        try:
            if not direct:
                return cls(**values)
            instance = object.__new__(cls)
            instance.__dict__.update(values)
            if post_init is not None:
                post_init(instance)
            return instance
        except BrokerspecError as error:  # a value the command itself refuses, e.g. a malformed hex ID
            field = getattr(error, "field", "")
            raise CodecError(f"{path}.{field}" if field else path, str(error)) from None

    return decode


class _NeverAsIs:
    """No JSON value has this type: a field whose values all need decoding."""


def _taken_as_is(hint: Any) -> type[Any]:
    """The JSON type whose values a field of type ``hint`` takes unchanged (a ``str``, ``int`` or ``bool``
    where one, or one or None, is expected), so the decoder need not be called for them."""
    options = typing.get_args(hint) if typing.get_origin(hint) in (Union, types.UnionType) else (hint,)
    plain = [option for option in options if option is not type(None)]
    if len(plain) == 1 and plain[0] in (str, int, bool):
        return plain[0]  # type: ignore[no-any-return]
    return _NeverAsIs


def _value_decoder(hint: Any) -> Decoder:
    """The decoder of one field type, chosen once from the annotation."""
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        return _union_decoder(hint)
    if origin is frozenset:
        (item,) = typing.get_args(hint)
        return _collection_decoder(_value_decoder(item), unique=True)
    if origin is tuple:
        return _collection_decoder(_value_decoder(typing.get_args(hint)[0]), unique=False)
    if isinstance(hint, type) and issubclass(hint, Enum):
        return _enum_decoder(hint)
    if hint is Reason:
        return lambda value, path: _decode_tagged(value, REASONS_BY_KIND, path)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        nested: type[Any] = hint
        return lambda value, path: _class_decoder(nested)(value, path, False)  # looked up when used: types may nest
    if hint is bool:
        return _decode_bool
    if hint is str:
        return _decode_str
    if hint is int:
        return _decode_int
    return _cannot_decode(hint)  # pragma: no cover - every field type is above


def _union_decoder(hint: Any) -> Decoder:
    options = typing.get_args(hint)
    nullable = type(None) in options
    present = [option for option in options if option is not type(None)]
    tags: dict[str, Any] = {getattr(option, "kind", ""): option for option in present}
    all_tagged = "" not in tags  # a union of tagged values, e.g. a step's events
    alternatives = [_value_decoder(option) for option in present]
    single = alternatives[0] if len(alternatives) == 1 else None  # an optional field: problems at their own path

    def decode(value: object, path: str) -> Any:
        if value is None and nullable:
            return None
        if all_tagged and isinstance(value, dict):
            return _decode_tagged(value, tags, path)
        if single is not None:
            return single(value, path)
        errors = []
        for alternative in alternatives:
            try:
                return alternative(value, path)
            except CodecError as error:
                errors.append(error.message)
        raise CodecError(path, " or ".join(errors))

    return decode


def _collection_decoder(item: Decoder, unique: bool) -> Decoder:
    def decode(value: object, path: str) -> Any:
        if not isinstance(value, list):
            raise CodecError(path, f"expected a list, got {_show(value)}")
        members = [item(v, f"{path}[{i}]") for i, v in enumerate(value)]
        if not unique:
            return tuple(members)
        if len(set(members)) != len(members):
            raise CodecError(path, f"a set must not repeat a member, got {_show(value)}")
        return frozenset(members)

    return decode


def _enum_decoder(hint: type[Enum]) -> Decoder:
    choices = [m.value for m in hint]
    by_text = {m.value: m for m in hint if isinstance(m.value, str)}

    def decode(value: object, path: str) -> Any:
        if type(value) is str and value in by_text:
            return by_text[value]
        if value not in choices:
            raise CodecError(path, f"expected one of {', '.join(map(str, choices))}, got {_show(value)}")
        return hint(value)

    return decode


def _decode_bool(value: object, path: str) -> bool:
    if not isinstance(value, bool):
        raise CodecError(path, f"expected true or false, got {_show(value)}")
    return value


def _decode_str(value: object, path: str) -> str:
    if not isinstance(value, str):
        raise CodecError(path, f"expected a string, got {_show(value)}")
    return value


def _decode_int(value: object, path: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise CodecError(path, f"expected an integer, got {_show(value)}")
    return value


def _cannot_decode(hint: Any) -> Decoder:  # pragma: no cover - every field type is above
    def decode(value: object, path: str) -> Any:
        raise CodecError(path, f"cannot decode a value of type {hint!r}")

    return decode


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
