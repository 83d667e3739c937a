"""benchmarks/broker_bench.py still runs: quick mode without Artemis prints brokerspec's two rows with figures."""

from __future__ import annotations

import re

import pytest

from bench_scripts import load_script


def test_quick_run_without_artemis_prints_brokerspec_rows(capsys: pytest.CaptureFixture[str]) -> None:
    bench = load_script("broker_bench")
    assert bench.main(["--quick", "--no-artemis"]) == 0
    out = capsys.readouterr().out
    assert "Artemis: left out (--no-artemis)" in out
    for persistence in ("persistent", "non-persistent"):
        row = re.search(rf"^brokerspec, {persistence}\s+([\d,.]+)\s+([\d,.]+)\s+([\d,.]+)\s+([\d,.]+)$", out,
                        re.MULTILINE)
        assert row is not None, (persistence, out)
        figures = [float(cell.replace(",", "")) for cell in row.groups()]
        assert all(figure > 0 for figure in figures), (persistence, figures)
    assert "command: python benchmarks/broker_bench.py --quick --no-artemis" in out
