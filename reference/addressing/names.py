"""Taking client names apart, the way the broker's name utilities do.

Introduction
------------
A broker receives names from clients in several shapes: a bare queue name
(``q1``), a fully qualified queue name (``address1::q1``), either of them
behind an acceptor's routing-type prefix (``anycast://q1``). Artemis keeps the
knowledge of these shapes in two small utility classes, ``CompositeAddress``
(FQQNs) and ``PrefixUtil`` (prefixes), and every other component asks them.
This module plays that part for the reference broker.

The separator is searched for with ``str.find``, which returns the index of
the *first* occurrence, so ``a::b::c`` has address ``a`` and queue ``b::c``.
"""

from __future__ import annotations

from brokerspec.spec.addressing import RoutingType

SEPARATOR = "::"


def is_fully_qualified(name: str) -> bool:
    """A name is an FQQN when the separator occurs anywhere in it."""
    return SEPARATOR in name


def extract_address_name(name: str) -> str:
    """The part before the first separator; a bare name is returned whole."""
    position = name.find(SEPARATOR)
    return name if position < 0 else name[:position]


def extract_queue_name(name: str) -> str:
    """The part after the first separator; a bare name is returned whole."""
    position = name.find(SEPARATOR)
    return name if position < 0 else name[position + len(SEPARATOR):]


def split_fqqn(name: str) -> tuple[bool, str, str]:
    """(is it an FQQN, address part, queue part): the three answers together."""
    return is_fully_qualified(name), extract_address_name(name), extract_queue_name(name)


def simple_string_hash(text: str) -> int:
    """``SimpleString.hashCode``: 31 * h + each byte of the UTF-16LE form, bytes signed, 32 bits."""
    value = 0
    data = text.encode("utf-16-le", "surrogatepass")
    for byte in data:
        signed = byte if byte < 128 else byte - 256
        value = (value * 31 + signed) % (1 << 32)
    return value


def hash_map_iteration(keys: list[str]) -> list[str]:
    """The order a Java ``HashMap`` filled with ``keys`` (in that order) hands them back.

    The table has 16 buckets and doubles whenever it is more than three
    quarters full; each key goes to bucket ``(h ^ (h >>> 16)) & (size - 1)``,
    at the end of that bucket's chain; iteration walks the table.
    """
    size = 16
    while len(keys) * 4 > size * 3:
        size *= 2
    table: list[list[str]] = [[] for _ in range(size)]
    for key in keys:
        hashed = simple_string_hash(key)
        table[(hashed ^ (hashed >> 16)) & (size - 1)].append(key)
    return [key for chain in table for key in chain]


def remove_prefix(name: str, prefixes: dict[str, RoutingType],
                  as_artemis: bool = False) -> tuple[str, RoutingType | None]:
    """Strip a configured prefix from the front of ``name``.

    The seed's broker strips the longest matching prefix and ignores an
    empty one. Artemis (``as_artemis``) keeps its prefixes in a ``HashMap``
    filled with the anycast prefixes, then the multicast ones, and strips
    the first match in that map's order (``PrefixUtil.getAddress``); an
    empty prefix matches everything. Returns the remaining name and the
    routing type the prefix stands for, or the name untouched and ``None``.
    """
    if as_artemis:
        filled = [p for p, t in prefixes.items() if t is RoutingType.ANYCAST]
        filled += [p for p, t in prefixes.items() if t is RoutingType.MULTICAST]
        for prefix in hash_map_iteration(filled):
            if name.startswith(prefix):
                return name[len(prefix):], prefixes[prefix]
        return name, None
    chosen = ""
    for prefix in prefixes:
        if prefix and name.startswith(prefix) and len(prefix) > len(chosen):
            chosen = prefix
    if not chosen:
        return name, None
    return name[len(chosen):], prefixes[chosen]


def check_name(name: str) -> str | None:
    """Why ``name`` cannot name an address or queue, or ``None`` when it can."""
    if not name:
        return "the name is empty"
    if SEPARATOR in name:
        return "the name contains the FQQN separator '::'"
    return None
