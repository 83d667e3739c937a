"""The spec-generated parts of docs/duplicate-detection.md match the spec as it is now.

A spec change that alters a rule, a lifecycle move or a step of a visibility
timeline fails here, with a message that says how to regenerate the doc. The
doc's doctests run in ``tests/test_doctests.py``, which collects every page
of ``docs/``.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest

from brokerspec.doctables import Column, TableShapeError, read_generated
from brokerspec.doctables_duplicates import (
    TABLES,
    TIMELINE,
    TIMELINE_COLUMNS,
    TimelineRow,
    lifecycle_table,
    main,
    regenerate,
    render_all,
    run_column,
    run_timeline,
)
from brokerspec.spec import PROFILES
from brokerspec.spec.duplicates import RULES, TRANSACTION_LIFECYCLE, Restart, Send, TxEvent, TxState

DOC = Path(__file__).resolve().parents[1] / "docs" / "duplicate-detection.md"
FIX = ("docs/duplicate-detection.md is stale: run `python -m brokerspec.doctables_duplicates` "
       "and commit the result")


@pytest.fixture(scope="module")
def rendered() -> dict[str, str]:
    return render_all()


@pytest.fixture(scope="module")
def doc_text() -> str:
    return DOC.read_text(encoding="utf-8")


# --- the committed doc is current --------------------------------------------------------


def test_every_block_has_markers_and_every_marker_a_block(rendered: dict[str, str], doc_text: str) -> None:
    in_doc = read_generated(doc_text)
    assert sorted(set(rendered) - set(in_doc)) == [], "the doc lacks <!-- generated: NAME --> markers"
    assert sorted(set(in_doc) - set(rendered)) == [], "the doc has generated regions that no block fills"


@pytest.mark.parametrize("name", sorted(TABLES))
def test_block_in_the_doc_is_current(name: str, rendered: dict[str, str], doc_text: str) -> None:
    in_doc = read_generated(doc_text)
    if in_doc.get(name) != rendered[name]:
        diff = "\n".join(difflib.unified_diff(
            in_doc.get(name, "").splitlines(), rendered[name].splitlines(), "in the doc", "from the spec now",
            lineterm=""))
        pytest.fail(f"block {name!r}: {FIX}\n{diff}")


def test_regenerating_the_doc_changes_nothing(doc_text: str) -> None:
    assert regenerate(doc_text) == doc_text, FIX


def test_a_stale_doc_is_found_and_rewritten(tmp_path: Path, doc_text: str) -> None:
    stale = doc_text.replace("| 8 | `s2` sends `'z'`", "| 8 | `s2` sent `'z'`", 1)
    assert stale != doc_text
    doc = tmp_path / "doc.md"
    doc.write_text(stale, encoding="utf-8")
    assert main(["--check", str(doc)]) == 1
    assert doc.read_text(encoding="utf-8") == stale
    assert main([str(doc)]) == 0
    assert doc.read_text(encoding="utf-8") == doc_text
    assert main(["--check", str(doc)]) == 0


def test_a_doc_without_markers_is_refused(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("no blocks here\n", encoding="utf-8")
    assert main([str(doc)]) == 1
    assert doc.read_text(encoding="utf-8") == "no blocks here\n"


def test_every_rule_is_explained_in_the_prose(doc_text: str) -> None:
    prose = re.sub(r"<!-- generated: .*?<!-- end generated -->", "", doc_text, flags=re.DOTALL)
    missing = [rule for rule in RULES if f"`{rule}`" not in prose]
    assert not missing, f"rules with no mention outside the generated rule index: {missing}"


# --- the lifecycle table -----------------------------------------------------------------


def body_rows(markdown_table: str) -> list[list[str]]:
    """The cells of a generated table's body rows."""
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in markdown_table.splitlines()[2:]]


def test_the_lifecycle_table_has_a_row_per_move_and_per_refused_move() -> None:
    rows = body_rows(lifecycle_table())
    refused = {(s, e) for s in TxState for e in TxEvent} - set(TRANSACTION_LIFECYCLE)
    assert refused, "the lifecycle refuses some moves (begin twice, commit with none)"
    assert len(rows) == len(TRANSACTION_LIFECYCLE) + len(refused)
    by_move = {(row[0], row[1]): row for row in rows}
    assert len(by_move) == len(rows), "a (state, event) pair has two rows"
    for (state, event), (next_state, words) in TRANSACTION_LIFECYCLE.items():
        assert by_move[(state.value, event.value)][2:4] == [next_state.value, words]
    for state, event in refused:
        assert by_move[(state.value, event.value)][2] == "**refused**"
    assert by_move[("active", "begin")][4] == "`TransactionOpen`<br>`DUP-TX-ALREADY-OPEN`"
    assert by_move[("rollback-only", "commit")][4] == "`CommitFailed`<br>`DUP-COMMIT-ROLLBACK-ONLY`"


