"""The fast broker's transacted sessions in lockstep with the spec, script by script, under every profile.

Each script runs through :class:`~brokerspec.check.lockstep.Lockstep`: at
every step the fast broker's outcome (events in order, refusals) must equal
the spec's ``apply``, its snapshot (sessions and their kept sends, acked
messages, delivery counts) the spec's state, and its private invariants must
hold. Each script also asserts what the spec does with it, so that it
reaches the behaviour it is named for (LB-TX-SEND, LB-TX-COMMIT, LB-TX-ACK,
LB-TX-ROLLBACK, LB-TX-MAX-DELIVERY). The last tests give brokers that each
break one of those rules to the same scripts, which must catch every one,
and corrupt the session records, which the private check must name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from brokerspec.check.domains import BALANCING
from brokerspec.check.lockstep import DivergenceError, Lockstep
from brokerspec.impl.balancing import ConsumerRecord, FastBalancingBroker, QueueRecord, Waiting
from brokerspec.impl.balancing.sessions import HeldSend, SessionRecord
from brokerspec.spec import PROFILES, InvariantBroken, Profile, get_profile
from brokerspec.spec.profiles import ReturnOrder
from brokerspec.spec.addressing import RoutingType
from brokerspec.spec.balancing import (
    MAX_DELIVERY_ATTEMPTS,
    Ack,
    AddNode,
    Attach,
    BalancingCommand,
    BalancingOutcome,
    Close,
    Commit,
    Configure,
    CreateQueue,
    DeleteQueue,
    Delivered,
    Done,
    Dropped,
    Event,
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
    SetLink,
    UpdateQueue,
)

ANY, MULTI = RoutingType.ANYCAST, RoutingType.MULTICAST
EVERY_PROFILE = [get_profile(name) for name in PROFILES]
Broker = Callable[[Profile], FastBalancingBroker]


def lockstep(script: Sequence[BalancingCommand], profile: Profile,
             broker: Broker = FastBalancingBroker) -> list[BalancingOutcome]:
    """The spec's outcomes of ``script``; raises DivergenceError where ``broker`` parts from the spec."""
    checker = Lockstep(profile, {"impl": broker}, BALANCING)
    outcomes: list[BalancingOutcome] = []
    for command in script:
        outcome = checker.step(command)
        assert isinstance(outcome, (Sent, Done, Refused, Failed, QueueQueried))
        outcomes.append(outcome)
    return outcomes


def events(outcome: BalancingOutcome) -> list[tuple[str, int, str | None]]:
    """The events of a step as (kind, message, consumer or queue) triples."""
    assert isinstance(outcome, (Sent, Done, Failed)), outcome
    found: list[tuple[str, int, str | None]] = []
    for event in outcome.events:
        if isinstance(event, Delivered):
            found.append(("delivered", event.message, event.consumer))
        elif isinstance(event, Redistributed):
            found.append(("redistributed", event.message, event.to_node))
        else:
            assert isinstance(event, (Dropped, Returned))
            found.append((type(event).__name__.lower(), event.message, event.queue))
    return found


def refusal(outcome: BalancingOutcome) -> Refusal:
    assert isinstance(outcome, Refused), outcome
    return outcome.reason


def count(outcome: BalancingOutcome) -> int:
    assert isinstance(outcome, QueueQueried) and outcome.exists, outcome
    return outcome.messages


# --- the scripts ---------------------------------------------------------------------------------

TWO_NODES: list[BalancingCommand] = [
    AddNode("n2"), Configure("a1", LbType.ON_DEMAND), CreateQueue("n1", "a1", "a1", ANY),
    CreateQueue("n2", "a1", "a1", ANY), Attach("c1", "n1", "a1"), Attach("c2", "n2", "a1")]

SENDS_LOCAL_AND_REMOTE: list[BalancingCommand] = [
    *TWO_NODES,
    *[Send("n1", "a1", tx="t1") for _ in range(3)],  # 6-8: routed n1, n2, n1; nothing lands yet
    QueryQueue("n1", "a1"),  # 9
    Commit("t1"),  # 10: all three land, in send order
    Send("n1", "a1", tx="t1"), Rollback("t1"),  # 11-12: routed to n2 and discarded; the position stays moved
    Send("n1", "a1"),  # 13: so the next plain send goes to n1
    Commit("t1"), Rollback("t1"),  # 14-15: an empty session ends again
    Send("n2", "a1", tx="t2"), Send("n2", "a1", tx="t2"), Commit("t2"),  # 16-18: a session on n2
]


def test_sends_wait_for_the_commit_and_routing_is_decided_at_the_send() -> None:
    """LB-TX-SEND, LB-TX-COMMIT; the rolled-back send keeps the round robin moved."""
    for profile in EVERY_PROFILE:
        out = lockstep(SENDS_LOCAL_AND_REMOTE, profile)
        assert all(isinstance(o, Sent) and o.status is RoutingStatus.OK and o.events == () for o in out[6:9])
        assert count(out[9]) == 0
        assert events(out[10]) == [("delivered", 1, "c1"), ("delivered", 2, "c2"), ("delivered", 3, "c1")]
        assert events(out[12]) == []
        assert events(out[13]) == [("delivered", 5, "c1")]
        assert events(out[18]) == [("delivered", 6, "c1"), ("delivered", 7, "c2")]  # n2 keeps its own position


