"""Real ActiveMQ Classic brokers, run from a topology description and checked against the spec.

Introduction
------------
The spec's topology domain predicts, for a network of brokers joined by
network connectors, which brokers create demand subscriptions for a
consumer and where each message ends. This package runs the same topology
on real Debian ActiveMQ 5.17 brokers on 127.0.0.1 so that the prediction
can be compared with what the brokers do (docs/topologies.md section 9). :mod:`.config` writes each broker's files, :mod:`.stomp` is the
small STOMP client used to talk to them, and :mod:`.network` starts,
observes and stops them.
"""

from .config import (
    DEFAULT_BASE_PORT,
    BrokerPorts,
    InvalidTopology,
    Topology,
    check_topology,
    compute_bridge_attributes,
    compute_ports,
    find_missing_requirements,
    get_activemq_home,
    get_java,
    get_java_libraries,
    render_activemq_xml,
    render_log4j_properties,
    topology_from_state,
    write_broker_files,
)
from .network import (
    BrokerFailed,
    Demand,
    ObservedConsumer,
    RealConsumer,
    RealNetwork,
)
from .stomp import Frame, StompClient, StompError

__all__ = [
    "DEFAULT_BASE_PORT", "BrokerFailed", "BrokerPorts", "Demand", "Frame", "InvalidTopology", "ObservedConsumer",
    "RealConsumer", "RealNetwork", "StompClient", "StompError", "Topology", "check_topology",
    "compute_bridge_attributes", "compute_ports", "find_missing_requirements", "get_activemq_home", "get_java",
    "get_java_libraries", "render_activemq_xml", "render_log4j_properties", "topology_from_state",
    "write_broker_files",
]
