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

    def events(self, node: str) -> list[dict[str, Any]]:
        return []

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


def test_a_refused_ack_is_not_delivered_only_when_the_broker_refused_it_and_moved_nothing() -> None:
    from brokerspec.spec.balancing import Ack, Refusal, Refused

    refusal = CallFailed("ack", (Cause("org.apache.activemq.artemis.api.core.ActiveMQIllegalStateException",
                                       "AMQ229027: Could not find reference", "ILLEGAL_STATE"),))
    made, cluster = balancing_adapter()
    cluster.queues = {"bs1.q": ("bs1.2",)}
    cluster.refuse["ack"] = refusal
    assert made.execute(Ack("c1", 9)) == Refused(Refusal.NOT_DELIVERED)
    assert cluster.sent("ack") == [{"consumer": "bs1.c1@0", "tag": None}]
    assert [i.id for i in made.held["c1"]] == [1, 3, 4]
    with pytest.raises(UnexpectedRefusal, match="took an acknowledgement"):
        made.execute(Ack("c1", 2))  # the broker did not refuse it
    cluster.refuse["ack"] = refusal
    cluster.deliveries = [{"consumer": "bs1.c1@0", "properties": {"_BS_TAG": "bs1.1"}}]  # given back, taken again
    with pytest.raises(UnexpectedRefusal, match="gave back what the consumer held"):
        made.execute(Ack("c1", 9))


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
    with pytest.raises(UnexpectedRefusal, match="purged too"):  # 2.11 drops them as they come back
        made.execute(Close("c1"))
