"""The command line: check, replay and profiles, with distinct exit codes and no tracebacks on bad input."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Mapping
import sys
from pathlib import Path

import pytest

from brokerspec.cli import EXIT_DIVERGENCE, EXIT_OK, EXIT_USAGE, main, parse_duration
from brokerspec.check.lockstep import SubjectFactory
from brokerspec.check.machine import RunStats
from brokerspec.spec import Profile, get_profile
from brokerspec.spec.addressing import CreateAddress, CreateQueue, Lookup, QueueCreated, Resolved, RoutingType
from brokerspec.trace import Trace, TraceStep, write_trace

ANY = RoutingType.ANYCAST


def good_trace(path: Path, lookup_outcome: Resolved) -> Path:
    steps = (
        TraceStep(CreateAddress("a1", frozenset({ANY}))),
        TraceStep(CreateQueue("a1", "q1", ANY), QueueCreated("a1", "q1")),
        TraceStep(Lookup("a1::q1"), lookup_outcome),
    )
    return write_trace(path, Trace(get_profile("artemis-latest"), steps))


def test_check_passes_and_prints_a_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", "--budget", "2s", "--domain", "addressing", "--profile", "seed", "--seed", "1",
                 "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == EXIT_OK, out
    assert "seed+addressing.fqqn_checks_address=false" in out and "agree" in out
    assert "0 divergences" in out
    assert list(tmp_path.iterdir()) == []


def test_check_permissive_judges_balancing_and_leaves_other_domains_strict(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import brokerspec.cli as cli
    from brokerspec.check.domains import Domain
    from brokerspec.check.runner import CheckResult, check_for

    modes: list[tuple[str, bool]] = []

    def recording(profile: Profile, layers: Mapping[str, SubjectFactory], seconds: float, out: Path,
                  seed: int | None, show: Callable[[RunStats], None] | None, domain: Domain,
                  permissive: bool = False) -> CheckResult:
        modes.append((domain.name, permissive))
        return check_for(profile, layers, seconds, out, seed, show, domain, permissive)

    monkeypatch.setattr(cli, "check_for", recording)
    code = main(["check", "--budget", "2s", "--domain", "balancing", "--domain", "duplicates", "--profile",
                 "artemis-latest", "--permissive", "--seed", "1", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == EXIT_OK, out
    assert modes == [("balancing", True), ("duplicates", False)]
    assert "balancing" in out and "0 divergences" in out


def test_replay_of_an_agreeing_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = good_trace(tmp_path / "ok.jsonl", Resolved("a1", "q1", ANY))
    assert main(["replay", str(path)]) == EXIT_OK
    out = capsys.readouterr().out
    assert "every layer agrees with the spec at every step" in out


def test_replay_shows_the_first_difference(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = good_trace(tmp_path / "wrong.jsonl", Resolved("a2", "q1", ANY))
    assert main(["replay", str(path), "--layers", "impl"]) == EXIT_DIVERGENCE
    out = capsys.readouterr().out
    assert "first difference at step 3: lookup(name='a1::q1')" in out
    assert 'recorded: {"type": "resolved", "address": "a2"' in out, "outcomes are shown as the protocol's JSON"


@pytest.mark.parametrize(("content", "message"), [
    ("{not json\n", "bad.jsonl:1: not valid JSON"),
    (json.dumps({"v": 1, "type": "header", "domain": "addressing", "profile": "seed", "overrides": {}}) + "\n"
     + json.dumps({"v": 1, "type": "step", "step": 1, "op": "create_queue",
                   "args": {"address": "a", "queue": "q", "routing_type": "SIDEWAYS"}}) + "\n",
     "bad.jsonl:2: args.routing_type: expected one of ANYCAST, MULTICAST"),
])
def test_bad_trace_is_a_usage_error_without_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      content: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    assert main(["replay", str(path)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = good_trace(tmp_path / "ok.jsonl", Resolved("a1", "q1", ANY))
    assert main(["replay", str(path), "--layers", "fast"]) == EXIT_USAGE
    assert "unknown layer fast" in capsys.readouterr().err
    assert main(["check", "--set", "addressing.nope=1", "--budget", "1"]) == EXIT_USAGE
    assert "unknown option 'nope'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        main(["check", "--budget", "soon"])
    assert exited.value.code == EXIT_USAGE


def test_profiles_listing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profiles"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "addressing.name_scope = ADDRESS" in out and "artemis-latest" in out


def test_durations() -> None:
    assert parse_duration("30") == 30 and parse_duration("2m") == 120 and parse_duration("1.5s") == 1.5


def test_installed_entry_point_runs() -> None:
    result = subprocess.run([sys.executable, "-m", "brokerspec.cli", "profiles"], capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0 and "seed" in result.stdout


def test_crash_subcommand_runs_the_harness(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["crash", "run", "--trials", "3", "--seed", "5", "--workers", "1"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "crash trials: 3" in out and "3 matched the spec" in out
