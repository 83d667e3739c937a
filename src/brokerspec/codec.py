"""Turning commands and outcomes into JSON values and back.

Introduction
------------
Commands, outcomes and rejection reasons are frozen dataclasses whose field
annotations say exactly what each field holds. This module reads those
annotations to encode a value as plain JSON data and to decode JSON data
back, checking every field: a missing field, an unknown field or a value of
the wrong type raises :class:`CodecError` naming the field's path (for
example ``args.routing_type`` or ``outcome.reason.address``).

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
from typing import Any, TypeVar, Union

from brokerspec.spec import BrokerspecError, Outcome, Reason, addressing, balancing, duplicates, topologies

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
    return {f.name: encode_value(getattr(command, f.name)) for f in dataclasses.fields(command)}  # type: ignore[arg-type]


def encode_outcome(outcome: Outcome) -> dict[str, Any]:
    """The outcome as a JSON object with a ``type`` key."""
    data: dict[str, Any] = {"type": outcome.kind}
    for f in dataclasses.fields(outcome):
        if f.name != "rule":
            data[f.name] = encode_value(getattr(outcome, f.name))
    if outcome.rule:
        data["rule"] = outcome.rule
    return data


def encode_value(value: object) -> Any:
    """Any field value as JSON data."""
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
        data.update({f.name: encode_value(getattr(value, f.name)) for f in dataclasses.fields(value)})
        return data
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        kind = getattr(value, "kind", None)
        tagged: dict[str, Any] = {"type": kind} if isinstance(kind, str) else {}
        tagged.update({f.name: encode_value(getattr(value, f.name)) for f in dataclasses.fields(value)})
        return tagged
    return value


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
    fields = {k: v for k, v in data.items() if k != "type"}
    return _decode_dataclass(registry[kind], fields, path)


def _decode_dataclass(cls: type[T], data: object, path: str) -> T:
    if not isinstance(data, dict):
        raise CodecError(path, f"expected an object, got {_show(data)}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise CodecError(f"{path}.{unknown[0]}", f"unknown field; {cls.__name__} has {', '.join(fields) or 'none'}")
    values: dict[str, Any] = {}
    for name, f in fields.items():
        if name not in data:
            has_default = f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
            if has_default:
                continue
            raise CodecError(f"{path}.{name}", "missing field")
        values[name] = _decode_value(hints[name], data[name], f"{path}.{name}")
    try:
        return cls(**values)
    except BrokerspecError as error:  # a value the command itself refuses, e.g. a malformed hex ID
        field = getattr(error, "field", "")
        raise CodecError(f"{path}.{field}" if field else path, str(error)) from None


def _decode_value(hint: Any, value: object, path: str) -> Any:
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        options = typing.get_args(hint)
        if value is None and type(None) in options:
            return None
        present = [option for option in options if option is not type(None)]
        tags: dict[str, Any] = {getattr(option, "kind", ""): option for option in present}
        if isinstance(value, dict) and "" not in tags:  # a union of tagged values, e.g. a step's events
            return _decode_tagged(value, tags, path)
        if len(present) == 1:  # an optional field: report problems inside it at their own path
            return _decode_value(present[0], value, path)
        errors = []
        for option in options:
            if option is type(None):
                continue
            try:
                return _decode_value(option, value, path)
            except CodecError as error:
                errors.append(error.message)
        raise CodecError(path, " or ".join(errors))
    if origin is frozenset:
        (item,) = typing.get_args(hint)
        if not isinstance(value, list):
            raise CodecError(path, f"expected a list, got {_show(value)}")
        members = [_decode_value(item, v, f"{path}[{i}]") for i, v in enumerate(value)]
        if len(set(members)) != len(members):
            raise CodecError(path, f"a set must not repeat a member, got {_show(value)}")
        return frozenset(members)
    if origin is tuple:
        item = typing.get_args(hint)[0]
        if not isinstance(value, list):
            raise CodecError(path, f"expected a list, got {_show(value)}")
        return tuple(_decode_value(item, v, f"{path}[{i}]") for i, v in enumerate(value))
    if isinstance(hint, type) and issubclass(hint, Enum):
        choices = [m.value for m in hint]
        if value not in choices:
            raise CodecError(path, f"expected one of {', '.join(map(str, choices))}, got {_show(value)}")
        return hint(value)
    if hint is Reason:
        return _decode_tagged(value, REASONS_BY_KIND, path)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _decode_dataclass(hint, value, path)
    if hint is bool:
        if not isinstance(value, bool):
            raise CodecError(path, f"expected true or false, got {_show(value)}")
        return value
    if hint is str:
        if not isinstance(value, str):
            raise CodecError(path, f"expected a string, got {_show(value)}")
        return value
    if hint is int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise CodecError(path, f"expected an integer, got {_show(value)}")
        return value
    raise CodecError(path, f"cannot decode a value of type {hint!r}")  # pragma: no cover - every field type is above


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
