"""The ``broker.xml`` of a real Artemis node, written from the spec's options.

Introduction
------------
:class:`BrokerConfig` holds everything brokerspec sets on a node, and
:func:`render_broker_xml` writes it as a ``broker.xml`` that the 2.11 and the
2.40 schema both accept. What comes from where:

* ``id-cache-size`` and ``persist-id-cache`` from the profile's duplicates
  options (``ActiveMQDefaultConfiguration``, ``PostOfficeImpl.resolveIdCacheSize``); a per-address ``id-cache-size`` address setting only
  where the spec's ``set_id_cache_size`` asked for one (ARTEMIS-4159, 2.31.0).
* The acceptor's ``anycastPrefix`` and ``multicastPrefix`` from the spec's
  ``set_prefix`` operations (acceptor URL parameters,
  ``AbstractProtocolManager.setAnycastPrefix``).
* Address settings from ``set_address_settings`` (auto-creation and default
  routing types) and from the balancing domain's ``configure``
  (``redistribution-delay``), on top of a catch-all ``#`` that keeps
  Artemis's defaults except two: auto-deletion of queues and addresses is
  off, because no spec domain models a queue disappearing on its own.
* Cluster connections, one per configured address with its
  ``message-load-balancing`` type, over static connectors to every other
  node, for the balancing domain.

Fixed choices, for speed and isolation: security off, an NIO journal with
small files that writes through to the operating system without ``fsync``
(a process killed with SIGKILL loses nothing the broker acknowledged;
only a machine crash could), the observer plugin of :mod:`.probe`, and the
configuration file re-read every 100 ms so that address settings change
without a restart.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from xml.sax.saxutils import escape, quoteattr

SETTING_ELEMENTS = {
    "auto_create_addresses": "auto-create-addresses",
    "auto_create_queues": "auto-create-queues",
    "default_address_routing_type": "default-address-routing-type",
    "default_queue_routing_type": "default-queue-routing-type",
    "redistribution_delay": "redistribution-delay",
    "id_cache_size": "id-cache-size",
}
"""The address settings brokerspec writes: spec field -> broker.xml element."""


@dataclass(frozen=True)
class ClusterLink:
    """A cluster connection for one address match ("": every address), with its load-balancing type."""

    address: str
    lb_type: str


@dataclass(frozen=True)
class BrokerConfig:
    """One node's configuration, as brokerspec sets it."""

    name: str
    port: int
    probe_file: str
    id_cache_size: int = 20000
    persist_id_cache: bool = True
    prefixes: Mapping[str, str] = field(default_factory=dict)
    """Acceptor prefix -> ``ANYCAST`` or ``MULTICAST``."""
    address_settings: tuple[tuple[str, Mapping[str, str]], ...] = ()
    """(match, {spec field: value}) in the order set; a later match of the same name replaces an earlier one."""
    peers: Mapping[str, int] = field(default_factory=dict)
    """The other cluster nodes: name -> core port. Empty for a single node."""
    cluster: tuple[ClusterLink, ...] = ()
    max_hops: int = 1


def render_acceptor_url(config: BrokerConfig) -> str:
    """The acceptor URL: core and AMQP on 127.0.0.1, with the configured prefixes."""
    params = ["protocols=CORE,AMQP", "useEpoll=false"]
    for kind, parameter in (("ANYCAST", "anycastPrefix"), ("MULTICAST", "multicastPrefix")):
        chosen = [prefix for prefix, routing_type in config.prefixes.items() if routing_type == kind]
        if chosen:
            params.append(f"{parameter}={','.join(chosen)}")
    return f"tcp://127.0.0.1:{config.port}?{';'.join(params)}"