QUEUE_DELETED_BEFORE_COMMIT: list[BalancingCommand] = [
    AddNode("n2"), Configure("a1", LbType.ON_DEMAND),
    CreateQueue("n1", "a1", "a1", ANY), CreateQueue("n1", "a1", "q1", MULTI), CreateQueue("n2", "a1", "q2", MULTI),
    Send("n1", "a1", tx="t1"),  # 5: message 1 for a1, q1 and q2
    Send("n1", "a1", MULTI, tx="t1"),  # 6: message 2 for q1 and q2
    Send("n1", "a1", ANY, tx="t1"),  # 7: message 3 for a1 alone
    DeleteQueue("n1", "a1"), CreateQueue("n1", "a1", "a1", ANY),  # 8-9: a1 made again under its name
    DeleteQueue("n1", "q1"),  # 10
    Commit("t1"),  # 11: 1 and 2 reach q2 only; the new a1 and nothing else gets 3
    QueryQueue("n1", "a1"), QueryQueue("n2", "q2"),
]


def test_a_queue_deleted_before_the_commit_takes_its_messages_and_one_made_again_gets_none() -> None:
    """LB-TX-COMMIT: the references hold the queue, not its name."""
    for profile in EVERY_PROFILE:
        out = lockstep(QUEUE_DELETED_BEFORE_COMMIT, profile)
        assert events(out[8]) == [] and events(out[10]) == []  # nothing waited there yet
        assert events(out[11]) == [("delivered", 1, None), ("delivered", 2, None)]
        assert count(out[12]) == 0 and count(out[13]) == 2


TRANSACTED_CONSUMERS: list[BalancingCommand] = [
    CreateQueue("n1", "a1", "a1", ANY),
    Attach("x", "n1", "a1", transacted=True),  # 1: pushed to, acknowledging each message in its transaction
    Send("n1", "a1"), Send("n1", "a1"),  # 2-3
    QueryQueue("n1", "a1"),  # 4: both still count
    Commit("x"), QueryQueue("n1", "a1"),  # 5-6: final
    Send("n1", "a1"), Rollback("x"),  # 7-8: message 3 comes back and x takes it again
    Send("n1", "a1", tx="x"),  # 9: a send in x's own session
    Close("x"),  # 10: the session rolls back: 3 is given back and waits; the send 4 is gone
    Attach("p", "n1", "a1", pull=True, manual_ack=True, transacted=True),  # 11
    Receive("p"), Send("n1", "a1"), Receive("p"), Receive("p"),  # 12-15: p holds 3 and 5
    Ack("p", 3), QueryQueue("n1", "a1"),  # 16-17: 3 acknowledged in the transaction, 5 held
    Ack("p", 3),  # 18: no longer held: fails, 5 joins the acknowledged, the transaction is rollback-only
    Rollback("p"),  # 19: 3 and 5 (a delivery more each) come back and wait
    Receive("p"), Ack("p"), Commit("p"), QueryQueue("n1", "a1"),  # 20-23
    Close("p"),  # 24: 5 was held: back, waits
    Attach("m", "n1", "a1", manual_ack=True, transacted=True),  # 25: takes 5 at once
    Send("n1", "a1"), Send("n1", "a1"),  # 26-27: and 6, 7
    Ack("m", 6),  # 28: 5 and 6 acknowledged, 7 held
    Rollback("m"),  # 29: back 5, 6 (acknowledged) then 7 (held), and m takes them again
    Ack("m"), Close("m"),  # 30-31: closing rolls the acknowledgements back
    QueryQueue("n1", "a1"),
]


def test_transacted_consumers_acknowledge_in_their_transaction() -> None:
    """LB-TX-ACK and LB-TX-ROLLBACK for consumers pushed to, pulling and acknowledging later."""
    for profile in EVERY_PROFILE:
        out = lockstep(TRANSACTED_CONSUMERS, profile)
        assert count(out[4]) == 2 and count(out[6]) == 0
        assert events(out[8]) == [("returned", 3, "a1"), ("delivered", 3, "x")]
        assert events(out[10]) == [("returned", 3, "a1"), ("delivered", 3, None)]
        assert events(out[14]) == [("delivered", 5, "p")]
        assert count(out[17]) == 2
        assert out[18] == Failed(Refusal.NOT_DELIVERED)
        assert events(out[19]) == [("returned", 3, "a1"), ("returned", 5, "a1"), ("delivered", 3, None),
                                   ("delivered", 5, None)]
        assert events(out[20]) == [("delivered", 3, "p")]
        assert count(out[23]) == 1
        assert events(out[29]) == [("returned", 5, "a1"), ("returned", 6, "a1"), ("returned", 7, "a1"),
                                   ("delivered", 5, "m"), ("delivered", 6, "m"), ("delivered", 7, "m")]
        assert events(out[31]) == [("returned", 5, "a1"), ("returned", 6, "a1"), ("returned", 7, "a1"),
                                   ("delivered", 5, None), ("delivered", 6, None), ("delivered", 7, None)]
        assert count(out[32]) == 3


