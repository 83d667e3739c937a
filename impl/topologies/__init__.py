"""The fast topology broker: indexed demand with incremental consumer changes.

Introduction
------------
The same commands and outcomes as ``brokerspec.spec.topologies``, kept in
mutable indexes for speed (:mod:`.demand` for registrations and
propagation, :mod:`.broker` for the network, clients and messages,
:mod:`.validity` for the private invariants). ``snapshot()`` shows the
network as a spec state so every step can be compared with the spec.
"""

from .broker import TREE_CONFIG, FastTopologyBroker
from .demand import DemandTable, Link, NeedsRebuild, Reg, Rules

__all__ = ["TREE_CONFIG", "DemandTable", "FastTopologyBroker", "Link", "NeedsRebuild", "Reg", "Rules"]
