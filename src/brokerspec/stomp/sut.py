"""brokerspec's own broker as a system under test over the wire: ``brokerspec conform --sut brokerspec-broker``.

Introduction
------------
:class:`BrokerProcessSut` starts ``brokerspec broker`` as a child process on
a free port of 127.0.0.1, with a store in a scratch folder, and drives it
through its STOMP port only (:mod:`.addressing`, :mod:`.duplicates`): every
outcome is read back over the wire. Each ``reset`` starts a new broker
process under the case's profile (the broker follows any profile, so the
SUT offers all of them), on an empty store: no case can see another's
names, caches or settings. A ``restart`` or ``crash`` of the duplicates
domain stops the process (SIGTERM, its connections closed and their
transactions rolled back) or kills it (SIGKILL to its process group) and
starts a new one on the same store.

It speaks SUT protocol version 2 (queries, no XA: STOMP has none). What
STOMP cannot express is a :class:`~brokerspec.artemis.outcomes.NotExpressible`
reply, reported apart from disagreements, as for the Artemis adapter.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from brokerspec.conform.protocol import QUERY_VERSION, FailureKind, Hello, SutFailure
from brokerspec.spec import PROFILES, Outcome, Profile

from .addressing import StompAddressing
from .client import Refusal, WireClient, WireLost
from .duplicates import StompDuplicates

DOMAINS = ("addressing", "duplicates")
START_TIMEOUT = 30.0


class BrokerProcess:
    """One ``brokerspec broker`` child process and its store folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.process: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.arguments: list[str] = []

    def start(self, profile: Profile, extra: tuple[tuple[str, str], ...] = ()) -> None:
        """Start on the store in ``folder`` under ``profile`` with ``extra`` options set; wait until it listens."""
        settings = [item for dotted, value in (*profile.overrides, *extra) for item in ("--set", f"{dotted}={value}")]
        command = [sys.executable, "-m", "brokerspec.broker", "--port", "0", "--data", str(self.folder),
                   "--profile", profile.name, *settings]
        log = (self.folder.parent / "broker.log").open("ab")
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, start_new_session=True)
        log.close()
        assert self.process.stdout is not None
        line = b""
        deadline = time.monotonic() + START_TIMEOUT
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.process.stdout], [], [], left)[0]:
                self.kill()
                raise SutFailure(FailureKind.TIMEOUT, "reset", f"the broker did not listen within {START_TIMEOUT:g} s")
            chunk = os.read(self.process.stdout.fileno(), 4096)
            if not chunk:
                self.kill()
                raise SutFailure(FailureKind.CRASHED, "reset", "the broker exited before it listened: "
                                 + self.log_tail())
            line += chunk
        text = line.decode("utf-8", "replace")
        try:
            self.port = int(text.split("127.0.0.1:", 1)[1].split(",", 1)[0])
        except (IndexError, ValueError):
            self.kill()
            raise SutFailure(FailureKind.GARBAGE, "reset", f"the broker announced {text.strip()!r}") from None

    def log_tail(self, lines: int = 8) -> str:
        path = self.folder.parent / "broker.log"
        if not path.exists():
            return "(no log)"
        return " | ".join(path.read_text("utf-8", "replace").splitlines()[-lines:])

    def stop(self) -> None:
        """SIGTERM to the process group, a bounded wait, SIGKILL as a last resort."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)

    def kill(self) -> None:
        """SIGKILL to the process group at once: a crash."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)


class BrokerProcessSut:
    """``brokerspec broker`` driven over STOMP, a new process for each case."""

    label = "brokerspec-broker"

    def __init__(self, timeout: float = 10.0, workdir: Path | None = None, keep: bool = False) -> None:
        self.timeout = timeout
        self.keep = keep
        self.workdir = workdir or Path(tempfile.mkdtemp(prefix="brokerspec-broker-sut-"))
        self.broker = BrokerProcess(self.workdir / "data")
        self.adapter: Any = None
        self.profile: Profile | None = None
        self.extra: tuple[tuple[str, str], ...] = ()

    def hello(self, profile: Profile, domains: tuple[str, ...]) -> Hello:
        return Hello("brokerspec broker over STOMP", DOMAINS, tuple(PROFILES), version=QUERY_VERSION)

    def connect(self) -> WireClient:
        return WireClient(self.broker.port, self.timeout)

    def reset(self, domain: str, profile: Profile) -> None:
        """A new broker process under ``profile`` on an empty store."""
        self._close_adapter()
        self.broker.stop()
        shutil.rmtree(self.broker.folder, ignore_errors=True)
        self.broker.folder.mkdir(parents=True)
        self.profile, self.extra = profile, ()
        self.broker.start(profile)
        try:
            if domain == "addressing":
                self.adapter = StompAddressing(self.connect)
            else:
                self.adapter = StompDuplicates(self.connect, self.restart, profile.duplicates.persist_id_cache)
        except WireLost as lost:
            raise SutFailure(FailureKind.CRASHED, "reset", f"{lost}; broker log: {self.broker.log_tail()}") from None
        self.adapter.reset(profile)

    def restart(self, crash: bool, id_cache_size: int | None) -> None:
        """Stop (or kill) the broker and start it again on its store, with a new ID cache size if given."""
        if crash:
            self.broker.kill()
        else:
            self.broker.stop()
        if id_cache_size is not None:
            self.extra = (("duplicates.id_cache_size", str(id_cache_size)),)
        assert self.profile is not None
        self.broker.start(self.profile, self.extra)

    def execute(self, command: Any) -> Outcome:
        if self.adapter is None:
            raise SutFailure(FailureKind.CRASHED, "op", "no reset before the first operation")
        try:
            outcome: Outcome = self.adapter.execute(command)
        except (WireLost, Refusal) as problem:
            died = self.broker.process is None or self.broker.process.poll() is not None
            kind = FailureKind.CRASHED if died else FailureKind.ERROR_REPLY
            raise SutFailure(kind, f"op ({command.op})", f"{problem}; broker log: {self.broker.log_tail()}") from None
        return outcome

    def _close_adapter(self) -> None:
        if self.adapter is not None:
            try:
                self.adapter.close()
            except (WireLost, Refusal):
                pass
            self.adapter = None

    def close(self) -> None:
        self._close_adapter()
        self.broker.stop()
        if not self.keep:
            shutil.rmtree(self.workdir, ignore_errors=True)
