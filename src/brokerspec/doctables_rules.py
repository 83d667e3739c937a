"""The rule indexes of ``docs/load-balancing.md`` and ``docs/topologies.md``, made from the rule tables.

Introduction
------------
Each domain guide ends with an index of its rules: ID, plain words, source
and, for load balancing, the profiles. Pasted by hand, such a table goes
stale the moment a rule's words or source change, so both are written from
``RULES`` (:func:`balancing_rule_index`, :func:`topologies_rule_index`),
between ``<!-- generated: NAME -->`` and ``<!-- end generated -->`` (the
markers of :mod:`brokerspec.doctables`, whose functions this module reuses).
The indexes of ``docs/addressing.md`` and ``docs/duplicate-detection.md``
come from :mod:`brokerspec.doctables` and :mod:`brokerspec.doctables_duplicates`.

``python -m brokerspec.doctables_rules`` rewrites both guides in place;
``--check`` only reports (exit 1) when one is stale or lacks its markers.
``tests/test_doctables_rules.py`` fails while a guide differs from the rule
tables as they are now.

>>> balancing_rule_index().splitlines()[0]
'| rule | what it says | source | profiles |'
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from brokerspec.doctables import read_generated, replace_generated, table
from brokerspec.doctables_duplicates import cell_text
from brokerspec.spec.balancing import RULES as BALANCING_RULES
from brokerspec.spec.balancing.rules import ALL
from brokerspec.spec.topologies import RULES as TOPOLOGY_RULES


def balancing_rule_index() -> str:
    """Every rule of ``brokerspec.spec.balancing.RULES``, in its order; "all" for every profile."""
    rows = [[f"`{rule.id}`", cell_text(rule.summary), cell_text(rule.source),
             "all" if rule.profiles == ALL else ", ".join(rule.profiles)]
            for rule in BALANCING_RULES.values()]
    return table(["rule", "what it says", "source", "profiles"], rows)


def topologies_rule_index() -> str:
    """Every rule of ``brokerspec.spec.topologies.RULES``, in its order (all apply to the one profile set)."""
    rows = [[f"`{rule.id}`", cell_text(rule.summary), cell_text(rule.source)] for rule in TOPOLOGY_RULES.values()]
    return table(["rule", "what it says", "source"], rows)


DOCS: dict[Path, dict[str, Callable[[], str]]] = {
    Path("docs") / "load-balancing.md": {"balancing-rule-index": balancing_rule_index},
    Path("docs") / "topologies.md": {"topologies-rule-index": topologies_rule_index},
}
"""Each guide, relative to the repository root, with the generated blocks it holds."""


def regenerate(text: str, blocks: dict[str, Callable[[], str]]) -> str:
    """``text`` with each of ``blocks`` rewritten from the rule tables.

    Raises ValueError for broken markers and KeyError for a region no block fills.
    """
    return replace_generated(text, {name: build() for name, build in blocks.items()})


def main(argv: Sequence[str] | None = None) -> int:
    """Rewrite the rule indexes of both guides in place (``--check``: only report staleness).

    Usage: ``python -m brokerspec.doctables_rules [--check] [--root DIR]``;
    the guides are read under DIR (default: the current directory). Exit
    code 0 on success (or, with ``--check``, when both are current), 1 when
    a guide lacks a marker, has a broken one, or (with ``--check``) is stale.
    """
    parser = argparse.ArgumentParser(prog="python -m brokerspec.doctables_rules",
                                     description="Rewrite the rule indexes of the load-balancing and topology guides.")
    parser.add_argument("--check", action="store_true", help="only report whether the indexes are current")
    parser.add_argument("--root", type=Path, default=Path("."), help="the repository root (default: .)")
    args = parser.parse_args(argv)
    check_only: bool = args.check
    root: Path = args.root
    status = 0
    for doc, blocks in DOCS.items():
        path = root / doc
        text = path.read_text(encoding="utf-8")
        try:
            missing = sorted(set(blocks) - set(read_generated(text)))
            if missing:
                raise ValueError(f"no <!-- generated: NAME --> markers for {', '.join(missing)}")
            new_text = regenerate(text, blocks)
        except (ValueError, KeyError) as error:
            print(f"{path}: {error}", file=sys.stderr)
            status = 1
            continue
        if check_only:
            if new_text != text:
                print(f"{path}: the rule index is stale; run `python -m brokerspec.doctables_rules`",
                      file=sys.stderr)
                status = 1
        elif new_text != text:
            path.write_text(new_text, encoding="utf-8")
            print(f"{path}: rule index rewritten")
        else:
            print(f"{path}: rule index already current")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
