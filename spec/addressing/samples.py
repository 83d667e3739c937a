"""Small alphabets of names for symbolic checking.

CrossHair explores a function by branching on its inputs. Free strings that
end up as dictionary keys are made concrete early, and two concrete random
strings almost never collide, yet collisions (a name bound on two
addresses, an FQQN naming the wrong address) are where resolution bugs
live. These enums give the pure lookup entry points of the reference and
the fast implementation a small explicit alphabet, so the solver enumerates
the colliding cases instead of hoping to meet them.
"""

from __future__ import annotations

from enum import Enum


class SampleAddress(Enum):
    """Address names that collide with each other and with queue names."""

    A1 = "a1"
    A2 = "a2"
    Q1 = "q1"
    A1_COLON = "a1:"


class SampleQueue(Enum):
    """Queue names that collide across addresses."""

    Q1 = "q1"
    Q2 = "q2"


class SampleName(Enum):
    """Client names: bare, fully qualified, and the odd shapes."""

    NONE = ""
    Q1 = "q1"
    Q2 = "q2"
    A1_Q1 = "a1::q1"
    A2_Q1 = "a2::q1"
    A1_Q2 = "a1::q2"
    Q1_Q1 = "q1::q1"
    EMPTY_Q1 = "::q1"
    A1_EMPTY = "a1::"
    SEPARATOR = "::"
    THREE_PARTS = "a1::q1::q2"
    COLON_FQQN = "a1:::q1"
