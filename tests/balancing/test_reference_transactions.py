"""The reference broker's transacted sessions against the spec's (LB-TX-SEND, LB-TX-COMMIT, LB-TX-ACK,
LB-TX-ROLLBACK, LB-TX-MAX-DELIVERY), under every profile.

Each script runs through the spec's ``apply`` and the reference broker side by side: after every command the
outcomes must be equal (events in order, refusals) and the reference's snapshot must be the spec's state. Each
test then asserts on the spec's outcomes that the script reached what it is about, so a script that stopped
exercising its case fails too.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from brokerspec.reference.balancing import ReferenceBalancingBroker, ServerSession
from brokerspec.spec import PROFILES, get_profile
from brokerspec.spec.addressing import RoutingType
from brokerspec.spec.profiles import ReturnOrder
from brokerspec.spec.balancing import (
    MAX_DELIVERY_ATTEMPTS,
    Ack,
    AddNode,
    Attach,
    BalancingCommand,
    BalancingOutcome,
    BalancingState,
    Close,
    Commit,
    Configure,
    CreateQueue,
    Delivered,
    DeleteQueue,
    Done,
    Dropped,
    Failed,
    LbType,
    QueryQueue,
    QueueQueried,
    Receive,
    Redistributed,
    Refusal,
    Refused,
    Resend,
    Returned,
    Rollback,
    RoutingStatus,
    Send,
    Sent,
    UpdateQueue,
    apply,
    initial_state,
    invariant_violations,
)

ANY, MULTI = RoutingType.ANYCAST, RoutingType.MULTICAST
PROFILE_NAMES = sorted(PROFILES)
assert {"seed", "artemis-2.11", "artemis-latest"} <= set(PROFILE_NAMES)


def lockstep(script: Sequence[BalancingCommand], profile: str,
             states: list[BalancingState] | None = None) -> list[BalancingOutcome]:
    """Run ``script`` through the spec and the reference; fail at the first outcome or state that differs.
    The spec's state after each step goes to ``states`` when given."""
    state = initial_state(get_profile(profile))
    broker = ReferenceBalancingBroker(get_profile(profile))
    outcomes: list[BalancingOutcome] = []
    for number, command in enumerate(script, 1):
        state, expected = apply(state, command)
        assert invariant_violations(state) == [], (number, command, invariant_violations(state))
        actual = broker.execute(command)
        assert actual == expected, f"step {number} {command}: spec {expected!r}, reference {actual!r}"
        snapshot = broker.snapshot()
        assert snapshot == state, f"step {number} {command}: states differ\nspec {state}\nreference {snapshot}"
        outcomes.append(expected)
        if states is not None:
            states.append(state)
    return outcomes


def events(outcome: BalancingOutcome) -> list[tuple[str, int, str, str | None]]:
    """The outcome's events, short: (kind, message, node/queue, consumer)."""
    assert isinstance(outcome, (Sent, Done, Failed)), outcome
    short: list[tuple[str, int, str, str | None]] = []
    for event in outcome.events:
        if isinstance(event, Delivered):
            short.append(("delivered", event.message, f"{event.node}/{event.queue}", event.consumer))
        elif isinstance(event, Returned):
            short.append(("returned", event.message, f"{event.node}/{event.queue}", None))
        elif isinstance(event, Dropped):
            short.append(("dropped", event.message, f"{event.node}/{event.queue}", None))
        elif isinstance(event, Redistributed):
            short.append(("redistributed", event.message, f"{event.to_node}/{event.to_queue}", None))
    return short


def refusal(outcome: BalancingOutcome) -> Refusal:
    assert isinstance(outcome, Refused), outcome
    return outcome.reason


def two_nodes(purge: bool = False) -> list[BalancingCommand]:
    """n1 and n2, an ON_DEMAND anycast ``a1`` redistributing at once, a queue ``a1`` on each."""
    return [AddNode("n2"), Configure("a1", LbType.ON_DEMAND, 0),
            CreateQueue("n1", "a1", "a1", ANY, purge_on_no_consumers=purge),
            CreateQueue("n2", "a1", "a1", ANY, purge_on_no_consumers=purge)]


parametrized = pytest.mark.parametrize("profile", PROFILE_NAMES)


