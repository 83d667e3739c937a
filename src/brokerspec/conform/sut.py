"""Adapters: a system under test, in process or in a child process, as a checker subject.

Introduction
------------
A :class:`Sut` answers four calls, mirroring the protocol's requests:
:meth:`~Sut.hello`, :meth:`~Sut.reset`, :meth:`~Sut.execute` and
:meth:`~Sut.close`. Two kinds exist:

* :class:`InProcessSut` runs brokerspec's own layers (``impl``,
  ``reference``, ``spec``, or a planted-bug broker ``planted:NAME``) with no
  JSON in between; it is how the suite is checked against itself.
* :class:`SubprocessSut` starts any program and speaks the line protocol to
  it. Every read has a deadline (``timeout`` seconds per request): a SUT that
  hangs is killed; one that exits, closes its output, writes garbage or the
  wrong protocol version gets a :class:`~.protocol.SutFailure` naming the
  request and what was wrong. After such a failure the process is gone and
  the next :meth:`~Sut.reset` starts a new one, so one bad case never stops
  a run. Its standard error goes to a file whose last lines the failure
  quotes.

  The program runs in a session and process group of its own, and stopping
  it kills the whole group, so children it started (and that may hold its
  output open) go too. Its pipes are read and written without threads
  (:class:`~.pipe.Channel`: ``select`` with the deadline, then ``os.read``),
  so stopping never waits on a read. Lines are read at most
  :data:`~.protocol.MAX_REPLY_BYTES` at a time, so a SUT cannot make
  brokerspec hold an unbounded line.

  A SUT whose hello announces ``pipelining`` gets the requests of a batch
  (:meth:`~SubprocessSut.execute_many`) written ahead of their replies, up
  to the number it announced; the replies are read in order, each checked
  against its request's ``seq``. Any other SUT gets one request at a time.

:class:`SutSubject` binds a SUT to one domain and profile and gives it the
``execute`` the lockstep driver calls; it has no ``snapshot``, so only
outcomes are compared (a SUT's state is its own business).
"""

from __future__ import annotations

import functools
import json
import os
import queue
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, NoReturn, Protocol

from brokerspec.spec import Outcome, Profile

from ..check.domains import DOMAINS, get_domain
from ..clitools import printable
from .pipe import Channel, InputClosed, LineTimeout
from .protocol import (
    LATEST_VERSION,
    MAX_REPLY_BYTES,
    PROTOCOL_VERSION,
    FailureKind,
    Hello,
    SutFailure,
    Unsupported,
    bye_request,
    describe_request,
    first_unasked,
    mark_batch_stop,
    hello_request,
    op_request,
    parse_reply,
    read_hello,
    read_outcome,
    reset_request,
)

DEFAULT_TIMEOUT = 10.0
"""Seconds a SUT may take over one request (the handshake gets three times as long, to start up)."""

MAX_IN_FLIGHT = 256
"""The most requests a :class:`SubprocessSut` writes ahead of their replies, whatever the SUT announces."""


class Sut(Protocol):
    """A system under test, whatever it runs in."""

    label: str

    def hello(self, profile: Profile, domains: tuple[str, ...]) -> Hello: ...

    def reset(self, domain: str, profile: Profile) -> None: ...

    def execute(self, command: Any) -> Outcome: ...

    def close(self) -> None: ...


class PipelinedSut(Sut, Protocol):
    """A SUT that also executes a batch of commands at once (an optional capability; see :func:`execute_many`)."""

    def execute_many(self, commands: Sequence[Any]) -> list[Outcome]: ...


def execute_many(sut: Sut, commands: Sequence[Any]) -> list[Outcome]:
    """``sut``'s outcomes for ``commands``, through its own ``execute_many`` when it has one, else one by one.

    Whatever stops the batch is raised as :meth:`Sut.execute` raises it (the same
    :class:`~.protocol.SutFailure` kinds and messages, or the exception an in-process subject
    raised), marked with where the batch stopped: :func:`~.protocol.batch_stop` gives the failing
    command's index and the outcomes of the commands before it.
    """
    many = getattr(sut, "execute_many", None)
    if many is not None:
        outcomes: list[Outcome] = many(commands)
        return outcomes
    return execute_each(sut.execute, commands)


def execute_each(execute: Callable[[Any], Outcome], commands: Sequence[Any]) -> list[Outcome]:
    """``execute`` applied to each command in turn, the batch's failure marked as :func:`execute_many` says."""
    outcomes: list[Outcome] = []
    for index, command in enumerate(commands):
        try:
            outcomes.append(execute(command))
        except Exception as error:
            mark_batch_stop(error, index, outcomes)
            raise
    return outcomes


# --- in process ------------------------------------------------------------------------------


