"""The Artemis adapter's pure pieces, without a broker: broker.xml, refusal mapping, the fidelity marks.

Each test here can fail on a plausible mistake in the adapter: a prefix
written to the wrong acceptor parameter, a name that breaks the XML, an AMQ
code mapped to the wrong reason, a failed case counted as agreeing, or a
regenerated page that loses the findings people wrote around its table.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from typing import Any

import pytest

from brokerspec.artemis.addressing import AddressingAdapter
from brokerspec.artemis.config import BrokerConfig, ClusterLink, render_acceptor_url, render_broker_xml
from brokerspec.artemis.driver import CallFailed, Cause
from brokerspec.artemis.fidelity import (
    AGREE,
    BEGIN,
    DIFFER,
    END,
    IDS_ONLY,
    NOT_EXPRESSIBLE,
    NOT_FOR_ARTEMIS,
    Mark,
    ReleaseRun,
    classify,
    ids_only,
    render_markdown,
    unrun_mark,
)
from brokerspec.artemis.outcomes import UnexpectedRefusal
from brokerspec.artemis.releases import RELEASES
from brokerspec.artemis.sut import judged_profile, unexpressible_options
from brokerspec.conform.catalogue import all_cases
from brokerspec.conform.runner import CaseResult, Verdict
from brokerspec.spec import get_profile
from brokerspec.spec.addressing import AddressNotFound, InvalidName, QueueExists, QueueNotFound

NS = {"c": "urn:activemq:core"}


def parsed(config: BrokerConfig) -> ElementTree.Element:
    return ElementTree.fromstring(render_broker_xml(config))


def test_broker_xml_sets_the_profile_options_and_binds_loopback_only() -> None:
    config = BrokerConfig("n1", 61700, "/tmp/probe.jsonl", id_cache_size=7, persist_id_cache=False)
    core = parsed(config).find("c:core", NS)
    assert core is not None
    assert core.findtext("c:id-cache-size", namespaces=NS) == "7"
    assert core.findtext("c:persist-id-cache", namespaces=NS) == "false"
    acceptor = core.findtext("c:acceptors/c:acceptor", namespaces=NS) or ""
    assert acceptor.startswith("tcp://127.0.0.1:61700?")
    assert core.find("c:cluster-connections", NS) is None


def test_prefixes_go_to_their_own_acceptor_parameter() -> None:
    url = render_acceptor_url(BrokerConfig("n1", 1, "p", prefixes={"any://": "ANYCAST", "multi://": "MULTICAST",
                                                                     "a2://": "ANYCAST"}))
    params = dict(p.split("=", 1) for p in url.split("?", 1)[1].split(";"))
    assert params["anycastPrefix"] == "any://,a2://"
    assert params["multicastPrefix"] == "multi://"


def test_hostile_names_stay_inside_their_elements() -> None:
    hostile = 'a"<b>&</c>'
    config = BrokerConfig("n1", 1, "p", address_settings=((hostile, {"auto_create_queues": "false"}),
                                                             ("#", {"auto_create_addresses": "false"})))
    settings = parsed(config).findall("c:core/c:address-settings/c:address-setting", NS)
    matches = [s.get("match") for s in settings]
    assert matches == ["#", hostile]
    catch_all = settings[0]
    assert catch_all.findtext("c:auto-create-addresses", namespaces=NS) == "false"
    assert catch_all.findtext("c:auto-delete-queues", namespaces=NS) == "false"


def test_a_cluster_node_connects_to_every_peer() -> None:
    config = BrokerConfig("n1", 1, "p", peers={"n2": 2, "n3": 3}, cluster=(ClusterLink("orders", "ON_DEMAND"),))
    link = parsed(config).find("c:core/c:cluster-connections/c:cluster-connection", NS)
    assert link is not None
    assert link.findtext("c:message-load-balancing", namespaces=NS) == "ON_DEMAND"
    assert [r.text for r in link.findall("c:static-connectors/c:connector-ref", NS)] == ["to-n2", "to-n3"]


class NoBroker:
    """Stands in for the node where a mapping must not need the broker."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the mapping asked the broker ({name}) where the message says everything")


def refusal(code: str, message: str, kind: str = "") -> CallFailed:
    return CallFailed("manage", (Cause("org.apache.activemq.artemis.api.core.ActiveMQException", f"{code}: {message}",
                                       kind or None),))


