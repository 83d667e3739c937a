"""Steps that fail after changing the cluster, and the spec's other findings from the real Artemis, through the spec,
the reference and the fast broker in lockstep under every profile.

* An acknowledgement of a message the consumer does not hold fails (NOT_DELIVERED) after giving back all it held,
  a delivery spent each, or, in a transaction, after acknowledging all it held in the session's transaction,
  which becomes rollback-only (LB-ACK; ``ServerConsumerImpl.acknowledge``).
* The commit of a rollback-only transaction rolls its own work back and fails, leaving what the consumer holds
  (ROLLBACK_ONLY; LB-TX-COMMIT; ``TransactionImpl.commit`` -> ``internalRollback``).
* In 2.11 a closing consumer's messages come back after the purge of a purge-on-no-consumers queue, and
  ``QueueImpl.postRollback`` purges them too (LB-CLOSE-RETURNS).
* A wildcard queue that still binds an address keeps the address's bridge IDs (LB-BRIDGE-DUP;
  ``PostOfficeImpl.removeBinding`` -> ``deleteDuplicateCache``).

Each script asserts what the spec did, so a script that stops reaching its case fails; each broker below with the
old behaviour must part from the spec on some script, so the comparison can fail.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from brokerspec.check.domains import BALANCING
from brokerspec.check.lockstep import DivergenceError, Lockstep, SubjectFactory
from brokerspec.impl.balancing import ConsumerRecord, FastBalancingBroker, QueueRecord
from brokerspec.reference.balancing import ReferenceBalancingBroker
from brokerspec.spec import PROFILES, get_profile
from brokerspec.spec.addressing import RoutingType
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
    CreateQueue,
    DeleteQueue,
    Delivered,
    Done,
    Dropped,
    Event,
    Failed,
    QueryQueue,
    QueueQueried,
    Receive,
    Refusal,
    Refused,
    Resend,
    Returned,
    Send,
    Sent,
)
from brokerspec.spec.profiles import ReturnOrder

ANY, MULTI = RoutingType.ANYCAST, RoutingType.MULTICAST
BOTH: Mapping[str, SubjectFactory] = {"reference": ReferenceBalancingBroker, "impl": FastBalancingBroker}
parametrized = pytest.mark.parametrize("profile", sorted(PROFILES))


def lockstep(script: Sequence[BalancingCommand], profile: str,
             subjects: Mapping[str, SubjectFactory] = BOTH
             ) -> tuple[list[BalancingOutcome], list[BalancingState]]:
    """The spec's outcomes and states after each command; DivergenceError where a subject parts from the spec
    (outcome, state or, for the fast broker, its private invariants)."""
    checker = Lockstep(get_profile(profile), subjects, BALANCING)
    outcomes: list[BalancingOutcome] = []
    states: list[BalancingState] = []
    for command in script:
        outcome = checker.step(command)
        assert isinstance(outcome, (Sent, Done, Refused, Failed, QueueQueried)), outcome
        outcomes.append(outcome)
        states.append(checker.state)
    return outcomes, states


def head(profile: str) -> bool:
    return get_profile(profile).balancing.close_return_order is ReturnOrder.HEAD


def ids(events: Sequence[Event], kind: type) -> list[int]:
    return [event.message for event in events if isinstance(event, kind)]


# --- the scripts ------------------------------------------------------------------------------------------------

NOT_HELD: list[BalancingCommand] = [
    CreateQueue("n1", "jobs", "jobs", ANY),
    Send("n1", "jobs", color="blue"), Send("n1", "jobs", color="red"), Send("n1", "jobs", color="red"),  # 1-3
    Attach("c", "n1", "jobs", filter="red", pull=True, manual_ack=True),  # 4
    Receive("c"), Receive("c"),  # 5-6: c holds 2 and 3, blue 1 waits
    Ack("c", 9),  # 7: fails, 2 and 3 back with a delivery spent, before 1 (2.11) or among it by arrival
    Receive("c"), Ack("c", 2),  # 8-9: c takes 2 again and acknowledges it
    Ack("c", 2),  # 10: c holds nothing now: refused, nothing changes
    QueryQueue("n1", "jobs"),  # 11
]


@parametrized
def test_an_acknowledgement_of_a_message_not_held_gives_back_all_that_is_held(profile: str) -> None:
    out, states = lockstep(NOT_HELD, profile)
    failed = out[7]
    assert isinstance(failed, Failed) and failed.reason is Refusal.NOT_DELIVERED and failed.rule == "LB-ACK"
    assert ids(failed.events, Returned) == [2, 3]
    assert ids(failed.events, Delivered) == ([2, 3, 1] if head(profile) else [1, 2, 3])  # offered again, waiting
    pending = states[7].queues[("n1", "jobs")].pending
    assert [(m.id, m.deliveries) for m in pending] == ([(2, 1), (3, 1), (1, 0)] if head(profile)
                                                      else [(1, 0), (2, 1), (3, 1)])
    assert states[7].consumers["c"].held == ()
    assert out[10] == Refused(Refusal.NOT_DELIVERED)
    assert isinstance(out[11], QueueQueried) and out[11].messages == 2


TEN_FAILURES: list[BalancingCommand] = [
    CreateQueue("n1", "a1", "a1", ANY),
    Attach("c", "n1", "a1", manual_ack=True), Attach("d", "n1", "a1", pull=True),  # 1-2: d only pulls
    Send("n1", "a1"),  # 3: c takes it
    *[Ack("c", 9) for _ in range(MAX_DELIVERY_ATTEMPTS)],  # 4-13: each gives it back, and c takes it again
    Ack("c", 9), Receive("d"), QueryQueue("n1", "a1"),
]


@parametrized
def test_the_tenth_failed_acknowledgement_drops_the_message(profile: str) -> None:
    out, states = lockstep(TEN_FAILURES, profile)
    first = out[4]
    assert first == Failed(Refusal.NOT_DELIVERED, (Returned(1, "n1", "a1"), Delivered(1, "n1", "a1", "c")))
    assert states[12].consumers["c"].held[0].deliveries == MAX_DELIVERY_ATTEMPTS - 1
    assert out[13] == Failed(Refusal.NOT_DELIVERED, (Dropped(1, "n1", "a1"),))
    assert out[14] == Refused(Refusal.NOT_DELIVERED) and out[15] == Done()
    assert isinstance(out[16], QueueQueried) and out[16].messages == 0


ROLLBACK_ONLY: list[BalancingCommand] = [
    CreateQueue("n1", "a1", "a1", ANY),
    Attach("t", "n1", "a1", pull=True, manual_ack=True, transacted=True),  # 1
    Send("n1", "a1"), Send("n1", "a1"), Send("n1", "a1"),  # 2-4
    Receive("t"), Receive("t"),  # 5-6: t holds 1 and 2
    Send("n1", "a1", tx="t"),  # 7: message 4 kept in t's transaction
    Ack("t", 9),  # 8: fails: 1 and 2 acknowledged in the transaction, now rollback-only
    Receive("t"), QueryQueue("n1", "a1"),  # 9-10: t holds 3; 1, 2 and 3 still count
    Commit("t"),  # 11: rolls its own work back and fails: 4 is gone, 1 and 2 return, t still holds 3
    Commit("t"),  # 12: the session is fresh: an empty commit
    Receive("t"), Ack("t"), Commit("t"), QueryQueue("n1", "a1"),  # 13-16
]


@parametrized
def test_a_transacted_acknowledgement_of_a_message_not_held_makes_the_commit_roll_back(profile: str) -> None:
    out, states = lockstep(ROLLBACK_ONLY, profile)
    assert out[8] == Failed(Refusal.NOT_DELIVERED) and out[8].rule == "LB-ACK"
    assert states[8].sessions["t"].rollback_only and [m.id for m in states[8].consumers["t"].acked] == [1, 2]
    assert [p.message.id for p in states[8].sessions["t"].sends] == [4]
    assert isinstance(out[10], QueueQueried) and out[10].messages == 3
    commit = out[11]
    assert isinstance(commit, Failed) and commit.reason is Refusal.ROLLBACK_ONLY and commit.rule == "LB-TX-COMMIT"
    assert ids(commit.events, Returned) == [1, 2] and ids(commit.events, Delivered) == [1, 2]
    assert [(m.id, m.deliveries) for m in states[11].queues[("n1", "a1")].pending] == [(1, 1), (2, 1)]
    assert [m.id for m in states[11].consumers["t"].held] == [3], "internalRollback cancels nothing held"
    assert not states[11].sessions["t"].rollback_only and states[11].sessions["t"].sends == ()
    assert out[12] == Done() and out[15] == Done()
    assert isinstance(out[16], QueueQueried) and out[16].messages == 1


CLOSE_ON_PURGING: list[BalancingCommand] = [
    CreateQueue("n1", "jobs", "jobs", ANY, purge_on_no_consumers=True),
    Attach("c1", "n1", "jobs", filter="red", manual_ack=True),  # 1
    Send("n1", "jobs", color="red"), Send("n1", "jobs", color="blue"),  # 2-3: c1 holds 1, blue 2 waits
    Close("c1"),  # 4: the last consumer goes: the purge drops both, before (2.11) or after 1 comes back
    Attach("c2", "n1", "jobs", manual_ack=True), Attach("c3", "n1", "jobs", pull=True),  # 5-6
    Send("n1", "jobs"), Close("c2"),  # 7-8: c3 is left, so the returned 3 waits for it
    Receive("c3"), QueryQueue("n1", "jobs"),
]


@parametrized
def test_a_purging_queue_drops_what_its_last_consumer_gave_back_in_every_version(profile: str) -> None:
    out, _ = lockstep(CLOSE_ON_PURGING, profile)
    close = out[4]
    assert isinstance(close, Done) and close.rule == "LB-CLOSE-RETURNS"
    if head(profile):  # removeItself, the purge, then cancelRefs -> postRollback purges the returned 1
        assert close.events == (Dropped(2, "n1", "jobs"), Returned(1, "n1", "jobs"), Dropped(1, "n1", "jobs"))
    else:  # ARTEMIS-4410: back first, then the purge takes everything
        assert ids(close.events, Returned) == [1] and ids(close.events, Dropped) == [1, 2]
    assert out[8] == Done((Returned(3, "n1", "jobs"), Delivered(3, "n1", "jobs", None)))
    assert out[9] == Done((Delivered(3, "n1", "jobs", "c3"),))


WILDCARD_KEEPS_IDS: list[BalancingCommand] = [
    AddNode("n2"), CreateQueue("n2", "a.b", "q", MULTI), CreateQueue("n2", "a.#", "w", MULTI),  # 0-2
    Send("n1", "a.b"),  # 3: crosses to n2 once, for q and w
    DeleteQueue("n2", "q"),  # 4: w still binds a.b: n2 keeps the bridge ID
    Resend("n1", "n2"),  # 5: so the resend is dropped, and w keeps one copy
    QueryQueue("n2", "w"),
    CreateQueue("n2", "a.b", "q", MULTI), DeleteQueue("n2", "w"),  # 7-8: q binds a.b again: kept still
    Send("n1", "a.b"), DeleteQueue("n2", "q"),  # 9-10: the last binding of a.b goes, and the IDs with it
]


@parametrized
def test_a_wildcard_queue_that_still_binds_an_address_keeps_its_bridge_ids(profile: str) -> None:
    out, states = lockstep(WILDCARD_KEEPS_IDS, profile)
    assert isinstance(out[3], Sent) and out[3].events == (Delivered(1, "n2", "q", None), Delivered(1, "n2", "w", None))
    assert dict(states[4].bridge_ids.items()) == {("n2", "a.b"): (("n1", 1),)}
    assert out[5] == Done()
    assert isinstance(out[6], QueueQueried) and out[6].messages == 1
    assert dict(states[8].bridge_ids.items()) == {("n2", "a.b"): (("n1", 1),)}
    assert dict(states[9].bridge_ids.items()) == {("n2", "a.b"): (("n1", 1), ("n1", 2))}
    assert not states[10].bridge_ids


# --- brokers with the old behaviour: the scripts must catch each ---------------------------------------------------


class ImplAckRefused(FastBalancingBroker):
    """An acknowledgement of a message not held is refused and changes nothing (the spec before 1fc799e)."""

    def _fail_ack(self, consumer: ConsumerRecord, events: list[Event]) -> Refused | Failed:
        return Refused(Refusal.NOT_DELIVERED)


class ImplCommitIgnoresRollbackOnly(FastBalancingBroker):
    """A rollback-only transaction commits all the same."""

    def _commit(self, command: Commit, events: list[Event]) -> Refused | Failed | None:
        session = self._sessions.get(command.session)
        if session is not None:
            session.rollback_only = False
        return super()._commit(command, events)


class ImplReturnsSurviveThePurge(FastBalancingBroker):
    """2.11's returned messages wait in a purge-on-no-consumers queue without consumers (no postRollback)."""

    def _return_held(self, queue: QueueRecord, consumer: ConsumerRecord, events: list[Event]) -> None:
        if not self._close_at_head or queue.consumers or not queue.purge_on_no_consumers:
            super()._return_held(queue, consumer, events)
            return
        events.extend(Returned(message.id, queue.node, queue.name) for message in consumer.held)
        queue.pending[:0] = consumer.held
        consumer.held = []
        self._reland_waiting(queue, events)


