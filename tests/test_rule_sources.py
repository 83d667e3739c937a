"""Every rule of every domain names a public source, and no code cites private notes.

A rule's source is what ``explain``, the conformance report and the rule
indexes of docs/*.md show beside the rule, so a reader must be able to look
it up. The accepted forms are:

- a seed document, ``seed NNN``, one of the seed files the conformance
  catalogue cites by file name (``000_3ece6d51ae6d999d.txt`` ...);
- a JIRA key, ``ARTEMIS-NNNN`` or ``AMQ-NNNN``;
- an upstream Java file (``.../DemandForwardingBridgeSupport.java``) or
  class, optionally with its method (``PostOfficeImpl.route``), which covers
  test classes and test methods (``DuplicateDetectionTest.testShrinkCache``);
- a page of the Artemis user manual (``Artemis user manual, address-model``);
- for brokerspec's own decisions, the page of docs/ that explains them.

Nothing may cite the research notes the rules were first written from: not
by name ("notes", "research", "digest"), nor by their numbering (``R12`` for
the duplicate-detection rules, ``F3`` or a lone ``H`` for the sections on
routing). A rule whose text says it was "decided" must name the docs page
that gives the reason.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from brokerspec.conform.catalogue import DOMAIN_ORDER, RULE_TABLES
from brokerspec.spec.addressing.rules import Rule

ROOT = Path(__file__).resolve().parents[1]

SEED_FILES = {
    "000": "000_3ece6d51ae6d999d.txt",
    "001": "001_7bc8976e1fb4bc71.txt",
    "002": "002_074d5b59b72b3a55.txt",
    "003": "003_df6d5e31f642e5ae.txt",
}
"""The seed documents by number, as the conformance catalogue names their files."""

SEED = re.compile(r"\bseed (\d{3})\b")
JIRA = re.compile(r"\b(?:ARTEMIS|AMQ)-\d+\b")
JAVA_FILE = re.compile(r"\b[\w/.-]*[A-Z]\w*\.java\b")
JAVA_CLASS = re.compile(r"\b[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+\b")
MANUAL = re.compile(r"\bArtemis user manual, [a-z][a-z-]+\b")
PROJECT_DOC = re.compile(r"\bdocs/[\w-]+\.md\b")
NOT_A_CLASS = frozenset({"ActiveMQ"})
"""CamelCase words that name a product, not a Java class."""

PRIVATE = (
    (re.compile(r"\bnotes?\b", re.IGNORECASE), "cites notes"),
    (re.compile(r"\bresearch", re.IGNORECASE), "cites research"),
    (re.compile(r"\bdigest\b", re.IGNORECASE), "cites a digest"),
    (re.compile(r"\bbug table\b", re.IGNORECASE), "cites the notes' bug table"),
    (re.compile(r"\bR\d{1,2}\b"), "cites a numbered rule of the notes (R1-R33)"),
    (re.compile(r"(?<![\w.-])[A-I]\d{1,2}\b"), "cites a section of the notes (A5, F3, I1...)"),
    (re.compile(r"(?:^|[;(]\s*)[A-I](?=\s*[;,)]|\s*$)"), "cites a section of the notes by its letter"),
)


def citations(source: str) -> list[str]:
    """The public citations found in ``source``, in the order of the accepted forms."""
    found = [f"seed {n}" for n in SEED.findall(source)]
    found += JIRA.findall(source) + JAVA_FILE.findall(source) + MANUAL.findall(source)
    found += [word for word in JAVA_CLASS.findall(source) if word not in NOT_A_CLASS]
    found += PROJECT_DOC.findall(source)
    return found


def source_problems(rule: Rule) -> list[str]:
    """Everything wrong with ``rule``'s source, each naming the rule; empty when it is public."""
    problems = [f"{rule.id}: {why}: {rule.source!r}" for pattern, why in PRIVATE if pattern.search(rule.source)]
    if not citations(rule.source):
        problems.append(f"{rule.id}: names no seed, JIRA key, Java file or class, manual page or docs page: "
                        f"{rule.source!r}")
    problems += [f"{rule.id}: cites seed {n}, which is not a seed document" for n in SEED.findall(rule.source)
                 if n not in SEED_FILES]
    problems += [f"{rule.id}: cites {page}, which does not exist" for page in PROJECT_DOC.findall(rule.source)
                 if not (ROOT / page).is_file()]
    if "decided" in rule.summary and not PROJECT_DOC.search(rule.source):
        problems.append(f"{rule.id}: is decided by brokerspec but its source names no docs page that says why")
    return problems


def test_every_domain_has_a_rule_table() -> None:
    assert tuple(RULE_TABLES) == DOMAIN_ORDER
    assert all(RULE_TABLES[domain] for domain in DOMAIN_ORDER)


@pytest.mark.parametrize("domain", DOMAIN_ORDER)
def test_every_rule_names_a_public_source(domain: str) -> None:
    problems = [problem for rule in RULE_TABLES[domain].values() for problem in source_problems(rule)]
    assert problems == [], "\n".join(problems)