class SpecSubject:
    """The spec itself as a subject: each command goes through the domain's pure ``apply``."""

    def __init__(self, domain: str, profile: Profile) -> None:
        self._domain = get_domain(domain)
        self.state = self._domain.initial_state(profile)

    def execute(self, command: Any) -> Outcome:
        """Apply ``command`` to the state; its outcome."""
        self.state, outcome = self._domain.apply(self.state, command)
        return outcome

    def snapshot(self) -> Any:
        """The spec state."""
        return self.state


def in_process_layers(layer: str) -> dict[str, Callable[[Profile], Any]]:
    """The subject factory of ``layer`` for every domain that has it: impl, reference, spec or planted:NAME."""
    if layer == "spec":
        return {name: functools.partial(SpecSubject, name) for name in DOMAINS}
    if layer.startswith("planted:"):
        from ..planted.registry import all_planted

        wanted = layer.removeprefix("planted:")
        found: dict[str, Callable[[Profile], Any]] = {
            domain: bug.broker for domain, bug in all_planted() if bug.name == wanted}
        if not found:
            known = sorted({bug.name for _, bug in all_planted()})
            raise ValueError(f"no planted bug named {wanted!r}; known: {', '.join(known)}")
        return found
    layers = {name: domain.layers.get(layer) for name, domain in DOMAINS.items()}
    if all(factory is None for factory in layers.values()):
        raise ValueError(f"unknown layer {layer!r}; layers: impl, reference, spec, planted:NAME")
    return {name: factory for name, factory in layers.items() if factory is not None}


class InProcessSut:
    """brokerspec's own layer ``layer`` as a SUT, with no protocol in between."""

    def __init__(self, layer: str) -> None:
        self.label = layer
        self._factories = in_process_layers(layer)
        self._subject: Any = None

    def hello(self, profile: Profile, domains: tuple[str, ...]) -> Hello:
        """The domains this layer covers (all profiles)."""
        domains = tuple(d for d in DOMAINS if d in self._factories)
        return Hello(f"brokerspec {self.label}", domains, None, version=LATEST_VERSION)

    def reset(self, domain: str, profile: Profile) -> None:
        """A fresh subject of ``domain``."""
        self.close()
        self._subject = self._factories[domain](profile)

    def execute(self, command: Any) -> Outcome:
        """Execute on the current subject."""
        outcome: Outcome = self._subject.execute(command)
        return outcome

    def execute_many(self, commands: Sequence[Any]) -> list[Outcome]:
        """Execute each command in turn on the current subject (see :func:`execute_many`)."""
        return execute_each(self._subject.execute, commands)

    def close(self) -> None:
        """Close the current subject if it holds resources."""
        close = getattr(self._subject, "close", None)
        if close is not None:
            close()
        self._subject = None


# --- a child process ----------------------------------------------------------------------------


