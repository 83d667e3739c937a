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


def test_figures_differing_in_a_verdict_make_the_run_fail(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """A faster replay that judges differently is no speed-up: exit 1 and no table."""
    bench = load_bench()
    figures = bench.measure  # the real timing function, run once here on a tiny corpus
    calls: list[Any] = []

    def fake_run_with(path: Any, module: str, function: str, arguments: dict[str, Any]) -> Any:
        result = copy.deepcopy(figures(**arguments))
        if path is not None:  # the "before" side: one divergence fewer in one domain
            result["histories"]["addressing"]["verdicts"]["divergences"] -= 1
        calls.append(path)
        return result

    @contextlib.contextmanager
    def fake_package() -> Iterator[Path]:
        yield Path("before")

    monkeypatch.setattr(bench, "run_with", fake_run_with)
    monkeypatch.setattr(bench, "baseline_package", fake_package)
    assert bench.main(["--quick", "--histories", "10", "--groups", "4", "--steps", "12"]) == 1
    captured = capsys.readouterr()
    assert "the verdicts differ" in captured.err and "addressing" in captured.err
    assert "History replay" not in captured.out
    assert calls == [Path("before"), None]
