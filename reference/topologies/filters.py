"""Destination wildcards and the network bridge filters: which demand a bridge carries, which messages it takes.

Introduction
------------
Two kinds of filter decide what crosses a bridge in ActiveMQ Classic.

*Destination filters* decide which destinations a bridge carries demand
for at all. ``NetworkBridgeConfiguration`` holds ``excludedDestinations``
and ``dynamicallyIncludedDestinations`` as wildcard patterns, and
``DemandForwardingBridgeSupport.isPermissableDestination`` asks them in a
fixed order: an excluded destination is never bridged; with an include
list, only what it matches is. A pattern is compiled
once into a :class:`DestinationFilter`, the way ``DestinationFilter.parseFilter``
picks a simple, prefix or wildcard filter: ``*`` stands for one dot-separated
part of a name, ``>`` for every part from there on (and, alone, for any name).
A ``queue://`` pattern never matches a topic and the other way round.

*Network bridge filters* decide, message by message, whether a demand
subscription may take a message. ``configureDemandSubscription`` attaches
one to every demand subscription as its ``additionalPredicate``, and
``AbstractSubscription.parseSelector`` folds it into the selector, so the
queue's dispatch loop (``Queue.doActualDispatch``) simply sees a consumer
whose selector does not match. The default :class:`NetworkBridgeFilter`
(``NetworkBridgeFilter.matchesForwardingFilter``) refuses a message that
has already been on the far broker (a loop) or that has used up the
bridge's messageTTL. The destination policy may name a different factory:
``ConditionalNetworkBridgeFilterFactory`` with ``replayWhenNoConsumers``
builds a :class:`ConditionalNetworkBridgeFilter`, which lets a queue
message go *back* to a broker on its path when the local queue has no
client consumer left, without checking messageTTL (AMQ-2324,
``ConditionalNetworkBridgeFilter.matchesForwardingFilter``).

One guard is the model's, not ActiveMQ's: a message whose path already
holds ``MAX_HOPS`` brokers is never forwarded again, so that replay cannot
bounce a message for ever (every path would grow without end otherwise).
"""

from __future__ import annotations

from typing import Protocol

from brokerspec.spec.topologies import MAX_HOPS

ANY_CHILD = "*"
"""Wildcard for exactly one part of a destination name (``DestinationFilter.ANY_CHILD``)."""

ANY_DESCENDENT = ">"
"""Wildcard for every remaining part of a name (``DestinationFilter.ANY_DESCENDENT``)."""


class DestinationFilter:
    """One compiled wildcard pattern such as ``queue://ORDERS.*`` or ``topic://PRICES.>``.

    The pattern's name is split at dots. Everything before a ``>`` must match
    part for part (``*`` matches any one part); ``>`` then asks for at least
    one more part, unless it is the whole pattern, which matches every name of
    the kind. A pattern without ``>`` matches names with exactly as many parts.
    """

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.kind, _, name = pattern.partition("://")
        parts = name.split(".")
        self.descendants = ANY_DESCENDENT in parts
        self.fixed = tuple(parts[:parts.index(ANY_DESCENDENT)]) if self.descendants else tuple(parts)

    def matches(self, destination: str) -> bool:
        """Whether ``destination`` (``queue://NAME`` or ``topic://NAME``) is one the pattern names."""
        kind, _, name = destination.partition("://")
        if kind != self.kind:
            return False
        parts = name.split(".")
        if self.descendants:
            if not self.fixed:
                return True
            if len(parts) <= len(self.fixed):
                return False
        elif len(parts) != len(self.fixed):
            return False
        return all(wanted in (ANY_CHILD, part) for wanted, part in zip(self.fixed, parts))

    def __repr__(self) -> str:
        return f"DestinationFilter({self.pattern!r})"


class DestinationSelection:
    """A bridge's include and exclude lists, compiled (``isPermissableDestination``)."""

    def __init__(self, included: tuple[str, ...], excluded: tuple[str, ...]) -> None:
        self.included = tuple(DestinationFilter(p) for p in included)
        self.excluded = tuple(DestinationFilter(p) for p in excluded)

    def is_permissable_destination(self, destination: str) -> bool:
        """Excludes first; then an empty include list lets everything through, a non-empty one only its matches."""
        if any(f.matches(destination) for f in self.excluded):
            return False
        if not self.included:
            return True
        return any(f.matches(destination) for f in self.included)


class ForwardingMessage(Protocol):
    """What a network bridge filter reads from a message: its brokerPath."""

    @property
    def broker_path(self) -> tuple[str, ...]: ...


class LocalDestination(Protocol):
    """What the conditional filter reads from the local destination."""

    @property
    def is_topic(self) -> bool: ...

    def has_client_consumers(self) -> bool: ...


class NetworkBridgeFilter:
    """The default forwarding predicate of one demand subscription (``NetworkBridgeFilter``).

    ``network_broker_id`` is the broker at the far end of the bridge;
    ``message_ttl`` is the bridge's messageTTL (-1: unlimited).
    """

    def __init__(self, network_broker_id: str, message_ttl: int) -> None:
        self.network_broker_id = network_broker_id
        self.message_ttl = message_ttl

    def matches_forwarding_filter(self, message: ForwardingMessage, destination: LocalDestination) -> bool:
        """Whether ``message``, held by ``destination``'s broker, may be forwarded to the far broker."""
        if len(message.broker_path) >= MAX_HOPS:
            return False
        if self.network_broker_id in message.broker_path:
            return False
        return self.has_hops_left(message)

    def has_hops_left(self, message: ForwardingMessage) -> bool:
        """The messageTTL test: the path must be shorter than messageTTL, unless that is -1."""
        return self.message_ttl == -1 or len(message.broker_path) < self.message_ttl


class ConditionalNetworkBridgeFilter(NetworkBridgeFilter):
    """``ConditionalNetworkBridgeFilter`` with ``replayWhenNoConsumers`` (and ``replayDelay`` 0).

    A queue message whose path already holds the far broker may go back
    there when the local queue has no client consumer; messageTTL is not
    checked on that branch. Everything else is the default filter's decision.
    """

    def matches_forwarding_filter(self, message: ForwardingMessage, destination: LocalDestination) -> bool:
        """The replay branch first, then the default filter."""
        if len(message.broker_path) >= MAX_HOPS:
            return False
        if self.network_broker_id in message.broker_path:
            return not destination.is_topic and not destination.has_client_consumers()
        return self.has_hops_left(message)


def create_network_bridge_filter(network_broker_id: str, message_ttl: int,
                                 replay_when_no_consumers: bool) -> NetworkBridgeFilter:
    """The filter the local destination policy's factory builds (``createNetworkBridgeFilter``)."""
    if replay_when_no_consumers:
        return ConditionalNetworkBridgeFilter(network_broker_id, message_ttl)
    return NetworkBridgeFilter(network_broker_id, message_ttl)
