"""``docs/sut-author-guide.md``: everything a SUT author needs besides the protocol page, made from the spec.

Why this module exists
----------------------
A broker engineer writing a SUT has to give, for every operation, exactly the
outcome the spec gives: the right refusal when several would apply, every
structured field of it, and every list in the right order. That knowledge
sits in the spec as dataclasses, ``if`` statements and sort keys; this module
turns it into one page, and ``tests/test_sut_guide.py`` fails when the page
in the repository is not what the spec makes now (``make docs`` rewrites it).

What is mechanical, and from where:

- arguments and outcome fields, with their JSON types, defaults and whether
  they are compared: from the dataclasses and their annotations, encoded as
  :mod:`brokerspec.codec` does (:mod:`brokerspec.sutguide_types`);
- the outcomes each operation gives, with the deciding rule and the profiles:
  by running every catalogue case, every check-order probe and a few examples
  through the spec (:func:`observe`);
- which check wins when two fail at once: measured by
  :mod:`brokerspec.sutguide_probes`;
- how lists are ordered: stated in :mod:`brokerspec.sutguide_order` and
  checked there against every observed outcome;
- how outcomes are judged (exactly, or any allowed one): from the domain's
  judge in :mod:`brokerspec.check.domains`;
- every rule with its text and source: from each domain's ``RULES``.

>>> profiles_text(["artemis-latest", "seed", "artemis-2.11"])
'all'
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from brokerspec.check.domains import get_domain
from brokerspec.codec import COMMANDS, OUTCOMES, encode_command, encode_outcome
from brokerspec.conform.catalogue import DOMAIN_ORDER, RULE_TABLES, all_cases
from brokerspec.conform.protocol import PROTOCOL_VERSION, version_needed
from brokerspec.spec import PROFILES, Outcome, addressing, get_profile
from brokerspec.sutguide_order import RULES as ORDERING_RULES
from brokerspec.sutguide_order import check_rules
from brokerspec.sutguide_probes import PROBES, ProbeResult, outcome_key, probe_scripts, run_all
from brokerspec.sutguide_types import field_rows, never_compared_text

DEFAULT_DOC = Path("docs") / "sut-author-guide.md"
VERSION_SECTIONS = {2: "version-2-queries", 3: "version-3-xa-prepare"}
"""The section of ``docs/sut-protocol.md`` that introduces each protocol version after the first."""
BASE = tuple(PROFILES)
Seen = dict[tuple[str, str], dict[tuple[str, str, str], set[str]]]


# --- what the spec was seen to answer -------------------------------------------------------


def profile_label(name: str, overrides: Sequence[tuple[str, str]]) -> str:
    """A profile with its option overrides, as the tables show it."""
    return name + "".join(f" with `{dotted}={value}`" for dotted, value in overrides)


@dataclass(frozen=True)
class Example:
    """One command and the outcome the spec gave it, as wire JSON, with where it was seen."""

    where: str
    args: str
    outcome: str


@dataclass
class Observations:
    """What the spec answered: by operation, each (outcome, reason, rule) with its profiles and shortest example."""

    seen: Seen = dataclasses.field(default_factory=dict)
    examples: dict[tuple[str, str], dict[tuple[str, str, str], Example]] = dataclasses.field(default_factory=dict)
    outcomes: list[tuple[str, Outcome]] = dataclasses.field(default_factory=list)

    def add(self, domain: str, where: str, label: str, command: Any, outcome: Outcome) -> None:
        """Record one step."""
        key = outcome_key(outcome)
        self.seen.setdefault((domain, command.op), {}).setdefault(key, set()).add(label)
        self.outcomes.append((domain, outcome))
        shown = {k: v for k, v in encode_outcome(outcome).items() if k != "rule"}
        example = Example(f"{where} under {label}", json.dumps(encode_command(command), ensure_ascii=False),
                          json.dumps(shown, ensure_ascii=False))
        known = self.examples.setdefault((domain, command.op), {}).get(key)
        if known is None or len(example.args + example.outcome) < len(known.args + known.outcome):
            self.examples[(domain, command.op)][key] = example


def observe() -> Observations:
    """Every (outcome, reason, rule) each operation gave, with the profiles, an example, and every outcome seen.

    Sources: every catalogue case under every profile it applies to (with its
    overrides), and every probe and example script under every profile.
    """
    found = Observations()

    def play(domain: str, where: str, label: str, commands: Iterable[Any], profile: Any) -> None:
        spec = get_domain(domain)
        state = spec.initial_state(profile)
        for number, command in enumerate(commands, 1):
            state, outcome = spec.apply(state, command)
            found.add(domain, f"{where}, step {number},", label, command, outcome)

    for case in all_cases():
        for name in case.profiles:
            play(case.domain, f"case `{case.name}`", profile_label(name, case.overrides), case.commands,
                 case.profile_for(get_profile(name)))
    for domain, script in probe_scripts():
        for name in BASE:
            play(domain, "a probe", name, script, get_profile(name))
    return found


def profiles_text(labels: Iterable[str]) -> str:
    """'all' when every base profile is there (variants then add nothing), else the labels in profile order."""
    given = set(labels)
    if set(BASE) <= given:
        return "all"
    shown = {label for label in given if label.split(" ")[0] == label or label.split(" ")[0] not in given}
    return ", ".join(sorted(shown, key=lambda label: (BASE.index(label.split(" ")[0]), label)))


# --- Markdown ---------------------------------------------------------------------------------


def table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|").replace("\n", " ") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def first_line(cls: type) -> str:
    """The first sentence line of a class's docstring."""
    return (cls.__doc__ or "").strip().split("\n", 1)[0]


