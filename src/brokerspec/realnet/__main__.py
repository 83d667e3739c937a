"""Start a tree of real brokers by hand: ``python -m brokerspec.realnet --links b2:b1,b3:b2,b4:b2 --ttl 2``.

Introduction
------------
For poking at real brokers outside the tests. Each ``CHILD:PARENT`` pair
is a duplex network connector the child declares, with consumerTTL and
messageTTL both ``--ttl`` (the trees of docs/topologies.md section 9). The brokers run until Ctrl-C, then stop by PID; their files
and logs stay in ``--folder`` (a new temporary folder by default).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from brokerspec.spec.topologies.model import BridgeConfig, NetworkConnector

from .config import Topology
from .network import RealNetwork


def parse_links(text: str) -> list[tuple[str, str]]:
    """``b2:b1,b3:b2`` as [("b2", "b1"), ("b3", "b2")]."""
    links = []
    for item in text.split(","):
        child, sep, parent = item.strip().partition(":")
        if not sep or not child or not parent:
            raise SystemExit(f"link {item!r} is not CHILD:PARENT")
        links.append((child, parent))
    return links


def main(argv: list[str] | None = None) -> None:
    """Start the tree, print where each broker listens, and wait for Ctrl-C."""
    parser = argparse.ArgumentParser(prog="python -m brokerspec.realnet", description=__doc__.split("\n")[0])
    parser.add_argument("--links", default="b2:b1,b3:b2,b4:b2", help="CHILD:PARENT pairs (default: the 4-broker tree)")
    parser.add_argument("--ttl", type=int, default=1, help="consumerTTL and messageTTL of every connector")
    parser.add_argument("--folder", type=Path, default=None,
                        help="an empty folder for broker files and logs (default: a new temporary one)")
    parser.add_argument("--base-port", type=int, default=None, help="OpenWire port of the first broker")
    args = parser.parse_args(argv)
    links = parse_links(args.links)
    brokers: list[str] = []
    for child, parent in links:
        for broker in (parent, child):
            if broker not in brokers:
                brokers.append(broker)
    config = BridgeConfig(consumer_ttl=args.ttl, message_ttl=args.ttl)
    topology = Topology(tuple(sorted(brokers)), tuple(NetworkConnector(c, p, True, config) for c, p in links))
    folder = args.folder or Path(tempfile.mkdtemp(prefix="brokerspec-realnet-"))
    with RealNetwork(topology, folder, base_port=args.base_port) as network:
        for broker in network.brokers:
            ports = network.ports[broker]
            print(f"{broker}: PID {network.pids[broker]}, OpenWire 127.0.0.1:{ports.openwire}, "
                  f"STOMP 127.0.0.1:{ports.stomp}, log {network.folders[broker] / 'data' / 'activemq.log'}")
        print(f"up in {network.timings['bridged']:.1f} s; Ctrl-C stops every broker")
        try:
            while all(network.is_running(b) for b in network.brokers):
                time.sleep(1)
            print("a broker exited; stopping the others")
        except KeyboardInterrupt:
            print("stopping")


if __name__ == "__main__":
    main()
