"""SUT protocol version 3: ``prepare`` (XA two-phase commit, duplicates) and who is asked it.

- which version each operation needs, and why an older SUT is not asked one, in words;
- the handshake: a SUT that lists 3 gets ``"v": 3``; one that lists up to 2 (or nothing) is never asked to
  ``prepare`` (the batch stops before it, the session goes on), and brokerspec's own server refuses it in an
  older version's request;
- the catalogue skips the XA cases for a version 1 or 2 SUT with the reason, and runs them for version 3;
- the fuzzer leaves ``prepare`` out for a version 2 SUT, says so, and never sends it;
- the pytest plugin skips the XA cases for a version 2 SUT, with the reason;
- the version 3 schema takes ``prepare`` and its outcomes in a version 3 message only.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped, unused-ignore]
from referencing import Registry, Resource

from brokerspec.cli import main
from brokerspec.codec import COMMANDS, encode_command, encode_outcome
from brokerspec.conform.catalogue import all_cases, duplicates_xa, select
from brokerspec.conform.fuzz import FirstFailure, fuzz, unasked_ops
from brokerspec.conform.protocol import (
    LATEST_VERSION,
    QUERIES_NEED_V2,
    XA_VERSION,
    Hello,
    Unsupported,
    first_unasked,
    read_hello,
    version_needed,
    why_not_asked,
)
from brokerspec.conform.runner import Verdict, run_conformance
from brokerspec.conform.serve import Server
from brokerspec.conform.sut import InProcessSut, SubprocessSut
from brokerspec.spec import Outcome, Profile, get_profile, is_query
from brokerspec.spec import duplicates as d

SPEC = [sys.executable, "-m", "brokerspec.conform.serve", "--layer", "spec"]
LATEST = get_profile("artemis-latest")
NEEDS_V3 = "the SUT speaks protocol version 2, and prepare needs version 3 (docs/sut-protocol.md)"


def test_prepare_alone_needs_version_3_and_the_queries_version_2() -> None:
    for domain, commands in COMMANDS.items():
        for op, kind in commands.items():
            wanted = 3 if kind is d.Prepare else 2 if is_query(kind) else 1
            assert version_needed(kind) == wanted, (domain, op)
            assert why_not_asked(kind, wanted) is None and why_not_asked(kind, LATEST_VERSION) is None
            if wanted > 1:
                assert why_not_asked(kind, wanted - 1) is not None
    assert why_not_asked(d.Prepare("s"), 2) == NEEDS_V3
    assert why_not_asked(d.Prepare, 1) == NEEDS_V3.replace("version 2", "version 1")
    assert why_not_asked(d.QueryId, 1) == QUERIES_NEED_V2


def test_the_first_unasked_command_is_named_with_its_reason() -> None:
    script = (d.Begin("s"), d.QueryId("a", None, "0a"), d.Prepare("s"))
    assert first_unasked(script, 3) is None
    assert first_unasked(script, 2) == (2, NEEDS_V3)
    assert first_unasked(script, 1) == (1, QUERIES_NEED_V2)


def test_the_handshake_settles_on_version_3_when_both_speak_it() -> None:
    base = {"v": 1, "type": "hello", "name": "x", "domains": ["duplicates"]}
    assert read_hello({**base, "versions": [1, 2, 3]}).version == XA_VERSION
    assert read_hello({**base, "versions": [3, 1, 2, 9]}).version == XA_VERSION
    assert read_hello({**base, "versions": [1, 2]}).version == 2
    assert not Hello("x", (), None, version=2).asks(d.Prepare) and Hello("x", (), None, version=3).asks(d.Prepare)
    assert InProcessSut("spec").hello(LATEST, ("duplicates",)).version == LATEST_VERSION == XA_VERSION


def _server_says(server: Server, request: dict[str, Any]) -> dict[str, Any]:
    reply = server.answer(request)
    assert reply is not None
    return reply


def test_the_server_prepares_in_version_3_only() -> None:
    reset = {"type": "reset", "domain": "duplicates", "profile": "artemis-latest", "overrides": {}}
    prepare = {"type": "op", "op": "prepare", "args": {"session": "s1"}}
    server = Server("spec")
    assert _server_says(server, {"v": 1, "type": "hello", "profile": "seed", "domains": []})["versions"] == [1, 2, 3]
    assert _server_says(server, {"v": 3, **reset}) == {"v": 3, "type": "ready"}
    _server_says(server, {"v": 3, "type": "op", "seq": 1, "op": "begin", "args": {"session": "s1"}})
    refused = _server_says(server, {"v": 2, "seq": 2, **prepare})
    assert refused["type"] == "error" and refused["message"] == "prepare needs protocol version 3"
    done = _server_says(server, {"v": 3, "seq": 3, **prepare})
    assert done == {"v": 3, "type": "outcome", "seq": 3, "outcome": {"type": "done", "rule": "DUP-XA-PREPARE"}}
    busy = _server_says(server, {"v": 3, "type": "op", "seq": 4, "op": "receive",
                                 "args": {"session": "s1", "queue": "q"}})
    assert busy["outcome"]["type"] == "transaction_prepared"
    handshake = _server_says(Server("spec"), {"v": 3, "type": "hello", "profile": "seed", "domains": []})
    assert handshake["type"] == "error" and handshake["v"] == 1, "the handshake is always version 1"
    older = Server("spec", protocol=2)
    assert _server_says(older, {"v": 1, "type": "hello", "profile": "seed", "domains": []})["versions"] == [1, 2]
    assert _server_says(older, {"v": 3, **reset})["type"] == "error", "a version 2 server speaks no version 3"


def test_a_version_2_sut_is_never_asked_to_prepare_and_its_session_goes_on() -> None:
    sut = SubprocessSut([*SPEC, "--protocol", "2"])
    try:
        assert sut.hello(LATEST, ("duplicates",)).version == 2
        sut.reset("duplicates", LATEST)
        with pytest.raises(Unsupported) as caught:
            sut.execute_many([d.CreateQueue("orders", "q"), d.Begin("s1"), d.Prepare("s1"), d.Commit("s1")])
        assert caught.value.message == NEEDS_V3
        assert caught.value.batch_stop is not None and caught.value.batch_stop.index == 2
        assert caught.value.batch_stop.completed == (d.Done(), d.Done())
        assert sut.execute(d.Commit("s1")) == d.Committed(()), "the transaction was never prepared"
        assert sut.starts == 1
    finally:
        sut.close()


def test_a_version_3_sut_prepares_over_the_pipe() -> None:
    sut = SubprocessSut(SPEC)
    try:
        assert sut.hello(LATEST, ("duplicates",)).version == 3
        sut.reset("duplicates", LATEST)
        outcomes = sut.execute_many([d.CreateQueue("orders", "q"), d.Begin("s1"), d.Prepare("s1"),
                                     d.Send("s1", "orders"), d.Prepare("s1"), d.Crash(), d.Rollback("s1")])
        assert outcomes[2:] == [d.Done(), d.TransactionPrepared("s1"), d.Done(), d.Restarted(0, 0), d.RolledBack()]
    finally:
        sut.close()


@pytest.mark.parametrize("protocol", ["1", "2", "3"])
def test_the_catalogue_skips_the_xa_cases_below_version_3_and_runs_them_at_3(protocol: str) -> None:
    cases = select(all_cases(), LATEST, ("duplicates",), "duplicates/xa-")
    assert [c.name for c in cases] == [c.name for c in duplicates_xa.CASES]
    sut = SubprocessSut([*SPEC, "--protocol", protocol])
    try:
        report = run_conformance(sut, cases, LATEST)
    finally:
        sut.close()
    if protocol == "3":
        assert {r.verdict for r in report.results} == {Verdict.PASSED}, [r.message for r in report.results][:2]
        return
    assert {r.verdict for r in report.results} == {Verdict.SKIPPED}
    assert {r.message for r in report.results} == {NEEDS_V3.replace("version 2", f"version {protocol}")}, \
        "every XA case prepares before it queries, so prepare is what the SUT lacks first"
    assert report.exit_code() == 4, "nothing was checked"


class Version2:
    """The spec served in process as a version 2 SUT, remembering every operation it was asked."""

    def __init__(self) -> None:
        self.inner = InProcessSut("spec")
        self.label = "spec (version 2)"
        self.asked: set[str] = set()

    def hello(self, profile: Profile, domains: tuple[str, ...]) -> Hello:
        return Hello("spec, version 2", ("duplicates",), None, version=2)

    def reset(self, domain: str, profile: Profile) -> None:
        self.inner.reset(domain, profile)

    def execute(self, command: Any) -> Outcome:
        self.asked.add(command.op)
        return self.inner.execute(command)

    def execute_many(self, commands: Sequence[Any]) -> list[Outcome]:
        return [self.execute(command) for command in commands]

    def close(self) -> None:
        self.inner.close()


def test_the_fuzzer_leaves_prepare_out_for_a_version_2_sut(tmp_path: Path) -> None:
    sut = Version2()
    report = fuzz(sut, LATEST, ("duplicates",), 2.0, tmp_path, run_seed=3)
    (run,) = report.runs
    assert run.unasked == {"prepare": NEEDS_V3} == unasked_ops("duplicates", 2)
    assert run.judged > 0 and "prepare" not in sut.asked and "query_id" in sut.asked
    guard = FirstFailure(sut, frozenset(run.unasked))
    assert "prepare" in guard.excluded, "the set the state machine consults before drawing an operation"


def test_fuzz_says_prepare_was_not_asked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sut = " ".join([*SPEC, "--protocol", "2"])
    code = main(["fuzz", "--sut", sut, "--profile", "artemis-latest", "--domain", "duplicates", "--budget", "3s",
                 "--seed", "1", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0
    assert "duplicates (artemis-latest): prepare not asked: the SUT speaks protocol version 2, and prepare needs " \
           "version 3" in " ".join(out.split())
    assert "query_id not asked" not in out


def _validator() -> Draft202012Validator:
    folder = files("brokerspec") / "schemas"
    schema = json.loads((folder / "sut-protocol-v3.schema.json").read_text(encoding="utf-8"))
    trace = json.loads((folder / "trace-v1.schema.json").read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    registry: Registry[Any] = Registry().with_resource(trace["$id"], Resource.from_contents(trace))
    return Draft202012Validator(schema, registry=registry)


def test_the_version_3_schema_takes_every_xa_request_and_outcome_in_version_3_only() -> None:
    validator = _validator()
    hello = {"v": 1, "type": "hello", "name": "x", "domains": ["duplicates"], "versions": [1, 2, 3]}
    assert validator.is_valid(hello)
    assert not validator.is_valid({**hello, "versions": [2, 3]})
    seen: set[str] = set()
    for case in duplicates_xa.CASES:
        for seq, (command, outcome) in enumerate(zip(case.commands, case.expected(LATEST)), 1):
            request = {"v": 3, "type": "op", "seq": seq, "op": command.op, "args": encode_command(command)}
            reply = {"v": 3, "type": "outcome", "seq": seq, "outcome": encode_outcome(outcome)}
            assert validator.is_valid(request), request
            assert validator.is_valid(reply), reply
            if command.op == "prepare":
                seen.add(command.op)
                assert not validator.is_valid({**request, "v": 2}), request
            if outcome.kind in ("transaction_prepared", "prepare_failed"):
                seen.add(outcome.kind)
                assert not validator.is_valid({**reply, "v": 2}), reply
    assert seen == {"prepare", "transaction_prepared", "prepare_failed"}
    assert not validator.is_valid({"v": 3, "type": "op", "seq": 1, "op": "prepare", "args": {}})
    assert not validator.is_valid({"v": 3, "type": "outcome", "seq": 1,
                                   "outcome": {"type": "prepare_failed", "reason": "NO_SUCH_REASON"}})
    assert not validator.is_valid({"v": 4, "type": "ready"})


def test_the_pytest_plugin_skips_the_xa_cases_for_a_version_2_sut(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text("")
    sut = " ".join([*SPEC, "--protocol", "2"])
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "--brokerspec-sut",
                           sut, "--brokerspec-profile", "artemis-latest", "--brokerspec-domain", "duplicates",
                           "-k", "xa-prepare-again or query-id-shows", str(tmp_path)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-2000:]
    assert "1 passed, 1 skipped" in done.stdout, done.stdout[-2000:]
    assert "prepare needs version 3" in done.stdout
