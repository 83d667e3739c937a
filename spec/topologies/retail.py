"""The seed's retail hierarchy: headquarters, regions, stores.

Introduction
------------
Seed 002 pictures a retailer with one broker at headquarters (HQ), one per
region and one per store. :func:`retail_commands` writes that hierarchy as
commands for either design, so the same description drives the spec, the
reference, the fast implementation and real brokers:

* ``network``: every region declares a duplex network connector to HQ and
  every store one to its region, all with the given TTL (``networkTTL``
  sets consumerTTL and messageTTL alike, ``NetworkBridgeConfiguration.setNetworkTTL``);
* ``tree``: every region declares a branch tree connector to HQ and every
  store a leaf tree connector to its region (seed 002 rule 2).

Names: ``hq``, regions ``r1`` ... ``rR``, stores ``r1-s1`` ... ``rR-sS``.
"""

from __future__ import annotations

from ..errors import InvalidCommand
from .commands import AddBroker, Connect, TopologyCommand, TreeConnect
from .model import BridgeConfig, Role

HQ = "hq"
MAX_REGIONS = 10
MAX_STORES = 1000


def region_name(region: int) -> str:
    """The name of region ``region`` (counting from 1)."""
    return f"r{region}"


def store_name(region: int, store: int) -> str:
    """The name of store ``store`` of region ``region`` (both counting from 1)."""
    return f"r{region}-s{store}"


def retail_commands(regions: int, stores: int, design: str = "network", ttl: int = 2) -> list[TopologyCommand]:
    """The commands that build HQ, ``regions`` regions and ``stores`` stores per region.

    ``design`` is ``network`` or ``tree``; ``ttl`` (-1 or at least 1) is the
    network connectors' TTL. Raises :class:`InvalidCommand` naming a bad
    argument (up to 10 regions of 1,000 stores, the seed's scale).
    """
    if not 1 <= regions <= MAX_REGIONS:
        raise InvalidCommand(f"regions {regions} must be 1 to {MAX_REGIONS}", "regions")
    if not 0 <= stores <= MAX_STORES:
        raise InvalidCommand(f"stores {stores} must be 0 to {MAX_STORES}", "stores")
    if design not in ("network", "tree"):
        raise InvalidCommand(f"design {design!r} must be 'network' or 'tree'", "design")
    config = BridgeConfig(consumer_ttl=ttl, message_ttl=ttl)
    commands: list[TopologyCommand] = [AddBroker(HQ)]
    for r in range(1, regions + 1):
        commands.append(AddBroker(region_name(r)))
        commands.extend(AddBroker(store_name(r, s)) for s in range(1, stores + 1))
    for r in range(1, regions + 1):
        region = region_name(r)
        if design == "tree":
            commands.append(TreeConnect(region, HQ, Role.BRANCH))
            commands.extend(TreeConnect(store_name(r, s), region, Role.LEAF) for s in range(1, stores + 1))
        else:
            commands.append(Connect(region, HQ, True, config))
            commands.extend(Connect(store_name(r, s), region, True, config) for s in range(1, stores + 1))
    return commands
