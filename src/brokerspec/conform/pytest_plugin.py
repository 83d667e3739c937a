"""A pytest plugin: ``pytest --brokerspec-sut CMD --brokerspec-profile P`` runs the catalogue as test items.

Introduction
------------
Installed with brokerspec (entry point ``pytest11``), so a broker project adds
the conformance suite to its own CI with one line. Without
``--brokerspec-sut`` the plugin does nothing. With it, every catalogue case
that applies to the profile (and to ``--brokerspec-domain``, when given)
becomes one item named after the case, run against one SUT shared by the
whole session. A wrong outcome fails the item with the script, the step and
the outcomes that differ; a SUT failure fails it with the request and what
was wrong; a domain the SUT does not offer skips it. pytest's own ``-k``
selects cases by name.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from brokerspec.spec import PROFILES, Profile, get_profile

from .catalogue import DOMAIN_ORDER, Case, all_cases, select
from .protocol import Hello, SutFailure
from .runner import Verdict, run_case
from .sut import DEFAULT_TIMEOUT, Sut

SUT_KEY = pytest.StashKey[Sut]()
HELLO_KEY = pytest.StashKey[Hello | SutFailure]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """The plugin's options."""
    group = parser.getgroup("brokerspec", "brokerspec conformance suite")
    group.addoption("--brokerspec-sut", default=None, metavar="CMD",
                    help="run the conformance catalogue against this SUT (a command line or inproc:LAYER)")
    group.addoption("--brokerspec-profile", default="seed", choices=sorted(PROFILES),
                    help="the profile (default seed)")
    group.addoption("--brokerspec-domain", action="append", default=None, choices=DOMAIN_ORDER,
                    help="only this domain (repeatable)")
    group.addoption("--brokerspec-timeout", type=float, default=DEFAULT_TIMEOUT,
                    help=f"per-request timeout for a subprocess SUT (default {DEFAULT_TIMEOUT:g})")
    group.addoption("--brokerspec-strict", action="store_true",
                    help="demand the spec's exact outcome where it allows several")


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


def pytest_configure(config: pytest.Config) -> None:
    """Declare the marker the items carry."""
    config.addinivalue_line("markers", "brokerspec: a brokerspec conformance case")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Add the catalogue's items when a SUT is given (first, so that ``-k`` and ``-m`` then select among them)."""
    if config.getoption("brokerspec_sut") is None:
        return
    items.extend(Catalogue.from_parent(session, name="brokerspec").collect())


def _session_sut(config: pytest.Config) -> tuple[Sut, Hello | SutFailure]:
    if SUT_KEY not in config.stash:
        from .cli import make_sut

        sut = make_sut(config.getoption("brokerspec_sut"), config.getoption("brokerspec_timeout"))
        config.stash[SUT_KEY] = sut
        profile = get_profile(config.getoption("brokerspec_profile"))
        try:
            config.stash[HELLO_KEY] = sut.hello(profile, tuple(config.getoption("brokerspec_domain") or
                                                               DOMAIN_ORDER))
        except SutFailure as failure:
            config.stash[HELLO_KEY] = failure
    return config.stash[SUT_KEY], config.stash[HELLO_KEY]


def pytest_unconfigure(config: pytest.Config) -> None:
    """Close the session's SUT."""
    if SUT_KEY in config.stash:
        config.stash[SUT_KEY].close()
