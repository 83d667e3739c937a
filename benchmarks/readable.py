"""Histories the code before the throughput work can read, for the benchmarks that time it on the same input.

Introduction
------------
The commit :data:`baseline.BEFORE_THROUGHPUT` predates commands, fields and
operations added since (a queue's ``enabled``, an auto-creating send, the
queue and demand queries). This checkout writes every argument of a command,
defaults included, so the older code refuses most lines of a corpus this
checkout made, quarantines them, and its verdicts differ for that reason
alone. Two steps give both sides a corpus they read alike:

1. :func:`drop_default_arguments` (this checkout): a step line leaves out
   the arguments at their field's default, which both sides decode as that
   default;
2. :func:`unreadable_histories` (run with the older code through
   :func:`baseline.run_with`): the histories with a step it still cannot
   decode, which :func:`keep_readable` then drops.

Usage: ``readable.make_readable(path, package)`` on a JSON-lines history file,
with ``package`` what :func:`baseline.baseline_package` yielded.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from baseline import run_with


def drop_default_arguments(record: dict[str, Any], domain: str) -> dict[str, Any]:
    """``record`` (a step line of ``domain``) without the arguments that hold their field's default."""
    from brokerspec.codec import decode_command

    command = decode_command(record["op"], record["args"], domain=domain)
    defaults = {f.name: f.default for f in dataclasses.fields(command) if f.default is not dataclasses.MISSING}
    args = {name: value for name, value in record["args"].items()
            if name not in defaults or getattr(command, name) != defaults[name]}
    return {**record, "args": args}


def without_defaults(lines: list[str]) -> list[str]:
    """History lines (JSON text, headers before their steps) with :func:`drop_default_arguments` applied."""
    domains: dict[str, str] = {}
    out = []
    for text in lines:
        record = json.loads(text)
        if record["type"] == "header":
            domains[record["history"]] = record["domain"]
        elif record["type"] == "step":
            text = json.dumps(drop_default_arguments(record, domains[record["history"]]))
        out.append(text)
    return out


def unreadable_histories(path: str) -> dict[str, str]:
    """The histories of the JSON-lines file ``path`` with a step this side's codec cannot decode, and why.

    Uses only what the older code has (``jsonin.loads`` and the codec's two decoders).
    """
    from brokerspec import jsonin
    from brokerspec.codec import decode_command, decode_outcome

    domains: dict[str, str] = {}
    bad: dict[str, str] = {}
    with open(path, encoding="utf-8") as lines:
        for text in lines:
            record = jsonin.loads(text)
            history = record["history"]
            if record["type"] == "header":
                domains[history] = record["domain"]
                continue
            if history in bad:
                continue
            try:
                decode_command(record["op"], record["args"], domain=domains[history])
                if "outcome" in record:
                    decode_outcome(record["outcome"], domain=domains[history])
            except Exception as error:
                bad[history] = f"{type(error).__name__}: {error}"
    return bad


def keep_readable(lines: list[str], unreadable: dict[str, str]) -> list[str]:
    """``lines`` without those of the histories ``unreadable`` names."""
    return [text for text in lines if json.loads(text)["history"] not in unreadable]


def make_readable(path: Path, package: Path) -> dict[str, str]:
    """Rewrite the history file ``path`` into lines the older code at ``package`` reads; the histories dropped."""
    lines = without_defaults(path.read_text(encoding="utf-8").splitlines())
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    unreadable: dict[str, str] = run_with(package, "readable", "unreadable_histories", {"path": str(path)})
    if unreadable:
        path.write_text("\n".join(keep_readable(lines, unreadable)) + "\n", encoding="utf-8")
    return unreadable


def describe(unreadable: dict[str, str], where: str) -> str:
    """One line saying how many histories were dropped from ``where`` and the first reason."""
    first = next(iter(unreadable.values()), "")
    return (f"both sides replay {where} without the {len(unreadable):,} histories the code before the throughput "
            f"work cannot read" + (f" (first: {first})" if first else ""))