@pytest.mark.parametrize(("failure", "expected"), [
    (refusal("AMQ229019", "Queue q1 already exists on address a1"), QueueExists("q1", "a1")),
    (refusal("AMQ229203", "Address Does Not Exist: orders"), AddressNotFound("orders")),
    (refusal("AMQ229017", "Queue jobs does not exist", "QUEUE_DOES_NOT_EXIST"), QueueNotFound("given")),
])
def test_refusals_map_to_the_reason_their_code_names(failure: CallFailed, expected: object) -> None:
    adapter = AddressingAdapter.__new__(AddressingAdapter)
    adapter.node = NoBroker()  # type: ignore[assignment]
    assert adapter.reason(failure, "given") == expected


def test_an_invalid_queue_name_keeps_the_given_name() -> None:
    adapter = AddressingAdapter.__new__(AddressingAdapter)
    adapter.node = NoBroker()  # type: ignore[assignment]
    reason = adapter.reason(refusal("AMQ229216", "Invalid queue name"), "q1::")
    assert isinstance(reason, InvalidName) and reason.name == "q1::"


def test_a_refusal_brokerspec_cannot_name_is_never_guessed() -> None:
    adapter = AddressingAdapter.__new__(AddressingAdapter)
    adapter.node = NoBroker()  # type: ignore[assignment]
    with pytest.raises(UnexpectedRefusal, match="cannot name"):
        adapter.reason(refusal("AMQ119999", "disk full"), "q1")


CASE = all_cases()[0]


@pytest.mark.parametrize(("verdict", "message", "mark"), [
    (Verdict.PASSED, "", AGREE),
    (Verdict.FAILED, "sut parted from the spec at step 2\n  spec: Resolved(x)\n  sut: NotFound(y)", DIFFER),
    (Verdict.SUT_FAILURE, "not expressible over the wire: a delete_id has no client call", NOT_EXPRESSIBLE),
    (Verdict.SUT_FAILURE, "the SUT answered garbage", DIFFER),
])
def test_each_verdict_gets_its_mark(verdict: Verdict, message: str, mark: str) -> None:
    got, note = classify(CaseResult(CASE, verdict, step=2, message=message))
    assert got == mark
    if mark == DIFFER and verdict is Verdict.FAILED:
        assert note == "spec: Resolved(x) / sut: NotFound(y)"


def test_regenerating_the_page_keeps_the_findings_around_the_table() -> None:
    run = ReleaseRun("2.40.0", "artemis-latest", [Mark("addressing/x", "2.40.0", AGREE),
                                                  Mark("addressing/y", "2.40.0", DIFFER, 3, "spec: a / sut: b")])
    page = f"# Fidelity\n\nintro\n\n{BEGIN}\nold table\n{END}\n\n## Findings\n\nkept\n"
    written = render_markdown([run], page)
    assert written.startswith("# Fidelity\n\nintro\n\n") and written.endswith("## Findings\n\nkept\n")
    assert "old table" not in written
    assert "| 2.40.0 | `artemis-latest` | 2 | 1 | 1 | 0 |" in written
    assert "| `addressing/y` | differ | spec: a / sut: b |" in written


def test_options_a_release_cannot_have_are_named_and_configurable_ones_are_not() -> None:
    release = RELEASES["2.40.0"]
    wanted = get_profile("artemis-latest", (("duplicates.id_cache_size", "3"),
                                            ("duplicates.nontx_add", "BEFORE_COMMIT")))
    assert unexpressible_options(release, wanted, "duplicates") == [
        "duplicates.nontx_add=BEFORE_COMMIT (the release has IMMEDIATE)"]
    assert judged_profile("2.40.0", get_profile("artemis-latest")).label == \
        "artemis-latest+balancing.fqqn_send=LOCAL"


def test_cases_the_adapter_does_not_run_are_marked_by_why() -> None:
    by_domain = {case.domain: case for case in all_cases()}
    assert unrun_mark(by_domain["addressing"], "2.40.0") is None
    assert unrun_mark(by_domain["balancing"], "2.40.0") is None
    topologies = unrun_mark(by_domain["topologies"], "2.40.0")
    assert topologies is not None and topologies.mark == NOT_FOR_ARTEMIS
    unexpressible = Mark("b", "2.40.0", NOT_EXPRESSIBLE, 3, "why")
    run = ReleaseRun("2.40.0", "p", [unexpressible, topologies, Mark("a", "2.40.0", AGREE)], seconds=60.0)
    assert run.cases_per_minute == 2.0


