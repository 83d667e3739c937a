"""benchmarks/check_bench.py still runs: its quick mode on one domain, without the older commit (timings are
never asserted; the figures are in docs/performance.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import check_bench  # noqa: E402


def test_the_quick_mode_prints_a_row_per_domain_and_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert check_bench.main(["--quick", "--no-before", "--domains", "addressing", "--examples", "3"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| addressing")]
    assert len(rows) == 2 and all("unavailable" in row for row in rows)
    assert "before: unavailable (--no-before)" in out


def test_bad_options_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        check_bench.main(["--domains", "nowhere"])
    assert "--domains" in capsys.readouterr().err