def render_address_settings(config: BrokerConfig) -> str:
    """The ``<address-settings>`` element: the catch-all first, then each match set by the spec's operations."""
    merged: dict[str, dict[str, str]] = {"#": {}}
    for match, values in config.address_settings:
        merged.setdefault(match, {}).update(values)
    lines = ["      <address-settings>"]
    for match, values in merged.items():
        lines.append(f"         <address-setting match={quoteattr(match)}>")
        elements = {"auto-delete-queues": "false", "auto-delete-addresses": "false",
                    "auto-delete-created-queues": "false"}
        for key, value in values.items():
            elements[SETTING_ELEMENTS[key]] = value
        lines.extend(f"            <{name}>{escape(value)}</{name}>" for name, value in elements.items())
        lines.append("         </address-setting>")
    lines.append("      </address-settings>")
    return "\n".join(lines)


def render_cluster(config: BrokerConfig) -> str:
    """Connectors, cluster credentials and one cluster connection per configured address ("" when single)."""
    if not config.peers:
        return ""
    lines = ["      <connectors>",
             f'         <connector name="self">tcp://127.0.0.1:{config.port}</connector>']
    lines.extend(f"         <connector name={quoteattr('to-' + peer)}>tcp://127.0.0.1:{port}</connector>"
                 for peer, port in sorted(config.peers.items()))
    lines.append("      </connectors>")
    lines.append("      <cluster-user>brokerspec</cluster-user>")
    lines.append("      <cluster-password>brokerspec</cluster-password>")
    lines.append("      <cluster-connections>")
    for index, link in enumerate(config.cluster):
        lines.extend([
            f'         <cluster-connection name="c{index}">',
            *([f"            <address>{escape(link.address)}</address>"] if link.address else []),
            "            <connector-ref>self</connector-ref>",
            "            <retry-interval>200</retry-interval>",
            "            <use-duplicate-detection>true</use-duplicate-detection>",
            f"            <message-load-balancing>{link.lb_type}</message-load-balancing>",
            f"            <max-hops>{config.max_hops}</max-hops>",
            "            <static-connectors>",
            *(f"               <connector-ref>to-{peer}</connector-ref>" for peer in sorted(config.peers)),
            "            </static-connectors>",
            "         </cluster-connection>"])
    lines.append("      </cluster-connections>")
    return "\n".join(lines)


def render_broker_xml(config: BrokerConfig) -> str:
    """The whole ``broker.xml`` for ``config``."""
    return f"""<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<!-- written by brokerspec for a conformance run; see docs/artemis-fidelity.md -->
<configuration xmlns="urn:activemq" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
               xsi:schemaLocation="urn:activemq /schema/artemis-configuration.xsd">
   <core xmlns="urn:activemq:core">
      <name>{escape(config.name)}</name>
      <persistence-enabled>true</persistence-enabled>
      <security-enabled>false</security-enabled>
      <journal-type>NIO</journal-type>
      <journal-datasync>false</journal-datasync>
      <journal-file-size>1M</journal-file-size>
      <journal-min-files>2</journal-min-files>
      <journal-pool-files>4</journal-pool-files>
      <journal-buffer-timeout>100000</journal-buffer-timeout>
      <paging-directory>data/paging</paging-directory>
      <bindings-directory>data/bindings</bindings-directory>
      <journal-directory>data/journal</journal-directory>
      <large-messages-directory>data/large-messages</large-messages-directory>
      <max-disk-usage>100</max-disk-usage>
      <id-cache-size>{config.id_cache_size}</id-cache-size>
      <persist-id-cache>{str(config.persist_id_cache).lower()}</persist-id-cache>
      <configuration-file-refresh-period>100</configuration-file-refresh-period>
      <graceful-shutdown-enabled>false</graceful-shutdown-enabled>
      <acceptors>
         <acceptor name="artemis">{escape(render_acceptor_url(config))}</acceptor>
      </acceptors>
{render_cluster(config)}
      <broker-plugins>
         <broker-plugin class-name="BrokerspecProbe">
            <property key="file" value={quoteattr(config.probe_file)}/>
         </broker-plugin>
      </broker-plugins>
{render_address_settings(config)}
   </core>
</configuration>
"""
