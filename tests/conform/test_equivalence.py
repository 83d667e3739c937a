"""Declared-equivalent mutants are checked, not trusted (brokerspec.conform.equivalence).

The check of every declaration is the deep tier (``make mutation``); here a fixed sample of declared lines is
checked (so a declaration an edit broke shows in CI), and planted wrong declarations prove the check and the
report catch what they claim to.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from brokerspec.conform.equivalence import (
    BROKEN,
    HELD,
    IDENTITY_KIND,
    IDENTITY_REASON,
    NOT_RUN,
    STATE_VIEW_KIND,
    UNCHECKED,
    UNUSED,
    Declaration,
    EquivalenceCheckError,
    baseline_problem,
    declaration_for,
    declaration_lines,
    declaration_verdicts,
    file_declarations,
    line_declarations,
    sample_of,
)
from brokerspec.conform import mutation
from brokerspec.conform.forked import Trial, run_forked
from brokerspec.conform.mutation import (
    EQUIVALENT,
    SURVIVED,
    Mutant,
    MutationReport,
    Outcome,
    Plan,
    SuiteSettings,
    measure,
    mutant_trial,
    plan,
    survivor_fate,
)
from brokerspec.planted.registry import all_planted

SAMPLE_SCRIPTS = 4
"""Scripts per alphabet and profile in the fast tier's sample check (the deep tier uses the default, 100)."""

FAST_EVERY = 12
"""The fast tier's sample: each file's first declared line and every twelfth (``--equivalents sample`` takes every
sixth, ``make mutation`` checks them all)."""


def _mutant(operator: str, line: int = 2, file: str = "impl/x.py") -> Mutant:
    return Mutant(file, "m", "addressing", operator, 0, line, 0, "f")


def _in_children(tasks: list[Callable[[], Trial]]) -> list[Trial]:
    """Run each task in a forked child (a mutant is loaded into the process that runs it)."""
    results: dict[int, Trial] = {}
    run_forked(tasks, os.cpu_count() or 1, 300.0, lambda i, trial, seconds: results.__setitem__(i, trial))
    return [results[i] for i in range(len(tasks))]


def test_a_declaration_names_its_line_reason_and_operators() -> None:
    plain, = line_declarations("impl/x.py", 4, "x = 1  # equivalent mutants: allocation only")
    assert plain == Declaration("impl/x.py", 4, "allocation only") and plain.covers("core/AddNot")
    named, = line_declarations("impl/x.py", 5, "f = a | b  # equivalent mutants (BitXor, Add): distinct bits")
    assert named.operators == ("BitXor", "Add") and named.label == "impl/x.py:5"
    assert named.covers("core/ReplaceBinaryOperator_BitOr_BitXor")
    assert not named.covers("core/ReplaceBinaryOperator_BitOr_Sub")
    assert line_declarations("impl/x.py", 6, "x = 1  # an ordinary comment") == []
    source = "x = 1\nf = a | b  # equivalent mutants (BitXor): distinct bits\n"
    assert declaration_for(_mutant("core/ReplaceBinaryOperator_BitOr_Sub"), source) is None
    assert declaration_for(_mutant("core/ReplaceComparisonOperator_Eq_Is", line=1), source) == Declaration(
        "impl/x.py", 1, IDENTITY_REASON, ("_Eq_Is", "_NotEq_IsNot", "_Is_Eq", "_IsNot_NotEq"), IDENTITY_KIND)
    assert [d.line for d in file_declarations("impl/x.py", source * 2)] == [2, 4]
    view, = line_declarations("impl/x.py", 7, "self.kept = False  # state view: only the snapshot reads it")
    assert view == Declaration("impl/x.py", 7, "only the snapshot reads it", (), STATE_VIEW_KIND)
    both = "p = n if n < size else 0  # equivalent mutants (Lt_NotEq): n <= size  # state view (NumberReplacer): -1 reads as 0"
    first, second = line_declarations("impl/x.py", 8, both)
    assert (first.reason, first.operators, first.kind) == ("n <= size", ("Lt_NotEq",), "equivalent mutants")
    assert (second.reason, second.operators, second.kind) == ("-1 reads as 0", ("NumberReplacer",), STATE_VIEW_KIND)
    two = f"x = 1\n{both}\n"
    on_two = line_declarations("impl/x.py", 2, both)
    assert declaration_for(_mutant("core/NumberReplacer"), two) == on_two[1], "each mutant gets the claim about it"
    assert declaration_for(_mutant("core/ReplaceComparisonOperator_Lt_NotEq"), two) == on_two[0]
    assert declaration_for(_mutant("core/ReplaceComparisonOperator_Lt_Gt"), two) is None
    assert len(file_declarations("impl/x.py", two)) == 2


