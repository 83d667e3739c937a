"""The generated parts of ``docs/duplicate-detection.md``, made by running the spec.

Introduction
------------
The duplicate-detection guide holds three kinds of material that are data,
not prose, and would go stale if they were pasted in by hand:

- the rule index, one row per rule of ``RULES`` (:func:`rule_index_table`);
- the transaction lifecycle as a table, one row per key of
  ``TRANSACTION_LIFECYCLE`` plus one per move the table leaves out
  (a refused move), each checked against what the operations really do
  (:func:`lifecycle_table`), and the same table drawn as a Mermaid state
  diagram (:func:`lifecycle_diagram`);
- visibility timelines: one scripted scenario, :data:`TIMELINE`, run
  through the spec under every profile (profiles with equal options share a
  column, :data:`TIMELINE_COLUMNS`), showing after every step the outcome
  and which IDs each cache detects (:func:`timeline_table`), and the steps
  where the columns part (:func:`timeline_differences_table`).

Each block sits in the doc between ``<!-- generated: NAME -->`` and
``<!-- end generated -->`` (the marker syntax of :mod:`brokerspec.doctables`,
whose marker functions this module reuses). :func:`regenerate` rewrites every
block of a doc's text; ``python -m brokerspec.doctables_duplicates`` rewrites
the doc in place and, with ``--check``, only reports (exit 1) when it is
stale. ``tests/test_doctables_duplicates.py`` fails while the doc differs
from what the spec gives now.

Where the doc claims that the spec does something (the lifecycle table says
a duplicate dooms an open transaction, the timeline says an ID is
detected), the claim is computed here by applying commands to the spec, and
the generator raises :class:`TableShapeError` when the spec and the table
it draws from disagree.

>>> render_all()["duplicates-lifecycle-table"].splitlines()[2]
'| none | begin | active | transaction opened | `Done`<br>`DUP-TX-BEGIN` |'
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from brokerspec.doctables import Column, Configuration, TableShapeError, read_generated, replace_generated, table
from brokerspec.spec import PROFILES, FrozenMap, Profile, get_profile
from brokerspec.spec.duplicates import (
    RULES,
    TRANSACTION_LIFECYCLE,
    Begin,
    CacheKind,
    CacheName,
    Commit,
    CommitFailed,
    Committed,
    Crash,
    CreateQueue,
    Done,
    DuplicateId,
    DuplicatesCommand,
    DuplicatesState,
    IdKind,
    IdRing,
    Prepare,
    PrepareFailed,
    QueryId,
    QueueDeleted,
    Receive,
    Received,
    Restart,
    Restarted,
    Rollback,
    RoutingStatus,
    Send,
    SendFailed,
    Sent,
    TransactionPrepared,
    TxEvent,
    TxState,
    apply,
    describe_key,
    initial_state,
    is_in_ring,
)
from brokerspec.spec.duplicates.rules import ALL
from brokerspec.spec.outcome import Outcome

# --- the rule index ------------------------------------------------------------------


def cell_text(text: str) -> str:
    r"""Plain text made safe for a Markdown table cell: pipes escaped, angle brackets as entities.

    >>> print(cell_text("BRIDGE.<address> | x"))
    BRIDGE.&lt;address&gt; \| x
    """
    return text.replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")


def rule_index_table() -> str:
    """Every rule of ``brokerspec.spec.duplicates.RULES``, in its order."""
    rows = []
    for rule in RULES.values():
        profiles = "all" if rule.profiles == ALL else ", ".join(rule.profiles)
        rows.append([f"`{rule.id}`", cell_text(rule.summary), profiles, cell_text(rule.source)])
    return table(["ID", "Summary", "Profiles", "Source"], rows)


# --- the transaction lifecycle --------------------------------------------------------

ADDRESS = "orders"
QUEUE = "q"
SESSION = "s1"


def text_id(value: str) -> DuplicateId:
    """A string duplicate ID, the kind a JMS client sets."""
    return DuplicateId(IdKind.STRING, value)


#: The broker every lifecycle row starts from: one queue with one message waiting, whose ID is in the cache.
LIFECYCLE_BROKER: tuple[DuplicatesCommand, ...] = (
    CreateQueue(ADDRESS, QUEUE),
    Send("s0", ADDRESS, text_id("seen")),
)

#: The commands that put the session into each lifecycle state.
INTO_STATE: dict[TxState, tuple[DuplicatesCommand, ...]] = {
    TxState.NONE: (),
    TxState.ACTIVE: (Begin(SESSION),),
    TxState.ROLLBACK_ONLY: (Begin(SESSION), Send(SESSION, ADDRESS, text_id("seen"))),
    TxState.PREPARED: (Begin(SESSION), Receive(SESSION, QUEUE), Prepare(SESSION)),
}

#: One command standing for each event.
EVENT_COMMAND: dict[TxEvent, DuplicatesCommand] = {
    TxEvent.BEGIN: Begin(SESSION),
    TxEvent.SEND: Send(SESSION, ADDRESS, text_id("new")),
    TxEvent.DUPLICATE: Send(SESSION, ADDRESS, text_id("seen")),
    TxEvent.FAILED_SEND: Send(SESSION, ADDRESS, text_id("new"), address_full=True),
    TxEvent.RECEIVE: Receive(SESSION, QUEUE),
    TxEvent.PREPARE: Prepare(SESSION),
    TxEvent.COMMIT: Commit(SESSION),
    TxEvent.ROLLBACK: Rollback(SESSION),
    TxEvent.RESTART: Restart(),
}


def run_commands(state: DuplicatesState, commands: Sequence[DuplicatesCommand]) -> DuplicatesState:
    """``state`` after ``commands``, outcomes ignored."""
    for command in commands:
        state = apply(state, command)[0]
    return state


def get_session_state(state: DuplicatesState, session: str) -> TxState:
    """The lifecycle state of ``session``'s transaction (NONE when it has none open)."""
    tx = state.transactions.get(session)
    return TxState.NONE if tx is None else tx.status


