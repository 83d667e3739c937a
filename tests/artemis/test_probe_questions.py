"""Asking the probe inside a real broker a question (``Node.ask``), against a stand-in driver and probe file.

The probe answers by writing a line and refusing the question. A broker swallows a plugin's exception that is
not an ActiveMQException (``ActiveMQServerImpl.callBrokerPlugins``), so an answer that threw is written with an
``error`` and must be asked again; an answer that never comes, or keeps failing, must be named, not waited on.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from brokerspec.artemis import node as node_module
from brokerspec.artemis.driver import CallFailed, Cause
from brokerspec.artemis.node import PROBE_ATTEMPTS, Node
from brokerspec.artemis.outcomes import UnexpectedRefusal

REFUSED = CallFailed("send", (Cause("org.apache.activemq.artemis.api.core.ActiveMQException",
                                    "brokerspec probe answered state", "GENERIC_EXCEPTION"),))


class ScriptedProbe:
    """A driver whose every question is answered from ``answers`` (one per send; ``None`` writes nothing)."""

    def __init__(self, probe_file: Path, answers: list[dict[str, Any] | None],
                 refusal: CallFailed = REFUSED) -> None:
        self.probe_file = probe_file
        self.answers = answers
        self.refusal = refusal
        self.sends = 0
        self.syncs = 0

    def call(self, command: str, **fields: Any) -> dict[str, Any]:
        if command == "sync":
            self.syncs += 1
            return {"ok": True}
        assert command == "send" and fields["address"] == "$bs.probe"
        properties = fields["properties"]
        answer = self.answers[self.sends]
        self.sends += 1
        with self.probe_file.open("a", encoding="utf-8") as out:
            out.write(json.dumps({"event": "route", "tag": "other", "queues": []}) + "\n")
            if answer is not None:
                out.write(json.dumps({"event": properties["_BS_PROBE"]["value"],
                                      "tag": properties["_BS_TAG"]["value"], **answer}) + "\n")
        raise self.refusal


def probed_node(tmp_path: Path, answers: list[dict[str, Any] | None],
                refusal: CallFailed = REFUSED) -> tuple[Node, ScriptedProbe]:
    probe_file = tmp_path / "probe.jsonl"
    probe_file.write_text(json.dumps({"event": "route", "tag": "before", "queues": []}) + "\n", encoding="utf-8")
    driver = ScriptedProbe(probe_file, answers, refusal)
    broker = SimpleNamespace(config=SimpleNamespace(probe_file=str(probe_file)),
                             log_tail=lambda: "WARN Internal error on plugin")
    return Node("cl-n1", broker, driver), driver  # type: ignore[arg-type]


def test_an_answer_is_returned_with_every_record_written_since_the_last_read(tmp_path: Path) -> None:
    node, driver = probed_node(tmp_path, [{"bindings": [{"name": "q1"}]}])
    answer, records = node.ask("s1", "state")
    assert answer["bindings"] == [{"name": "q1"}]
    assert [r["tag"] for r in records] == ["other", answer["tag"]]
    assert (driver.sends, driver.syncs) == (1, 1)


def test_a_failed_answer_is_asked_again_until_one_succeeds(tmp_path: Path) -> None:
    node, driver = probed_node(tmp_path, [{"error": "java.util.NoSuchElementException"},
                                          {"error": "java.util.NoSuchElementException"}, {"bindings": []}])
    answer, records = node.ask("s1", "state")
    assert answer == {"event": "state", "tag": answer["tag"], "bindings": []}
    assert driver.sends == 3
    assert sum(1 for r in records if r["event"] == "state") == 3


def test_an_answer_that_keeps_failing_is_named_after_the_last_attempt(tmp_path: Path) -> None:
    node, driver = probed_node(tmp_path, [{"error": "java.lang.NullPointerException"}] * PROBE_ATTEMPTS)
    with pytest.raises(UnexpectedRefusal, match=r"cl-n1 could not answer 'state' in \d+ attempts: .*NullPointer"):
        node.ask("s1", "state")
    assert driver.sends == PROBE_ATTEMPTS


def test_a_missing_answer_is_named_once_the_wait_is_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(node_module, "PROBE_WAIT", 0.05)
    node, driver = probed_node(tmp_path, [None])
    with pytest.raises(UnexpectedRefusal, match=r"did not answer 'tx' \(0 answers\); the broker's log: WARN Internal"):
        node.ask("s1", "tx")
    assert driver.sends == 1


def test_a_refusal_that_is_not_the_probes_answer_reaches_the_caller(tmp_path: Path) -> None:
    lost = CallFailed("send", (Cause("org.apache.activemq.artemis.api.core.ActiveMQNotConnectedException",
                                     "AMQ219006: connection lost", "NOT_CONNECTED"),))
    node, _ = probed_node(tmp_path, [{"tx": None}], refusal=lost)
    with pytest.raises(CallFailed, match="AMQ219006"):
        node.ask("s1", "tx")
