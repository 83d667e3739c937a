"""Hostile command lines and hostile SUT output: each gets a clear verdict and its exit code, never a traceback."""

from __future__ import annotations

import shlex
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from brokerspec import crash, jsonin
from brokerspec.cli import EXIT_DIVERGENCE, EXIT_OK, EXIT_SUT_FAILURE, EXIT_USAGE, main
from brokerspec.clitools import clean, spark_master
from brokerspec.conform.catalogue import all_cases
from brokerspec.conform.protocol import Hello
from brokerspec.conform.runner import CaseResult, ConformReport, Verdict
from brokerspec.crash import TrialResult
from brokerspec.spec import get_profile
from brokerspec.spec.addressing import CreateAddress, CreateQueue, Lookup, QueueCreated, Resolved, RoutingType
from brokerspec.trace import Trace, TraceStep, write_trace

BROKEN = Path(__file__).parent / "conform" / "broken_sut.py"
ANY = RoutingType.ANYCAST
PLANTED_BROKER = "brokerspec.planted.duplicates_bugs:NewestEvicted"
MARKUP = "[/] [bold red]x[/]"
"""What the ``control`` SUT writes among its control characters; it must come out as written."""


def broken(mode: str, at: int = 2) -> str:
    """The ``--sut`` command line of the misbehaving test SUT in ``mode``."""
    return shlex.join([sys.executable, str(BROKEN), mode, str(at)])


def trace_file(path: Path, address: str = "a1", lookup: Resolved | None = None, note: str = "") -> Path:
    """A three-step addressing trace; the lookup's recorded outcome is the spec's unless ``lookup`` says."""
    recorded = lookup or Resolved(address, "q1", ANY)
    steps = (TraceStep(CreateAddress(address, frozenset({ANY}))),
             TraceStep(CreateQueue(address, "q1", ANY), QueueCreated(address, "q1")),
             TraceStep(Lookup(f"{address}::q1"), recorded))
    return write_trace(path, Trace(get_profile("seed"), steps, note=note))


def usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run ``argv``, which must be refused by the parser (exit 2); the one error line it printed."""
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == EXIT_USAGE
    err = capsys.readouterr().err
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1, err
    return errors[0]


def assert_literal(out: str) -> None:
    """SUT text came out as written: markup not interpreted, control characters escaped, none raw."""
    assert MARKUP in out, out
    assert "\\x1b[31mred" in out and "\\x00" in out
    assert "\x1b" not in out and "\x00" not in out and "\x07" not in out


@pytest.fixture(autouse=True)
def in_a_scratch_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run every command in a scratch folder, so default report paths land there."""
    monkeypatch.chdir(tmp_path)


# --- --timeout ------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["nan", "-1", "inf", "0", "1e300", "soon"])
@pytest.mark.parametrize("command", [["conform", "--sut", "inproc:impl"], ["fuzz", "--sut", "inproc:impl"],
                                     ["replay", "missing.jsonl", "--sut", "inproc:impl"]])
def test_a_timeout_that_is_not_a_positive_finite_number_is_a_usage_error(
        command: list[str], value: str, capsys: pytest.CaptureFixture[str]) -> None:
    line = usage_error([*command, "--timeout", value], capsys)
    assert "argument --timeout: expected a positive number of seconds" in line and repr(value) in line


# --- replay against a failing SUT -----------------------------------------------------------------


