"""A network of real ActiveMQ Classic brokers on 127.0.0.1, started and stopped by PID, observed over STOMP.

Introduction
------------
:class:`RealNetwork` turns a topology description into running Debian
ActiveMQ 5.17 brokers, one JVM each, and lets a test ask them the questions
the spec answers: which brokers hold a demand subscription for a
destination, with which brokerPath, and whether a message sent at one
broker reaches a consumer at another.

Theory of operation (docs/topologies.md section 9 says what is compared):

* **Start.** Each broker gets its own folder with ``conf``, ``data`` and
  ``lib`` (:mod:`.config` writes the files). ``lib`` holds links to
  XStream and Jettison: the STOMP transport needs them to turn advisory
  messages into JSON, and Debian's ActiveMQ does not ship them (section
  2.7). The broker runs as ``java -jar activemq.jar start xbean:file:...``
  with a small heap and the ``--add-opens`` flags Java 17 needs (section
  2.2), and no JMX connector. The harness records every PID it starts,
  waits for the "started" line in each broker's log, and then for one
  "Network connection ... has been established" line per directed bridge.
  The "started" line also carries the broker's ID (``ID:host-...``), which
  is how IDs in brokerPaths are turned back into broker names.
* **Observe.** Subscribing over STOMP to
  ``ActiveMQ.Advisory.Consumer.Queue.<name>`` replays every consumer the
  broker already has and then reports each new or closed one
  (``AdvisoryBroker.addConsumer`` replays the existing consumers). A consumer
  with a non-empty ``brokerPath`` is a network demand subscription, and
  its path lists the brokers its advisory came through, the consumer's home
  first. Consumers on advisory topics are never advised, so watching
  creates no demand. The harness keeps one watch per broker and
  destination open and folds the add and remove advisories into a live
  picture.
* **Wait.** Real brokers settle asynchronously: one or two hops take 0.1 to
  0.3 s on a warm network (section 2.5), but the first advisory after the
  brokers start can take well over a second on a busy machine. The harness
  polls the picture until it stops changing for a while, or until it
  matches what the caller expects and stays so for a quiet period, always
  within a timeout.
* **Stop.** Every broker is stopped by its own PID: SIGTERM (a clean
  shutdown takes about 2 s), a bounded wait, then SIGKILL. This happens
  on leaving the ``with`` block for any reason, and at interpreter exit
  as a last resort. Nothing is ever killed by name.
"""

from __future__ import annotations

import atexit
import json
import re
import signal
import subprocess
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from brokerspec.spec import BrokerspecError
from brokerspec.spec.topologies.model import QUEUE_PREFIX, TOPIC_PREFIX, TopologyState, check_destination

from .config import (
    EXTRA_JARS,
    JAVA_OPTIONS,
    BrokerPorts,
    Topology,
    check_topology,
    compute_ports,
    find_missing_requirements,
    get_activemq_home,
    get_java,
    get_java_libraries,
    is_port_free,
    topology_from_state,
    write_broker_files,
)
from .stomp import StompClient, StompError

STARTED = re.compile(r"Apache ActiveMQ \S+ \((?P<name>[^,]+), (?P<id>ID:[^)]+)\) started")
ESTABLISHED = re.compile(r"Network connection between vm://(?P<local>[^#\s]+)#\d+ and \S+ "
                         r"\((?P<remote>[^)]+)\) has been established")
POLL_INTERVAL = 0.05

Demand = dict[str, list[tuple[str, ...]]]
"""Each broker's demand subscriptions for one destination, as sorted brokerPaths (broker names, home first)."""


class BrokerFailed(BrokerspecError):
    """A broker did not start, or a bridge did not come up, in time; the message quotes the broker's log."""


def to_stomp_destination(destination: str) -> str:
    """``queue://A`` as ``/queue/A`` and ``topic://A`` as ``/topic/A`` (anything else raises InvalidCommand)."""
    check_destination(destination)
    if destination.startswith(QUEUE_PREFIX):
        return "/queue/" + destination[len(QUEUE_PREFIX):]
    return "/topic/" + destination[len(TOPIC_PREFIX):]


