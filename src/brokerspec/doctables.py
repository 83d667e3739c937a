"""The tables of ``docs/addressing.md`` that are made by running the spec.

Why this module exists
----------------------
Several tables in ``docs/addressing.md`` are not prose but data: the outcome
of every FQQN edge case under every profile (section 2), and the rule index
(section 6). They used to be generated once by hand and pasted in, and when
the spec changed they went on saying what the old spec did, with no test to
notice. Here each of those tables is a pure function of the current spec, so
the docs are made from the artefacts and cannot rot:

- :func:`render_all` builds every table, by name, as Markdown text;
- ``python -m brokerspec.doctables`` (``make docs``) writes them into the doc,
  between marker comments that are invisible when the page is rendered::

      <!-- generated: send-table -->

      | name | seed | ... |

      <!-- end generated -->

- ``tests/test_doctables.py`` fails when a table in the doc differs from what
  :func:`render_all` produces now, that is, whenever a spec change alters a
  cell, and tells the developer to run ``make docs``.

The text *around* the tables (what to take from them) is still prose and is
still the developer's to fix; the doctests next to it re-check sample cells.

The shape of each table is fixed here, as the doc explains it: one column per
profile (and one for the seed with ``addressing.fqqn_checks_address=false``),
neighbouring columns that agree on every row merged into one. Where a column
stands for several configurations by construction (the send table's seed
column covers both values of the option, which sends ignore), the generator
checks that the spec really gives the same outcome, with the same rule, for
each of them, and raises :class:`TableShapeError` when it does not, since the
doc's claim is then false and its prose needs a human.

Cells are written as in the doc: the outcome in words, then ``<br>`` and the
deciding rule. Characters beyond Latin-1 (the NFD combining accent, the
full-width colon) are written as ``\\uXXXX`` escapes because those names are
built to fool the eye.

>>> render_all()["parse-table"].splitlines()[2]
'| `q1` | `q1` | `q1` | no |'
>>> print(cell("a::q1", Consume("a::q1"), table_broker("seed")))
creates queue `a::q1`, attaches<br>`ADDR-CONSUME-AUTO-QUEUE`
"""

from __future__ import annotations

import argparse
import re
import sys
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from brokerspec.spec import get_profile
from brokerspec.spec.addressing import (
    RULES,
    Ambiguous,
    Attached,
    Consume,
    CreateAddress,
    CreateQueue,
    DeleteQueue,
    InvalidName,
    Lookup,
    NotFound,
    Outcome,
    QueueDeleted,
    Rejected,
    Resolved,
    Routed,
    RoutingType,
    Send,
    apply,
    get_queues_of,
    initial_state,
    parse_name,
    to_fully_qualified,
)
from brokerspec.spec.addressing.commands import AddressingCommand
from brokerspec.spec.addressing.model import AddressingState
from brokerspec.spec.addressing.rules import ALL_PROFILES

ANYCAST, MULTICAST = RoutingType.ANYCAST, RoutingType.MULTICAST

# --- the broker behind the tables (docs/addressing.md, section 2.2) ----------------

#: The set-up every behaviour table runs against; the doc's doctests define the same
#: ``TABLE_BROKER`` (``tests/test_doctables.py`` checks that they are equal).
TABLE_BROKER: tuple[AddressingCommand, ...] = (
    CreateAddress("address1", frozenset({ANYCAST})), CreateQueue("address1", "q1", ANYCAST),
    CreateAddress("a", frozenset({ANYCAST, MULTICAST})), CreateQueue("a", "q", ANYCAST),
    CreateAddress("address", frozenset({MULTICAST})), CreateQueue("address", "queue", MULTICAST),
    CreateAddress("café", frozenset({ANYCAST})), CreateQueue("café", "thé", ANYCAST),
    CreateAddress("a:", frozenset({ANYCAST})), CreateQueue("a:", "r", ANYCAST),
)

#: The edge-case names, one row each, in the doc's order.
EDGE_NAMES: tuple[str, ...] = (
    "q1", "a::q", "a::q1", "address::", "::queue", "::", "a::b::c", ":::", "a:::r",
    "", "café::thé", "cafe\u0301::thé", "a\uff1a\uff1aq",
)

