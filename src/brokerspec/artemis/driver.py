"""The client side of the Artemis adapter: one Java process that makes client calls on brokerspec's behalf.

Introduction
------------
:class:`Driver` starts ``BrokerspecDriver`` (shipped as Java source and
compiled against the release's own jars by
:func:`~.releases.ensure_java_build`) and talks to it one JSON line at a
time: :meth:`Driver.call` sends a request and returns the reply's fields, or
raises :class:`CallFailed` when the call threw in the client or the broker.
A CallFailed carries the exception chain as the driver reported it: each
link's Java class, Artemis exception type (``QUEUE_DOES_NOT_EXIST``,
``DUPLICATE_ID_REJECTED`` ...), XA error code (an ``XAException``'s
``errorCode``: ``XAER_NOTA`` is -4, ``XAER_PROTO`` -6, ``XAER_RMFAIL`` -7) and
message, so that the domain adapters can tell one refusal from another by
type and code rather than by wording.

A driver that dies or stops answering within the timeout is a
:class:`DriverLost`; it is killed with its process group and the next
:meth:`Driver.call` starts a new one (all client state is gone then, which
the caller must know: :attr:`Driver.starts` counts the starts).
"""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from brokerspec.spec import BrokerspecError

from .. import jsonin
from ..conform.sut import kill_group, pump_lines
from .releases import ensure_distribution, ensure_java_build, find_tool

AMQ_CODE = re.compile(r"\bAMQ(\d{6})\b")


@dataclass(frozen=True)
class Cause:
    """One link of a failed call's exception chain."""

    java_class: str
    message: str
    type: str | None
    """Artemis's ActiveMQExceptionType name, when the link is an ActiveMQException."""
    xa_code: int | None = None
    """The XA error code, when the link is a ``javax.transaction.xa.XAException``."""

    @property
    def codes(self) -> set[str]:
        """Every AMQ message code in the message (``AMQ229019`` ...)."""
        return {f"AMQ{number}" for number in AMQ_CODE.findall(self.message)}


class CallFailed(BrokerspecError):
    """A client call threw; ``causes`` is its exception chain, outermost first."""

    def __init__(self, command: str, causes: tuple[Cause, ...]) -> None:
        described = "; caused by ".join(f"{c.java_class}({c.type or ''}): {c.message}" for c in causes)
        super().__init__(f"{command}: {described}")
        self.command = command
        self.causes = causes

    def has_type(self, *types: str) -> bool:
        """Whether any link is an ActiveMQException of one of ``types``."""
        return any(c.type in types for c in self.causes)

    def has_code(self, *codes: str) -> bool:
        """Whether any link's message carries one of the AMQ ``codes``."""
        return any(c.codes & set(codes) for c in self.causes)

    def has_xa_code(self, *codes: int) -> bool:
        """Whether any link is an XAException with one of the error ``codes``."""
        return any(c.xa_code in codes for c in self.causes)

    def has_class(self, *suffixes: str) -> bool:
        """Whether any link's class name ends with one of ``suffixes``."""
        return any(c.java_class.endswith(suffixes) for c in self.causes)

    def mentions(self, text: str) -> bool:
        """Whether any link's message contains ``text``."""
        return any(text in c.message for c in self.causes)


class DriverLost(BrokerspecError):
    """The driver process died or did not answer in time."""


class Driver:
    """A running ``BrokerspecDriver`` for one Artemis release."""

    def __init__(self, version: str, workdir: Path, timeout: float = 20.0) -> None:
        self.version = version
        self.workdir = workdir
        self.timeout = timeout
        self.starts = 0
        self._process: subprocess.Popen[bytes] | None = None
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._stderr: IO[str] | None = None

    def _start(self) -> None:
        classes = ensure_java_build(self.version)
        home = ensure_distribution(self.version)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._stderr = (self.workdir / "driver.log").open("a", encoding="utf-8")
        process = subprocess.Popen(
            [find_tool("java"), "-Xmx128M", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
             "-cp", f"{classes}{os.pathsep}{home / 'lib' / '*'}", "BrokerspecDriver"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, start_new_session=True,
            cwd=self.workdir)
        self._process = process
        self.starts += 1
        self._lines = queue.Queue()
        assert process.stdout is not None
        # The same reader as a SUT's: the only thread that reads the output, and the one that closes it.
        threading.Thread(target=pump_lines, args=(process.stdout, self._lines),
                         name=f"artemis-driver-{self.starts}", daemon=True).start()

    def call(self, command: str, **fields: Any) -> dict[str, Any]:
        """Run one client call; its reply's fields, or CallFailed / DriverLost."""
        if self._process is None or self._process.poll() is not None:
            self._start()
        process = self._process
        assert process is not None and process.stdin is not None
        try:
            process.stdin.write((json.dumps({"cmd": command, **fields}) + "\n").encode("utf-8"))
            process.stdin.flush()
        except OSError:
            self.close()
            raise DriverLost(f"the Artemis driver's input closed before {command}") from None
        try:
            line = self._lines.get(timeout=self.timeout)
        except queue.Empty:
            self.close()
            raise DriverLost(f"the Artemis driver did not answer {command} within {self.timeout:g} s") from None
        if line is None:
            self.close()
            raise DriverLost(f"the Artemis driver exited during {command}; see {self.workdir / 'driver.log'}")
        try:
            reply = jsonin.loads(line)
        except jsonin.JsonInputError as error:
            self.close()
            raise DriverLost(f"the Artemis driver answered {command} with an unreadable line: {error}") from None
        if not isinstance(reply, dict):
            self.close()
            raise DriverLost(f"the Artemis driver answered {command} with {type(reply).__name__}, not an object")
        if not reply.get("ok"):
            causes = tuple(Cause(str(item.get("class")), str(item.get("message")), item.get("type"),
                                 item.get("xa_code") if type(item.get("xa_code")) is int else None)
                           for item in reply.get("error", ()))
            raise CallFailed(command, causes)
        return reply

    def close(self) -> None:
        """Stop the driver (a polite ``bye``, then its process group is killed)."""
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            try:
                assert process.stdin is not None
                process.stdin.write(b'{"cmd": "bye"}\n')
                process.stdin.flush()
                process.wait(timeout=3)
            except (OSError, subprocess.TimeoutExpired):
                pass
        kill_group(process)  # whatever the driver started goes with it
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