def test_the_sample_takes_each_files_first_declaration_and_every_sixth() -> None:
    declarations = [Declaration(f"impl/{f}.py", line, "r") for f in "ab" for line in range(1, 11)]
    picked = sample_of(declarations)
    assert picked == {("impl/a.py", 1), ("impl/a.py", 7), ("impl/b.py", 1), ("impl/b.py", 3), ("impl/b.py", 9)}
    assert sample_of(list(reversed(declarations))) == picked, "the sample does not depend on the order given"


def test_a_survivors_fate_follows_its_declarations_check() -> None:
    source = "x = 1\nLIMIT = 1 << 16  # equivalent mutants: allocation only\n"
    shift = _mutant("core/ReplaceBinaryOperator_LShift_Add")
    assert survivor_fate(shift, source, None, None) == (
        EQUIVALENT, "equivalent: declared: allocation only (held over its check)", HELD)
    assert survivor_fate(shift, source, None) == (
        EQUIVALENT, "equivalent: declared: allocation only (not checked)", UNCHECKED)
    fate, why, verdict = survivor_fate(shift, source, None, (BROKEN, "seed, wide alphabet: step 3: ..."))
    assert (fate, verdict) == (SURVIVED, BROKEN) and why.startswith("broken declaration: 'allocation only'")
    assert survivor_fate(shift, source, None, ("timeout", "still running"))[2] == BROKEN
    assert survivor_fate(shift, source, None, ("crash", "OSError"))[2] == UNCHECKED, "a harness error is no verdict"
    hidden = survivor_fate(shift, source, ("fuzz", "step 3"), None)
    assert hidden[0] == SURVIVED and hidden[2] == BROKEN and "'allocation only' is wrong" in hidden[1]
    assert survivor_fate(_mutant("core/AddNot"), "x\ny\n", ("fuzz", "s"), None)[2] == "", "nothing was declared"
    view = "x = 1\nself.kept = False  # state view: only the snapshot reads it\n"
    flag = _mutant("core/ReplaceFalseWithTrue")
    assert survivor_fate(flag, view, ("fuzz", "the states differ"), None) == (
        EQUIVALENT, "equivalent: state view: only the snapshot reads it (held over its check)", HELD), \
        "a state view's claim is that only the snapshot differs: its own check (outcomes, self-checks) judges it"
    assert survivor_fate(flag, view, ("fuzz", "the states differ"), (BROKEN, "step 2: outcomes"))[2] == BROKEN
    assert survivor_fate(_mutant("core/AddNot"), "x\ny\n", None, None)[1].startswith("gap")


def test_the_three_scores_and_the_declarations_verdicts() -> None:
    source = "a = 1  # equivalent mutants: r1\nb = 2  # equivalent mutants: r2\nc = 3  # equivalent mutants: r3\n" \
             "d = 4  # equivalent mutants: r4\ne = 5\n"
    add = "core/NumberReplacer"
    results = [
        (_mutant(add, 1), Outcome(EQUIVALENT, "equivalent: declared: r1 (held over its check)", equivalence=HELD)),
        (_mutant(add, 2), Outcome(EQUIVALENT, "equivalent: declared: r2 (not checked)", equivalence=UNCHECKED)),
        (_mutant(add, 3), Outcome(SURVIVED, "broken declaration: 'r3' is wrong: step 2", equivalence=BROKEN)),
        (_mutant(add, 4), Outcome("case", "c")),
        (_mutant(add, 5), Outcome("case", "c")),
        (_mutant("core/ReplaceComparisonOperator_Eq_Is", 5), Outcome("case", "c")),
    ]
    report = MutationReport(SuiteSettings(), mutants=results)
    assert report.score == pytest.approx(100 * 3 / 4), "held and unchecked equivalents leave the denominator"
    assert report.checked_score == pytest.approx(100 * 3 / 5), "an unchecked declaration counts as a survivor"
    assert report.raw_score == pytest.approx(100 * 3 / 6)
    verdicts = declaration_verdicts(results, {"impl/x.py": source, "impl/y.py": "z = 0  # equivalent mutants: r5\n"})
    assert [(v.declaration.label, v.verdict) for v in verdicts] == [
        ("impl/x.py:1", HELD), ("impl/x.py:2", UNCHECKED), ("impl/x.py:3", BROKEN), ("impl/x.py:4", UNUSED),
        ("impl/y.py:1", NOT_RUN)], "an identity swap the suite kills is not listed"
    lines = list(declaration_lines(verdicts, 100))
    assert "impl/x.py:3 [broken] covers 1 mutants: 0 held over 100 scripts per alphabet and profile" in lines[4]
    assert lines[6] == "    broken by impl/x.py:3 NumberReplacer #0: broken declaration: 'r3' is wrong: step 2"


