"""fuzz, replay --sut, explain and diff against in-process layers, planted bugs and broken SUTs."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from brokerspec.cli import main
from brokerspec.conform.diff import Pair, Distinguished
from brokerspec.conform.catalogue import all_cases
from brokerspec.conform.fuzz import fuzz
from brokerspec.conform.protocol import FailureKind, Unsupported
from brokerspec.conform.runner import Verdict, run_conformance
from brokerspec.conform.serve import Server, serve
from brokerspec.conform.sut import InProcessSut, SubprocessSut
from brokerspec.explain import explain_trace, show
from brokerspec.spec import get_profile
from brokerspec.spec import Outcome
from brokerspec.spec.addressing import CreateAddress, CreateQueue, InvalidName, RoutingType, SetPrefix
from brokerspec.trace import Trace, TraceStep, read_trace

ROOT = Path(__file__).resolve().parents[2]
BROKEN = Path(__file__).with_name("broken_sut.py")
SEED = get_profile("seed")


def test_fuzz_finds_a_planted_bug_shrinks_it_and_writes_a_trace_replay_reproduces(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["fuzz", "--sut", "inproc:planted:first-match-instead-of-ambiguous", "--profile", "seed",
                 "--domain", "addressing", "--budget", "20s", "--seed", "3", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1
    traces = list(tmp_path.glob("addressing-*.jsonl"))
    assert len(traces) == 1 and "replay with:" in out and "--sut inproc:planted:first-match" in out
    assert len(read_trace(traces[0]).steps) <= 6, "shrunk to a short script"
    replayed = main(["replay", str(traces[0]), "--sut", "inproc:planted:first-match-instead-of-ambiguous",
                     "--layers", ""])
    assert replayed == 1 and "first difference" in capsys.readouterr().out
    assert main(["replay", str(traces[0]), "--sut", "inproc:impl", "--layers", "", "--judge-recorded"]) == 1, \
        "the trace recorded the planted outcome, which the spec does not give"
    assert main(["replay", str(traces[0]), "--sut", "inproc:impl", "--layers", ""]) == 0, \
        "with --sut the verdict is the SUT's: the fixed broker agrees with the spec"


def test_fuzz_of_a_correct_sut_says_no_difference_within_the_budget(capsys: pytest.CaptureFixture[str],
                                                                   tmp_path: Path) -> None:
    code = main(["fuzz", "--sut", "inproc:reference", "--profile", "artemis-latest", "--domain", "topologies",
                 "--budget", "2s", "--seed", "1", "--out", str(tmp_path)])
    assert code == 0
    assert "no difference found within the budget (2 s" in capsys.readouterr().out


def test_fuzz_of_a_crashing_sut_reports_the_failure_and_writes_the_script(tmp_path: Path) -> None:
    sut = SubprocessSut([sys.executable, str(BROKEN), "crash", "5"], timeout=2)
    try:
        report = fuzz(sut, SEED, ("addressing",), 30.0, tmp_path, run_seed=1)
    finally:
        sut.close()
    assert report.failure is not None and report.failure.kind.value == "crashed"
    assert report.failure_trace is not None
    assert len(read_trace(report.failure_trace).steps) == 5, "the script up to the failing op"
    assert sut.starts <= 3, "no restart storm while Hypothesis gives up"


class CannotSetPrefixes(InProcessSut):
    """The fast implementation, but it cannot perform ``set_prefix``, as a wire adapter may not."""

    def execute(self, command: Any) -> Outcome:
        if isinstance(command, SetPrefix):
            raise Unsupported(FailureKind.ERROR_REPLY, "op", "not expressible over the wire: no prefixes here")
        return super().execute(command)


def test_fuzz_discards_and_counts_what_the_sut_cannot_do_and_still_finds_nothing_wrong(tmp_path: Path) -> None:
    sut = CannotSetPrefixes("impl")
    report = fuzz(sut, get_profile("artemis-latest"), ("addressing",), 4.0, tmp_path, run_seed=3)
    assert report.failure is None and not report.divergences
    assert report.results and report.results[0].examples > 0
    assert sum(report.unsupported.values()) > 0
    assert all("no prefixes here" in why for why in report.unsupported)


def test_fuzz_exit_code_for_a_sut_failure_is_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["fuzz", "--sut", f"{sys.executable} {BROKEN} garbage 3", "--domain", "addressing",
                 "--budget", "5s", "--seed", "1", "--timeout", "2", "--out", str(tmp_path)])
    assert code == 3
    assert "the SUT failed" in capsys.readouterr().out


def test_explain_names_each_rule_and_shows_changed_state_as_tables(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    commands = [CreateAddress("a1", frozenset(RoutingType)), CreateQueue("a1", "q1", RoutingType.ANYCAST),
                CreateQueue("a1", "q1", RoutingType.ANYCAST)]
    steps = list(explain_trace(Trace(SEED, tuple(TraceStep(c, None) for c in commands))))
    assert [s.rule for s in steps] == ["ADDR-ADDRESS-CREATE", "ADDR-QUEUE-CREATE", "ADDR-QUEUE-EXISTS"]
    assert set(steps[1].changed) == {"queues", "name_counts"} and steps[2].changed == {}
    path = tmp_path / "t.jsonl"
    from brokerspec.trace import write_trace

    write_trace(path, Trace(SEED, tuple(TraceStep(c, None) for c in commands)))
    assert main(["explain", str(path)]) == 0
    out = capsys.readouterr().out
    assert "name_counts" in out and "ADDR-QUEUE-EXISTS" in out and "state unchanged" in out


def test_show_keeps_values_short_and_drops_the_rule() -> None:
    steps = list(explain_trace(Trace(SEED, (TraceStep(CreateAddress("a", frozenset(RoutingType)), None),))))
    assert show(steps[0].outcome) == "AddressCreated(address=a)"
    assert show(frozenset({RoutingType.MULTICAST, RoutingType.ANYCAST})) == "{ANYCAST, MULTICAST}"


def test_diff_of_two_profiles_finds_a_short_distinguishing_script(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["diff", "--from", "seed", "--to", "artemis-latest", "--domain", "addressing", "--budget", "10s",
                 "--seed", "1", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1 and "distinguishing script" in out
    assert "seed: " in out and "artemis-latest: " in out
    trace = read_trace(next(tmp_path.glob("*.jsonl")))
    assert len(trace.steps) <= 4


def test_a_pair_raises_when_its_sides_part() -> None:
    pair = Pair(InProcessSut("spec"), InProcessSut("spec"), "addressing", get_profile("seed"),
                get_profile("artemis-latest"))
    for command in (CreateAddress("a1", frozenset(RoutingType)), CreateQueue("a1", "q1", RoutingType.ANYCAST),
                    CreateAddress("a2", frozenset(RoutingType))):
        pair.execute(command)
    with pytest.raises(Distinguished) as raised:
        pair.execute(CreateQueue("a2", "q1", RoutingType.ANYCAST))
    assert type(raised.value.source).__name__ == "QueueCreated"
    assert type(getattr(raised.value.target, "reason", None)).__name__ == "QueueExists"


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_diff_of_two_revisions_finds_what_a_commit_changed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A repository whose second commit changes one addressing rule: diff names the change."""
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "spec", repo / "spec", ignore=shutil.ignore_patterns("__pycache__"))

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True,
                              env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
                                   "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
                                   "PATH": "/usr/bin:/bin"})
        return done.stdout.strip()

    git("init", "-q")
    git("add", "spec")
    git("commit", "-q", "-m", "before")
    profiles = repo / "spec" / "profiles.py"
    text = profiles.read_text()
    assert text.count('name="seed"') == 1
    # the change: the seed profile starts checking an FQQN's address part no longer
    changed = text.replace("fqqn_checks_address=True", "fqqn_checks_address=False", 1)
    assert changed != text
    profiles.write_text(changed)
    git("commit", "-q", "-am", "after")
    code = main(["diff", "--from", "HEAD~1", "--to", "HEAD", "--repo", str(repo), "--profile", "seed",
                 "--domain", "addressing", "--budget", "20s", "--seed", "2", "--out", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "distinguishing script" in out


def test_diff_refuses_a_side_that_is_neither(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", "--from", "no-such-thing", "--to", "seed", "--budget", "1s"]) == 2
    assert "neither a profile" in capsys.readouterr().err


def test_the_server_answers_bad_requests_with_errors_and_goes_on() -> None:
    import io

    requests = "\n".join([
        "not json",
        json.dumps([1]),
        json.dumps({"v": 4, "type": "hello"}),
        json.dumps({"v": 1, "type": "nonsense"}),
        json.dumps({"v": 1, "type": "op", "seq": 1, "op": "lookup", "args": {"name": "q"}}),
        json.dumps({"v": 1, "type": "reset", "domain": "nowhere", "profile": "seed", "overrides": {}}),
        json.dumps({"v": 1, "type": "reset", "domain": "addressing", "profile": "nope", "overrides": {}}),
        json.dumps({"v": 1, "type": "reset", "domain": "addressing", "profile": "seed", "overrides": []}),
        json.dumps({"v": 1, "type": "reset", "domain": "addressing", "profile": "seed", "overrides": {}}),
        json.dumps({"v": 1, "type": "op", "seq": 1, "op": "lookup", "args": {"nom": "q"}}),
        json.dumps({"v": 1, "type": "op", "seq": 2, "op": "lookup", "args": {"name": "q"}}),
        json.dumps({"v": 1, "type": "bye"}),
        json.dumps({"v": 1, "type": "hello"}),
    ]) + "\n"
    out = io.StringIO()
    assert serve("impl", io.StringIO(requests), out) == 0
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [r["type"] for r in replies] == ["error"] * 8 + ["ready", "error", "outcome"], "bye ends the session"
    messages = " | ".join(r.get("message", "") for r in replies)
    for expected in ("not valid JSON", "JSON object", "version 4", "unknown request type", "before any reset",
                     "not served", "bad profile", "overrides must be", "args.nom"):
        assert expected in messages, expected
    assert replies[-1] == {"v": 1, "type": "outcome", "seq": 2, "outcome": {"type": "not_found", "name": "q"}}


def test_the_protocol_server_answers_hostile_requests_with_an_error_and_goes_on() -> None:
    import io

    requests = ["[" * 100_000 + "]" * 100_000, '{"v": 1, "v": 1, "type": "bye"}', "1" * 5000,
                json.dumps({"v": 1, "type": "bye"})]
    out = io.StringIO()
    assert serve("impl", io.StringIO("\n".join(requests) + "\n"), out) == 0
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [r["type"] for r in replies] == ["error"] * 3
    assert ["nested more than 64" in replies[0]["message"], "appears twice" in replies[1]["message"],
            "digits" in replies[2]["message"]] == [True] * 3


def test_the_server_lists_the_domains_of_its_layer() -> None:
    hello = Server("planted:loop-check-missing").answer({"v": 1, "type": "hello", "profile": "seed", "domains": []})
    assert hello is not None and hello["domains"] == ["topologies"]


def test_conform_and_fuzz_say_nothing_was_checked_when_the_sut_offers_no_asked_domain(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    only_addressing = "inproc:planted:first-match-instead-of-ambiguous"
    code = main(["conform", "--sut", only_addressing, "--domain", "duplicates", "--junit", str(tmp_path / "j.xml"),
                 "--json", str(tmp_path / "r.json")])
    out = capsys.readouterr().out
    assert code == 4 and "nothing was checked: every case was skipped" in out and "offers addressing" in out
    code = main(["fuzz", "--sut", only_addressing, "--domain", "duplicates", "--budget", "1s", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 4 and "nothing was checked: the SUT offers addressing" in out
    assert "no difference found" not in out


class CannotDoAnything(InProcessSut):
    """A SUT that can perform no operation at all, as a wire adapter for the wrong broker might."""

    def execute(self, command: Any) -> Any:
        raise Unsupported(FailureKind.UNSUPPORTED, "op", "nothing works here")


def test_fuzz_says_nothing_was_checked_when_every_scenario_was_discarded(tmp_path: Path) -> None:
    report = fuzz(CannotDoAnything("impl"), get_profile("artemis-latest"), ("addressing",), 1.0, tmp_path, run_seed=1)
    assert report.results and report.results[0].examples > 0 and not report.divergences
    why = report.nothing_checked()
    assert why is not None and "was discarded at its first step" in why
    assert fuzz(InProcessSut("impl"), get_profile("artemis-latest"), ("addressing",), 1.0, tmp_path,
                run_seed=1).nothing_checked() is None


class RewordsRefusals(InProcessSut):
    """The fast implementation, but every invalid-name refusal is worded its own way (free text)."""

    reworded = 0

    def execute(self, command: Any) -> Outcome:
        outcome = super().execute(command)
        reason = getattr(outcome, "reason", None)
        if isinstance(reason, InvalidName):
            RewordsRefusals.reworded += 1
            changes: dict[str, Any] = {"reason": dataclasses.replace(reason, problem="worded otherwise")}
            reworded: Outcome = dataclasses.replace(outcome, **changes)
            return reworded
        return outcome


def test_free_text_is_never_compared_only_the_reason_and_its_structured_fields() -> None:
    cases = [c for c in all_cases() if c.domain == "addressing"]
    reworded = run_conformance(RewordsRefusals("impl"), cases, get_profile("artemis-latest"))
    plain = run_conformance(InProcessSut("impl"), cases, get_profile("artemis-latest"))
    assert reworded.exit_code() == plain.exit_code() == 0
    assert reworded.count(Verdict.PASSED) == plain.count(Verdict.PASSED) > 0
    assert RewordsRefusals.reworded > 0, "no case refused a name, so nothing was reworded"