def to_advisory_topic(destination: str) -> str:
    """The STOMP name of the consumer advisory topic for ``destination``."""
    kind = "Topic" if destination.startswith(TOPIC_PREFIX) else "Queue"
    return f"/topic/ActiveMQ.Advisory.Consumer.{kind}.{to_stomp_destination(destination).split('/', 2)[2]}"


@dataclass(frozen=True)
class ObservedConsumer:
    """A consumer a broker advised: its ID, brokerPath (names, home first), priority, and whether it browses.

    An empty ``path`` is a client consumer; a non-empty one a network demand subscription.
    """

    broker: str
    destination: str
    key: str
    path: tuple[str, ...]
    priority: int
    browser: bool

    @property
    def network(self) -> bool:
        """Whether this is a network demand subscription (it has a brokerPath)."""
        return bool(self.path)


def parse_broker_path(info: Mapping[str, Any], names: Mapping[str, str]) -> tuple[str, ...]:
    """The brokerPath of an advisory's ConsumerInfo as broker names; an unknown ID is kept as written.

    XStream with Jettison writes a one-element path as ``[{"BrokerId": {...}}]``
    and a longer one as ``[{"BrokerId": [{...}, ...]}]``; both are read.
    """
    path: list[str] = []
    for entry in info.get("brokerPath") or ():
        ids = entry.get("BrokerId", ()) if isinstance(entry, dict) else ()
        for broker_id in ids if isinstance(ids, list) else [ids]:
            value = str(broker_id.get("value", "")) if isinstance(broker_id, dict) else str(broker_id)
            path.append(names.get(value, value))
    return tuple(path)


def compute_consumer_key(consumer_id: Mapping[str, Any]) -> str:
    """``connectionId:sessionId:value``, a consumer's ID as ActiveMQ prints it."""
    return f"{consumer_id.get('connectionId')}:{consumer_id.get('sessionId')}:{consumer_id.get('value')}"


class AdvisoryWatch:
    """A live picture of the consumers one broker has for one destination, kept from its consumer advisories."""

    def __init__(self, broker: str, destination: str, port: int, names: Mapping[str, str]) -> None:
        self.broker = broker
        self.destination = destination
        self.names = names
        self.consumers: dict[str, ObservedConsumer] = {}
        self.client = StompClient("127.0.0.1", port)
        self.client.connect()
        self.client.subscribe(to_advisory_topic(destination), "advisories")

    def poll(self) -> bool:
        """Fold in every advisory that has arrived; return whether the picture changed."""
        changed = False
        while (frame := self.client.receive(0.0)) is not None:
            if frame.command != "MESSAGE":
                continue
            body = json.loads(frame.text)
            if "ConsumerInfo" in body:
                info = body["ConsumerInfo"]
                key = compute_consumer_key(info.get("consumerId", {}))
                self.consumers[key] = ObservedConsumer(
                    self.broker, self.destination, key, parse_broker_path(info, self.names),
                    int(info.get("priority", 0)), bool(info.get("browser", False)))
                changed = True
            elif "RemoveInfo" in body:
                key = compute_consumer_key(body["RemoveInfo"].get("objectId", {}))
                changed = self.consumers.pop(key, None) is not None or changed
        return changed

    def close(self) -> None:
        """Close the STOMP connection."""
        self.client.close()


