"""Broker configuration: the files generated from a topology description, and where Java and ActiveMQ live.

Introduction
------------
A :class:`Topology` names the brokers, the network connectors each one
declares and the brokers whose queue policy replays messages when they have
no consumers. It is the part of the spec's ``TopologyState`` a real network
can be built from (:func:`topology_from_state`); a hand-written one works as
well. From it this module writes, for every broker, the two files a Debian
ActiveMQ 5.17 broker needs to run on its own, as brokerspec runs them on
Debian 12 (docs/topologies.md section 9):

* ``conf/activemq.xml``: the broker's name, a persistent KahaDB store in the
  broker's own folder, small usage limits, ``networkConnectorStartAsync``,
  one ``<networkConnector>`` per connector it declares (every
  :class:`BridgeConfig` field that has an ActiveMQ attribute is written, so
  the file says exactly what the spec assumes), and an OpenWire and a STOMP
  transport connector, both bound to 127.0.0.1. JMX stays off the network:
  the harness observes through STOMP advisories only (section 2.7).
* ``conf/log4j.properties``: the Debian runtime logs with log4j 1.2, so the
  shipped ``log4j2.properties`` is ignored (section 2.7). INFO goes to
  ``data/activemq.log`` and the network bridge logs at DEBUG, which prints
  every demand subscription it creates (section 2.2).

Ports. Broker number ``i`` (0-based, in the topology's order) listens for
OpenWire on ``base + 2*i`` and for STOMP on ``base + 2*i + 1``; any number of
brokers fits without overlap. The base is :data:`DEFAULT_BASE_PORT` unless
the environment variable ``BROKERSPEC_AMQ_BASE_PORT`` or the caller says
otherwise.

Where things are. The Debian paths are defaults:
``BROKERSPEC_ACTIVEMQ_HOME`` overrides ``/usr/share/activemq``,
``BROKERSPEC_JAVA_LIBRARIES`` overrides ``/usr/share/java`` (where XStream
and Jettison live) and ``BROKERSPEC_JAVA`` names the java executable;
:func:`find_missing_requirements` says what is missing, so tests can skip.

The rules kept here: every name is checked before anything is written, and
a bad one raises :class:`InvalidTopology` naming it; no file is written for
a topology that cannot run on real brokers (a tree connector has no
ActiveMQ counterpart: AMQ-2875 was never built).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import quoteattr

from brokerspec.spec import BrokerspecError
from brokerspec.spec.topologies.model import (
    QUEUE_PREFIX,
    TOPIC_PREFIX,
    BridgeConfig,
    NetworkConnector,
    TopologyState,
    TreeConnector,
)

DEFAULT_BASE_PORT = 61710
"""OpenWire port of the first broker; its STOMP port is the next one. Clear of ActiveMQ's own defaults
(61616 OpenWire, 61613 STOMP), so a packaged broker that happens to run does not collide."""

BASE_PORT_VARIABLE = "BROKERSPEC_AMQ_BASE_PORT"

DEFAULT_ACTIVEMQ_HOME = "/usr/share/activemq"
DEFAULT_JAVA_LIBRARIES = "/usr/share/java"
EXTRA_JARS = ("xstream.jar", "jettison.jar")
"""Jars the STOMP transport needs to render advisories as JSON: ``JmsFrameTranslator`` uses XStream and Jettison."""

JAVA_OPTIONS = (
    "-Xms32m", "-Xmx128m", "-XX:+UseSerialGC",
    "--add-reads=java.xml=java.logging",
    "--add-opens", "java.base/java.security=ALL-UNNAMED",
    "--add-opens", "java.base/java.net=ALL-UNNAMED",
    "--add-opens", "java.base/java.lang=ALL-UNNAMED",
    "--add-opens", "java.base/java.util=ALL-UNNAMED",
    "--add-opens", "java.naming/javax.naming.spi=ALL-UNNAMED",
    "--add-opens", "java.rmi/sun.rmi.transport.tcp=ALL-UNNAMED",
    "--add-opens", "java.base/java.util.concurrent=ALL-UNNAMED",
    "--add-opens", "java.base/java.util.concurrent.atomic=ALL-UNNAMED",
)
"""JVM flags ActiveMQ 5.17 needs on Debian 12's JDK 17; brokerspec measured a live heap of about 20 MB."""

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*\Z")


