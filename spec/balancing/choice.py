"""The pure choice functions: which binding, which redistribution target, which consumer.

Introduction
------------
Every choice the domain makes is a function of a few flags per candidate
and a stored position; this module states each one twice:

* the *strict* choice (:func:`choose_binding`, :func:`choose_target`,
  :func:`choose_consumer`): exactly the round robin Artemis performs, which
  the reference and the fast implementation must reproduce;
* the *allowed* choices (:func:`allowed_bindings`, :func:`allowed_targets`,
  :func:`allowed_consumers`): every candidate the rules permit, whatever a
  broker's tie-breaking. A broker checked in permissive mode may pick any
  of them.

The strict choice is always one of the allowed ones (a contract, and a
test). A candidate is described by :class:`Member` (for routing) or
:class:`Target` (for redistribution); the callers in
:mod:`.operations` compute the flags from the cluster. For CrossHair,
:func:`choose_from_bits` packs three members into small integers.
"""

from __future__ import annotations

from typing import NamedTuple

from .model import LbType


class Member(NamedTuple):
    """A binding of a routing-name group, as ``getNextBinding`` sees it (LB-ELIGIBLE, LB-PREFERRED, LB-DISCONNECTED).

    ``eligible``: ``matchBinding`` holds (queue filter, routing type, the OFF
    rule for remote bindings, the FQQN name). ``preferred``: high accept
    priority (LB-PREFERRED). ``connected``: its bridge is up (always, when local).
    ``local``: the queue is on the routing node.
    """

    eligible: bool
    preferred: bool
    connected: bool
    local: bool


class Target(NamedTuple):
    """A group member as ``BindingsImpl.redistribute`` sees it (RD-TARGET)."""

    preferred: bool
    origin: bool
    filter_matches: bool


def scan_order(size: int, position: int) -> tuple[int, ...]:
    """The indexes a round robin visits: from ``position`` (0 when out of range) once around (LB-ROUND-ROBIN).

    >>> scan_order(3, 1)
    (1, 2, 0)
    >>> scan_order(3, 7)
    (0, 1, 2)
    """
    start = position if 0 <= position < size else 0
    return tuple((start + step) % size for step in range(size))


def is_first_choice(member: Member, size: int, lb_type: LbType) -> bool:
    """Whether ``getNextBinding`` takes this member on sight (LB-ROUND-ROBIN).

    An eligible member of a one-member group always; otherwise a connected
    one that is preferred, or any connected one under STRICT.
    """
    if not member.eligible:
        return False
    if size == 1:
        return True
    return member.connected and (lb_type is LbType.STRICT or member.preferred)


def choose_binding(members: tuple[Member, ...], position: int, lb_type: LbType) -> tuple[int | None, int]:
    """The strict choice in a routing-name group: (index or None, the position to store) (LB-ROUND-ROBIN).

    Scan from the position; take the first member :func:`is_first_choice`
    accepts. Failing that, fall back: under ON_DEMAND to the *last* local
    eligible member met (else the first eligible one), under the other
    types to the first eligible one. The position becomes the chosen index
    plus one; when nothing is eligible it stays.

    >>> on, off = Member(True, True, True, True), Member(True, False, True, True)
    >>> choose_binding((off, on, on), 0, LbType.ON_DEMAND)
    (1, 2)
    >>> choose_binding((off, off, off), 0, LbType.ON_DEMAND)
    (2, 0)
    >>> choose_binding((off, off, off), 0, LbType.OFF)
    (0, 1)
    """
    size = len(members)
    fallback: int | None = None
    for index in scan_order(size, position):
        member = members[index]
        if not member.eligible:
            continue
        if is_first_choice(member, size, lb_type):
            return index, (index + 1) % size
        if fallback is None or (lb_type is LbType.ON_DEMAND and member.local):
            fallback = index
    if fallback is None:
        return None, position
    return fallback, (fallback + 1) % size


def allowed_bindings(members: tuple[Member, ...], lb_type: LbType) -> tuple[int, ...]:
    """Every member the rules let a broker choose, whatever its tie-breaking.

    Rules LB-ROUND-ROBIN, LB-PREFERRED and LB-DISCONNECTED.

    The first-choice members if there are any; otherwise the fallbacks:
    under ON_DEMAND the eligible local members when there are some (local
    consumers preferred), else every eligible member.
    """
    size = len(members)
    first = tuple(i for i, m in enumerate(members) if is_first_choice(m, size, lb_type))
    if first:
        return first
    eligible = tuple(i for i, m in enumerate(members) if m.eligible)
    if lb_type is LbType.ON_DEMAND:
        local = tuple(i for i in eligible if members[i].local)
        if local:
            return local
    return eligible


