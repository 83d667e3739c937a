"""``brokerspec diff`` explains a change: the options that differ, one short script per behaviour, both sides.

What is checked, each against facts computed independently of ``diff``:

- the options that differ are exactly the overridden ones, and they are printed before any script;
- a difference one operation shows on a fresh broker is reported as that one step, with each side's
  rule (the spec's own outcome under each profile, computed here, gives the rule IDs);
- the trace records both sides (profiles, both outcomes per step), reads back, validates against the
  schema, and its note says what each side gave; a side that raised is said to have raised, and only then;
- old traces still read; ``to_outcome`` without a ``diff`` header, and ``diff`` in an audited history, are
  errors naming the field;
- ``explain`` shows a trace of two sides side by side, and every rule's source beside its text;
- a revision whose spec lacks what this code imports is refused, naming it; ``--oldest`` bisects;
- the docs name no git revision the repository does not have.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped, unused-ignore]
import pytest

from brokerspec.check.domains import get_domain
from brokerspec.cli import main
from brokerspec.codec import COMMANDS
from brokerspec.conform.catalogue import RULE_TABLES
from brokerspec.conform.diff import Pair, Side, diff_domain, make_side, option_differences, play_both
from brokerspec.conform.diff_sides import DiffUsageError, oldest_runnable
from brokerspec.conform.one_step import one_step_commands
from brokerspec.conform.sut import InProcessSut
from brokerspec.spec import PROFILES, Outcome, get_profile
from brokerspec.spec.addressing import Lookup, NotFound
from brokerspec.trace import DiffSide, Trace, TraceError, TraceStep, dump_trace, parse_trace, read_header, read_trace

ROOT = Path(__file__).resolve().parents[2]
SEED = get_profile("seed")
FQQN_OFF = ("addressing.fqqn_checks_address", "false")
"""One option changed: the seed stops checking an FQQN's address part (rule ADDR-LOOKUP-FQQN vs -IGNORED)."""


def spec_outcomes(domain: str, profile_name: str, overrides: tuple[tuple[str, str], ...],
                  commands: tuple[Any, ...]) -> list[Outcome]:
    """The spec's own outcomes for ``commands`` under a profile, applied directly (no SUT, no diff code)."""
    chosen = get_domain(domain)
    state = chosen.initial_state(get_profile(profile_name, overrides))
    outcomes = []
    for command in commands:
        state, outcome = chosen.apply(state, command)
        outcomes.append(outcome)
    return outcomes


def profile_side(name: str, overrides: tuple[tuple[str, str], ...] = ()) -> Side:
    return make_side(name, get_profile("seed", overrides), Path("."), Path("."))


# --- the options that differ ------------------------------------------------------------------------


def test_option_differences_are_exactly_the_changed_options() -> None:
    plain, changed = profile_side("seed"), profile_side("seed", (("duplicates.id_cache_size", "3"), FQQN_OFF))
    assert option_differences(plain, changed) == [("addressing.fqqn_checks_address", True, False),
                                                  ("duplicates.id_cache_size", 20000, 3)]
    assert option_differences(plain, plain) == []


