"""conform leaves a trace for every failing case, and words failures with the SUT's own JSON.

A failing case is written as a trace (its script, the outcomes the SUT gave, the profile with the
case's overrides, a note naming the case and the step) that ``brokerspec replay`` and
``brokerspec explain`` read; the console, the JSON report and the JUnit XML name the file and the
commands. Outcomes in failure text are the protocol's JSON objects (docs/sut-protocol.md), which is
what a SUT author wrote, not brokerspec's Python values.
"""

from __future__ import annotations

import json
import shlex
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from brokerspec.cli import main
from brokerspec.codec import decode_outcome
from brokerspec.conform.catalogue import all_cases
from brokerspec.conform.failures import wire_json
from brokerspec.conform.runner import Verdict, run_conformance
from brokerspec.conform.sut import InProcessSut, SubprocessSut
from brokerspec.spec import get_profile
from brokerspec.spec.addressing import Ambiguous, Resolved, RoutingType
from brokerspec.trace import read_trace

BROKEN = Path(__file__).with_name("broken_sut.py")
FIRST_MATCH = "inproc:planted:first-match-instead-of-ambiguous"
"""Resolves an ambiguous bare name to the first queue instead of refusing it (against ADDR-LOOKUP-BARE-MANY)."""
SECOND_BIND = "addressing/bare-name-ambiguous-after-second-bind"


def conform(tmp_path: Path, *extra: str) -> int:
    return main(["conform", "--sut", FIRST_MATCH, "--profile", "seed", "--domain", "addressing",
                 "--out", str(tmp_path / "failures"), "--junit", str(tmp_path / "junit.xml"),
                 "--json", str(tmp_path / "report.json"), *extra])


def test_a_failing_case_writes_a_trace_named_in_every_report_that_replay_and_explain_read(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert conform(tmp_path, "--case", SECOND_BIND) == 1
    out = capsys.readouterr().out
    [path] = (tmp_path / "failures").glob("*.jsonl")
    replay_command = f"brokerspec replay {path} --sut {FIRST_MATCH}"
    assert f"trace written to {path}" in out and replay_command in out and f"brokerspec explain {path}" in out

    [case] = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["cases"]
    assert (case["verdict"], case["trace"], case["replay"]) == ("failed", str(path), replay_command)
    assert case["explain"] == f"brokerspec explain {path}"
    failure = ElementTree.parse(tmp_path / "junit.xml").getroot().find(".//failure")
    assert failure is not None and f"replay with: {replay_command}" in (failure.text or "")

    trace = read_trace(path)
    [written] = [c for c in all_cases() if c.name == SECOND_BIND]
    assert (trace.domain, trace.profile.label) == ("addressing", "seed")
    assert [s.command for s in trace.steps] == list(written.commands), "the case's whole script"
    assert SECOND_BIND in trace.note and f"at step {case['step']}" in trace.note
    observed = trace.steps[case["step"] - 1].outcome
    assert observed == Resolved("a1", "q1", RoutingType.ANYCAST), "the planted broker's answer, as it gave it"
    assert all(s.outcome is None for s in trace.steps[case["step"]:]), "nothing recorded past the failure"

    assert main(shlex.split(replay_command)[1:]) == 1, "the buggy SUT still parts from the spec"
    assert "first difference at step 6" in capsys.readouterr().out
    assert main(["explain", str(path)]) == 1, "explain reads it and sees the recorded outcome the spec does not give"
    assert "1 step recorded an outcome the spec does not give" in capsys.readouterr().out


def test_the_next_run_never_overwrites_a_failure_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert conform(tmp_path, "--case", SECOND_BIND) == 1
    first = {p: p.read_text(encoding="utf-8") for p in (tmp_path / "failures").glob("*.jsonl")}
    assert conform(tmp_path, "--case", SECOND_BIND) == 1
    capsys.readouterr()
    after = {p: p.read_text(encoding="utf-8") for p in (tmp_path / "failures").glob("*.jsonl")}
    assert len(first) == 1 and len(after) == 2
    assert all(after[p] == text for p, text in first.items())


def test_the_trace_profile_carries_the_case_overrides() -> None:
    cases = [c for c in all_cases() if c.name == "addressing/core-protocol-fqqn-address-part-ignored"]
    assert cases and cases[0].overrides, "the case sets an option on top of the profile"
    [result] = run_conformance(InProcessSut("planted:first-match-instead-of-ambiguous"), cases,
                               get_profile("seed")).results
    assert result.verdict is Verdict.FAILED and result.trace is not None
    assert result.trace.profile.overrides == cases[0].overrides
    assert result.trace_path is None, "nothing is written without an output folder"


def test_a_sut_failure_writes_the_script_with_the_outcomes_given_before_it(tmp_path: Path) -> None:
    cases = [c for c in all_cases() if c.name == SECOND_BIND]
    sut = SubprocessSut([sys.executable, str(BROKEN), "crash", "4"], timeout=5)
    try:
        report = run_conformance(sut, cases, get_profile("seed"), out_dir=tmp_path)
    finally:
        sut.close()
    [result] = report.results
    assert result.verdict is Verdict.SUT_FAILURE and result.step == 4 and result.trace_path is not None
    trace = read_trace(result.trace_path)
    assert [s.outcome is not None for s in trace.steps] == [True, True, True] + [False] * (len(trace.steps) - 3)
    assert "at step 4" in trace.note and "crashed" in trace.note


def test_failure_text_shows_outcomes_as_the_wire_json_a_sut_writes() -> None:
    cases = [c for c in all_cases() if c.name == SECOND_BIND]
    [result] = run_conformance(InProcessSut("planted:first-match-instead-of-ambiguous"), cases,
                               get_profile("seed")).results
    lines = {line.split(":", 1)[0].strip(): line.split(":", 1)[1] for line in result.message.splitlines()
             if line.strip().startswith(("spec:", "sut:"))}
    spec_json, _, rule = lines["spec"].strip().partition("  (rule ")
    assert rule == "ADDR-LOOKUP-BARE-MANY)"
    assert decode_outcome(json.loads(spec_json)) == Ambiguous("q1", ("a1::q1", "a2::q1"))
    assert decode_outcome(json.loads(lines["sut"])) == Resolved("a1", "q1", RoutingType.ANYCAST)
    assert "Resolved(" not in result.message and "RoutingType" not in result.message


def test_a_permissive_failure_lists_the_outcomes_the_rules_allow_as_wire_json() -> None:
    cases = [c for c in all_cases() if c.name == "balancing/strict-passes-over-a-disconnected-queue"]
    [result] = run_conformance(InProcessSut("planted:strict-prefers-consumers"), cases,
                               get_profile("artemis-latest")).results
    assert result.verdict is Verdict.FAILED, result.message
    lines = result.message.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("the rules allow"))
    allowed = [json.loads(line) for line in lines[start + 1:] if line.startswith("    {")]
    assert lines[start].strip() == f"the rules allow {len(allowed)} outcome{'s' if len(allowed) != 1 else ''} here:"
    observed = json.loads(next(line for line in lines if line.strip().startswith("sut:")).split(":", 1)[1])
    assert allowed and observed not in allowed
    delivered = [event["node"] for outcome in allowed for event in outcome["events"]]
    assert "n2" not in delivered, "the disconnected node's queue is never an allowed target (LB-ROUND-ROBIN)"