#: The override that gives the seed Artemis's queue query (address part of an FQQN ignored).
NO_CHECK: tuple[str, str] = ("addressing.fqqn_checks_address", "false")

#: One configuration a column stands for: a profile name and its overrides.
Configuration = tuple[str, tuple[tuple[str, str], ...]]

CHECKED: tuple[Configuration, ...] = tuple((profile, ()) for profile in ALL_PROFILES)
UNCHECKED: tuple[Configuration, ...] = (("seed", (NO_CHECK,)),)

#: A cell identical to the seed column's and longer than this is written "same as seed".
SAME_AS_SEED_MIN = 90

START_MARKER = re.compile(r"<!-- generated: ([a-z0-9-]+) -->")
END_MARKER = "<!-- end generated -->"


class TableShapeError(Exception):
    """The spec no longer fits a table's shape (configurations sharing a column disagree)."""


def table_broker(profile: str, *overrides: tuple[str, str]) -> AddressingState:
    """A fresh copy of the tables' broker under ``profile`` with ``overrides``.

    Raises :class:`TableShapeError` if a set-up command is refused: the tables
    would then describe another broker than the doc says.
    """
    state = initial_state(get_profile(profile, tuple(overrides)))
    for command in TABLE_BROKER:
        state, result = apply(state, command)
        if isinstance(result, Rejected):
            raise TableShapeError(f"set-up command {command} is refused under {profile}: {result}")
    return state


# --- writing names and outcomes --------------------------------------------------


def escape(text: str) -> str:
    r"""``text`` with every character beyond Latin-1 as a ``\uXXXX`` escape.

    >>> escape("cafe\u0301")
    'cafe\\u0301'
    """
    return "".join(c if ord(c) <= 0xFF else f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}"
                   for c in text)


def code(name: str) -> str:
    """A name as a Markdown code span; the empty name is written ``""``."""
    text = escape(name).replace("|", "\\|") if name else '""'
    return f"``{text}``" if "`" in text else f"`{text}`"


def queue_ref(address: str, queue: str) -> str:
    """A queue as its FQQN, or as "`queue` on `address`" when colons next to ``::`` would mislead.

    >>> queue_ref("a", ":r")
    '`:r` on `a`'
    """
    if address.endswith(":") or queue.startswith(":"):
        return f"{code(queue)} on {code(address)}"
    return code(to_fully_qualified(address, queue))


def queue_ref_on(address: str, fqqn: str) -> str:
    """A queue of ``address`` given by its FQQN (split after the address, not at the first ``::``)."""
    prefix = address + "::"
    if not fqqn.startswith(prefix):
        raise ValueError(f"{fqqn!r} is not a queue of {address!r}")
    return queue_ref(address, fqqn[len(prefix):])


def invalid_name_text(name: str, reason: InvalidName) -> str:
    """The words for an InvalidName rejection of the client name ``name``."""
    if reason.name:
        return f"rejected: InvalidName {code(reason.name)}"
    parsed = parse_name(name)
    if parsed.is_fqqn and parsed.address and not parsed.queue:
        return "rejected: InvalidName (empty queue part)"
    if parsed.is_fqqn and parsed.queue and not parsed.address:
        return "rejected: InvalidName (empty address part)"
    return "rejected: InvalidName (empty)"


def listing(fqqns: Iterable[str], address: str) -> str:
    """Queues of ``address`` by FQQN, written as a comma-separated list."""
    return ", ".join(queue_ref_on(address, fqqn) for fqqn in fqqns)


def routed_text(result: Routed) -> str:
    """The words for a send's outcome: what it created, then where the message may go."""
    parts: list[str] = []
    if result.created_address is not None:
        parts.append(f"creates address {code(result.created_address)}")
    if result.created_queue is not None:
        parts.append(f"creates queue {queue_ref_on(result.address, result.created_queue)}")
    if result.copies:
        verb = "copy to" if len(result.copies) == 1 else "copies to"
        parts.append(f"{verb} {listing(result.copies, result.address)}")
    if result.anycast_candidates:
        parts.append(f"to one of {listing(result.anycast_candidates, result.address)}")
    if not result.copies and not result.anycast_candidates:
        parts.append("routed nowhere")
    return "; ".join(parts)


