"""fuzz with a partial SUT, operations left out, and several profiles in one run.

The protocol lets a SUT answer an operation it does not implement with an ``error`` reply
(``docs/sut-protocol.md``); fuzz drops that operation from the run and goes on, so such a SUT
is judged on everything else (issue 16, "Partial SUTs and fixes").
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from brokerspec.cli import main
from brokerspec.codec import COMMANDS
from brokerspec.conform.cli_fuzz import result_table
from brokerspec.conform.fuzz import Status, fuzz
from brokerspec.conform.protocol import FailureKind, Hello, SutFailure
from brokerspec.conform.sut import InProcessSut
from brokerspec.spec import Outcome, Profile, get_profile
from brokerspec.trace import read_trace

BROKEN = Path(__file__).with_name("broken_sut.py")
SEED = get_profile("seed")


def broken(mode: str) -> str:
    return f"{sys.executable} {BROKEN} {mode}"


class Refuses(InProcessSut):
    """brokerspec's own layer, but every operation named in ``refused`` gets an ``error`` reply, as a partial
    SUT would send; counts how often each was asked for."""

    def __init__(self, layer: str, *refused: str) -> None:
        super().__init__(layer)
        self.refused = set(refused)
        self.asked: dict[str, int] = {}

    def execute(self, command: Any) -> Outcome:
        if command.op in self.refused:
            self.asked[command.op] = self.asked.get(command.op, 0) + 1
            raise SutFailure(FailureKind.ERROR_REPLY, f"op ({command.op})", f"{command.op} is not supported")
        return super().execute(command)


# --- error replies drop the operation -------------------------------------------------------------------------------


def test_a_partial_sut_is_fuzzed_to_the_end_of_its_budget_with_the_refused_operation_dropped(tmp_path: Path) -> None:
    sut = Refuses("impl", "set_prefix")
    report = fuzz(sut, SEED, ("addressing",), 2.0, tmp_path, run_seed=1)
    assert report.failure is None and not report.divergences
    (run,) = report.runs
    assert run.status is Status.RAN and set(run.dropped) == {"set_prefix"}
    assert sut.asked == {"set_prefix": 1}, "after the first error reply the machine stopped drawing it"
    assert run.dropped["set_prefix"].scenarios == 1 and run.dropped["set_prefix"].steps >= 1
    assert run.judged > 200 and report.nothing_checked() is None


def test_a_partial_sut_still_gets_a_verdict_on_what_it_implements(tmp_path: Path) -> None:
    sut = Refuses("planted:first-match-instead-of-ambiguous", "set_prefix", "set_address_settings")
    report = fuzz(sut, SEED, ("addressing",), 30.0, tmp_path, run_seed=6)
    assert report.failure is None
    assert report.divergences, "the planted bug is found with two operations dropped"
    divergence = report.divergences[0].divergence
    assert divergence is not None
    assert not {c.op for c in divergence.commands} & {"set_prefix", "set_address_settings"}


def test_an_error_reply_to_an_operation_the_sut_answered_before_is_a_sut_failure(tmp_path: Path) -> None:
    class AnswersLookupOnce(InProcessSut):
        lookups = 0

        def execute(self, command: Any) -> Outcome:
            if command.op == "lookup":
                self.lookups += 1
                if self.lookups > 1:
                    raise SutFailure(FailureKind.ERROR_REPLY, "op (lookup)", "lookup broke")
            return super().execute(command)

    report = fuzz(AnswersLookupOnce("impl"), SEED, ("addressing",), 10.0, tmp_path, run_seed=1)
    assert report.failure is not None and report.failure.kind is FailureKind.ERROR_REPLY
    assert not report.runs[0].dropped and report.failure_trace is not None


def test_fuzz_of_a_subprocess_sut_that_refuses_an_operation_passes_and_says_what_was_not_checked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["fuzz", "--sut", broken("refuse:set_prefix"), "--domain", "addressing", "--budget", "3s",
                 "--seed", "1", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "set_prefix dropped, the SUT answered it with an error (set_prefix is not supported)" in out
    assert "not checked: addressing.set_prefix" in out
    assert not list(tmp_path.iterdir()), "no failure trace"


def test_a_sut_that_refuses_every_operation_has_nothing_checked(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    every = ",".join(COMMANDS["addressing"])
    code = main(["fuzz", "--sut", broken(f"refuse:{every}"), "--domain", "addressing", "--budget", "20s",
                 "--seed", "1", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 4, out
    assert "nothing was checked: the SUT answered every operation it was sent with an error reply" in out


# --- --exclude-op ---------------------------------------------------------------------------------------------------


def test_excluded_operations_are_never_sent(tmp_path: Path) -> None:
    sut = Refuses("impl", "set_prefix", "lookup")
    report = fuzz(sut, SEED, ("addressing",), 1.0, tmp_path, run_seed=1,
                  excluded={"addressing": frozenset({"set_prefix", "lookup"})})
    assert sut.asked == {} and not report.runs[0].dropped
    assert report.runs[0].excluded == ("lookup", "set_prefix") and report.runs[0].judged > 0


def test_exclude_op_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["fuzz", "--sut", "inproc:impl", "--domain", "addressing", "--domain", "duplicates",
                 "--exclude-op", "send", "--exclude-op", "addressing.lookup", "--budget", "2s", "--seed", "1",
                 "--show-values", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "addressing (seed): lookup left out (--exclude-op)" in out
    assert "duplicates (seed): send left out (--exclude-op)" in out
    assert "send.name" not in out and "lookup.name" not in out and "send.duplicate_id" not in out
    assert "consume.name" in out, "the other operations were drawn"
    assert "not checked: addressing.lookup, addressing.send, duplicates.send" in out


@pytest.mark.parametrize("bad", ["no_such_op", "duplicates.lookup", "topologies.send", "addressing."])
def test_a_bad_exclude_op_is_a_usage_error_before_anything_runs(bad: str, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    never_started = str(tmp_path / "no-such-sut")
    code = main(["fuzz", "--sut", never_started, "--domain", "addressing", "--domain", "duplicates",
                 "--exclude-op", bad, "--out", str(tmp_path / "out")])
    captured = capsys.readouterr()
    assert code == 2
    said = captured.out + captured.err
    assert f"--exclude-op {bad!r}" in said and "addressing.lookup" in said and "duplicates.rollback" in said
    assert "topologies.send" not in said.split("operations:")[1], "only the chosen domains' operations are listed"


# --- every domain has a row ---------------------------------------------------------------------------------------


class CrashesInDuplicates(InProcessSut):
    """The fast implementation without topologies, crashing at the third duplicates operation."""

    def __init__(self) -> None:
        super().__init__("impl")
        self.steps = 0
        self.domain = ""

    def hello(self, profile: Profile, domains: tuple[str, ...]) -> Hello:
        return Hello("no topologies", ("addressing", "duplicates"), None)

    def reset(self, domain: str, profile: Profile) -> None:
        self.domain, self.steps = domain, 0
        super().reset(domain, profile)

    def execute(self, command: Any) -> Outcome:
        self.steps += 1
        if self.domain == "duplicates" and self.steps == 3:
            raise SutFailure(FailureKind.CRASHED, "op 3", "gone")
        return super().execute(command)


def test_the_table_shows_every_domain_found_nothing_failed_or_skipped(tmp_path: Path) -> None:
    report = fuzz(CrashesInDuplicates(), SEED, ("duplicates", "addressing", "topologies"), 2.0, tmp_path,
                  run_seed=1)
    assert [(r.domain, r.status) for r in report.runs] == [
        ("duplicates", Status.SUT_FAILED), ("addressing", Status.RAN), ("topologies", Status.NOT_OFFERED)]
    assert report.runs[0].steps >= 3 and report.runs[1].judged > 0, "the run went on after the failure"
    console = Console(record=True, width=200)
    console.print(result_table(report, "seed", 1))
    rows = {line.split("│")[2].strip(): line for line in console.export_text().splitlines() if line.count("│") > 3}
    assert "the SUT failed" in rows["duplicates"] and "no difference" in rows["addressing"]
    assert "not offered by the SUT" in rows["topologies"]
    assert report.failure_trace is not None and "duplicates-seed-" in report.failure_trace.name


# --- several profiles -----------------------------------------------------------------------------------------------


def test_profile_all_runs_each_profile_and_a_profile_free_domain_once(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["fuzz", "--sut", "inproc:impl", "--profile", "all", "--domain", "addressing", "--domain",
                 "topologies", "--budget", "3s", "--seed", "1", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    rows = [[cell.strip() for cell in line.split("│")[1:3]] for line in out.splitlines() if line.count("│") > 3]
    assert rows == [["seed", "addressing"], ["-", "topologies"], ["artemis-2.11", "addressing"],
                    ["artemis-latest", "addressing"]]


def test_several_profiles_exit_with_the_worst_and_the_trace_names_its_profile(tmp_path: Path) -> None:
    code = main(["fuzz", "--sut", "inproc:planted:first-match-instead-of-ambiguous", "--profile", "seed",
                 "--profile", "artemis-latest", "--domain", "addressing", "--budget", "12s", "--seed", "1",
                 "--out", str(tmp_path)])
    assert code == 1, "a wrong outcome under one profile fails the run"
    (trace,) = tmp_path.glob("addressing-*.jsonl")
    assert trace.name.startswith("addressing-seed-") and read_trace(trace).profile.name == "seed"


def test_conform_still_takes_one_profile() -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["conform", "--sut", "inproc:impl", "--profile", "all"])
    assert stopped.value.code == 2


def test_show_values_lists_each_domain_once_over_several_profiles(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["fuzz", "--sut", "inproc:impl", "--profile", "seed", "--profile", "artemis-latest", "--domain",
                 "addressing", "--budget", "2s", "--seed", "1", "--show-values", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    ran = [line.split("│")[1].strip() for line in out.splitlines() if "no difference" in line and "│" in line]
    assert ran == ["seed", "artemis-latest"], "both profiles ran"
    lookup_rows = [line for line in out.splitlines() if "lookup.name" in line]
    assert len(lookup_rows) == 1, "the values drawn under both profiles, in one row"
