"""A run records which argument values it drew, so a user can see what the fuzzer reached."""

from __future__ import annotations

from pathlib import Path

import pytest

from brokerspec.check.domains import get_domain
from brokerspec.cli import main
from brokerspec.check.machine import RunStats
from brokerspec.check.runner import check_for, describe_drawn
from brokerspec.spec import get_profile
from brokerspec.spec.addressing import Lookup


def test_stats_keep_distinct_values_up_to_a_limit_and_count_the_rest() -> None:
    stats = RunStats()
    for number in range(RunStats.DISTINCT_LIMIT + 5):
        stats.note(Lookup(f"q{number}"))
    stats.note(Lookup("q0"))
    assert stats.steps == RunStats.DISTINCT_LIMIT + 6
    assert len(stats.drawn[("lookup", "name")]) == RunStats.DISTINCT_LIMIT
    assert stats.more[("lookup", "name")] == 5


def test_a_repeated_command_is_counted_exactly_as_without_the_shortcut() -> None:
    from brokerspec.spec.addressing import Send, RoutingType

    commands = [Lookup(f"q{n % 50}") for n in range(200)] + [Send("a1", RoutingType.ANYCAST)] * 3 + \
        [Send(f"x{n}", None) for n in range(45)] + [Send("x44", None), Send("a1", RoutingType.ANYCAST)]
    fast, plain = RunStats(), RunStats()
    plain.KEPT_LIMIT = 0  # never takes the shortcut
    for command in commands:
        fast.note(command)
        plain.note(command)
    assert fast.steps == plain.steps == len(commands)
    assert fast.drawn == plain.drawn and fast.more == plain.more
    assert fast.more[("lookup", "name")] == 40  # q40..q49, four times each, beyond the limit


def test_a_topology_run_reports_dotted_names_wildcard_filters_and_several_priorities(tmp_path: Path) -> None:
    domain = get_domain("topologies")
    result = check_for(get_profile("artemis-latest"), {"impl": domain.layers["impl"]}, 1.0, tmp_path, 4,
                       domain=domain)
    rows = {name: (count, sample) for name, count, sample in describe_drawn(result.drawn)}
    assert rows["subscribe.priority"][0] > 2
    assert any("." in str(d).partition("://")[2] for d in result.drawn[("subscribe", "destination")])
    assert "queue://Q.*" in rows["connect.config.include"][1]


def test_fuzz_lists_the_values_it_drew_when_asked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fuzz", "--sut", "inproc:impl", "--domain", "topologies", "--budget", "1s", "--seed", "1",
                 "--out", str(tmp_path)]) == 0
    assert "--show-values lists the values" in capsys.readouterr().out
    assert main(["fuzz", "--sut", "inproc:impl", "--domain", "topologies", "--budget", "1s", "--seed", "1",
                 "--show-values", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "values drawn" in out and "subscribe.priority" in out and "'queue://Q.A'" in out
