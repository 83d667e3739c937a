"""How the load-balancing adapter turns what it saw on a cluster into the spec's events (no broker needed)."""

from __future__ import annotations

import pytest

from brokerspec.artemis.consumers import ConsumerInfo, holding, now_held
from brokerspec.artemis.returns import acknowledged, close_return
from brokerspec.artemis.outcomes import UnexpectedRefusal
from brokerspec.artemis.placement import Instance, Place, Primary, QueueKey, first_landings, reconcile
from brokerspec.spec import BalancingOptions, ReturnOrder
from brokerspec.spec.balancing import Delivered, Dropped, Redistributed, Returned

N1Q, N2Q, N3Q, N1M = ("n1", "q"), ("n2", "q"), ("n3", "q"), ("n1", "m")
SERIALS = {N1Q: 1, N2Q: 2, N3Q: 3, N1M: 4}


def group(key: QueueKey) -> object:
    """Queues named q are one ANYCAST group; m is a group of its own."""
    return key[1]


def serial(key: QueueKey) -> int:
    return SERIALS[key]


def test_a_send_lands_on_queues_listed_by_node_and_queue() -> None:
    landings = (Instance(1, "t1", N1M), Instance(1, "t1", N1Q))
    places = (Place("t1", N1Q, "c1"), Place("t1", N1M, None))
    result = reconcile({}, landings, places, {N1M: ("t1",)}, Primary("send"), group, serial, 2)
    assert result.events == (Delivered(1, "n1", "m", None), Delivered(1, "n1", "q", "c1"))
    assert result.waiting == {N1M: (Instance(1, "t1", N1M),)} and result.next_id == 2


def test_a_waiting_message_that_moved_is_a_copy_under_the_next_id() -> None:
    waiting = {N1Q: (Instance(1, "t1", N1Q), Instance(2, "t2", N1Q))}
    places = (Place("t1", N2Q, "c2"), Place("t2", N1Q, None))
    result = reconcile(waiting, (), places, {N1Q: ("t2",)}, Primary(), group, serial, 3)
    assert result.events == (Redistributed(1, "n1", "q", 3, "n2", "q"), Delivered(3, "n2", "q", "c2"))
    assert result.waiting == {N1Q: (Instance(2, "t2", N1Q),)} and result.next_id == 4


def test_moves_follow_the_originating_queues_creation_order_then_their_own_order() -> None:
    waiting = {N3Q: (Instance(1, "t1", N3Q),), N1Q: (Instance(2, "t2", N1Q), Instance(3, "t3", N1Q))}
    places = (Place("t1", N2Q, None), Place("t3", N2Q, None), Place("t2", N2Q, None))
    result = reconcile(waiting, (), places, {N2Q: ("t1", "t2", "t3")}, Primary(), group, serial, 4)
    moved = [(e.message, e.copy) for e in result.events if isinstance(e, Redistributed)]
    assert moved == [(2, 4), (3, 5), (1, 6)]
    assert [i.id for i in result.waiting[N2Q]] == [6, 4, 5]


def test_an_attach_offers_every_waiting_message_of_its_queue() -> None:
    waiting = {N1Q: (Instance(1, "t1", N1Q), Instance(2, "t2", N1Q))}
    places = (Place("t1", N1Q, "c"), Place("t2", N1Q, None))
    result = reconcile(waiting, (), places, {N1Q: ("t2",)}, Primary("offer", N1Q), group, serial, 3)
    assert result.events == (Delivered(1, "n1", "q", "c"), Delivered(2, "n1", "q", None))


def test_a_deleted_queue_drops_its_waiting_messages_and_nothing_else_may_vanish() -> None:
    waiting = {N1Q: (Instance(1, "t1", N1Q),), N2Q: (Instance(2, "t2", N2Q),)}
    result = reconcile(waiting, (), (Place("t2", N2Q, None),), {N2Q: ("t2",)}, Primary("drop", N1Q), group, serial, 3)
    assert result.events == (Dropped(1, "n1", "q"),)
    with pytest.raises(UnexpectedRefusal, match="is nowhere"):
        reconcile(waiting, (), (Place("t2", N2Q, None),), {N2Q: ("t2",)}, Primary(), group, serial, 3)


def test_a_message_in_a_place_nothing_explains_is_refused() -> None:
    with pytest.raises(UnexpectedRefusal, match="turned up"):
        reconcile({}, (), (Place("t9", N1Q, None),), {N1Q: ("t9",)}, Primary(), group, serial, 1)
    with pytest.raises(UnexpectedRefusal, match="turned up"):  # one message, two places
        reconcile({N1M: (Instance(1, "t1", N1M),)}, (), (Place("t1", N1Q, None), Place("t1", N2Q, None)),
                  {N1Q: ("t1",), N2Q: ("t1",)}, Primary(), group, serial, 2)