@parametrized
def test_transacted_sends_to_local_and_remote_queues_land_at_the_commit_in_order(profile: str) -> None:
    script: list[BalancingCommand] = [*two_nodes(), Attach("c1", "n1", "a1"), Attach("c2", "n2", "a1"),
              *[Send("n1", "a1", tx="t") for _ in range(3)], QueryQueue("n1", "a1"), Commit("t"),
              Send("n1", "a1"), Commit("t")]
    outcomes = lockstep(script, profile)
    assert [events(o) for o in outcomes[6:9]] == [[], [], []]  # routed, not landed
    assert all(isinstance(o, Sent) and o.status is RoutingStatus.OK for o in outcomes[6:9])
    query = outcomes[9]
    assert isinstance(query, QueueQueried) and query.messages == 0
    assert events(outcomes[10]) == [("delivered", 1, "n1/a1", "c1"), ("delivered", 2, "n2/a1", "c2"),
                                    ("delivered", 3, "n1/a1", "c1")]
    assert events(outcomes[11]) == [("delivered", 4, "n2/a1", "c2")]  # the positions moved at the sends
    assert events(outcomes[12]) == []  # the session stays, with nothing in its transaction


@parametrized
def test_a_rollback_discards_the_sends_and_gives_back_no_round_robin_position(profile: str) -> None:
    script: list[BalancingCommand] = [*two_nodes(), Attach("c1", "n1", "a1"), Attach("c2", "n2", "a1"),
              Send("n1", "a1", tx="t"), Rollback("t"), Send("n1", "a1"), Commit("t")]
    outcomes = lockstep(script, profile)
    assert events(outcomes[7]) == []
    assert events(outcomes[8]) == [("delivered", 2, "n2/a1", "c2")]
    assert events(outcomes[9]) == []


@parametrized
def test_a_multicast_send_in_a_transaction_reaches_every_queue_at_the_commit(profile: str) -> None:
    script: list[BalancingCommand] = [AddNode("n2"), CreateQueue("n1", "m", "q1", MULTI), CreateQueue("n2", "m", "q2", MULTI),
              CreateQueue("n1", "m", "q3", MULTI), Send("n1", "m", tx="t"), Send("n1", "m", tx="t"), Commit("t")]
    outcomes = lockstep(script, profile)
    assert events(outcomes[6]) == [("delivered", 1, "n1/q1", None), ("delivered", 1, "n1/q3", None),
                                   ("delivered", 1, "n2/q2", None), ("delivered", 2, "n1/q1", None),
                                   ("delivered", 2, "n1/q3", None), ("delivered", 2, "n2/q2", None)]


@parametrized
@pytest.mark.parametrize("node", ["n1", "n2"])
def test_a_queue_deleted_before_the_commit_takes_the_message_and_one_made_again_gets_nothing(
        profile: str, node: str) -> None:
    other = "n2" if node == "n1" else "n1"
    script: list[BalancingCommand] = [AddNode("n2"), Configure("a1", LbType.STRICT, -1), CreateQueue("n1", "a1", "a1", ANY),
              CreateQueue("n2", "a1", "a1", ANY), Send("n1", "a1", tx="t"), Send("n1", "a1", tx="t"),
              DeleteQueue(node, "a1"), CreateQueue(node, "a1", "a1", ANY), Commit("t")]
    outcomes = lockstep(script, profile)
    assert [e[2] for e in events(outcomes[-1])] == [f"{other}/a1"]  # only the send routed to the other node lands


@parametrized
def test_a_queue_disabled_before_the_commit_drops_a_remote_send_but_not_a_local_one(profile: str) -> None:
    script: list[BalancingCommand] = [*two_nodes(), Send("n1", "a1", tx="t"), Send("n1", "a1", tx="t"),
              Attach("x", "n2", "a1"), Send("n1", "a1", tx="t"), Send("n1", "a1", tx="t"), Close("x"),
              UpdateQueue("n1", "a1", enabled=False), UpdateQueue("n2", "a1", enabled=False), Commit("t")]
    states: list[BalancingState] = []
    outcomes = lockstep(script, profile, states)
    pending = [send.queues for send in states[-2].sessions["t"].sends]
    assert pending == [(("n1", "a1"),), (("n1", "a1"),), (("n2", "a1"),), (("n2", "a1"),)]
    if not get_profile(profile).balancing.queue_enabled:  # a profile without disabled queues
        assert refusal(outcomes[-2]) is Refusal.NOT_SUPPORTED
        return
    assert {e[2] for e in events(outcomes[-1])} == {"n1/a1"}