class RecordingSut:
    """Stands in for the SUT: records the profile each rerun case gets and passes or fails it."""

    def __init__(self, passes: bool) -> None:
        self.passes = passes
        self.profiles: list[str] = []


def test_only_a_differing_balancing_case_under_early_copies_is_rerun_without_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from brokerspec.artemis import fidelity

    by_domain = {case.domain: case for case in all_cases()}
    old, latest = get_profile("artemis-2.11"), get_profile("artemis-latest")
    failed = CaseResult(by_domain["balancing"], Verdict.FAILED, step=3, message="spec: x / sut: y")
    for passes in (True, False):
        sut = RecordingSut(passes)

        def rerun(s: Any, case: Any, profile: Any, sut: RecordingSut = sut) -> CaseResult:
            sut.profiles.append(profile.label)
            return CaseResult(case, Verdict.PASSED if sut.passes else Verdict.FAILED)

        monkeypatch.setattr(fidelity, "run_case", rerun)
        assert ids_only(sut, failed, old) is passes  # type: ignore[arg-type]
        assert sut.profiles == ["artemis-2.11+balancing.copy_before_target=false"]
        assert not ids_only(sut, failed, latest)  # type: ignore[arg-type]
        assert not ids_only(sut, CaseResult(by_domain["addressing"], Verdict.FAILED), old)  # type: ignore[arg-type]
        assert not ids_only(sut, CaseResult(by_domain["balancing"], Verdict.SUT_FAILURE), old)  # type: ignore[arg-type]
        assert len(sut.profiles) == 1
    assert "ARTEMIS-4207" in IDS_ONLY


