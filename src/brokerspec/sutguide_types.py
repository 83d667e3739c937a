"""The JSON side of the SUT author guide: how each annotated field is written on the wire, and what is compared.

Read from the dataclasses and their annotations, encoded as :mod:`brokerspec.codec`
does (a ``frozenset`` as a list in any order without repeats, a ``tuple`` as a
list in order, an enum by value, ``None`` as ``null``), and from each field's
``compare`` flag: a field that equality ignores is free text that a verdict never
compares.

>>> wire_type(tuple[str, ...])
'list of string, in order'
>>> "`invalid_name.problem`" in never_compared_text()
True
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from enum import Enum
from typing import Any, Union

from brokerspec.codec import OUTCOMES, encode_value
from brokerspec.conform.catalogue import DOMAIN_ORDER
from brokerspec.spec import Reason, addressing


def wire_type(hint: Any, objects: set[type] | None = None) -> str:
    """How a value of annotation ``hint`` is written in JSON; nested plain objects are added to ``objects``."""
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        options = [o for o in typing.get_args(hint) if o is not type(None)]
        tagged = [getattr(o, "kind", None) for o in options]
        if len(options) > 1 and all(isinstance(k, str) for k in tagged):
            text = "event object (see Events): " + ", ".join(f"`{k}`" for k in tagged)
            if objects is not None:
                objects.update(options)
        else:
            text = " or ".join(wire_type(o, objects) for o in options)
        return text + " or `null`" if type(None) in typing.get_args(hint) else text
    if origin is frozenset:
        return f"set of {wire_type(typing.get_args(hint)[0], objects)} (a list: any order, no repeats)"
    if origin is tuple:
        return f"list of {wire_type(typing.get_args(hint)[0], objects)}, in order"
    if isinstance(hint, type) and issubclass(hint, Enum):
        return "one of " + ", ".join(f"`{json.dumps(m.value)}`" for m in hint)
    if hint is Reason:
        return "reason object (see Reasons)"
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        if objects is not None:
            objects.add(hint)
        return f"`{hint.__name__}` object (see Objects)"
    return {str: "string", int: "integer", bool: "boolean"}.get(hint, repr(hint))


def field_rows(cls: type, objects: set[type], with_default: bool) -> list[list[str]]:
    """One row per field of ``cls`` (but ``rule``): name, JSON type, default or compared."""
    hints = typing.get_type_hints(cls)
    rows = []
    for f in dataclasses.fields(cls):
        if f.name == "rule":
            continue
        cells = [f"`{f.name}`", wire_type(hints[f.name], objects)]
        if with_default:
            cells.append(default_text(f))
        cells.append("exactly" if f.compare else "never (free text)")
        rows.append(cells)
    return rows


def default_text(f: dataclasses.Field[Any]) -> str:
    """'required', or the JSON default brokerspec would decode an absent field as."""
    if f.default is not dataclasses.MISSING:
        return f"`{json.dumps(encode_value(f.default))}`"
    if f.default_factory is not dataclasses.MISSING:
        return f"`{json.dumps(encode_value(f.default_factory()))}`"
    return "required"


def never_compared_text() -> str:
    """Every field a verdict never compares (free text), as ``type.field`` code spans."""
    found = []
    for domain in DOMAIN_ORDER:
        kinds = list(OUTCOMES[domain].values()) + (list(addressing.REASON_TYPES) if domain == "addressing" else [])
        for cls in kinds:
            found += [f"`{cls.kind}.{f.name}`" for f in dataclasses.fields(cls) if not f.compare and f.name != "rule"]
    return ", ".join(sorted(set(found)))
