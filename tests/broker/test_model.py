"""The broker's model layer without the wire: routing, turns, duplicate IDs, transactions, restarts."""

from __future__ import annotations

from pathlib import Path

import pytest

from brokerspec.broker.model import Model
from brokerspec.broker.transactions import Transaction
from brokerspec.broker.queues import Entry, Subscription, queue_key
from brokerspec.spec import get_profile
from brokerspec.spec.addressing import QueueCreated, Rejected, RoutingType

ANYCAST, MULTICAST = RoutingType.ANYCAST, RoutingType.MULTICAST


class Client:
    """A sink that records deliveries and can be made not ready."""

    def __init__(self) -> None:
        self.is_ready = True
        self.got: list[tuple[str, bytes]] = []

    def ready(self) -> bool:
        return self.is_ready

    def deliver(self, subscription: Subscription, entry: Entry) -> None:
        self.got.append((subscription.key, entry.message.body))


def make(tmp_path: Path | None = None, profile: str = "artemis-latest") -> Model:
    return Model(get_profile(profile), None if tmp_path is None else tmp_path / "store.db")


def deliver_all(model: Model) -> list[tuple[str, bytes]]:
    return [(s.key, e.message.body) for s, e in model.pump()]


def dup(value: str) -> tuple[tuple[str, str], ...]:
    return (("_AMQ_DUPL_ID", value),)


def test_anycast_sends_take_turns_over_the_addresses_anycast_queues() -> None:
    model = make()
    model.create_address("orders", frozenset({ANYCAST}))
    for name in ("q1", "q2"):
        assert isinstance(model.create_queue("orders", name, ANYCAST), QueueCreated)
    placed = [model.send("orders", ANYCAST, (), b"m", False).reached for _ in range(4)]
    assert placed == [[("orders", "q1")], [("orders", "q2")], [("orders", "q1")], [("orders", "q2")]]


def test_multicast_send_copies_to_every_queue_and_an_fqqn_send_to_one() -> None:
    model = make()
    model.create_address("news", frozenset({MULTICAST}))
    for name in ("a", "b"):
        model.create_queue("news", name, MULTICAST)
    assert model.send("news", MULTICAST, (), b"m", False).reached == [("news", "a"), ("news", "b")]
    assert model.send("news::b", None, (), b"m", False).reached == [("news", "b")]
    assert [len(model.queues[queue_key("news", q)].waiting) for q in ("a", "b")] == [1, 2]


def test_a_refused_send_names_the_reason() -> None:
    model = make(profile="artemis-2.11")
    result = model.send("nowhere", ANYCAST, (), b"m", False)
    assert result.queues == () and result.refused is None and not model.queues
    refused = make().send("::q", ANYCAST, (), b"m", False).refused
    assert isinstance(refused, Rejected) and refused.reason.kind == "invalid_name"


def test_subscriptions_take_turns_and_a_not_ready_one_is_skipped() -> None:
    model = make()
    model.create_address("q", frozenset({ANYCAST}))
    model.create_queue("q", "q", ANYCAST)
    first, second = Client(), Client()
    model.subscribe("q", ANYCAST, "s1", True, first)
    model.subscribe("q", ANYCAST, "s2", True, second)
    for body in (b"1", b"2", b"3"):
        model.send("q", ANYCAST, (), body, False)
    assert deliver_all(model) == [("s1", b"1"), ("s2", b"2"), ("s1", b"3")]
    second.is_ready = False
    for body in (b"4", b"5"):
        model.send("q", ANYCAST, (), body, False)
    assert deliver_all(model) == [("s1", b"4"), ("s1", b"5")]
    first.is_ready = False
    model.send("q", ANYCAST, (), b"6", False)
    assert deliver_all(model) == []
    second.is_ready = True
    model.dirty.update(model.queues.values())
    assert deliver_all(model) == [("s2", b"6")]


def test_an_unsubscribe_gives_back_what_was_held_in_arrival_order() -> None:
    model = make()
    model.create_address("q", frozenset({ANYCAST}))
    model.create_queue("q", "q", ANYCAST)
    sink = Client()
    held = model.subscribe("q", ANYCAST, "s1", False, sink)
    assert isinstance(held, Subscription)
    for body in (b"1", b"2", b"3"):
        model.send("q", ANYCAST, (), body, False)
    deliver_all(model)
    assert model.ack(held, 2, False, None)
    assert not model.ack(held, 2, False, None)
    model.unsubscribe(held)
    queue = model.queues[queue_key("q", "q")]
    assert [(e.message.body, e.deliveries) for e in queue.waiting] == [(b"1", 1), (b"3", 1)]


