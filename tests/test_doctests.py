"""Every docstring example in the package and every example in docs/ runs, so none can rot."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import brokerspec

DOCS = Path(__file__).resolve().parents[1] / "docs"
MODULES = sorted(m.name for m in pkgutil.walk_packages(brokerspec.__path__, "brokerspec."))
FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS


@pytest.mark.parametrize("name", MODULES)
def test_module_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=FLAGS)
    assert result.failed == 0


@pytest.mark.parametrize("page", sorted(p.name for p in DOCS.glob("*.md")))
def test_documentation_examples(page: str) -> None:
    result = doctest.testfile(str(DOCS / page), module_relative=False, optionflags=FLAGS)
    assert result.failed == 0


def test_the_docs_have_examples() -> None:
    attempted = sum(doctest.testfile(str(p), module_relative=False, optionflags=FLAGS).attempted
                    for p in DOCS.glob("*.md"))
    assert attempted >= 50