def test_conform_reports_a_case_that_differs_only_in_unseen_ids_as_not_expressible(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``brokerspec conform`` against a release before 2.29.0 does not fail the release for IDs no client sees."""
    from brokerspec.artemis import fidelity

    case = next(c for c in all_cases() if c.domain == "balancing")
    failed = CaseResult(case, Verdict.FAILED, step=3, message="spec: x / sut: y")
    for passes, verdict in ((True, Verdict.SUT_FAILURE), (False, Verdict.FAILED)):
        sut = RecordingSut(passes)

        def rerun(s: Any, case: Any, profile: Any, sut: RecordingSut = sut) -> CaseResult:
            return CaseResult(case, Verdict.PASSED if sut.passes else Verdict.FAILED)

        monkeypatch.setattr(fidelity, "run_case", rerun)
        result = fidelity.recheck_unseen(sut, get_profile("artemis-2.11"))(failed)  # type: ignore[arg-type]
        assert result.verdict is verdict
        assert (IDS_ONLY in result.message) is passes
        if passes:  # the fidelity page marks it with that note
            assert fidelity.classify(result) == (fidelity.NOT_EXPRESSIBLE, IDS_ONLY)
    passed = CaseResult(case, Verdict.PASSED)
    assert fidelity.recheck_unseen(RecordingSut(True), get_profile("artemis-2.11"))(passed) is passed  # type: ignore[arg-type]


def test_a_disabled_queue_without_a_filter_is_made_with_no_filter_string_at_all() -> None:
    """Artemis reads a JSON null filter as the text ``null`` (found fuzzing 2.40.0): the key is left out."""
    import json

    from brokerspec.artemis.balancing import colour_of, disabled_queue_json
    from brokerspec.spec.addressing import RoutingType as Kind
    from brokerspec.spec.balancing import CreateQueue as MakeQueue

    plain = json.loads(disabled_queue_json("bs1.q1", "bs1.a1", MakeQueue("n1", "a1", "q1", Kind.ANYCAST, enabled=False)))
    assert "filter-string" not in plain and plain["enabled"] is False and plain["routing-type"] == "ANYCAST"
    red = json.loads(disabled_queue_json("bs1.q1", "bs1.a1",
                                         MakeQueue("n1", "a1", "q1", Kind.MULTICAST, "red", enabled=False,
                                                   purge_on_no_consumers=True)))
    assert colour_of(red["filter-string"]) == "red" and red["purge-on-no-consumers"] is True
    with pytest.raises(UnexpectedRefusal):
        colour_of("null")


# --- the load-balancing consumers on a cluster that only records what it is asked ---------------------------------


class RecordingCluster:
    """One node, n1: the driver's calls are recorded (``refuse`` maps a command to the failure it raises once),
    and every settle sees ``queues`` (broker name -> waiting tags) and ``deliveries``, which it hands out once."""

    def __init__(self) -> None:
        self.names = ("n1",)
        self.node_ids = {"n1": "id1"}
        self.nodes = {"n1": self}
        self.driver = self
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.refuse: dict[str, CallFailed] = {}
        self.queues: dict[str, tuple[str, ...]] = {}
        self.deliveries: list[dict[str, Any]] = []
        self.held: list[dict[tuple[str, str], int]] = []
        self.records: list[dict[str, Any]] = []
        self.version = "2.40.0"
        self.lb_types = {"n1": "ON_DEMAND"}

    def call(self, command: str, **fields: Any) -> dict[str, Any]:
        self.calls.append((command, fields))
        if command in self.refuse:
            raise self.refuse.pop(command)
        return {"ok": True, "exists": True}

    def settle(self, expected: object, ours: object, held: Any = None) -> tuple[Any, list[dict[str, Any]]]:
        from brokerspec.artemis.cluster import LocalQueue, Snapshot

        deliveries, self.deliveries = self.deliveries, []
        self.held.append(dict(held(deliveries)) if held is not None else {})
        queues = tuple(LocalQueue("n1", "a", name, 0, len(tags), 0, tags) for name, tags in self.queues.items())
        return Snapshot(queues, ()), deliveries

    def manage(self, operation: str, *params: Any, resource: str = "broker") -> Any:
        return self.call("manage", resource=resource, operation=operation, params=list(params))

    def events(self, node: str) -> list[dict[str, Any]]:
        records, self.records = self.records, []
        return records

    def sent(self, command: str) -> list[dict[str, Any]]:
        return [fields for name, fields in self.calls if name == command]


def balancing_adapter(order: str = "ARRIVAL") -> tuple[Any, RecordingCluster]:
    from brokerspec.artemis.balancing import BalancingAdapter, QueueInfo
    from brokerspec.artemis.consumers import ConsumerInfo
    from brokerspec.artemis.placement import Instance
    from brokerspec.spec import BalancingOptions, ReturnOrder

    cluster = RecordingCluster()
    made = BalancingAdapter(cluster)  # type: ignore[arg-type]
    made.prefix, made.nodes, made.options = "bs1.", ["n1"], BalancingOptions(close_return_order=ReturnOrder(order))
    made.queues = {("n1", "q"): QueueInfo("a", "a", 1)}
    made.consumers = {"c1": ConsumerInfo("bs1.c1@0", "s1", ("n1", "q"), manual_ack=True),
                      "c2": ConsumerInfo("bs1.c2@1", "s2", ("n1", "q"), pull=True)}
    made.held = {"c1": tuple(Instance(n, f"bs1.{n}", ("n1", "q")) for n in (1, 3, 4))}
    made.waiting = {("n1", "q"): (Instance(2, "bs1.2", ("n1", "q")),)}
    made.next_id = 5
    return made, cluster


def test_an_ack_sends_the_last_message_up_to_the_one_named_and_keeps_the_rest_held() -> None:
    from brokerspec.spec.balancing import Ack, Done, Receive, Refusal, Refused

    made, cluster = balancing_adapter()
    cluster.queues = {"bs1.q": ("bs1.2",)}
    assert made.execute(Ack("c1", 3)) == Done()
    assert cluster.sent("ack") == [{"consumer": "bs1.c1@0", "tag": "bs1.3"}]
    assert [i.id for i in made.held["c1"]] == [4] and cluster.held[-1] == {("n1", "bs1.q"): 1}
    assert made.execute(Ack("c1")) == Done() and cluster.sent("ack")[-1]["tag"] == "bs1.4"
    assert made.execute(Ack("c1")) == Done() and len(cluster.sent("ack")) == 2  # nothing held: nothing to send
    assert made.execute(Ack("c9")) == Refused(Refusal.CONSUMER_NOT_FOUND)
    assert made.execute(Receive("c1")) == Refused(Refusal.NOT_PULLING)
    assert made.execute(Receive("c9")) == Refused(Refusal.CONSUMER_NOT_FOUND)
    assert len(cluster.sent("ack")) == 2 and not cluster.sent("receive")


def test_an_ack_of_a_message_not_held_gives_back_what_is_held_or_is_refused_when_nothing_is() -> None:
    from brokerspec.spec.balancing import Ack, Delivered, Failed, Refusal, Refused, Returned

    refusal = CallFailed("ack", (Cause("org.apache.activemq.artemis.api.core.ActiveMQIllegalStateException",
                                       "AMQ229027: Could not find reference", "ILLEGAL_STATE"),))
    made, cluster = balancing_adapter()
    cluster.queues = {"bs1.q": ("bs1.2",)}
    cluster.refuse["ack"] = refusal
    assert made.execute(Ack("c2", 9)) == Refused(Refusal.NOT_DELIVERED)  # c2 holds nothing
    assert cluster.sent("ack") == [{"consumer": "bs1.c2@1", "tag": None}]
    with pytest.raises(UnexpectedRefusal, match="took an acknowledgement"):
        made.execute(Ack("c2", 2))  # the broker did not refuse it
    cluster.refuse["ack"] = refusal
    cluster.deliveries = [{"consumer": "bs1.c1@0", "properties": {"_BS_TAG": f"bs1.{n}"}} for n in (1, 3, 4)]
    outcome = made.execute(Ack("c1", 9))  # its own transaction rolled back: each spent a delivery, taken again
    assert outcome == Failed(Refusal.NOT_DELIVERED, (
        *(Returned(n, "n1", "q") for n in (1, 3, 4)), Delivered(1, "n1", "q", "c1"), Delivered(2, "n1", "q", None),
        Delivered(3, "n1", "q", "c1"), Delivered(4, "n1", "q", "c1")))
    assert [i.id for i in made.held["c1"]] == [1, 3, 4] and made.spent == {1: 1, 3: 1, 4: 1}
    assert cluster.held[-1] == {("n1", "bs1.q"): 3}


def test_a_receive_records_what_the_pulling_consumer_took() -> None:
    from brokerspec.spec.balancing import Delivered, Done, Receive

    made, cluster = balancing_adapter()
    cluster.deliveries = [{"consumer": "bs1.c2@1", "properties": {"_BS_TAG": "bs1.2"}}]
    assert made.execute(Receive("c2")) == Done((Delivered(2, "n1", "q", "c2"),))
    assert cluster.sent("receive") == [{"consumer": "bs1.c2@1", "record": True}]
    assert made.waiting == {} and "c2" not in made.held  # c2 acknowledges at once


def test_a_close_gives_back_what_it_held_in_the_profiles_order() -> None:
    from brokerspec.spec.balancing import Close, Delivered, Done, Returned

    for order, expected in (("ARRIVAL", [1, 2, 3, 4]), ("HEAD", [1, 3, 4, 2])):
        made, cluster = balancing_adapter(order)
        cluster.queues = {"bs1.q": tuple(f"bs1.{n}" for n in expected)}
        outcome = made.execute(Close("c1"))
        returned = tuple(Returned(n, "n1", "q") for n in (1, 3, 4))
        assert outcome == Done((*returned, *(Delivered(n, "n1", "q", None) for n in expected))), order
        assert "c1" not in made.held and [i.id for i in made.waiting[("n1", "q")]] == expected
        assert cluster.sent("close_session") == [{"id": "s1"}] and cluster.held[-1] == {}


def test_a_purging_queue_drops_a_close_returned_messages_with_the_rest_from_2_31() -> None:
    from brokerspec.spec.balancing import Close, Delivered, Done, Dropped, Returned

    made, cluster = balancing_adapter()
    made.purging = {("n1", "q")}
    del made.consumers["c2"]
    outcome = made.execute(Close("c1"))
    assert outcome == Done((*(Returned(n, "n1", "q") for n in (1, 3, 4)),
                            *(Delivered(n, "n1", "q", None) for n in (1, 2, 3, 4)),
                            *(Dropped(n, "n1", "q") for n in (1, 2, 3, 4))))
    made, cluster = balancing_adapter("HEAD")
    made.purging = {("n1", "q")}
    del made.consumers["c2"]
    outcome = made.execute(Close("c1"))  # 2.11 purges what waits, then what comes back (postRollback)
    assert outcome == Done((Dropped(2, "n1", "q"), *(Returned(n, "n1", "q") for n in (1, 3, 4)),
                            *(Dropped(n, "n1", "q") for n in (1, 3, 4))))
    assert made.waiting == {}


def test_a_transacted_send_is_held_until_the_commit_lands_it_and_a_rollback_forgets_it() -> None:
    from brokerspec.spec.balancing import Commit, Delivered, Done, Refusal, Refused, Rollback, RoutingStatus, Send, Sent

    made, cluster = balancing_adapter()
    made.addresses = {"bs1.a"}
    cluster.queues = {"bs1.q": ("bs1.2",)}
    cluster.records = [{"event": "send", "tag": "bs1.5", "status": "OK"},
                       {"event": "route", "tag": "bs1.5", "queues": ["bs1.q"]}]
    assert made.execute(Send("n1", "a", tx="t1")) == Sent(5, RoutingStatus.OK)
    session = made.tx["t1"]
    assert cluster.sent("session")[-1] == {"id": session.real, "transacted": True}
    assert cluster.sent("send")[-1]["session"] == session.real and [p.id for p in session.sends] == [5]
    made.nodes.append("n2")
    assert made.execute(Send("n2", "a", tx="t1")) == Refused(Refusal.SESSION_ON_OTHER_NODE)
    assert made.execute(Send("n1", "a", tx="c1")) == Refused(Refusal.NOT_TRANSACTED)
    cluster.queues = {"bs1.q": ("bs1.2", "bs1.5")}
    assert made.execute(Commit("t1")) == Done((Delivered(5, "n1", "q", None),))
    assert cluster.sent("commit") == [{"session": session.real}] and session.sends == []
    cluster.records = [{"event": "send", "tag": "bs1.6", "status": "OK"},
                       {"event": "route", "tag": "bs1.6", "queues": ["bs1.q"]}]
    made.execute(Send("n1", "a", tx="t1"))
    assert made.execute(Rollback("t1")) == Done() and session.sends == []
    assert made.execute(Commit("t9")) == Refused(Refusal.SESSION_NOT_FOUND)
    assert made.execute(Rollback("c1")) == Refused(Refusal.NOT_TRANSACTED)


def test_a_transacted_consumers_rollback_failed_ack_and_failed_commit() -> None:
    from brokerspec.artemis.consumers import ConsumerInfo
    from brokerspec.artemis.placement import Instance
    from brokerspec.artemis.sessions import TxSession
    from brokerspec.spec.balancing import Ack, Commit, Delivered, Done, Failed, Refusal, Returned, Rollback

    made, cluster = balancing_adapter()
    made.consumers["c1"] = ConsumerInfo("bs1.c1@0", "s1", ("n1", "q"), manual_ack=True, transacted=True)
    made.tx = {"c1": TxSession("s1", "n1", consumer=True)}
    made.acked = {"c1": (Instance(0, "bs1.0", ("n1", "q")),)}
    cluster.queues = {"bs1.q": ("bs1.2",)}
    assert made.execute(Ack("c1", 3)) == Done()  # 1 and 3 join the transaction, 4 stays held
    assert [i.id for i in made.acked["c1"]] == [0, 1, 3] and [i.id for i in made.held["c1"]] == [4]
    assert cluster.held[-1] == {("n1", "bs1.q"): 4}  # acknowledged in a transaction: still delivering
    cluster.queues = {"bs1.q": ("bs1.0", "bs1.1", "bs1.2", "bs1.3", "bs1.4")}
    outcome = made.execute(Rollback("c1"))
    assert outcome == Done((*(Returned(n, "n1", "q") for n in (0, 1, 3, 4)),
                            *(Delivered(n, "n1", "q", None) for n in (0, 1, 2, 3, 4))))
    assert made.spent == {0: 1, 1: 1, 3: 1} and "c1" not in made.acked and "c1" not in made.held
    made.held["c1"] = (Instance(1, "bs1.1", ("n1", "q")),)
    made.waiting[("n1", "q")] = tuple(i for i in made.waiting[("n1", "q")] if i.id != 1)
    cluster.queues = {"bs1.q": ("bs1.0", "bs1.2", "bs1.3", "bs1.4")}
    cluster.refuse["ack"] = CallFailed("ack", (Cause("x", "AMQ229027", "ILLEGAL_STATE"),))
    assert made.execute(Ack("c1", 9)) == Failed(Refusal.NOT_DELIVERED)
    assert made.tx["c1"].rollback_only and [i.id for i in made.acked["c1"]] == [1] and "c1" not in made.held
    cluster.refuse["commit"] = CallFailed("commit", (Cause("x", "AMQ229027", "ILLEGAL_STATE"),))
    cluster.queues = {"bs1.q": ("bs1.0", "bs1.1", "bs1.2", "bs1.3", "bs1.4")}
    outcome = made.execute(Commit("c1"))
    assert outcome == Failed(Refusal.ROLLBACK_ONLY, (Returned(1, "n1", "q"),
                                                     *(Delivered(n, "n1", "q", None) for n in (0, 1, 2, 3, 4))))
    assert not made.tx["c1"].rollback_only and made.spent[1] == 2
    with pytest.raises(UnexpectedRefusal, match="rollback-only"):
        made.tx["c1"].rollback_only = True
        made.execute(Commit("c1"))  # the broker committed it


def test_closing_a_transacted_consumer_rolls_back_its_session_after_the_close() -> None:
    from brokerspec.artemis.consumers import ConsumerInfo
    from brokerspec.artemis.outcomes import NotExpressible
    from brokerspec.artemis.placement import Instance
    from brokerspec.artemis.sessions import TxSession
    from brokerspec.spec.balancing import Close, Delivered, Done, Returned

    for others in (False, True):
        made, cluster = balancing_adapter("HEAD")
        made.consumers["c1"] = ConsumerInfo("bs1.c1@0", "s1", ("n1", "q"), manual_ack=True, transacted=True)
        made.tx = {"c1": TxSession("s1", "n1", consumer=True)}
        made.acked = {"c1": (Instance(0, "bs1.0", ("n1", "q")),)}
        if not others:
            del made.consumers["c2"]
            cluster.queues = {"bs1.q": ("bs1.0", "bs1.1", "bs1.3", "bs1.4", "bs1.2")}
            outcome = made.execute(Close("c1"))
            assert outcome == Done((*(Returned(n, "n1", "q") for n in (1, 3, 4)),
                                    *(Delivered(n, "n1", "q", None) for n in (1, 3, 4, 2)), Returned(0, "n1", "q"),
                                    *(Delivered(n, "n1", "q", None) for n in (0, 1, 3, 4, 2))))
            assert made.tx == {} and made.acked == {} and made.spent == {0: 1}
        else:
            with pytest.raises(NotExpressible, match="twice"):
                made.execute(Close("c1"))


def test_a_resend_is_not_expressible_and_a_restart_clears_updated_filters_again() -> None:
    import json

    from brokerspec.artemis.outcomes import NotExpressible
    from brokerspec.artemis.sessions import PendingSend, TxSession
    from brokerspec.spec import BalancingOptions
    from brokerspec.spec.balancing import Refusal, Refused, Resend, UpdateQueue

    made, cluster = balancing_adapter()
    assert made.execute(Resend("n1", "n1")) == Refused(Refusal.BAD_VALUE)
    assert made.execute(Resend("n1", "n3")) == Refused(Refusal.UNKNOWN_NODE)
    made.nodes.append("n2")
    with pytest.raises(NotExpressible, match="confirmation"):
        made.execute(Resend("n1", "n2"))
    made.options = BalancingOptions()
    cluster.queues = {"bs1.q": ("bs1.2",)}
    made.execute(UpdateQueue("n1", "q", enabled=True))
    assert made.cleared_filters == {("n1", "q")}
    with pytest.raises(NotExpressible, match="consumers"):
        made.restart("a type")
    made.consumers = {}
    made.tx = {"t1": TxSession("s", "n1", sends=[PendingSend(9, "bs1.9", (), {})])}
    with pytest.raises(NotExpressible, match="open transactions"):
        made.restart("a type")
    made.tx["t1"].sends = []
    made.restart("a type")
    assert made.tx == {"t1": TxSession("", "n1")}  # reopened by its next send
    reopened = made.tx_session("t1", "n1")
    assert reopened and cluster.sent("session")[-1] == {"id": reopened, "transacted": True}
    made.restarted()
    assert cluster.sent("manage")[-1]["params"] == [json.dumps({"name": "bs1.q"})]