@dataclass(frozen=True)
class Move:
    """What the spec does for one (state, event): the outcome's type, its rule, the state after."""

    outcome: str
    rule: str
    after: TxState
    changed: bool
    """Whether the broker's state changed at all (a refused move must change nothing)."""


def compute_move(profile: str, tx_state: TxState, event: TxEvent) -> Move:
    """Run ``event`` on a session in ``tx_state`` under ``profile`` and report what the spec did.

    Raises :class:`TableShapeError` when the lifecycle has a state or an
    event this module cannot produce, or the set-up misses its state.
    """
    if tx_state not in INTO_STATE or event not in EVENT_COMMAND:
        raise TableShapeError(f"no set-up for {tx_state} or no command for {event}: extend INTO_STATE/EVENT_COMMAND")
    start = run_commands(initial_state(get_profile(profile)), LIFECYCLE_BROKER + INTO_STATE[tx_state])
    if get_session_state(start, SESSION) is not tx_state:
        raise TableShapeError(f"the set-up for {tx_state} leaves the session in {get_session_state(start, SESSION)}")
    after, result = apply(start, EVENT_COMMAND[event])
    return Move(type(result).__name__, result.rule, get_session_state(after, SESSION), after != start)


def compute_moves(tx_state: TxState, event: TxEvent) -> Move:
    """The move every profile makes (``changed`` if it changes anything under any profile).

    Raises :class:`TableShapeError` when the profiles disagree on the outcome, the rule or the next state.
    """
    moves = {profile: compute_move(profile, tx_state, event) for profile in PROFILES}
    if len({(m.outcome, m.rule, m.after) for m in moves.values()}) != 1:
        detail = "; ".join(f"{profile}: {move}" for profile, move in moves.items())
        raise TableShapeError(f"the profiles disagree on {event.value} in {tx_state.value}: {detail}")
    first = next(iter(moves.values()))
    return Move(first.outcome, first.rule, first.after, any(m.changed for m in moves.values()))