def test_a_move_prefers_a_place_in_its_own_group() -> None:
    """Two copies of one multicast message (queues q and m) both moved: each follows its own group."""
    waiting = {N1Q: (Instance(1, "t1", N1Q),), N1M: (Instance(1, "t1", N1M),)}
    places = (Place("t1", ("n2", "m"), None), Place("t1", N2Q, None))
    serials = {**SERIALS, ("n2", "m"): 5}
    result = reconcile(waiting, (), places, {N2Q: ("t1",), ("n2", "m"): ("t1",)}, Primary(), group,
                       lambda key: serials[key], 2)
    moved = [(e.queue, e.to_node, e.to_queue) for e in result.events if isinstance(e, Redistributed)]
    assert moved == [("q", "n2", "q"), ("m", "n2", "m")]


def test_a_send_lands_locally_and_across_each_bridge_it_took() -> None:
    records = {
        "n1": [{"event": "route", "tag": "bs1-2", "queues": ["$.sf.to-n2", "bs1-q", "bs1-q"]},
               {"event": "route", "tag": "bs1-1", "queues": ["bs1-other"]}],
        "n2": [{"event": "route", "tag": "bs1-2", "queues": ["bs1-q", "bs1-m"]},
               {"event": "route", "tag": "bs1-2", "queues": ["bs1-late"]}],  # a later move, not the landing
        "n3": [],
    }
    peers = {"$.sf.to-n2": "n2", "$.sf.to-n3": "n3"}
    assert first_landings("n1", "bs1-2", records, peers, "bs1-") == [("n2", "q"), ("n2", "m"), ("n1", "q")]
    assert first_landings("n3", "bs1-2", records, peers, "bs1-") == []


# --- messages a consumer holds unacknowledged (LB-ACK, LB-CLOSE-RETURNS) -----------------------------------------

HEAD = BalancingOptions(close_return_order=ReturnOrder.HEAD)
ARRIVAL = BalancingOptions(close_return_order=ReturnOrder.ARRIVAL)
MANUAL = {"c1": ConsumerInfo("bs1.c1@0", "s1", N1Q, manual_ack=True), "c2": ConsumerInfo("bs1.c2@1", "s2", N2Q)}


def test_what_each_consumer_took_is_told_as_it_is_now_a_copy_under_its_new_id() -> None:
    waiting = {N1Q: (Instance(1, "t1", N1Q), Instance(2, "t2", N1Q))}
    places = (Place("t1", N1Q, "c1"), Place("t2", N2Q, "c2"))
    result = reconcile(waiting, (), places, {}, Primary("offer", N1Q), group, serial, 3)
    assert result.taken == (("c1", Instance(1, "t1", N1Q)), ("c2", Instance(3, "t2", N2Q)))
    assert now_held({}, result.taken, MANUAL) == {"c1": (Instance(1, "t1", N1Q),)}  # c2 acknowledges at once


def test_a_held_message_is_no_instance_so_it_is_neither_nowhere_nor_unexplained() -> None:
    """c1 holds t1 (the broker counts it as delivering and does not browse it): a step that sees t2 alone."""
    result = reconcile({N1Q: (Instance(2, "t2", N1Q),)}, (), (Place("t2", N1Q, None),), {N1Q: ("t2",)}, Primary(),
                       group, serial, 3)
    assert result.events == () and result.taken == ()
    assert now_held({"c1": (Instance(1, "t1", N1Q),)}, result.taken, MANUAL) == {"c1": (Instance(1, "t1", N1Q),)}


def test_acknowledging_is_cumulative_and_a_message_not_held_is_none() -> None:
    held = (Instance(1, "t1", N1Q), Instance(3, "t3", N1Q), Instance(4, "t4", N1Q))
    assert acknowledged(held, 3) == (Instance(4, "t4", N1Q),)
    assert acknowledged(held, 4) == ()
    assert acknowledged(held, None) == ()
    assert acknowledged(held, 2) is None
    assert acknowledged((), None) == ()
    assert acknowledged((), 1) is None


def test_the_queues_count_what_their_consumers_hold_each_message_once() -> None:
    held = {"c1": (Instance(1, "t1", N1Q),)}
    deliveries = [{"consumer": "bs1.c1@0", "properties": {"_BS_TAG": "t2"}},
                  {"consumer": "bs1.c1@0", "properties": {"_BS_TAG": "t1"}},  # given back and delivered again
                  {"consumer": "bs1.c2@1", "properties": {"_BS_TAG": "t3"}}]  # c2 acknowledged it at once
    assert holding(held, deliveries, MANUAL, "bs1.") == {("n1", "bs1.q"): 2}
    assert holding({}, [], MANUAL, "bs1.") == {}


