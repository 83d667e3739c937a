"""Conformance cases for the cluster bridge's duplicate IDs: back and forth between two nodes, and resends.

Introduction
------------
Every message that crosses to another node carries the bridge duplicate ID
``_AMQ_BRIDGE_DUP``: the sending node's ID and the forwarded message's own
ID (``BridgeImpl.beforeForwardingNoCopy``). The receiving node checks it in
its ``BRIDGE.<address>`` cache and records it (``PostOfficeImpl.checkBridgeDuplicateID``).
A redistributed copy has an ID of its own on every hop, so a message that
a consumer draws from one node to the other and back again arrives each
time, once (``MessageRedistributionTest.testBackAndForth``). A bridge that
reconnects sends again what it had no confirmation of; the target holds the
ID and drops it (``BridgeReconnectTest``): the ``resend`` operation is that
fault, which a real cluster shows only when a connection fails at the wrong
moment, so the Artemis adapter cannot express it (rule LB-BRIDGE-DUP).
"""

from __future__ import annotations

from brokerspec.spec.addressing import RoutingType
from brokerspec.spec.balancing import (
    AddNode,
    Attach,
    Close,
    Configure,
    CreateQueue,
    LbType,
    QueryQueue,
    Receive,
    Resend,
    Send,
)

from . import Case

ANYCAST = RoutingType.ANYCAST
MULTICAST = RoutingType.MULTICAST

SOURCE = ("BridgeImpl.beforeForwardingNoCopy and getDuplicateBytes (node ID + message ID); "
          "PostOfficeImpl.checkBridgeDuplicateID (BRIDGE.<address>)")

TWO_NODES = (
    AddNode("n2"),
    Configure("orders", LbType.ON_DEMAND, 0),
    CreateQueue("n1", "orders", "orders", ANYCAST),
    CreateQueue("n2", "orders", "orders", ANYCAST),
)

BRIDGES: tuple[Case, ...] = (
    Case(
        name="balancing/back-and-forth-between-two-nodes",
        summary="A message waits on n1. A consumer of window 0 on n2 draws it there; it closes and one on n1 draws "
                "it back; that closes and one on n2 draws it again. Each hop is a copy with an ID of its own, so "
                "no node takes it for a duplicate: it arrives every time, and the last consumer receives it once.",
        commands=(
            *TWO_NODES,
            Send("n1", "orders"),
            Attach("c1", "n2", "orders", pull=True),
            Close("c1"),
            Attach("c2", "n1", "orders", pull=True),
            Close("c2"),
            Attach("c3", "n2", "orders", pull=True),
            Receive("c3"),
            Receive("c3"),
            QueryQueue("n1", "orders"),
            QueryQueue("n2", "orders"),
        ),
        rules=("LB-BRIDGE-DUP", "RD-NEW-ID", "RD-TRIGGER-REMOTE-CONSUMER", "LB-PULL"),
        source=SOURCE + "; MessageRedistributionTest.testBackAndForth, testBackAndForth2WithDuplicDetection; "
                        "ARTEMIS-4312",
    ),
    Case(
        name="balancing/resent-message-is-dropped-by-its-bridge-id",
        summary="A consumer of window 0 on n2 draws n1's send across the bridge. The bridge then reconnects and "
                "sends the message again: n2 holds its bridge ID and drops it, so the consumer receives one "
                "message, not two.",
        commands=(
            *TWO_NODES,
            Attach("c1", "n2", "orders", pull=True),
            Send("n1", "orders"),
            Resend("n1", "n2"),
            QueryQueue("n2", "orders"),
            Receive("c1"),
            Receive("c1"),
        ),
        rules=("LB-BRIDGE-DUP",),
        source=SOURCE + "; BridgeImpl resends unconfirmed references after a reconnection; BridgeReconnectTest",
    ),
    Case(
        name="balancing/resend-after-a-back-and-forth-doubles-nothing",
        summary="A message goes from n1 to n2 and back to n1 as consumers come and go; the bridge from n2 to n1 "
                "then resends its copy. n1 holds that copy's bridge ID and drops it, and the bridge from n1 to n2 "
                "resending the first hop is dropped by n2 the same way.",
        commands=(
            *TWO_NODES,
            Send("n1", "orders"),
            Attach("c1", "n2", "orders", pull=True),
            Close("c1"),
            Attach("c2", "n1", "orders", pull=True),
            Resend("n2", "n1"),
            Resend("n1", "n2"),
            QueryQueue("n1", "orders"),
            QueryQueue("n2", "orders"),
        ),
        rules=("LB-BRIDGE-DUP",),
        source=SOURCE + "; BridgeReconnectTest",
    ),
    Case(
        name="balancing/one-crossing-for-several-queues-on-a-node",
        summary="Two MULTICAST queues on n2 take a message sent on n1: it crosses once, to both, under one bridge "
                "ID, and its resend reaches neither.",
        commands=(
            AddNode("n2"),
            CreateQueue("n2", "news", "s1", MULTICAST),
            CreateQueue("n2", "news", "s2", MULTICAST),
            Send("n1", "news"),
            Resend("n1", "n2"),
            QueryQueue("n2", "s1"),
            QueryQueue("n2", "s2"),
        ),
        rules=("LB-BRIDGE-DUP", "LB-GROUPS"),
        source=SOURCE + "; RemoteQueueBindingImpl.route adds the queue IDs (_AMQ_ROUTE_TO) to one message in the "
                        "store-and-forward queue",
    ),
)
"""Every bridge case."""