class RealConsumer:
    """A STOMP client consumer (auto-acknowledge) on one broker; each message body is kept in arrival order."""

    def __init__(self, broker: str, destination: str, port: int) -> None:
        self.broker = broker
        self.destination = destination
        self.received: list[str] = []
        self.client = StompClient("127.0.0.1", port)
        self.client.connect()
        self.client.subscribe(to_stomp_destination(destination), "consumer")

    def __enter__(self) -> RealConsumer:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def receive(self, timeout: float) -> str | None:
        """The next message body, waiting at most ``timeout`` seconds; None if none came."""
        deadline = time.monotonic() + timeout
        while True:
            frame = self.client.receive(max(0.0, deadline - time.monotonic()))
            if frame is None:
                return None
            if frame.command == "MESSAGE":
                self.received.append(frame.text)
                return frame.text

    def collect(self, expected: Collection[str], timeout: float = 5.0, grace: float = 2.0) -> list[str]:
        """Every body that arrives until all of ``expected`` have and then ``grace`` more seconds, or ``timeout``.

        Returns the bodies received during this call, in order. The grace
        period is the bounded wait that shows a message is *not* delivered.
        """
        start = len(self.received)
        deadline = time.monotonic() + timeout
        missing = set(expected)
        while missing and time.monotonic() < deadline:
            body = self.receive(deadline - time.monotonic())
            if body is not None:
                missing.discard(body)
        quiet_until = min(deadline, time.monotonic() + grace) if not missing else time.monotonic()
        while time.monotonic() < quiet_until:
            self.receive(quiet_until - time.monotonic())
        return self.received[start:]

    def close(self) -> None:
        """Disconnect; the broker removes the consumer and its demand goes with it."""
        self.client.disconnect()


