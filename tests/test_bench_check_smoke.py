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


def test_the_same_ops_row_leaves_out_what_the_before_side_lacks(capsys: pytest.CaptureFixture[str],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """With a before side, a domain whose checkout has newer operations gets a third run without them, judged
    against the before side's ``check``; a domain with none gets no such row."""
    before = Path("before-tree")
    ops = {None: {"balancing": ["ack", "attach", "send"], "addressing": ["lookup"]},
           before: {"balancing": ["attach", "send"], "addressing": ["lookup"]}}
    calls: list[tuple[Path | None, dict[str, object]]] = []

    def fake_run_with(path: Path | None, module: str, function: str, arguments: dict[str, object]) -> object:
        if function == "operations":
            return ops[path][str(arguments["domain"])]
        calls.append((path, arguments))
        steps = 100 if path is None else 50
        return {"steps": steps * (2 if arguments.get("excluded") else 1), "examples": 1, "seconds": 1.0,
                "found": None}

    class FakeBefore:
        def __init__(self, skip: bool) -> None:
            pass

        def __enter__(self) -> Path:
            return before

        def __exit__(self, *exc: object) -> None:
            pass

    monkeypatch.setattr(check_bench, "run_with", fake_run_with)
    monkeypatch.setattr(check_bench, "_before", FakeBefore)
    assert check_bench.main(["--domains", "balancing,addressing", "--rounds", "1", "--examples", "3"]) == 0
    out = capsys.readouterr().out
    same = [a for p, a in calls if a.get("excluded")]
    assert same == [{"domain": "balancing", "mode": "check", "examples": 3, "seed": 1, "excluded": ["ack"]}]
    assert all(p is None for p, a in calls if a.get("excluded")), "only this checkout leaves operations out"
    row = next(line for line in out.splitlines() if "balancing" in line and check_bench.SAME_OPS in line)
    assert row.split("|")[3].strip() == "50" and row.rstrip(" |").endswith("4.00x")
    assert not [line for line in out.splitlines() if "addressing" in line and check_bench.SAME_OPS in line]
    assert "left out ack (operations the code before lacks)" in out
