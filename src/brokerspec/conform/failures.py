"""What a conformance failure leaves behind: its account in the SUT's own JSON, and a trace file.

Introduction
------------
A SUT author reads outcomes as JSON: the protocol's ``outcome`` objects
(``docs/sut-protocol.md``) are what the SUT wrote. So a failure shows the
expected and the observed outcome in that form (:func:`wire_json`), not as
brokerspec's Python values: ``{"type": "resolved", "address": "a1", ...}``
rather than ``Resolved(address='a1', ...)``. Both sides come out with the
same key order (``type`` first, then the fields as the trace format lists
them), so they line up one above the other; the rule ID, optional on the
wire, is named beside the expected outcome instead.

:func:`failure_text` words a lockstep divergence of the SUT that way. Where
the spec allows several outcomes and the run judges permissively, it lists
every outcome the rules allow at that step
(:func:`brokerspec.spec.balancing.allowed_outcomes`, sections 3 and 4
of ``docs/load-balancing.md``).

:func:`case_trace` turns a failed or SUT-failed case into a trace (the
case's whole script, each step with the outcome the SUT gave while it
answered, the profile with the case's overrides, a note naming the case and
the step), which :func:`trace_path_for` names after the case, the profile
and the time; the runner writes it with
:func:`~brokerspec.trace.write_new_trace`, so the next run never overwrites
it, and ``brokerspec replay`` and ``brokerspec explain`` read it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from brokerspec.spec import Outcome, Profile

from ..check.lockstep import Divergence, Lockstep, format_command
from ..check.fairness import UNFAIR
from ..codec import encode_outcome
from ..trace import Trace, TraceStep

ALLOWED_SHOWN = 8
"""At most this many allowed outcomes are listed under a permissive failure."""


def wire_json(outcome: Outcome | None) -> str:
    """An outcome as a SUT writes it in an ``outcome`` reply (without the optional ``rule``); ``-`` for none.

    >>> from brokerspec.spec.addressing import NotFound
    >>> wire_json(NotFound("q1"))
    '{"type": "not_found", "name": "q1"}'
    """
    if outcome is None:
        return "-"
    data = encode_outcome(outcome)
    data.pop("rule", None)
    return json.dumps(data, ensure_ascii=False)


def failure_text(lockstep: Lockstep, divergence: Divergence) -> str:
    """The account of a SUT's divergence: the script up to the step, then the outcomes as wire JSON.

    The lines holding the two outcomes start with ``spec:`` and ``sut:``
    (``spec (strict):`` when any allowed outcome would have passed).
    A divergence that is not a SUT's wrong outcome (the spec breaking its
    own invariants, a subject raising) keeps the lockstep driver's words.
    """
    step = divergence.step
    observed = divergence.observed[step - 1] if len(divergence.observed) >= step else None
    if divergence.layer != "sut" or observed is None:
        return divergence.explain()
    expected = lockstep.outcomes[step - 1]
    lines = [f"{divergence.layer} parted from the spec at step {step}: {divergence.what}", "", "script:"]
    for number, command in enumerate(divergence.commands, start=1):
        lines.append(f"  {number:>3}. {format_command(command)}{'  <-- here' if number == step else ''}")
    lines.append("")
    rule = f"  (rule {expected.rule})" if expected.rule else ""
    if lockstep.permissive:
        allowed = allowed_here(lockstep, divergence.command)
        lines.append(f"  spec (strict): {wire_json(expected)}{rule}")
        lines.append(f"  the rules allow {len(allowed)} outcome{'s' if len(allowed) != 1 else ''} here:")
        lines.extend(f"    {wire_json(o)}" for o in allowed[:ALLOWED_SHOWN])
        if len(allowed) > ALLOWED_SHOWN:
            lines.append(f"    ... and {len(allowed) - ALLOWED_SHOWN} more")
    else:
        lines.append(f"  spec: {wire_json(expected)}{rule}")
    lines.append(f"  sut:  {wire_json(observed)}")
    if divergence.what == UNFAIR:  # an allowed outcome: what failed is the run's fairness, said in the details
        lines.extend(["", *(f"  {d}" for d in divergence.details)])
    return "\n".join(lines)


def allowed_here(lockstep: Lockstep, command: Any) -> list[Outcome]:
    """Every outcome the rules allow for ``command`` from the state the SUT's own earlier outcomes led to.

    The lockstep driver moves the SUT's followed state only past accepted
    steps, so at a failure it is the state before the failing step.
    """
    if lockstep.domain.name != "balancing":  # the only domain whose rules allow several outcomes
        return [lockstep.outcomes[-1]]
    from brokerspec.spec.balancing import allowed_outcomes, every_state

    states = every_state(lockstep.followed["sut"])
    return list(dict.fromkeys(outcome for state in states for _, outcome in allowed_outcomes(state, command)))


def case_trace(name: str, domain: str, profile: Profile, commands: Sequence[Any],
               observed: Sequence[Outcome | None], step: int | None, why: str) -> Trace:
    """A case's script as a trace: every command, with the SUT's outcome where it gave one.

    ``profile`` is the profile the case ran under (its overrides included), ``step``
    the step where it failed (None: before the first), ``why`` one line saying how.
    """
    steps = tuple(TraceStep(c, observed[i] if i < len(observed) else None) for i, c in enumerate(commands))
    where = f"at step {step}" if step else "before its first step"
    first_line = why.splitlines()[0] if why else ""
    note = f"conform case {name} failed {where} under {profile.label}: {first_line}"
    return Trace(profile, steps, domain=domain, note=note)


def trace_path_for(out_dir: Path, name: str, profile: Profile) -> Path:
    """``out_dir/CASE-PROFILE-YYYYmmdd-HHMMSS.jsonl``, with every character but letters, digits and ``-._``
    made ``_`` and the case's ``/`` a ``-``."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    safe = "".join(ch if ch.isalnum() or ch in "-._" else "_" for ch in f"{name.replace('/', '-')}-{profile.label}")
    return out_dir / f"{safe}-{stamp}.jsonl"


__all__ = ["case_trace", "failure_text", "trace_path_for", "wire_json"]
