"""``catalogue export`` writes the allowed outcomes beside the expected ones, so exported data can be judged
permissively: following the graph accepts any broker the rules allow, and only those."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from brokerspec.cli import main
from brokerspec.codec import encode_outcome
from brokerspec.conform.catalogue import Case, all_cases
from brokerspec.conform.cli_catalogue import allowed_graph, export_case
from brokerspec.spec import PROFILES, Outcome, get_profile
from brokerspec.spec.balancing import apply_choosing, initial_state

BALANCING = [c for c in all_cases() if c.domain == "balancing"]


def judge_exported(graph: list[list[dict[str, Any]]], outcomes: list[dict[str, Any]]) -> int | None:
    """Follow a broker's outcomes through an exported graph, as a data user would: the first refused step
    (1-based), or None when every outcome was allowed."""
    current = {0}
    for number, (edges, observed) in enumerate(zip(graph, outcomes, strict=True), start=1):
        current = {e["to"] for e in edges if e["from"] in current and e["outcome"] == observed}
        if not current:
            return number
    return None


class LastChoice:
    def pick(self, allowed: tuple[int, ...], strict: int) -> int:
        return allowed[-1]


def last_choice_outcomes(case: Case, profile_name: str) -> list[dict[str, Any]]:
    """The outcomes of the spec always taking the last allowed choice: allowed at every step."""
    state = initial_state(case.profile_for(get_profile(profile_name)))
    outcomes: list[Outcome] = []
    for command in case.commands:
        state, outcome = apply_choosing(state, command, LastChoice())
        outcomes.append(outcome)
    return [encode_outcome(o) for o in outcomes]


def test_the_expected_outcomes_are_one_path_through_the_allowed_graph() -> None:
    for case in BALANCING:
        for name in case.profiles:
            exported = export_case(case, [get_profile(name)])
            assert judge_exported(exported["allowed"][name], exported["expected"][name]) is None, case.name


def test_another_allowed_order_passes_the_graph_though_it_departs_from_expected() -> None:
    departed = 0
    for case in BALANCING:
        for name in case.profiles:
            exported = export_case(case, [get_profile(name)])
            other = last_choice_outcomes(case, name)
            assert judge_exported(exported["allowed"][name], other) is None, case.name
            departed += other != exported["expected"][name]
    assert departed >= 10  # many cases: the expected outcomes alone would have refused these


def test_a_step_with_two_allowed_bindings_lists_both_and_a_wrong_outcome_is_refused() -> None:
    """Three nodes, consumers on n1 and n2: the first send may go to either (both preferred), not to n3."""
    case = next(c for c in BALANCING if c.name == "balancing/queues-with-consumers-alternate-local-first")
    exported = export_case(case, [get_profile("seed")])
    graph, expected = exported["allowed"]["seed"], exported["expected"]["seed"]
    first_send = next(i for i, step in enumerate(exported["steps"]) if step["op"] == "send")
    nodes = sorted(e["outcome"]["events"][0]["node"] for e in graph[first_send])
    assert nodes == ["n1", "n2"]
    wrong = [dict(o) for o in expected]
    wrong[first_send] = json.loads(json.dumps(wrong[first_send]).replace('"n1"', '"n3"').replace('"c1"', 'null'))
    assert judge_exported(graph, wrong) == first_send + 1


def test_only_domains_with_several_allowed_outcomes_export_them(tmp_path: Path) -> None:
    assert main(["catalogue", "export", str(tmp_path), "--profile", "seed"]) == 0
    for domain in ("addressing", "duplicates", "topologies"):
        first = json.loads((tmp_path / f"{domain}.jsonl").read_text(encoding="utf-8").splitlines()[0])
        assert "allowed" not in first, domain
    lines = (tmp_path / "balancing.jsonl").read_text(encoding="utf-8").splitlines()
    for line in lines:
        data = json.loads(line)
        assert set(data["allowed"]) == set(data["expected"]) <= {"seed"}
        assert all(len(steps) == len(data["steps"]) for steps in data["allowed"].values())


def test_every_profile_a_case_applies_to_gets_its_graph() -> None:
    case = BALANCING[0]
    exported = export_case(case, [get_profile(n) for n in PROFILES])
    assert set(exported["allowed"]) == set(exported["expected"]) == set(case.profiles) & set(PROFILES)
    assert allowed_graph(case, get_profile(case.profiles[0]))[0][0]["from"] == 0
