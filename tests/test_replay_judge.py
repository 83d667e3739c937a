"""replay --sut judges the SUT against the spec: "is my fix right?" exits 0 when it is.

A trace that conform writes records the SUT's wrong outcome. With ``--sut`` the recorded outcomes are
shown but the verdict is the SUT's (``--judge-recorded`` counts them again), and where the rules
allow several outcomes (load balancing, F3 and I5 in docs/load-balancing.md) the SUT is judged as
conform judges it: any allowed outcome agrees unless ``--strict``. The table's symbols are explained
in a legend under it.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from pathlib import Path

import pytest

from brokerspec.cli import main
from brokerspec.conform.catalogue import all_cases
from brokerspec.conform.runner import CaseResult, Verdict, run_conformance
from brokerspec.conform.sut import InProcessSut, subject_factory
from brokerspec.render import REPLAY_LEGEND
from brokerspec.replay import replay
from brokerspec.spec import get_profile
from brokerspec.trace import read_trace

FIRST_MATCH = "planted:first-match-instead-of-ambiguous"
"""Resolves an ambiguous bare name to its first queue (against ADDR-LOOKUP-BARE-MANY)."""
SKIPS_AHEAD = "planted:position-advanced-on-skip"
"""Moves the round-robin position past every binding it scanned: another turn order the rules allow (F3)."""
PREFERS_CONSUMERS = "planted:strict-prefers-consumers"
"""Under STRICT picks a queue the rules do not allow (against LB-ROUND-ROBIN)."""


def failure_trace(tmp_path: Path, layer: str, case_name: str, profile: str, strict: bool = False) -> Path:
    """The trace conform writes for ``case_name`` failing on the planted ``layer``."""
    cases = [c for c in all_cases() if c.name == case_name]
    [result] = run_conformance(InProcessSut(layer), cases, get_profile(profile), strict, out_dir=tmp_path).results
    assert result.verdict is Verdict.FAILED and result.trace_path is not None, result.message
    return result.trace_path


def test_a_fixed_sut_passes_the_trace_of_its_own_failure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = failure_trace(tmp_path, FIRST_MATCH, "addressing/bare-name-ambiguous-after-second-bind", "seed")
    assert main(["replay", str(path), "--sut", "inproc:impl"]) == 0, "the fix agrees with the spec"
    out = capsys.readouterr().out
    assert "recorded outcomes are shown, not judged" in out and "(not judged)" in out
    assert main(["replay", str(path), "--sut", f"inproc:{FIRST_MATCH}"]) == 1, "the bug is still a bug"
    assert main(["replay", str(path), "--sut", "inproc:impl", "--judge-recorded"]) == 1, "the recording counts"
    assert main(["replay", str(path)]) == 1, "without a SUT the recording is what is judged"
    assert "recorded outcomes count in the verdict" in capsys.readouterr().out


def test_replay_judges_a_sut_permissively_as_conform_does_unless_strict(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = failure_trace(tmp_path, SKIPS_AHEAD, "balancing/position-restarts-at-zero-when-the-group-shrinks",
                         "artemis-latest", strict=True)
    trace = read_trace(path)
    sut = InProcessSut(SKIPS_AHEAD)
    report = replay(trace, {"sut": subject_factory(sut, "balancing")}, judge_recorded=False, permissive=("sut",))
    chosen = [s for s in report.steps if s.layers["sut"].outcome != s.spec]
    assert chosen and all(s.layers["sut"].allowed for s in chosen), "another turn order, allowed at every step"
    assert report.first_difference is None

    assert main(["replay", str(path), "--sut", f"inproc:{SKIPS_AHEAD}"]) == 0
    assert "(allowed)" in capsys.readouterr().out
    assert main(["replay", str(path), "--sut", f"inproc:{SKIPS_AHEAD}", "--strict"]) == 1
    assert "first difference" in capsys.readouterr().out


def test_an_outcome_no_rule_allows_fails_permissively_too(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = failure_trace(tmp_path, PREFERS_CONSUMERS, "balancing/strict-passes-over-a-disconnected-queue",
                         "artemis-latest")
    assert main(["replay", str(path), "--sut", f"inproc:{PREFERS_CONSUMERS}"]) == 1
    out = capsys.readouterr().out
    assert "(not an outcome the rules allow)" in out and 'sut: {"type": "sent"' in out
    assert main(["replay", str(path), "--sut", "inproc:impl"]) == 0


def test_the_legend_explains_every_symbol_the_table_uses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = failure_trace(tmp_path, SKIPS_AHEAD, "balancing/position-restarts-at-zero-when-the-group-shrinks",
                         "artemis-latest", strict=True)
    assert main(["replay", str(path), "--sut", f"inproc:{SKIPS_AHEAD}", "--strict"]) == 1
    out = capsys.readouterr().out
    table, _, legend = out.partition("\nlegend:\n")
    lines = legend.splitlines()
    explained = {line.split("  ")[1] for line in itertools.takewhile(lambda line: line.startswith("  "), lines)}
    used = {symbol for symbol in ("=", "-", "(allowed)", "(not judged)", "<- first difference", "(state differs)")
            if re.search(rf"[│ ]{re.escape(symbol)}[│ ]", table)}
    assert {"=", "-", "<- first difference"} <= used, "the strict replay marks these"
    assert used <= explained, used - explained
    assert explained == {symbol for symbol, _ in REPLAY_LEGEND}


def test_a_recheck_sees_every_run_result_and_what_it_returns_is_reported(tmp_path: Path) -> None:
    """``run_conformance``'s recheck hook (a real release's unseen differences) replaces results, run ones only."""
    cases = [c for c in all_cases() if c.name == "addressing/bare-name-ambiguous-after-second-bind"]
    seen: list[Verdict] = []

    def recheck(result: CaseResult) -> CaseResult:
        seen.append(result.verdict)
        return dataclasses.replace(result, verdict=Verdict.SUT_FAILURE, message="rechecked")

    report = run_conformance(InProcessSut(FIRST_MATCH), cases, get_profile("seed"), out_dir=tmp_path, recheck=recheck)
    assert seen == [Verdict.FAILED]
    assert [(r.verdict, r.message) for r in report.results] == [(Verdict.SUT_FAILURE, "rechecked")]
