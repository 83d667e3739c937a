"""One running Artemis node as the domain adapters see it: management, queries, the probe, reconfiguration.

Introduction
------------
:class:`Node` joins an :class:`~.broker.ArtemisBroker`, the client
:class:`~.driver.Driver`'s connection to it (named after the node) and the
probe's file (:class:`ProbeLog`). It offers what every domain adapter needs:

* ``manage(operation, *params)``: an operation of the broker's management
  API (``ActiveMQServerControl``) sent as a core management message; a
  refused operation is a :class:`~.driver.CallFailed` carrying the broker's
  AMQ code, like any other refusal.
* ``addresses()`` and ``queues()``: what the broker holds, read through
  management and queue queries, without its own internal addresses and
  queues (``activemq.*``, ``$sys.*``), which no spec domain knows of.
* ``reconfigure(config)``: write ``broker.xml``; address settings take
  effect while the broker runs (waited for with a sentinel setting whose
  value changes on every write), the rest with a restart.
* ``restart(crash)``: the driver's sessions die with the broker; the
  connection is made again.
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Any

from .broker import ArtemisBroker, BrokerFailed
from .config import BrokerConfig
from .driver import CallFailed, Cause, Driver
from .outcomes import UnexpectedRefusal, new_tag

SYSTEM_PREFIXES = ("activemq.", "$sys.", "$bs.")
"""Names of the broker's own addresses and queues (management, notifications, MQTT sessions) and brokerspec's."""

FQQN_SEPARATOR = "::"
"""What a queue query splits a name at (``CompositeAddress``)."""

PROBE_ATTEMPTS = 5
"""How often a question whose answer failed is asked (a queue browsed while a redistribution empties it)."""

PROBE_WAIT = 5.0
"""Seconds to read the probe's file for an answer the broker has already refused the question with."""

RELOAD_SENTINEL = "brokerspec-reload"
"""The match of the sentinel address setting (a name without ``$``: 2.11 never matches a setting that starts with one)."""


def is_system_name(name: str) -> bool:
    """Whether ``name`` is one of the broker's internal addresses or queues rather than one a spec made."""
    return name.startswith(SYSTEM_PREFIXES)