def lifecycle_table() -> str:
    """The transaction lifecycle: every (state, event) of the table, then every refused move.

    Each row also shows the outcome and rule the spec gives when a session in
    that state meets that event. A row whose table entry disagrees with the
    spec (another next state, or a refused move that changes something)
    raises :class:`TableShapeError`.
    """
    rows: list[list[str]] = []
    refused: list[list[str]] = []
    for tx_state in TxState:
        for event in TxEvent:
            move = compute_moves(tx_state, event)
            answer = f"`{move.outcome}`<br>`{move.rule}`"
            entry = TRANSACTION_LIFECYCLE.get((tx_state, event))
            if entry is None:
                if move.changed:
                    raise TableShapeError(f"{event.value} in {tx_state.value} is refused by the table, "
                                          f"but the spec changes the state ({move.outcome})")
                refused.append([tx_state.value, event.value, "**refused**", "nothing changes", answer])
                continue
            next_state, words = entry
            if move.after is not next_state:
                raise TableShapeError(f"{event.value} in {tx_state.value}: the table says {next_state.value}, "
                                      f"the spec moves to {move.after.value}")
            rows.append([tx_state.value, event.value, next_state.value, words, answer])
    return table(["state", "event", "next state", "what happens", "the spec's outcome"], rows + refused)


def state_id(tx_state: TxState) -> str:
    """A Mermaid identifier for a lifecycle state."""
    return tx_state.name.lower()


def lifecycle_diagram() -> str:
    """``TRANSACTION_LIFECYCLE`` as a Mermaid state diagram; moves between the same two states share an arrow."""
    edges: dict[tuple[TxState, TxState], list[str]] = {}
    for (tx_state, event), (next_state, _) in TRANSACTION_LIFECYCLE.items():
        edges.setdefault((tx_state, next_state), []).append(event.value)
    lines = ["```mermaid", "stateDiagram-v2"]
    lines.extend(f'    state "{tx_state.value}" as {state_id(tx_state)}' for tx_state in TxState)
    lines.append(f"    [*] --> {state_id(TxState.NONE)}")
    for (source, target), events in edges.items():
        lines.append(f"    {state_id(source)} --> {state_id(target)} : {', '.join(events)}")
    lines.append("```")
    return "\n".join(lines)


# --- the visibility timeline -----------------------------------------------------------

#: Every timeline runs with caches this small, so that a ring fills and a restart can shrink it.
TIMELINE_CACHE_SIZE = 3
BRIDGE_ID = "b1"

#: The scripted scenario of the timeline, in broker verbs.
TIMELINE: tuple[DuplicatesCommand, ...] = (
    CreateQueue(ADDRESS, QUEUE),
    Send("s2", ADDRESS, text_id("w")),
    Begin("s1"),
    Send("s1", ADDRESS, text_id("x")),
    Send("s2", ADDRESS, text_id("x")),
    Commit("s1"),
    Send("s2", ADDRESS, text_id("x")),
    Send("s2", ADDRESS, text_id("z"), address_full=True),
    Begin("s1"),
    Send("s1", ADDRESS, bridge_id=BRIDGE_ID),
    Send("s2", ADDRESS, bridge_id=BRIDGE_ID),
    Commit("s1"),
    Restart(id_cache_size=2),
    Send("s2", ADDRESS, text_id("w")),
)

#: The scripted scenario of the XA timeline: a prepared transaction across a crash, and its second phase.
XA_TIMELINE: tuple[DuplicatesCommand, ...] = (
    CreateQueue(ADDRESS, QUEUE),
    Send("s2", ADDRESS, text_id("w")),
    Begin("s1"),
    Receive("s1", QUEUE),
    Send("s1", ADDRESS, text_id("x")),
    Send("s1", ADDRESS, bridge_id=BRIDGE_ID),
    Prepare("s1"),
    Send("s2", ADDRESS, text_id("x")),
    Send("s2", ADDRESS, bridge_id=BRIDGE_ID),
    Crash(),
    Receive("s2", QUEUE),
    Commit("s1"),
    Send("s2", ADDRESS, bridge_id=BRIDGE_ID),
    Receive("s2", QUEUE),
)

#: The option values that no bundled profile uses: Artemis before 2.8.0 and before 1.3.0.
OLDER_OPTIONS: tuple[tuple[str, str], ...] = (
    ("duplicates.nontx_add", "AFTER_STORE"),
    ("duplicates.reload_keeps", "OLDEST"),
)

