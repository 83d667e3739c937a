"""The spec's consumers with windows and acknowledgements: LB-PULL, LB-ACK, LB-CLOSE-RETURNS.

Each test states one rule on a short script, with the Artemis test it follows where there is one.
"""

from __future__ import annotations

from brokerspec.spec.balancing import (
    Ack,
    Attach,
    BalancingCommand,
    Close,
    CreateQueue,
    Delivered,
    Done,
    Dropped,
    Failed,
    LbType,
    Pause,
    QueryQueue,
    QueueQueried,
    Receive,
    Redistributed,
    Refusal,
    Refused,
    Returned,
    Send,
)
from brokerspec.spec.outcome import Outcome

from balancing_cases import ANY, cluster, landings, run


def rule(outcome: object) -> str:
    assert isinstance(outcome, Outcome)
    return outcome.rule


def test_a_pulling_consumer_takes_only_when_it_receives() -> None:
    """LB-PULL (ConsumerWindowSizeTest.testReceiveImmediateWithZeroWindow): one message per receive, the first
    waiting one its filter matches."""
    _, out = run([CreateQueue("n1", "a1", "a1", ANY), Attach("p", "n1", "a1", "red", pull=True),
                  Send("n1", "a1", color="blue"), Send("n1", "a1", color="red"), Send("n1", "a1", color="red"),
                  Receive("p"), Receive("p"), Receive("p"), Pause("p")])
    assert landings(out[2]) == landings(out[3]) == [("n1", "a1", None)], "nothing is pushed to it"
    assert landings(out[5]) == [("n1", "a1", "p")] and isinstance(out[5], Done)
    assert [e.message for e in out[5].events if isinstance(e, Delivered)] == [2]
    assert isinstance(out[6], Done) and [e.message for e in out[6].events] == [3]
    assert out[7] == Done() and rule(out[7]) == "LB-PULL", "only the blue message is left, which it refuses"


def test_a_consumer_that_does_not_pull_cannot_receive() -> None:
    """LB-PULL: a pushed-to consumer has nothing to receive on."""
    _, out = run([CreateQueue("n1", "a1", "a1", ANY), Attach("c", "n1", "a1"), Receive("c"), Receive("x")])
    assert out[2] == Refused(Refusal.NOT_PULLING)
    assert out[3] == Refused(Refusal.CONSUMER_NOT_FOUND)


def test_a_paused_pulling_consumer_takes_nothing() -> None:
    """LB-PULL: a stopped session's receive brings nothing."""
    state, out = run([CreateQueue("n1", "a1", "a1", ANY), Attach("p", "n1", "a1", pull=True), Send("n1", "a1"),
                      Pause("p"), Receive("p")])
    assert out[4] == Done()
    assert [m.id for m in state.queues[("n1", "a1")].pending] == [1]


def test_a_pulling_consumer_still_draws_messages_to_its_node() -> None:
    """LB-PULL: a window-0 consumer counts for isHighAcceptPriority, so ON_DEMAND sends go to its node."""
    _, out = run([*cluster(2, LbType.ON_DEMAND), Attach("p", "n2", "a1", pull=True), Send("n1", "a1"),
                  Send("n1", "a1")])
    assert landings(out[-2]) == landings(out[-1]) == [("n2", "a1", None)]


def test_acknowledgements_are_cumulative_and_counted_until_then() -> None:
    """LB-ACK (AcknowledgeTest.testReceiveAckLastMessageOnly): acking a message acks every earlier one."""
    state, out = run([CreateQueue("n1", "a1", "a1", ANY), Attach("c", "n1", "a1", manual_ack=True),
                      Send("n1", "a1"), Send("n1", "a1"), Send("n1", "a1"), QueryQueue("n1", "a1"), Ack("c", 2),
                      QueryQueue("n1", "a1"), Ack("c", 2), Ack("c")])
    assert isinstance(out[5], QueueQueried) and out[5].messages == 3, "held messages count"
    assert out[6] == Done() and rule(out[6]) == "LB-ACK"
    assert isinstance(out[7], QueueQueried) and out[7].messages == 1
    assert out[8] == Failed(Refusal.NOT_DELIVERED, (Returned(3, "n1", "a1"), Delivered(3, "n1", "a1", "c"))), \
        "2 is no longer held: the acknowledgement fails and gives back 3, which the consumer takes again"
    assert out[9] == Done() and state.consumers["c"].held == ()