@parametrized
def test_a_send_to_a_local_queue_that_drops_is_not_routed_and_a_send_with_no_bindings_still_opens_the_session(
        profile: str) -> None:
    script: list[BalancingCommand] = [CreateQueue("n1", "a1", "a1", ANY, purge_on_no_consumers=True), Send("n1", "a1", tx="t"),
              Send("n1", "nowhere", tx="u"), Attach("u", "n1", "a1"), Commit("u"), Commit("t")]
    outcomes = lockstep(script, profile)
    nowhere = outcomes[2]
    assert isinstance(nowhere, Sent) and nowhere.status is RoutingStatus.NO_BINDINGS
    assert refusal(outcomes[3]) is Refusal.SESSION_EXISTS
    assert events(outcomes[4]) == events(outcomes[5]) == []


@parametrized
def test_a_pushed_transacted_consumer_keeps_its_acknowledgements_until_the_commit(profile: str) -> None:
    script: list[BalancingCommand] = [CreateQueue("n1", "a1", "a1", ANY), Attach("c", "n1", "a1", transacted=True),
              Send("n1", "a1"), Send("n1", "a1"), QueryQueue("n1", "a1"), Rollback("c"), QueryQueue("n1", "a1"),
              Commit("c"), QueryQueue("n1", "a1")]
    outcomes = lockstep(script, profile)
    counts = [o.messages for o in outcomes if isinstance(o, QueueQueried)]
    assert counts == [2, 2, 0]
    assert events(outcomes[5]) == [("returned", 1, "n1/a1", None), ("returned", 2, "n1/a1", None),
                                   ("delivered", 1, "n1/a1", "c"), ("delivered", 2, "n1/a1", "c")]


@parametrized
def test_a_rollback_returns_what_was_acknowledged_then_what_is_held(profile: str) -> None:
    script: list[BalancingCommand] = [CreateQueue("n1", "a1", "a1", ANY), Send("n1", "a1"), Send("n1", "a1"), Send("n1", "a1"),
              Send("n1", "a1"), Attach("p", "n1", "a1", pull=True, manual_ack=True, transacted=True),
              Receive("p"), Receive("p"), Receive("p"), Ack("p", 2), Ack("p", 2), QueryQueue("n1", "a1"),
              Rollback("p"), Receive("p"), Ack("p"), Commit("p"), QueryQueue("n1", "a1")]
    states: list[BalancingState] = []
    outcomes = lockstep(script, profile, states)
    # acknowledged already, in the transaction: the held 3 joins the acknowledged ones, rollback-only (LB-ACK)
    assert outcomes[10] == Failed(Refusal.NOT_DELIVERED) and states[10].sessions["p"].rollback_only
    first = outcomes[11]
    assert isinstance(first, QueueQueried) and first.messages == 4
    assert [e[1] for e in events(outcomes[12]) if e[0] == "returned"] == [1, 2, 3]
    assert [m.deliveries for m in states[12].queues[("n1", "a1")].pending] == [1, 1, 1, 0], "3 spent one too"
    assert [e[1] for e in events(outcomes[12]) if e[0] == "delivered"] == [1, 2, 3, 4]
    assert events(outcomes[13]) == [("delivered", 1, "n1/a1", "p")]
    last = outcomes[-1]
    assert isinstance(last, QueueQueried) and last.messages == 3


@parametrized
def test_returns_go_to_the_head_or_among_the_waiting_messages_by_the_profiles_order(profile: str) -> None:
    script: list[BalancingCommand] = [CreateQueue("n1", "a1", "a1", ANY), Send("n1", "a1"), Send("n1", "a1", color="red"),
              Attach("p", "n1", "a1", "red", pull=True, transacted=True), Receive("p"),
              Attach("q", "n1", "a1", pull=True), Rollback("p"), Receive("q")]
    outcomes = lockstep(script, profile)
    head = get_profile(profile).balancing.close_return_order is ReturnOrder.HEAD
    assert events(outcomes[-1]) == [("delivered", 2 if head else 1, "n1/a1", "q")]


@parametrized
def test_a_producer_session_on_a_transacted_consumers_node_is_the_consumers_own(profile: str) -> None:
    script: list[BalancingCommand] = [*two_nodes(), Attach("c", "n1", "a1", transacted=True), Send("n1", "a1", tx="c"),
              Send("n2", "a1", tx="c"), Commit("c"), Commit("c"), Rollback("c")]
    outcomes = lockstep(script, profile)
    assert refusal(outcomes[6]) is Refusal.SESSION_ON_OTHER_NODE
    assert events(outcomes[7]) == [("delivered", 1, "n1/a1", "c")]  # landed, and acknowledged in the new one
    assert events(outcomes[8]) == []
    assert events(outcomes[9]) == []