#: The columns of the timeline: every bundled profile, and the older option values on top of 2.11.
#: Configurations that share a column must give the same timeline (checked when it is drawn).
TIMELINE_COLUMNS: tuple[Column, ...] = (
    Column("`seed`, `artemis-2.11`", (("seed", ()), ("artemis-2.11", ()))),
    Column("`artemis-latest`", (("artemis-latest", ()),)),
    Column("`artemis-2.11` + older options", (("artemis-2.11", OLDER_OPTIONS),)),
)


def get_timeline_profile(configuration: Configuration) -> Profile:
    """The profile a timeline runs under: the configuration's, with the small cache size."""
    profile, overrides = configuration
    return get_profile(profile, (*overrides, ("duplicates.id_cache_size", str(TIMELINE_CACHE_SIZE))))


#: The verbs of the commands that only name a session.
SESSION_VERBS: dict[type, str] = {Begin: "begins", Commit: "commits", Rollback: "rolls back", Prepare: "prepares"}


def command_text(command: DuplicatesCommand) -> str:
    """A command in broker verbs (any command the timeline does not use, as its name and fields).

    >>> command_text(Send("s2", "orders", DuplicateId(IdKind.STRING, "z"), address_full=True))
    "`s2` sends `'z'` to `orders`, the address is full"
    >>> command_text(Receive("s1", "q"))
    '`s1` receives from `q`'
    >>> command_text(QueryId("orders", bridge_id="b1"))
    "query_id(address='orders', duplicate_id=None, bridge_id='b1')"
    """
    if isinstance(command, Send):
        what = f"sends `{command.duplicate_id.value!r}`" if command.duplicate_id else "sends"
        if command.bridge_id is not None:
            what = f"sends bridge ID `{describe_key(bytes.fromhex(command.bridge_id))}`"
        extra = ", the address is full" if command.address_full else ""
        extra += ", duplicates routed" if not command.reject_duplicates else ""
        return f"`{command.session}` {what} to `{command.address}`{extra}"
    if isinstance(command, (Begin, Commit, Rollback, Prepare)):
        return f"`{command.session}` {SESSION_VERBS[type(command)]}"
    if isinstance(command, Receive):
        return f"`{command.session}` receives from `{command.queue}`"
    if isinstance(command, Crash):
        return "crash (SIGKILL) and start"
    if isinstance(command, CreateQueue):
        return f"create queue `{command.queue}` on `{command.address}`"
    if isinstance(command, Restart):
        size = "" if command.id_cache_size is None else f", id-cache-size now {command.id_cache_size}"
        return f"restart{size}"
    fields = ", ".join(f"{name}={value!r}" for name, value in vars(command).items())
    return f"{command.op}({fields})"