class SubprocessSut:
    """A program that speaks the SUT protocol on its standard input and output.

    When its hello announces ``pipelining`` (more than one request in flight), :meth:`execute_many`
    writes up to that many requests (at most ``max_in_flight``, :data:`MAX_IN_FLIGHT` by default)
    before reading their replies, in order; otherwise it waits for each reply before writing the
    next request.
    """

    def __init__(self, argv: Sequence[str], timeout: float = DEFAULT_TIMEOUT, cwd: Path | None = None,
                 env: Mapping[str, str] | None = None, max_in_flight: int = MAX_IN_FLIGHT) -> None:
        if not argv:
            raise ValueError("the SUT command is empty")
        if max_in_flight < 1:
            raise ValueError(f"max_in_flight must be at least 1, not {max_in_flight}")
        self.argv = list(argv)
        self.label = " ".join(argv)
        self.timeout = timeout
        self.cwd = cwd
        self.env = dict(os.environ if env is None else env)
        self.max_in_flight = max_in_flight
        self.starts = 0
        self.in_flight = 1
        """How many requests :meth:`execute_many` writes ahead: what the SUT announced, within ``max_in_flight``."""
        self.version = PROTOCOL_VERSION
        """The protocol version of the session, from the SUT's hello (queries need 2, ``prepare`` 3)."""
        self._process: subprocess.Popen[bytes] | None = None
        self._channel: Channel | None = None
        self._stderr: IO[bytes] | None = None
        self._hello_args: tuple[Profile, tuple[str, ...]] | None = None
        self._domain = "addressing"
        self._seq = 0

    @property
    def pid(self) -> int | None:
        """The running program's process id, which is also its process group's; None when not running."""
        return None if self._process is None else self._process.pid

    # the protocol

    def hello(self, profile: Profile, domains: tuple[str, ...]) -> Hello:
        """Start the program and shake hands."""
        self._hello_args = (profile, domains)
        self._start()
        hello = read_hello(self._ask(hello_request(profile, domains), self.timeout * 3))
        self.in_flight = min(hello.pipelining, self.max_in_flight)
        self.version = hello.version
        return hello

    def reset(self, domain: str, profile: Profile) -> None:
        """Ask for a fresh broker; a process lost to an earlier failure is started (and greeted) again.

        A SUT never greeted is greeted first, for this domain only.
        """
        if self._process is None:
            self.hello(*(self._hello_args or (profile, (domain,))))
        self._domain = domain
        self._seq = 0
        self._ask(reset_request(domain, profile, self.version), self.timeout)

    def execute(self, command: Any) -> Outcome:
        """Send one operation; its outcome."""
        outcomes, failure = self._run((command,), 1)
        if failure is not None:
            raise failure
        return outcomes[0]

    def execute_many(self, commands: Sequence[Any]) -> list[Outcome]:
        """Send a batch of operations, pipelined when the SUT announced it; their outcomes, in order.

        Each reply must come within the timeout of the one before it (the first: of the call). A
        failure is the one :meth:`execute` raises for the same request, marked with where the batch
        stopped (:func:`~.protocol.batch_stop`). After an ``error`` reply the replies to the requests
        already written are read and dropped, so the process can go on; any other failure stops it.
        """
        outcomes, failure = self._run(commands, self.in_flight)
        if failure is not None:
            mark_batch_stop(failure, len(outcomes), outcomes)
            raise failure
        return outcomes

    def close(self) -> None:
        """Say bye, give the program a moment to exit, then stop it."""
        process, channel = self._process, self._channel
        if process is None or channel is None:
            return
        grace = min(self.timeout, 2.0)
        try:
            channel.queue(_line(bye_request(self.version)))
            channel.flush(time.monotonic() + grace)
            assert process.stdin is not None
            process.stdin.close()
            process.wait(timeout=grace)
        except (OSError, ValueError, subprocess.TimeoutExpired):
            pass
        self._stop()

    def _run(self, commands: Sequence[Any], window: int) -> tuple[list[Outcome], SutFailure | None]:
        """The outcomes of ``commands`` with up to ``window`` requests in flight, and the failure that stopped them."""
        outcomes: list[Outcome] = []
        if self._process is None:
            return outcomes, SutFailure(FailureKind.CRASHED, "op",
                                        "the SUT is not running (an earlier request failed)")
        channel = self._channel
        assert channel is not None
        unasked = first_unasked(commands, self.version)  # never asked what its version lacks: the batch stops there
        asked = commands if unasked is None else commands[:unasked[0]]
        requests: list[dict[str, Any]] = []
        ends: list[int] = []
        for index in range(len(asked)):
            while len(requests) < len(asked) and len(requests) - index < window:
                self._seq += 1
                request = op_request(self._seq, asked[len(requests)], self.version)
                channel.queue(_line(request))
                requests.append(request)
                ends.append(channel.written + channel.pending)
            request = requests[index]
            try:
                line = self._reply_line(request, ends[index], self.timeout)
                later = range(request["seq"] + 1, request["seq"] + len(requests) - index)
                outcomes.append(read_outcome(self._parse(line, request, later), request, self._domain))
            except SutFailure as failure:
                if failure.kind is FailureKind.ERROR_REPLY:
                    self._drain(requests[index + 1:], ends[index + 1:])
                else:
                    self._stop()
                return outcomes, failure
        if unasked is not None:
            command = commands[unasked[0]]
            return outcomes, Unsupported(FailureKind.UNSUPPORTED, f"op {self._seq + 1} ({command.op})", unasked[1])
        return outcomes, None

    def _drain(self, requests: Sequence[dict[str, Any]], ends: Sequence[int]) -> None:
        """Read and drop the replies to ``requests`` (queued before an error reply); stop the process if they fail."""
        channel = self._channel
        for request, needs in zip(requests, ends):
            if channel is None:
                return
            try:
                line = channel.next_line(time.monotonic() + self.timeout, needs)
                if line is None:
                    raise InputClosed()
                parse_reply(line, request)
            except SutFailure as failure:
                if failure.kind is not FailureKind.ERROR_REPLY:
                    self._stop()
                    return
            except (LineTimeout, InputClosed):
                self._stop()
                return

    # the process

    def _start(self) -> None:
        self._stop()
        self.starts += 1
        self._stderr = tempfile.TemporaryFile()
        try:
            process = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=self._stderr, cwd=self.cwd, env=self.env, start_new_session=True)
        except OSError as error:
            raise SutFailure(FailureKind.CRASHED, "hello", f"cannot start {self.label!r}: {error}") from None
        assert process.stdin is not None and process.stdout is not None
        self._process = process
        self._channel = Channel(process.stdin.fileno(), process.stdout.fileno(), MAX_REPLY_BYTES)
        self.in_flight = 1

    def _stop(self) -> None:
        """Kill the program's whole process group, reap it and close both pipes (nothing is left reading them)."""
        process, self._process, self._channel = self._process, None, None
        if process is not None:
            kill_group(process)
            if process.stdout is not None:
                process.stdout.close()

    def _ask(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        channel = self._channel
        assert channel is not None
        channel.queue(_line(request))
        return self._parse(self._reply_line(request, channel.written + channel.pending, timeout), request)

    def _reply_line(self, request: dict[str, Any], needs: int, timeout: float) -> bytes:
        """The next reply line, for ``request`` (whose bytes end at ``needs``); a failure naming it when none comes."""
        channel = self._channel
        assert channel is not None
        where = describe_request(request)
        try:
            line = channel.next_line(time.monotonic() + timeout, needs)
        except LineTimeout:
            self._fail(FailureKind.TIMEOUT, where, f"no reply within {timeout:g} s; the process was killed")
        except InputClosed:
            self._fail(FailureKind.CRASHED, where, "its input is closed")
        if line is None:
            self._fail(FailureKind.CRASHED, where, "its output closed before it replied")
        return line

    def _parse(self, line: bytes, request: dict[str, Any], in_flight: Collection[int] = ()) -> dict[str, Any]:
        try:
            return parse_reply(line, request, in_flight)
        except SutFailure as failure:
            if failure.kind is not FailureKind.ERROR_REPLY:
                self._stop()  # a SUT that writes nonsense cannot be trusted with the next request
            raise

    def _fail(self, kind: FailureKind, where: str, message: str) -> NoReturn:
        process = self._process
        self._stop()
        detail = message
        if process is not None and process.returncode is not None and kind is not FailureKind.TIMEOUT:
            detail += f" (exit code {process.returncode})"
        tail = self.stderr_tail()
        if tail:
            detail += f"; its last stderr lines: {tail}"
        raise SutFailure(kind, where, detail)

    def stderr_tail(self, lines: int = 3) -> str:
        """The last lines the program wrote to standard error, joined by `` | ``, at most their last 500 characters."""
        if self._stderr is None:
            return ""
        size = self._stderr.seek(0, os.SEEK_END)
        self._stderr.seek(max(0, size - _STDERR_TAIL_BYTES))
        text = self._stderr.read().decode("utf-8", "replace").strip().splitlines()
        self._stderr.seek(0, os.SEEK_END)
        tail = " | ".join(text[-lines:])
        return printable(tail if len(tail) <= 500 else "..." + tail[-500:])


_STDERR_TAIL_BYTES = 64 * 1024
"""How much of the end of a SUT's standard error is read for its last lines."""


def _line(message: dict[str, Any]) -> bytes:
    """A request as the line written to the SUT (ASCII, since ``json.dumps`` escapes the rest)."""
    return (json.dumps(message) + "\n").encode("ascii")


def kill_group(process: subprocess.Popen[bytes]) -> None:
    """Kill ``process``'s whole process group (it was started in a session of its own) and reap it.

    Its input is closed; its output is left to the thread reading it (:func:`pump_lines`), which
    closes it at its end: closing it here could block on that thread's read.
    """
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # the whole group has ended already
    process.wait()
    try:
        if process.stdin is not None:
            process.stdin.close()
    except OSError:
        pass  # a write into the closed pipe was still buffered


def pump_lines(stream: IO[bytes], lines: queue.Queue[bytes | None]) -> None:
    """Queue each line of ``stream`` (at most one byte past the longest reply), then None at its end.

    Runs in a thread of its own. It never raises: the stream ending, failing
    or closing all end the reading the same way. A line cut at the limit is
    queued (the parser rejects it) and ends the reading too. The stream is
    closed here, by the one thread that reads it.
    """
    try:
        while line := stream.readline(MAX_REPLY_BYTES + 1):
            lines.put(line)
            if not line.endswith(b"\n"):
                break
    except (OSError, ValueError):
        pass
    finally:
        lines.put(None)
        try:
            stream.close()
        except (OSError, ValueError):
            pass


# --- as a checker subject ------------------------------------------------------------------------


class SutSubject:
    """A SUT reset to one domain and profile: the lockstep driver's ``execute``, outcomes only."""

    def __init__(self, sut: Sut, domain: str, profile: Profile) -> None:
        self.sut = sut
        sut.reset(domain, profile)

    def execute(self, command: Any) -> Outcome:
        """The SUT's outcome for ``command``."""
        return self.sut.execute(command)

    def execute_many(self, commands: Sequence[Any]) -> list[Outcome]:
        """The SUT's outcomes for ``commands``, pipelined when the SUT allows it (see :func:`execute_many`)."""
        return execute_many(self.sut, commands)


def subject_factory(sut: Sut, domain: str) -> Callable[[Profile], SutSubject]:
    """A lockstep subject factory: each new scenario resets ``sut`` to ``domain``."""
    return lambda profile: SutSubject(sut, domain, profile)