CLOSE_GIVES_BACK_AND_REDISTRIBUTES: list[BalancingCommand] = [
    AddNode("n2"), Configure("a1", LbType.ON_DEMAND, 0),
    CreateQueue("n1", "a1", "a1", ANY), CreateQueue("n2", "a1", "a1", ANY),
    Attach("x", "n1", "a1", manual_ack=True, transacted=True),  # 4
    Send("n1", "a1"), Send("n1", "a1"), Send("n1", "a1"),  # 5-7: all to x (n2 has no consumer)
    Ack("x", 1), Rollback("x"), Ack("x", 2),  # 8-10: 1 used a delivery; 1 and 2 acknowledged, 3 held
    Attach("r", "n2", "a1", pull=True),  # 11: a consumer on n2 to redistribute to
    Close("x"),  # 12: 3 back (held), then 1 and 2 (acknowledged), all redistributed, as copies counting 0
    Receive("r"), QueryQueue("n2", "a1"),
]


def test_closing_a_transacted_consumer_returns_what_it_held_then_what_it_acknowledged() -> None:
    """LB-CLOSE-RETURNS then LB-TX-ROLLBACK; the queue left without consumers redistributes them (RD-TRIGGER-CLOSE)."""
    for profile in EVERY_PROFILE:
        out = lockstep(CLOSE_GIVES_BACK_AND_REDISTRIBUTES, profile)
        closing = [(kind, number) for kind, number, _ in events(out[12]) if kind != "delivered"]
        assert closing == [("returned", 3), ("returned", 1), ("returned", 2), ("redistributed", 1),
                           ("redistributed", 2), ("redistributed", 3)]
        assert events(out[13]) == [("delivered", 4, "r")]
        assert count(out[14]) == 2


PURGING: list[BalancingCommand] = [
    AddNode("n2"), Configure("a1", LbType.ON_DEMAND),
    CreateQueue("n1", "a1", "a1", ANY, purge_on_no_consumers=True),
    Attach("x", "n1", "a1", transacted=True),  # 3
    Send("n1", "a1"), Send("n1", "a1"),  # 4-5: x acknowledged 1 and 2 in its transaction
    Close("x"),  # 6: they come back to a queue that purges and has no consumer: dropped
    Send("n1", "a1", tx="t1"),  # 7: a local queue that drops takes nothing, even in a transaction
    Attach("c", "n1", "a1"), Send("n1", "a1", tx="t1"), Close("c"),  # 8-10: taken at the send ...
    Commit("t1"),  # 11: ... so it lands after all, and waits
    CreateQueue("n2", "a1", "a1", ANY, purge_on_no_consumers=True), Attach("d", "n2", "a1"),  # 12-13
    Send("n1", "a1", tx="t1"), Send("n1", "a1", tx="t1"),  # 14-15: both to n2, whose consumer attracts them
    Close("d"), Commit("t1"),  # 16-17: n2's queue purges now: they are dropped as they arrive
    QueryQueue("n1", "a1"), QueryQueue("n2", "a1"),  # 18-19
    Attach("y", "n1", "a1", transacted=True), Rollback("y"),  # 20-21: y takes 4, and takes it back again
    QueryQueue("n1", "a1"),  # 22
    Configure("a3", LbType.ON_DEMAND), Configure("a4", LbType.ON_DEMAND),
    CreateQueue("n2", "a3", "a3", ANY, purge_on_no_consumers=True),
    CreateQueue("n1", "a4", "a4", ANY, purge_on_no_consumers=True),  # 23-26
    Send("n1", "a3", tx="t1"), Send("n2", "a4", tx="t2"),  # 27-28: remote queues that drop now count as routed
    Attach("e", "n2", "a3"), Attach("f", "n1", "a4"),  # 29-30: and take messages again before the commits
    Commit("t1"), Commit("t2"),  # 31-32
    Close("f"), Send("n1", "a4"),  # 33-34: a plain send that only a dropping local queue takes is unrouted
]


def test_a_purge_on_no_consumers_queue_drops_returns_and_remote_commits_but_not_local_ones() -> None:
    """LB-PURGE-ON-NO-CONSUMERS with LB-TX-SEND, LB-TX-COMMIT, LB-TX-ROLLBACK."""
    for profile in EVERY_PROFILE:
        out = lockstep(PURGING, profile)
        assert events(out[6]) == [("returned", 1, "a1"), ("returned", 2, "a1"), ("dropped", 1, "a1"),
                                  ("dropped", 2, "a1")]
        sent = out[7]
        assert isinstance(sent, Sent) and sent.status.value == profile.balancing.unrouted_status.value
        assert events(out[11]) == [("delivered", 4, None)]
        assert events(out[17]) == []
        assert count(out[18]) == 1 and count(out[19]) == 0
        assert events(out[21]) == [("returned", 4, "a1"), ("delivered", 4, "y")]  # the queue has a consumer
        assert count(out[22]) == 1
        assert all(isinstance(o, Sent) and o.status is RoutingStatus.OK for o in out[27:29])
        assert events(out[31]) == [("delivered", 7, "e")] and events(out[32]) == [("delivered", 8, "f")]
        unrouted = out[34]
        assert isinstance(unrouted, Sent) and unrouted.status.value == profile.balancing.unrouted_status.value


