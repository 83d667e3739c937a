"""docs/sut-author-guide.md is what the spec makes now, and what it says holds.

The page is generated (``make docs``); a spec change that alters an argument, an outcome, a rule, a check
order or a list order fails here until the page is rewritten. The other tests check the generator's claims
against facts stated independently of it: Artemis's order of checks in ``ActiveMQServerImpl.createQueue``,
the free-text field of ``InvalidName``, and orders that a wrong broker would break.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import re
from pathlib import Path

import pytest

from brokerspec.codec import (
    COMMANDS,
    OUTCOMES,
    CodecError,
    decode_command,
    decode_outcome,
    encode_command,
    encode_outcome,
)
from brokerspec.conform.catalogue import RULE_TABLES
from brokerspec.spec import addressing, get_profile
from brokerspec.spec.addressing import Ambiguous, CreateAddress, CreateQueue, RoutingType
from brokerspec.spec.balancing import Delivered, RoutingStatus, Sent
from brokerspec.sutguide import main, profiles_text, render
from brokerspec.sutguide_order import RULES, OrderingError, check_rules
from brokerspec.sutguide_probes import PROBES, Probe, run_probe
from brokerspec.sutguide_types import never_compared_text, wire_type

DOC = Path(__file__).resolve().parents[1] / "docs" / "sut-author-guide.md"
FIX = "docs/sut-author-guide.md is stale: run `make docs` (python -m brokerspec.sutguide --write) and commit it"


@pytest.fixture(scope="module")
def page() -> str:
    return render()


def test_the_committed_page_is_current(page: str) -> None:
    committed = DOC.read_text(encoding="utf-8")
    if committed != page:
        diff = "\n".join(difflib.unified_diff(committed.splitlines(), page.splitlines(), "in the repository",
                                              "from the spec now", lineterm="", n=1))
        pytest.fail(f"{FIX}\n{diff[:4000]}")


def test_every_operation_of_every_domain_has_a_section(page: str) -> None:
    for domain, commands in COMMANDS.items():
        section = page.split(f"## `{domain}`", 1)[1].split("\n## ", 1)[0]
        for op in commands:
            assert f"#### `{op}`" in section, f"{domain} operation {op} has no section"


def test_every_reason_outcome_and_rule_is_on_the_page(page: str) -> None:
    for reason in addressing.REASON_TYPES:
        assert f"`{reason.kind}`: " in page
    for domain, outcomes in OUTCOMES.items():
        for kind in outcomes:
            assert f"`{kind}`: " in page, f"{domain} outcome {kind}"
    for rules in RULE_TABLES.values():
        for rule_id in rules:
            assert f"| `{rule_id}` |" in page


def test_free_text_is_named_as_never_compared(page: str) -> None:
    """InvalidName.problem is words for people (spec/addressing/outcomes.py): the page must say it is not compared."""
    assert "`invalid_name.problem`" in never_compared_text()
    reasons = page.split("### Reasons", 1)[1]
    invalid = reasons.split("`invalid_name`: ", 1)[1].split("\n\n`", 1)[0]
    assert "| `problem` | string | never (free text) |" in invalid
    assert "| `name` | string | exactly |" in invalid


def test_wire_types_follow_the_codec() -> None:
    """brokerspec.codec writes a frozenset as a list it decodes in any order without repeats, a tuple in order."""
    assert wire_type(frozenset[RoutingType]) == (
        'set of one of `"ANYCAST"`, `"MULTICAST"` (a list: any order, no repeats)')
    assert wire_type(RoutingType | None) == 'one of `"ANYCAST"`, `"MULTICAST"` or `null`'
    assert wire_type(tuple[int, ...]) == "list of integer, in order"


def test_create_queue_checks_in_artemis_order() -> None:
    """ActiveMQServerImpl.createQueue refuses an existing queue (AMQ229019) before a routing type (AMQ229207)."""
    probe = next(p for p in PROBES
                 if p.first_rule == "ADDR-QUEUE-EXISTS" and p.second_rule == "ADDR-QUEUE-ROUTING-TYPE")
    for name in ("seed", "artemis-2.11", "artemis-latest"):
        result = run_probe(probe, get_profile(name))
        assert result.winner == "first", name
        assert result.outcome is not None and result.outcome.rule == "ADDR-QUEUE-EXISTS"


def test_a_name_taken_elsewhere_refuses_nothing_under_the_seed() -> None:
    """Seed 000 scopes queue names per address, so a same-named queue elsewhere is no check to order."""
    probe = next(p for p in PROBES if p.first == "a queue of that name is on another address")
    result = run_probe(probe, get_profile("seed"))
    assert result.winner is None and "ADDR-QUEUE-EXISTS" in result.why_not


def test_a_probe_whose_condition_does_not_give_its_rule_shows_no_order() -> None:
    def make(empty: bool, wrong_type: bool) -> tuple[object, ...]:
        return (CreateAddress("a", frozenset({RoutingType.ANYCAST})),
                CreateQueue("a", "" if empty else "q", RoutingType.MULTICAST if wrong_type else RoutingType.ANYCAST))

    mislabelled = Probe("addressing", "the queue name is empty", "ADDR-QUEUE-EXISTS",
                        "the routing type is not allowed", "ADDR-QUEUE-ROUTING-TYPE", make)
    result = run_probe(mislabelled, get_profile("seed"))
    assert result.winner is None and result.outcome is None
    assert "ADDR-QUEUE-EXISTS" in result.why_not


def test_every_probe_shows_an_order_under_some_profile() -> None:
    for probe in PROBES:
        results = [run_probe(probe, get_profile(name)) for name in ("seed", "artemis-2.11", "artemis-latest")]
        assert any(r.winner for r in results), (probe.first, probe.second, [r.why_not for r in results])


def test_an_order_a_wrong_broker_breaks_is_refused() -> None:
    """Candidates in the wrong order, and balancing deliveries not by (node, queue), contradict the stated order."""
    with pytest.raises(OrderingError, match="ambiguous.candidates"):
        check_rules([("addressing", Ambiguous("q", ("b::q", "a::q")))], [RULES[0]])
    balancing = next(r for r in RULES if r.domain == "balancing")
    unsorted = Sent(1, RoutingStatus.OK, (Delivered(1, "n2", "q", None), Delivered(1, "n1", "q", None)))
    with pytest.raises(OrderingError, match="sent.events"):
        check_rules([("balancing", unsorted)], [balancing])


def test_an_order_never_tested_is_refused() -> None:
    with pytest.raises(OrderingError, match="never checked"):
        check_rules([("addressing", Ambiguous("q", ("a::q",)))], [RULES[0]])


def test_profiles_are_summarised() -> None:
    assert profiles_text(["seed", "artemis-2.11", "artemis-latest", "seed with `x=1`"]) == "all"
    assert profiles_text(["artemis-latest", "seed with `x=1`", "artemis-latest with `x=1`"]) == (
        "seed with `x=1`, artemis-latest")


def test_check_and_write(tmp_path: Path, page: str) -> None:
    doc = tmp_path / "guide.md"
    assert main([str(doc)]) == 1  # missing
    doc.write_text("old\n", encoding="utf-8")
    assert main([str(doc)]) == 1
    assert doc.read_text(encoding="utf-8") == "old\n"
    assert main(["--write", str(doc)]) == 0
    assert doc.read_text(encoding="utf-8") == page
    assert main([str(doc)]) == 0


def test_fields_marked_compared_are_compared() -> None:
    """The page's 'compared' column is the dataclass field's compare flag: check one of each against equality."""
    problem = next(f for f in dataclasses.fields(addressing.InvalidName) if f.name == "problem")
    assert not problem.compare
    assert addressing.InvalidName("", "one wording") == addressing.InvalidName("", "another")
    assert addressing.QueueExists("q", "a") != addressing.QueueExists("q", "b")


def test_every_example_is_wire_json_the_codec_reads(page: str) -> None:
    """Each example's arguments and outcome decode with brokerspec.codec and encode back to the same JSON."""
    checked = 0
    for domain in COMMANDS:
        section = page.split(f"## `{domain}`", 1)[1].split("\n## ", 1)[0]
        for block in section.split("#### `")[1:]:
            op = block.split("`", 1)[0]
            for args, outcome in re.findall(r"^- .*\): `(\{.*\})` → `(\{.*\})`$", block, re.MULTILINE):
                command = decode_command(op, json.loads(args), domain=domain)
                assert encode_command(command) == json.loads(args)
                decoded = decode_outcome(json.loads(outcome), domain=domain)
                assert {k: v for k, v in encode_outcome(decoded).items() if k != "rule"} == json.loads(outcome)
                checked += 1
    assert checked >= sum(len(c) for c in COMMANDS.values()), "fewer examples than operations"


