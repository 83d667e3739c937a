"""The memory benchmark still runs (a small size, without the older commit), and prints a row per case."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest

from bench_scripts import load_script

def load_bench() -> ModuleType:
    return load_script("memory_bench")


def test_a_small_run_measures_generate_and_the_audit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench = load_bench()
    out = tmp_path / "figures.json"
    assert bench.main(["--no-before", "--sizes", "2000", "--kinds", "streams", "--formats", "jsonl", "--json",
                       str(out)]) == 0
    figures = json.loads(out.read_text())
    assert [row["case"] for row in figures["rows"]] == ["generate streams jsonl", "audit streams jsonl"]
    generated, audited = (row["after"] for row in figures["rows"])
    # 2,000 events would be 10 groups of 200 rows, but each of the 12 planted faults needs a group of its own:
    # 12 groups, a row more now and then when a commit ends at two addresses.
    assert 2400 <= generated["rows"] <= 2412 and audited["rows"] == generated["rows"] == audited["checked"]
    assert audited["engine"] == "one process" and all(row["before"] is None for row in figures["rows"])
    printed = capsys.readouterr().out
    assert "audit streams jsonl | " in printed and "| n/a" in printed  # no before: n/a, never a made-up figure


def test_a_histories_audit_is_right_only_with_exactly_its_planted_faults(tmp_path: Path) -> None:
    """Each side audits the histories its own generate wrote: right when it finds exactly the faults planted there,
    with every row checked."""
    bench = load_bench()
    (tmp_path / "faults.jsonl").write_text('{"history": "h2", "step": 4}\n{"history": "h1", "step": 9}\n')
    found = [["h1", 9], ["h2", 4]]
    right = {"divergences": found, "quarantined": 0, "checked": 50, "rows": 50}
    assert bench.finds_its_faults(right, tmp_path)
    assert not bench.finds_its_faults({**right, "divergences": [["h1", 9]]}, tmp_path), "a fault missed"
    assert not bench.finds_its_faults({**right, "divergences": [*found, ["h3", 1]]}, tmp_path)
    assert not bench.finds_its_faults({**right, "quarantined": 1, "checked": 49}, tmp_path), "a row quarantined"
