"""The fast implementation: indexed, incremental, checked against the spec.

Each domain's class offers ``execute(command) -> outcome`` like the reference,
plus ``snapshot() -> spec state`` and ``check_valid()`` for its private
invariants.
"""

from .addressing import FastBroker

__all__ = ["FastBroker"]
