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
was wrong; a domain the SUT does not offer skips it, and so does a case that
needs an operation the SUT's protocol version lacks (a query before version 2,
``prepare`` before version 3). pytest's own ``-k`` selects cases by name.
"""

from __future__ import annotations

import pytest

from ..clitools import parse_timeout

# Loaded in every pytest session where brokerspec is installed, so this module
# imports nothing of the spec (clitools needs only the standard library): the
# items live in pytest_items, imported only when --brokerspec-sut is given.


def pytest_addoption(parser: pytest.Parser) -> None:
    """The plugin's options (profile and domain names are checked once the suite is asked for)."""
    group = parser.getgroup("brokerspec", "brokerspec conformance suite")
    group.addoption("--brokerspec-sut", default=None, metavar="CMD",
                    help="run the conformance catalogue against this SUT (a command line or inproc:LAYER)")
    group.addoption("--brokerspec-profile", default="seed", metavar="PROFILE",
                    help="the profile: seed, artemis-2.11 or artemis-latest (default seed)")
    group.addoption("--brokerspec-domain", action="append", default=None, metavar="DOMAIN",
                    help="only this domain: addressing, duplicates, balancing or topologies (repeatable)")
    group.addoption("--brokerspec-timeout", type=parse_timeout, default=None, metavar="SECONDS",
                    help="per-request timeout for a subprocess SUT (default: the adapter's, as for brokerspec conform)")
    group.addoption("--brokerspec-strict", action="store_true",
                    help="demand the spec's exact outcome where it allows several")


def pytest_configure(config: pytest.Config) -> None:
    """Declare the marker the items carry; check the options when the suite is asked for."""
    config.addinivalue_line("markers", "brokerspec: a brokerspec conformance case")
    if config.getoption("brokerspec_sut") is not None:
        from .pytest_items import check_options

        check_options(config)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Add the catalogue's items when a SUT is given (first, so that ``-k`` and ``-m`` then select among them)."""
    if config.getoption("brokerspec_sut") is None:
        return
    from .pytest_items import add_items

    add_items(session, items)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Close the session's SUT."""
    if config.getoption("brokerspec_sut") is not None:
        from .pytest_items import close

        close(config)
