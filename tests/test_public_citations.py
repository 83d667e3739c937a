"""Docs, README, code and benchmarks cite only sources a reader can look up.

tests/test_rule_sources.py checks the rule tables and the docstrings of the
three layers. This file checks the prose around them: every docs page
(generated blocks included, since a rule index or a sample is read like the
rest), README.md, every module under src/brokerspec, spec/, reference/ and
impl/, and benchmarks/. A citation there must lead somewhere public: a seed
file, an Artemis or ActiveMQ file, class, method or test, a JIRA key, a
manual page, or a page of brokerspec's own docs. What is caught:

- the research notes the rules were first written from, by name ("notes",
  "the bug table", "research digest") or by file (``semantics/....md``);
- their numbering: ``R12`` for the duplicate-detection rules, ``F3`` or a
  lone ``H`` for the sections on routing;
- a "section 2.4" in a docs page that names no numbered heading of the page
  it points at, which is how a section of the notes read in the prose.

In Python files only comments and string literals are read, so a variable
called ``notes`` or a trace's ``note`` field is not a citation; "release
notes" is not one either.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PRIVATE = (
    (re.compile(r"(?<!release )(?<!trace )\bnotes\b", re.IGNORECASE), "cites the notes"),
    (re.compile(r"\bnote [A-I]\d", re.IGNORECASE), "cites a note by its section mark"),
    (re.compile(r"\bresearch(?:ed)?\b", re.IGNORECASE), "cites research"),
    (re.compile(r"\bresearch digest\b", re.IGNORECASE), "cites a digest"),
    (re.compile(r"\bbug table\b", re.IGNORECASE), "cites the notes' bug table"),
    (re.compile(r"\bsemantics/[\w-]+\.md\b"), "cites a notes file"),
    (re.compile(r"\bR\d{1,2}\b"), "cites a numbered rule of the notes (R1-R33)"),
    (re.compile(r"(?<![\w.$/-])[A-I]\d{1,2}(?:-[A-I]\d{1,2})?(?![\w.-]| control)"),
     "cites a section of the notes (A5, F3, I1...)"),
    (re.compile(r"(?:(?<=[(;,|] )|(?<=\())H(?=[;,)])"), "cites a section of the notes by its letter"),
)
"""Each way a text may cite the notes, with what the failure says."""

SECTION = re.compile(r"\bsections? (\d+(?:\.\d+)?)", re.IGNORECASE)
HEADING = re.compile(r"^#+ (\d+(?:\.\d+)?)[. ]", re.MULTILINE)
DOC_NAMED = re.compile(r"([\w-]+\.md)\b")


def private_citations(text: str) -> list[str]:
    """What in ``text`` cites the notes, each as ``why: 'match'``, in pattern order."""
    return [f"{why}: {match.group(0)!r}" for pattern, why in PRIVATE for match in pattern.finditer(text)]


def headings(page: Path) -> set[str]:
    """The section numbers of the numbered headings of ``page`` ("1", "2.4"...)."""
    return set(HEADING.findall(page.read_text(encoding="utf-8"))) if page.is_file() else set()


def dangling_sections(line: str, page: Path) -> list[str]:
    """The "section N" of ``line`` that name no numbered heading of the page they point at.

    The page pointed at is the ``x.md`` named just before the word section on
    the line (``docs/topologies.md section 5``) or just after it (``section 2.5
    of [the load-balancing page](load-balancing.md)``), else ``page`` itself.
    A page of no numbered headings at all (README.md) cannot be checked.
    """
    found = []
    for match in SECTION.finditer(line):
        before = DOC_NAMED.findall(line[max(0, match.start() - 60):match.start()])
        after = DOC_NAMED.findall(line[match.end():match.end() + 50])
        target = (page.parent / before[-1]) if before else (page.parent / after[0]) if after else page
        if target.name == "README.md" or not target.is_file():
            target = ROOT / "docs" / target.name
        numbers = headings(target)
        if numbers and match.group(1) not in numbers:
            found.append(f"names no section {match.group(1)} of {target.name}: {match.group(0)!r}")
    return found


def python_prose(source: str) -> list[tuple[int, str]]:
    """The comments and string literals of a Python module, with their first line number."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return [(token.start[0], FIELD.sub("", token.string) if FSTRING.match(token.string) else token.string)
            for token in tokens if token.type in (tokenize.COMMENT, tokenize.STRING)]


