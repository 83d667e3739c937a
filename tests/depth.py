"""How hard the tests work: a fast tier for every run, a deep tier on demand.

``BROKERSPEC_DEEP=1`` (set by ``make test-deep``) raises example counts and
solver budgets. Every solver run has an explicit budget either way.
"""

from __future__ import annotations

import os

DEEP = os.environ.get("BROKERSPEC_DEEP", "") == "1"


def scaled(fast: int, deep: int) -> int:
    """``fast`` normally, ``deep`` in the deep tier."""
    return deep if DEEP else fast