def test_a_closing_consumer_gives_back_what_it_holds_to_the_other_consumers() -> None:
    """LB-CLOSE-RETURNS (ConsumerTest.testSimpleSendWithCloseConsumer): the held messages go to the next consumer."""
    state, out = run([CreateQueue("n1", "a1", "a1", ANY), Attach("c", "n1", "a1", manual_ack=True),
                      Attach("d", "n1", "a1", manual_ack=True), Send("n1", "a1"), Send("n1", "a1"),
                      Send("n1", "a1"), Ack("c", 1), Close("c")])
    assert [landings(o) for o in out[3:6]] == [[("n1", "a1", "c")], [("n1", "a1", "d")], [("n1", "a1", "c")]]
    close = out[7]
    assert isinstance(close, Done) and rule(close) == "LB-CLOSE-RETURNS"
    assert close.events == (Returned(3, "n1", "a1"), Delivered(3, "n1", "a1", "d"))
    assert [m.id for m in state.consumers["d"].held] == [2, 3]


def test_returned_messages_go_to_the_head_in_2_11_and_to_their_arrival_place_later() -> None:
    """LB-CLOSE-RETURNS: 2.11 QueueImpl.addHead; from 2.32 addSorted by arrival (ARTEMIS-4517)."""
    script: list[BalancingCommand] = [CreateQueue("n1", "a1", "a1", ANY), Attach("b", "n1", "a1", "blue"),
              Attach("c", "n1", "a1", "red", manual_ack=True), Send("n1", "a1", color="green"),
              Send("n1", "a1", color="red"), Close("c"), Close("b"), Attach("e", "n1", "a1")]
    _, old = run(script, "artemis-2.11")
    _, new = run(script)
    assert [e.message for e in old[-1].events] == [2, 1]  # type: ignore[union-attr]
    assert [e.message for e in new[-1].events] == [1, 2]  # type: ignore[union-attr]


def test_returned_messages_redistribute_once_no_consumer_is_left() -> None:
    """LB-CLOSE-RETURNS with RD-TRIGGER-CLOSE (MessageRedistributionTest.testRedistributionWhenConsumerIsClosed)."""
    _, out = run([*cluster(3, LbType.ON_DEMAND, 0), Attach("c1", "n1", "a1", manual_ack=True),
                  Attach("c2", "n2", "a1"), Attach("c3", "n3", "a1"),
                  *[Send("n1", "a1") for _ in range(6)], Close("c1")])
    close = out[-1]
    assert isinstance(close, Done)
    assert [e for e in close.events if isinstance(e, Returned)] == [Returned(m, "n1", "a1") for m in (1, 4)]
    moves = [(e.message, e.to_node) for e in close.events if isinstance(e, Redistributed)]
    assert moves == [(1, "n2"), (4, "n3")], "round robin over the nodes with consumers"


def test_a_purging_queue_drops_returned_messages_in_2_11_too_in_another_order() -> None:
    """LB-CLOSE-RETURNS, LB-PURGE-ON-NO-CONSUMERS: ARTEMIS-4410 cancels before the consumer is removed; 2.11
    removed it first, and QueueImpl.postRollback purged the returned message (found against Artemis 2.11.0)."""
    script: list[BalancingCommand] = [CreateQueue("n1", "a1", "a1", ANY, purge_on_no_consumers=True),
              Attach("c", "n1", "a1", manual_ack=True), Send("n1", "a1"), Close("c"), QueryQueue("n1", "a1")]
    _, old = run(script, "artemis-2.11")
    _, new = run(script)
    assert isinstance(old[-1], QueueQueried) and old[-1].messages == 0
    assert isinstance(new[-1], QueueQueried) and new[-1].messages == 0
    assert old[3] == Done((Returned(1, "n1", "a1"), Dropped(1, "n1", "a1")))
    assert new[3] == Done((Returned(1, "n1", "a1"), Delivered(1, "n1", "a1", None), Dropped(1, "n1", "a1")))


def test_a_held_message_is_not_redistributed() -> None:
    """LB-ACK: a delivered, unacknowledged message is not in the queue's list, so no redistributor takes it."""
    state, out = run([*cluster(2, LbType.ON_DEMAND, 0), Attach("c1", "n1", "a1", manual_ack=True),
                      Send("n1", "a1"), Attach("c2", "n2", "a1"), Pause("c1"), Attach("x", "n2", "a1")])
    assert not any(isinstance(e, Redistributed) for o in out for e in getattr(o, "events", ()))
    assert [m.id for m in state.consumers["c1"].held] == [1]