MAX_DELIVERIES: list[BalancingCommand] = [
    CreateQueue("n1", "a1", "a1", ANY), Attach("x", "n1", "a1", transacted=True), Send("n1", "a1"),
    *[Rollback("x") for _ in range(MAX_DELIVERY_ATTEMPTS)],  # 3-12: the tenth drops it
    QueryQueue("n1", "a1"),
    Send("n1", "a1"), Attach("p", "n1", "a1", pull=True, manual_ack=True, transacted=True),  # 14-15
    Close("x"),  # 16: message 2's delivery to x comes back (1 used)
    *[step for _ in range(MAX_DELIVERY_ATTEMPTS) for step in (Receive("p"), Ack("p"), Rollback("p"))],
    QueryQueue("n1", "a1"),
]


def test_the_tenth_rollback_of_an_acknowledged_message_drops_it() -> None:
    """LB-TX-MAX-DELIVERY: a held message spends no delivery, an acknowledged one does."""
    for profile in EVERY_PROFILE:
        out = lockstep(MAX_DELIVERIES, profile)
        for step in out[3:12]:
            assert events(step) == [("returned", 1, "a1"), ("delivered", 1, "x")]
        assert events(out[12]) == [("dropped", 1, "a1")]
        assert count(out[13]) == 0
        rollbacks = [events(step) for step in out[19:-1:3]]
        assert rollbacks[:8] == [[("returned", 2, "a1"), ("delivered", 2, None)]] * 8
        assert rollbacks[8] == [("dropped", 2, "a1")]
        assert rollbacks[9] == []  # nothing left to receive
        assert count(out[-1]) == 0


REFUSALS: list[BalancingCommand] = [
    AddNode("n2"), CreateQueue("n1", "a1", "a1", ANY), Attach("c", "n1", "a1"),
    Commit("nobody"), Rollback("nobody"),  # 3-4: SESSION_NOT_FOUND
    Send("n1", "a1", tx="c"), Commit("c"), Rollback("c"),  # 5-7: NOT_TRANSACTED
    Send("n1", "a1", tx="t1"), Attach("t1", "n1", "a1"),  # 8-9: SESSION_EXISTS
    Send("n2", "a1", tx="t1"),  # 10: SESSION_ON_OTHER_NODE
    Attach("x", "n1", "a1", transacted=True), Send("n2", "a1", tx="x"),  # 11-12: SESSION_ON_OTHER_NODE
    Attach("c", "n1", "a1", transacted=True), Attach("x", "n1", "a1"),  # 13-14: CONSUMER_EXISTS first
    Send("n9", "a1", tx="t1"),  # 15: UNKNOWN_NODE
    Configure("a9", LbType.ON_DEMAND, auto_create_queues=True),
    Send("n2", "a9", ANY, tx="t1"),  # 17: refused, and the queue auto-creation would make is not made
    QueryQueue("n2", "a9"),
    Send("n2", "a8", ANY, tx="t1"),  # 19: latest: no auto-creation for a8, which comes first
    Close("x"), Commit("x"),  # 20-21: its session is gone with it
    Send("n2", "a1", tx="x"), Commit("x"),  # 22-23: the name is free for a producer session on n2
    Attach("x", "n1", "a1"),  # 24: SESSION_EXISTS
    Send("n1", "a1", tx="x"),  # 25: SESSION_ON_OTHER_NODE, the other node sorting first
    Send("n1", "a9", ANY, tx="t1"), QueryQueue("n1", "a9"),  # 26-27: accepted, the queue made (latest)
]


def test_every_new_refusal() -> None:
    """NOT_TRANSACTED, SESSION_NOT_FOUND, SESSION_EXISTS, SESSION_ON_OTHER_NODE, and their order among the others."""
    for profile in EVERY_PROFILE:
        out = lockstep(REFUSALS, profile)
        reasons = {number: refusal(out[number]) for number in (3, 4, 5, 6, 7, 9, 10, 12, 13, 14, 15, 24, 25)}
        assert reasons == {3: Refusal.SESSION_NOT_FOUND, 4: Refusal.SESSION_NOT_FOUND, 5: Refusal.NOT_TRANSACTED,
                           6: Refusal.NOT_TRANSACTED, 7: Refusal.NOT_TRANSACTED, 9: Refusal.SESSION_EXISTS,
                           10: Refusal.SESSION_ON_OTHER_NODE, 12: Refusal.SESSION_ON_OTHER_NODE,
                           13: Refusal.CONSUMER_EXISTS, 14: Refusal.CONSUMER_EXISTS, 15: Refusal.UNKNOWN_NODE,
                           24: Refusal.SESSION_EXISTS, 25: Refusal.SESSION_ON_OTHER_NODE}
        assert refusal(out[21]) is Refusal.SESSION_NOT_FOUND
        assert isinstance(out[22], Sent) and isinstance(out[23], Done)
        made = out[18]
        assert isinstance(made, QueueQueried) and not made.exists
        if profile.name == "artemis-latest":
            assert refusal(out[17]) is Refusal.SESSION_ON_OTHER_NODE
            assert refusal(out[19]) is Refusal.ADDRESS_DOES_NOT_EXIST
            made = out[27]
            assert isinstance(made, QueueQueried) and made.exists


