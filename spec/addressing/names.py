"""Names: fully qualified queue names and routing-type prefixes.

Introduction
------------
Clients name queues either by their bare name (``q1``) or by a fully
qualified queue name, an FQQN, ``address::queue`` (seed 000; Artemis
``CompositeAddress``). This module holds the pure functions that take a
client-supplied name apart. They are total: every string has a parse, and
odd strings (``"::"``, ``"a::"``, ``"::q"``, ``"a::b::c"``) have exactly
the parse Artemis gives them. The functions are small and loop-free so that
CrossHair can check their contracts exhaustively.

Rules kept here (see :mod:`brokerspec.spec.addressing.rules`):

- ADDR-FQQN-DETECT: a name is an FQQN iff it contains ``::`` anywhere.
- ADDR-FQQN-SPLIT: an FQQN splits at the *first* ``::``; either part may be empty.
- ADDR-PREFIX-STRIP: a configured routing-type prefix is removed from the front
  of a client-supplied name and sets the routing type. When several match,
  the seed profile takes the longest; Artemis takes the first in its
  ``HashMap``'s iteration order, which :func:`order_like_java_hash_map`
  computes exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple
from enum import Enum

from ..profiles import PrefixMatch

FQQN_SEPARATOR = "::"


class RoutingType(Enum):
    """How an address hands a message to its queues (Artemis ``RoutingType``).

    ANYCAST: to one queue of the address; MULTICAST: a copy to every queue.
    """

    ANYCAST = "ANYCAST"
    MULTICAST = "MULTICAST"


class ParsedName(NamedTuple):
    """A client-supplied queue or address name taken apart.

    For a bare name ``address`` and ``queue`` are both the name itself, as
    Artemis's ``extractAddressName`` / ``extractQueueName`` return their input
    unchanged when there is no separator. A named tuple, not a frozen
    dataclass: every name a command carries is parsed, and a tuple is made
    several times faster.
    """

    is_fqqn: bool
    address: str
    queue: str


def is_fully_qualified(name: str) -> bool:
    """Tell whether ``name`` is an FQQN.

    Rule ADDR-FQQN-DETECT. Source: Artemis ``CompositeAddress.isFullyQualified``
    (true iff the string contains ``"::"``), seed 000.

    post: __return__ == ("::" in name)
    """
    return FQQN_SEPARATOR in name


def parse_name(name: str) -> ParsedName:
    """Split ``name`` into address and queue parts at the first ``::``.

    Rule ADDR-FQQN-SPLIT. Source: Artemis ``CompositeAddress.extractAddressName``
    and ``extractQueueName`` (``indexOf``-based since ARTEMIS-1867, 2.7.0);
    ``CompositeAddressTest.testSplit`` pins ``"address::"``, ``"::"`` and
    ``"::queue"``.

    >>> parse_name("a::b::c")
    ParsedName(is_fqqn=True, address='a', queue='b::c')
    >>> parse_name("::")
    ParsedName(is_fqqn=True, address='', queue='')
    >>> parse_name("q1")
    ParsedName(is_fqqn=False, address='q1', queue='q1')

    post: __return__.is_fqqn == ("::" in name)
    post: implies(__return__.is_fqqn, __return__.address + "::" + __return__.queue == name)
    post: implies(__return__.is_fqqn, "::" not in __return__.address)
    post: implies(not __return__.is_fqqn, __return__.address == name == __return__.queue)
    """
    index = name.find(FQQN_SEPARATOR)
    if index < 0:
        return ParsedName(False, name, name)
    return ParsedName(True, name[:index], name[index + len(FQQN_SEPARATOR) :])


def implies(premise: bool, conclusion: bool) -> bool:
    """Logical implication, for readable contracts."""
    return conclusion or not premise


def to_fully_qualified(address: str, queue: str) -> str:
    """Build the FQQN ``address::queue`` (Artemis ``CompositeAddress.toFullyQualified``).

    Building and parsing are inverse only when the address neither contains
    ``::`` nor *ends with* ``:``. An address ``a:`` gives ``a:::q``, which parses
    as address ``a``, queue ``:q``: a queue on an address whose name ends in a
    colon cannot be reached by its FQQN, in Artemis as here (rule
    ADDR-FQQN-SPLIT; found by CrossHair against an earlier, too-strong
    contract).

    >>> parse_name(to_fully_qualified("a:", "q"))
    ParsedName(is_fqqn=True, address='a', queue=':q')

    post: parse_name(__return__).is_fqqn
    post: implies(is_plain_address(address), parse_name(__return__) == ParsedName(True, address, queue))
    """
    return address + FQQN_SEPARATOR + queue


def is_plain_address(address: str) -> bool:
    """True when ``address::queue`` parses back into ``address`` and ``queue`` (no ``::``, no trailing ``:``)."""
    return FQQN_SEPARATOR not in address and not address.endswith(":")


def compute_simple_string_hash(text: str) -> int:
    """Artemis's ``SimpleString.hashCode`` of ``text``, as an unsigned 32-bit value.

    A ``SimpleString`` holds each UTF-16 code unit as two bytes, low byte
    first, and hashes them as Java's signed bytes: ``h = 31 * h + b``.

    >>> compute_simple_string_hash("")
    0
    >>> compute_simple_string_hash("a")  # 31 * 97 + 0
    3007

    post: 0 <= __return__ < 2 ** 32
    """
    value = 0
    for byte in text.encode("utf-16-le", "surrogatepass"):
        value = (31 * value + (byte - 256 if byte > 127 else byte)) & 0xFFFFFFFF
    return value


def order_like_java_hash_map(keys: tuple[str, ...]) -> tuple[str, ...]:
    """``keys``, inserted into a Java ``HashMap<SimpleString, _>`` in this order, in its iteration order.

    A ``HashMap`` starts with 16 buckets and doubles while it holds more than
    three quarters of them; a key's bucket is its spread hash
    (``h ^ (h >>> 16)``) masked by the bucket count; iteration walks the
    buckets in order and each bucket in insertion order. Source: OpenJDK
    ``java.util.HashMap`` (``hash``, ``resize``, ``HashIterator``).

    >>> order_like_java_hash_map(("anycast://", "any"))
    ('any', 'anycast://')
    """
    buckets = 16
    while len(keys) > buckets * 3 // 4:
        buckets *= 2

    def bucket(key: str) -> int:
        hashed = compute_simple_string_hash(key)
        return (hashed ^ (hashed >> 16)) & (buckets - 1)

    return tuple(sorted(keys, key=lambda key: (bucket(key), keys.index(key))))


def strip_prefix(name: str, prefixes: Mapping[str, RoutingType],
                 match: PrefixMatch = PrefixMatch.LONGEST) -> tuple[str, RoutingType | None]:
    """Remove a configured routing-type prefix from the front of ``name``.

    Rule ADDR-PREFIX-STRIP. Source: Artemis ``PrefixUtil.getAddress`` and
    ``ServerSessionImpl.removePrefix`` (acceptor parameters ``anycastPrefix``
    and ``multicastPrefix``). Artemis keeps the prefixes in a ``HashMap``
    (``AbstractProtocolManager``, filled from ``anycastPrefix`` before
    ``multicastPrefix``, the order in which the acceptor's own parameter map
    hands them over) and strips the first that matches in its iteration
    order; an empty prefix matches every name (``PrefixMatch.HASH_MAP``).
    The seed profile decides instead: the longest matching prefix wins and an
    empty one never matches (``PrefixMatch.LONGEST``).

    Returns the name without the prefix and the prefix's routing type, or the
    name unchanged and ``None`` when no prefix matches.

    >>> strip_prefix("anycast://orders", {"anycast://": RoutingType.ANYCAST})
    ('orders', <RoutingType.ANYCAST: 'ANYCAST'>)
    >>> strip_prefix("orders", {"anycast://": RoutingType.ANYCAST})
    ('orders', None)
    >>> both = {"anycast://": RoutingType.ANYCAST, "any": RoutingType.MULTICAST}
    >>> strip_prefix("anycast://orders", both), strip_prefix("anycast://orders", both, PrefixMatch.HASH_MAP)
    (('orders', <RoutingType.ANYCAST: 'ANYCAST'>), ('cast://orders', <RoutingType.MULTICAST: 'MULTICAST'>))
    """
    if match is PrefixMatch.HASH_MAP:
        anycast = tuple(p for p, t in prefixes.items() if t is RoutingType.ANYCAST)
        multicast = tuple(p for p, t in prefixes.items() if t is RoutingType.MULTICAST)
        for prefix in order_like_java_hash_map(anycast + multicast):
            if name.startswith(prefix):
                return name[len(prefix):], prefixes[prefix]
        return name, None
    best = ""
    routing_type: RoutingType | None = None
    for prefix, prefix_type in prefixes.items():
        if prefix and name.startswith(prefix) and len(prefix) > len(best):
            best, routing_type = prefix, prefix_type
    return name[len(best) :], routing_type


def name_problem(name: str) -> str | None:
    """Say why ``name`` cannot name an address or a queue, or ``None`` if it can.

    Rules ADDR-NAME-EMPTY and ADDR-NAME-SEPARATOR. Sources: Artemis
    ``ActiveMQServerImpl.createQueue`` rejects a null or empty name
    (``invalidQueueName``, AMQ229216); the user manual (``address-model``,
    "Fully Qualified Queue Names") says ``::`` must be used only to form an
    FQQN, so brokerspec rejects it inside a name rather than reinterpreting it.

    post: (__return__ is None) == (name != "" and "::" not in name)
    """
    if name == "":
        return "the name is empty"
    if FQQN_SEPARATOR in name:
        return "the name contains the FQQN separator '::'"
    return None
