"""The plumbing of the test tiers: fast samples of a family with the rest deep, and sharing out to workers."""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path

import pytest
from _pytest.mark.structures import ParameterSet

import depth
from depth import CAUGHT_FAST, DEEP, DEEP_REASON, fast_sample

pytest_plugins = ["pytester"]

CONFTEST = Path(__file__).resolve().with_name("conftest.py")


def test_a_fast_sample_keeps_the_named_cases_and_marks_the_rest_deep_only() -> None:
    cases = [("a", 1), ("b", 2), ("c", 3)]
    params = fast_sample(cases, {"b"}, lambda case: case[0], why="another test catches it")
    assert [p.id for p in params] == ["a", "b", "c"], "every case stays collected, in order"
    assert [p.values for p in params] == cases, "a tuple case spreads over the test's arguments"
    assert params[1].marks == ()
    for moved in (params[0], params[2]):
        marks = list(moved.marks)
        assert [mark.name for mark in marks] == ["deep", "skipif"]
        skip = marks[1]
        assert skip.args == (not DEEP,)
        assert skip.kwargs["reason"] == f"{DEEP_REASON}; fast tier: another test catches it"


def test_a_fast_sample_of_single_values_and_the_catalogue_reason() -> None:
    params = fast_sample(["x", "y"], ["y"], str, why=CAUGHT_FAST)
    assert [p.values for p in params] == [("x",), ("y",)]
    assert "tests/conform/test_mutation.py" in str(list(params[0].marks)[1].kwargs["reason"])


def test_a_fast_sample_that_names_no_case_is_an_error_not_a_silent_move() -> None:
    with pytest.raises(ValueError, match="fast sample names no case: b-typo"):
        fast_sample(["a", "b"], {"b-typo"}, str, why="-")
    with pytest.raises(ValueError, match="at least one case"):
        fast_sample(["a", "b"], set(), str, why="-")


def test_scaled_follows_the_tier(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(depth, "DEEP", True)
    assert depth.scaled(1, 9) == 9
    monkeypatch.setattr(depth, "DEEP", False)
    assert depth.scaled(1, 9) == 1


SHARED = '''
import os
import time
from pathlib import Path

import pytest

LOG = Path(os.environ["TIERS_LOG"])


def note(what: str) -> None:
    with LOG.open("a") as log:
        log.write(f"{what} {os.environ.get('PYTEST_XDIST_WORKER', '-')}\\n")


@pytest.fixture(scope="module")
def table():
    note("table")
    yield 1


@pytest.fixture(scope="session")
def engine():
    note("engine")
    yield 2


@pytest.mark.parametrize("n", range(6))
def test_uses_the_table(table, n):
    time.sleep(0.3)
    note("table-test")


@pytest.mark.parametrize("n", range(4))
def test_uses_the_engine(engine, n):
    time.sleep(0.3)


@pytest.mark.parametrize("n", range(8))
def test_alone(n):
    time.sleep(0.3)
    note("alone")


@pytest.mark.crosshair
def test_slow_by_its_mark():
    note("slow")


def test_store_keeps_exactly_a_durable_prefix_under_sigkill():
    note("slow")
'''


def test_workers_build_each_shared_fixture_once_and_spread_the_rest(pytester: pytest.Pytester,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Under ``--dist loadgroup`` a module fixture used by six tests, and a session one used by four, are each built
    once; the tests that use neither run on both workers, the two known to be slow (by a marker, by name) before
    the short ones, though the file defines them last."""
    shutil.copy(CONFTEST, pytester.path / "conftest.py")
    pytester.makepyfile(test_shared=SHARED)
    log = pytester.path / "log.txt"
    monkeypatch.setenv("TIERS_LOG", str(log))
    result = pytester.runpytest_subprocess("-n", "2", "--dist", "loadgroup", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=20)
    lines = [line.split() for line in log.read_text().splitlines()]
    assert [who for what, who in lines if what == "table"] and sum(what == "table" for what, _ in lines) == 1
    assert sum(what == "engine" for what, _ in lines) == 1
    table_workers = {who for what, who in lines if what in ("table", "table-test")}
    assert len(table_workers) == 1, "the table's users ran where it was built"
    assert {who for what, who in lines if what == "alone"} == {"gw0", "gw1"}, "the other tests spread out"
    for worker in ("gw0", "gw1"):
        order = [what for what, who in lines if who == worker and what in ("slow", "alone")]
        assert "alone" not in order[:order.count("slow")], f"{worker} ran a short test before a slow one: {order}"
    assert sum(what == "slow" for what, _ in lines) == 2


FAMILIES = [("addressing.test_crosshair", "HUNTS"), ("duplicates.test_crosshair", "HUNTS"),
            ("balancing.test_crosshair", "HUNTS"), ("topologies.test_crosshair", "HUNTS"),
            ("addressing.test_planted", "CASES"), ("duplicates.test_planted", "CASES"),
            ("balancing.test_planted", "CASES"), ("balancing.test_planted", "RULE_BREAKERS"),
            ("topologies.test_planted", "HUNTS")]


@pytest.mark.parametrize(("module", "name"), FAMILIES)
def test_every_family_of_planted_bug_hunts_keeps_a_fast_sample_and_says_why_the_rest_can_wait(
        module: str, name: str) -> None:
    """The fast tier still shows each checker catching planted bugs; what it leaves out names what catches it."""
    cases = getattr(importlib.import_module(module), name)
    marks = [list(case.marks) if isinstance(case, ParameterSet) else [] for case in cases]
    assert any(not any(m.name == "deep" for m in case_marks) for case_marks in marks), f"{module}.{name}: no fast case"
    for case_marks in marks:
        skips = [m for m in case_marks if m.name == "skipif"]
        if any(m.name == "deep" for m in case_marks):
            assert skips and str(skips[0].kwargs["reason"]).startswith(DEEP_REASON)


def test_the_catalogue_check_named_as_the_reason_covers_every_planted_bug() -> None:
    """CAUGHT_FAST points at a test that counts 43 planted bugs: the four registries hold exactly those."""
    from brokerspec.planted import addressing_bugs, balancing_bugs, duplicates_bugs, topologies_bugs

    names = [bug.name for registry in (addressing_bugs, duplicates_bugs, balancing_bugs, topologies_bugs)
             for bug in registry.PLANTED]
    assert len(names) == len(set(names)) == 43
    source = (Path(__file__).parent / "conform" / "test_mutation.py").read_text(encoding="utf-8")
    assert "def test_every_planted_bug_is_killed_by_the_catalogue_alone" in source
    assert "len(report.planted) == 43 and report.planted_survivors == []" in source