@parametrized
def test_closing_a_transacted_consumer_returns_what_it_holds_then_rolls_its_session_back(profile: str) -> None:
    script: list[BalancingCommand] = [*two_nodes(), Attach("far", "n2", "a1"), Attach("c", "n1", "a1", manual_ack=True, transacted=True),
              Attach("d", "n1", "a1", pull=True), Send("n1", "a1"), Send("n1", "a1"), Send("n1", "a1"),
              Ack("c", 1), Close("c"), Send("n2", "a1", tx="c"), Commit("c")]
    outcomes = lockstep(script, profile)
    close = events(outcomes[-3])
    assert ("returned", 3, "n1/a1", None) in close and ("returned", 1, "n1/a1", None) in close
    assert close.index(("returned", 3, "n1/a1", None)) < close.index(("returned", 1, "n1/a1", None))
    assert not isinstance(outcomes[-2], Refused)  # the name is free again: a producer session on n2 now


@parametrized
def test_a_closed_transacted_consumers_rolled_back_messages_redistribute_as_new_references(profile: str) -> None:
    script: list[BalancingCommand] = [*two_nodes(), Attach("far", "n2", "a1", pull=True), Attach("c", "n1", "a1", transacted=True),
              Send("n1", "a1"), Rollback("c"), Rollback("c"), Close("c"), Receive("far")]
    outcomes = lockstep(script, profile)
    assert any(e[0] == "redistributed" for e in events(outcomes[-2]))


@parametrized
def test_a_purge_on_no_consumers_queue_drops_what_the_closing_transacted_consumer_acknowledged(profile: str) -> None:
    script: list[BalancingCommand] = [CreateQueue("n1", "a1", "a1", ANY, purge_on_no_consumers=True),
              Attach("c", "n1", "a1", manual_ack=True, transacted=True), Send("n1", "a1"), Send("n1", "a1"),
              Send("n1", "a1"), Ack("c", 2), Close("c")]
    outcomes = lockstep(script, profile)
    close = events(outcomes[-1])
    assert ("returned", 1, "n1/a1", None) in close and ("dropped", 1, "n1/a1", None) in close
    assert close.index(("returned", 1, "n1/a1", None)) < close.index(("dropped", 1, "n1/a1", None))


@parametrized
def test_the_tenth_rollback_of_an_acknowledged_message_drops_it(profile: str) -> None:
    script: list[BalancingCommand] = [
        CreateQueue("n1", "a1", "a1", ANY), Attach("c", "n1", "a1", transacted=True), Send("n1", "a1"),
        CreateQueue("n1", "a2", "a2", ANY), Attach("m", "n1", "a2", manual_ack=True, transacted=True),
        Send("n1", "a2"), *[Rollback(name) for _ in range(MAX_DELIVERY_ATTEMPTS) for name in ("c", "m")],
        QueryQueue("n1", "a1"), QueryQueue("n1", "a2")]
    outcomes = lockstep(script, profile)
    drops = [(i, e) for i, o in enumerate(outcomes[:-2]) for e in events(o) if e[0] == "dropped"]
    assert len(drops) == 1 and drops[0][1][1] == 1, drops  # message 2, only ever held, is never dropped
    assert drops[0][0] == len(outcomes) - 4  # c's tenth rollback
    assert [o.messages for o in outcomes[-2:] if isinstance(o, QueueQueried)] == [0, 1]


@parametrized
def test_only_the_rolled_back_queues_reference_counts_a_delivery(profile: str) -> None:
    script: list[BalancingCommand] = [
        CreateQueue("n1", "m", "q1", MULTI), CreateQueue("n1", "m", "q2", MULTI),
        Attach("c", "n1", "q1", transacted=True), Attach("d", "n1", "q2", transacted=True, pull=True),
        Send("n1", "m"), *[Rollback("c") for _ in range(MAX_DELIVERY_ATTEMPTS - 2)], Close("c"),
        Attach("c2", "n1", "q1", pull=True, transacted=True), Receive("c2"), Rollback("c2"),
        Receive("d"), Rollback("d"), Receive("d"), Commit("d")]
    outcomes = lockstep(script, profile)
    assert [e for e in events(outcomes[-5]) if e[0] == "dropped"] == [("dropped", 1, "n1/q1", None)]
    assert [e for o in outcomes[-4:] for e in events(o) if e[0] == "dropped"] == []