def test_a_lifecycle_entry_the_spec_contradicts_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    wrong = dict(TRANSACTION_LIFECYCLE)
    wrong[(TxState.ACTIVE, TxEvent.DUPLICATE)] = (TxState.ACTIVE, "not routed")
    monkeypatch.setattr("brokerspec.doctables_duplicates.TRANSACTION_LIFECYCLE", wrong)
    with pytest.raises(TableShapeError, match="duplicate sent in active"):
        lifecycle_table()


def test_a_move_refused_by_the_table_but_made_by_the_spec_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    wrong = dict(TRANSACTION_LIFECYCLE)
    del wrong[(TxState.ACTIVE, TxEvent.COMMIT)]
    monkeypatch.setattr("brokerspec.doctables_duplicates.TRANSACTION_LIFECYCLE", wrong)
    with pytest.raises(TableShapeError, match="commit in active is refused by the table"):
        lifecycle_table()


# --- the visibility timelines --------------------------------------------------------------


def failed_send_index() -> int:
    matches = [i for i, c in enumerate(TIMELINE) if isinstance(c, Send) and c.address_full]
    assert len(matches) == 1, "the timeline has one send into a full address"
    return matches[0]


def restart_index() -> int:
    matches = [i for i, c in enumerate(TIMELINE) if isinstance(c, Restart)]
    assert len(matches) == 1, "the timeline has one restart"
    return matches[0]


@pytest.fixture(scope="module")
def timelines() -> dict[str, list[TimelineRow]]:
    return {profile: run_timeline((profile, ())) for profile in PROFILES}


def test_latest_and_2_11_part_at_the_failed_send(timelines: dict[str, list[TimelineRow]]) -> None:
    step = failed_send_index()
    latest, old = timelines["artemis-latest"], timelines["artemis-2.11"]
    assert latest[:step] == old[:step], "the two agree until the failed send"
    assert latest[step] != old[step]
    assert latest[step].outcome == old[step].outcome == "send fails (ADDRESS_FULL)"
    assert old[step].detects == "'w', 'x'", "before 2.18 a failed send leaves the cache alone"
    assert latest[step].detects == "'x'", "from 2.18 the undone instant add evicted the oldest ID"
    assert latest[step].slots.startswith("hole, ")


def test_the_bridge_id_is_visible_before_the_commit_only_under_latest(
        timelines: dict[str, list[TimelineRow]]) -> None:
    resend = [i for i, c in enumerate(TIMELINE) if isinstance(c, Send) and c.bridge_id and c.session == "s2"][0]
    assert timelines["artemis-latest"][resend].rule == "DUP-BRIDGE-DUPLICATE"
    assert timelines["artemis-2.11"][resend].rule == "DUP-ROUTED"
    assert timelines["artemis-latest"][resend - 1].bridge_detects.endswith("(uncommitted)")


def test_reload_keeps_decides_what_survives_the_restart() -> None:
    step = restart_index()
    newest = run_timeline(("artemis-2.11", ()))
    oldest = run_timeline(("artemis-2.11", (("duplicates.reload_keeps", "OLDEST"),)))
    assert newest[:step] == oldest[:step]
    assert (newest[step].detects, oldest[step].detects) == ("'x'", "'w', 'x'")
    assert newest[-1].rule == "DUP-ROUTED" and oldest[-1].rule == "DUP-NONTX-DUPLICATE"


def test_every_profile_has_a_timeline_column() -> None:
    shown = {profile for column in TIMELINE_COLUMNS for profile, overrides in column.configurations if not overrides}
    assert shown == set(PROFILES), "a profile without a timeline column: add one to TIMELINE_COLUMNS and the doc"


def test_a_column_merging_profiles_that_disagree_is_refused() -> None:
    with pytest.raises(TableShapeError, match="merges configurations that disagree at step"):
        run_column(Column("both", (("artemis-2.11", ()), ("artemis-latest", ()))))