class InvalidTopology(BrokerspecError):
    """A topology description that real brokers cannot be configured from; the message names the bad value."""


@dataclass(frozen=True)
class Topology:
    """Brokers (in port order), the network connectors they declare, and the brokers that replay stranded messages."""

    brokers: tuple[str, ...]
    connectors: tuple[NetworkConnector, ...] = ()
    replay: frozenset[str] = frozenset()


@dataclass(frozen=True)
class BrokerPorts:
    """The two loopback ports one broker listens on."""

    openwire: int
    stomp: int


def get_activemq_home() -> Path:
    """``$BROKERSPEC_ACTIVEMQ_HOME``, else Debian's ``/usr/share/activemq``."""
    return Path(os.environ.get("BROKERSPEC_ACTIVEMQ_HOME") or DEFAULT_ACTIVEMQ_HOME)


def get_java_libraries() -> Path:
    """``$BROKERSPEC_JAVA_LIBRARIES``, else Debian's ``/usr/share/java`` (where xstream.jar and jettison.jar live)."""
    return Path(os.environ.get("BROKERSPEC_JAVA_LIBRARIES") or DEFAULT_JAVA_LIBRARIES)


def get_java() -> str | None:
    """``$BROKERSPEC_JAVA``, else ``java`` on the PATH; None if there is none."""
    return os.environ.get("BROKERSPEC_JAVA") or shutil.which("java")


def find_missing_requirements() -> list[str]:
    """Why real brokers cannot run here (an empty list when they can): missing java, launcher or jars."""
    missing = []
    if get_java() is None:
        missing.append("no java executable (set BROKERSPEC_JAVA or put java on the PATH)")
    launcher = get_activemq_home() / "bin" / "activemq.jar"
    if not launcher.is_file():
        missing.append(f"no ActiveMQ launcher at {launcher} (apt-get install activemq)")
    for jar in EXTRA_JARS:
        if not (get_java_libraries() / jar).exists():
            missing.append(f"no {get_java_libraries() / jar} (apt-get install libxstream-java libjettison-java)")
    return missing


def is_port_free(port: int) -> bool:
    """Whether a listener could bind ``127.0.0.1:port`` now (with SO_REUSEADDR, as Java's server sockets do)."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def topology_from_state(state: TopologyState) -> Topology:
    """The brokers, network connectors and replay policies of a spec state.

    Raises :class:`InvalidTopology` for a tree connector, which ActiveMQ
    Classic does not have.
    """
    connectors: list[NetworkConnector] = []
    for (source, target), connector in sorted(state.connectors.items()):
        if isinstance(connector, TreeConnector):
            raise InvalidTopology(f"tree connector {source}->{target} has no ActiveMQ Classic counterpart "
                                  "(AMQ-2875 was never implemented)")
        connectors.append(connector)
    return Topology(tuple(state.brokers), tuple(connectors), frozenset(state.replay))


def check_topology(topology: Topology) -> None:
    """Raise :class:`InvalidTopology` unless every name is usable and every connector joins two known brokers."""
    if not topology.brokers:
        raise InvalidTopology("a topology needs at least one broker")
    seen: set[str] = set()
    for broker in topology.brokers:
        if not _NAME.match(broker):
            raise InvalidTopology(f"broker name {broker!r} must be letters, digits, '_', '.' or '-' "
                                  "(it names a folder and an XML attribute)")
        if broker in seen:
            raise InvalidTopology(f"broker {broker!r} is listed twice")
        seen.add(broker)
    pairs: set[tuple[str, str]] = set()
    for connector in topology.connectors:
        for end in (connector.source, connector.target):
            if end not in seen:
                raise InvalidTopology(f"connector {connector.source}->{connector.target} names unknown broker {end!r}")
        if connector.source == connector.target:
            raise InvalidTopology(f"connector {connector.source}->{connector.target} links a broker to itself")
        if (connector.source, connector.target) in pairs:
            raise InvalidTopology(f"connector {connector.source}->{connector.target} is declared twice")
        pairs.add((connector.source, connector.target))
    for broker in sorted(topology.replay):
        if broker not in seen:
            raise InvalidTopology(f"replay policy names unknown broker {broker!r}")


def get_base_port(base: int | None = None) -> int:
    """``base`` if given, else ``$BROKERSPEC_AMQ_BASE_PORT``, else :data:`DEFAULT_BASE_PORT`."""
    if base is None:
        text = os.environ.get(BASE_PORT_VARIABLE, "")
        if not text:
            return DEFAULT_BASE_PORT
        if not text.isdigit():
            raise InvalidTopology(f"{BASE_PORT_VARIABLE}={text!r} is not a port number")
        base = int(text)
    if not 1024 <= base <= 65000:
        raise InvalidTopology(f"base port {base} must be between 1024 and 65000")
    return base


def compute_ports(brokers: Iterable[str], base: int | None = None) -> dict[str, BrokerPorts]:
    """Each broker's OpenWire and STOMP port: ``base + 2*i`` and ``base + 2*i + 1``."""
    first = get_base_port(base)
    ports = {broker: BrokerPorts(first + 2 * i, first + 2 * i + 1) for i, broker in enumerate(brokers)}
    if ports and max(p.stomp for p in ports.values()) > 65535:
        raise InvalidTopology(f"{len(ports)} brokers from base port {first} run past port 65535")
    return ports


