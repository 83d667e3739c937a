"""The conformance catalogue: named scenarios, each a broker script whose expected outcomes the spec computes.

Introduction
------------
A :class:`Case` is a name (``domain/what-it-shows``), the domain, a one-line
summary, the script (spec commands), the profiles it applies to, the rule IDs
it is written to exercise, and where its scenario comes from (a seed file, an
Artemis or ActiveMQ source, a JIRA key). It holds no expected outcome: for a
profile, :meth:`Case.expected` runs the script through the spec, so the
catalogue can never disagree with the rules it claims to test. The rules a
case exercises under a profile are its tags together with the rule of every
outcome the spec gives (:meth:`Case.rules_exercised`).

Each domain's cases live in their own module (:mod:`.addressing`,
:mod:`.duplicates`, :mod:`.balancing`, :mod:`.topologies`); :func:`all_cases`
lists them all, and :func:`check_catalogue` refuses a catalogue with a
duplicate name, an unknown rule tag or profile, or an empty script.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from brokerspec.spec import PROFILES, BrokerspecError, Outcome, Profile, addressing, balancing, duplicates, get_profile, topologies

from ...check.domains import get_domain

ALL_PROFILES = tuple(PROFILES)
DOMAIN_ORDER = ("addressing", "duplicates", "balancing", "topologies")
RULE_TABLES = {"addressing": addressing.RULES, "duplicates": duplicates.RULES, "balancing": balancing.RULES,
               "topologies": topologies.RULES}


@dataclass(frozen=True)
class Case:
    """One named conformance scenario."""

    name: str
    summary: str
    commands: tuple[Any, ...]
    rules: tuple[str, ...]
    source: str
    profiles: tuple[str, ...] = ALL_PROFILES
    overrides: tuple[tuple[str, str], ...] = ()
    """Options the case sets on top of each profile (``domain.option``, value), as ``--set`` does; a SUT
    receives them in its ``reset`` request. For rules no profile reaches on its own."""

    @property
    def domain(self) -> str:
        """The domain: the name's first part."""
        return self.name.split("/", 1)[0]

    def applies_to(self, profile: Profile) -> bool:
        """Whether the case is meant for ``profile`` (by name; overrides do not matter)."""
        return profile.name in self.profiles

    def profile_for(self, profile: Profile) -> Profile:
        """``profile`` with the case's overrides applied."""
        for dotted, value in self.overrides:
            profile = profile.with_option(dotted, value)
        return profile

    def expected(self, profile: Profile) -> list[Outcome]:
        """The spec's outcome for every command, under ``profile`` and the case's overrides."""
        spec = get_domain(self.domain)
        state = spec.initial_state(self.profile_for(profile))
        outcomes: list[Outcome] = []
        for command in self.commands:
            state, outcome = spec.apply(state, command)
            outcomes.append(outcome)
        return outcomes

    def rules_exercised(self, profile: Profile) -> tuple[str, ...]:
        """The tagged rules and every rule an expected outcome names, in first-seen order."""
        seen = dict.fromkeys(self.rules)
        for outcome in self.expected(profile):
            if outcome.rule:
                seen.setdefault(outcome.rule)
        return tuple(seen)


def all_cases() -> list[Case]:
    """Every case of every domain, domain by domain, in each module's order."""
    cases: list[Case] = []
    for domain in DOMAIN_ORDER:
        module = importlib.import_module(f"{__name__}.{domain}")
        cases.extend(module.CASES)
    return cases


def select(cases: Sequence[Case], profile: Profile, domains: Sequence[str] | None = None,
           pattern: str | None = None) -> list[Case]:
    """The cases for ``profile``, restricted to ``domains`` and to names containing ``pattern``."""
    return [c for c in cases if c.applies_to(profile) and (domains is None or c.domain in domains)
            and (pattern is None or pattern in c.name)]


def check_catalogue(cases: Sequence[Case]) -> list[str]:
    """Every problem with ``cases``: duplicate names, unknown domains, rule tags or profiles, empty scripts."""
    problems: list[str] = []
    seen: set[str] = set()
    for case in cases:
        if case.name in seen:
            problems.append(f"{case.name}: the name is used twice")
        seen.add(case.name)
        if case.domain not in RULE_TABLES:
            problems.append(f"{case.name}: unknown domain {case.domain!r}")
            continue
        unknown = [r for r in case.rules if r not in RULE_TABLES[case.domain]]
        if unknown:
            problems.append(f"{case.name}: unknown rule IDs {unknown}")
        if not case.rules:
            problems.append(f"{case.name}: no rule tags")
        bad = [p for p in case.profiles if p not in PROFILES]
        if bad or not case.profiles:
            problems.append(f"{case.name}: bad profiles {bad or '(none)'}")
        if not case.commands:
            problems.append(f"{case.name}: empty script")
        if not case.source:
            problems.append(f"{case.name}: no source")
        for dotted, value in case.overrides:
            try:
                get_profile("seed").with_option(dotted, value)
            except BrokerspecError as error:
                problems.append(f"{case.name}: bad override {dotted}={value}: {error}")
    return problems