def order_rows(results: Sequence[ProbeResult]) -> list[list[str]]:
    """The check-order table of one operation: one row per probe and group of profiles with the same answer."""
    rows: list[list[str]] = []
    for probe in dict.fromkeys(r.probe for r in results):
        groups: dict[str, list[str]] = {}
        for result in (r for r in results if r.probe is probe):
            if result.winner is None or result.outcome is None:
                answer = f"does not apply: {result.why_not}"
            else:
                won = probe.first if result.winner == "first" else probe.second
                kind, reason, rule = outcome_key(result.outcome)
                answer = f"{won} wins: `{kind}`" + (f" `{reason}`" if reason else "") + f" ({rule})"
            groups.setdefault(answer, []).append(result.profile)
        for answer, names in groups.items():
            rows.append([f"{probe.first} ({probe.first_rule})", f"{probe.second} ({probe.second_rule})", answer,
                         profiles_text(names)])
    return rows


def operation_section(domain: str, op: str, found: Observations, results: Sequence[ProbeResult],
                      objects: set[type]) -> list[str]:
    """One operation: its arguments, its outcomes with their rules, and its check order."""
    command = COMMANDS[domain][op]
    parts = [f"#### `{op}`", "", first_line(command), ""]
    needed = version_needed(command)
    if needed > PROTOCOL_VERSION:
        parts += [f"Asked only of a SUT that speaks [protocol version {needed}](sut-protocol.md#"
                  f"{VERSION_SECTIONS[needed]}) or later.", ""]
    rows = field_rows(command, objects, with_default=True)
    parts += [table(["argument", "JSON type", "required / default"], [r[:3] for r in rows]) if rows
              else "No arguments (`\"args\": {}`).", ""]
    answers = found.seen.get((domain, op), {})
    if not answers:
        raise ValueError(f"{domain} operation {op!r}: no catalogue case, probe or example shows an outcome")
    outcome_rows = [[f"`{kind}`", f"`{reason}`" if reason else "", f"`{rule}`" if rule else "(none)",
                     profiles_text(labels)] for (kind, reason, rule), labels in sorted(answers.items())]
    parts += ["Outcomes seen, with the rule that decides each:", "",
              table(["outcome", "reason or status", "rule", "profiles"], outcome_rows), "",
              "The shortest example of each, as the SUT receives the arguments and replies:", ""]
    for key, example in sorted(found.examples[(domain, op)].items()):
        label = f"`{key[0]}`" + (f" `{key[1]}`" if key[1] else "") + (f", `{key[2]}`" if key[2] else "")
        parts.append(f"- {label} ({example.where}): `{example.args}` → `{example.outcome}`")
    parts.append("")
    mine = [r for r in results if r.probe.domain == domain and r.probe.op == op]
    if mine:
        parts += ["When two checks fail at once:", "",
                  table(["when", "and", "answer", "profiles"], order_rows(mine)), ""]
    return parts