@parametrized
def test_the_refusals(profile: str) -> None:
    script: list[BalancingCommand] = [CreateQueue("n1", "a1", "a1", ANY), Attach("plain", "n1", "a1"), Commit("nobody"),
              Rollback("nobody"), Commit("plain"), Rollback("plain"), Send("n1", "a1", tx="plain"),
              Send("n1", "a1", tx="t"), Send("n2", "a1", tx="t"), AddNode("n2"), Send("n2", "a1", tx="t"),
              Attach("t", "n1", "a1"), Attach("plain", "n1", "a1", transacted=True), Commit("t")]
    outcomes = lockstep(script, profile)
    assert [refusal(outcomes[i]) for i in (2, 3, 4, 5, 6, 8, 10, 11, 12)] == [
        Refusal.SESSION_NOT_FOUND, Refusal.SESSION_NOT_FOUND, Refusal.NOT_TRANSACTED, Refusal.NOT_TRANSACTED,
        Refusal.NOT_TRANSACTED, Refusal.UNKNOWN_NODE, Refusal.SESSION_ON_OTHER_NODE, Refusal.SESSION_EXISTS,
        Refusal.CONSUMER_EXISTS]
    assert events(outcomes[-1]) == [("delivered", 1, "n1/a1", "plain")]


@parametrized
def test_a_refused_transacted_send_makes_no_queue_and_an_unknown_address_refuses_first(profile: str) -> None:
    script: list[BalancingCommand] = [AddNode("n2"), Configure("auto", LbType.ON_DEMAND, -1, auto_create_queues=True),
              Attach("t", "n1", "nothing"), CreateQueue("n1", "a1", "a1", ANY), Attach("t", "n1", "a1", transacted=True),
              Send("n2", "auto", routing_type=ANY, tx="t"), Send("n2", "none", routing_type=ANY, tx="t"),
              Send("n2", "auto", routing_type=ANY, tx="u"), Commit("u")]
    outcomes = lockstep(script, profile)
    assert refusal(outcomes[5]) is Refusal.SESSION_ON_OTHER_NODE
    assert isinstance(outcomes[6], Refused)  # ADDRESS_DOES_NOT_EXIST where sends check, else the session


@parametrized
def test_a_committed_send_crosses_its_bridge_once_and_a_resend_of_it_is_dropped(profile: str) -> None:
    """LB-BRIDGE-DUP at the commit: the message for two queues of n2 crosses once; resent, n2 drops it."""
    script: list[BalancingCommand] = [
        AddNode("n2"), CreateQueue("n2", "m", "q1", MULTI), CreateQueue("n2", "m", "q2", MULTI),
        Send("n1", "m", tx="t"), Commit("t"), Resend("n1", "n2"), Resend("n2", "n1"), DeleteQueue("n2", "q1"),
        Resend("n1", "n2"), Send("n1", "m", tx="t"), DeleteQueue("n2", "q2"), Commit("t"), Resend("n1", "n2")]
    states: list[BalancingState] = []
    outcomes = lockstep(script, profile, states)
    assert events(outcomes[4]) == [("delivered", 1, "n2/q1", None), ("delivered", 1, "n2/q2", None)]
    assert dict(states[4].bridge_ids.items()) == {("n2", "m"): (("n1", 1),)}
    assert all(events(o) == [] for c, o in zip(script, outcomes) if isinstance(c, Resend))
    assert events(outcomes[7]) == [("dropped", 1, "n2/q1", None)] and events(outcomes[-2]) == []
    assert states[-1].forwarded[("n1", "n2")].queues == (), states[-1].forwarded  # the last crossing was message 1's
    assert not states[-1].bridge_ids  # the address lost its last queue


def test_the_comparison_catches_a_reference_that_forgets_its_transaction(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lockstep helper fails when the reference's commit delivers nothing (so these tests can fail)."""
    monkeypatch.setattr(ServerSession, "commit", lambda self: True)
    with pytest.raises(AssertionError, match="step 4"):
        lockstep([CreateQueue("n1", "a1", "a1", ANY), Send("n1", "a1", tx="t"), Send("n1", "a1", tx="t"),
                  Commit("t")], "artemis-latest")