def test_a_cumulative_acknowledgement_takes_everything_before_it() -> None:
    model = make()
    model.create_address("q", frozenset({ANYCAST}))
    model.create_queue("q", "q", ANYCAST)
    held = model.subscribe("q", ANYCAST, "s", False, Client())
    assert isinstance(held, Subscription)
    for body in (b"1", b"2", b"3"):
        model.send("q", ANYCAST, (), body, False)
    deliver_all(model)
    assert model.ack(held, 2, True, None)
    assert list(held.held) == [3]


def test_a_duplicate_outside_a_transaction_is_dropped_and_inside_one_dooms_it() -> None:
    model = make()
    model.create_address("q", frozenset({ANYCAST}))
    model.create_queue("q", "q", ANYCAST)
    assert model.send("q", ANYCAST, dup("a"), b"1", False).reached == [("q", "q")]
    second = model.send("q", ANYCAST, dup("a"), b"2", False)
    assert second.duplicate and second.queues == ()
    tx = Transaction("t")
    assert model.send("q", ANYCAST, dup("b"), b"3", False, tx).reached == [("q", "q")]
    assert model.send("q", ANYCAST, dup("b"), b"4", False, tx).reached == [("q", "q")]  # DUP-SAME-ID-IN-TX
    assert not model.ids.is_duplicate("q", model_key("b"))  # DUP-TX-HELD: not visible before the commit
    assert model.send("q", ANYCAST, dup("a"), b"5", False, tx).duplicate
    assert model.commit(tx) is not None
    assert [e.message.body for e in model.queues[queue_key("q", "q")].waiting] == [b"1"]
    assert not model.ids.is_duplicate("q", model_key("b"))


def model_key(value: str) -> bytes:
    from brokerspec.broker.dedup import compute_key

    return compute_key(value)


def test_a_commit_lands_sends_in_order_and_records_their_ids() -> None:
    model = make()
    model.create_address("q", frozenset({ANYCAST}))
    model.create_queue("q", "q", ANYCAST)
    tx = Transaction("t")
    model.send("q", ANYCAST, dup("x"), b"1", False, tx)
    model.send("q", ANYCAST, (), b"2", False, tx)
    assert not model.queues[queue_key("q", "q")].waiting
    assert model.commit(tx) is None
    assert [e.message.body for e in model.queues[queue_key("q", "q")].waiting] == [b"1", b"2"]
    assert model.ids.ids("q") == [model_key("x")]


def test_an_abort_gives_back_acknowledged_messages_and_forgets_sends() -> None:
    model = make()
    model.create_address("q", frozenset({ANYCAST}))
    model.create_queue("q", "q", ANYCAST)
    held = model.subscribe("q", ANYCAST, "s", False, Client())
    assert isinstance(held, Subscription)
    model.send("q", ANYCAST, (), b"1", False)
    deliver_all(model)
    tx = Transaction("t")
    assert model.ack(held, 1, False, tx)
    model.send("q", ANYCAST, dup("z"), b"2", False, tx)
    model.abort(tx)
    assert [e.message.body for e in model.queues[queue_key("q", "q")].waiting] == [b"1"]
    assert model.ids.ids("q") == []


def test_a_queue_deleted_before_the_commit_gets_nothing() -> None:
    model = make()
    model.create_address("q", frozenset({ANYCAST}))
    model.create_queue("q", "q", ANYCAST)
    model.create_queue("q", "other", ANYCAST)
    tx = Transaction("t")
    assert model.send("q::q", None, (), b"1", False, tx).reached == [("q", "q")]
    model.delete_queue("q::q")
    assert model.commit(tx) is None
    assert queue_key("q", "q") not in model.queues and not model.queues[queue_key("q", "other")].waiting


@pytest.mark.parametrize("crash", [False, True])
def test_a_restart_keeps_durable_committed_messages_and_ids_only(tmp_path: Path, crash: bool) -> None:
    model = make(tmp_path)
    model.create_address("q", frozenset({ANYCAST}))
    model.create_queue("q", "q", ANYCAST)
    model.send("q", ANYCAST, dup("kept"), b"durable", True)
    model.send("q", ANYCAST, (), b"not durable", False)
    tx = Transaction("t")
    model.send("q", ANYCAST, dup("open"), b"open tx", True, tx)
    consumed = model.subscribe("q", ANYCAST, "s", False, Client())
    assert isinstance(consumed, Subscription)
    deliver_all(model)  # delivered, not acknowledged: still stored
    model.restart(crash=crash)
    assert [e.message.body for e in model.queues[queue_key("q", "q")].waiting] == [b"durable"]
    assert model.ids.ids("q") == [model_key("kept")]
    assert model.send("q", ANYCAST, dup("kept"), b"again", True).duplicate
    model.close()
    reopened = make(tmp_path)
    assert [e.message.body for e in reopened.queues[queue_key("q", "q")].waiting] == [b"durable"]
    assert reopened.store.orphan_bodies() == []


