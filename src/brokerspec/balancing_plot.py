"""A thousand messages through a three-node cluster, once per load-balancing type: where each one ends.

Introduction
------------
``docs/load-balancing.md`` shows one picture of the four load-balancing
types side by side. This module makes it by running the spec, so the
picture and the table under it are artefacts of the current rules, not
drawings:

- :func:`compute_workload` is the scripted run as spec commands: three
  nodes, one ANYCAST queue ``orders`` (named like its address) on each,
  producers on every node sending :data:`MESSAGES` messages in the fixed
  pattern :data:`PRODUCERS` (half from ``n1``, three in ten from ``n2``,
  one in five from ``n3``), consumers attaching and closing at the points
  :data:`MOVES` gives (so a consumer moves from node to node), and a tick
  of the logical clock every :data:`TICK_EVERY` messages;
- :func:`compute_endings` runs it through ``brokerspec.spec.balancing.apply``
  under the profile ``artemis-latest`` for one type and says, per node, how
  many of the original messages were consumed there without moving,
  consumed there after redistribution, or are still waiting there at the
  end;
- :func:`compute_all_endings` does that for every type, :func:`format_table`
  prints the result, :func:`draw_chart` draws it as grouped, stacked bars;
- ``python -m brokerspec.balancing_plot OUT.png`` writes the chart and
  prints the table.

Theory of operation: each original message is followed through its copies.
A send's ``Sent`` outcome gives the original's ID; a ``Redistributed`` event
maps the copy's new ID back to the original; a ``Delivered`` event with a
consumer is where the original ends, counted as ``consumed`` when the ID is
the original's own and as ``redistributed`` when it is a copy's; whatever
waits in a queue after the last step is ``waiting`` there. Each original is
counted exactly once, however often it moved, and the counts of a type add
up to the number of messages sent (checked; a mismatch would be a fault in
the spec and raises).

The plain data is a dict per type name, per node, per ending::

    {"OFF": {"n1": {"consumed": 425, "redistributed": 0, "waiting": 75}, ...}, ...}

>>> endings = compute_endings(LbType.ON_DEMAND, messages=30)
>>> endings["n1"]
{'consumed': 16, 'redistributed': 0, 'waiting': 0}
>>> sum(n for node in endings.values() for n in node.values())
30
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from brokerspec.spec import BrokerspecError, get_profile
from brokerspec.spec.addressing.names import RoutingType
from brokerspec.spec.balancing import (
    AddNode,
    Attach,
    BalancingCommand,
    BalancingState,
    Close,
    Configure,
    CreateQueue,
    Delivered,
    LbType,
    QueueQueried,
    Redistributed,
    Refused,
    Send,
    Sent,
    Tick,
    apply,
    initial_state,
)

PROFILE = "artemis-latest"
ADDRESS = "orders"
NODES: tuple[str, ...] = ("n1", "n2", "n3")
MESSAGES = 1000
TICK_EVERY = 50
"""One tick of the logical clock before every 50th message (not before the first)."""

PRODUCERS: tuple[str, ...] = ("n1", "n2", "n1", "n3", "n1", "n2", "n1", "n3", "n2", "n1")
"""The node that sends message ``i`` is ``PRODUCERS[i % 10]``: half from n1, 3 in 10 from n2, 1 in 5 from n3."""

MOVES: tuple[tuple[int, tuple[BalancingCommand, ...]], ...] = (
    (0, (Attach("alice", "n1", ADDRESS), Attach("bob", "n2", ADDRESS))),
    (200, (Close("alice"),)),
    (300, (Attach("alice", "n3", ADDRESS),)),
    (450, (Close("bob"), Close("alice"))),
    (550, (Attach("bob", "n1", ADDRESS),)),
    (700, (Attach("carol", "n2", ADDRESS),)),
    (850, (Close("bob"), Close("carol"), Attach("alice", "n3", ADDRESS))),
)
"""Consumers attaching and closing before the message of the given index is sent.

alice and bob start on n1 and n2; alice moves to n3; from 450 to 549 no
node has a consumer; bob comes back on n1 and carol joins on n2; from 850
on only alice, on n3 again, consumes.
"""

TYPES: tuple[LbType, ...] = (LbType.OFF, LbType.STRICT, LbType.ON_DEMAND, LbType.OFF_WITH_REDISTRIBUTION)
ENDINGS: tuple[str, ...] = ("consumed", "redistributed", "waiting")
"""Where an original message ends: consumed on the node its first routing chose (at once, or later by a
consumer attaching there), consumed on another node after redistribution, or still waiting."""

NodeEndings = dict[str, dict[str, int]]
"""Per node, per ending, how many original messages end there that way."""


def compute_setup(lb_type: LbType, delay: int) -> tuple[BalancingCommand, ...]:
    """The commands that build the cluster: two more nodes, the address's settings, a queue per node."""
    return (
        *(AddNode(node) for node in NODES[1:]),
        Configure(ADDRESS, lb_type, delay),
        *(CreateQueue(node, ADDRESS, ADDRESS, RoutingType.ANYCAST) for node in NODES),
    )


def compute_workload(messages: int = MESSAGES) -> tuple[BalancingCommand, ...]:
    """The scripted run after the setup: moves, ticks and sends, in order.

    >>> [command.op for command in compute_workload(2)]
    ['attach', 'attach', 'send', 'send']
    """
    moves = dict(MOVES)
    commands: list[BalancingCommand] = []
    for index in range(messages):
        if index and index % TICK_EVERY == 0:
            commands.append(Tick())
        commands.extend(moves.get(index, ()))
        commands.append(Send(PRODUCERS[index % len(PRODUCERS)], ADDRESS))
    return tuple(commands)


