"""The fast broker's choices: which binding of a group, which redistribution target, which consumer.

Introduction
------------
Every choice in this domain is a scan once around a list from a stored
position, taking the first candidate that qualifies (LB-ROUND-ROBIN, RD-TARGET, the consumer
turn of ``QueueImpl``). :class:`BindingChoice` holds the three scans and
the small rules they are made of, each a method of its own, so a subclass
can change one rule and nothing else:

``_scan_start(position, size)``
    where a scan begins: the stored position, or 0 when it is out of range
    (LB-ROUND-ROBIN, "0 if p >= n"; the spec's ``scan_order``).
``_choice_type(lb_type)``
    the load-balancing type the binding choice acts on: the address's own
    (``getNextBinding`` is handed the Bindings' type unless the routing
    context overrides it, LB-ELIGIBLE; no context here does).
``_fallback(lb_type, first_eligible, first_local, last_local)``
    the binding taken when none qualifies on sight: under ON_DEMAND the
    last local eligible binding met, else the first eligible one
    (``lastLowPriorityBinding`` in ``BindingsImpl.getNextBinding``, LB-ROUND-ROBIN).
``_position_after(chosen, last_eligible, size)``
    the position stored after a choice: just after the chosen binding,
    whatever the scan passed over (LB-ROUND-ROBIN, "the position advances only when a
    binding is chosen").

The binding scan, :meth:`BindingChoice._pick`, reads a candidate through a
``flags`` function that returns the bits of the spec's ``member_from_bits``
(1 eligible, 2 preferred, 4 connected, 8 local), computed lazily: the
broker passes one that looks at the queue a binding stands for, and
:func:`choose_from_bits_on` one that returns the bits it was given, so the
very code the broker routes with can be compared with the spec's
``choose_from_bits`` by ``crosshair diffbehavior``: :func:`choose_from_bits`
takes the spec's arguments and runs them through
:class:`~.broker.FastBalancingBroker`, and a planted bug that overrides one
rule runs them through its own class with :func:`choose_from_bits_on`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from brokerspec.spec.balancing import LbType, check_bits_domain

from .records import ConsumerRecord

ELIGIBLE = 1
PREFERRED = 2
CONNECTED = 4
LOCAL = 8
"""The bits of a candidate binding, as in the spec's ``member_from_bits``."""

Candidate = TypeVar("Candidate")


