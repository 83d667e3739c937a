"""The benchmark script still runs (quick mode). It prints figures; nothing here looks at them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from bench_scripts import load_script

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "addressing_bench.py"


def test_benchmark_runs_and_writes_figures(tmp_path: Path) -> None:
    module = load_script("addressing_bench", BENCH)
    out = tmp_path / "figures.json"
    assert module.main(["--quick", "--queues", "2000", "--seconds-per-case", "0.05", "--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert figures, "the benchmark wrote its figures"


DUPLICATES_BENCH = BENCH.with_name("duplicates_bench.py")


def test_duplicates_benchmark_prints_every_row(capsys: pytest.CaptureFixture[str]) -> None:
    module = load_script("duplicates_bench", DUPLICATES_BENCH)
    assert module.main(["--quick", "--seconds-per-case", "0.05", "--persist-seconds", "0.2"]) == 0
    rows = [line.split("  ")[0] for line in capsys.readouterr().out.splitlines()]
    for expected in ("cache: contains + add", "broker: non-tx send", "broker: begin+send+commit, WAL+FULL",
                     "baseline: sqlite3 defaults, insert+commit", "reference (DuplicateIDCache)", "impl (IdCache)",
                     "the 20,000 24-byte keys alone", "Artemis after ARTEMIS-3016 (its figure, not ours)"):
        assert expected in rows, f"no row {expected!r} in the printed tables"


AUDIT_BENCH = BENCH.with_name("audit_bench.py")


def test_audit_benchmark_prints_every_part() -> None:
    """Run in its own process: the script starts and stops its own Spark session."""
    import subprocess

    done = subprocess.run([sys.executable, str(AUDIT_BENCH), "--quick"], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    for kind in ("streams, 5,000 events", "histories, 5,000 events"):
        assert kind in done.stdout, kind
    for expected in ("single process: brokerspec audit without --master", "Spark local[2], warm: whole audit",
                     "Spark local[2], warm: replay phase only", "single process peak memory",
                     "targets: local[2] >= 1.0x the single process"):
        assert done.stdout.count(expected) == (1 if expected.startswith("targets") else 2), expected


BALANCING_BENCH = BENCH.with_name("balancing_bench.py")


def test_balancing_benchmark_checks_the_layers_and_prints_every_column(capsys: pytest.CaptureFixture[str]) -> None:
    module = load_script("balancing_bench", BALANCING_BENCH)
    assert module.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "give the spec's outcomes" in out
    for column in ("spec", "reference", "impl", "outcomes only", "impl/reference", "ceiling/reference"):
        assert column in out
    assert "1 node x 100 bindings" in out and "8 nodes x 40 bindings" in out


WILDCARD_BENCH = BENCH.with_name("wildcard_bench.py")


def test_wildcard_benchmark_checks_the_layers_and_prints_the_baselines(capsys: pytest.CaptureFixture[str]) -> None:
    module = load_script("wildcard_bench", WILDCARD_BENCH)
    assert module.main(["--quick", "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    assert "agree in spec, reference and impl" in out
    for column in ("reference", "impl", "spec", "no wildcards", "wildcard cost", "impl/reference with wildcards"):
        assert column in out


def test_wildcard_benchmark_refuses_to_time_a_broker_that_parts_from_the_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    from brokerspec.planted.balancing_bugs import SingleWordMatchesMany

    module = load_script("wildcard_bench", WILDCARD_BENCH)
    monkeypatch.setattr(module, "FastBalancingBroker", SingleWordMatchesMany)
    monkeypatch.setattr(module, "make_sends", lambda plain, count: [module.Send("n1", "r1.d1.x")] * count)
    with pytest.raises(SystemExit, match="impl parts from the spec"):
        module.main(["--quick", "--rounds", "1"])


TOPOLOGIES_BENCH = BENCH.with_name("topologies_bench.py")


def test_topologies_benchmark_checks_the_layers_and_prints_both_designs(capsys: pytest.CaptureFixture[str]) -> None:
    module = load_script("topologies_bench", TOPOLOGIES_BENCH)
    assert module.main(["--quick", "--messages", "200"]) == 0
    out = capsys.readouterr().out
    assert "give the spec's outcomes and states" in out
    for expected in ("network TTL 2, 3 x 100 stores", "tree connector, 3 x 100 stores", "impl vs ref", "impl < 1 s"):
        assert expected in out, expected


def test_topologies_benchmark_fails_when_a_layer_disagrees(monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """A planted-bug impl in the impl column: the script refuses to print figures for the wrong work."""
    from brokerspec.planted.topologies_bugs import PLANTED

    module = load_script("topologies_bench_planted", TOPOLOGIES_BENCH)
    bug = next(b for b in PLANTED if b.name == "consumer-ttl-off-by-one")
    monkeypatch.setattr(module, "FastTopologyBroker", bug.broker)
    assert module.main(["--quick", "--messages", "50"]) == 1
    assert "error: impl" in capsys.readouterr().err
