"""Where one store consumer's demand goes, under network connectors and the tree connector, drawn from the spec.

Introduction
------------
``docs/topologies.md`` shows two pictures of seed 002's retail hierarchy
(AMQ-2875): headquarters ``hq``, regions ``r1`` ... and stores ``r1-s1`` ...
built by ``brokerspec.spec.topologies.retail_commands``. In every scenario a
producer sits at HQ and one consumer at the store ``r1-s1``, both for
:data:`QUEUE`. Nothing here is drawn by hand: each picture and each table
is the settled spec state of the scenario.

- :func:`compute_state` runs the scenario through the spec's ``run`` for a
  design (``network`` with a TTL, or ``tree``);
- :func:`get_broker_roles` classifies every broker: the consumer's broker,
  one holding a demand subscription that is used, one holding only
  spilled subscriptions, or one holding nothing (the spec's
  ``get_spilled`` decides used against spilled);
- :func:`get_advisory_arrows` lists the links an advisory crossed and was
  acted on: each demand subscription on broker Z that forwards to W was
  made from W's advisory, so the arrow runs W -> Z;
- :func:`propagation_table` writes those facts as text,
  :func:`draw_propagation` draws them, one panel per design (network TTL
  1, 2, 3 and the tree connector);
- :func:`sweep` counts advisories, subscriptions and spilled subscriptions
  for a growing number of stores per region, :func:`format_sweep` prints
  the rows, :func:`draw_spillage` plots them;
- ``python -m brokerspec.topology_plot OUTDIR`` writes
  ``topologies-propagation.png`` and ``topologies-spillage.png`` into
  OUTDIR and prints the tables they were drawn from.

The sweep runs the spec itself at every size: up to 200 stores per region
(604 brokers) the four designs take about five seconds together, so the
fast implementation is not needed.

>>> print(propagation_table("tree", regions=2, stores=2))
tree connector: 2 advisories, 2 subscriptions, 0 spilled
broker  role      forwards to  brokerPath
hq      used      r1           r1-s1 r1
r1      used      r1-s1        r1-s1
r1-s1   consumer
no demand: r1-s2, r2, r2-s1, r2-s2
a message sent at hq: delivered at r1-s1 after hq r1
>>> [(row.label, row.subscriptions, row.spilled) for row in sweep((4,), regions=2)]
[('network TTL 1', 1, 0), ('network TTL 2', 5, 3), ('network TTL 3', 6, 4), ('tree connector', 2, 0)]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from brokerspec.spec import BrokerspecError, InvalidCommand
from brokerspec.spec.topologies import (
    HQ,
    AddProducer,
    Delivered,
    Refused,
    Send,
    Sent,
    Subscribe,
    TopologyCommand,
    TopologyState,
    Waiting,
    apply,
    compute_metrics,
    get_spilled,
    retail_commands,
    run,
    store_name,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

QUEUE = "queue://STORE.INCOMING"
"""The destination of every scenario (seed 002 writes of a store's ``Incoming`` queue)."""

CONSUMER = "store-consumer"
PRODUCER = "hq-producer"
CONSUMER_BROKER = store_name(1, 1)
"""The consumer sits at the first store of the first region."""

REGIONS = 3
DIAGRAM_STORES = 3
SIZES: tuple[int, ...] = (1, 2, 5, 10, 20, 50, 100, 200)
"""Stores per region in the sweep (with :data:`REGIONS` regions)."""

Design = tuple[str, int | None]
"""A design and its TTL: ``("network", ttl)`` or ``("tree", None)``."""

DESIGNS: tuple[Design, ...] = (("network", 1), ("network", 2), ("network", 3), ("tree", None))

ROLES: tuple[str, ...] = ("consumer", "used", "spilled", "none")
"""A broker's role in a picture, in order of precedence: it has the client consumer; else it holds at least
one demand subscription that is used; else it holds only spilled ones; else it holds no demand at all."""

PROPAGATION_FILE = "topologies-propagation.png"
SPILLAGE_FILE = "topologies-spillage.png"


def get_label(design: str, ttl: int | None = None) -> str:
    """The design's name in titles, legends and tables.

    >>> get_label("network", 2), get_label("tree")
    ('network TTL 2', 'tree connector')
    """
    check_design(design, ttl)
    return "tree connector" if design == "tree" else f"network TTL {ttl}"


def check_design(design: str, ttl: int | None) -> None:
    """Raise :class:`InvalidCommand` unless ``design`` is ``network`` with a TTL or ``tree`` without one."""
    if design == "network":
        if ttl is None or ttl == 0 or ttl < -1:
            raise InvalidCommand(f"network connectors need a ttl of -1 or at least 1, not {ttl!r}", "ttl")
    elif design == "tree":
        if ttl is not None:
            raise InvalidCommand(f"the tree connector has no ttl, but {ttl!r} was given", "ttl")
    else:
        raise InvalidCommand(f"design {design!r} must be 'network' or 'tree'", "design")


def compute_commands(design: str, ttl: int | None = None, regions: int = REGIONS,
                     stores: int = DIAGRAM_STORES) -> list[TopologyCommand]:
    """The scenario as spec commands: the retail hierarchy, a producer at HQ, a consumer at ``r1-s1``.

    >>> [c.op for c in compute_commands("tree", regions=1, stores=1)]
    ['add_broker', 'add_broker', 'add_broker', 'tree_connect', 'tree_connect', 'add_producer', 'subscribe']
    """
    check_design(design, ttl)
    if stores < 1:
        raise InvalidCommand(f"stores {stores} must be at least 1: the consumer sits at a store", "stores")
    commands = retail_commands(regions, stores, design, 1 if ttl is None else ttl)
    return commands + [AddProducer(PRODUCER, HQ, QUEUE), Subscribe(CONSUMER, CONSUMER_BROKER, QUEUE)]


def compute_state(design: str, ttl: int | None = None, regions: int = REGIONS,
                  stores: int = DIAGRAM_STORES) -> TopologyState:
    """The settled spec state of the scenario; raises :class:`BrokerspecError` if the spec refuses a step."""
    commands = compute_commands(design, ttl, regions, stores)
    state, outcomes = run(commands)
    for command, outcome in zip(commands, outcomes):
        if isinstance(outcome, Refused):
            raise BrokerspecError(f"the spec refused {command!r}: {outcome.reason.value}")
    return state


def get_broker_roles(state: TopologyState) -> dict[str, str]:
    """Every broker's role (see :data:`ROLES`), in the state's broker order."""
    spilled = set(get_spilled(state))
    roles = {}
    for broker in state.brokers:
        held = [reg for reg in state.demand if reg.broker == broker]
        if any(not reg.network for reg in held):
            roles[broker] = "consumer"
        elif any(reg not in spilled for reg in held):
            roles[broker] = "used"
        elif held:
            roles[broker] = "spilled"
        else:
            roles[broker] = "none"
    return roles


def get_advisory_arrows(state: TopologyState) -> tuple[tuple[str, str], ...]:
    """The links a consumer advisory crossed and was acted on, as (from, to), sorted.

    A demand subscription on Z that forwards to W exists because Z's bridge
    towards W accepted an advisory W sent; so each one gives the arrow W -> Z.
    """
    return tuple(sorted({(reg.via, reg.broker) for reg in state.demand if reg.via is not None}))


def describe_send(state: TopologyState, broker: str = HQ) -> str:
    """Where a message sent at ``broker`` ends, in words (the state itself is not changed)."""
    _, outcome = apply(state, Send(broker, QUEUE))
    if not isinstance(outcome, Sent):
        raise BrokerspecError(f"the spec refused a send at {broker}: {outcome!r}")
    ends = []
    for event in outcome.events:
        after = f" after {' '.join(event.path)}" if event.path else ""
        if isinstance(event, Delivered):
            ends.append(f"delivered at {event.broker}{after}")
        elif isinstance(event, Waiting):
            ends.append(f"waits at {event.broker}{after}")
        else:
            ends.append(f"dropped at {event.broker}{after}")
    return f"a message sent at {broker}: " + "; ".join(ends)


def compute_title(state: TopologyState, label: str) -> str:
    """``LABEL: N advisories, N subscriptions, N spilled`` for a settled state."""
    metrics = compute_metrics(state)
    return (f"{label}: {count(metrics.advisories_sent, 'advisory', 'advisories')}, "
            f"{count(metrics.subscriptions_total, 'subscription', 'subscriptions')}, {metrics.spilled} spilled")


def count(number: int, one: str, many: str) -> str:
    """``1 advisory``, ``2 advisories``.

    >>> count(1, "advisory", "advisories"), count(0, "subscription", "subscriptions")
    ('1 advisory', '0 subscriptions')
    """
    return f"{number} {one if number == 1 else many}"


def propagation_table(design: str, ttl: int | None = None, regions: int = REGIONS,
                      stores: int = DIAGRAM_STORES) -> str:
    """The facts of one diagram panel as text.

    A title line with the metrics; one line per broker that holds a
    registration (its role, and for each demand subscription the broker it
    forwards to and its brokerPath); the brokers that hold nothing; and
    where a message sent at HQ ends.

    >>> print(propagation_table("network", 1, regions=1, stores=2))
    network TTL 1: 1 advisory, 1 subscription, 0 spilled
    broker  role      forwards to  brokerPath
    r1      used      r1-s1        r1-s1
    r1-s1   consumer
    no demand: hq, r1-s2
    a message sent at hq: waits at hq
    """
    state = compute_state(design, ttl, regions, stores)
    roles = get_broker_roles(state)
    width = max(len("broker"), *(len(b) for b in state.brokers))
    lines = [compute_title(state, get_label(design, ttl)),
             f"{'broker':<{width}}  {'role':<8}  forwards to  brokerPath"]
    for broker, role in roles.items():
        if role == "none":
            continue
        subscriptions = [reg for reg in state.demand if reg.broker == broker and reg.network]
        if not subscriptions:
            lines.append(f"{broker:<{width}}  {role}")
        for reg in subscriptions:
            lines.append(f"{broker:<{width}}  {role:<8}  {reg.via or '':<11}  {' '.join(reg.path)}")
    idle = [broker for broker, role in roles.items() if role == "none"]
    lines.append("no demand: " + (", ".join(idle) if idle else "-"))
    lines.append(describe_send(state))
    return "\n".join(lines)


@dataclass(frozen=True)
class SweepRow:
    """The metrics of one design at one size: advisories acted on, demand subscriptions, spilled ones."""

    label: str
    design: str
    ttl: int | None
    regions: int
    stores: int
    brokers: int
    advisories: int
    subscriptions: int
    spilled: int


def sweep(sizes: Sequence[int] = SIZES, regions: int = REGIONS,
          designs: Sequence[Design] = DESIGNS) -> list[SweepRow]:
    """The scenario at every number of stores per region in ``sizes``, under each design, through the spec.

    Rows come per design (in the order of ``designs``), then per size.
    """
    if not sizes:
        raise InvalidCommand("sizes must name at least one number of stores", "sizes")
    rows = []
    for design, ttl in designs:
        for stores in sizes:
            state = compute_state(design, ttl, regions, stores)
            metrics = compute_metrics(state)
            rows.append(SweepRow(get_label(design, ttl), design, ttl, regions, stores, len(state.brokers),
                                 metrics.advisories_sent, metrics.subscriptions_total, metrics.spilled))
    return rows


def format_sweep(rows: Sequence[SweepRow]) -> str:
    """The sweep as a plain-text table, one line per row.

    >>> print(format_sweep(sweep((2,), regions=1, designs=(("network", 2),))))
    design         stores  brokers  advisories  subscriptions  spilled
    network TTL 2       2        4           3              3        1
    """
    width = max(len("design"), *(len(row.label) for row in rows))
    lines = [f"{'design':<{width}}  stores  brokers  advisories  subscriptions  spilled"]
    for row in rows:
        lines.append(f"{row.label:<{width}}  {row.stores:>6}  {row.brokers:>7}  {row.advisories:>10}  "
                     f"{row.subscriptions:>13}  {row.spilled:>7}")
    return "\n".join(lines)


# --- drawing ------------------------------------------------------------------------------------------

COLOURS = {"consumer": "#4a7c59", "used": "#3b6ea5", "spilled": "#d0583a", "none": "#eeeeee"}
LEGEND = {"consumer": "the consumer's broker", "used": "holds a demand subscription that is used",
          "spilled": "holds only spilled subscriptions", "none": "holds no demand"}
LINE_STYLES: dict[str, tuple[str, str, float]] = {
    "network TTL 1": ("#7f7f7f", "o", 9.0), "network TTL 2": ("#d0583a", "s", 4.0),
    "network TTL 3": ("#8a3b8f", "^", 4.0), "tree connector": ("#3b6ea5", "D", 4.0)}
"""Colour, marker and marker size per design; TTL 1 has large hollow markers so that where it equals the tree
(no spillage) both lines stay visible."""


def compute_layout(state: TopologyState) -> dict[str, tuple[float, float]]:
    """Where each broker is drawn: below the broker its connector points at, leaves side by side.

    The declaring broker of every connector is the child (the retail
    hierarchy declares every connector from child to parent, in both
    designs); a parent sits centred over its children.
    """
    parent = {source: target for source, target in state.connectors}
    children: dict[str, list[str]] = {b: [] for b in state.brokers}
    for child, up in parent.items():
        children[up].append(child)
    position: dict[str, tuple[float, float]] = {}
    next_x = [0.0]

    def place(broker: str, depth: int) -> float:
        below = children[broker]
        if below:
            xs = [place(child, depth + 1) for child in below]
            x = (min(xs) + max(xs)) / 2
        else:
            x = next_x[0]
            next_x[0] += 1.0
        position[broker] = (x, -float(depth))
        return x

    for broker in state.brokers:
        if broker not in parent:
            place(broker, 0)
    return position


def draw_panel(axes: Axes, state: TopologyState, title: str) -> None:
    """Draw one settled state on ``axes``: links, advisory arrows, brokers coloured by role, the title."""
    position = compute_layout(state)
    roles = get_broker_roles(state)
    for source, target in state.connectors:
        (x1, y1), (x2, y2) = position[source], position[target]
        axes.plot([x1, x2], [y1, y2], color="#bbbbbb", linewidth=1.0, zorder=1)
    for sender, receiver in get_advisory_arrows(state):
        (x1, y1), (x2, y2) = position[sender], position[receiver]
        dx, dy = x2 - x1, y2 - y1
        length = max((dx * dx + dy * dy) ** 0.5, 1e-9)
        nx, ny = -dy / length * 0.14, dx / length * 0.14
        axes.annotate("", xy=(x2 + nx, y2 + ny), xytext=(x1 + nx, y1 + ny),
                      arrowprops={"arrowstyle": "-|>", "color": "#222222", "linewidth": 1.3,
                                  "shrinkA": 11, "shrinkB": 11}, zorder=2)
    for broker, (x, y) in position.items():
        role = roles[broker]
        axes.text(x, y, broker, ha="center", va="center", fontsize=7.5, zorder=3,
                  color="white" if role in ("consumer", "used", "spilled") else "#333333",
                  bbox={"boxstyle": "round,pad=0.35", "facecolor": COLOURS[role], "edgecolor": "#555555",
                        "linewidth": 0.8})
    producers = {p.broker for p in state.producers.values()}
    for broker in producers:
        x, y = position[broker]
        axes.text(x, y + 0.28, "producer", ha="center", va="bottom", fontsize=7, style="italic", color="#333333")
    xs = [x for x, _ in position.values()]
    ys = [y for _, y in position.values()]
    axes.set_xlim(min(xs) - 0.7, max(xs) + 0.7)
    axes.set_ylim(min(ys) - 0.45, max(ys) + 0.65)
    axes.set_title(title, fontsize=9)
    axes.set_axis_off()


def draw_propagation(path: Path, regions: int = REGIONS, stores: int = DIAGRAM_STORES,
                     designs: Sequence[Design] = DESIGNS) -> None:
    """Draw one panel per design to the PNG ``path`` (a 2x2 grid for the four default designs)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    columns = 2
    rows = (len(designs) + columns - 1) // columns
    figure, grid = plt.subplots(rows, columns, figsize=(12, 3.4 * rows + 0.8), squeeze=False)
    for index, (design, ttl) in enumerate(designs):
        state = compute_state(design, ttl, regions, stores)
        title = compute_title(state, get_label(design, ttl)) + "\n" + describe_send(state)
        draw_panel(grid[index // columns][index % columns], state, title)
    for index in range(len(designs), rows * columns):
        grid[index // columns][index % columns].set_axis_off()
    handles: list[object] = [Patch(facecolor=COLOURS[role], edgecolor="#555555", label=LEGEND[role]) for role in ROLES]
    handles.append(Line2D([], [], color="#222222", marker=">", markersize=5, linewidth=1.3,
                          label="an advisory crossed the link and was acted on"))
    figure.legend(handles=handles, loc="lower center", ncol=3, fontsize=8, frameon=False)
    figure.suptitle(f"One consumer at {CONSUMER_BROKER}, a producer at {HQ}: where demand goes "
                    f"({regions} regions of {stores} stores)", fontsize=11)
    figure.tight_layout(rect=(0, 0.07, 1, 0.97))
    figure.savefig(path, dpi=100)
    plt.close(figure)


def draw_spillage(rows: Sequence[SweepRow], path: Path) -> None:
    """Plot subscriptions and spilled subscriptions against stores per region, one line per design."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4.4))
    labels = list(dict.fromkeys(row.label for row in rows))
    for label in labels:
        mine = [row for row in rows if row.label == label]
        colour, marker, size = LINE_STYLES.get(label, ("#333333", "x", 5.0))
        face = "none" if size > 6 else colour
        stores = [row.stores for row in mine]
        for axes, values in ((left, [row.subscriptions for row in mine]), (right, [row.spilled for row in mine])):
            axes.plot(stores, values, color=colour, marker=marker, markersize=size, markerfacecolor=face,
                      label=label)
    sizes = sorted({row.stores for row in rows})
    regions = rows[0].regions if rows else REGIONS
    highest = max([row.subscriptions for row in rows] + [1])
    decades = [10 ** power for power in range(len(str(highest)) + 1)]
    left.set_yscale("log")
    left.set_yticks(decades, [str(n) for n in decades])
    left.set_ylabel("demand subscriptions, all brokers (log scale)")
    right.set_yscale("symlog", linthresh=1)
    right.set_yticks([0, *decades], ["0", *(str(n) for n in decades)])
    right.set_ylim(-0.3, decades[-1])
    right.set_ylabel("spilled subscriptions (log scale above 1)")
    for axes in (left, right):
        axes.set_xscale("log")
        axes.set_xticks(sizes, [str(n) for n in sizes])
        axes.minorticks_off()
        axes.set_xlim(sizes[0] / 1.3, sizes[-1] * 1.3)
        axes.set_xlabel(f"stores per region ({regions} regions; log scale)")
        axes.grid(True, which="major", color="#dddddd", linewidth=0.6)
        axes.spines[["top", "right"]].set_visible(False)
    left.set_title("Demand subscriptions for one store consumer", fontsize=10)
    right.set_title("Spilled subscriptions, producer at HQ (TTL 1 and tree: 0)", fontsize=10)
    left.legend(fontsize=8, frameon=False, loc="upper left")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


# --- command line -------------------------------------------------------------------------------------


def parse_sizes(text: str) -> tuple[int, ...]:
    """``"1,2,5"`` as (1, 2, 5); raises ``argparse.ArgumentTypeError`` naming a bad entry."""
    sizes = []
    for part in text.split(","):
        try:
            value = int(part)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{part!r} is not a number of stores") from None
        if not 1 <= value <= 1000:
            raise argparse.ArgumentTypeError(f"{value} stores per region is outside 1 to 1000")
        sizes.append(value)
    return tuple(sizes)


def prepare_outdir(outdir: Path) -> str | None:
    """Create ``outdir`` if needed; a sentence saying why it cannot hold the images, or None."""
    if outdir.exists() and not outdir.is_dir():
        return f"OUTDIR {outdir} exists and is not a directory"
    try:
        outdir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        return f"OUTDIR {outdir} cannot be created: {error.strerror or error}"
    probe = outdir / ".topology_plot-write-test"
    try:
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as error:
        return f"OUTDIR {outdir} is not writable: {error.strerror or error}"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m brokerspec.topology_plot OUTDIR [--stores 1,2,5]``: write both images, print the tables."""
    parser = argparse.ArgumentParser(
        prog="python -m brokerspec.topology_plot",
        description=f"Run the retail hierarchy through the topology spec under network TTL 1, 2, 3 and the tree "
                    f"connector; write {PROPAGATION_FILE} and {SPILLAGE_FILE} into OUTDIR and print the tables.")
    parser.add_argument("outdir", type=Path, metavar="OUTDIR", help="the directory to write the images into")
    parser.add_argument("--stores", type=parse_sizes, default=SIZES, metavar="N,N,...",
                        help="stores per region in the sweep (default: %(default)s)")
    args = parser.parse_args(argv)
    problem = prepare_outdir(args.outdir)
    if problem is not None:
        parser.error(problem)
    for design, ttl in DESIGNS:
        print(propagation_table(design, ttl))
        print()
    draw_propagation(args.outdir / PROPAGATION_FILE)
    rows = sweep(args.stores)
    draw_spillage(rows, args.outdir / SPILLAGE_FILE)
    print(format_sweep(rows))
    return 0


if __name__ == "__main__":  # pragma: no cover - exercised through the command line
    sys.exit(main())
