"""What the Artemis adapter says when it cannot give an outcome: not expressible, or a refusal it cannot name.

Introduction
------------
Both are SUT failures of the ``error-reply`` kind (:mod:`brokerspec.conform.protocol`):
the run goes on with the next case, and the fidelity report
(:mod:`.fidelity`) tells them apart by class:

* :class:`NotExpressible`: the operation has no faithful counterpart over
  the client protocols the adapter uses (the message says why). The case is
  reported as *not expressible over the wire*, never as a disagreement.
* :class:`UnexpectedRefusal`: the broker did something the adapter has no
  spec word for (an exception of an unknown kind, a create that made two
  queues). It is reported as a difference to be triaged, with the broker's
  own words.
"""

from __future__ import annotations

import itertools
import os

from brokerspec.conform.protocol import FailureKind, SutFailure, Unsupported

_TAGS = itertools.count(1)


class NotExpressible(Unsupported):
    """The operation cannot be performed faithfully over the adapter's client protocols."""

    def __init__(self, why: str) -> None:
        super().__init__(FailureKind.ERROR_REPLY, "op", f"not expressible over the wire: {why}")
        self.why = why


class UnexpectedRefusal(SutFailure):
    """The broker answered in a way the adapter has no spec outcome for."""

    def __init__(self, what: str) -> None:
        super().__init__(FailureKind.ERROR_REPLY, "op", f"the broker's answer has no spec outcome: {what}")
        self.what = what


def new_tag(owner: object) -> str:
    """A tag no other message of this process carries (the probe files records under it)."""
    return f"{os.getpid()}.{id(owner) % 100000}.{next(_TAGS)}"
