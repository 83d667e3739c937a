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


def remove_prefix(name: str, prefixes: dict[str, RoutingType]) -> tuple[str, RoutingType | None]:
    """Strip the longest configured prefix that ``name`` starts with.

    Returns the remaining name and the routing type the prefix stands for,
    or the name untouched and ``None`` when no prefix matches.
    """
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
