"""The reference implementation: written to teach, mirroring how a broker is built.

Each domain is a subpackage whose classes follow the structure of the real
broker component they stand for (Artemis's address manager, its server and
session), with plain mutable dicts and sets. Every class offers
``execute(command) -> outcome`` and ``snapshot() -> spec state`` so it can be
run in lockstep with the spec.
"""

from .addressing import ReferenceBroker

__all__ = ["ReferenceBroker"]
