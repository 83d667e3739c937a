"""The catalogue is sound, brokerspec's layers pass it, it kills every planted bug, and its reports are readable."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from brokerspec.cli import main
from brokerspec.conform.catalogue import DOMAIN_ORDER, RULE_TABLES, Case, all_cases, check_catalogue, select
from brokerspec.conform.protocol import QUERIES_NEED_V2
from brokerspec.conform.runner import EXIT_CONFORMANCE_FAILURE, Verdict, run_conformance
from brokerspec.conform.sut import InProcessSut, SubprocessSut
from brokerspec.planted.registry import all_planted
from brokerspec.spec import PROFILES, get_profile, is_query
from brokerspec.spec.addressing import Lookup

from node_example import NODE_SUT, node_or_skip

CASES = all_cases()
SEEDS = {"addressing": "seed 000", "duplicates": "seed 001", "balancing": "seed 003", "topologies": "seed 002"}


def test_the_catalogue_breaks_none_of_its_own_rules() -> None:
    assert check_catalogue(CASES) == []
    for domain in DOMAIN_ORDER:
        mine = [c for c in CASES if c.domain == domain]
        assert len(mine) >= 30, domain
        assert any(SEEDS[domain] in c.source for c in mine), f"{domain}: no case cites its seed document"


def test_the_catalogue_checks_catch_what_they_claim() -> None:
    bad = [Case("addressing/x", "s", (Lookup("q"),), ("NO-SUCH-RULE",), "src"),
           Case("addressing/x", "s", (), (), ""), Case("nowhere/y", "s", (Lookup("q"),), ("R",), "src"),
           Case("addressing/z", "s", (Lookup("q"),), ("ADDR-MODEL",), "src", ("no-profile",))]
    problems = " | ".join(check_catalogue(bad))
    for expected in ("unknown rule IDs", "used twice", "no rule tags", "empty script", "no source",
                     "unknown domain", "bad profiles"):
        assert expected in problems, expected


def test_every_rule_of_every_domain_is_exercised() -> None:
    for domain in DOMAIN_ORDER:
        exercised = {r for c in CASES if c.domain == domain for p in c.profiles
                     for r in c.rules_exercised(get_profile(p))}
        missing = set(RULE_TABLES[domain]) - exercised
        assert not missing, f"{domain}: rules no case exercises: {sorted(missing)}"


def test_a_case_with_overrides_is_judged_and_run_under_them() -> None:
    """The core-protocol case: without its override the spec expects other outcomes, and the SUT must get it."""
    case = next(c for c in CASES if c.name == "addressing/core-protocol-fqqn-address-part-ignored")
    seed = get_profile("seed")
    assert case.expected(seed) != Case(case.name, case.summary, case.commands, case.rules, case.source).expected(seed)
    assert "ADDR-LOOKUP-FQQN-IGNORED" in case.rules_exercised(seed)
    report = run_conformance(InProcessSut("impl"), [case], seed)
    assert report.count(Verdict.PASSED) == 1
    with_overrides = [c for c in CASES if c.overrides]
    assert {c.domain for c in with_overrides} == {"addressing", "duplicates", "balancing"}
    bad = Case("addressing/y", "s", (Lookup("q"),), ("ADDR-MODEL",), "src", overrides=(("addressing.nope", "1"),))
    assert "bad override addressing.nope=1" in " | ".join(check_catalogue([bad]))


@pytest.mark.parametrize("layer", ["impl", "reference", "spec"])
@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_every_layer_passes_every_case_strictly(layer: str, profile: str) -> None:
    report = run_conformance(InProcessSut(layer), select(CASES, get_profile(profile)), get_profile(profile),
                             strict=True)
    failures = [r.message for r in report.results if r.verdict is not Verdict.PASSED]
    assert not failures, failures[0]
    assert report.exit_code() == 0


@pytest.mark.parametrize("domain_bug", all_planted(), ids=lambda db: f"{db[0]}:{db[1].name}")
def test_the_catalogue_kills_every_planted_bug(domain_bug: tuple[str, object]) -> None:
    """Outcomes only, as for any SUT; permissively where the spec allows several outcomes, except for the
    two balancing bugs that only move a hidden round-robin position (killed under --strict)."""
    domain, bug = domain_bug
    name = getattr(bug, "name")
    strict = name in {"position-not-reset-when-out-of-range", "on-demand-falls-back-to-first-local"}
    killed = []
    for profile_name in getattr(bug, "profiles"):
        profile = get_profile(profile_name)
        report = run_conformance(InProcessSut(f"planted:{name}"), select(CASES, profile, [domain]), profile, strict)
        killed += [r.case.name for r in report.results if r.verdict is Verdict.FAILED]
    assert killed, f"no case kills {name}"


def test_the_permissive_judge_lets_the_position_only_bugs_through() -> None:
    """The other side of the strict exception above: permissively these bugs pass, as the docs say."""
    profile = get_profile("artemis-latest")
    report = run_conformance(InProcessSut("planted:position-not-reset-when-out-of-range"),
                             select(CASES, profile, ["balancing"]), profile, strict=False)
    assert report.count(Verdict.FAILED) == 0


def test_conform_over_the_pipe_with_a_planted_bug_fails_and_writes_both_reports(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sut = f"{sys.executable} -m brokerspec.conform.serve --layer planted:message-ttl-ignored"
    code = main(["conform", "--sut", sut, "--profile", "artemis-latest", "--domain", "topologies",
                 "--out", str(tmp_path), "--junit", str(tmp_path / "j.xml"), "--json", str(tmp_path / "r.json")])
    out = capsys.readouterr().out
    assert code == EXIT_CONFORMANCE_FAILURE
    assert "rule coverage" in out and "TOPO-MSG-TTL" in out and "the expected outcome was decided by rule" in out
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["totals"]["failed"] >= 1 and report["exit_code"] == 1
    assert any(row["rule"] == "TOPO-MSG-TTL" and row["failed"] for row in report["rules"])
    suite = ElementTree.parse(tmp_path / "j.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("name") == "brokerspec.topologies"
    assert int(suite.get("failures", "0")) == report["totals"]["failed"]
    assert suite.find("testcase/failure") is not None


def test_conform_over_the_pipe_passes_for_the_impl(tmp_path: Path) -> None:
    sut = SubprocessSut([sys.executable, "-m", "brokerspec.conform.serve", "--layer", "impl"])
    profile = get_profile("artemis-latest")
    try:
        report = run_conformance(sut, select(CASES, profile), profile)
    finally:
        sut.close()
    assert report.count(Verdict.PASSED) == len(report.results)


def test_node_example_passes_the_addressing_catalogue_under_the_seed_and_skips_the_rest() -> None:
    node = node_or_skip()
    for name in sorted(PROFILES):
        profile = get_profile(name)
        sut = SubprocessSut([node, str(NODE_SUT)])
        try:
            report = run_conformance(sut, select(CASES, profile), profile)
        finally:
            sut.close()
        assert report.hello is not None and report.hello.domains == ("addressing",)
        assert not report.hello.answers_queries, "the example speaks protocol version 1"
        asks = [r for r in report.results if any(is_query(c) for c in r.case.commands)]
        ran = [r for r in report.results if r.case.domain == "addressing" and name == "seed" and r not in asks]
        assert all(r.verdict is Verdict.PASSED for r in ran), [r.message for r in ran if r.message][:1]
        assert (name == "seed") == bool(ran)
        assert all(r.verdict is Verdict.SKIPPED for r in report.results if r not in ran)
        assert all(r.message == QUERIES_NEED_V2 for r in asks if r.case.domain == "addressing" and name == "seed")


def test_catalogue_export_writes_one_jsonl_per_domain_with_expected_outcomes(tmp_path: Path) -> None:
    assert main(["catalogue", "export", str(tmp_path), "--profile", "seed"]) == 0
    for domain in DOMAIN_ORDER:
        lines = (tmp_path / f"{domain}.jsonl").read_text().splitlines()
        assert len(lines) == sum(1 for c in CASES if c.domain == domain)
        first = json.loads(lines[0])
        assert set(first) >= {"name", "steps", "expected", "rules", "source", "rules_exercised", "overrides"}
        if "seed" in first["expected"]:
            assert len(first["expected"]["seed"]) == len(first["steps"])
    with pytest.raises(SystemExit) as refused:  # a file where the folder should be: refused while parsing
        main(["catalogue", "export", str(tmp_path / "addressing.jsonl")])
    assert refused.value.code == 2


def test_catalogue_list_and_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalogue", "list"]) == 0
    assert "addressing/" in capsys.readouterr().out
    assert main(["conform", "--sut", "inproc:impl", "--case", "no-such-case-name"]) == 2
    assert main(["conform", "--sut", "inproc:nonsense"]) == 2
    assert main(["conform", "--sut", "inproc:planted:nonsense"]) == 2


def test_the_pytest_plugin_runs_the_catalogue_as_items(tmp_path: Path) -> None:
    """A separate pytest process, as a broker project would run it: items named after cases, -k selects."""
    (tmp_path / "conftest.py").write_text("")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--brokerspec-sut",
                           "inproc:planted:count-not-decremented-on-delete", "--brokerspec-profile", "seed",
                           "--brokerspec-domain", "addressing", "-k", "delete", str(tmp_path)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300, check=False)
    assert done.returncode == 1, done.stdout[-2000:]
    assert "failed" in done.stdout and "passed" in done.stdout
    assert "addressing/delete-by-bare-name-forgets-the-name" in done.stdout
    assert "the expected outcome was decided by rule" in done.stdout
    clean = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--brokerspec-sut",
                            "inproc:impl", "--brokerspec-domain", "topologies", str(tmp_path)],
                           capture_output=True, text=True, cwd=tmp_path, timeout=300, check=False)
    assert clean.returncode == 0, clean.stdout[-2000:]
    assert f"{sum(1 for c in CASES if c.domain == 'topologies')} passed" in clean.stdout


def test_the_pytest_plugin_imports_nothing_of_the_spec_until_asked() -> None:
    """pytest loads the plugin in every session, before coverage starts: the spec must not be imported then,
    or its module bodies would count as never run (and every pytest run would pay for the import)."""
    probe = ("import sys, brokerspec.conform.pytest_plugin\n"
             "print(sorted(m for m in sys.modules if m.startswith(('brokerspec.spec', 'brokerspec.reference', "
             "'brokerspec.impl', 'brokerspec.conform.catalogue'))))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "[]"


def test_the_pytest_plugin_names_a_bad_profile(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text("")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--brokerspec-sut",
                           "inproc:impl", "--brokerspec-profile", "artemis-9", str(tmp_path)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300, check=False)
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    assert "--brokerspec-profile 'artemis-9'" in done.stderr
