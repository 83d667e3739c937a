"""How the suite is shared out to ``pytest -n`` workers.

``make test`` runs with ``--dist loadgroup``: a test without an ``xdist_group``
mark is a unit of its own and goes to whichever worker is free, so two workers
finish close together instead of one of them ending the run alone on a long
file. What must not be spread is a fixture wider than one test (a Spark
session, a broker network, an Artemis broker, tables built once per module):
its users would build it on both workers, and a module fixture would even be
torn down and rebuilt each time its module's tests were interleaved with
another's. So every test that uses such a fixture, defined in this suite, gets
the ``xdist_group`` of that fixture; tests linked through a common fixture
share one group. Without ``-n``, or with another ``--dist``, the marks change
nothing.

xdist hands out the groups first (largest first), then the single tests in
collection order; on the workers the collection is reordered here so that the
tests known to take tens of seconds start early and the run ends on short ones.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

SLOW_MARKS = ("crosshair", "cluster", "artemis", "real_brokers")
"""Markers of tests that take tens of seconds each: they are queued before the others."""

SLOW_TESTS = frozenset({
    "test_state_machine_catches_planted_bug", "test_permissive_mode_still_catches_bugs_that_break_a_rule",
    "test_audit_benchmark_prints_every_part", "test_store_keeps_exactly_a_durable_prefix_under_sigkill",
    "test_fuzz_reports_a_one_minimal_script_in_every_domain", "test_the_permissive_machine_finds_a_broker_without_turns",
    "test_the_lockstep_fuzzer_finds_a_star_that_crosses_dots",
})
"""Test functions without such a marker that took 20 s or more a case in a fast run (``--durations``): queued
early too. A stale name only changes the order."""


def shared_fixtures(item: pytest.Item) -> list[str]:
    """Keys of the fixtures wider than one test that ``item`` uses and this suite defines, one key per instance.

    A module-scoped fixture has one instance per module, a session-scoped one a single instance per worker.
    """
    if not isinstance(item, pytest.Function):
        return []
    keys = []
    for name in item.fixturenames:
        definitions = item._fixtureinfo.name2fixturedefs.get(name)
        if not definitions:
            continue
        definition = definitions[-1]
        if definition.scope == "function" or not defined_here(definition.func):
            continue
        if definition.scope == "session":
            keys.append(f"{name}:session")
        else:
            place = item.nodeid.split("::", 1)[0]
            if definition.scope == "package":
                place = place.rsplit("/", 1)[0]
            keys.append(f"{name}:{place}")
    return keys


def defined_here(function: object) -> bool:
    """Whether a fixture function comes from this suite's files (not from pytest or a plugin)."""
    try:
        source = inspect.getsourcefile(inspect.unwrap(function))  # type: ignore[arg-type]
    except TypeError:
        return False
    return source is not None and Path(source).resolve().is_relative_to(TESTS)


def fixture_groups(items: Iterable[pytest.Item]) -> dict[str, str]:
    """The group of each test (by node id) that shares a fixture with others: tests linked through any common
    fixture instance, directly or through other tests, form one group, named after its first fixture key."""
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    uses: dict[str, list[str]] = {}
    for item in items:
        keys = shared_fixtures(item)
        if not keys:
            continue
        uses[item.nodeid] = keys
        for key in keys:
            parent.setdefault(key, key)
        for key in keys[1:]:
            first, other = root(keys[0]), root(key)
            if first != other:
                parent[max(first, other)] = min(first, other)
    return {nodeid: root(keys[0]) for nodeid, keys in uses.items()}


def is_slow(item: pytest.Item) -> bool:
    """Whether ``item`` is known to take tens of seconds (:data:`SLOW_MARKS`, :data:`SLOW_TESTS`)."""
    if isinstance(item, pytest.Function) and item.originalname in SLOW_TESTS:
        return True
    return any(item.get_closest_marker(name) is not None for name in SLOW_MARKS)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests that share a fixture with one ``xdist_group`` each; queue the slow tests first.

    Runs before xdist's own hook, which turns the marks into the units it schedules. A test that already has an
    ``xdist_group`` mark keeps it. Every worker collects and sorts alike, as xdist requires.
    """
    groups = fixture_groups(items)
    for item in items:
        group = groups.get(item.nodeid)
        if group is not None and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group))
    if hasattr(config, "workerinput"):  # only on xdist's workers: a plain run keeps the collection order
        items.sort(key=lambda item: not is_slow(item))
