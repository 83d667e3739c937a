"""Queries and SUT protocol version 2: what they read, that they change nothing, and who is asked them.

- every domain's query is answered alike by the spec, the reference and the fast implementation, and leaves
  the spec's state exactly as it was (a script with queries inserted behaves as the script without them);
- the handshake: a SUT that lists version 2 gets ``"v": 2`` on every later request, one that lists nothing
  stays at version 1 and is never asked a query (the catalogue skips the cases that need one, the fuzzer says
  it did not ask them); a reply of the wrong version, and a hello's malformed ``versions``, are failures;
- the planted broker whose queue query leaves paused consumers out is caught by the catalogue, through the
  pipe, and only by its query cases.
"""

from __future__ import annotations

import json
import sys
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped, unused-ignore]
from referencing import Registry, Resource

from brokerspec.check.domains import get_domain
from brokerspec.cli import main
from brokerspec.conform.catalogue import all_cases, queries, select
from brokerspec.conform.fuzz import QUERY_OPS
from brokerspec.conform.protocol import LATEST_VERSION, FailureKind, SutFailure, Unsupported, read_hello
from brokerspec.conform.runner import Verdict, run_conformance
from brokerspec.conform.serve import Server
from brokerspec.conform.sut import SubprocessSut
from brokerspec.spec import get_profile, is_query
from brokerspec.spec import addressing as a

SERVE = [sys.executable, "-m", "brokerspec.conform.serve", "--layer", "impl"]
LATEST = get_profile("artemis-latest")
QUERY_CASES = queries.ADDRESSING + queries.DUPLICATES + queries.BALANCING + queries.TOPOLOGIES


def test_every_domain_has_a_query_and_every_query_case_asks_one() -> None:
    assert all(QUERY_OPS[domain] for domain in ("addressing", "duplicates", "balancing", "topologies"))
    assert all(any(is_query(command) for command in case.commands) for case in QUERY_CASES)
    assert not is_query(a.Lookup("q")) and is_query(a.QueryAddress) and is_query(a.QueryAddress("a"))


@pytest.mark.parametrize("case", QUERY_CASES, ids=lambda case: case.name)
def test_a_query_changes_nothing_and_every_layer_answers_it_as_the_spec(case: Any) -> None:
    domain = get_domain(case.domain)
    for name in case.profiles if not domain.profile_free else case.profiles[:1]:
        profile = case.profile_for(get_profile(name))
        state = domain.initial_state(profile)
        layers = {layer: factory(profile) for layer, factory in domain.layers.items()}
        for command in case.commands:
            after, outcome = domain.apply(state, command)
            if is_query(command):
                assert after == state, f"{command} changed the spec's state"
            for layer, subject in layers.items():
                assert subject.execute(command) == outcome, (name, layer, command)
            state = after


def test_a_queue_query_gives_no_redistributor_a_turn() -> None:
    """With redistribution delay 0 a message moves on the step after its trigger; a query is not such a step."""
    from brokerspec.spec import balancing as b

    domain = get_domain("balancing")
    state = domain.initial_state(LATEST)
    for command in (b.AddNode("n2"), b.Configure("orders", b.LbType.ON_DEMAND, 0),
                    b.CreateQueue("n1", "orders", "orders", a.RoutingType.ANYCAST),
                    b.CreateQueue("n2", "orders", "orders", a.RoutingType.ANYCAST), b.Send("n1", "orders")):
        state, _ = domain.apply(state, command)
    before = state
    state, outcome = domain.apply(state, b.QueryQueue("n1", "orders"))
    assert state == before and isinstance(outcome, b.QueueQueried) and outcome.messages == 1


def test_the_handshake_settles_on_the_highest_common_version() -> None:
    base = {"v": 1, "type": "hello", "name": "x", "domains": ["addressing"]}
    assert read_hello(base).version == 1 and not read_hello(base).answers_queries
    assert read_hello({**base, "versions": [1, 2]}).version == 2
    assert read_hello({**base, "versions": [2, 1, 7]}).version == 2, "a version brokerspec does not speak is passed over"
    for wrong in ([], [2], [1.0, 2], "1,2", [True], None):
        with pytest.raises(SutFailure) as caught:
            read_hello({**base, "versions": wrong})
        assert caught.value.kind is FailureKind.BAD_REPLY and "versions" in caught.value.message


def test_the_version_2_schema_takes_the_handshake_and_a_query() -> None:
    folder = files("brokerspec") / "schemas"
    schema = json.loads((folder / "sut-protocol-v2.schema.json").read_text(encoding="utf-8"))
    trace = json.loads((folder / "trace-v1.schema.json").read_text(encoding="utf-8"))
    registry: Registry[Any] = Registry().with_resource(trace["$id"], Resource.from_contents(trace))
    validator = Draft202012Validator(schema, registry=registry)
    hello = {"v": 1, "type": "hello", "name": "x", "domains": ["addressing"], "versions": [1, 2]}
    query = {"v": 2, "type": "op", "seq": 1, "op": "query_address", "args": {"address": "a"}}
    for good in (hello, query, {"v": 2, "type": "ready"}, {"v": 2, "type": "bye"}):
        assert validator.is_valid(good), good
    for wrong in ({**hello, "versions": [2]}, {**hello, "v": 2}, {**query, "v": 3}):
        assert not validator.is_valid(wrong), wrong