class ImplWildcardForgets(FastBalancingBroker):
    """The bridge IDs go with the address's last queue of its own, a wildcard queue binding it or not."""

    def _delete_queue(self, command: DeleteQueue, events: list[Event]) -> Refused | None:
        queue = self._queues.get((command.node, command.queue))
        refused = super()._delete_queue(command, events)
        if refused is None and queue is not None and queue.address not in self._by_address:
            self._forget_address(queue.address)
        return refused


class ReferenceAckRefused(ReferenceBalancingBroker):
    """The reference refusing an acknowledgement of a message not held, as it did before 1fc799e."""

    def acknowledge(self, command: Ack) -> Done | Refused | Failed:
        consumer = self.consumers.get(command.consumer)
        if consumer is not None and command.message is not None and not consumer.holds(command.message):
            return Refused(Refusal.NOT_DELIVERED)
        return super().acknowledge(command)


OLD_BEHAVIOUR: dict[str, tuple[str, SubjectFactory, list[BalancingCommand], tuple[str, ...]]] = {
    "impl refuses the acknowledgement": ("impl", ImplAckRefused, NOT_HELD, tuple(sorted(PROFILES))),
    "impl ignores rollback-only": ("impl", ImplCommitIgnoresRollbackOnly, ROLLBACK_ONLY, tuple(sorted(PROFILES))),
    "impl keeps 2.11's returns": ("impl", ImplReturnsSurviveThePurge, CLOSE_ON_PURGING, ("artemis-2.11", "seed")),
    "impl forgets under a wildcard": ("impl", ImplWildcardForgets, WILDCARD_KEEPS_IDS, tuple(sorted(PROFILES))),
    "reference refuses the acknowledgement": ("reference", ReferenceAckRefused, TEN_FAILURES,
                                              tuple(sorted(PROFILES))),
}


@pytest.mark.parametrize("name", sorted(OLD_BEHAVIOUR))
def test_each_old_behaviour_is_caught(name: str) -> None:
    layer, broker, script, profiles = OLD_BEHAVIOUR[name]
    for profile in profiles:
        with pytest.raises(DivergenceError) as caught:
            lockstep(script, profile, {layer: broker})
        assert caught.value.divergence.layer == layer
