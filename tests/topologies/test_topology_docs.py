"""The numbers and pictures of docs/topologies.md, from ``brokerspec.topology_plot``, on actual values.

The sweep's counts follow from the rules in closed form (S stores per
region, R regions, a producer at HQ, one consumer at a store): network TTL
1 makes one subscription, TTL 2 makes S+1 and spills the S-1 sibling
stores, TTL 3 makes S+R and spills S+R-2, the tree connector makes 2 and
spills none. Each assertion below states one of those facts.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from brokerspec.spec import InvalidCommand
from brokerspec.topology_plot import (
    PROPAGATION_FILE,
    SPILLAGE_FILE,
    SweepRow,
    compute_state,
    format_sweep,
    get_advisory_arrows,
    get_broker_roles,
    main,
    propagation_table,
    sweep,
)

DOCS = Path(__file__).resolve().parents[2] / "docs"
SIZES = (1, 2, 7)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def rows() -> list[SweepRow]:
    return sweep(SIZES, regions=3)


def pick(rows: list[SweepRow], label: str) -> list[SweepRow]:
    return [row for row in rows if row.label == label]


def test_sweep_has_one_row_per_design_and_size(rows: list[SweepRow]) -> None:
    assert [(row.label, row.stores) for row in rows[:3]] == [("network TTL 1", 1), ("network TTL 1", 2),
                                                             ("network TTL 1", 7)]
    assert len(rows) == 4 * len(SIZES)
    assert {row.brokers for row in rows if row.stores == 7} == {1 + 3 + 3 * 7}


def test_network_ttl_1_makes_one_subscription_and_spills_nothing(rows: list[SweepRow]) -> None:
    assert [(row.subscriptions, row.spilled, row.advisories) for row in pick(rows, "network TTL 1")] == [
        (1, 0, 1)] * len(SIZES)


def test_network_ttl_2_spills_to_every_sibling_store(rows: list[SweepRow]) -> None:
    ttl2 = pick(rows, "network TTL 2")
    assert [row.spilled for row in ttl2] == [stores - 1 for stores in SIZES] == [0, 1, 6]
    assert [row.subscriptions for row in ttl2] == [stores + 1 for stores in SIZES]


def test_network_ttl_3_also_spills_to_the_other_regions(rows: list[SweepRow]) -> None:
    ttl3 = pick(rows, "network TTL 3")
    assert [(row.subscriptions, row.spilled) for row in ttl3] == [(4, 2), (5, 3), (10, 8)]


def test_the_tree_connector_never_spills(rows: list[SweepRow]) -> None:
    assert [(row.subscriptions, row.spilled, row.advisories) for row in pick(rows, "tree connector")] == [
        (2, 0, 2)] * len(SIZES)


def test_the_sweep_table_prints_the_rows(rows: list[SweepRow]) -> None:
    lines = format_sweep(rows).splitlines()
    assert lines[0].split() == ["design", "stores", "brokers", "advisories", "subscriptions", "spilled"]
    assert lines[-1].split() == ["tree", "connector", "7", "25", "2", "2", "0"]


def test_roles_and_arrows_come_from_the_spec_state() -> None:
    ttl2 = compute_state("network", 2)
    roles = get_broker_roles(ttl2)
    assert {b: r for b, r in roles.items() if r != "none"} == {
        "hq": "used", "r1": "used", "r1-s1": "consumer", "r1-s2": "spilled", "r1-s3": "spilled"}
    assert get_advisory_arrows(ttl2) == (("r1", "hq"), ("r1", "r1-s2"), ("r1", "r1-s3"), ("r1-s1", "r1"))
    assert get_advisory_arrows(compute_state("tree")) == (("r1", "hq"), ("r1-s1", "r1"))
    ttl3 = get_broker_roles(compute_state("network", 3))
    assert (ttl3["r2"], ttl3["r3"], ttl3["r2-s1"]) == ("spilled", "spilled", "none")


def test_the_propagation_table_says_where_a_message_from_hq_ends() -> None:
    assert propagation_table("network", 1).splitlines()[-1] == "a message sent at hq: waits at hq"
    assert propagation_table("tree").splitlines()[-1] == "a message sent at hq: delivered at r1-s1 after hq r1"


@pytest.mark.parametrize(("design", "ttl", "field"), [("network", None, "ttl"), ("network", 0, "ttl"),
                                                      ("tree", 2, "ttl"), ("mesh", 1, "design")])
def test_a_bad_design_is_named(design: str, ttl: int | None, field: str) -> None:
    with pytest.raises(InvalidCommand) as error:
        compute_state(design, ttl)
    assert error.value.field == field


def test_the_command_line_writes_both_images_and_prints_the_tables(tmp_path: Path) -> None:
    out = tmp_path / "new" / "images"
    result = subprocess.run([sys.executable, "-m", "brokerspec.topology_plot", str(out), "--stores", "1,3"],
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    for name in (PROPAGATION_FILE, SPILLAGE_FILE):
        data = (out / name).read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 10_000, name
    assert "network TTL 2: 4 advisories, 4 subscriptions, 2 spilled" in result.stdout
    assert ["network", "TTL", "2", "3", "13", "4", "4", "2"] in [line.split() for line in result.stdout.splitlines()]


def test_an_outdir_that_is_a_file_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "taken"
    blocker.write_text("not a directory")
    for outdir in (blocker, blocker / "below"):
        with pytest.raises(SystemExit) as stop:
            main([str(outdir)])
        assert stop.value.code == 2
        error = capsys.readouterr().err
        assert f"OUTDIR {outdir}" in error and ("not a directory" in error or "cannot be created" in error), error
    assert blocker.read_text() == "not a directory"


def test_bad_store_counts_are_named(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    for value, words in (("1,x", "'x' is not a number of stores"), ("0", "0 stores per region is outside")):
        with pytest.raises(SystemExit):
            main([str(tmp_path), "--stores", value])
        assert words in capsys.readouterr().err


def test_the_guide_embeds_both_images_and_they_exist() -> None:
    page = (DOCS / "topologies.md").read_text()
    for name in (PROPAGATION_FILE, SPILLAGE_FILE):
        assert f"(images/{name})" in page
        assert (DOCS / "images" / name).read_bytes().startswith(PNG_MAGIC)
