"""brokerspec mutation-score: enumerating cosmic-ray's mutants, running them in forked children, judging them.

The whole measurement (every mutant of impl/ and every planted bug) is the deep tier (``make mutation``);
these tests run a handful of mutants each, chosen by what they change, so they stay fast.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path

import pytest

from brokerspec.cli import main
from brokerspec.conform.catalogue import all_cases
from brokerspec.conform.forked import Trial, run_forked
from brokerspec.conform.mutation import (
    ANNOTATION,
    EQUIVALENT,
    SELF_CHECK,
    SOLVER,
    STATE_VIEW,
    SURVIVED,
    Mutant,
    Plan,
    SuiteSettings,
    baseline_problems,
    file_mutants,
    left_out_reason,
    measure,
    mutated_source,
    operators,
    plan,
    survivor_fate,
    thin,
)

BROKER = "impl/addressing/broker.py"


def test_mutants_are_enumerated_with_their_place_and_self_checks_left_out_by_reason() -> None:
    default = plan([BROKER], operator_filter=["ReplaceComparisonOperator_Eq_NotEq"])
    everything = plan([BROKER], operator_filter=["ReplaceComparisonOperator_Eq_NotEq"], everything=True)
    assert default.mutants, "the broker compares with == somewhere"
    assert all(m.domain == "addressing" and m.module == "brokerspec.impl.addressing.broker" for m in default.mutants)
    assert not any("check_valid" in m.definition or "snapshot" in m.definition for m in default.mutants)
    assert any("check_valid" in m.definition for m in everything.mutants)
    assert default.left_out[SELF_CHECK] == len(everything.mutants) - len(default.mutants)
    source = Path(default.sources[BROKER][1]).read_text(encoding="utf-8")
    for mutant in default.mutants:
        assert "==" in source.splitlines()[mutant.line - 1]
        assert "!=" in mutated_source(source, mutant).splitlines()[mutant.line - 1]
    whole = plan(domains=["addressing"])
    assert whole.left_out[SOLVER] > 0, "lookup.py is a CrossHair entry point"
    assert set(whole.left_out) <= {ANNOTATION, SELF_CHECK, STATE_VIEW, SOLVER}


def test_changes_inside_annotations_are_counted_not_run() -> None:
    source = "from __future__ import annotations\n\ndef f(a: int | None, b: int) -> int | str:\n    return b | 1\n"
    ops = [(n, o) for n, o in operators() if n == "core/ReplaceBinaryOperator_BitOr_BitAnd"]
    mutants, in_annotations = file_mutants("impl/addressing/toy.py", source, ops)
    assert in_annotations == 2
    assert [(m.line, m.definition) for m in mutants] == [(4, "f")]


def test_thin_spreads_a_sample_evenly() -> None:
    items = [Mutant("f", "m", "addressing", "op", i, i, 0, "") for i in range(10)]
    assert [m.occurrence for m in thin(items, 5)] == [0, 2, 4, 6, 8]
    assert thin(items, None) == items and thin(items, 50) == items


def test_a_child_that_hangs_is_killed_and_one_that_dies_is_a_crash() -> None:
    def hang() -> Trial:
        time.sleep(60)
        return None, "", ""

    def die() -> Trial:
        os._exit(7)

    def fine() -> Trial:
        Path("stray-file").write_text("a mutant's litter")
        return ("case", os.getcwd()), "a", "b"

    seen: dict[int, Trial] = {}
    started = time.monotonic()
    run_forked([hang, die, fine], 3, 2.0, lambda i, trial, s: seen.__setitem__(i, trial))
    assert not Path("stray-file").exists(), "a child works in a scratch folder, not here"
    kill = seen[2][0]
    assert kill is not None and not Path(kill[1]).exists(), "and the scratch folder is removed"
    assert time.monotonic() - started < 30
    assert seen[0][0] == ("timeout", "still running after 2 s")
    assert seen[1][0] == ("crash", "the child died with exit code 7")
    assert seen[2][1:] == ("a", "b")


def test_the_catalogue_kills_mutants_a_suite_without_cases_lets_through() -> None:
    """The planted weakness: the same mutants against no cases and no fuzzing all survive as gaps."""
    mutants = plan([BROKER], operator_filter=["AddNot"], sample=4)
    full = measure(mutants, SuiteSettings(fuzz_examples=0), jobs=2, planted=False)
    empty = measure(mutants, SuiteSettings(fuzz_examples=0, case_pattern="no-case-has-this-name"), jobs=2,
                    planted=False)
    assert full.count("case") >= 2
    assert empty.count(SURVIVED) == len(mutants.mutants)
    assert all(o.detail.startswith(("gap", "hidden state")) for _, o in empty.mutants)
    assert empty.score == 0.0 and full.score > empty.score


def test_a_survivor_whose_state_is_wrong_is_told_apart_from_a_gap() -> None:
    """The load-balancing broker numbering its queues from 2 instead of 1 keeps every order a client sees (the
    serial only orders the bindings), so outcomes and queries stay right: only brokerspec's state-comparing
    check sees it."""
    candidates = plan(["impl/balancing/broker.py"], operator_filter=["NumberReplacer"])
    source = candidates.sources["impl/balancing/broker.py"][0].splitlines()
    shifted = [m for m in candidates.mutants if m.definition == "FastBalancingBroker.__init__"
               and "self._next_serial = 1" in source[m.line - 1]]
    assert shifted
    the_plan = Plan(shifted[:1], candidates.sources, {})
    report = measure(the_plan, SuiteSettings(fuzz_examples=20), jobs=1, planted=False)
    (_, outcome), = report.mutants
    assert outcome.fate == SURVIVED and outcome.detail.startswith("hidden state"), outcome


def test_the_unmutated_impl_passes_the_suite() -> None:
    assert baseline_problems(all_cases(), SuiteSettings(fuzz_examples=3), ["addressing", "duplicates"]) == []


def test_the_command_prints_the_tables_writes_the_reports_and_exits_by_the_target(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["mutation-score", "--file", BROKER, "--operator", "AddNot",
            "--sample", "3", "--fuzz-examples", "0", "--no-planted", "--out", str(tmp_path)]
    code = main([*args, "--target", "0"])
    out = capsys.readouterr().out
    assert code == 0
    assert "mutants of impl/ by file" in out and "mutation score" in out and "not run" in out
    data = json.loads((tmp_path / "mutation-score.json").read_text())
    assert data["mutants"] == 3 and sum(data["fates"].values()) == 3
    assert data["left_out"][SELF_CHECK] > 0
    assert main([*args, "--case", "no-case-has-this-name", "--target", "50"]) == 1
    out = capsys.readouterr().out
    assert "NOT met" in out and "survivors (3)" in out
    assert len((tmp_path / "survivors.txt").read_text().splitlines()) == 9
    earlier = tmp_path / "earlier.json"
    earlier.write_text((tmp_path / "mutation-score.json").read_text())
    survivors = {(r["file"], r["line"], r["occurrence"]) for r in json.loads(earlier.read_text())["results"]}
    rerun = ["mutation-score", "--file", BROKER, "--fuzz-examples", "0", "--no-planted", "--out", str(tmp_path),
             "--survivors-of", str(earlier), "--target", "0"]
    assert main(rerun) == 0
    assert "3 mutants of 1 files" in capsys.readouterr().out
    again = json.loads((tmp_path / "mutation-score.json").read_text())["results"]
    assert {(r["file"], r["line"], r["occurrence"]) for r in again} == survivors
    assert main([*rerun[:-3], str(tmp_path / "survivors.txt")]) == 2
    assert "not a mutation-score.json report" in capsys.readouterr().out
    assert main(["mutation-score", "--file", "impl/nowhere.py"]) == 2
    assert "not a file of impl/: impl/nowhere.py" in capsys.readouterr().out
    assert main(["mutation-score", "--operator", "NoSuchOperator"]) == 2
    with pytest.raises(SystemExit) as refused:  # refused by the argument parser, before any work
        main(["mutation-score", "--jobs", "0"])
    assert refused.value.code == 2


def test_a_survivor_is_equivalent_only_for_a_stated_reason() -> None:
    def mutant(operator: str) -> Mutant:
        return Mutant("impl/x.py", "m", "addressing", operator, 0, 2, 0, "f")

    source = ("x = 1\n"
              "LIMIT = 1 << 16  # equivalent mutants: allocation only\n")
    flagged = "x = 1\nFLAGS = A | B  # equivalent mutants (BitXor, Add): distinct bits\n"
    fate, why, _ = survivor_fate(mutant("core/ReplaceBinaryOperator_LShift_Add"), source, None, None)
    assert (fate, why) == (EQUIVALENT, "equivalent: declared: allocation only (held over its check)")
    assert survivor_fate(mutant("core/ReplaceBinaryOperator_BitOr_BitXor"), flagged, None)[0] == EQUIVALENT
    assert survivor_fate(mutant("core/ReplaceBinaryOperator_BitOr_Sub"), flagged, None)[0] == SURVIVED
    assert survivor_fate(mutant("core/ReplaceComparisonOperator_Eq_Is"), "x\ny\n", None)[1].startswith(
        "equivalent: identity swap")
    assert survivor_fate(mutant("core/AddNot"), "x\ny\n", None)[1].startswith("gap")
    hidden = survivor_fate(mutant("core/AddNot"), source, ("fuzz", "step 3"))
    assert hidden[0] == SURVIVED and hidden[1].startswith("hidden state"), "a state difference beats a declaration"


def test_equivalent_mutants_leave_the_denominator_and_stay_in_the_raw_score() -> None:
    from brokerspec.conform.mutation import MutationReport, Outcome

    one = Mutant("impl/x.py", "m", "addressing", "op", 0, 1, 0, "f")
    report = MutationReport(SuiteSettings(), mutants=[
        (one, Outcome("case", "c")), (one, Outcome("strict", "s")), (one, Outcome(SURVIVED, "gap: g")),
        (one, Outcome(EQUIVALENT, "equivalent: declared: d"))])
    assert report.score == pytest.approx(200 / 3) and report.raw_score == 50.0
    assert report.default_score == pytest.approx(100 / 3)
    assert report.by_file() == [("impl/x.py", 4, 1, 1, 1, 1)]
    assert report.reasons(EQUIVALENT) == {"declared": 1} and report.reasons() == {"gap": 1}


def test_every_planted_bug_is_killed_by_the_catalogue_alone() -> None:
    """The planted half of the score: two load-balancing bugs only change which allowed consumer is chosen,
    so only --strict kills them; every other one the default suite kills (those that keep or never take turns
    by its fairness check, LB-FAIR-TURNS: position-advanced-on-skip since a lone node round-robins under OFF,
    LB-TYPE-ADOPTED)."""
    report = measure(Plan([], {}, {}), SuiteSettings(fuzz_examples=0), jobs=2, planted=True)
    assert len(report.planted) == 43 and report.planted_survivors == []
    strict = sorted(name for _, name, outcome in report.planted if outcome.fate == "strict")
    assert strict == ["on-demand-falls-back-to-first-local", "position-not-reset-when-out-of-range"]
    assert all(o.detail.startswith("allowed outcome") for _, n, o in report.planted if n in strict)


def test_the_fast_balancing_snapshot_is_a_state_view_left_out_by_default() -> None:
    view = "impl/balancing/snapshot.py"
    everything, default = plan([view], everything=True), plan([view])
    assert everything.mutants, "the snapshot module has mutants to leave out"
    assert not default.mutants and default.left_out[STATE_VIEW] == len(everything.mutants)
    method = Mutant("impl/balancing/broker.py", "m", "balancing", "op", 0, 1, 0, "FastBalancingBroker.snapshot_like")
    assert left_out_reason(method) == STATE_VIEW
    assert left_out_reason(dataclasses.replace(method, definition="FastBalancingBroker.execute")) is None
