"""One real Artemis broker on 127.0.0.1: created, configured, started, stopped and killed by its own PID.

Introduction
------------
:class:`ArtemisBroker` owns one instance folder (made once by ``artemis
create``) and one JVM at a time. Theory of operation:

* **Create.** ``artemis create`` writes the instance's scripts and
  ``etc/``; brokerspec then writes its own ``etc/broker.xml``
  (:mod:`.config`), puts the observer plugin's jar into the instance's
  ``lib/`` (which Artemis adds to its class path), and sets a small heap
  with the serial collector in ``etc/artemis.profile``.
* **Start.** ``bin/artemis run`` in a session of its own, with its output
  in ``log/console.log``. Ready means the log says AMQ221007 ("Server is
  now live") and the acceptor takes a TCP connection; a JVM that exits
  first, or a timeout, is a :class:`BrokerFailed` quoting the log's tail.
* **Stop** is a clean shutdown: SIGTERM to the broker's process group (its
  shutdown hook stops the server), a bounded wait, SIGKILL as a last
  resort. **Kill** is the crash: SIGKILL at once. Nothing is ever stopped
  by name, and an interpreter that exits stops what it started.
* **Reconfigure.** Address settings are re-read from ``broker.xml`` while
  the broker runs (the file is polled every 100 ms); the caller waits for
  the change to be visible. Everything else (acceptor prefixes, the
  duplicate-ID cache, cluster connections) takes a restart, which keeps the
  journal: addresses, queues, messages and stored IDs survive it.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import weakref
from pathlib import Path

from brokerspec.spec import BrokerspecError

from .config import BrokerConfig, render_broker_xml
from .releases import ArtemisUnavailable, ensure_distribution, ensure_java_build, find_tool, get_release

LIVE = "AMQ221007"
"""The log line's code once the server is live (both 2.11 and 2.40)."""

HEAP = "256M"


class BrokerFailed(BrokerspecError):
    """A broker did not start or stop in time; the message quotes its log."""


