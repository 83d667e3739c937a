"""Hierarchical topologies: network connectors against the tree connector, as an executable specification.

Introduction
------------
Brokers joined by ActiveMQ Classic network connectors learn of remote
consumers through advisories; each bridge turns an accepted advisory into
a *demand subscription*, within consumerTTL and without loops, and messages
follow demand hop by hop within messageTTL. Seed 002 (AMQ-2875) proposes a
*tree connector* instead: leaves, branches and one root, where demand goes
up with no TTL and never spills sideways. This package states both, so
that the same scenario can be run under each and compared.

Modules: :mod:`.model` (state), :mod:`.commands`, :mod:`.outcomes`,
:mod:`.demand` (propagation), :mod:`.routing` (messages),
:mod:`.operations` (the transitions), :mod:`.invariants`, :mod:`.metrics`,
:mod:`.retail` (the seed's hierarchy), :mod:`.rules`. Sources: seed 002
(AMQ-2875) and the network classes of ActiveMQ Classic 5.17.2
(``org.apache.activemq.network`` in apache/activemq); :mod:`.rules` names
the file and method behind each rule.
"""

from .commands import (
    COMMAND_TYPES,
    AddBroker,
    AddProducer,
    Connect,
    Disconnect,
    Move,
    QueryDemand,
    RemoveProducer,
    Send,
    SetReplay,
    SetTtl,
    Subscribe,
    TopologyCommand,
    TreeConnect,
    Unsubscribe,
)
from .demand import (
    PRIORITY_BASE,
    can_conduit,
    client_registration,
    compute_demand,
    compute_priority,
    is_loop,
    is_permitted,
    is_suppressing,
    is_tree_forwarded,
    is_within_consumer_ttl,
    matches_wildcard,
)
from .invariants import invariant_violations
from .metrics import (
    Metrics,
    compute_metrics,
    count_advisories,
    count_stranded,
    count_subscriptions,
    get_hops,
    get_spilled,
)
from .model import (
    MAX_HOPS,
    Bridge,
    BridgeConfig,
    Connector,
    Consumer,
    Message,
    NetworkConnector,
    Producer,
    Registration,
    Role,
    TopologyState,
    TreeConnector,
    get_bridges,
    get_children,
    get_design,
    get_parent,
    get_role,
    get_roots,
    is_topic,
)
from .operations import apply, initial_state, run, settle_network
from .outcomes import (
    OUTCOME_TYPES,
    Applied,
    DemandQueried,
    Holding,
    Delivered,
    Dropped,
    Event,
    Refusal,
    Refused,
    Sent,
    TopologyOutcome,
    Waiting,
)
from .retail import HQ, region_name, retail_commands, store_name
from .routing import choose, get_eligible, get_registrations, is_forwardable, is_within_message_ttl, rotate, route
from .rules import RULES

__all__ = [
    "COMMAND_TYPES", "HQ", "OUTCOME_TYPES", "MAX_HOPS", "PRIORITY_BASE", "RULES", "AddBroker", "AddProducer", "Applied", "Bridge",
    "BridgeConfig", "Connect", "Connector", "Consumer", "Delivered", "Disconnect", "Dropped", "Event", "Message",
    "Metrics", "Move", "NetworkConnector", "Producer", "Refusal", "Refused", "Registration", "RemoveProducer",
    "QueryDemand", "DemandQueried", "Holding", "Role", "Send", "Sent", "SetReplay", "SetTtl", "Subscribe", "TopologyCommand", "TopologyOutcome",
    "TopologyState", "TreeConnect", "TreeConnector", "Unsubscribe", "Waiting", "apply", "can_conduit", "choose",
    "client_registration", "compute_demand", "compute_metrics", "compute_priority", "count_advisories",
    "count_stranded", "count_subscriptions", "get_bridges", "get_children", "get_design", "get_eligible",
    "get_hops", "get_parent", "get_registrations", "get_role", "get_roots", "get_spilled", "initial_state",
    "invariant_violations", "is_forwardable", "is_loop", "is_permitted", "is_suppressing", "is_topic",
    "is_tree_forwarded", "is_within_consumer_ttl", "is_within_message_ttl", "matches_wildcard", "region_name",
    "retail_commands", "rotate", "route", "run", "settle_network", "store_name",
]