def test_wire_json_leaves_out_the_rule_and_writes_enums_and_sets_as_the_protocol_does() -> None:
    outcome = Ambiguous("q1", ("b::q1", "a::q1"), rule="ADDR-LOOKUP-BARE-MANY")
    assert json.loads(wire_json(outcome)) == {"type": "ambiguous", "name": "q1", "candidates": ["b::q1", "a::q1"]}
    assert json.loads(wire_json(Resolved("a", "q", RoutingType.MULTICAST)))["routing_type"] == "MULTICAST"
    assert wire_json(None) == "-"


def test_the_printed_commands_run_as_printed_for_a_sut_that_is_a_command_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    served = f"{sys.executable} -m brokerspec.conform.serve --layer {FIRST_MATCH.removeprefix('inproc:')}"
    code = main(["conform", "--sut", served, "--domain", "addressing", "--case", SECOND_BIND,
                 "--out", str(tmp_path / "failures"), "--junit", str(tmp_path / "j.xml"),
                 "--json", str(tmp_path / "r.json")])
    assert code == 1
    out = capsys.readouterr().out.splitlines()
    replay_line = out[out.index(next(line for line in out if line.startswith("trace written to"))) + 1]
    argv = shlex.split(replay_line)
    assert argv[:2] == ["brokerspec", "replay"] and argv[3:] == ["--sut", served]
    assert main(argv[1:]) == 1, "the same SUT, the same wrong answer"
    fixed = [*argv[1:4], f"{sys.executable} -m brokerspec.conform.serve --layer impl"]
    assert main(fixed) == 0, "the fixed SUT agrees with the spec"


def test_an_out_folder_that_cannot_be_written_is_a_usage_error_before_any_case_runs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    with pytest.raises(SystemExit) as stopped:
        conform(tmp_path, "--out", str(blocker / "failures"))
    assert stopped.value.code == 2 and "--out" in capsys.readouterr().err
    assert not (tmp_path / "report.json").exists()
