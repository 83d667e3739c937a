"""benchmarks/pipe_bench.py still runs: its quick mode prints both tables with a figure for every mode."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import pipe_bench  # noqa: E402


def test_quick_mode_prints_a_figure_for_each_mode(capsys: pytest.CaptureFixture[str]) -> None:
    assert pipe_bench.main(["--quick", "--no-before", "--scripts", "5", "--fuzz-seconds", "0.2"]) == 0
    out = capsys.readouterr().out
    assert "every way gave the same outcomes" in out
    for title in ("Scripts through the SUT protocol", "brokerspec fuzz on addressing"):
        table = out.split(title, 1)[1].split("\n\n", 1)[0]
        for mode in pipe_bench.MODES:
            assert re.search(rf"^{re.escape(mode)}\s+unavailable\s+[\d,]+\s", table, re.MULTILINE), (mode, table)


def test_the_scripts_are_the_same_for_a_seed_and_reach_several_outcomes() -> None:
    from brokerspec.conform.sut import InProcessSut
    from brokerspec.spec import get_profile

    first, again = pipe_bench.scripts_of(4, 30, 7), pipe_bench.scripts_of(4, 30, 7)
    assert first == again and first != pipe_bench.scripts_of(4, 30, 8)
    sut = InProcessSut("impl")
    sut.reset("addressing", get_profile("seed"))
    kinds = {type(sut.execute(command)).__name__ for command in first[0]}
    assert len(kinds) >= 3, kinds
