"""The benchmark script still runs (quick mode). It prints figures; nothing here looks at them."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "addressing_bench.py"


def test_benchmark_runs_and_writes_figures(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("addressing_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["addressing_bench"] = module
    spec.loader.exec_module(module)
    out = tmp_path / "figures.json"
    assert module.main(["--quick", "--queues", "2000", "--seconds-per-case", "0.05", "--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert figures, "the benchmark wrote its figures"