def test_a_close_returns_what_it_held_before_the_waiting_ones_on_2_11_and_by_id_later() -> None:
    held, waiting = (Instance(3, "t3", N1Q), Instance(1, "t1", N1Q)), (Instance(2, "t2", N1Q),)
    first, offered, primary = close_return(held, waiting, HEAD, purge=False)
    assert first == (Returned(3, "n1", "q"), Returned(1, "n1", "q")) and primary == Primary("offer", N1Q)
    assert [i.id for i in offered] == [3, 1, 2]
    first, offered, primary = close_return(held, waiting, ARRIVAL, purge=False)
    assert first == (Returned(3, "n1", "q"), Returned(1, "n1", "q")) and primary == Primary("offer", N1Q)
    assert [i.id for i in offered] == [1, 2, 3]


def test_a_purging_queue_drops_the_waiting_ones_then_the_returned_ones_on_2_11_and_all_of_them_later() -> None:
    held, waiting = (Instance(1, "t1", N1Q),), (Instance(2, "t2", N1Q),)
    first, offered, primary = close_return(held, waiting, HEAD, purge=True)
    assert first == (Dropped(2, "n1", "q"), Returned(1, "n1", "q"))
    assert offered == held and primary == Primary("drop", N1Q)  # postRollback purges what comes back too
    result = reconcile({N1Q: offered}, (), (), {}, primary, group, serial, 3)
    assert result.events == (Dropped(1, "n1", "q"),)
    with pytest.raises(UnexpectedRefusal, match="turned up"):  # the purged one must be gone
        reconcile({N1Q: offered}, (), (Place("t1", N1Q, None), Place("t2", N1Q, None)), {N1Q: ("t1", "t2")},
                  primary, group, serial, 3)
    first, offered, primary = close_return(held, waiting, ARRIVAL, purge=True)
    assert first == (Returned(1, "n1", "q"), Delivered(1, "n1", "q", None), Delivered(2, "n1", "q", None))
    assert primary == Primary("drop", N1Q)
    result = reconcile({N1Q: offered}, (), (), {}, primary, group, serial, 3)
    assert result.events == (Dropped(1, "n1", "q"), Dropped(2, "n1", "q"))
    with pytest.raises(UnexpectedRefusal, match="turned up"):  # a returned one that survived the purge
        reconcile({}, (), (Place("t1", N1Q, None),), {N1Q: ("t1",)}, primary, group, serial, 3)


def test_a_returned_message_is_matched_to_where_it_went() -> None:
    """Two returned to a queue without consumers: one moved to n2 (a copy under the next ID), one still waits."""
    held = (Instance(1, "t1", N1Q), Instance(3, "t3", N1Q))
    first, offered, primary = close_return(held, (), ARRIVAL, purge=False)
    places = (Place("t1", N2Q, "c2"), Place("t3", N1Q, None))
    result = reconcile({N1Q: offered}, (), places, {N1Q: ("t3",)}, primary, group, serial, 4)
    assert (*first, *result.events) == (
        Returned(1, "n1", "q"), Returned(3, "n1", "q"), Delivered(1, "n1", "q", None), Delivered(3, "n1", "q", None),
        Redistributed(1, "n1", "q", 4, "n2", "q"), Delivered(4, "n2", "q", "c2"))
    assert result.waiting == {N1Q: (Instance(3, "t3", N1Q),)}


# --- transacted sessions and what they give back (sessions.py, returns.py) ---------------------------------------


def test_a_commit_lands_its_sends_in_order_and_skips_a_queue_made_again_since() -> None:
    from brokerspec.artemis.sessions import PendingSend, commit_landings

    sf2 = "$.artemis.internal.sf.c0.id2"
    records = {"n1": [], "n2": [{"event": "route", "tag": "bs1.2", "queues": ["bs1.q"]}]}
    sends = (PendingSend(2, "bs1.2", ("bs1.q", sf2), {("n1", "q"): 1}),
             PendingSend(1, "bs1.1", ("bs1.q",), {("n1", "q"): 1}))
    landed = commit_landings("n1", sends, records, {sf2: "n2"}, "bs1.", {("n1", "q"): 1})
    assert [(i.id, i.key) for i in landed] == [(2, ("n1", "q")), (2, ("n2", "q")), (1, ("n1", "q"))]
    again = commit_landings("n1", sends, records, {sf2: "n2"}, "bs1.", {("n1", "q"): 3})  # deleted and made again
    assert [(i.id, i.key) for i in again] == [(2, ("n2", "q"))]
    places = [Place("bs1.1", N1Q, None), Place("bs1.2", N1Q, "c1")]
    result = reconcile({}, landed[:1] + landed[2:], places, {N1Q: ("bs1.1",)}, Primary("send"), group, serial, 3)
    assert result.events == (Delivered(1, "n1", "q", None), Delivered(2, "n1", "q", "c1"))  # by message, then queue