def plural(count: int, word: str) -> str:
    """``count`` and ``word``, with an ``s`` unless the count is one."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def outcome_text(result: Outcome, in_transaction: bool) -> str:
    """An outcome in words; ``in_transaction`` says whether the session had a transaction open."""
    if isinstance(result, Sent):
        doomed = "; transaction rollback-only" if result.rollback_only else ""
        if result.status is RoutingStatus.DUPLICATED_ID:
            told = "" if in_transaction else ", client told it succeeded"
            return f"duplicate: not routed{told}{doomed}"
        where = ", ".join(f"`{queue}`" for queue in result.queues) or "no queue"
        verb = "held for the commit" if in_transaction else "routed"
        return f"message {result.message} {verb}, to {where}{doomed}"
    if isinstance(result, SendFailed):
        doomed = "; transaction rollback-only" if result.rollback_only else ""
        return f"send fails ({result.reason.value}){doomed}"
    if isinstance(result, Committed):
        return "committed: " + (", ".join(f"message {m}" for m in result.messages) or "nothing") + " delivered"
    if isinstance(result, CommitFailed):
        return f"commit fails ({result.reason.value}), all rolled back"
    if isinstance(result, PrepareFailed):
        return f"prepare fails ({result.reason.value}), all rolled back"
    if isinstance(result, TransactionPrepared):
        return "refused: the session's transaction is prepared"
    if isinstance(result, Restarted):
        return (f"restarted: {plural(result.lost_transactions, 'open transaction')} lost, "
                f"{plural(result.dropped_ids, 'ID')} dropped")
    if isinstance(result, Received):
        return "nothing waiting" if result.message is None else f"receives message {result.message}"
    if isinstance(result, QueueDeleted):
        return "queue deleted" + ("; the address's IDs forgotten" if result.forgot_ids else "")
    if isinstance(result, Done):
        return "done"
    return f"`{result}`"


def detected_text(ring: IdRing | None) -> str:
    """The IDs a cache detects (``is_in_ring``), in slot order; uncommitted instant adds are marked.

    >>> detected_text(IdRing(3, (None, b"x\\x00"), 2, FrozenMap({b"x\\x00": 1})))
    "'x'"
    """
    if ring is None:
        return "no cache"
    seen: list[str] = []
    for slot, key in enumerate(ring.slots):
        if key is None or not is_in_ring(ring, key) or ring.index[key] != slot:
            continue
        seen.append(describe_key(key) + (" (uncommitted)" if slot in ring.pending else ""))
    return ", ".join(seen) or "nothing"


def slots_text(ring: IdRing | None) -> str:
    """A cache's slots in slot order, holes shown, and the slot the next ID will be written to.

    >>> slots_text(IdRing(3, (None, b"x\\x00"), 2))
    "hole, 'x'; next: slot 2"
    """
    if ring is None:
        return "no cache"
    if not ring.slots:
        return f"empty; next: slot {ring.position}"
    held = ", ".join("hole" if key is None else describe_key(key) for key in ring.slots)
    return f"{held}; next: slot {ring.position}"


@dataclass(frozen=True)
class TimelineRow:
    """One step of a timeline: the command, its outcome and rule, and what the caches hold after it."""

    step: int
    command: str
    outcome: str
    rule: str
    detects: str
    bridge_detects: str
    slots: str


def run_timeline(configuration: Configuration, script: tuple[DuplicatesCommand, ...] = TIMELINE) -> list[TimelineRow]:
    """Run ``script`` through the spec under ``configuration`` (with the small cache size)."""
    state = initial_state(get_timeline_profile(configuration))
    normal, bridge = CacheName(CacheKind.NORMAL, ADDRESS), CacheName(CacheKind.BRIDGE, ADDRESS)
    rows = []
    for step, command in enumerate(script, 1):
        session = getattr(command, "session", None)
        in_transaction = session is not None and session in state.transactions
        state, result = apply(state, command)
        rows.append(TimelineRow(
            step, command_text(command), outcome_text(result, in_transaction), result.rule,
            detected_text(state.caches.get(normal)), detected_text(state.caches.get(bridge)),
            slots_text(state.caches.get(normal))))
    return rows


def run_column(column: Column, script: tuple[DuplicatesCommand, ...] = TIMELINE) -> list[TimelineRow]:
    """The one timeline ``column`` shows; raises :class:`TableShapeError` when its configurations disagree."""
    runs = {configuration: run_timeline(configuration, script) for configuration in column.configurations}
    first = next(iter(runs.values()))
    for (profile, overrides), rows in runs.items():
        for mine, theirs in zip(rows, first):
            if mine != theirs:
                raise TableShapeError(
                    f"column {column.header!r} merges configurations that disagree at step {mine.step}: "
                    f"{profile}{list(overrides) or ''} gives {mine}, {column.configurations[0][0]} gives {theirs}")
    return first


def timeline_table(column: Column, script: tuple[DuplicatesCommand, ...] = TIMELINE) -> str:
    """The timeline of ``script`` under ``column``'s configurations, one row per step."""
    rows = [
        [str(r.step), r.command, f"{r.outcome}<br>`{r.rule}`", r.detects, r.bridge_detects, r.slots]
        for r in run_column(column, script)
    ]
    return table(["step", "operation", "outcome", f"`{ADDRESS}` detects", f"`BRIDGE.{ADDRESS}` detects",
                  f"`{ADDRESS}` slots"], rows)