def attached_text(result: Attached) -> str:
    """The words for a consume's success: what it created, and where it attached."""
    target = queue_ref(result.address, result.queue)
    if result.created_queue is None:
        created = "" if result.created_address is None else f"creates address {code(result.created_address)}, "
        return f"{created}attaches to {target}"
    if result.created_address is None:
        return f"creates queue {target}, attaches"
    return f"creates address {code(result.created_address)} and queue {target}, attaches"


def outcome_text(name: str, result: Outcome) -> str:
    """An outcome in the doc's words (without its rule); ``name`` is the name the command gave."""
    if isinstance(result, Resolved):
        return f"resolves {queue_ref(result.address, result.queue)}"
    if isinstance(result, NotFound):
        return "not found"
    if isinstance(result, Ambiguous):
        return "ambiguous: " + ", ".join(code(candidate) for candidate in result.candidates)
    if isinstance(result, QueueDeleted):
        return f"deletes {queue_ref(result.address, result.queue)}"
    if isinstance(result, Attached):
        return attached_text(result)
    if isinstance(result, Routed):
        return routed_text(result)
    if isinstance(result, Rejected):
        if isinstance(result.reason, InvalidName):
            return invalid_name_text(name, result.reason)
        return f"rejected: {type(result.reason).__name__}"
    return code(str(result))


def cell(name: str, command: AddressingCommand, state: AddressingState) -> str:
    """The table cell for ``command`` (which names ``name``) on ``state``: outcome, ``<br>``, rule."""
    result = apply(state, command)[1]
    return f"{outcome_text(name, result)}<br>`{result.rule}`"


# --- behaviour tables ------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    """One column of a behaviour table: its header, and the configurations it stands for."""

    header: str
    configurations: tuple[Configuration, ...]


def column_cell(column: Column, name: str, command: AddressingCommand) -> str:
    """The one cell ``column`` shows for ``command``; every configuration must agree on it."""
    cells = {
        configuration: cell(name, command, table_broker(configuration[0], *configuration[1]))
        for configuration in column.configurations
    }
    distinct = set(cells.values())
    if len(distinct) != 1:
        detail = "; ".join(f"{profile}{list(extra) or ''}: {text}" for (profile, extra), text in cells.items())
        raise TableShapeError(
            f"column {column.header!r} merges configurations that disagree on {command}: {detail}. "
            "The doc's table shape (and the prose that explains it) needs updating.")
    return distinct.pop()


def row(cells: Sequence[str]) -> str:
    """One Markdown table row."""
    return "| " + " | ".join(cells) + " |"


def table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A Markdown table: header row, separator row, body rows."""
    lines = [row(headers), "|" + "|".join(["---"] * len(headers)) + "|"]
    lines.extend(row(cells) for cells in rows)
    return "\n".join(lines)


def same_as_seed(cells: Sequence[str]) -> list[str]:
    """Replace long cells identical to the first (seed) cell by "same as seed"."""
    first = cells[0]
    return [first] + [
        "same as seed" if text == first and len(text) > SAME_AS_SEED_MIN else text for text in cells[1:]
    ]


CommandMaker = Callable[[str], AddressingCommand]


def behaviour_rows(
    columns: Sequence[Column], makers: Sequence[CommandMaker], names: Sequence[str] = EDGE_NAMES
) -> list[list[str]]:
    """One row per name: the name, then for each maker every column's cell."""
    return [
        [code(name)] + [column_cell(column, name, make(name)) for make in makers for column in columns]
        for name in names
    ]


def parse_table() -> str:
    """Section 2.1: how each edge-case name is taken apart."""
    rows = []
    for name in EDGE_NAMES:
        parsed = parse_name(name)
        rows.append([code(name), code(parsed.address), code(parsed.queue), "yes" if parsed.is_fqqn else "no"])
    return table(["name", "address part", "queue part", "FQQN?"], rows)