FSTRING = re.compile(r"[rRbB]?[fF]")
FIELD = re.compile(r"\{[^{}]*\}")
"""An f-string's prefix, and a replacement field in it: the code inside is not prose."""


def problems(path: Path) -> list[str]:
    """Every citation of the notes in the file at ``path``, each as ``file:line: what``."""
    text = path.read_text(encoding="utf-8")
    name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    if path.suffix == ".py":
        pieces = python_prose(text)
    else:
        pieces = [(number, line) for number, line in enumerate(text.splitlines(), start=1)]
    found = [f"{name}:{number}: {problem}" for number, piece in pieces for problem in private_citations(piece)]
    if path.suffix == ".md":
        found += [f"{name}:{number}: {problem}" for number, piece in pieces
                  for problem in dangling_sections(piece, path)]
    return found


def scanned_files() -> list[Path]:
    """Every file whose prose must cite only public sources."""
    files = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
    for folder in ("src/brokerspec", "spec", "reference", "impl", "benchmarks"):
        files += sorted(path for path in (ROOT / folder).rglob("*") if path.suffix in (".py", ".md"))
    return files


def test_the_scan_covers_every_place_prose_is_written() -> None:
    files = {path.relative_to(ROOT).parts[0] for path in scanned_files()}
    assert files == {"docs", "README.md", "src", "spec", "reference", "impl", "benchmarks"}


@pytest.mark.parametrize("path", scanned_files(), ids=lambda path: str(path.relative_to(ROOT)))
def test_no_prose_cites_the_notes(path: Path) -> None:
    found = problems(path)
    assert found == [], "\n".join(found)


@pytest.mark.parametrize("text, why", [
    ("manual text added by ARTEMIS-3657; notes A2, C3", "cites the notes"),
    ("as the notes measured (section 2.4, first row)", "cites the notes"),
    ("the Artemis note C6", "section mark"),
    ("a fixed bug of the bug table", "bug table"),
    ("sections of the research digest", "cites research"),
    ("see `semantics/artemis-addressing-and-routing.md`", "notes file"),
    ("(`DUP-SIZE-FIXED`; R18)", "R1-R33"),
    ("the single-member rule (F3, `bindingsCount == 1`)", "A5, F3"),
    ("| never | H; F2, F4; ARTEMIS-2108 |", "by its letter"),
    ("seed 003; H, F3", "by its letter"),
    ("seed 003; F4, I1-I6", "'I1-I6'"),
])
def test_each_kind_of_citation_of_the_notes_is_caught(text: str, why: str) -> None:
    found = private_citations(text)
    assert any(why in line for line in found), found


@pytest.mark.parametrize("text", [
    "Text from outside (what a SUT writes, trace notes, file names) is escaped",
    "see the release notes of 2.28.0",
    "create_queue(address='a1', queue='q1'); the queue a2::q1; AMQ229019; ARTEMIS-4196",
    "a note field on a step; C1 controls; a digest of the sources; JUnit; CopyOnWriteBindings; the 2.11.0 release; $ACTIVEMQ_A1",
    "messages 1 to 33 (rule DUP-RING-FIFO); Hypothesis; IPv4",
])
def test_legitimate_text_is_not_flagged(text: str) -> None:
    assert private_citations(text) == []


def test_python_prose_reads_comments_and_strings_but_not_names() -> None:
    source = ('"""A module (notes A5)."""\n'
              'notes = sorted(n for n in ("x",))  # per the notes\n'
              'source = f"{notes}, R12"\n')
    flagged = [(line, problem) for line, piece in python_prose(source) for problem in private_citations(piece)]
    assert [line for line, _ in flagged] == [1, 1, 2, 3]
    assert [problem for line, problem in flagged if line == 3] == ["cites a numbered rule of the notes (R1-R33): 'R12'"]


def test_a_section_must_be_a_heading_of_the_page_it_points_at(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Page\n\n## 1. One\n\n### 1.2 Two\n", encoding="utf-8")
    assert dangling_sections("as section 1.2 says, and section 1", page) == []
    assert dangling_sections("the tree (section 2.4)", page) == ["names no section 2.4 of page.md: 'section 2.4'"]
    other = tmp_path / "other.md"
    other.write_text("# Other\n\n## 5. Five\n", encoding="utf-8")
    assert dangling_sections("docs/other.md section 5", page) == []
    assert dangling_sections("section 5 of [the other page](other.md)", page) == []
    assert dangling_sections("section 1.2 of [the other page](other.md)", page) != []
