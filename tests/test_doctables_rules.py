"""The rule indexes of docs/load-balancing.md and docs/topologies.md are written from the rule tables.

A change to any rule's words, source or profiles, or a rule added, removed or
moved, fails here until ``python -m brokerspec.doctables_rules`` (or ``make
docs``) has rewritten the guides.
"""

from __future__ import annotations

import difflib
import shutil
from pathlib import Path

import pytest

from brokerspec.doctables import read_generated
from brokerspec.doctables_rules import DOCS, balancing_rule_index, main, regenerate, topologies_rule_index
from brokerspec.spec.balancing import RULES as BALANCING_RULES
from brokerspec.spec.topologies import RULES as TOPOLOGY_RULES

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("doc", sorted(DOCS))
def test_the_guide_holds_the_current_rule_index(doc: Path) -> None:
    text = (ROOT / doc).read_text(encoding="utf-8")
    blocks = DOCS[doc]
    assert set(blocks) <= set(read_generated(text)), f"{doc} lacks its <!-- generated: NAME --> markers"
    new_text = regenerate(text, blocks)
    if new_text != text:
        diff = "\n".join(difflib.unified_diff(text.splitlines(), new_text.splitlines(), lineterm="", n=0))
        pytest.fail(f"{doc} is stale: run `python -m brokerspec.doctables_rules` and commit the result\n{diff}")


def body_rows(index: str) -> list[list[str]]:
    """The cells of each data row of a Markdown table (the header and its rule line left out)."""
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in index.splitlines()[2:]]


def test_the_balancing_index_has_every_rule_in_order_with_its_source_and_profiles() -> None:
    rows = body_rows(balancing_rule_index())
    assert [row[0] for row in rows] == [f"`{rule_id}`" for rule_id in BALANCING_RULES]
    by_id = {row[0].strip("`"): row for row in rows}
    assert by_id["LB-FQQN-LOCAL"][3] == "seed, artemis-2.11"
    assert by_id["LB-NODES"][3] == "all"
    assert by_id["LB-TYPES"][2] == BALANCING_RULES["LB-TYPES"].source


def test_the_topologies_index_has_every_rule_in_order_and_escapes_markup() -> None:
    rows = body_rows(topologies_rule_index())
    assert [row[0] for row in rows] == [f"`{rule_id}`" for rule_id in TOPOLOGY_RULES]
    assert all(len(row) == 3 for row in rows)
    connectors = {row[0]: row for row in rows}["`TOPO-CONNECTORS`"][1]
    assert "A-&gt;B" in connectors and "->" not in connectors


def copy_guides(root: Path) -> None:
    for doc in DOCS:
        (root / doc).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / doc, root / doc)


def test_check_reports_a_stale_index_and_a_rewrite_makes_it_current(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    copy_guides(tmp_path)
    stale = tmp_path / "docs" / "topologies.md"
    stale.write_text(stale.read_text(encoding="utf-8").replace("| `TOPO-BROKERS` |", "| `TOPO-OLD` |"),
                     encoding="utf-8")
    assert main(["--check", "--root", str(tmp_path)]) == 1
    assert "topologies.md: the rule index is stale" in capsys.readouterr().err
    assert "TOPO-OLD" in stale.read_text(encoding="utf-8"), "--check must not write"
    assert main(["--root", str(tmp_path)]) == 0
    assert "topologies.md: rule index rewritten" in capsys.readouterr().out
    assert main(["--check", "--root", str(tmp_path)]) == 0
    assert "TOPO-OLD" not in stale.read_text(encoding="utf-8")


def test_a_guide_without_markers_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy_guides(tmp_path)
    guide = tmp_path / "docs" / "load-balancing.md"
    guide.write_text(guide.read_text(encoding="utf-8").replace("<!-- generated: balancing-rule-index -->", ""),
                     encoding="utf-8")
    assert main(["--root", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "load-balancing.md" in err and "balancing-rule-index" in err