DISABLED: list[BalancingCommand] = [
    AddNode("n2"), Configure("a2", LbType.ON_DEMAND),
    CreateQueue("n1", "a1", "a1", ANY), CreateQueue("n2", "a2", "a2", ANY),  # 2-3: a2 is remote from n1
    UpdateQueue("n1", "a1", enabled=False),  # 4
    Send("n1", "a1", tx="t1"),  # 5: the local queue drops its message at once
    UpdateQueue("n1", "a1", enabled=True), Send("n1", "a1", tx="t1"), Send("n1", "a2", tx="t1"),  # 6-8
    UpdateQueue("n1", "a1", enabled=False), UpdateQueue("n2", "a2", enabled=False),  # 9-10
    Commit("t1"),  # 11: the local one lands all the same, the remote one is dropped as it arrives
    QueryQueue("n1", "a1"), QueryQueue("n2", "a2"),
]


def test_a_disabled_queue_drops_a_transacted_send_at_the_send_when_local_and_at_the_commit_when_remote() -> None:
    """LB-QUEUE-ENABLED with LB-TX-SEND and LB-TX-COMMIT (profiles without disabled queues refuse the updates)."""
    for profile in EVERY_PROFILE:
        out = lockstep(DISABLED, profile)
        if profile.balancing.queue_enabled:
            dropped = out[5]
            assert isinstance(dropped, Sent) and dropped.status.value == profile.balancing.unrouted_status.value
            assert events(out[11]) == [("delivered", 2, None)]
            assert count(out[12]) == 1 and count(out[13]) == 0


RETURN_ORDER: list[BalancingCommand] = [
    CreateQueue("n1", "a1", "a1", ANY), Attach("p", "n1", "a1", "red", pull=True, transacted=True),
    Attach("q", "n1", "a1", pull=True),
    Send("n1", "a1", color="blue"), Send("n1", "a1", color="red"), Receive("p"),  # 3-5: p takes 2, 1 waits
    Rollback("p"),  # 6: 2 back before 1 (2.11, addHead) or after it (addSorted)
    Receive("q"),
]


def test_a_rollback_returns_as_the_profile_says() -> None:
    """LB-TX-ROLLBACK with ``close_return_order``."""
    for profile in EVERY_PROFILE:
        out = lockstep(RETURN_ORDER, profile)
        first = 2 if profile.balancing.close_return_order is ReturnOrder.HEAD else 1
        assert events(out[7]) == [("delivered", first, "q")]


ALL_SCRIPTS = {
    "sends": SENDS_LOCAL_AND_REMOTE, "deleted": QUEUE_DELETED_BEFORE_COMMIT, "consumers": TRANSACTED_CONSUMERS,
    "close": CLOSE_GIVES_BACK_AND_REDISTRIBUTES, "purging": PURGING, "max": MAX_DELIVERIES,
    "refusals": REFUSALS, "disabled": DISABLED, "order": RETURN_ORDER,
}


# --- the cluster bridge (LB-BRIDGE-DUP), which a commit crosses too -------------------------------

BRIDGES: list[BalancingCommand] = [
    AddNode("n2"), AddNode("n3"), Configure("a1", LbType.ON_DEMAND, 0), Configure("a2", LbType.ON_DEMAND),
    CreateQueue("n1", "a1", "a1", ANY), CreateQueue("n2", "a1", "a1", ANY),
    CreateQueue("n2", "a2", "s1", MULTI), CreateQueue("n2", "a2", "s2", MULTI),  # 4-7
    Attach("c2", "n2", "a1"), Send("n1", "a1"),  # 8-9: message 1 crosses to n2
    Resend("n1", "n2"), Resend("n2", "n1"), Resend("n1", "n1"), Resend("n1", "n9"),  # 10-13
    Close("c2"), Send("n2", "a1"), Attach("c1", "n1", "a1", pull=True),  # 14-16: 2 waits on n2, goes to n1 as 3
    Resend("n2", "n1"), Close("c1"), Attach("c2", "n2", "a1"),  # 17-19: and back again as 4, a copy of a copy
    Resend("n1", "n2"),  # 20
    Send("n1", "a2"), Resend("n1", "n2"),  # 21-22: one crossing for two queues on n2
    Send("n1", "a2", tx="t1"), Commit("t1"), Resend("n1", "n2"),  # 23-25: a commit crosses as a send does
    SetLink("n1", "n2", False), Resend("n1", "n2"), SetLink("n1", "n2", True),  # 26-28: a link that is down
    DeleteQueue("n2", "s1"), Resend("n1", "n2"),  # 29-30: s1 is gone from the crossing
    CreateQueue("n2", "a3", "u2", MULTI), CreateQueue("n3", "a3", "u3", MULTI), Send("n1", "a3"),  # 31-33
    DeleteQueue("n2", "s2"), CreateQueue("n2", "a2", "s2", MULTI), Resend("n1", "n2"),  # 34-36: a2 forgotten
    QueryQueue("n2", "s2"), Resend("n1", "n3"),  # 37-38
]
ALL_SCRIPTS["bridges"] = BRIDGES