@pytest.mark.parametrize(("mode", "kind", "layers"), [
    ("crash", "crashed", "reference,impl"), ("crash", "crashed", ""), ("hang", "timeout", "reference,impl"),
    ("hang", "timeout", ""), ("garbage", "garbage", "reference,impl"), ("garbage", "garbage", ""),
    ("hello-hang", "timeout", ""),
])
def test_replay_against_a_sut_that_fails_exits_3(mode: str, kind: str, layers: str, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = trace_file(tmp_path / "ok.jsonl")
    code = main(["replay", str(path), "--sut", broken(mode), "--timeout", "1", "--layers", layers])
    captured = capsys.readouterr()
    assert code == EXIT_SUT_FAILURE, captured.out
    assert f"the SUT failed ({kind})" in captured.out and "Traceback" not in captured.err


def test_replay_with_a_failing_sut_and_a_wrong_recording_is_a_divergence(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = trace_file(tmp_path / "wrong.jsonl", lookup=Resolved("a2", "q1", ANY))
    code = main(["replay", str(path), "--sut", broken("crash"), "--timeout", "5", "--judge-recorded"])
    assert code == EXIT_DIVERGENCE, capsys.readouterr().out
    code = main(["replay", str(path), "--sut", broken("crash"), "--timeout", "5"])
    assert code == EXIT_SUT_FAILURE, "with --sut the recording is not judged: what is left is the SUT's failure"


def test_replay_against_a_sut_that_agrees_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = trace_file(tmp_path / "ok.jsonl")
    assert main(["replay", str(path), "--sut", broken("crash", 9), "--layers", ""]) == EXIT_OK
    assert "every layer agrees" in capsys.readouterr().out


# --- a --sut that shlex cannot split ---------------------------------------------------------------


@pytest.mark.parametrize("command", [["conform"], ["fuzz"], ["replay", "TRACE"]])
def test_an_unbalanced_quote_in_the_sut_is_a_usage_error(command: list[str], tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    argv = [str(trace_file(tmp_path / "ok.jsonl")) if word == "TRACE" else word for word in command]
    assert main([*argv, "--sut", '"foo']) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--sut" in err and "No closing quotation" in err, err


# --- outside text printed literally ---------------------------------------------------------------


def test_conform_prints_what_the_sut_wrote_literally(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sut = broken("control") + " '[blink]sut[/]'"  # the SUT ignores the extra argument; the title shows it
    code = main(["conform", "--sut", sut, "--domain", "addressing", "--timeout", "5", "--out", str(tmp_path),
                 "--junit", str(tmp_path / "junit.xml"), "--json", str(tmp_path / "report.json")])
    captured = capsys.readouterr()
    assert code == EXIT_SUT_FAILURE, captured.out
    assert_literal(captured.out)
    assert "stopped early:" in captured.out and "[blink]sut[/] (brokerspec impl) under seed" in captured.out


def test_fuzz_prints_what_the_sut_wrote_literally(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["fuzz", "--sut", broken("control"), "--domain", "addressing", "--budget", "5s", "--seed", "1",
                 "--timeout", "5", "--out", str(tmp_path)])
    captured = capsys.readouterr()
    assert code == EXIT_SUT_FAILURE, captured.out
    assert_literal(captured.out)
    assert "the SUT failed:" in captured.out


def test_replay_prints_the_sut_and_the_trace_literally(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = trace_file(tmp_path / "t[bold red]x[blink].jsonl", address="a[/]z", note=f"note \x1b[2J {MARKUP}")
    code = main(["replay", str(path), "--sut", broken("control"), "--timeout", "5"])
    out = capsys.readouterr().out
    assert code == EXIT_SUT_FAILURE, out
    assert_literal(out)
    assert "t[bold red]x[blink].jsonl" in out and "address='a[/]z'" in out and "note \\x1b[2J" in out


def test_explain_prints_the_trace_literally(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = trace_file(tmp_path / "t[bold red]x[blink].jsonl", address="a[/]z", note=f"note \x1b[2J {MARKUP}")
    assert main(["explain", str(path)]) == EXIT_OK
    out = capsys.readouterr().out
    assert f"note \\x1b[2J {MARKUP}" in out and "address='a[/]z'" in out and "a[/]z::q1" in out
    assert "\x1b" not in out


def test_error_lines_escape_control_characters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(tmp_path / "no\x1b[2Jsuch.jsonl")]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "no\\x1b[2Jsuch.jsonl" in err and "\x1b" not in err


def test_clean_escapes_controls_and_keeps_lines() -> None:
    assert clean("a\x00b\x1bc\x9bd\ud800\n\te") == "a\\x00b\\x1bc\\x9bd\\ud800\n\te"


# --- reports stay well-formed -----------------------------------------------------------------------


def test_the_junit_and_json_reports_stay_well_formed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    junit, report = tmp_path / "junit.xml", tmp_path / "report.json"
    code = main(["conform", "--sut", broken("control"), "--domain", "addressing", "--timeout", "5",
                 "--out", str(tmp_path), "--junit", str(junit), "--json", str(report)])
    capsys.readouterr()
    assert code == EXIT_SUT_FAILURE
    errors = ElementTree.parse(junit).getroot().findall(".//error")
    assert errors and all(MARKUP in (e.text or "") and "\\x1b[31mred" in (e.text or "") for e in errors)
    cases = jsonin.loads(report.read_text(encoding="utf-8"))["cases"]
    assert any(MARKUP in case["message"] for case in cases)


def test_reports_of_raw_control_characters_stay_well_formed(tmp_path: Path) -> None:
    raw = "bad\x00 \x1b[31mred\x1b[0m \x07\x0b\x0c\ufffe [/] ]]> <&>"
    case = all_cases()[0]
    report = ConformReport(f"sut {raw}", get_profile("seed"), False, Hello(raw, ("addressing",), None),
                           [CaseResult(case, Verdict.SUT_FAILURE, message=f"error-reply: {raw}\nsecond line"),
                            CaseResult(case, Verdict.FAILED, message=raw)])
    report.write_junit(tmp_path / "junit.xml")
    report.write_json(tmp_path / "report.json")
    root = ElementTree.parse(tmp_path / "junit.xml").getroot()
    assert (root.findtext(".//error") or "").startswith("error-reply: bad\\x00 \\x1b[31mred")
    assert root.find(".//failure") is not None and "]]> <&>" in (root.findtext(".//failure") or "")
    data = jsonin.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert data["sut_name"] == raw and data["cases"][1]["message"] == raw


# --- output paths checked before any work ---------------------------------------------------------


def hostile_paths(tmp_path: Path) -> dict[str, Path]:
    folder = tmp_path / "folder"
    folder.mkdir()
    file = tmp_path / "file"
    file.write_text("x", encoding="utf-8")
    return {"FOLDER": folder, "FILE": file, "UNDER_FILE": file / "sub" / "out", "MISSING": tmp_path / "missing"}


@pytest.mark.parametrize(("argv", "option"), [
    (["conform", "--sut", "inproc:impl", "--junit", "FOLDER"], "--junit"),
    (["conform", "--sut", "inproc:impl", "--json", "UNDER_FILE"], "--json"),
    (["conform", "--sut", "inproc:impl", "--junit", "UNDER_FILE"], "--junit"),
    (["generate", "--histories", "2", "--out", "FILE"], "--out"),
    (["generate", "--histories", "2", "--out", "UNDER_FILE"], "--out"),
    (["audit", "FOLDER", "--out", "FILE"], "--out"),
    (["audit", "FOLDER", "--out", "FOLDER", "--expect", "MISSING"], "--expect"),
    (["audit", "FOLDER", "--out", "FOLDER", "--expect", "FOLDER"], "--expect"),
    (["check", "--out", "FILE"], "--out"),
    (["fuzz", "--sut", "inproc:impl", "--out", "FILE"], "--out"),
    (["diff", "--from", "seed", "--to", "artemis-latest", "--out", "FILE"], "--out"),
    (["catalogue", "export", "FILE"], "dir"),
    (["artemis", "fidelity", "--json", "FOLDER"], "--json"),
])
def test_an_output_that_can_never_be_written_is_a_usage_error_at_once(
        argv: list[str], option: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = hostile_paths(tmp_path)
    line = usage_error([str(paths.get(word, word)) for word in argv], capsys)
    named = next(str(paths[word]) for word in argv if word in paths and str(paths[word]) in line)
    assert f"argument {option}:" in line and named


def test_missing_folders_on_the_way_to_a_report_are_created(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    junit, report = tmp_path / "a" / "b" / "junit.xml", tmp_path / "c" / "report.json"
    assert main(["conform", "--sut", "inproc:impl", "--case", "bare-name-ambiguous", "--junit", str(junit),
                 "--json", str(report)]) == EXIT_OK
    capsys.readouterr()
    assert junit.is_file() and report.is_file()


# --- counts, profiles, brokers and master URLs ----------------------------------------------------


@pytest.mark.parametrize("argv", [
    ["run", "--profile", "bogus"], ["run", "--trials", "-1"], ["run", "--trials", "0"], ["run", "--workers", "0"],
    ["run", "--steps", "-1"], ["run", "--broker", "bogus"], ["trial", "--broker", "no.such.module:Broker"],
    ["trial", "--broker", "brokerspec.crash:NoSuchClass"], ["prefix", "--durable", "-1"],
    ["run", "--set", "nonsense"],
])
def test_crash_refuses_bad_values_before_running_anything(argv: list[str], capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("nothing may run")

    monkeypatch.setattr(crash, "run_crash_trials", never)
    monkeypatch.setattr(crash, "measure_step_seconds", never)
    line = usage_error(["crash", *argv], capsys)
    assert line.startswith("brokerspec crash ") and f"argument {argv[1]}:" in line


def test_crash_refuses_an_unknown_option_value_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["crash", "trial", "--set", "duplicates.nope=1"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith("brokerspec crash: error:") and err.count("\n") == 1 and "nope" in err


def test_a_failing_trials_replay_hint_is_a_brokerspec_command_that_parses_back() -> None:
    profile = get_profile("artemis-latest", (("duplicates.id_cache_size", "3"),))
    result = TrialResult(12345, profile, 40, "lines", 7, None, lost=("a1:'x'",),
                         broker=PLANTED_BROKER, python_path=("/a b", "c"))
    words = shlex.split(result.replay_command())
    assert words[0] == "PYTHONPATH=/a b:c" and words[1:4] == ["brokerspec", "crash", "trial"]
    args = crash.build_parser().parse_args(words[3:])
    assert (args.seed, args.profile, args.set, args.steps, args.broker) == (
        12345, "artemis-latest", [("duplicates.id_cache_size", "3")], 40, PLANTED_BROKER)
    assert "replay: PYTHONPATH='/a b:c' brokerspec crash trial --seed 12345" in result.describe()


@pytest.mark.parametrize("argv", [
    ["audit", "FOLDER", "--out", "FOLDER", "--master", "bogus://x"],
    ["audit", "FOLDER", "--out", "FOLDER", "--master", "spark://host"],
    ["audit", "FOLDER", "--out", "FOLDER", "--partitions", "-3"],
    ["audit", "FOLDER", "--out", "FOLDER", "--partitions", "0"],
    ["generate", "--out", "FOLDER", "--histories", "0"],
    ["generate", "--out", "FOLDER", "--histories", "2", "--faults", "-1"],
    ["generate", "--out", "FOLDER", "--histories", "2", "--files", "0"],
    ["generate", "--out", "FOLDER", "--histories", "2", "--steps", "-5"],
    ["conform", "--sut", "inproc:impl", "--max-sut-failures", "0"],
])
def test_audit_and_generate_refuse_bad_values_at_once(argv: list[str], tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    paths = hostile_paths(tmp_path)
    line = usage_error([str(paths.get(word, word)) for word in argv], capsys)
    assert f"argument {argv[-2]}:" in line
    if argv[-2] == "--master":
        assert "accepted: local, local[N], local[*]" in line


@pytest.mark.parametrize("url", ["local", "local[4]", "local[*]", "local[2,3]", "local-cluster[2,1,1024]",
                                 "spark://127.0.0.1:7077", "spark://a:7077,b.example:7078", "spark://[::1]:7077"])
def test_spark_master_urls_that_are_accepted(url: str) -> None:
    assert spark_master(url) == url


# --- faults.jsonl read strictly -------------------------------------------------------------------


@pytest.mark.parametrize(("line", "says"), [
    ('{"history": "h1", "step": 2, "step": 3}', "twice"),
    ('{"history": "h1", "step": NaN}', "NaN"),
    ('{"history": "h1", "step": 2.0}', "step"),
    ('{"history": "h1", "step": "2"}', "step"),
    ('{"history": "h1", "step": true}', "step"),
    ('{"history": "h1", "step": 123456789012345678901234567890}', "64"),
    ('{"step": 2}', "history"),
    ('[1, 2]', "object"),
    ('{"history": "h1", "step": 2', "JSON"),
])
def test_a_bad_faults_line_is_named_by_file_and_line(line: str, says: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    faults = tmp_path / "faults.jsonl"
    faults.write_text('{"history": "h0", "step": 1}\n' + line + "\n", encoding="utf-8")
    code = main(["audit", str(tmp_path), "--out", str(tmp_path / "out"), "--expect", str(faults)])
    err = capsys.readouterr().err
    assert code == EXIT_USAGE
    assert err.startswith(f"brokerspec: error: {faults}:2: ") and says in err and err.count("\n") == 1, err


def test_a_faults_file_that_is_not_text_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    faults = tmp_path / "faults.jsonl"
    faults.write_bytes(b'{"history": "h\xff", "step": 1}\n')
    assert main(["audit", str(tmp_path), "--out", str(tmp_path / "out"), "--expect", str(faults)]) == EXIT_USAGE
    assert f"{faults}: " in capsys.readouterr().err


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0"])
def test_mutation_score_refuses_a_timeout_that_is_not_a_positive_finite_number(
        value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["mutation-score", "--timeout", value])
    assert stopped.value.code == 2 and "--timeout" in capsys.readouterr().err
