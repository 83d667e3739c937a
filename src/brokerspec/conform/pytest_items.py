"""The pytest plugin's test items: one per catalogue case, sharing one SUT.

Introduction
------------
Kept apart from :mod:`brokerspec.conform.pytest_plugin`, which pytest loads in
every session on a machine where brokerspec is installed: this module imports
the spec and the catalogue, so it is imported only once ``--brokerspec-sut``
asks for the suite (importing the spec earlier would also hide its module
bodies from a coverage run that starts after plugins load).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from brokerspec.spec import Profile, get_profile

from .catalogue import DOMAIN_ORDER, Case, all_cases, select
from .protocol import Hello, SutFailure, first_unasked
from .runner import Verdict, run_case
from .sut import DEFAULT_TIMEOUT, Sut

SUT_KEY = pytest.StashKey[Sut]()
HELLO_KEY = pytest.StashKey[Hello | SutFailure]()


class CaseFailure(Exception):
    """A case that did not pass; its message is the whole explanation."""


class CaseItem(pytest.Item):
    """One catalogue case as a test item."""

    def __init__(self, *, case: Case, profile: Profile, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.profile = profile
        self.add_marker(pytest.mark.brokerspec)

    def runtest(self) -> None:
        """Run the case against the session's SUT."""
        sut, hello = _session_sut(self.config)
        if isinstance(hello, SutFailure):
            raise CaseFailure(f"the SUT failed its handshake: {hello}")
        if not hello.offers(self.case.domain, self.profile.name):
            pytest.skip(f"the SUT does not offer {self.case.domain} under {self.profile.name}")
        unasked = first_unasked(self.case.commands, hello.version)
        if unasked is not None:
            pytest.skip(unasked[1])
        result = run_case(sut, self.case, self.profile, self.config.getoption("brokerspec_strict"))
        if result.verdict is Verdict.FAILED:
            rule = f"\nthe expected outcome was decided by rule {result.rule}" if result.rule else ""
            raise CaseFailure(f"{self.case.summary}\n\n{result.message}{rule}")
        if result.verdict is Verdict.SUT_FAILURE:
            raise CaseFailure(f"SUT failure: {result.message}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        """The explanation alone for a case failure; pytest's usual report otherwise."""
        if isinstance(excinfo.value, CaseFailure):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[str, int | None, str]:
        """Where the item comes from, for pytest's report."""
        return "brokerspec catalogue", None, self.case.name


class Catalogue(pytest.Collector):
    """The catalogue's cases for the chosen profile and domains."""

    def collect(self) -> Iterator[CaseItem]:
        """One item per case."""
        profile = get_profile(self.config.getoption("brokerspec_profile"))
        for case in select(all_cases(), profile, self.config.getoption("brokerspec_domain")):
            yield CaseItem.from_parent(self, name=case.name, case=case, profile=profile)


def _session_sut(config: pytest.Config) -> tuple[Sut, Hello | SutFailure]:
    if SUT_KEY not in config.stash:
        from .cli import make_sut

        timeout = config.getoption("brokerspec_timeout")
        sut = make_sut(config.getoption("brokerspec_sut"), DEFAULT_TIMEOUT if timeout is None else timeout)
        config.stash[SUT_KEY] = sut
        profile = get_profile(config.getoption("brokerspec_profile"))
        try:
            config.stash[HELLO_KEY] = sut.hello(profile, tuple(config.getoption("brokerspec_domain") or
                                                               DOMAIN_ORDER))
        except SutFailure as failure:
            config.stash[HELLO_KEY] = failure
    return config.stash[SUT_KEY], config.stash[HELLO_KEY]


def check_options(config: pytest.Config) -> None:
    """Refuse an unknown profile or domain with pytest's usage error, naming the option."""
    from brokerspec.spec import PROFILES

    profile = config.getoption("brokerspec_profile")
    if profile not in PROFILES:
        raise pytest.UsageError(f"--brokerspec-profile {profile!r}: not a profile; "
                                f"choose one of {', '.join(sorted(PROFILES))}")
    for domain in config.getoption("brokerspec_domain") or ():
        if domain not in DOMAIN_ORDER:
            raise pytest.UsageError(f"--brokerspec-domain {domain!r}: not a domain; "
                                    f"choose one of {', '.join(DOMAIN_ORDER)}")


def add_items(session: pytest.Session, items: list[pytest.Item]) -> None:
    """Append the catalogue's items for the session's profile and domains."""
    items.extend(Catalogue.from_parent(session, name="brokerspec").collect())


def close(config: pytest.Config) -> None:
    """Close the session's SUT, if one was started."""
    if SUT_KEY in config.stash:
        config.stash[SUT_KEY].close()
