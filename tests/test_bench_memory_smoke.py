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
