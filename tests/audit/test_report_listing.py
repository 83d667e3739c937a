"""The audit report: tables without Markdown debris, divergences listed with commands that work, honest titles.

These run the audit in one process (``run_audit(None, ...)``), which needs no Spark.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from brokerspec.audit.generate import generate_histories, generate_streams, write_corpus
from brokerspec.audit.inputs import InputError, inspect
from brokerspec.audit.report import bar_figure, table_cells
from brokerspec.audit.run import run_audit
from brokerspec.cli import main
from brokerspec.spec import get_profile

PROFILE = get_profile("artemis-latest")


def corpus(tmp_path: Path, faults: int, kind: str = "histories", seed: int = 2) -> tuple[Path, list[dict[str, object]]]:
    if kind == "histories":
        rows, planted = generate_histories(PROFILE, 20, faults, seed=seed, steps=30)
    else:
        rows, planted = generate_streams(PROFILE, 8, faults, seed=seed, events=120)
    write_corpus(tmp_path / "c", rows, planted, "jsonl", kind, files=2)
    return tmp_path / "c" / "data", [json.loads(x) for x in (tmp_path / "c" / "faults.jsonl").read_text().splitlines()]


def test_the_html_report_shows_no_alignment_row_as_data(tmp_path: Path) -> None:
    data, _ = corpus(tmp_path, 3)
    run_audit(None, data, tmp_path / "out", PROFILE)
    page = (tmp_path / "out" / "report.html").read_text()
    cells = re.findall(r"<td>(.*?)</td>", page)
    assert cells, "the report has tables"
    assert not [c for c in cells if re.fullmatch(r"[-:|]+", c)]
    # the accounting table is head + three data rows, nothing more
    accounting = page.split("<h2>Accounting</h2>", 1)[1].split("</table>", 1)[0]
    assert accounting.count("<tr>") == 4


def test_table_cells_keep_escaped_pipes_and_split_the_rest() -> None:
    assert table_cells("|---|---:|") == ["---", "---:"]
    assert table_cells(r"| a \| b | 2 |") == ["a | b", "2"]


def test_each_listed_divergence_has_explain_and_replay_commands_that_reach_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    data, faults = corpus(tmp_path, 4)
    monkeypatch.chdir(tmp_path)
    run_audit(None, data.relative_to(tmp_path), Path("out"), PROFILE)
    report = (tmp_path / "out" / "report.md").read_text()
    for fault in faults:
        row = next(line for line in report.splitlines() if line.startswith(f"| {fault['history']} | {fault['step']} |"))
        explain, replay = re.findall(r"`(brokerspec [^`]+)`", row)
        assert explain.startswith("brokerspec explain ") and replay.startswith("brokerspec replay ")
        capsys.readouterr()
        assert main(replay.split()[1:]) == 1  # the recorded outcome parts from the spec
        assert f"first difference at step {fault['step']}:" in capsys.readouterr().out
        assert main(explain.split()[1:]) == 1
        assert "the spec does not give" in capsys.readouterr().out


def test_the_listing_stops_at_the_limit_and_says_how_many_more(tmp_path: Path) -> None:
    data, faults = corpus(tmp_path, 5, seed=3)
    run_audit(None, data, tmp_path / "out", PROFILE, limit=2)
    report = (tmp_path / "out" / "report.md").read_text()
    assert f"## Divergences, the first 2 of {len(faults)}" in report
    assert f"{len(faults) - 2} more divergences are in `divergences/`" in report
    assert len(list((tmp_path / "out" / "traces").iterdir())) == 2
    html = (tmp_path / "out" / "report.html").read_text()
    for table in ("divergences/", "quarantine/", "histories/", "summary.json"):
        assert f'<a href="{table}">' in html


def test_a_second_audit_into_the_same_folder_keeps_the_first_ones_traces(tmp_path: Path) -> None:
    data, _ = corpus(tmp_path, 1)
    run_audit(None, data, tmp_path / "out", PROFILE)
    first = {p.name: p.read_text() for p in (tmp_path / "out" / "traces").iterdir()}
    run_audit(None, data, tmp_path / "out", PROFILE)
    names = sorted(p.name for p in (tmp_path / "out" / "traces").iterdir())
    assert len(names) == 2 * len(first) and all((tmp_path / "out" / "traces" / n).read_text() == t
                                                 for n, t in first.items())


def test_streams_list_file_and_line_and_their_profile_is_in_the_title(tmp_path: Path) -> None:
    data, faults = corpus(tmp_path, 2, kind="streams")
    run_audit(None, data, tmp_path / "out", PROFILE)
    report = (tmp_path / "out" / "report.md").read_text()
    assert report.startswith("# Audit report (streams, profile artemis-latest)")
    for fault in faults:
        row = next(line for line in report.splitlines() if line.startswith(f"| {fault['history']} | {fault['step']} |"))
        assert "brokerspec explain" not in row and re.search(r"part-\d+\.jsonl:\d+", row)
    assert not (tmp_path / "out" / "traces").exists()


def test_histories_name_their_profiles_so_the_title_names_none(tmp_path: Path) -> None:
    data, _ = corpus(tmp_path, 1)
    run_audit(None, data, tmp_path / "out", get_profile("seed"))
    report = (tmp_path / "out" / "report.md").read_text()
    assert report.startswith("# Audit report (histories)\n")
    assert "seed" not in report.split("\n", 1)[0]
    assert "| artemis-latest | 20 |" in report  # the histories' own profile, counted


@pytest.mark.parametrize("horizontal", [True, False])
def test_count_axes_are_ticked_at_whole_numbers(horizontal: bool) -> None:
    import matplotlib.pyplot as plt

    figure = bar_figure("t", ["a", "b"], [1, 2], horizontal)
    axes = figure.axes[0]
    ticks = axes.get_xticks() if horizontal else axes.get_yticks()
    plt.close(figure)
    assert len(ticks) >= 2 and all(float(t).is_integer() for t in ticks)


def test_a_generate_output_folder_is_refused_naming_its_data_folder(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    corpus(tmp_path, 0)
    with pytest.raises(InputError, match=re.escape(str(tmp_path / "c" / "data"))):
        inspect(tmp_path / "c")
    assert main(["audit", str(tmp_path / "c"), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"audit {tmp_path / 'c' / 'data'}" in err and "--expect" in err