class RealNetwork:
    """Real brokers for a topology, in ``folder``; a context manager that always stops what it started.

    ``base_port`` is the first broker's OpenWire port (see :mod:`.config`);
    ``stagger`` is the pause between launching two brokers (0 launches all
    at once); ``start_timeout`` bounds the wait for each broker's "started"
    line and ``bridge_timeout`` the wait for every bridge.
    """

    def __init__(self, topology: Topology | TopologyState, folder: Path, base_port: int | None = None,
                 stagger: float = 0.0, start_timeout: float = 90.0, bridge_timeout: float = 60.0) -> None:
        self.topology = topology if isinstance(topology, Topology) else topology_from_state(topology)
        check_topology(self.topology)
        self.folder = folder
        self.ports: dict[str, BrokerPorts] = compute_ports(self.topology.brokers, base_port)
        self.stagger = stagger
        self.start_timeout = start_timeout
        self.bridge_timeout = bridge_timeout
        self.folders: dict[str, Path] = {}
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self.broker_ids: dict[str, str] = {}
        self.timings: dict[str, float] = {}
        self._names: dict[str, str] = {}
        self._watches: dict[tuple[str, str], AdvisoryWatch] = {}
        self._consumers: list[RealConsumer] = []

    def __enter__(self) -> RealNetwork:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()

    @property
    def brokers(self) -> tuple[str, ...]:
        """The broker names, in port order."""
        return self.topology.brokers

    @property
    def pids(self) -> dict[str, int]:
        """The PID of every broker process this network started."""
        return {broker: process.pid for broker, process in self.processes.items()}

    def get_bridges(self) -> list[tuple[str, str]]:
        """Every directed bridge (local, remote) the connectors make: source=>target, and target=>source if duplex."""
        bridges = []
        for connector in self.topology.connectors:
            bridges.append((connector.source, connector.target))
            if connector.duplex:
                bridges.append((connector.target, connector.source))
        return sorted(bridges)

    def start(self) -> None:
        """Write the files, launch every broker, and wait until each has started and every bridge is up."""
        missing = find_missing_requirements()
        if missing:
            raise BrokerFailed("cannot run real brokers: " + "; ".join(missing))
        for broker, ports in self.ports.items():
            for port in (ports.openwire, ports.stomp):
                if not is_port_free(port):
                    raise BrokerFailed(f"port {port} for broker {broker!r} on 127.0.0.1 is in use "
                                       "(choose another base port, e.g. with BROKERSPEC_AMQ_BASE_PORT)")
        for broker in self.brokers:
            if (self.folder / broker / "data" / "kahadb").exists():
                raise BrokerFailed(f"{self.folder / broker} holds the store of an earlier run; use an empty folder")
        began = time.monotonic()
        self.folders = write_broker_files(self.topology, self.folder, self.ports)
        atexit.register(self.stop)
        for i, broker in enumerate(self.brokers):
            if i and self.stagger:
                time.sleep(self.stagger)
            self._launch(broker)
        for broker in self.brokers:
            self._wait_until_started(broker, began)
        self.timings["started"] = time.monotonic() - began
        self._names.update({broker_id: name for name, broker_id in self.broker_ids.items()})
        self._wait_for_bridges()
        self.timings["bridged"] = time.monotonic() - began

    def _launch(self, broker: str) -> None:
        folder = self.folders[broker]
        for jar in EXTRA_JARS:
            link = folder / "lib" / jar
            if not link.exists():
                link.symlink_to(get_java_libraries() / jar)
        java = get_java()
        if java is None:
            raise BrokerFailed("no java executable")
        home = get_activemq_home()
        command = [
            java, *JAVA_OPTIONS,
            f"-Dlog4j.configuration=file:{folder / 'conf' / 'log4j.properties'}",
            f"-Dactivemq.classpath={folder / 'conf'}", f"-Dactivemq.home={home}", f"-Dactivemq.base={folder}",
            f"-Dactivemq.conf={folder / 'conf'}", f"-Dactivemq.data={folder / 'data'}",
            "-jar", str(home / "bin" / "activemq.jar"), "start", f"xbean:file:{folder / 'conf' / 'activemq.xml'}",
        ]
        with open(folder / "data" / "stdout.log", "ab") as output:
            process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT,
                                       cwd=folder)
        self.processes[broker] = process
        (folder / "pid").write_text(f"{process.pid}\n")

    def read_log(self, broker: str) -> str:
        """The broker's ``activemq.log`` so far (empty before log4j has opened it)."""
        path = self.folders[broker] / "data" / "activemq.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def get_log_tail(self, broker: str, lines: int = 25) -> str:
        """The last lines of the broker's log and of its console output, for error messages."""
        parts = []
        for name in ("activemq.log", "stdout.log"):
            path = self.folders[broker] / "data" / name
            if path.exists():
                tail = path.read_text(errors="replace").splitlines()[-lines:]
                parts.append(f"--- {path} (last {len(tail)} lines)\n" + "\n".join(tail))
        return "\n".join(parts) or f"(broker {broker!r} wrote no log)"

    def _wait_until_started(self, broker: str, began: float) -> None:
        deadline = time.monotonic() + self.start_timeout
        process = self.processes[broker]
        while True:
            match = STARTED.search(self.read_log(broker))
            if match and match["name"] == broker:
                self.broker_ids[broker] = match["id"]
                self.timings[f"{broker} started"] = time.monotonic() - began
                return
            if process.poll() is not None:
                raise BrokerFailed(f"broker {broker!r} (PID {process.pid}) exited with status {process.returncode} "
                                   f"before it started\n{self.get_log_tail(broker)}")
            if time.monotonic() > deadline:
                raise BrokerFailed(f"broker {broker!r} (PID {process.pid}) did not log 'started' within "
                                   f"{self.start_timeout} s\n{self.get_log_tail(broker)}")
            time.sleep(0.1)

    def _wait_for_bridges(self) -> None:
        waiting = set(self.get_bridges())
        deadline = time.monotonic() + self.bridge_timeout
        while waiting:
            for local in sorted({local for local, _ in waiting}):
                for match in ESTABLISHED.finditer(self.read_log(local)):
                    waiting.discard((match["local"], match["remote"]))
            if not waiting:
                return
            if time.monotonic() > deadline:
                local, remote = sorted(waiting)[0]
                raise BrokerFailed(f"bridge {local}=>{remote} was not established within {self.bridge_timeout} s "
                                   f"(still waiting for {sorted(waiting)})\n{self.get_log_tail(local)}")
            time.sleep(0.1)

    def stop(self, timeout: float = 10.0) -> None:
        """Close every STOMP connection, then stop each broker by its PID: SIGTERM, wait up to ``timeout``, SIGKILL."""
        atexit.unregister(self.stop)
        for consumer in self._consumers:
            try:
                consumer.client.close()
            except OSError:
                pass
        self._consumers.clear()
        for watch in self._watches.values():
            watch.close()
        self._watches.clear()
        running = [p for p in self.processes.values() if p.poll() is None]
        for process in running:
            process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for process in running:
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def is_running(self, broker: str) -> bool:
        """Whether the broker's process is still alive."""
        process = self.processes.get(broker)
        return process is not None and process.poll() is None

    # Observation

    def get_watches(self, destination: str) -> list[AdvisoryWatch]:
        """One advisory watch per broker for ``destination``, opened on first use and kept until :meth:`stop`."""
        watches = []
        for broker in self.brokers:
            key = (broker, destination)
            if key not in self._watches:
                self._watches[key] = AdvisoryWatch(broker, destination, self.ports[broker].stomp, self._names)
            watches.append(self._watches[key])
        return watches

    def observe(self, destination: str) -> list[ObservedConsumer]:
        """Every consumer (client, network and browser) each broker has advised for ``destination`` so far."""
        observed: list[ObservedConsumer] = []
        for watch in self.get_watches(destination):
            watch.poll()
            observed.extend(watch.consumers.values())
        return sorted(observed, key=lambda c: (c.broker, c.path, c.key))

    def get_demand(self, destination: str) -> Demand:
        """The network demand subscriptions seen now: broker -> sorted brokerPaths (brokers with none left out)."""
        demand: Demand = {}
        for consumer in self.observe(destination):
            if consumer.network and not consumer.browser:
                demand.setdefault(consumer.broker, []).append(consumer.path)
        return {broker: sorted(paths) for broker, paths in sorted(demand.items())}

    def observe_demand(self, destination: str, settle: float = 2.0, timeout: float = 5.0) -> Demand:
        """The demand once it has not changed for ``settle`` seconds (or when ``timeout`` runs out)."""
        return self._poll_demand(destination, None, settle, timeout)

    def wait_for_demand(self, destination: str, expected: Mapping[str, Collection[tuple[str, ...]]],
                        settle: float = 1.0, timeout: float = 5.0) -> Demand:
        """The demand once it equals ``expected`` and has stayed so for ``settle`` seconds, or at ``timeout``.

        The caller compares the result with ``expected``: on a timeout it is
        the last picture seen, so a mismatch shows what the brokers did.
        """
        wanted = {broker: sorted(paths) for broker, paths in expected.items() if paths}
        return self._poll_demand(destination, wanted, settle, timeout)

    def _poll_demand(self, destination: str, wanted: Demand | None, settle: float, timeout: float) -> Demand:
        deadline = time.monotonic() + timeout
        last = self.get_demand(destination)
        since = time.monotonic()
        while time.monotonic() < deadline:
            time.sleep(POLL_INTERVAL)
            now = self.get_demand(destination)
            if now != last:
                last, since = now, time.monotonic()
            elif (wanted is None or now == wanted) and time.monotonic() - since >= settle:
                break
        return last

    # Clients

    def consumer(self, broker: str, destination: str) -> RealConsumer:
        """Open a client consumer on ``broker``; it creates demand like any consumer. Closed by :meth:`stop` too."""
        self._check_broker(broker)
        consumer = RealConsumer(broker, destination, self.ports[broker].stomp)
        self._consumers.append(consumer)
        return consumer

    def send(self, broker: str, destination: str, body: str) -> None:
        """Send one persistent message at ``broker`` and wait for the broker's receipt (it is stored)."""
        self._check_broker(broker)
        with StompClient("127.0.0.1", self.ports[broker].stomp) as client:
            client.send(to_stomp_destination(destination), body, {"persistent": "true"})
            client.disconnect()

    def browse(self, broker: str, queue: str, timeout: float = 5.0) -> list[str]:
        """The bodies waiting in ``queue`` on ``broker``, read with a queue browser (browsers create no demand)."""
        self._check_broker(broker)
        bodies = []
        with StompClient("127.0.0.1", self.ports[broker].stomp) as client:
            client.subscribe(to_stomp_destination(queue), "browser", {"browser": "true"})
            deadline = time.monotonic() + timeout
            while True:
                frame = client.receive(max(0.0, deadline - time.monotonic()))
                if frame is None:
                    raise StompError(f"browsing {queue} on {broker!r} did not end within {timeout} s")
                if frame.command != "MESSAGE":
                    continue
                if frame.headers.get("browser") == "end":
                    break
                bodies.append(frame.text)
            client.disconnect()
        return bodies

    def _check_broker(self, broker: str) -> None:
        if broker not in self.ports:
            raise BrokerFailed(f"unknown broker {broker!r}; this network has {', '.join(self.brokers)}")