def test_diff_lists_the_differing_options_before_any_script(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["diff", "--from", "seed", "--to", "seed", "--set", "addressing.fqqn_checks_address=false",
                 "--domain", "addressing", "--budget", "1s", "--seed", "3", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out  # --set applies to both sides: the same options, the same spec, nothing may differ
    assert "set every option alike" in out and "options that differ" not in out
    plain = main(["diff", "--from", "artemis-2.11", "--to", "artemis-latest", "--domain", "duplicates",
                  "--budget", "1s", "--seed", "3", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert plain == 1, out
    latest, older = get_profile("artemis-latest").options(), get_profile("artemis-2.11").options()
    differing = [f"{d}.{o}" for d in latest for o in latest[d] if latest[d][o] != older[d][o]]
    assert differing, "the two releases differ in some option"
    assert f"options that differ: {len(differing)}" in out
    for name in differing:
        assert name in out, name
    assert out.index("options that differ") < out.index("the sides part here")


# --- one step first, rules of each side ---------------------------------------------------------------


def test_a_one_step_difference_is_found_as_one_step_with_each_sides_rule(tmp_path: Path) -> None:
    source, target = profile_side("seed"), profile_side("seed", (FQQN_OFF,))
    result = diff_domain(source, target, "addressing", 0.0, tmp_path, 1, None, 8)
    lookups = [f for f in result.findings if f.commands == (Lookup("a1::q1"),)]
    assert len(lookups) == 1, [f.commands for f in result.findings]
    found = lookups[0]
    assert found.found_by == "one step"
    want_from = spec_outcomes("addressing", "seed", (), found.commands)[-1]
    want_to = spec_outcomes("addressing", "seed", (FQQN_OFF,), found.commands)[-1]
    assert want_from != want_to
    assert (found.source_outcomes[-1], found.target_outcomes[-1]) == (want_from, want_to)
    assert found.behaviour == ("lookup", want_from.rule, want_to.rule) == ("lookup", "ADDR-LOOKUP-FQQN",
                                                                           "ADDR-LOOKUP-FQQN-IGNORED")
    assert all(len(f.commands) == 1 for f in result.findings), "with no budget only one-step scripts are found"
    assert len({f.behaviour for f in result.findings}) == len(result.findings), "one script per behaviour"


@pytest.mark.parametrize("domain", sorted(COMMANDS))
def test_one_step_scripts_cover_every_operation_of_every_domain(domain: str) -> None:
    listed = one_step_commands(domain)
    assert {command.op for command in listed} == set(COMMANDS[domain])
    assert len(listed) <= 200 * len(COMMANDS[domain])


def test_the_search_passes_over_a_behaviour_already_found() -> None:
    from hypothesis.errors import UnsatisfiedAssumption

    from brokerspec.conform.diff import Distinguished

    known = {("lookup", "ADDR-LOOKUP-FQQN", "ADDR-LOOKUP-FQQN-IGNORED")}
    fresh = Pair(InProcessSut("spec"), InProcessSut("spec"), "addressing", SEED, get_profile("seed", (FQQN_OFF,)))
    with pytest.raises(Distinguished):
        fresh.execute(Lookup("a1::q1"))
    seen = Pair(InProcessSut("spec"), InProcessSut("spec"), "addressing", SEED, get_profile("seed", (FQQN_OFF,)),
                known)
    with pytest.raises(UnsatisfiedAssumption):
        seen.execute(Lookup("a1::q1"))


# --- the trace of both sides ---------------------------------------------------------------------------


def test_the_trace_records_both_sides_and_a_true_note(tmp_path: Path) -> None:
    source, target = profile_side("seed"), profile_side("artemis-latest")
    result = diff_domain(source, target, "duplicates", 0.0, tmp_path, 1, None, 1)
    (found,) = result.findings
    assert found.trace is not None
    trace = read_trace(found.trace)
    assert trace.sides == (DiffSide("seed", SEED), DiffSide("artemis-latest", get_profile("artemis-latest")))
    commands = tuple(step.command for step in trace.steps)
    assert [s.outcome for s in trace.steps] == spec_outcomes("duplicates", "seed", (), commands)
    assert [s.to_outcome for s in trace.steps] == spec_outcomes("duplicates", "artemis-latest", (), commands)
    assert "raised" not in trace.note and "exception" not in trace.note
    last_from, last_to = trace.steps[-1].outcome, trace.steps[-1].to_outcome
    assert last_from is not None and last_to is not None
    assert f"rule {last_from.rule}" in trace.note and f"rule {last_to.rule}" in trace.note
    schema = json.loads((files("brokerspec") / "schemas" / "trace-v1.schema.json").read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    for line in found.trace.read_text(encoding="utf-8").splitlines():
        assert validator.is_valid(json.loads(line)), line


class RaisesOnLookup(InProcessSut):
    """The spec, except that a lookup raises, as a broken revision of the spec might."""

    def execute(self, command: Any) -> Any:
        if isinstance(command, Lookup):
            raise ValueError("lookup is broken here")
        return super().execute(command)


def test_a_side_that_raises_is_said_to_have_raised_and_the_other_to_have_answered() -> None:
    source = profile_side("seed")
    target = Side("broken", RaisesOnLookup("spec"), SEED)
    found = play_both(source, target, "addressing", [Lookup("a1::q1")])
    assert found is not None
    note = found.describe("seed", "broken")
    assert "broken raised ValueError: lookup is broken here" in note
    assert "seed gives" in note and "seed raised" not in note
    assert found.target_outcomes == (None,) and found.source_outcomes == (NotFound("a1::q1"),)


def test_traces_without_sides_still_read_and_misplaced_side_fields_are_errors() -> None:
    header = {"v": 1, "type": "header", "domain": "addressing", "profile": "seed", "overrides": {}}
    step = {"v": 1, "type": "step", "step": 1, "op": "lookup", "args": {"name": "q1"},
            "outcome": {"type": "not_found", "name": "q1"}}
    old = parse_trace([json.dumps(header), json.dumps(step)], "old.jsonl")
    assert old.sides is None and old.steps[0].to_outcome is None
    with pytest.raises(TraceError) as stray:
        parse_trace([json.dumps(header), json.dumps(step | {"to_outcome": {"type": "not_found", "name": "q1"}})],
                    "x.jsonl")
    assert stray.value.field == "to_outcome" and stray.value.line == 2
    side = {"name": "x", "profile": "artemis-latest", "overrides": {}}
    with pytest.raises(TraceError) as mismatch:
        parse_trace([json.dumps(header | {"diff": {"from": side, "to": side}})], "x.jsonl")
    assert mismatch.value.field == "diff.from"
    with pytest.raises(TraceError) as short:
        parse_trace([json.dumps(header | {"diff": {"from": side | {"profile": "seed", "revision": "abc"},
                                                   "to": side}})], "x.jsonl")
    assert short.value.field == "diff.from.revision"
    with pytest.raises(TraceError) as audited:  # a history reader (the audit) takes no diff header
        read_header(header | {"diff": {"from": side, "to": side}}, "h.jsonl", 1)
    assert audited.value.field == "diff"


# --- explain ---------------------------------------------------------------------------------------------


def flat(text: str) -> str:
    """Console text with the table borders and line breaks rich adds taken out, so long cells compare whole."""
    return " ".join(re.sub(r"[│┃║|]", " ", text).split())


def test_explain_shows_a_trace_of_two_sides_side_by_side(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seed, latest = SEED, get_profile("artemis-latest")
    command = Lookup("a1::q1")
    (first,) = spec_outcomes("addressing", "seed", (), (command,))
    (second,) = spec_outcomes("addressing", "artemis-latest", (), (command,))
    trace = Trace(seed, (TraceStep(command, first, second),),
                  sides=(DiffSide("seed", seed), DiffSide("artemis-latest", latest)))
    path = tmp_path / "two.jsonl"
    path.write_text(dump_trace(trace), encoding="utf-8")
    assert main(["explain", str(path)]) == 0, "every recorded outcome is the spec's under its side's profile"
    out = flat(capsys.readouterr().out)
    assert "<- the sides part here" in out and "seed and artemis-latest part at step 1" in out
    assert "NotFound(name=a1::q1)" in out and "NotFound(name=q1)" in out
    assert f"rule {first.rule}" in out and f"rule {second.rule}" in out
    wrong = Trace(seed, (TraceStep(command, first, first),), sides=trace.sides)
    path.write_text(dump_trace(wrong), encoding="utf-8")
    assert main(["explain", str(path)]) == 1, "the to side recorded an outcome its profile does not give"
    assert "not what was recorded" in capsys.readouterr().out


def test_explain_prints_each_rules_source_beside_its_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    command = Lookup("a1::q1")
    (outcome,) = spec_outcomes("addressing", "seed", (), (command,))
    rule = RULE_TABLES["addressing"][outcome.rule]
    assert rule.source
    path = tmp_path / "one.jsonl"
    path.write_text(dump_trace(Trace(SEED, (TraceStep(command, outcome),))), encoding="utf-8")
    assert main(["explain", str(path)]) == 0
    out = flat(capsys.readouterr().out)
    assert flat(f"rule {rule.id}: {rule.summary} (source: {rule.source})") in out


# --- revisions ---------------------------------------------------------------------------------------------


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
                               "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
                               "PATH": "/usr/bin:/bin"})
    return done.stdout.strip()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_revision_that_cannot_run_is_refused_by_name_and_oldest_finds_the_first_that_runs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Three commits: a spec lacking a name this code imports, then this spec, then a harmless change."""
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "spec", repo / "spec", ignore=shutil.ignore_patterns("__pycache__"))
    init = repo / "spec" / "__init__.py"
    text = init.read_text(encoding="utf-8")
    init.write_text(text + "\ndel ConsumerModel\n", encoding="utf-8")
    git(repo, "init", "-q")
    git(repo, "add", "spec")
    git(repo, "commit", "-q", "-m", "old")
    old = git(repo, "rev-parse", "HEAD")
    init.write_text(text, encoding="utf-8")
    git(repo, "commit", "-q", "-am", "runs")
    runs = git(repo, "rev-parse", "HEAD")
    (repo / "spec" / "note.txt").write_text("x", encoding="utf-8")
    git(repo, "add", "spec")
    git(repo, "commit", "-q", "-m", "later")
    with pytest.raises(DiffUsageError) as refused:
        make_side("HEAD~2", SEED, repo, tmp_path / "work")
    message = str(refused.value)
    assert "revision HEAD~2" in message and old[:12] in message and "ConsumerModel" in message
    assert oldest_runnable(repo, tmp_path / "work2", SEED)[0] == runs
    assert main(["diff", "--oldest", "--repo", str(repo)]) == 0
    assert f"oldest revision diff can run: {runs}" in capsys.readouterr().out
    assert main(["diff", "--from", "HEAD~2", "--to", "HEAD", "--repo", str(repo), "--budget", "1s"]) == 2
    capsys.readouterr()
    profiles = repo / "spec" / "profiles.py"
    source = profiles.read_text(encoding="utf-8")
    assert source.count("fqqn_checks_address=True") == 1, "the seed profile sets it"
    profiles.write_text(source.replace("fqqn_checks_address=True", "fqqn_checks_address=False"), encoding="utf-8")
    git(repo, "commit", "-q", "-am", "the seed stops checking an FQQN's address part")
    before, after = git(repo, "rev-parse", "HEAD~1"), git(repo, "rev-parse", "HEAD")
    out_dir = tmp_path / "out"
    assert main(["diff", "--from", "HEAD~1", "--to", "HEAD", "--repo", str(repo), "--domain", "addressing",
                 "--budget", "0.1s", "--out", str(out_dir)]) == 1
    out = flat(capsys.readouterr().out)
    assert "options that differ: 1" in out and "addressing.fqqn_checks_address true false" in out
    traces = [read_trace(path) for path in sorted(out_dir.glob("*.jsonl"))]
    lookups = [trace for trace in traces if trace.steps[-1].command == Lookup("a1::q1")]
    assert len(lookups) == 1
    sides = lookups[0].sides
    assert sides is not None and (sides[0].revision, sides[1].revision) == (before, after)
    assert (lookups[0].steps[-1].outcome, lookups[0].steps[-1].to_outcome) == (NotFound("a1::q1"), NotFound("q1"))


def test_diff_without_both_sides_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", "--from", "seed"]) == 2
    assert "--from and --to" in capsys.readouterr().err


def test_the_docs_name_only_profiles_and_revisions_that_exist() -> None:
    """Every side a ``diff`` example in the docs names is a profile or resolves in this repository."""
    texts = [(ROOT / "README.md").read_text(encoding="utf-8")]
    texts += [page.read_text(encoding="utf-8") for page in sorted((ROOT / "docs").glob("*.md"))]
    named = {name for text in texts for name in re.findall(r"diff --(?:from|to) (\S+)", text)}
    named |= {name for text in texts for name in re.findall(r"diff --from \S+ --to (\S+)", text)}
    assert named, "the docs show diff examples"
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    for name in sorted(named - set(PROFILES) - {"A", "B"}):
        done = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", "--quiet", f"{name}^{{commit}}"],
                              capture_output=True, check=False)
        assert done.returncode == 0, f"the docs name {name!r}, which is no revision of this repository"


def test_explain_shows_only_the_recording_for_a_side_that_is_a_git_revision(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    command = Lookup("a1::q1")
    (first,) = spec_outcomes("addressing", "seed", (), (command,))
    other = NotFound("elsewhere", rule="ADDR-SOME-RULE")  # what that revision's spec said: not this spec's outcome
    trace = Trace(SEED, (TraceStep(command, first, other),),
                  sides=(DiffSide("seed", SEED), DiffSide("HEAD~1", SEED, "0" * 40)))
    path = tmp_path / "revision.jsonl"
    path.write_text(dump_trace(trace), encoding="utf-8")
    assert main(["explain", str(path)]) == 0, "a revision's outcome is not judged by this spec"
    out = flat(capsys.readouterr().out)
    assert "its spec is not part of this brokerspec" in out and "rule ADDR-SOME-RULE (as recorded)" in out
    assert "NotFound(name=elsewhere)" in out and f"the spec at git commit {'0' * 40}" in out


def test_the_guides_one_step_examples_for_seed_against_artemis_latest(tmp_path: Path) -> None:
    """docs/conformance.md: seed and artemis-latest part in one step on lookup('a1::q1') and set_id_cache_size."""
    from brokerspec.spec.duplicates import SetIdCacheSize

    source, target = profile_side("seed"), profile_side("artemis-latest")
    addressing = diff_domain(source, target, "addressing", 0.0, tmp_path, 1, None, 100)
    lookup = [f for f in addressing.findings if f.commands == (Lookup("a1::q1"),)]
    assert [f.behaviour for f in lookup] == [("lookup", "ADDR-LOOKUP-FQQN", "ADDR-LOOKUP-FQQN-IGNORED")]
    duplicates = diff_domain(source, target, "duplicates", 0.0, tmp_path, 1, None, 100)
    sizes = [f for f in duplicates.findings if len(f.commands) == 1 and isinstance(f.commands[0], SetIdCacheSize)]
    assert sizes and all(f.found_by == "one step" for f in sizes)


def test_diff_says_when_it_stopped_at_the_limit_of_behaviours(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """seed and artemis-latest part on more than two behaviours in one step of address resolution."""
    source, target = profile_side("seed"), profile_side("artemis-latest")
    assert len(diff_domain(source, target, "addressing", 0.0, tmp_path, 1, None, 100).findings) > 2
    code = main(["diff", "--from", "seed", "--to", "artemis-latest", "--domain", "addressing", "--budget", "1s",
                 "--max-behaviours", "2", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1 and "2 distinguishing scripts" in out and "there may be more" in out
    assert "behaviour 3 of" not in out
    with pytest.raises(SystemExit) as refused:  # the argument parser refuses it before any work
        main(["diff", "--from", "seed", "--to", "seed", "--max-behaviours", "0"])
    assert refused.value.code == 2 and "--max-behaviours" in capsys.readouterr().err


def test_every_script_the_search_keeps_loses_its_behaviour_when_any_one_step_is_left_out(tmp_path: Path) -> None:
    """1-minimal per behaviour: without any single step the sides part no more, or part another way first."""
    source, target = profile_side("artemis-2.11"), profile_side("artemis-latest")
    result = diff_domain(source, target, "balancing", 4.0, tmp_path, 1, None, 8)
    searched = [f for f in result.findings if f.found_by == "search"]
    assert searched, "the search finds behaviours beyond the one-step ones"
    for found in searched:
        for index in range(len(found.commands)):
            shorter = found.commands[:index] + found.commands[index + 1:]
            again = play_both(source, target, "balancing", shorter)
            assert again is None or again.behaviour != found.behaviour, (found.commands, index)


class SlowToReset(InProcessSut):
    """The spec, taking a while to start afresh, as a revision served in a child process does."""

    def reset(self, domain: str, profile: Any) -> None:
        import time

        time.sleep(0.005)
        super().reset(domain, profile)


def test_the_search_runs_at_least_once_however_long_the_one_step_scripts_took(tmp_path: Path) -> None:
    source = Side("slow", SlowToReset("spec"), SEED)
    result = diff_domain(source, profile_side("seed"), "duplicates", 0.01, tmp_path, 1, None, 8)
    assert result.one_step_tried * 0.005 > 0.01, "the one-step scripts alone outlast the budget"
    assert result.examples > 0 and not result.findings, "the search still ran, and the same spec never parts"
