"""``brokerspec check`` is never silent in a log, counts its runs in a terminal, and labels no profile-free row
with a profile."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console

from brokerspec.check.runner import CheckResult
from brokerspec.check_progress import PROFILE_FREE, CheckProgress
from brokerspec.cli import main
from brokerspec.render import check_table
from brokerspec.spec import Profile, get_profile


def test_without_a_terminal_check_prints_one_line_per_finished_run(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", "--budget", "2s", "--domain", "addressing", "--profile", "seed", "--seed", "1",
                 "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    lines = [line for line in out.splitlines() if line.startswith("run ")]
    assert len(lines) == 2, out  # seed, and seed with the FQQN address part ignored
    first = re.fullmatch(r"run 1 of 2: addressing seed: (\d+) scenarios, (\d+) steps, [\d.]+s, agree", lines[0])
    assert first is not None and int(first[2]) > 0
    assert lines[1].startswith("run 2 of 2: addressing seed+addressing.fqqn_checks_address=false: ")
    assert out.index(lines[1]) < out.index("brokerspec check: spec vs reference vs impl")


def test_in_a_terminal_the_live_bar_says_which_run_of_how_many() -> None:
    console = Console(file=io.StringIO(), force_terminal=True, width=120)
    with CheckProgress(console, 3) as progress:
        progress.start("addressing", get_profile("seed"))
        progress.start("topologies", get_profile("seed"))
        assert progress.bar is not None
        descriptions = [task.description for task in progress.bar.tasks]
    assert descriptions == ["run 1 of 3: addressing seed", f"run 2 of 3: topologies {PROFILE_FREE}"]


def render(results: list[CheckResult]) -> str:
    console = Console(file=io.StringIO(), width=200, record=True)
    console.print(check_table(results))
    return console.export_text()


def test_the_profile_free_topologies_row_names_no_profile() -> None:
    seed = get_profile("seed")
    text = render([CheckResult(seed, "topologies", 3, 40, 0.5, None, None),
                   CheckResult(seed, "addressing", 3, 40, 0.5, None, None)])
    topologies = next(line for line in text.splitlines() if "topologies" in line)
    addressing = next(line for line in text.splitlines() if "addressing" in line)
    assert PROFILE_FREE in topologies and " seed " not in topologies
    assert " seed " in addressing and PROFILE_FREE not in addressing


def test_a_profile_free_divergence_is_headed_without_a_profile(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import brokerspec.cli as cli
    from brokerspec.check.lockstep import Divergence

    def parted(profile: Profile, *args: object, **kwargs: object) -> CheckResult:
        divergence = Divergence(2, None, "impl", "outcomes differ", ())
        return CheckResult(profile, "topologies", 1, 2, 0.1, divergence, tmp_path / "t.jsonl")

    monkeypatch.setattr(cli, "check_for", parted)
    code = main(["check", "--budget", "1s", "--domain", "topologies", "--profile", "seed", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1
    assert f"\ntopologies {PROFILE_FREE}\nimpl parted from the spec at step 2" in out
    assert "topologies seed" not in out