def broker_table() -> str:
    """Section 2.2: the broker behind the behaviour tables, read back from its state."""
    for configuration in CHECKED + UNCHECKED:
        table_broker(configuration[0], *configuration[1])  # raises if the set-up is refused anywhere
    state = table_broker("seed")
    rows = []
    for command in TABLE_BROKER:
        if not isinstance(command, CreateAddress):
            continue
        address = state.addresses[command.address]
        nfc = " (NFC)" if not address.name.isascii() and unicodedata.is_normalized("NFC", address.name) else ""
        accepts = ", ".join(sorted(t.value for t in address.routing_types)) or "nothing"
        queues = ", ".join(f"{code(q.name)} ({q.routing_type.value})" for q in get_queues_of(state, address.name))
        rows.append([code(address.name) + nfc, accepts, queues or "none"])
    return table(["address", "accepts", "queue"], rows)


#: Each profile as it is, and the seed with the option that switches its lookup to Artemis's queue query.
SEED_COLUMN = Column("seed", (("seed", ()),))
SEED_NO_CHECK_COLUMN = Column("seed with `fqqn_checks_address=false`", (("seed", (NO_CHECK,)),))
ARTEMIS_COLUMNS = (Column("artemis-2.11", (("artemis-2.11", ()),)), Column("artemis-latest", (("artemis-latest", ()),)))


def merged(columns: Sequence[Column], rows: list[list[str]]) -> tuple[list[Column], list[list[str]]]:
    """Merge neighbouring columns whose cells agree on every row into one (headers joined by ", ").

    The cells follow the name in each row, so column ``i`` is ``row[i + 1]``.
    """
    kept: list[Column] = []
    keep_rows: list[list[str]] = [[cells[0]] for cells in rows]
    for index, column in enumerate(columns):
        same = kept and all(cells[index + 1] == out[-1] for cells, out in zip(rows, keep_rows))
        if same:
            last = kept[-1]
            kept[-1] = Column(f"{last.header}, {column.header}", last.configurations + column.configurations)
            continue
        kept.append(column)
        for cells, out in zip(rows, keep_rows):
            out.append(cells[index + 1])
    return kept, keep_rows


def profile_table(columns: Sequence[Column], make: CommandMaker, names: Sequence[str] = EDGE_NAMES,
                  title: str = "") -> tuple[list[str], list[list[str]]]:
    """Headers and rows for ``make`` under ``columns``, agreeing neighbours merged, long repeats shortened."""
    kept, rows = merged(columns, behaviour_rows(columns, [make], names))
    headers = ["name", *(f"{title}{c.header}" for c in kept)]
    return headers, [[cells[0], *same_as_seed(cells[1:])] for cells in rows]


def lookup_delete_table() -> str:
    """Section 2.3: lookup and delete of every edge name, per profile."""
    columns = (SEED_COLUMN, SEED_NO_CHECK_COLUMN, *ARTEMIS_COLUMNS)
    lookup_headers, lookups = profile_table(columns, Lookup, title="lookup: ")
    delete_headers, deletes = profile_table(columns, DeleteQueue, title="delete: ")
    rows = [looked + deleted[1:] for looked, deleted in zip(lookups, deletes)]
    return table([*lookup_headers, *delete_headers[1:]], rows)


def consume_table() -> str:
    """Section 2.4: a consumer without a routing type, per profile."""
    return table(*profile_table((SEED_COLUMN, *ARTEMIS_COLUMNS), Consume))


#: The send columns: the option fqqn_checks_address must not matter, so the seed's covers both values.
SEND_COLUMNS = (Column("seed", (("seed", ()), ("seed", (NO_CHECK,)))), *ARTEMIS_COLUMNS)


def typed_send(routing_type: RoutingType | None) -> CommandMaker:
    """A maker of sends carrying ``routing_type``."""
    def make(name: str) -> AddressingCommand:
        return Send(name, routing_type)
    return make


def send_table() -> str:
    """Section 2.5: a send without a routing type, per profile."""
    return table(*profile_table(SEND_COLUMNS, Send))


