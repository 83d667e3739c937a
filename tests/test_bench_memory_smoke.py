"""The memory benchmark still runs (a small size, without the older commit), and prints a row per case."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "memory_bench.py"


def load_bench() -> ModuleType:
    sys.path.insert(0, str(BENCH.parent))
    spec = importlib.util.spec_from_file_location("memory_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["memory_bench"] = module
    spec.loader.exec_module(module)
    return module


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