def test_a_session_refuses_a_send_from_another_node_or_in_a_consumer_that_is_not_transacted() -> None:
    from brokerspec.artemis.sessions import TxSession, end_refusal, send_refusal
    from brokerspec.spec.balancing import Refusal

    sessions = {"t1": TxSession("s", "n1"), "c2": TxSession("s2", "n2", consumer=True)}
    assert send_refusal("t1", "n1", sessions, {}) is None and send_refusal("t9", "n3", sessions, {}) is None
    assert send_refusal("t1", "n2", sessions, {}) is Refusal.SESSION_ON_OTHER_NODE
    assert send_refusal("c1", "n1", sessions, {"c1": False}) is Refusal.NOT_TRANSACTED
    assert send_refusal("c2", "n1", sessions, {"c2": True}) is Refusal.SESSION_ON_OTHER_NODE
    assert end_refusal("t1", sessions, {}) is None and end_refusal("c2", sessions, {"c2": 1}) is None
    assert end_refusal("c1", sessions, {"c1": 1}) is Refusal.NOT_TRANSACTED
    assert end_refusal("t9", sessions, {}) is Refusal.SESSION_NOT_FOUND


def test_a_rollback_gives_back_the_acknowledged_then_the_held_and_drops_those_out_of_deliveries() -> None:
    from brokerspec.artemis.returns import give_back

    acked, held = (Instance(3, "t3", N1Q), Instance(1, "t1", N1Q)), (Instance(4, "t4", N1Q),)
    waiting = (Instance(2, "t2", N1Q),)
    spent = {1: 9}
    first, offered, primary = give_back(N1Q, acked, held, waiting, ReturnOrder.HEAD, False, spent)
    assert first == (Dropped(1, "n1", "q"), Returned(3, "n1", "q"), Returned(4, "n1", "q"))
    assert [i.id for i in offered] == [3, 4, 2] and primary == Primary("offer", N1Q)
    assert spent == {1: 10, 3: 1}  # a held message spends no delivery
    first, offered, _ = give_back(N1Q, acked[:1], held, waiting, ReturnOrder.ARRIVAL, False, spent)
    assert [i.id for i in offered] == [2, 3, 4] and spent[3] == 2
    first, offered, primary = give_back(N1Q, acked[:1], held, waiting, ReturnOrder.ARRIVAL, True, spent)
    assert first == (Returned(3, "n1", "q"), Returned(4, "n1", "q"), Dropped(3, "n1", "q"), Dropped(4, "n1", "q"))
    assert offered == waiting and primary == Primary()
    assert give_back(N1Q, acked[1:], (), waiting, ReturnOrder.HEAD, False, spent) == (
        (Dropped(1, "n1", "q"),), waiting, Primary())  # nothing back, nothing offered


def test_what_no_consumer_takes_is_told_as_waiting_or_dropped() -> None:
    from brokerspec.artemis.returns import told

    waiting = (Instance(1, "t1", N1Q), Instance(2, "t2", N1Q))
    assert told(waiting, Primary("offer", N1Q)) == ((Delivered(1, "n1", "q", None), Delivered(2, "n1", "q", None)),
                                                   waiting)
    assert told(waiting, Primary("drop", N1Q)) == ((Dropped(1, "n1", "q"), Dropped(2, "n1", "q")), ())
    assert told(waiting, Primary()) == ((), waiting)


def test_a_transacted_consumer_that_acknowledges_at_once_keeps_what_it_takes_in_its_transaction() -> None:
    consumers = {"c1": ConsumerInfo("r1", "s1", N1Q, transacted=True),
                 "c2": ConsumerInfo("r2", "s2", N1Q, manual_ack=True, transacted=True)}
    taken = (("c1", Instance(1, "t1", N1Q)), ("c2", Instance(2, "t2", N1Q)))
    assert now_held({}, taken, consumers, acked=True) == {"c1": (Instance(1, "t1", N1Q),)}
    assert now_held({}, taken, consumers) == {"c2": (Instance(2, "t2", N1Q),)}
    deliveries = [{"consumer": "r1", "properties": {"_BS_TAG": "t3"}}]
    assert holding({"c1": (Instance(1, "t1", N1Q),)}, deliveries, consumers, "bs1.") == {("n1", "bs1.q"): 2}