def typed_send_table() -> str:
    """Section 2.5: the sends whose outcome changes when the message carries a routing type."""
    untyped = behaviour_rows(SEND_COLUMNS, [Send])
    rows = []
    for routing_type in (ANYCAST, MULTICAST):
        for base, typed in zip(untyped, behaviour_rows(SEND_COLUMNS, [typed_send(routing_type)])):
            if typed != base:
                rows.append([typed[0], routing_type.value, *same_as_seed(typed[1:])])
    return table(["name", "routing type", *(c.header for c in SEND_COLUMNS)], rows)


def rule_index_table() -> str:
    """Section 6: every rule of ``brokerspec.spec.addressing.RULES``."""
    rows = []
    for rule in RULES.values():
        if rule.profiles == ALL_PROFILES:
            profiles = "all"
        else:
            profiles = ", ".join(rule.profiles) or "none by default (option override only)"
        rows.append([f"`{rule.id}`", rule.summary.replace("|", "\\|"), profiles, rule.source.replace("|", "\\|")])
    return table(["ID", "Summary", "Profiles", "Source"], rows)


TABLES: dict[str, Callable[[], str]] = {
    "parse-table": parse_table,
    "broker-table": broker_table,
    "lookup-delete-table": lookup_delete_table,
    "consume-table": consume_table,
    "send-table": send_table,
    "typed-send-table": typed_send_table,
    "rule-index": rule_index_table,
}


def render_all() -> dict[str, str]:
    """Every generated table of docs/addressing.md, by name, as Markdown text (no trailing newline)."""
    return {name: build() for name, build in TABLES.items()}


# --- the doc's generated regions -------------------------------------------------


def read_generated(text: str) -> dict[str, str]:
    """The generated regions of a doc, by name, each stripped of surrounding blank lines.

    Raises ValueError for a region without an end marker or a name used twice.
    """
    regions: dict[str, str] = {}
    position = 0
    while (start := START_MARKER.search(text, position)) is not None:
        name = start.group(1)
        end = text.find(END_MARKER, start.end())
        if end < 0:
            raise ValueError(f"generated region {name!r} has no {END_MARKER!r}")
        if name in regions:
            raise ValueError(f"generated region {name!r} appears twice")
        regions[name] = text[start.end():end].strip("\n")
        position = end + len(END_MARKER)
    return regions


def replace_generated(text: str, tables: dict[str, str]) -> str:
    """``text`` with every generated region's body replaced by its table.

    Raises KeyError for a region whose name has no table.
    """
    def fill(match: re.Match[str]) -> str:
        return f"<!-- generated: {match.group(1)} -->\n\n{tables[match.group(1)]}\n\n{END_MARKER}"

    read_generated(text)  # validates the markers
    pattern = re.compile(START_MARKER.pattern + r".*?" + re.escape(END_MARKER), re.DOTALL)
    return pattern.sub(fill, text)


DEFAULT_DOC = Path("docs") / "addressing.md"


def main(argv: Sequence[str] | None = None) -> int:
    """Rewrite the generated tables of the doc in place (``--check``: only report staleness).

    Usage: ``python -m brokerspec.doctables [--check] [DOC]``; DOC defaults to
    ``docs/addressing.md`` under the current directory. Exit code 0 on
    success (or, with ``--check``, when the doc is current), 1 when ``--check``
    finds stale tables or the doc lacks markers for a table.
    """
    parser = argparse.ArgumentParser(prog="python -m brokerspec.doctables",
                                     description="Rewrite the spec-generated tables of the addressing doc.")
    parser.add_argument("--check", action="store_true", help="only report whether the tables are current")
    parser.add_argument("doc", nargs="?", type=Path, default=DEFAULT_DOC, help="default: %(default)s")
    args = parser.parse_args(argv)
    check_only: bool = args.check
    path: Path = args.doc
    text = path.read_text(encoding="utf-8")
    tables = render_all()
    missing = sorted(set(tables) - set(read_generated(text)))
    if missing:
        print(f"{path}: no markers for {', '.join(missing)}", file=sys.stderr)
        return 1
    new_text = replace_generated(text, tables)
    if check_only:
        if new_text != text:
            print(f"{path}: generated tables are stale; run `make docs`", file=sys.stderr)
            return 1
        return 0
    if new_text != text:
        path.write_text(new_text, encoding="utf-8")
        print(f"{path}: tables rewritten")
    else:
        print(f"{path}: tables already current")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