def test_the_check_judges_only_once_the_unmutated_impl_passes_its_scripts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Planted: a duplicate-detection bug stands in for the unmutated impl; the baseline names what it got wrong
    (and the run then refuses to judge any mutant), while the real impl passes."""
    bug = next(b for domain, b in all_planted() if domain == "duplicates")
    problem = baseline_problem("duplicates", 50, subject=bug.broker)
    assert problem is not None and problem.startswith("the unmutated impl parted from the spec"), problem
    assert "script:" in problem
    assert baseline_problem("duplicates", SAMPLE_SCRIPTS) is None
    monkeypatch.setattr(mutation, "baseline_problem", lambda domain, scripts, seed: f"{domain}: planted")
    with pytest.raises(EquivalenceCheckError, match="cannot judge: duplicates: planted"):
        mutation._equivalence_baseline(["duplicates"], SuiteSettings(), 1)


def _on_line(file: str, text: str, operator: str) -> tuple[Mutant, str, Path]:
    found = plan([file], operator_filter=[operator])
    source, path = found.sources[file]
    lines = source.splitlines()
    mutant = next(m for m in found.mutants if text in lines[m.line - 1])
    return mutant, source, path


def test_a_wrong_declaration_is_broken_by_a_script_and_a_right_one_holds() -> None:
    """Planted wrong declaration: restarting a reloaded cache's cursor at 1 rather than 0 is no equivalent
    change, whatever a pragma would say; stamping in steps of two is one (stamps are only compared)."""
    wrong = _on_line("impl/duplicates/cache.py", "self.position = 0 if len(keys) == self.size", "NumberReplacer")
    right = _on_line("impl/duplicates/cache.py", "log.stamp += 1", "NumberReplacer")
    settings = SuiteSettings(equivalence_scripts=25)
    broken, held = _in_children([
        lambda: mutant_trial(*wrong, [], settings, "equivalence"),
        lambda: mutant_trial(*right, [], settings, "equivalence"),
    ])
    assert broken[0] is not None and broken[0][0] == BROKEN, broken
    assert "script: 1. " in broken[0][1] and "alphabet: step" in broken[0][1], broken[0][1]
    assert held[0] is None, held


def test_the_sampled_declarations_hold() -> None:
    """The fast tier's check: every mutant a sampled declaration covers passes the check or is killed by the
    suite, in default or strict mode (a declaration is only needed for a survivor)."""
    whole = plan()
    sources = {name: text for name, (text, _) in whole.sources.items()}
    lines = sample_of([d for name, text in sources.items() for d in file_declarations(name, text)], FAST_EVERY)
    covered = [m for m in whole.mutants if (m.file, m.line) in lines
               and (claim := declaration_for(m, sources[m.file])) is not None and claim.kind != IDENTITY_KIND]
    assert len(covered) >= 30, "the sample covers every domain's declarations"
    assert {m.domain for m in covered} == {"addressing", "duplicates", "balancing", "topologies"}
    settings = SuiteSettings(fuzz_examples=10, equivalence_scripts=SAMPLE_SCRIPTS)

    def trial(mutant: Mutant, mode: str) -> Callable[[], Trial]:
        source, path = whole.sources[mutant.file]
        return lambda: mutant_trial(mutant, source, path, cases, settings, mode)

    from brokerspec.conform.catalogue import all_cases

    cases = all_cases()
    checked = _in_children([trial(m, "equivalence") for m in covered])
    parted = [m for m, result in zip(covered, checked) if result[0] is not None]
    suite = _in_children([trial(m, "suite") for m in parted])
    alive = [m for m, result in zip(parted, suite) if result[0] is None]
    strict = _in_children([trial(m, "strict") for m in alive])  # an allowed outcome --strict kills is killed
    broken = [(m.label, checked[covered.index(m)][0]) for m, result in zip(alive, strict) if result[0] is None]
    assert broken == [], f"declarations a script breaks (and the suite does not kill the mutant): {broken}"


def test_a_planted_wrong_declaration_ends_as_a_survivor_named_wrong_in_the_report() -> None:
    """End to end: a pragma planted on a line whose mutant is not equivalent (a reloaded cache's cursor restarted
    at 1) cannot hide it; with no case and no fuzzing to kill it, the report names the declaration broken."""
    mutant, source, path = _on_line("impl/duplicates/cache.py", "self.position = 0 if len(keys) == self.size",
                                    "NumberReplacer")
    lines = source.splitlines(keepends=True)
    code = lines[mutant.line - 1].split("  #", 1)[0].rstrip("\n")
    lines[mutant.line - 1] = code + "  # equivalent mutants: planted claim\n"
    planted = "".join(lines)
    the_plan = Plan([mutant], {mutant.file: (planted, path)}, {})
    settings = SuiteSettings(fuzz_examples=0, case_pattern="no-case-has-this-name", equivalence_scripts=10)
    report = measure(the_plan, settings, jobs=1, planted=False)
    (_, outcome), = report.mutants
    assert (outcome.fate, outcome.equivalence) == (SURVIVED, BROKEN), outcome
    assert "'planted claim' is wrong" in outcome.detail
    claim = next(v for v in report.declarations if v.declaration.reason == "planted claim")
    assert claim.verdict == BROKEN and claim.broken[0][0] == mutant.label
    assert report.score == report.checked_score == 0.0
