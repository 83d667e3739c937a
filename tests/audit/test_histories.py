"""The per-history replay: divergences against the spec, and a broken line quarantines the rest of its history."""

from __future__ import annotations

import json

from brokerspec.audit.histories import audit_history_rows, step_key

HEADER = {"v": 1, "type": "header", "domain": "duplicates", "profile": "artemis-latest", "overrides": {}}


def step(number: int, op: str, args: dict[str, object], outcome: dict[str, object]) -> dict[str, object]:
    return {"v": 1, "type": "step", "step": number, "op": op, "args": args, "outcome": outcome}


QUEUE = step(1, "create_queue", {"address": "a", "queue": "q"}, {"type": "done"})
BEGIN = step(2, "begin", {"session": "s"}, {"type": "done"})


def rows(records: list[object], history: str = "h") -> list[tuple[str, int, str, int, str]]:
    out = []
    for number, record in enumerate(records, start=1):
        text = record if isinstance(record, str) else json.dumps(record)
        _, key, _ = step_key(text)
        out.append((history, key if key is not None else 99, "f.jsonl", number, text))
    return out


def test_an_outcome_other_than_the_spec_is_a_divergence_with_its_rule() -> None:
    wrong = step(3, "commit", {"session": "s"}, {"type": "no_transaction", "session": "s"})
    results = list(audit_history_rows(rows([HEADER, QUEUE, BEGIN, wrong])))
    divergences = [r for r in results if r[0] == "divergence"]
    assert len(divergences) == 1
    _, history, number, op, file, line, expected, observed, rule, _ = divergences[0]
    assert (history, number, op, file, line, rule) == ("h", 3, "commit", "f.jsonl", 4, "DUP-COMMIT")
    assert json.loads(str(expected))["type"] == "committed" and json.loads(str(observed))["type"] == "no_transaction"
    assert results[-1] == ("summary", "h", 4, 1, "duplicates", "artemis-latest")


def test_a_bad_line_quarantines_itself_and_the_rest_of_its_history() -> None:
    bad = step(2, "begin", {"session": 5}, {"type": "done"})
    later = step(3, "commit", {"session": "s"}, {"type": "committed", "messages": []})
    results = list(audit_history_rows(rows([HEADER, QUEUE, bad, later])))
    quarantined = [r for r in results if r[0] == "quarantine"]
    assert [r[5] for r in quarantined] == [3, 4]
    assert "args.session" in str(quarantined[0][6])
    assert "follows the quarantined line f.jsonl:3" in str(quarantined[1][6])
    assert results[-1][2] == 2  # header and the first step were checked


def test_steps_without_a_header_are_quarantined() -> None:
    results = list(audit_history_rows(rows([QUEUE])))
    assert results[0][0] == "quarantine" and "no header" in str(results[0][6])


def test_step_key_reads_history_and_step_or_says_why_not() -> None:
    assert step_key(json.dumps({**HEADER, "history": "x"})) == ("x", 0, None)
    assert step_key(json.dumps(QUEUE)) == (None, 1, None)
    assert step_key("{")[2] is not None and "not valid JSON" in str(step_key("{")[2])
    assert "step:" in str(step_key(json.dumps({**QUEUE, "step": 0}))[2])
    assert "type:" in str(step_key(json.dumps({**QUEUE, "type": "x"}))[2])
