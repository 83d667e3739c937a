"""The semantic domains the checker knows, and what it needs from each.

Introduction
------------
Every domain has the same shape: commands, outcomes, a spec state with an
initial value, a pure ``apply``, the state's invariants, and implementation
layers (the teaching reference and the fast implementation) that execute
commands and show their state as a spec state. :class:`Domain` bundles those
so that the lockstep driver, the Hypothesis machines, trace replay and the
command line treat every domain alike. :data:`DOMAINS` lists them by the
name traces use in their header.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from brokerspec.spec import Outcome, Profile, addressing, balancing, duplicates, topologies


class Subject(Protocol):
    """What the checker needs from an implementation of any domain.

    brokerspec's own layers also have ``snapshot()`` (their state as a spec
    state) and may have ``check_valid()`` and ``snapshot_like(state)`` (the
    snapshot sharing ``state``'s equal parts: see :mod:`.lockstep`); a system
    under test has none of them.
    """

    def execute(self, command: Any) -> Outcome: ...


SubjectFactory = Callable[[Profile], Subject]


@dataclass(frozen=True)
class Judgement:
    """A permissive judgement of one observed outcome: accepted or not, the state to go on from, the
    strict outcome, how many distinct outcomes the rules allow, and the choices (``ChoicePoint``) that
    lead to the accepted outcome, which fairness over a run is judged on."""

    accepted: bool
    state: Any
    expected: Outcome
    allowed: int
    choices: tuple[Any, ...] = ()


Judge = Callable[[Any, Any, Outcome], Judgement]


@dataclass(frozen=True)
class Domain:
    """One semantic domain: its spec functions and its implementation layers."""

    name: str
    initial_state: Callable[[Profile], Any]
    apply: Callable[[Any, Any], tuple[Any, Outcome]]
    invariant_violations: Callable[[Any], list[str]]
    state_parts: tuple[str, ...]
    load_layers: Callable[[], Mapping[str, SubjectFactory]]
    judge: Judge | None = None
    """Permissive judging, for a domain whose rules allow several outcomes (None: exactly one)."""
    private_parts: tuple[str, ...] = ()
    """State parts that record tie-breaking (round-robin positions, and the queues a transaction's sends were
    routed to, which show only at the commit), not compared in permissive mode."""
    profile_free: bool = False
    """True when no profile option changes the domain, so checking it under one profile covers them all."""

    @property
    def layers(self) -> Mapping[str, SubjectFactory]:
        """The implementation layers by name (``reference``, ``impl``)."""
        return self.load_layers()

    def describe_state_difference(self, expected: Any, actual: Any, skip: tuple[str, ...] = ()) -> list[str]:
        """Every entry in which two states of this domain differ, in words (parts in ``skip`` aside)."""
        lines: list[str] = []
        for part in self.state_parts:
            if part in skip:
                continue
            want = getattr(expected, part)
            have = getattr(actual, part)
            if isinstance(want, Mapping) and isinstance(have, Mapping):
                for key in sorted(set(want) | set(have), key=repr):
                    if want.get(key) != have.get(key):
                        lines.append(f"{part}[{key!r}]: spec {want.get(key)!r}, got {have.get(key)!r}")
            elif want != have:
                lines.append(f"{part}: spec {want!r}, got {have!r}")
        return lines


def _addressing_layers() -> Mapping[str, SubjectFactory]:
    from brokerspec.impl import FastBroker
    from brokerspec.reference import ReferenceBroker

    return {"reference": ReferenceBroker, "impl": FastBroker}


def _duplicates_layers() -> Mapping[str, SubjectFactory]:
    from brokerspec.impl.duplicates import FastDuplicatesBroker
    from brokerspec.reference.duplicates import ReferenceDuplicatesBroker

    return {"reference": ReferenceDuplicatesBroker, "impl": FastDuplicatesBroker}


ADDRESSING = Domain(
    name="addressing",
    initial_state=addressing.initial_state,
    apply=addressing.apply,
    invariant_violations=addressing.invariant_violations,
    state_parts=("addresses", "queues", "name_counts", "settings", "prefixes", "options"),
    load_layers=_addressing_layers,
)

DUPLICATES = Domain(
    name="duplicates",
    initial_state=duplicates.initial_state,
    apply=duplicates.apply,
    invariant_violations=duplicates.invariant_violations,
    state_parts=("caches", "queues", "transactions", "size_settings", "global_size", "next_message", "options"),
    load_layers=_duplicates_layers,
)


def _balancing_layers() -> Mapping[str, SubjectFactory]:
    from brokerspec.impl.balancing import FastBalancingBroker
    from brokerspec.reference.balancing import ReferenceBalancingBroker

    return {"reference": ReferenceBalancingBroker, "impl": FastBalancingBroker}


class _LastStrictStep:
    """The last strict balancing step applied: (state, command, what ``apply_recording`` returned).

    The permissive judge starts with the same strict step for a subject whose followed state is still the
    spec's own, so it reuses this one (both are pure functions of the same objects) instead of applying
    the command to the state a second time: a quarter of a balancing fuzz step.
    """

    step: tuple[Any, Any, Any] | None = None


def _apply_balancing(state: Any, command: Any) -> tuple[Any, Outcome]:
    result = balancing.apply_recording(state, command, balancing.STRICT)
    _LastStrictStep.step = (state, command, result)
    return result[0], result[1]


def _judge_balancing(state: Any, command: Any, observed: Outcome) -> Judgement:
    last = _LastStrictStep.step
    strict = last[2] if last is not None and last[0] is state and last[1] is command else None
    verdict = balancing.judge(state, command, observed, balancing.Mode.PERMISSIVE, strict)  # type: ignore[arg-type]
    return Judgement(verdict.accepted, verdict.state, verdict.expected, verdict.allowed, verdict.choices)


BALANCING = Domain(
    name="balancing",
    initial_state=balancing.initial_state,
    apply=_apply_balancing,
    invariant_violations=balancing.invariant_violations,
    state_parts=("nodes", "queues", "consumers", "positions", "consumer_positions", "settings", "node_settings",
                 "down_links", "typed", "prefixes", "sessions", "bridge_ids", "forwarded", "clock", "next_message",
                 "next_serial", "options"),
    load_layers=_balancing_layers,
    judge=_judge_balancing,
    private_parts=("positions", "consumer_positions", "sessions"),
)



def _topologies_layers() -> Mapping[str, SubjectFactory]:
    from brokerspec.impl.topologies import FastTopologyBroker
    from brokerspec.reference.topologies import ReferenceTopologyBroker

    return {"reference": ReferenceTopologyBroker, "impl": FastTopologyBroker}


TOPOLOGIES = Domain(
    name="topologies",
    initial_state=topologies.initial_state,
    apply=topologies.apply,
    invariant_violations=topologies.invariant_violations,
    state_parts=("brokers", "connectors", "replay", "consumers", "producers", "demand", "dispatch", "waiting",
                 "next_message"),
    load_layers=_topologies_layers,
    profile_free=True,
)

DOMAINS: dict[str, Domain] = {d.name: d for d in (ADDRESSING, DUPLICATES, BALANCING, TOPOLOGIES)}


def get_domain(name: str) -> Domain:
    """The domain called ``name``; KeyError lists the known ones."""
    if name not in DOMAINS:
        raise KeyError(f"unknown domain {name!r}; domains: {', '.join(DOMAINS)}")
    return DOMAINS[name]