def run_script(state: BalancingState, commands: Sequence[BalancingCommand]) -> tuple[BalancingState, NodeEndings]:
    """Apply ``commands`` and follow every original message they send to where it ends.

    Raises :class:`BrokerspecError` when a command is refused (the script
    no longer fits the spec) or when the count does not add up.
    """
    original: dict[int, int] = {}
    ends: dict[int, tuple[str, str]] = {}
    for step, command in enumerate(commands, start=1):
        state, outcome = apply(state, command)
        if isinstance(outcome, Refused):
            raise BrokerspecError(f"step {step}, {command!r}, was refused: {outcome.reason.value}")
        if isinstance(outcome, QueueQueried):
            continue
        if isinstance(outcome, Sent):
            original[outcome.message] = outcome.message
        for event in outcome.events:
            if isinstance(event, Redistributed):
                original[event.copy] = original[event.message]
            elif isinstance(event, Delivered) and event.consumer is not None:
                first = original[event.message]
                ends[first] = (event.node, "consumed" if first == event.message else "redistributed")
    for queue in state.queues.values():
        for message in queue.pending:
            ends[original[message.id]] = (queue.node, "waiting")
    sent = set(original.values())
    if set(ends) != sent:
        raise BrokerspecError(f"{len(sent)} messages were sent but {len(ends)} were accounted for")
    endings = {node: {ending: 0 for ending in ENDINGS} for node in state.nodes}
    for node, ending in ends.values():
        endings[node][ending] += 1
    return state, endings


def compute_endings(lb_type: LbType, delay: int = 0, messages: int = MESSAGES) -> NodeEndings:
    """Run the workload under ``lb_type`` with a redistribution delay of ``delay`` ticks; count the endings."""
    state = initial_state(get_profile(PROFILE))
    state, _ = run_script(state, compute_setup(lb_type, delay))
    _, endings = run_script(state, compute_workload(messages))
    return endings


def compute_all_endings(delay: int = 0, messages: int = MESSAGES) -> dict[str, NodeEndings]:
    """:func:`compute_endings` for every type, keyed by the type's name, in the order of :data:`TYPES`."""
    return {lb_type.value: compute_endings(lb_type, delay, messages) for lb_type in TYPES}


def format_table(all_endings: dict[str, NodeEndings]) -> str:
    """The counts as a plain-text table: one row per type and node, one column per ending.

    >>> print(format_table({"OFF": {"n1": {"consumed": 2, "redistributed": 0, "waiting": 1}}}))
    type  node  consumed  redistributed  waiting
    OFF   n1           2              0        1
    """
    width = max(len("type"), *(len(name) for name in all_endings))
    header = f"{'type':<{width}}  node  " + "  ".join(ENDINGS)
    lines = [header]
    for name, endings in all_endings.items():
        for node, counts in endings.items():
            cells = "  ".join(f"{counts[ending]:>{len(ending)}}" for ending in ENDINGS)
            lines.append(f"{name:<{width}}  {node:<4}  {cells}")
    return "\n".join(lines)


COLOURS = {"consumed": "#4a7c59", "redistributed": "#3b6ea5", "waiting": "#c8763a"}
LEGEND = {"consumed": "consumed on the node it was routed to", "redistributed": "consumed after redistribution",
          "waiting": "still waiting at the end"}


def draw_chart(all_endings: dict[str, NodeEndings], path: Path, title: str = "") -> None:
    """Draw one group of bars per type, one stacked bar per node, to the PNG ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bar, gap = 0.8, 1.0
    figure, axes = plt.subplots(figsize=(10, 4.8))
    positions: list[float] = []
    labels: list[str] = []
    centres: list[tuple[float, str]] = []
    x = 0.0
    for name, endings in all_endings.items():
        start = x
        for node, counts in endings.items():
            bottom = 0
            for ending in ENDINGS:
                axes.bar(x, counts[ending], bar, bottom=bottom, color=COLOURS[ending],
                         label=LEGEND[ending] if not positions else None)
                bottom += counts[ending]
            positions.append(x)
            labels.append(node)
            x += 1.0
        centres.append(((start + x - 1.0) / 2, name))
        x += gap
    axes.set_xticks(positions, labels, fontsize=8)
    for centre, name in centres:
        axes.text(centre, -0.1, name, transform=axes.get_xaxis_transform(), ha="center", va="top", fontsize=9)
    axes.set_ylabel("messages sent (each counted once)")
    axes.set_title(title or f"Where {MESSAGES:,} messages end, per node, under each load-balancing type")
    tallest = max((sum(counts.values()) for endings in all_endings.values() for counts in endings.values()),
                  default=0)
    axes.set_ylim(0, max(1, tallest) * 1.18)
    axes.legend(loc="upper center", ncol=len(ENDINGS), fontsize=8, frameon=False)
    axes.spines[["top", "right"]].set_visible(False)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m brokerspec.balancing_plot OUT.png [--delay TICKS]``: write the chart, print the table."""
    parser = argparse.ArgumentParser(prog="python -m brokerspec.balancing_plot",
                                     description="Run the three-node workload under every load-balancing type, "
                                                 "draw where the messages end and print the counts.")
    parser.add_argument("out", type=Path, help="the PNG file to write")
    parser.add_argument("--delay", type=int, default=0, help="redistribution delay in ticks (default 0; -1 never)")
    args = parser.parse_args(argv)
    if args.delay < -1:
        parser.error(f"--delay takes -1 (never) or a number of ticks from 0, not {args.delay}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    all_endings = compute_all_endings(args.delay)
    draw_chart(all_endings, args.out,
               f"Where {MESSAGES:,} messages end under each load-balancing type "
               f"({PROFILE}, redistribution delay {args.delay})")
    print(format_table(all_endings))
    return 0


if __name__ == "__main__":  # pragma: no cover - exercised through the command line
    sys.exit(main())