def test_the_server_answers_each_request_in_its_own_version_and_refuses_a_query_in_version_1() -> None:
    server = Server("impl")
    hello = server.answer({"v": 1, "type": "hello", "profile": "seed", "domains": []})
    assert hello is not None and hello["v"] == 1 and hello["versions"] == [1, 2, 3]
    assert server.answer({"v": 2, "type": "reset", "domain": "addressing", "profile": "seed",
                          "overrides": {}}) == {"v": 2, "type": "ready"}
    reply = server.answer({"v": 2, "type": "op", "seq": 1, "op": "query_address", "args": {"address": "a"}})
    assert reply is not None and reply["v"] == 2 and reply["outcome"]["type"] == "address_queried"
    refused = server.answer({"v": 1, "type": "op", "seq": 2, "op": "query_address", "args": {"address": "a"}})
    assert refused is not None and refused["type"] == "error" and "version 2" in refused["message"]
    old = Server("impl", protocol=1).answer({"v": 1, "type": "hello", "profile": "seed", "domains": []})
    assert old is not None and "versions" not in old
    two = Server("impl", protocol=2).answer({"v": 1, "type": "hello", "profile": "seed", "domains": []})
    assert two is not None and two["versions"] == [1, 2]


def test_a_version_2_sut_is_asked_queries_over_the_pipe() -> None:
    sut = SubprocessSut(SERVE)
    try:
        assert sut.hello(LATEST, ("addressing",)).version == LATEST_VERSION
        sut.reset("addressing", LATEST)
        outcomes = sut.execute_many([a.CreateAddress("a", frozenset({a.RoutingType.ANYCAST})), a.QueryAddress("a")])
        assert outcomes[1] == a.AddressQueried("a", True, frozenset({a.RoutingType.ANYCAST}))
    finally:
        sut.close()


def test_a_version_1_sut_is_never_asked_a_query() -> None:
    sut = SubprocessSut([*SERVE, "--protocol", "1"])
    try:
        assert sut.hello(LATEST, ("addressing",)).version == 1
        sut.reset("addressing", LATEST)
        with pytest.raises(Unsupported) as caught:
            sut.execute_many([a.CreateAddress("a", frozenset({a.RoutingType.ANYCAST})), a.QueryAddress("a"),
                              a.Lookup("q")])
        assert "version 1" in caught.value.message
        assert caught.value.batch_stop is not None and caught.value.batch_stop.index == 1, \
            "the batch stops before the query, with the outcome before it kept"
        assert sut.execute(a.Lookup("q")) == a.NotFound("q"), "and the session goes on"
    finally:
        sut.close()


def test_the_catalogue_skips_the_query_cases_for_a_version_1_sut_and_runs_them_for_version_2() -> None:
    cases = select(all_cases(), LATEST, ("addressing",), "query-address")
    assert len(cases) == 2
    for protocol, verdict in (("1", Verdict.SKIPPED), ("2", Verdict.PASSED)):
        sut = SubprocessSut([*SERVE, "--protocol", protocol])
        try:
            report = run_conformance(sut, cases, LATEST)
        finally:
            sut.close()
        assert [r.verdict for r in report.results] == [verdict, verdict], protocol
        assert ("queries need version 2" in report.results[0].message) == (protocol == "1")


def test_the_fuzzer_says_which_queries_it_did_not_ask_a_version_1_sut(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sut = " ".join([*SERVE, "--protocol", "1"])
    code = main(["fuzz", "--sut", sut, "--profile", "artemis-latest", "--domain", "addressing", "--budget", "3s",
                 "--seed", "1", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0 and "query_address not asked: the SUT speaks protocol version 1" in out


def test_the_planted_query_bug_is_caught_by_the_query_cases_only(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    planted = "inproc:planted:query-leaves-out-paused-consumers"
    code = main(["conform", "--sut", planted, "--profile", "artemis-latest", "--domain", "balancing",
                 "--json", str(tmp_path / "r.json"), "--junit", str(tmp_path / "j.xml")])
    assert code == 1
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    failed = {r["name"] for r in report["cases"] if r["verdict"] == "failed"}
    assert failed == {"balancing/query-queue-counts-waiting-messages-and-consumers",
                      "balancing/purge-on-no-consumers-drops-until-a-consumer-and-purges-on-the-last-close"}, \
        "the two cases that query a queue with a paused consumer"
    assert "consumers" in capsys.readouterr().out


def test_the_planted_disabled_queue_that_delivers_is_caught_by_the_attribute_case(tmp_path: Path) -> None:
    code = main(["conform", "--sut", "inproc:planted:disabled-queue-still-delivers", "--profile", "artemis-latest",
                 "--domain", "balancing", "--json", str(tmp_path / "r.json"), "--junit", str(tmp_path / "j.xml")])
    assert code == 1
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    failed = {r["name"] for r in report["cases"] if r["verdict"] == "failed"}
    assert failed == {"balancing/disabled-queue-is-chosen-and-drops-the-message"}


def test_a_disabled_queue_keeps_its_turn_and_what_waits_in_it() -> None:
    """LB-QUEUE-ENABLED: the message chosen for a disabled queue vanishes, with no event and no other queue taking
    it; the status is the profile's unrouted one; its waiting message is still consumed."""
    from brokerspec.spec import balancing as b

    domain = get_domain("balancing")
    for status in b.RoutingStatus:
        profile = get_profile("artemis-latest").with_option("balancing.unrouted_status", status.value)
        state = domain.initial_state(profile)
        for command in (b.CreateQueue("n1", "a", "q", a.RoutingType.ANYCAST), b.Send("n1", "a"),
                        b.UpdateQueue("n1", "q", enabled=False)):
            state, _ = domain.apply(state, command)
        state, sent = domain.apply(state, b.Send("n1", "a"))
        assert sent == b.Sent(2, status, ()), status
        state, attached = domain.apply(state, b.Attach("c", "n1", "q"))
        assert attached == b.Done((b.Delivered(1, "n1", "q", "c"),))
