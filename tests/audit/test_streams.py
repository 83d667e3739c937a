"""The per-address stream replay: its ring is the spec's, its verdicts follow the rules, bad rows are named."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from brokerspec.audit.generate import generate_streams
from brokerspec.audit.local import replay_globally
from brokerspec.audit.streams import IdRing, audit_sorted_rows, validate_record
from brokerspec.spec import get_profile
from brokerspec.spec.duplicates import add_to_ring, is_in_ring, new_ring

KEYS = st.sampled_from(["x", "y", "z", "w"])


@given(size=st.integers(0, 4), keys=st.lists(KEYS, max_size=12), probe=KEYS)
@settings(max_examples=300, deadline=None)
def test_ring_is_the_spec_ring(size: int, keys: list[str], probe: str) -> None:
    mine, spec = IdRing(size), new_ring(size)
    for key in keys:
        mine.add(key)
        spec = add_to_ring(spec, key.encode())
        assert (key in mine) == is_in_ring(spec, key.encode())
    assert (probe in mine) == is_in_ring(spec, probe.encode())
    assert mine.slots == [s.decode() if s is not None else None for s in spec.slots]


def row(address: str, seq: int, op: str, key: str | None, tx: str | None, observed: str) -> tuple[object, ...]:
    return (address, seq, op, key, tx, observed, "f", seq)


def kinds(rows: list[tuple[object, ...]], size: int = 10) -> list[tuple[object, ...]]:
    return [r for r in audit_sorted_rows(rows, size) if r[0] != "summary"]


def test_a_duplicate_accepted_outside_a_transaction_is_a_divergence() -> None:
    found = kinds([row("a", 1, "send", "x", None, "accepted"), row("a", 2, "send", "x", None, "accepted")])
    assert found == [("divergence", "a", 2, "send", "f", 2, "rejected", "accepted", "DUP-NONTX-DUPLICATE", None,
                      "x")]


def test_ids_of_a_transaction_count_only_after_its_commit() -> None:
    rows = [row("a", 1, "send", "x", "t1", "accepted"), row("a", 2, "send", "x", None, "accepted"),
            row("a", 3, "commit", None, "t1", "accepted"), row("a", 4, "send", "x", None, "rejected")]
    found = kinds(rows)
    assert [r[0] for r in found] == ["commit"]


def test_a_rolled_back_transaction_records_nothing() -> None:
    rows = [row("a", 1, "send", "x", "t1", "accepted"), row("a", 2, "rollback", None, "t1", "accepted"),
            row("a", 3, "send", "x", None, "rejected")]
    found = kinds(rows)
    assert found[0][:3] == ("divergence", "a", 3) and found[0][6:9] == ("accepted", "rejected", "DUP-ROUTED")


def test_a_doomed_transaction_must_fail_its_commit_at_every_address() -> None:
    rows = [row("a", 1, "send", "x", None, "accepted"), row("a", 2, "send", "x", "t1", "rejected"),
            row("b", 3, "send", "y", "t1", "accepted"), row("a", 4, "commit", None, "t1", "rejected"),
            row("b", 5, "commit", None, "t1", "accepted"), row("b", 6, "send", "y", None, "rejected")]
    # b cannot see the doom, so it follows the broker's answer: the commit succeeded there and recorded y.
    assert replay_globally(rows, 10) == {("b", 5, "rejected", "accepted", "DUP-COMMIT-ROLLBACK-ONLY")}


def test_rows_out_of_order_or_reusing_a_transaction_are_quarantined_with_the_reason() -> None:
    rows = [row("a", 2, "send", "x", "t1", "accepted"), row("a", 1, "send", "y", None, "accepted"),
            row("a", 3, "commit", None, "t1", "accepted"), row("a", 4, "send", "z", "t1", "accepted")]
    quarantined = [r for r in kinds(rows) if r[0] == "quarantine"]
    assert [r[2] for r in quarantined] == [1, 4]
    assert "seq 1 does not follow seq 2" in str(quarantined[0][6])
    assert "transaction 't1' already ended at seq 3" in str(quarantined[1][6])


def test_validation_names_the_field() -> None:
    good = {"v": 1, "address": "a", "seq": 1, "op": "send", "duplicate_id": "x", "tx": None, "observed": "accepted"}
    assert validate_record(good) == ("a", 1, "send", "x", None, "accepted")
    assert str(validate_record({**good, "v": 2})).startswith("v: unsupported stream version 2")
    assert str(validate_record({**good, "op": "commit"})).startswith("duplicate_id: only a send")
    assert str(validate_record({**good, "observed": "maybe"})).startswith("observed:")
    assert str(validate_record({**good, "seq": 2 ** 70})).startswith("seq:")
    assert str(validate_record({**good, "extra": 1})).startswith("unknown field 'extra'")
    assert str(validate_record([1])).startswith("expected a JSON object")


def test_clean_streams_recorded_from_the_impl_have_no_divergence_and_faults_are_found() -> None:
    profile = get_profile("artemis-latest")
    rows, faults = generate_streams(profile, 12, 4, seed=3, events=150)
    raw = [(r["address"], r["seq"], r["op"], r["duplicate_id"], r["tx"], r["observed"], "f", r["seq"])
           for r in rows]
    found = replay_globally(raw, profile.duplicates.id_cache_size)
    assert {(a, s) for a, s, *_ in found} == {(f.history, f.step) for f in faults}
    clean, none = generate_streams(profile, 6, 0, seed=79, events=150)
    assert not none
    assert not replay_globally([(r["address"], r["seq"], r["op"], r["duplicate_id"], r["tx"], r["observed"], "f",
                                 r["seq"]) for r in clean], profile.duplicates.id_cache_size)
