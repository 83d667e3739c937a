"""The spec-generated tables of docs/addressing.md match the spec as it is now.

A spec change that alters any cell of a behaviour table or any rule of the rule
index fails here, with a message that says to run ``make docs``.
"""

from __future__ import annotations

import difflib
import doctest
from pathlib import Path

import pytest

from brokerspec.doctables import (
    CHECKED,
    EDGE_NAMES,
    NO_CHECK,
    TABLE_BROKER,
    TABLES,
    Column,
    TableShapeError,
    column_cell,
    main,
    read_generated,
    render_all,
    replace_generated,
)
from brokerspec.spec.addressing import Consume

DOC = Path(__file__).resolve().parents[1] / "docs" / "addressing.md"
FIX = "docs/addressing.md is stale: run `make docs` (python -m brokerspec.doctables) and commit the result"


@pytest.fixture(scope="module")
def rendered() -> dict[str, str]:
    return render_all()


@pytest.fixture(scope="module")
def in_doc() -> dict[str, str]:
    return read_generated(DOC.read_text(encoding="utf-8"))


def test_every_table_has_markers_in_the_doc(rendered: dict[str, str], in_doc: dict[str, str]) -> None:
    missing = sorted(set(rendered) - set(in_doc))
    assert not missing, f"docs/addressing.md has no <!-- generated: NAME --> markers for {missing}"


def test_the_doc_has_no_markers_without_a_table(rendered: dict[str, str], in_doc: dict[str, str]) -> None:
    unknown = sorted(set(in_doc) - set(rendered))
    assert not unknown, f"docs/addressing.md has generated regions that no table fills: {unknown}"


@pytest.mark.parametrize("name", sorted(TABLES))
def test_table_in_the_doc_is_current(name: str, rendered: dict[str, str], in_doc: dict[str, str]) -> None:
    if name not in in_doc:
        pytest.fail(f"docs/addressing.md has no markers for the table {name!r}")
    if in_doc[name] != rendered[name]:
        diff = "\n".join(difflib.unified_diff(
            in_doc[name].splitlines(), rendered[name].splitlines(), "in the doc", "from the spec now", lineterm=""))
        pytest.fail(f"table {name!r}: {FIX}\n{diff}")


def test_rewriting_the_doc_changes_nothing(rendered: dict[str, str]) -> None:
    text = DOC.read_text(encoding="utf-8")
    assert replace_generated(text, rendered) == text, FIX


def test_the_doctests_use_the_tables_broker() -> None:
    """The doc's doctests define TABLE_BROKER, EDGE_NAMES and NO_CHECK; the generator must use the same."""
    parser = doctest.DocTestParser()
    test = parser.get_doctest(DOC.read_text(encoding="utf-8"), {}, DOC.name, str(DOC), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    runner.run(test, out=lambda _: None, clear_globs=False)
    assert tuple(test.globs["TABLE_BROKER"]) == TABLE_BROKER
    assert tuple(test.globs["EDGE_NAMES"]) == EDGE_NAMES
    assert test.globs["NO_CHECK"] == NO_CHECK


def test_a_stale_table_is_found_and_rewritten(tmp_path: Path, rendered: dict[str, str]) -> None:
    stale = "".join(
        f"# {name}\n\n<!-- generated: {name} -->\n\n| old |\n|---|\n\n<!-- end generated -->\n\n" for name in rendered)
    doc = tmp_path / "doc.md"
    doc.write_text(stale, encoding="utf-8")
    assert main(["--check", str(doc)]) == 1
    assert doc.read_text(encoding="utf-8") == stale
    assert main([str(doc)]) == 0
    assert read_generated(doc.read_text(encoding="utf-8")) == rendered
    assert main(["--check", str(doc)]) == 0


def test_a_doc_without_markers_is_refused(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("no tables here\n", encoding="utf-8")
    assert main([str(doc)]) == 1
    assert doc.read_text(encoding="utf-8") == "no tables here\n"


def test_broken_markers_are_reported() -> None:
    with pytest.raises(ValueError, match="has no"):
        read_generated("<!-- generated: send-table -->\n| x |\n")
    twice = "<!-- generated: a -->\n<!-- end generated -->\n" * 2
    with pytest.raises(ValueError, match="twice"):
        read_generated(twice)


def test_a_merged_column_whose_profiles_disagree_is_refused() -> None:
    """seed creates a::q1 for this consumer, the Artemis profiles refuse it: one column cannot hold both."""
    with pytest.raises(TableShapeError, match="merges configurations that disagree"):
        column_cell(Column("every profile", CHECKED), "a::q1", Consume("a::q1"))
