"""The replay benchmark still runs (quick mode), and refuses to show figures when before and after disagree."""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from bench_scripts import load_script

def load_bench() -> ModuleType:
    return load_script("replay_bench")


def test_the_quick_run_prints_every_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench = load_bench()
    figures = tmp_path / "figures.json"
    assert bench.main(["--quick", "--no-before", "--histories", "10", "--groups", "4", "--steps", "12",
                       "--json", str(figures)]) == 0
    out = capsys.readouterr().out
    assert "the before column is unavailable: --no-before was given" in out
    for row in ("addressing", "balancing", "duplicates", "topologies", "all domains", "replay", "outcome"):
        assert row in out, row
    assert "unavailable" in out.split("History replay")[1]
    written = json.loads(figures.read_text(encoding="utf-8"))
    assert written["before"] == [] and len(written["after"]) == 1
    assert written["after"][0]["histories"]["addressing"]["lines"] > 10 * 12


@pytest.mark.parametrize("domain", ["addressing", "balancing"])
def test_figures_differing_in_a_verdict_make_the_run_fail(domain: str, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """A faster replay that judges differently is no speed-up: exit 1 and no table; but in a domain whose rules
    changed since the older commit (RULES_CHANGED) only that domain loses its before figure."""
    bench = load_bench()
    figures = bench.measure  # the real timing function, run once here on a tiny corpus
    calls: list[Any] = []

    def fake_run_with(path: Any, module: str, function: str, arguments: dict[str, Any]) -> Any:
        result = copy.deepcopy(figures(**arguments))
        if path is not None:  # the "before" side: one divergence fewer in one domain
            result["histories"][domain]["verdicts"]["divergences"] -= 1
        calls.append(path)
        return result

    @contextlib.contextmanager
    def fake_package() -> Iterator[Path]:
        yield Path("before")

    monkeypatch.setattr(bench, "run_with", fake_run_with)
    monkeypatch.setattr(bench, "make_readable", lambda path, package: {})  # the older code reads it all
    monkeypatch.setattr(bench, "baseline_package", fake_package)
    code = bench.main(["--quick", "--histories", "10", "--groups", "4", "--steps", "12"])
    captured = capsys.readouterr()
    if domain in bench.RULES_CHANGED:
        assert code == 0 and f"{domain}: no before figure, the verdicts differ" in captured.out
        assert f"(equal before and after, but in {domain})" in captured.out
        table = captured.out.split("History replay")[1]
        row = next(line for line in table.splitlines() if line.startswith(domain))
        assert "unavailable" in row and "x " not in row, row
    else:
        assert code == 1 and "the verdicts differ" in captured.err and domain in captured.err
        assert "History replay" not in captured.out
    assert calls == [Path("before"), None]


def test_both_sides_replay_a_corpus_the_older_code_reads(tmp_path: Path) -> None:
    """Arguments at their default are left out (both sides decode them as the default), and the histories the
    older code still cannot read are found, each with its first error, and dropped."""
    readable = load_script("readable")
    head = {"v": 1, "type": "header", "domain": "balancing", "profile": "artemis-latest", "overrides": {}}
    step = {"v": 1, "type": "step", "step": 1, "op": "create_queue",
            "args": {"node": "n1", "address": "a", "queue": "q", "routing_type": "ANYCAST", "filter": None,
                     "enabled": True, "purge_on_no_consumers": True}}
    lines = readable.without_defaults([json.dumps({**record, "history": name})
                                       for name in ("h1", "h2") for record in (head, step)])
    steps = [json.loads(text) for text in lines if '"step": 1' in text]
    assert [sorted(record["args"]) for record in steps] == [
        ["address", "node", "purge_on_no_consumers", "queue", "routing_type"]] * 2, "enabled=True is a default"
    path = tmp_path / "histories.jsonl"
    lines += [json.dumps({**head, "history": "h3"}), json.dumps({**step, "history": "h3", "op": "fly"})]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    unreadable = readable.unreadable_histories(str(path))  # this checkout: only the unknown operation
    assert list(unreadable) == ["h3"] and "fly" in unreadable["h3"]
    left = {json.loads(text)["history"] for text in readable.keep_readable(lines, unreadable)}
    assert left == {"h1", "h2"}
    assert "without the 1 histories" in readable.describe(unreadable, "balancing")