class ProbeLog:
    """The observer plugin's file, read from where the last read stopped."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = path.stat().st_size if path.exists() else 0

    def read(self) -> list[dict[str, Any]]:
        """Every event written since the last read, in order."""
        if not self.path.exists():
            return []
        with self.path.open("rb") as stream:
            stream.seek(self.offset)
            data = stream.read()
        complete = data[: data.rfind(b"\n") + 1]
        self.offset += len(complete)
        return [json.loads(line) for line in complete.decode("utf-8").splitlines() if line.strip()]

    def for_tag(self, tag: str) -> list[dict[str, Any]]:
        """The new events about the message tagged ``tag`` (other new events are dropped)."""
        return [event for event in self.read() if event.get("tag") == tag]


class Node:
    """A running broker with a client connection named ``name``."""

    def __init__(self, name: str, broker: ArtemisBroker, driver: Driver) -> None:
        self.name = name
        self.broker = broker
        self.driver = driver
        self.probe = ProbeLog(Path(broker.config.probe_file))
        self.reloads = 0

    @property
    def config(self) -> BrokerConfig:
        """The configuration the broker was last given."""
        return self.broker.config

    def connect(self) -> None:
        """(Re)open the client connection to the broker."""
        self.driver.call("connect", node=self.name, url=self.broker.url)

    def call(self, command: str, **fields: Any) -> dict[str, Any]:
        """A driver call on this node's connection."""
        return self.driver.call(command, node=self.name, **fields)

    def manage(self, operation: str, *params: Any, resource: str = "broker") -> Any:
        """Run a management operation; its result (JSON-decoded), or CallFailed if the broker refused it."""
        reply = self.call("manage", resource=resource, operation=operation, params=list(params))
        text = reply.get("result")
        result = json.loads(text) if text else None
        if not reply.get("succeeded"):
            message = result[0] if isinstance(result, list) and result else str(result)
            raise CallFailed(f"manage {operation}", (Cause("management", str(message), None),))
        return result[0] if isinstance(result, list) and len(result) == 1 else result

    def ask(self, session: str, question: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Ask the probe ``question`` (``tx``, ``caches``, ``state``) through ``session``: its answer, and every
        record the probe wrote meanwhile (in order, the answers among them) for the caller.

        The probe writes its answer, then refuses the question with an
        ``ActiveMQException``. A transacted session sends without waiting for
        the broker (its errors surface at the commit), so the question is
        followed by a blocking round trip on the same session: once that
        returns, the broker has handled every send the session made before,
        and the probe has written about each.

        The broker logs and swallows a plugin's exception of any other kind
        (``ActiveMQServerImpl.callBrokerPlugins``) and lets the question go on
        as a plain message. So the probe writes an answer that threw, such as
        a queue browsed while a redistribution or a new consumer changes it,
        with the exception under ``error``, and the question is asked again, up
        to :data:`PROBE_ATTEMPTS` times.
        """
        records: list[dict[str, Any]] = []
        error = ""
        for attempt in range(PROBE_ATTEMPTS):
            tag = new_tag(self)
            try:
                self.driver.call("send", session=session, address="$bs.probe",
                                 properties={"_BS_TAG": {"kind": "string", "value": tag},
                                             "_BS_PROBE": {"kind": "string", "value": question}})
            except CallFailed as failure:
                if not failure.mentions("brokerspec probe answered"):
                    raise
            self.driver.call("sync", session=session)
            answers: list[dict[str, Any]] = []
            deadline = time.monotonic() + PROBE_WAIT
            while not answers and time.monotonic() <= deadline:
                fresh = self.probe.read()
                records.extend(fresh)
                answers = [e for e in fresh if e.get("tag") == tag and e.get("event") == question]
                if not answers:
                    time.sleep(0.02)
            if len(answers) != 1:
                raise UnexpectedRefusal(f"the probe of {self.name} did not answer {question!r} "
                                        f"({len(answers)} answers); the broker's log: {self.broker.log_tail()}")
            if "error" not in answers[0]:
                return answers[0], records
            error = str(answers[0]["error"])
            time.sleep(0.05 * (attempt + 1))
        raise UnexpectedRefusal(f"the probe of {self.name} could not answer {question!r} in {PROBE_ATTEMPTS} "
                                f"attempts: {error}")

    def addresses(self) -> set[str]:
        """The addresses the broker holds, its own left out.

        The management registry can outlive an address: ``deleteAddress("::")``
        removes the address ``""`` from the post office (``SimpleAddressManager``
        strips the FQQN) but unregisters the management control of ``"::"``,
        leaving ``""`` listed. So each listed name is confirmed with an address
        query, which asks the post office.
        """
        listed = [name for name in self.manage("getAddressNames") if not is_system_name(name)]
        return {name for name in listed if self.call("address_query", name=name)["exists"]}

    def queues(self) -> dict[str, tuple[str, str]]:
        """Every queue the broker holds (its own left out): name -> (address, routing type).

        A queue query reads its argument as an FQQN (and strips it twice), so a
        queue whose own name holds ``::`` (``createQueue`` on the address
        ``a1::q1::x`` makes ``q1::x`` on ``a1``) cannot be queried by name: the
        query looks for ``x``. Such a queue is read through its management
        control instead, which is registered under the exact name.
        """
        found: dict[str, tuple[str, str]] = {}
        for name in self.manage("getQueueNames"):
            if is_system_name(name):
                continue
            if FQQN_SEPARATOR in name:
                found[name] = (self.manage("getAddress", resource=f"queue.{name}"),
                               self.manage("getRoutingType", resource=f"queue.{name}"))
                continue
            query = self.call("queue_query", name=name)
            if query["exists"]:
                found[name] = (query["address"], query["routing_type"])
        return found

    def consumer_count(self, queue: str) -> int:
        """How many consumers ``queue`` (a name the broker lists, not an FQQN) has."""
        if FQQN_SEPARATOR in queue:
            return int(self.manage("getConsumerCount", resource=f"queue.{queue}"))
        return int(self.call("queue_query", name=queue)["consumers"])

    def routing_types(self, address: str) -> set[str]:
        """The routing types ``address`` allows."""
        return set(self.manage("getRoutingTypes", resource=f"address.{address}"))

    def settled_config(self) -> BrokerConfig:
        """The configuration without the reload sentinels (which only mark that a rewrite was read)."""
        settings = tuple(s for s in self.config.address_settings if not s[0].startswith(RELOAD_SENTINEL))
        return dataclasses.replace(self.config, address_settings=settings)

    def reconfigure(self, config: BrokerConfig, restart: bool) -> None:
        """Apply ``config``: by a restart when ``restart``, else by waiting for the broker to re-read it."""
        self.reloads += 1
        sentinel = (f"{RELOAD_SENTINEL}-{self.reloads}", {"redistribution_delay": str(1000 + self.reloads)})
        settings = tuple(s for s in config.address_settings if not s[0].startswith(RELOAD_SENTINEL))
        config = dataclasses.replace(config, address_settings=(*settings, sentinel))
        self.broker.write_config(config)
        if restart:
            self.restart()
            return
        deadline = time.monotonic() + 15.0
        while time.monotonic() < deadline:
            settings_json = json.loads(self.manage("getAddressSettingsAsJSON", sentinel[0]))
            if settings_json.get("redistributionDelay") == 1000 + self.reloads:
                return
            time.sleep(0.05)
        raise BrokerFailed(f"Artemis did not re-read its address settings within 15 s: {self.broker.log_tail()}")

    def restart(self, crash: bool = False) -> None:
        """Restart the broker (SIGKILL first when ``crash``) and connect again."""
        self.driver.call("disconnect", node=self.name)
        self.broker.restart(crash=crash)
        self.probe = ProbeLog(self.probe.path)
        self.connect()