class BindingChoice:
    """The round-robin scans, built from small overridable rules (see the module introduction)."""

    # -- the rules (seams) --------------------------------------------------------------------

    def _scan_start(self, position: int, size: int) -> int:
        """Where a scan of ``size`` candidates begins: ``position``, or 0 when it is out of range (LB-ROUND-ROBIN)."""
        return position if 0 <= position < size else 0  # equivalent mutants (NumberReplacer, LtE_Lt, LtE_NotEq, LtE_IsNot): positions are never negative and 0 starts at 0 either way, so the lower bound's variants agree (the else-value ones are killed by cases)

    def _choice_type(self, lb_type: LbType) -> LbType:
        """The type the binding choice acts on: the address's own, ``lb_type`` (LB-ELIGIBLE, LB-ROUND-ROBIN)."""
        return lb_type

    def _fallback(self, lb_type: LbType, first_eligible: int, first_local: int, last_local: int) -> int:
        """The low-priority choice: ON_DEMAND's last local eligible binding if any, else the first eligible.

        See LB-ROUND-ROBIN.

        Each argument is an index in the group, or -1 when the scan met no such binding.
        """
        if lb_type is LbType.ON_DEMAND and last_local >= 0:
            return last_local
        return first_eligible

    def _position_after(self, chosen: int, last_eligible: int, size: int) -> int:
        """The position stored after choosing index ``chosen``: the next index, wrapping (LB-ROUND-ROBIN).

        ``last_eligible`` is the last eligible binding the scan inspected
        (the chosen one itself when it was a first choice); the rule ignores it.
        """
        following = chosen + 1
        return following if following < size else 0  # equivalent mutants (Lt_IsNot, Lt_NotEq): chosen < size, so following <= size, where != (and is not, on small ints) agrees with <

    # -- the scans -------------------------------------------------------------------------------

    def _pick(self, members: Sequence[Candidate], position: int, lb_type: LbType,
              flags: Callable[[Candidate], int]) -> tuple[int, int]:
        """``getNextBinding``: (the chosen index or -1, the position to store) (LB-ROUND-ROBIN).

        Scan once around from :meth:`_scan_start`; take the first eligible
        binding that is connected and, unless the type (from
        :meth:`_choice_type`) is STRICT, preferred (LB-ROUND-ROBIN, LB-TYPES); a group of one
        takes its binding whenever it is eligible. Failing that,
        :meth:`_fallback`. Nothing eligible: -1, and the position stays as
        it was.
        """
        size = len(members)
        if size == 1:  # equivalent mutants: a fast path; the scan below picks the same for a group of one
            if flags(members[0]) & ELIGIBLE:  # equivalent mutants: flags are 0 or include ELIGIBLE
                return 0, self._position_after(0, 0, 1)  # equivalent mutants (NumberReplacer): with size 0 or 1 and chosen -1..1 the stored position is 0 (last_eligible is ignored); size 2 is killed by a case
            return -1, position  # equivalent mutants (NumberReplacer, USub_Invert): any negative index means no choice: the callers only test its sign
        index = self._scan_start(position, size)
        lb_type = self._choice_type(lb_type)
        needs_preference = lb_type is not LbType.STRICT
        first_eligible = first_local = last_local = last_eligible = -1  # equivalent mutants (NumberReplacer, USub_Invert): the sentinels are only tested with < 0 or >= 0 (last_eligible is ignored by the default rule)
        for _ in range(size):
            bits = flags(members[index])
            if bits & ELIGIBLE:  # equivalent mutants (BitAnd_Div, BitAnd_FloorDiv, BitAnd_LShift, BitAnd_Mul, BitAnd_Pow): the broker's flags are 0 or odd (ELIGIBLE set), so any nonzero result means eligible
                if bits & CONNECTED and (bits & PREFERRED or not needs_preference):  # equivalent mutants (BitAnd_FloorDiv): the broker's flags here are 1, 3, 5, 7, 13 or 15: bits // CONNECTED is nonzero exactly when CONNECTED is set
                    return index, self._position_after(index, index, size)
                if first_eligible < 0:
                    first_eligible = index
                if bits & LOCAL:  # equivalent mutants (BitAnd_FloorDiv): the broker's flags here are 1, 3, 5 or 13: bits // LOCAL is nonzero exactly when LOCAL is set
                    if first_local < 0:  # equivalent mutants: first_local is dead: the default _fallback ignores it (only an overriding rule reads it)
                        first_local = index
                    last_local = index
                last_eligible = index
            index += 1
            if index == size:  # equivalent mutants (Eq_GtE): index starts below size and grows by one, so it meets size before it could pass it
                index = 0
        if first_eligible < 0:  # equivalent mutants (NumberReplacer): with nothing eligible the fallback yields first_eligible, -1, too, and no position is stored for a negative index, so < -1 only skips this shortcut
            return -1, position  # equivalent mutants (NumberReplacer, USub_Invert): any negative index means no choice: the callers only test its sign
        chosen = self._fallback(lb_type, first_eligible, first_local, last_local)
        return chosen, self._position_after(chosen, last_eligible, size)

    def _pick_target(self, members: Sequence[Candidate], position: int,
                     is_target: Callable[[Candidate], bool]) -> int:
        """``BindingsImpl.redistribute``'s scan: the first target from :meth:`_scan_start`, or -1 (RD-TARGET)."""
        size = len(members)
        index = self._scan_start(position, size)
        for _ in range(size):
            if is_target(members[index]):
                return index
            index += 1
            if index == size:  # equivalent mutants (Eq_GtE): index starts below size and grows by one, so it meets size before it could pass it
                index = 0
        return -1  # equivalent mutants (NumberReplacer, USub_Invert): any negative index means no choice: the callers only test its sign

    def _pick_consumer(self, consumers: Sequence[ConsumerRecord], position: int, color: str | None) -> int:
        """The consumer whose turn it is: the first that can take the message, from :meth:`_scan_start`, or -1.

        ``consumers`` are in attach order; one that is paused or whose filter
        does not match is passed over without losing its turn.
        """
        size = len(consumers)
        index = self._scan_start(position, size)
        for _ in range(size):
            if consumers[index].can_take(color):
                return index
            index += 1
            if index == size:  # equivalent mutants (Eq_GtE): index starts below size and grows by one, so it meets size before it could pass it
                index = 0
        return -1  # equivalent mutants (NumberReplacer, USub_Invert): any negative index means no choice: the callers only test its sign


def _given(bits: int) -> int:
    return bits


def choose_from_bits_on(chooser: type[BindingChoice], m0: int, m1: int, m2: int, size: int, position: int,
                        lb_type: LbType) -> tuple[int, int]:
    """:meth:`BindingChoice._pick` of ``chooser`` over up to three members given as bits; -1 for no choice.

    The object is made without ``__init__``: the scan reads no state, only
    the class's rules, so a broker class can be passed without a profile.
    """
    check_bits_domain(m0, m1, m2, size, position)
    seams = chooser.__new__(chooser)
    return seams._pick((m0, m1, m2)[:size], position, lb_type, _given)


def choose_from_bits(m0: int, m1: int, m2: int, size: int, position: int, lb_type: LbType) -> tuple[int, int]:
    """The fast broker's choice over up to three members given as bits; -1 for no choice.

    The spec's ``choose_from_bits``, computed by the scan and rules
    :class:`~.broker.FastBalancingBroker` routes with. Bits: 1 eligible,
    2 preferred, 4 connected, 8 local (the spec's ``member_from_bits``).

    pre: 0 <= m0 < 16 and 0 <= m1 < 16 and 0 <= m2 < 16
    pre: 1 <= size <= 3
    pre: 0 <= position <= 4
    post: -1 <= __return__[0] < size
    """
    from .broker import FastBalancingBroker  # the broker module imports this one

    return choose_from_bits_on(FastBalancingBroker, m0, m1, m2, size, position, lb_type)