def compute_connector_name(connector: NetworkConnector) -> str:
    """``SOURCE_to_TARGET``, the connector's name (it shows in bridge client IDs and in the log)."""
    return f"{connector.source}_to_{connector.target}"


def _flag(value: bool) -> str:
    return "true" if value else "false"


def compute_bridge_attributes(config: BridgeConfig) -> dict[str, str]:
    """The ``<networkConnector>`` attributes for every :class:`BridgeConfig` field ActiveMQ has (``NetworkBridgeConfiguration``).

    ``networkTTL`` is never written: its setter overwrites both TTLs, and
    mixing it with them makes the result depend on setter order.
    """
    return {
        "consumerTTL": str(config.consumer_ttl),
        "messageTTL": str(config.message_ttl),
        "conduitSubscriptions": _flag(config.conduit),
        "conduitNetworkQueueSubscriptions": _flag(config.conduit_network_queues),
        "decreaseNetworkConsumerPriority": _flag(config.decrease_priority),
        "suppressDuplicateQueueSubscriptions": _flag(config.suppress_duplicate_queues),
        "suppressDuplicateTopicSubscriptions": _flag(config.suppress_duplicate_topics),
    }


def render_destination(destination: str) -> str:
    """``queue://A.B`` as ``<queue physicalName="A.B"/>`` (and topics likewise); wildcards pass through."""
    for prefix, element in ((QUEUE_PREFIX, "queue"), (TOPIC_PREFIX, "topic")):
        if destination.startswith(prefix) and len(destination) > len(prefix):
            return f"<{element} physicalName={quoteattr(destination[len(prefix):])}/>"
    raise InvalidTopology(f"destination {destination!r} is not queue://NAME or topic://NAME")


def render_network_connector(connector: NetworkConnector, ports: dict[str, BrokerPorts]) -> str:
    """One ``<networkConnector>`` element, reconnecting every 2 s to the target's OpenWire port."""
    uri = (f"static:(tcp://127.0.0.1:{ports[connector.target].openwire})"
           "?maxReconnectDelay=2000&useExponentialBackOff=false")
    attributes = {"name": compute_connector_name(connector), "uri": uri, "duplex": _flag(connector.duplex)}
    attributes.update(compute_bridge_attributes(connector.config))
    opening = "<networkConnector " + "\n        ".join(f"{k}={quoteattr(v)}" for k, v in attributes.items())
    lists = []
    for element, patterns in (("dynamicallyIncludedDestinations", connector.config.include),
                              ("excludedDestinations", connector.config.exclude)):
        if patterns:
            inner = "".join(f"\n        {render_destination(p)}" for p in patterns)
            lists.append(f"\n      <{element}>{inner}\n      </{element}>")
    if not lists:
        return f"    {opening}/>"
    return f"    {opening}>{''.join(lists)}\n    </networkConnector>"