@pytest.mark.parametrize("domain, op, args", [
    ("duplicates", "set_id_cache_size", {"address": "a", "size": -1}),
    ("balancing", "create_queue", {"node": "n1", "address": "a", "queue": "q", "routing_type": "ANYCAST",
                                   "filter": ""}),
    ("duplicates", "send", {"session": "s", "address": "a", "bridge_id": "XY"}),
    ("topologies", "subscribe", {"consumer": "c", "broker": "b", "destination": "q"}),
    ("topologies", "add_broker", {"broker": "a b"}),
])
def test_values_the_page_says_are_never_sent_are_refused_by_the_command(
        domain: str, op: str, args: dict[str, object]) -> None:
    """The page's note on argument values: each such value is refused when a request is built from it."""
    assert "never a negative `size`, an empty `filter`" in render_note()
    with pytest.raises(CodecError):
        decode_command(op, args, domain=domain)


def render_note() -> str:
    return DOC.read_text(encoding="utf-8").split("## `addressing`", 1)[0]


def test_each_operation_names_the_protocol_version_it_needs(page: str) -> None:
    """A SUT author must learn from the page that ``prepare`` comes with version 3 and the queries with version 2
    (docs/sut-protocol.md), and that no other operation needs more than version 1."""
    sections = page.split("\n#### `")[1:]
    marker = "Asked only of a SUT that speaks [protocol version "
    needs: dict[str, int] = {}
    for section in sections:
        op, body = section.split("`", 1)[0], section.split("\n### ", 1)[0]
        needs[op] = int(body.split(marker, 1)[1][0]) if marker in body else 1
    assert needs["prepare"] == 3
    assert {op for op, version in needs.items() if version == 2} == {
        "query_address", "query_id", "query_queue", "query_demand"}
    assert "#version-3-xa-prepare" in page and "the queries need version 2, `prepare` version 3" in page