def is_target(target: Target) -> bool:
    """A member redistribution may move a message to: preferred, not the origin, filter matching (RD-TARGET)."""
    return target.preferred and not target.origin and target.filter_matches


def choose_target(targets: tuple[Target, ...], position: int) -> tuple[int | None, int]:
    """The strict redistribution target: the first :func:`is_target` from the position (RD-TARGET).

    The position becomes the chosen index plus one; when nothing qualifies
    it stays.

    >>> origin, ready = Target(True, True, True), Target(True, False, True)
    >>> choose_target((origin, ready, ready), 0)
    (1, 2)
    >>> choose_target((origin, ready, ready), 2)
    (2, 0)
    """
    for index in scan_order(len(targets), position):
        if is_target(targets[index]):
            return index, (index + 1) % len(targets)
    return None, position


def allowed_targets(targets: tuple[Target, ...]) -> tuple[int, ...]:
    """Every member redistribution may pick (RD-TARGET): the order among them is tie-breaking."""
    return tuple(i for i, t in enumerate(targets) if is_target(t))


def choose_consumer(matching: tuple[bool, ...], position: int) -> tuple[int | None, int]:
    """The strict consumer of a queue: the first whose filter matches, from the position.

    ``QueueImpl`` hands messages to its consumers in turn; a consumer whose
    filter does not match is passed over without losing its turn.

    >>> choose_consumer((True, False, True), 1)
    (2, 0)
    """
    for index in scan_order(len(matching), position):
        if matching[index]:
            return index, (index + 1) % len(matching)
    return None, position


def allowed_consumers(matching: tuple[bool, ...]) -> tuple[int, ...]:
    """Every consumer whose filter matches: which one takes the message is tie-breaking."""
    return tuple(i for i, ok in enumerate(matching) if ok)


class ChoicePoint(NamedTuple):
    """One choice an operation made: which round robin, among whom, what was allowed, what was taken.

    ``kind`` is ``"binding"`` (first routing in a routing-name group,
    ``BindingsImpl.getNextBinding``), ``"target"`` (a redistribution target,
    ``BindingsImpl.redistribute``) or ``"consumer"`` (a queue's consumer). ``key`` is the stored position the choice reads and moves:
    (node, address, routing name) for the first two, which share one
    position per key as ``BindingsImpl`` does, (node, queue) for a consumer.
    ``candidates`` names every member scanned (``node/queue`` or a consumer
    name), ``allowed`` and ``strict`` are indexes into it (``strict``: the
    round robin's own choice from the stored position), ``picked`` the one
    taken. Permissive judging reads these to check fairness over a run.
    """

    kind: str
    key: tuple[str, ...]
    candidates: tuple[str, ...]
    allowed: tuple[int, ...]
    strict: int
    picked: int


def member_from_bits(bits: int) -> Member:
    """A member from four bits: 1 eligible, 2 preferred, 4 connected, 8 local."""
    return Member(bool(bits & 1), bool(bits & 2), bool(bits & 4), bool(bits & 8))


def check_bits_domain(m0: int, m1: int, m2: int, size: int, position: int) -> None:
    """Raise ValueError unless the packed arguments lie in :func:`choose_from_bits`'s domain.

    ``crosshair diffbehavior`` does not read ``pre:`` lines; every layer's
    ``choose_from_bits`` calls this first, so inputs outside the domain
    behave alike (the same error) and only in-domain differences count.
    """
    if not (0 <= m0 < 16 and 0 <= m1 < 16 and 0 <= m2 < 16 and 1 <= size <= 3 and 0 <= position <= 4):
        raise ValueError("members are 0-15, size 1-3, position 0-4")


def choose_from_bits(m0: int, m1: int, m2: int, size: int, position: int, lb_type: LbType) -> tuple[int, int]:
    """:func:`choose_binding` over up to three members given as bits; -1 for no choice.

    A fixed-arity form for ``crosshair diffbehavior`` against the reference
    and fast implementations' own choice functions.

    pre: 0 <= m0 < 16 and 0 <= m1 < 16 and 0 <= m2 < 16
    pre: 1 <= size <= 3
    pre: 0 <= position <= 4
    post: -1 <= __return__[0] < size
    """
    check_bits_domain(m0, m1, m2, size, position)
    members = tuple(member_from_bits(b) for b in (m0, m1, m2)[:size])
    index, stored = choose_binding(members, position, lb_type)
    return (-1 if index is None else index), stored
