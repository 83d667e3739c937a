"""What the running broker decided, written down: a trace the checker reads and a log that names each rule.

Introduction
------------
The broker's name model is the fast address-resolution broker
(:class:`brokerspec.impl.addressing.FastBroker`); every decision it makes
(an address or queue made or deleted, a send routed, a subscription
attached, each with what it auto-created) is an addressing command with
its outcome. :class:`Recorder` can do two things with each:

* ``--trace FILE``: append it to an addressing trace (``docs/trace-format.md``),
  a line at a time and flushed, so the file is readable while the broker
  runs and complete up to the last decision after a crash. ``brokerspec
  replay FILE`` checks it step by step against the spec, and ``brokerspec
  explain FILE`` walks through it.
* ``--explain``: run the same command through the spec and log the rule
  that decided it (``ADDR-SEND-ROUTE``, ``ADDR-CONSUME-AUTO-QUEUE`` ...). The
  spec's outcome is compared with the broker's, and a difference is logged
  as a divergence: a live conformance check of the name model.

Duplicate-detection and delivery decisions are logged with their rule
(``DUP-NONTX-DUPLICATE``, ``DUP-TX-DUPLICATE``, ``LB-CLOSE-RETURNS`` ...) by
:meth:`Recorder.note`; they are not in the trace, whose addressing domain
has no messages (``docs/broker.md`` says why).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import IO, Any

from brokerspec.spec import Outcome, Profile
from brokerspec.spec.addressing import AddressingState, apply, initial_state

from ..codec import encode_outcome
from ..trace import header_record, step_record

LOG = logging.getLogger("brokerspec.broker.explain")


class Recorder:
    """The broker's trace writer and rule log (each optional)."""

    def __init__(self, profile: Profile, trace: Path | None = None, explain: bool = False) -> None:
        self.profile = profile
        self.explaining = explain
        self.steps = 0
        self.divergences = 0
        self._file: IO[str] | None = None
        if trace is not None:
            trace.parent.mkdir(parents=True, exist_ok=True)
            self._file = trace.open("w", encoding="utf-8")
            note = "decisions of a brokerspec broker's name model, as it ran"
            self._write(header_record("addressing", profile, note))
        self._state: AddressingState | None = initial_state(profile) if explain else None

    @property
    def active(self) -> bool:
        """Whether anything is recorded (callers skip building descriptions otherwise)."""
        return self._file is not None or self.explaining

    def _write(self, record: dict[str, Any]) -> None:
        if self._file is not None:
            self._file.write(json.dumps(record, ensure_ascii=False) + "\n")
            self._file.flush()

    def decision(self, command: Any, outcome: Outcome) -> None:
        """Record one name-model decision: a trace step, and its rule when explaining."""
        self.steps += 1
        self._write(step_record(self.steps, command, outcome))
        if self._state is None:
            return
        self._state, expected = apply(self._state, command)
        if expected != outcome:
            self.divergences += 1
            LOG.warning("step %d %s: DIVERGENCE: the broker decided %s, the spec %s", self.steps, command.op,
                        json.dumps(encode_outcome(outcome)), json.dumps(encode_outcome(expected)))
        else:
            LOG.info("step %d %s -> %s [%s]", self.steps, describe(command), outcome.kind, expected.rule)

    def note(self, rule: str, text: str) -> None:
        """Log a decision outside the name model with the rule behind it."""
        if self.explaining:
            LOG.info("%s [%s]", text, rule)

    def reset(self) -> None:
        """The broker restarted: its name model starts again from what the store rebuilt."""
        if self._state is not None:
            self._state = initial_state(self.profile)

    def close(self) -> None:
        """Close the trace file."""
        if self._file is not None:
            self._file.close()
            self._file = None


def describe(command: Any) -> str:
    """A command in a few words: its operation and arguments."""
    fields = ", ".join(f"{name}={value!r}" for name, value in vars(command).items())
    return f"{command.op}({fields})"