def test_the_seed_numbers_are_the_files_the_catalogue_cites() -> None:
    numbers = {"addressing": "000", "duplicates": "001", "topologies": "002", "balancing": "003"}
    for domain, number in numbers.items():
        cases = importlib.import_module(f"brokerspec.conform.catalogue.{domain}")
        assert cases.SEED == f"seed {number} ({SEED_FILES[number]})"


@pytest.mark.parametrize("source, problem", [
    ("notes 1.2 step 3: serviceRemoteConsumerAdvisory", "cites notes"),
    ("the project's researched notes", "cites research"),
    ("seed 001 PostOfficeImpl.route; R5", "numbered rule"),
    ("F3: BindingsImpl.getNextBinding", "section of the notes (A5"),
    ("seed 003 BindingsImpl.allowRedistribute; H; I7", "by its letter"),
    ("BindingsImpl.matchBinding; H", "by its letter"),
    ("brokerspec's network model", "names no seed"),
    ("seed 009 rule 1", "not a seed document"),
    ("brokerspec decision, docs/nowhere.md", "does not exist"),
])
def test_each_kind_of_private_or_missing_source_is_caught(source: str, problem: str) -> None:
    found = source_problems(Rule("X-RULE", "A rule.", source))
    assert any(problem in line for line in found), found


@pytest.mark.parametrize("source", [
    "seed 000 scenario 3",
    "ARTEMIS-4159 (2.31.0)",
    "AMQ-2324",
    "activemq-broker/src/main/java/org/apache/activemq/network/ConduitBridge.java canConduit",
    "DuplicateDetectionTest.testShrinkCache",
    "Artemis user manual, address-model",
    "brokerspec decision, docs/topologies.md section 5",
])
def test_each_public_form_is_accepted(source: str) -> None:
    assert source_problems(Rule("X-RULE", "A rule.", source)) == []


def test_a_decided_rule_must_point_at_its_reason() -> None:
    found = source_problems(Rule("X-RULE", "Two roots make a forest (decided).", "seed 002 rules 1-2"))
    assert found == ["X-RULE: is decided by brokerspec but its source names no docs page that says why"]


PRIVATE_CITATION = re.compile(r"\bnotes\b|\bresearch(?:ed)?\b|\bdigest\b|\bnote [A-I]\d|code-derived note",
                              re.IGNORECASE)
"""How code cites the research notes: by name ("notes", "research"), or as "note C6"."""


def docstrings(path: Path) -> list[tuple[int, str]]:
    """Every docstring of the module at ``path``, with its line number.

    A docstring is any string standing alone as a statement: the module's,
    a class's or a function's, and the ones written under a constant.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [(node.lineno, node.value.value) for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)]


LAYERS = ("spec", "reference", "impl")


@pytest.mark.parametrize("layer", LAYERS)
def test_no_docstring_cites_private_notes(layer: str) -> None:
    files = sorted((ROOT / layer).rglob("*.py"))
    assert files, f"no Python files under {layer}/"
    cited = [f"{path.relative_to(ROOT)}:{line}: {match.group(0)!r}"
             for path in files for line, text in docstrings(path) for match in PRIVATE_CITATION.finditer(text)]
    assert cited == [], "\n".join(cited)


SECTION_MARK = re.compile(r"\bR\d{1,2}\b|(?<![\w.-])[A-I]\d{1,2}\b|(?<=[(;,] )H(?=[;,)])|(?<=\()H(?=[;,)])")
"""The notes' numbering: R1-R33 for duplicate detection, A1-I7 (and a bare H) for the sections on routing."""


@pytest.mark.parametrize("layer", LAYERS)
def test_no_docstring_cites_the_notes_by_their_numbering(layer: str) -> None:
    cited = [f"{path.relative_to(ROOT)}:{line}: {match.group(0)!r}"
             for path in sorted((ROOT / layer).rglob("*.py")) for line, text in docstrings(path)
             for match in SECTION_MARK.finditer(text)]
    assert cited == [], "\n".join(cited)


@pytest.mark.parametrize("text, found", [
    ("(R12, R13)", ["R12", "R13"]), ("round robin (F3)", ["F3"]), ("sections A5 and A6", ["A5", "A6"]),
    ("the default (seed 003, H)", ["H"]), ("(H)", ["H"]),
    ("DUP-TX-HELD; ARTEMIS-2324; 2.11.0; AMQ229019; CopyOnWriteBindings", []),
])
def test_the_numbering_scan_tells_section_marks_from_rule_ids(text: str, found: list[str]) -> None:
    assert SECTION_MARK.findall(text) == found


def test_the_docstring_scan_sees_a_citation_of_notes(tmp_path: Path) -> None:
    module = tmp_path / "cited.py"
    module.write_text('"""Sources: the project\'s researched notes, section 1.2."""\n\n\n'
                      'def f() -> None:\n    """A lookup (Artemis note C6)."""\n\n\n'
                      'BASE = -5\n"""The priority base (notes 1.2 step 6)."""\n', encoding="utf-8")
    cited = sorted((line, match.group(0))
                   for line, text in docstrings(module) for match in PRIVATE_CITATION.finditer(text))
    assert cited == [(1, "notes"), (1, "researched"), (5, "note C6"), (9, "notes")]
