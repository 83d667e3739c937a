"""The one-step scripts ``brokerspec diff`` plays before its search: every operation on a fresh broker.

Introduction
------------
When two versions of the semantics part on a single operation (a seed
broker that has no per-address cache size, a load-balancing type one of
them does not know), the shortest script is that one operation. A random
search finds it only by luck, and may report a longer script that reaches
the same difference the long way round. So :func:`one_step_commands` lists
every operation of a domain with its arguments drawn from a small alphabet,
and ``diff`` plays each on a fresh broker of both sides first.

The arguments come from the operation's own field types wherever the type
says enough: both booleans, every member of an enum, ``None`` for an
optional field, every subset of a set of enum members. A string or whole
number is taken from the domain's alphabet below, keyed by the field's name
and built from the names the checker's state machines use (the queue and
address names that collide, the adversarial names of address resolution,
dotted destinations for wildcards); a field the alphabet does not name
falls back to its default, else to :data:`FALLBACK`. A combination the
command itself refuses to be built from (a TTL of 0) is not a script and is
left out. Each operation contributes at most ``limit`` scripts.
"""

from __future__ import annotations

import dataclasses
import itertools
import types
import typing
from collections.abc import Iterator, Sequence
from enum import Enum
from typing import Any

from brokerspec.spec import BrokerspecError
from brokerspec.spec.duplicates import DuplicateId, IdKind
from brokerspec.spec.topologies import BridgeConfig

from ..check import strategies as addressing_alphabet
from ..codec import COMMANDS

FALLBACK: dict[type, tuple[object, ...]] = {str: ("a1", "q1"), int: (0, 1, -1)}
"""Values for a string or integer field that no alphabet names and that has no default."""

_NAMES = addressing_alphabet.ADDRESSES + ("", "::", "a1::q1")
_CLIENT_NAMES = (addressing_alphabet.QUEUES + addressing_alphabet.ADDRESSES + ("a1::q1", "a2::q1", "anycast://q1",
                 "multicast://a1") + addressing_alphabet.ADVERSARIAL)

ALPHABETS: dict[str, dict[str, tuple[object, ...]]] = {
    "addressing": {
        "address": _NAMES,
        "queue": addressing_alphabet.QUEUES + ("", "::", "a1::q1"),
        "name": tuple(dict.fromkeys(_CLIENT_NAMES)),
        "prefix": addressing_alphabet.PREFIXES + ("",),
        "match": ("#", "a1", "q1", ""),
    },
    "duplicates": {
        "session": ("s1",),
        "address": ("a1",),
        "queue": ("q1",),
        "duplicate_id": (DuplicateId(IdKind.STRING, "x"), DuplicateId(IdKind.SIMPLE_STRING, "x"),
                         DuplicateId(IdKind.BYTES, "7800"), DuplicateId(IdKind.LONG, "5")),
        "bridge_id": ("01",),
        "size": (0, 1, 2, 3),
        "id_cache_size": (0, 1, 3),
    },
    "balancing": {
        "node": ("n1", "n2"),
        "peer": ("n1", "n2"),
        "address": ("a1", "a2"),
        "queue": ("a1", "q1"),
        "consumer": ("c1",),
        "filter": ("red", ""),
        "color": ("red",),
        "fqqn_queue": ("a1", "q1"),
        "redistribution_delay": (-1, 0, 2, -2),
        "ticks": (1, 2, 0),
    },
    "topologies": {
        "broker": ("b1", "b2"),
        "source": ("b1", "b2"),
        "target": ("b1", "b2"),
        "parent": ("b1", "b2"),
        "consumer": ("c1",),
        "producer": ("p1",),
        "destination": ("queue://Q", "topic://T", "queue://Q.A", "queue://Q.A.B", "topic://T.X"),
        "priority": (0, 5, -3),
        "consumer_ttl": (1, 2, -1, 0),
        "message_ttl": (1, 2, -1, 0),
        "config": (BridgeConfig(), BridgeConfig(conduit=False), BridgeConfig(include=("queue://Q.*",)),
                   BridgeConfig(exclude=("queue://*.*.B",)), BridgeConfig(decrease_priority=True)),
    },
}
"""Per domain, values by argument name for the fields whose type does not list them."""


def field_values(domain: str, field: dataclasses.Field[Any], hint: Any) -> tuple[object, ...]:
    """The values one-step scripts give an argument of type ``hint`` named ``field.name`` in ``domain``."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = [option for option in typing.get_args(hint) if option is not type(None)]
        values: list[object] = [None]
        for option in options:
            values.extend(field_values(domain, field, option))
        return tuple(dict.fromkeys(values))
    if hint is bool:
        return (False, True)
    if isinstance(hint, type) and issubclass(hint, Enum):
        return tuple(hint)
    if origin is frozenset:
        (member,) = typing.get_args(hint)
        if isinstance(member, type) and issubclass(member, Enum):
            return tuple(frozenset(chosen) for size in range(len(member) + 1)
                         for chosen in itertools.combinations(tuple(member), size))
    named = ALPHABETS.get(domain, {}).get(field.name)
    if named is not None:
        return named
    if field.default is not dataclasses.MISSING:
        return (field.default,)
    if isinstance(hint, type) and hint in FALLBACK:
        return FALLBACK[hint]
    raise TypeError(f"{domain}: no one-step values for the argument {field.name!r} of type {hint!r}; "
                    f"name it in ALPHABETS")


def commands_of(domain: str, command_type: type[Any], limit: int) -> Iterator[Any]:
    """At most ``limit`` commands of ``command_type``, every argument from :func:`field_values`."""
    hints = typing.get_type_hints(command_type)
    fields = dataclasses.fields(command_type)
    choices: Sequence[tuple[object, ...]] = [field_values(domain, f, hints[f.name]) for f in fields]
    made = 0
    for values in itertools.product(*choices):
        if made >= limit:
            return
        try:
            command = command_type(**{f.name: value for f, value in zip(fields, values)})
        except (BrokerspecError, ValueError, TypeError):
            continue  # the command refuses these arguments itself: no broker can be asked it
        made += 1
        yield command


def one_step_commands(domain: str, limit: int = 200) -> list[Any]:
    """Every operation of ``domain``, each with at most ``limit`` argument combinations, in the codec's order."""
    return [command for command_type in COMMANDS[domain].values()
            for command in commands_of(domain, command_type, limit)]


__all__ = ["ALPHABETS", "FALLBACK", "commands_of", "field_values", "one_step_commands"]