REPLAY_POLICY = """  <destinationPolicy><policyMap><policyEntries>
    <policyEntry queue=">">
      <networkBridgeFilterFactory>
        <conditionalNetworkBridgeFilterFactory replayWhenNoConsumers="true" replayDelay="0"/>
      </networkBridgeFilterFactory>
    </policyEntry>
  </policyEntries></policyMap></destinationPolicy>
"""


def render_activemq_xml(topology: Topology, broker: str, folder: Path, ports: dict[str, BrokerPorts]) -> str:
    """The whole ``activemq.xml`` of ``broker``, whose data lives under ``folder/data``."""
    data = folder / "data"
    connectors = [c for c in topology.connectors if c.source == broker]
    network = "\n".join(render_network_connector(c, ports) for c in connectors)
    network_block = f"  <networkConnectors>\n{network}\n  </networkConnectors>\n" if connectors else ""
    policy = REPLAY_POLICY if broker in topology.replay else ""
    own = ports[broker]
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<beans xmlns="http://www.springframework.org/schema/beans"
       xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
       xsi:schemaLocation="http://www.springframework.org/schema/beans
         http://www.springframework.org/schema/beans/spring-beans.xsd
         http://activemq.apache.org/schema/core http://activemq.apache.org/schema/core/activemq-core.xsd">
<broker xmlns="http://activemq.apache.org/schema/core" brokerName={quoteattr(broker)} useJmx="false"
        persistent="true" dataDirectory={quoteattr(str(data))} networkConnectorStartAsync="true">
{policy}  <persistenceAdapter><kahaDB directory={quoteattr(str(data / "kahadb"))}/></persistenceAdapter>
  <systemUsage><systemUsage>
    <memoryUsage><memoryUsage limit="32 mb"/></memoryUsage>
    <storeUsage><storeUsage limit="512 mb"/></storeUsage>
    <tempUsage><tempUsage limit="256 mb"/></tempUsage>
  </systemUsage></systemUsage>
{network_block}  <transportConnectors>
    <transportConnector name="openwire" uri="tcp://127.0.0.1:{own.openwire}"/>
    <transportConnector name="stomp" uri="stomp://127.0.0.1:{own.stomp}"/>
  </transportConnectors>
</broker>
</beans>
"""


def render_log4j_properties(folder: Path) -> str:
    """A log4j 1.x configuration: INFO to ``folder/data/activemq.log``, network bridges at DEBUG."""
    log = folder / "data" / "activemq.log"
    return f"""log4j.rootLogger=INFO, file
log4j.logger.org.apache.activemq.network=DEBUG
log4j.logger.org.apache.activemq.spring=WARN
log4j.logger.org.springframework=WARN
log4j.logger.org.apache.xbean=WARN
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.file={log}
log4j.appender.file.append=true
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=%d{{ISO8601}} | %-5p | %m | %c | %t%n
"""


def write_broker_files(topology: Topology, root: Path, ports: dict[str, BrokerPorts]) -> dict[str, Path]:
    """Write ``root/<broker>/conf/{activemq.xml,log4j.properties}`` for every broker; return each broker's folder.

    Also creates each broker's empty ``data`` and ``lib`` folders.
    """
    check_topology(topology)
    folders: dict[str, Path] = {}
    for broker in topology.brokers:
        folder = (root / broker).resolve()
        for sub in ("conf", "data", "lib"):
            (folder / sub).mkdir(parents=True, exist_ok=True)
        (folder / "conf" / "activemq.xml").write_text(render_activemq_xml(topology, broker, folder, ports))
        (folder / "conf" / "log4j.properties").write_text(render_log4j_properties(folder))
        folders[broker] = folder
    return folders