def test_what_crosses_the_bridge_arrives_once() -> None:
    """LB-BRIDGE-DUP: a resend is dropped by its bridge ID, a redistributed copy crosses under its own."""
    for profile in EVERY_PROFILE:
        out = lockstep(BRIDGES, profile)
        assert events(out[9]) == [("delivered", 1, "c2")]
        assert [events(step) for step in out[10:12]] == [[], []]
        assert refusal(out[12]) is Refusal.BAD_VALUE and refusal(out[13]) is Refusal.UNKNOWN_NODE
        kinds = [[(kind, where) for kind, _, where in events(step)] if isinstance(step, (Sent, Done)) else []
                 for step in out]
        assert kinds[16] == [("redistributed", "n1"), ("delivered", None)] and kinds[17] == []
        assert kinds[19] == [("redistributed", "n2"), ("delivered", "c2")] and kinds[20] == []
        assert kinds[21] == kinds[24] == [("delivered", None), ("delivered", None)]
        assert kinds[22] == kinds[25] == []
        assert kinds[33] == [("delivered", None), ("delivered", None)]  # one crossing to each node
        assert events(out[27]) == [] and events(out[30]) == [] and events(out[36]) == [] and events(out[38]) == []
        assert count(out[37]) == 0


def test_a_bridge_cache_evicts_its_oldest_id(monkeypatch: pytest.MonkeyPatch) -> None:
    """``id-cache-size`` (the spec's BRIDGE_ID_CACHE_SIZE, made 2 here in the spec and the fast broker alike)."""
    import brokerspec.impl.balancing.bridges as fast
    import brokerspec.spec.balancing.bridges as spec

    monkeypatch.setattr(spec, "BRIDGE_ID_CACHE_SIZE", 2)
    monkeypatch.setattr(fast, "BRIDGE_ID_CACHE_SIZE", 2)
    script: list[BalancingCommand] = [
        AddNode("n2"), AddNode("n3"), Configure("a1", LbType.ON_DEMAND), CreateQueue("n2", "a1", "a1", ANY),
        Attach("c", "n2", "a1"),
        *[Send("n1", "a1") for _ in range(4)], Resend("n1", "n2"),  # 5-9: the last crossing is still known
        Send("n3", "a1"), Send("n3", "a1"), Resend("n1", "n2")]  # 10-12: now it is not, and arrives twice
    checker = Lockstep(get_profile("artemis-latest"), {"impl": FastBalancingBroker}, BALANCING)
    out = [checker.step(command) for command in script]
    assert out[9] == Done() and out[12] == Done((Delivered(4, "n2", "a1", "c"),))
    assert checker.state.bridge_ids[("n2", "a1")] == (("n3", 6), ("n1", 4))


# --- brokers with one rule broken: the scripts must catch each -----------------------------------


class RollbackSpendsNothing(FastBalancingBroker):
    """A rollback gives acknowledged messages back without counting a delivery (against LB-TX-MAX-DELIVERY)."""

    def _give_back(self, queue: QueueRecord, acked: list[Waiting], held: list[Waiting],
                   events: list[Event]) -> None:
        super()._give_back(queue, [], [*acked, *held], events)


class AcknowledgedAtOnce(FastBalancingBroker):
    """A transacted consumer's acknowledgements are final at once (against LB-TX-ACK)."""

    def _rollback(self, command: Rollback, events: list[Event]) -> Refused | None:
        consumer = self._consumers.get(command.session)
        if consumer is not None:
            consumer.acked = []
        return super()._rollback(command, events)


class HeldBeforeAcknowledged(FastBalancingBroker):
    """A rollback gives back what the consumer holds before what it acknowledged (against LB-TX-ROLLBACK)."""

    def _give_back(self, queue: QueueRecord, acked: list[Waiting], held: list[Waiting],
                   events: list[Event]) -> None:
        super()._give_back(queue, [], held, events)
        super()._give_back(queue, acked, [], events)