def domain_section(domain: str, found: Observations, results: Sequence[ProbeResult],
                   tested: dict[Any, int]) -> list[str]:
    """Everything about one domain."""
    objects: set[type] = set()
    judge = get_domain(domain).judge
    judged = ("where the rules leave a choice (which consumer, which binding), `conform` accepts any outcome the "
              "spec allows, and `--strict` demands the spec's own" if judge is not None
              else "each step has exactly one right outcome")
    parts = [f"## `{domain}`", "", f"Judging: {judged}.", "", "### Operations", ""]
    for op in COMMANDS[domain]:
        parts += operation_section(domain, op, found, results, objects)
    parts += ["### Outcomes", ""]
    for cls in OUTCOMES[domain].values():
        rows = field_rows(cls, objects, with_default=True)
        parts += [f"`{cls.kind}`: {first_line(cls)}", "",
                  table(["field", "JSON type", "default", "compared"], rows) if rows else "No fields.", ""]
    if domain == "addressing":
        parts += ["### Reasons", "", "A `rejected` outcome's `reason` is one of these objects, tagged by `type`.", ""]
        for reason in addressing.REASON_TYPES:
            parts += [f"`{reason.kind}`: {first_line(reason)}", "",
                      table(["field", "JSON type", "compared"], field_rows(reason, objects, with_default=False)), ""]
    events = sorted({t for t in objects if isinstance(getattr(t, "kind", None), str)},
                    key=lambda t: str(getattr(t, "kind")))
    plain = sorted((t for t in objects if t not in events), key=lambda t: t.__name__)
    for title, kinds in (("Events", events), ("Objects", plain)):
        if not kinds:
            continue
        parts += [f"### {title}", ""]
        for cls in kinds:
            name = f"`{getattr(cls, 'kind')}`" if title == "Events" else f"`{cls.__name__}`"
            parts += [f"{name}: {first_line(cls)}", "",
                      table(["field", "JSON type", "default", "compared"], field_rows(cls, set(), True)), ""]
    rules = [r for r in ORDERING_RULES if r.domain == domain]
    parts += ["### Ordering rules", ""]
    if rules:
        parts += [table(["list", "order", "source", "lists checked"],
                        [[f"`{r.where}`", r.order, r.source, str(tested[r]) if r in tested else "described, not a sort"]
                         for r in rules]), ""]
    parts += ["Every other list is in the order the operation produced it; sets are compared as sets.", "",
              "### Rules", "",
              table(["ID", "rule", "source", "profiles"],
                    [[f"`{r.id}`", r.summary, r.source, profiles_text(r.profiles) if r.profiles else
                      "none by default (option override only)"] for r in RULE_TABLES[domain].values()]), ""]
    return parts


INTRO = """\
# Writing a SUT: every operation, its checks and its answers

<!-- generated by `python -m brokerspec.sutguide --write` (make docs) from the spec; do not edit by hand -->

This page and the [SUT protocol](sut-protocol.md) are all a SUT author needs. The protocol says how requests
and replies travel; this page says, for every operation of every domain, what its arguments are, which
outcomes it gives and under which rule (with the shortest example of each, in the JSON a SUT reads and
writes), which refusal wins when several checks fail at once, which fields of an outcome are compared, and
how every list is ordered. All of it is made from the spec: the outcomes by
running every catalogue case and a set of probes through it, the check order by running commands that break
two checks at once, the orders by checking every list the spec produced. A profile column says where an
answer holds; `all` means every profile.

## How an outcome is judged

- An outcome is a JSON object whose `type` names it; every field of that type is compared exactly, except
  the free-text ones, which are never compared: {free}. Write them in your broker's own words.
- `rule`, the ID of the deciding rule, is optional in a reply and never compared.
- An operation marked with a protocol version is asked only of a SUT that speaks it (its `hello` lists
  `versions`, [SUT protocol](sut-protocol.md)): the queries need version 2, `prepare` version 3.
- A list is compared in order (see each domain's ordering rules); a set is compared as a set.
- A field with a default may be left out of a reply; brokerspec always writes every argument of a request.
- A request carries only values the spec's command accepts: never a negative `size`, an empty `filter`, a
  bridge ID that is not lower-case hex pairs, a topology destination other than `queue://NAME` or
  `topic://NAME`, or a broker, consumer or producer name with characters other than letters, digits, `_`, `.`
  and `-`.
"""


def render() -> str:
    """The whole page, from the spec as it is now."""
    found = observe()
    tested = check_rules(found.outcomes)
    results = run_all(BASE)
    unused = [p for p in PROBES if all(r.winner is None for r in results if r.probe is p)]
    if unused:
        raise ValueError(f"probes that show no order under any profile: {[(p.first, p.second) for p in unused]}")
    parts = [INTRO.format(free=never_compared_text())]
    for domain in DOMAIN_ORDER:
        parts += domain_section(domain, found, results, tested)
    return "\n".join(parts).rstrip("\n") + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Write the page (``--write``) or report whether it is current (``--check``, the default).

    Usage: ``python -m brokerspec.sutguide [--write] [DOC]``; exit code 0 when
    written or current, 1 when ``--check`` finds it stale or missing.
    """
    parser = argparse.ArgumentParser(prog="python -m brokerspec.sutguide",
                                     description="Write or check the spec-generated SUT author guide.")
    parser.add_argument("--write", action="store_true", help="rewrite the page (default: only check it)")
    parser.add_argument("doc", nargs="?", type=Path, default=DEFAULT_DOC, help="default: %(default)s")
    args = parser.parse_args(argv)
    path: Path = args.doc
    text = render()
    current = path.read_text(encoding="utf-8") if path.is_file() else None
    if args.write:
        if current != text:
            path.write_text(text, encoding="utf-8")
        print(f"{path}: {'already current' if current == text else 'written'}")
        return 0
    if current != text:
        print(f"{path}: {'missing' if current is None else 'stale'}; run `make docs`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