def timeline_differences_table(script: tuple[DuplicatesCommand, ...] = TIMELINE) -> str:
    """The steps of ``script`` on which the columns part: each one's outcome and detected IDs.

    A step is listed when the columns' outcomes differ, or when the caches
    differ after it and the step changed them in at least one column (a
    step that changes nothing anywhere only carries an earlier difference).
    """
    runs = [run_column(column, script) for column in TIMELINE_COLUMNS]

    def caches(run: list[TimelineRow], index: int) -> tuple[str, str, str]:
        if index < 0:
            return ("no cache", "no cache", "no cache")
        return (run[index].detects, run[index].bridge_detects, run[index].slots)

    rows = []
    for index, command in enumerate(script):
        outcomes = {run[index].outcome for run in runs}
        after = {caches(run, index) for run in runs}
        changed = any(caches(run, index) != caches(run, index - 1) for run in runs)
        if len(outcomes) > 1 or (len(after) > 1 and changed):
            cells = [f"{run[index].outcome}<br>detects {run[index].detects}; bridge: {run[index].bridge_detects}"
                     for run in runs]
            rows.append([str(index + 1), command_text(command), *cells])
    return table(["step", "operation", *(column.header for column in TIMELINE_COLUMNS)], rows)


def timeline_block_name(column: Column) -> str:
    """The name of a column's timeline block in the doc: its first configuration, in marker characters."""
    profile, overrides = column.configurations[0]
    return "duplicates-timeline-" + ("older-options" if overrides else profile.replace(".", "-"))


# --- the doc's generated blocks ----------------------------------------------------------


def _timeline_builder(column: Column) -> Callable[[], str]:
    return lambda: timeline_table(column)


TABLES: dict[str, Callable[[], str]] = {
    "duplicates-rule-index": rule_index_table,
    "duplicates-lifecycle-table": lifecycle_table,
    "duplicates-lifecycle-diagram": lifecycle_diagram,
    **{timeline_block_name(column): _timeline_builder(column) for column in TIMELINE_COLUMNS},
    "duplicates-timeline-differences": timeline_differences_table,
    "duplicates-xa-timeline-artemis-latest": lambda: timeline_table(TIMELINE_COLUMNS[1], XA_TIMELINE),
    "duplicates-xa-timeline-differences": lambda: timeline_differences_table(XA_TIMELINE),
}


def render_all() -> dict[str, str]:
    """Every generated block of the duplicate-detection doc, by name, as Markdown (no trailing newline)."""
    return {name: build() for name, build in TABLES.items()}


def regenerate(text: str) -> str:
    """``text`` with every generated block replaced by what the spec gives now.

    Raises ValueError for broken markers and KeyError for a block with no generator.
    """
    return replace_generated(text, render_all())


DEFAULT_DOC = Path("docs") / "duplicate-detection.md"


def main(argv: Sequence[str] | None = None) -> int:
    """Rewrite the generated blocks of the doc in place (``--check``: only report staleness).

    Usage: ``python -m brokerspec.doctables_duplicates [--check] [DOC]``;
    DOC defaults to ``docs/duplicate-detection.md`` under the current
    directory. Exit code 0 on success (or, with ``--check``, when the doc is
    current), 1 when ``--check`` finds stale blocks or the doc lacks markers
    for a block.
    """
    parser = argparse.ArgumentParser(prog="python -m brokerspec.doctables_duplicates",
                                     description="Rewrite the spec-generated blocks of the duplicate-detection doc.")
    parser.add_argument("--check", action="store_true", help="only report whether the blocks are current")
    parser.add_argument("doc", nargs="?", type=Path, default=DEFAULT_DOC, help="default: %(default)s")
    args = parser.parse_args(argv)
    check_only: bool = args.check
    path: Path = args.doc
    text = path.read_text(encoding="utf-8")
    missing = sorted(set(TABLES) - set(read_generated(text)))
    if missing:
        print(f"{path}: no markers for {', '.join(missing)}", file=sys.stderr)
        return 1
    new_text = regenerate(text)
    if check_only:
        if new_text != text:
            print(f"{path}: generated blocks are stale; run `python -m brokerspec.doctables_duplicates`",
                  file=sys.stderr)
            return 1
        return 0
    if new_text != text:
        path.write_text(new_text, encoding="utf-8")
        print(f"{path}: blocks rewritten")
    else:
        print(f"{path}: blocks already current")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