class DeletedQueueKept(FastBalancingBroker):
    """A deleted queue's references stay in the transactions, and a queue made again under the name gets them
    (against LB-TX-COMMIT)."""

    def _forget_queue(self, queue: QueueRecord) -> None:
        for session in self._sessions.values():
            session.sends = [HeldSend(held.message, tuple(self._queues.get(q.key, q) for q in held.queues))
                             for held in session.sends]

    def _commit(self, command: Commit, events: list[Event]) -> Refused | Failed | None:
        session = self._sessions.get(command.session)
        if session is not None:
            session.sends = [HeldSend(held.message, tuple(q for q in (self._queues.get(q.key) for q in held.queues)
                                                          if q is not None))
                             for held in session.sends]
        return super()._commit(command, events)

    def check_valid(self) -> None:
        pass  # it means to keep them


class LocalSendDroppedAtCommit(FastBalancingBroker):
    """A local queue decides at the commit whether it drops the message, as a remote one does (against LB-TX-COMMIT)."""

    def _land(self, queue: QueueRecord, message: Waiting, events: list[Event]) -> None:
        if queue.drops() and message.id not in {m.id for m in queue.pending}:
            return
        super()._land(queue, message, events)


class RollbackGivesPositionsBack(FastBalancingBroker):
    """A rolled-back send is not routed at all: the round robin stays where it was (against LB-TX-SEND)."""

    def _hold_send(self, session: SessionRecord, landed: list[QueueRecord], message: Waiting) -> RoutingStatus:
        for by_name in self._groups[session.node].values():
            for group in by_name.values():
                group.position = max(group.position - 1, 0)
        return super()._hold_send(session, landed, message)


class CloseKeepsSession(FastBalancingBroker):
    """Closing a transacted consumer leaves its session open (against LB-TX-ROLLBACK)."""

    def _close_session(self, consumer: ConsumerRecord, events: list[Event]) -> None:
        pass


class NoBridgeIds(FastBalancingBroker):
    """The receiving node takes every crossing in, a resend too (against LB-BRIDGE-DUP)."""

    def _admit(self, node: str, address: str, bridge_id: tuple[str, int]) -> bool:
        return True


class CopyCrossesUnderItsOriginalId(FastBalancingBroker):
    """A redistributed copy crosses under the ID of the message first sent, not its own, so one going back
    and forth can be taken for a duplicate (against LB-BRIDGE-DUP, ARTEMIS-4312)."""

    def __init__(self, profile: Profile) -> None:
        super().__init__(profile)
        self._first_of: dict[int, int] = {}
        self._moving: int | None = None

    def _redistribute(self, origin: QueueRecord, message: Waiting, events: list[Event]) -> bool:
        self._moving = self._first_of.get(message.id, message.id)
        try:
            return super()._redistribute(origin, message, events)
        finally:
            self._moving = None

    def _cross(self, source: str, message: Waiting, queues: tuple[QueueRecord, ...], events: list[Event]) -> None:
        if self._moving is None:
            super()._cross(source, message, queues, events)
            return
        self._first_of[message.id] = self._moving
        self._forwarded[(source, queues[0].node)] = (message, queues)
        if self._admit(queues[0].node, message.address, (source, self._moving)):
            for queue in queues:
                self._routed_to(queue, message, events)


MUTANTS: dict[str, tuple[Broker, str]] = {
    "rollback spends nothing": (RollbackSpendsNothing, "max"),
    "acknowledged at once": (AcknowledgedAtOnce, "consumers"),
    "held before acknowledged": (HeldBeforeAcknowledged, "consumers"),
    "deleted queue kept": (DeletedQueueKept, "deleted"),
    "local send dropped at commit": (LocalSendDroppedAtCommit, "purging"),
    "rollback gives positions back": (RollbackGivesPositionsBack, "sends"),
    "close keeps the session": (CloseKeepsSession, "refusals"),
    "no bridge IDs": (NoBridgeIds, "bridges"),
    "copy crosses under its original ID": (CopyCrossesUnderItsOriginalId, "bridges"),
}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_each_broken_rule_is_caught(name: str) -> None:
    broker, script = MUTANTS[name]
    for profile in EVERY_PROFILE:
        with pytest.raises(DivergenceError):
            lockstep(ALL_SCRIPTS[script], profile, broker)


# --- the private check names broken session records ----------------------------------------------


def built() -> FastBalancingBroker:
    """A broker in the middle of transactions: session t1 keeps message 3 for a1 on n1, x acknowledged 1."""
    broker = FastBalancingBroker(get_profile("artemis-latest"))
    script: list[BalancingCommand] = [
        CreateQueue("n1", "a1", "a1", ANY), Attach("x", "n1", "a1", manual_ack=True, transacted=True),
        Send("n1", "a1"), Send("n1", "a1"), Ack("x", 1), Send("n1", "a1", tx="t1")]
    for command in script:
        broker.execute(command)
    broker.check_valid()
    return broker


def _requeue_acked(broker: FastBalancingBroker) -> None:
    broker._queues[("n1", "a1")].pending.append(broker._consumers["x"].acked[0])