def test_the_last_queue_going_forgets_the_address_cache(tmp_path: Path) -> None:
    model = make(tmp_path)
    model.create_address("q", frozenset({ANYCAST}))
    model.create_queue("q", "q", ANYCAST)
    model.send("q", ANYCAST, dup("a"), b"1", True)
    model.delete_queue("q::q")
    model.create_queue("q", "q", ANYCAST)
    assert not model.send("q", ANYCAST, dup("a"), b"2", True).duplicate
    model.restart()
    assert [e.message.body for e in model.queues[queue_key("q", "q")].waiting] == [b"2"]


def test_reload_keeps_the_newest_ids_when_the_cache_shrank(tmp_path: Path) -> None:
    model = Model(get_profile("artemis-latest"), tmp_path / "s.db")
    model.create_address("q", frozenset({ANYCAST}))
    model.create_queue("q", "q", ANYCAST)
    for value in "abcd":
        model.send("q", ANYCAST, dup(value), b"m", True)
    model.close()
    smaller = Model(get_profile("artemis-latest", (("duplicates.id_cache_size", "2"),)), tmp_path / "s.db")
    assert smaller.ids.ids("q") == [model_key("c"), model_key("d")]


def test_two_queues_whose_fqqn_strings_coincide_stay_apart() -> None:
    """(``a:``, ``r``) and (``a``, ``:r``) are both written ``a:::r``; the model must not take one for the other."""
    model = make()
    model.create_address("a:", frozenset({ANYCAST}))
    model.create_queue("a:", "r", ANYCAST)
    attached = model.subscribe("a:::r", ANYCAST, "s", True, Client())
    assert isinstance(attached, Subscription) and attached.queue is not None
    assert (attached.queue.address, attached.queue.name) == ("a", ":r")
    assert queue_key("a:", "r") in model.queues and not model.queues[queue_key("a:", "r")].subscriptions


def test_message_numbers_are_never_given_twice_across_a_restart(tmp_path: Path) -> None:
    model = make(tmp_path)
    model.create_address("q", frozenset({ANYCAST}))
    model.create_queue("q", "q", ANYCAST)
    for _ in range(3):
        model.send("q", ANYCAST, (), b"not durable", False)
    before = {e.message.number for e in model.queues[queue_key("q", "q")].waiting}
    model.restart(crash=True)
    model.send("q", ANYCAST, (), b"after", False)
    after = {e.message.number for e in model.queues[queue_key("q", "q")].waiting}
    assert len(before) == 3 and len(after) == 1 and not before & after


class CommitsLate(Model):
    """Planted bug: a COMMIT answers before its writes are durable (they wait for the next operation's commit)."""

    def commit(self, tx: Transaction) -> str | None:
        durable = self.store.commit
        self.store.commit = lambda: None  # type: ignore[method-assign]
        try:
            return super().commit(tx)
        finally:
            self.store.commit = durable  # type: ignore[method-assign]


def lost_at_a_crash(model_type: type[Model], path: Path) -> list[bytes]:
    """The bodies of a committed transaction that a crash right after the commit loses."""
    model = model_type(get_profile("artemis-latest"), path)
    model.create_address("q", frozenset({ANYCAST}))
    model.create_queue("q", "q", ANYCAST)
    tx = model.begin("t")
    for body in (b"1", b"2"):
        model.send("q", ANYCAST, dup(body.decode()), body, True, tx)
    assert model.commit(tx) is None
    model.store.close()  # the process dies: whatever SQLite did not commit is gone
    reopened = Model(get_profile("artemis-latest"), path)
    kept = {e.message.body for e in reopened.queues[queue_key("q", "q")].waiting}
    reopened.close()
    return [body for body in (b"1", b"2") if body not in kept]


def test_a_committed_transaction_survives_a_crash_and_the_check_catches_one_that_does_not(tmp_path: Path) -> None:
    assert lost_at_a_crash(Model, tmp_path / "good.db") == []
    assert lost_at_a_crash(CommitsLate, tmp_path / "planted.db") == [b"1", b"2"]


def test_a_copy_taken_after_a_restart_leaves_the_other_queues_copy_whole(tmp_path: Path) -> None:
    """Found by fuzzing over the wire: after a crash each queue's copy was reloaded as a message of its own, so
    taking one copy deleted the body the other still needed, and the next restart lost that copy."""
    model = make(tmp_path)
    model.create_address("a", frozenset({MULTICAST}))
    for name in ("q2", "q3"):
        model.create_queue("a", name, MULTICAST)
    model.send("a", MULTICAST, (), b"both", True)
    model.restart(crash=True)
    taken = model.subscribe("a::q2", None, "s", True, Client())
    assert isinstance(taken, Subscription)
    assert deliver_all(model) == [("s", b"both")]
    model.restart(crash=True)
    assert [e.message.body for e in model.queues[queue_key("a", "q3")].waiting] == [b"both"]