def find_free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def is_listening(port: int) -> bool:
    """Whether something accepts TCP connections on 127.0.0.1:``port``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as client:
        client.settimeout(0.5)
        return client.connect_ex(("127.0.0.1", port)) == 0


_RUNNING: weakref.WeakSet[ArtemisBroker] = weakref.WeakSet()


@atexit.register
def _stop_everything() -> None:  # pragma: no cover - runs at interpreter exit
    for broker in list(_RUNNING):
        broker.kill()


class ArtemisBroker:
    """One Artemis node of release ``version`` in ``folder`` (an empty or brokerspec-made folder)."""

    def __init__(self, version: str, folder: Path, config: BrokerConfig) -> None:
        self.release = get_release(version)
        self.version = version
        self.folder = folder
        self.config = config
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self.start_seconds: list[float] = []
        self._log_offset = 0

    @property
    def url(self) -> str:
        """The core client URL."""
        return f"tcp://127.0.0.1:{self.config.port}"

    @property
    def log_file(self) -> Path:
        """The broker's console log (appended across restarts)."""
        return self.folder / "log" / "console.log"

    # --- files -----------------------------------------------------------------------------------

    def create(self) -> None:
        """Make the instance folder with ``artemis create`` and brokerspec's files (once)."""
        home = ensure_distribution(self.version)
        classes = ensure_java_build(self.version)
        if not (self.folder / "bin" / "artemis").is_file():
            self.folder.parent.mkdir(parents=True, exist_ok=True)
            done = subprocess.run(
                [str(home / "bin" / "artemis"), "create", str(self.folder), "--user", "brokerspec", "--password",
                 "brokerspec", "--allow-anonymous", "--silent", "--no-web", "--no-amqp-acceptor",
                 "--no-mqtt-acceptor", "--no-hornetq-acceptor", "--no-stomp-acceptor", "--host", "127.0.0.1",
                 "--nio", "--no-autotune", "--force"],
                capture_output=True, text=True, timeout=300, check=False,
                env={**os.environ, "JAVA_ARGS": ""})
            if done.returncode != 0 or not (self.folder / "etc" / "artemis.profile").is_file():
                raise ArtemisUnavailable(f"artemis create failed for {self.version}: "
                                         f"{(done.stdout + done.stderr).strip()[-600:]}")
            self._write_profile()
        (self.folder / "lib").mkdir(exist_ok=True)
        shutil.copyfile(classes / "brokerspec-probe.jar", self.folder / "lib" / "brokerspec-probe.jar")
        (self.folder / "log").mkdir(exist_ok=True)
        self.write_config(self.config)

    def _write_profile(self) -> None:
        """A small heap, the serial collector, fast start-up, and the release's own Java options."""
        profile = self.folder / "etc" / "artemis.profile"
        text = profile.read_text(encoding="utf-8")
        options = " ".join(("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", *self.release.java_options))
        text = re.sub(r"-Xms\S+", "-Xms32M", text)
        text = re.sub(r"-Xmx\S+", f"-Xmx{HEAP} {options}", text)
        text = text.replace("-XX:+UseG1GC", "").replace("-XX:+UseStringDeduplication", "")
        profile.write_text(text, encoding="utf-8")

    def write_config(self, config: BrokerConfig) -> None:
        """Write ``broker.xml`` for ``config`` (atomically: the broker re-reads it while running)."""
        self.config = config
        target = self.folder / "etc" / "broker.xml"
        partial = target.with_suffix(".xml.partial")
        partial.write_text(render_broker_xml(config), encoding="utf-8")
        partial.replace(target)

    def wipe_data(self) -> None:
        """Delete the journal and everything else the broker stored (only while it is stopped)."""
        if self.running:
            raise BrokerFailed("the data of a running broker cannot be wiped")
        shutil.rmtree(self.folder / "data", ignore_errors=True)

    # --- the process -----------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """Whether the JVM is alive."""
        return self.process is not None and self.process.poll() is None

    @property
    def pid(self) -> int | None:
        """The JVM's process ID while it runs."""
        return self.process.pid if self.running and self.process is not None else None

    def start(self, timeout: float = 90.0) -> float:
        """Start the JVM and wait until the server is live; returns the seconds it took."""
        if self.running:
            return 0.0
        find_tool("java")
        started = time.monotonic()
        self._log_offset = self.log_file.stat().st_size if self.log_file.exists() else 0
        log = self.log_file.open("ab")
        try:
            self.process = subprocess.Popen([str(self.folder / "bin" / "artemis"), "run"], stdin=subprocess.DEVNULL,
                                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                            cwd=self.folder)
        finally:
            log.close()
        _RUNNING.add(self)
        self.starts += 1
        deadline = started + timeout
        while time.monotonic() < deadline:
            if not self.running:
                raise BrokerFailed(f"Artemis {self.version} ({self.config.name}) exited while starting: "
                                   f"{self.log_tail()}")
            if LIVE in self.new_log() and is_listening(self.config.port):
                seconds = time.monotonic() - started
                self.start_seconds.append(seconds)
                return seconds
            time.sleep(0.05)
        self.kill()
        raise BrokerFailed(f"Artemis {self.version} ({self.config.name}) was not live within {timeout:g} s: "
                           f"{self.log_tail()}")

    def stop(self, timeout: float = 30.0) -> None:
        """A clean shutdown (SIGTERM to the process group), then SIGKILL if it takes longer than ``timeout``."""
        process = self.process
        if process is None:
            return
        if process.poll() is None:
            self._signal(signal.SIGTERM)
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
                process.wait()
        self._reap()

    def kill(self) -> None:
        """The crash: SIGKILL to the process group, at once."""
        process = self.process
        if process is None:
            return
        if process.poll() is None:
            self._signal(signal.SIGKILL)
            process.wait()
        self._reap()

    def restart(self, crash: bool = False) -> float:
        """Stop (cleanly, or with SIGKILL when ``crash``) and start again from the journal."""
        if crash:
            self.kill()
        else:
            self.stop()
        return self.start()

    def _signal(self, sig: signal.Signals) -> None:
        assert self.process is not None
        try:
            os.killpg(self.process.pid, sig)
        except ProcessLookupError:
            pass

    def _reap(self) -> None:
        self.process = None
        _RUNNING.discard(self)

    # --- observation -----------------------------------------------------------------------------

    def new_log(self) -> str:
        """What the broker logged since its last start."""
        if not self.log_file.exists():
            return ""
        with self.log_file.open("rb") as log:
            log.seek(self._log_offset)
            return log.read().decode("utf-8", errors="replace")

    def unexpected_exception(self) -> str:
        """The exception the broker last sent a client as an internal error (AMQ222225), from its log; "" if none.

        A core client is told only INTERNAL_ERROR when the broker throws
        something other than an ActiveMQException (an AMQ229207 routing-type
        refusal from a session's createQueue, for one); the broker logs the
        exception on the line after AMQ222225.
        """
        lines = self.new_log().splitlines()
        for index in range(len(lines) - 1, -1, -1):
            if "AMQ222225" in lines[index]:
                following = lines[index + 1].strip() if index + 1 < len(lines) else ""
                return lines[index].strip() + " " + ("" if following.startswith("at ") else following)
        return ""

    def log_tail(self, lines: int = 12) -> str:
        """The last lines of the log since the last start, without Java stack frames, joined by `` | ``."""
        kept = [line for line in self.new_log().splitlines() if line.strip() and not line.lstrip().startswith("at ")]
        return " | ".join(kept[-lines:]) or "(the log is empty)"

    def resident_megabytes(self) -> float | None:
        """The JVM's resident memory (VmRSS) in MiB while it runs."""
        pid = self.pid
        if pid is None:
            return None
        try:
            status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
        except OSError:
            return None
        found = re.search(r"VmRSS:\s+(\d+) kB", status)
        return int(found.group(1)) / 1024 if found else None