CORRUPTIONS: dict[str, tuple[Callable[[FastBalancingBroker], object], str]] = {
    "session node": (lambda b: setattr(b._sessions["t1"], "node", "n9"), "session t1 is on unknown node n9"),
    "consumer without session": (lambda b: b._sessions.pop("x"), "disagree about its transaction"),
    "acked not transacted": (lambda b: setattr(b._consumers["x"], "transacted", False),
                             "in a transaction it does not have"),
    "acked twice": (lambda b: b._consumers["x"].acked.append(b._consumers["x"].acked[0]), "a message twice"),
    "acked and waiting": (_requeue_acked, "waiting in its queue"),
    "kept for a gone queue": (lambda b: b._queues.pop(("n1", "a1")), "for a queue that is gone"),
    "kept send delivered": (lambda b: setattr(b._sessions["t1"], "sends", [
        HeldSend(s.message._replace(deliveries=1), s.queues) for s in b._sessions["t1"].sends]),
        "delivered already"),
    "kept for no queue": (lambda b: setattr(b._sessions["t1"], "sends", [
        HeldSend(s.message, ()) for s in b._sessions["t1"].sends]), "not once each"),
    "delivery count": (lambda b: setattr(b._consumers["x"], "held", [
        m._replace(deliveries=MAX_DELIVERY_ATTEMPTS) for m in b._consumers["x"].held]), "delivery count"),
    "negative delivery count": (lambda b: setattr(b._consumers["x"], "acked", [
        m._replace(deliveries=-1) for m in b._consumers["x"].acked]), "delivery count"),
    "session away from its consumer": (lambda b: setattr(b._sessions["x"], "node", "n2"),
                                       "session x is on n2, its consumer on n1"),
    "kept twice for a queue": (lambda b: setattr(b._sessions["t1"], "sends", [
        HeldSend(s.message, s.queues * 2) for s in b._sessions["t1"].sends]), "not once each"),
    "kept send not issued": (lambda b: setattr(b, "_next_message", 3), "keeps message 3, never issued"),
    "acknowledgement not issued": (lambda b: setattr(b, "_next_message", 1),
                                   "acknowledgement of a message never issued"),
    "rollback-only producer session": (lambda b: setattr(b._sessions["t1"], "rollback_only", True),
                                       "session t1 is rollback-only"),
}


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_the_private_check_names_each_broken_session_record(name: str) -> None:
    broker = built()
    corrupt, words = CORRUPTIONS[name]
    corrupt(broker)
    with pytest.raises(InvariantBroken, match=words):
        broker.check_valid()


def bridged() -> FastBalancingBroker:
    """A broker whose bridge from n1 to n2 carried message 1 to a1 on n2."""
    broker = FastBalancingBroker(get_profile("artemis-latest"))
    script: list[BalancingCommand] = [AddNode("n2"), Configure("a1", LbType.ON_DEMAND),
                                      CreateQueue("n2", "a1", "a1", ANY), Send("n1", "a1")]
    for command in script:
        broker.execute(command)
    broker.check_valid()
    assert broker._bridge_ids == {("n2", "a1"): {("n1", 1): None}} and set(broker._forwarded) == {("n1", "n2")}
    return broker


BRIDGE_CORRUPTIONS: dict[str, tuple[Callable[[FastBalancingBroker], object], str]] = {
    "an ID from itself": (lambda b: b._bridge_ids[("n2", "a1")].update({("n2", 1): None}), "from itself"),
    "an ID never issued": (lambda b: b._bridge_ids[("n2", "a1")].update({("n1", 7): None}), "never issued"),
    "an empty cache": (lambda b: b._bridge_ids[("n2", "a1")].clear(), "empty"),
    "a crossing never issued": (lambda b: b._forwarded.update({("n1", "n2"): (
        b._forwarded[("n1", "n2")][0]._replace(id=9), b._forwarded[("n1", "n2")][1])}), "never issued"),
    "a crossing to itself": (lambda b: b._forwarded.update({("n2", "n2"): b._forwarded[("n1", "n2")]}),
                             "a node to itself"),
    "a crossing for a gone queue": (lambda b: b._queues.pop(("n2", "a1")), "not live queues of n2"),
}


@pytest.mark.parametrize("name", sorted(BRIDGE_CORRUPTIONS))
def test_the_private_check_names_each_broken_bridge_record(name: str) -> None:
    broker = bridged()
    corrupt, words = BRIDGE_CORRUPTIONS[name]
    corrupt(broker)
    with pytest.raises(InvariantBroken, match=words):
        broker.check_valid()


def test_the_snapshot_shows_sessions_acknowledgements_and_delivery_counts() -> None:
    broker = built()
    broker.execute(Rollback("x"))
    state = broker.snapshot()
    assert set(state.sessions) == {"t1", "x"}
    assert [(p.message.id, p.queues) for p in state.sessions["t1"].sends] == [(3, (("n1", "a1"),))]
    consumer = state.consumers["x"]
    assert consumer.transacted and consumer.acked == ()
    assert [(m.id, m.deliveries) for m in consumer.held] == [(1, 1), (2, 0)]
    broker.execute(Ack("x"))
    assert [(m.id, m.deliveries) for m in broker.snapshot().consumers["x"].acked] == [(1, 1), (2, 0)]
