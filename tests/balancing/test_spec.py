"""The load-balancing spec on its own: the choice functions, worked cases from the sources, the judge.

Each example cites the Artemis test or section of the routing notes it
reproduces; the outcomes are checked field by field, so each can fail.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brokerspec.spec import InvalidCommand, get_profile
from brokerspec.spec.balancing import (
    MAX_DELIVERY_ATTEMPTS,
    Beliefs,
    every_state,
    primary,
    Ack,
    Commit,
    Receive,
    Resend,
    Rollback,
    RULES,
    STRUCTURAL,
    AddNode,
    Attach,
    BalancingCommand,
    Close,
    Configure,
    CreateQueue,
    DeleteQueue,
    Delivered,
    Done,
    Dropped,
    LbType,
    Member,
    Mode,
    Pause,
    Redistributed,
    Refusal,
    Refused,
    Resume,
    RoutingStatus,
    Send,
    Sent,
    SetLink,
    Target,
    QueryQueue,
    Tick,
    SetPrefix,
    UpdateQueue,
    allowed_bindings,
    allowed_outcomes,
    allowed_targets,
    apply,
    choose_binding,
    choose_from_bits,
    choose_target,
    initial_state,
    invariant_violations,
    judge,
)

from balancing_cases import ANY, MULTI, cluster, commands, landings, run


# --- the choice functions ----------------------------------------------------------

members = st.builds(Member, st.booleans(), st.booleans(), st.booleans(), st.booleans())
groups = st.lists(members, min_size=1, max_size=5).map(tuple)
lb_types = st.sampled_from(list(LbType))


@given(groups, st.integers(0, 7), lb_types)
def test_the_strict_choice_is_allowed_and_moves_the_position_only_when_choosing(
        group: tuple[Member, ...], position: int, lb_type: LbType) -> None:
    index, stored = choose_binding(group, position, lb_type)
    allowed = allowed_bindings(group, lb_type)
    if index is None:
        assert stored == position and allowed == ()
    else:
        assert index in allowed and group[index].eligible
        assert stored == (index + 1) % len(group)


@given(groups, st.integers(0, 7), lb_types)
def test_an_out_of_range_position_starts_the_scan_at_zero(group: tuple[Member, ...], position: int,
                                                          lb_type: LbType) -> None:
    if position >= len(group):
        assert choose_binding(group, position, lb_type)[0] == choose_binding(group, 0, lb_type)[0]


@given(st.lists(st.builds(Target, st.booleans(), st.booleans(), st.booleans()), min_size=1, max_size=5).map(tuple),
       st.integers(0, 7))
def test_a_redistribution_target_is_never_the_origin(targets: tuple[Target, ...], position: int) -> None:
    index, stored = choose_target(targets, position)
    assert set(allowed_targets(targets)) == {i for i, t in enumerate(targets)
                                             if t.preferred and t.filter_matches and not t.origin}
    if index is not None:
        assert not targets[index].origin and index in allowed_targets(targets)
        assert stored == (index + 1) % len(targets)


def test_choice_from_bits_decodes_members() -> None:
    eligible_local_no_consumer = 1 | 4 | 8
    eligible_remote_with_consumer = 1 | 2 | 4
    assert choose_from_bits(eligible_local_no_consumer, eligible_remote_with_consumer, 0, 2, 0, LbType.ON_DEMAND) \
        == (1, 0)
    assert choose_from_bits(eligible_local_no_consumer, eligible_remote_with_consumer, 0, 2, 0, LbType.STRICT) \
        == (0, 1)
    assert choose_from_bits(0, 0, 0, 3, 2, LbType.STRICT) == (-1, 2)


# --- first routing: worked cases ---------------------------------------------------


def test_local_and_remote_with_consumers_alternate_local_first() -> None:
    """OnewayTwoNodeClusterTest.testBasicRoundRobin: message i goes to consumer i mod 2 (F3)."""
    _, outcomes = run([*cluster(2, LbType.ON_DEMAND), Attach("c1", "n1", "a1"), Attach("c2", "n2", "a1"),
                       *[Send("n1", "a1") for _ in range(4)]])
    assert [landings(o) for o in outcomes[-4:]] == [[("n1", "a1", "c1")], [("n2", "a1", "c2")]] * 2


def test_on_demand_keeps_messages_local_when_no_one_consumes() -> None:
    """MessageRedistributionTest.testRedistributionWithMultipleQueuesOnTheSameAddress (F3 fallback)."""
    _, outcomes = run([*cluster(3, LbType.ON_DEMAND), *[Send("n1", "a1") for _ in range(3)]])
    assert [landings(o) for o in outcomes[-3:]] == [[("n1", "a1", None)]] * 3


def test_on_demand_falls_back_to_the_last_local_queue_every_time() -> None:
    """BindingsImpl.getNextBinding, code-derived: once the node's bindings hold a remote one (and so run under
    ON_DEMAND), two local anycast queues without consumers -> always the second."""
    _, outcomes = run([AddNode("n2"), Configure("a1", LbType.ON_DEMAND), CreateQueue("n1", "a1", "qa", ANY),
                       CreateQueue("n1", "a1", "qb", ANY), CreateQueue("n2", "a1", "qc", ANY),
                       *[Send("n1", "a1") for _ in range(3)]])
    assert [landings(o) for o in outcomes[-3:]] == [[("n1", "qb", None)]] * 3


def test_a_node_without_remote_bindings_routes_as_off_whatever_the_type() -> None:
    """LB-TYPE-ADOPTED: BindingsImpl starts as OFF until a remote binding joins (ARTEMIS-3009), so a lone node
    round-robins its queues without consumers (AddressingTest.testAnycastRoutingRoundRobin); a remote queue
    that came and went leaves the type taken."""
    _, outcomes = run([Configure("a1", LbType.ON_DEMAND), CreateQueue("n1", "a1", "qa", ANY),
                       CreateQueue("n1", "a1", "qb", ANY), *[Send("n1", "a1") for _ in range(3)],
                       AddNode("n2"), CreateQueue("n2", "a1", "qc", ANY), DeleteQueue("n2", "qc"),
                       *[Send("n1", "a1") for _ in range(2)]])
    assert [landings(o)[0][1] for o in outcomes[3:6]] == ["qa", "qb", "qa"]
    # ON_DEMAND now: from the position (1, past qa), the last local queue scanned is qa, every time
    assert [landings(o)[0][1] for o in outcomes[-2:]] == ["qa", "qa"]


def test_off_round_robins_local_queues_without_consumers() -> None:
    """AddressingTest.testAnycastRoutingRoundRobin: under OFF the fallback is the first eligible (F3)."""
    _, outcomes = run([Configure("a1", LbType.OFF), CreateQueue("n1", "a1", "qa", ANY),
                       CreateQueue("n1", "a1", "qb", ANY), *[Send("n1", "a1") for _ in range(4)]])
    assert [landings(o)[0][1] for o in outcomes[-4:]] == ["qa", "qb", "qa", "qb"]


def test_a_queue_with_a_consumer_beats_one_without() -> None:
    _, outcomes = run([CreateQueue("n1", "a1", "qa", ANY), CreateQueue("n1", "a1", "qb", ANY),
                       Attach("c1", "n1", "qb"), *[Send("n1", "a1") for _ in range(3)]])
    assert [landings(o) for o in outcomes[-3:]] == [[("n1", "qb", "c1")]] * 3


def test_a_single_remote_queue_receives_without_consumers() -> None:
    """OnewayTwoNodeClusterTest.testRouteWhenNoConsumersFalseNonBalancedQueues: a group of one (F3)."""
    _, outcomes = run([AddNode("n2"), CreateQueue("n2", "a1", "a1", ANY), Send("n1", "a1")])
    assert landings(outcomes[-1]) == [("n2", "a1", None)]


def test_strict_ignores_consumers() -> None:
    """H: STRICT is plain round robin over connected eligible bindings, consumers or not."""
    _, outcomes = run([*cluster(2, LbType.STRICT), Attach("c1", "n1", "a1"),
                       *[Send("n1", "a1") for _ in range(4)]])
    assert [landings(o)[0][0] for o in outcomes[-4:]] == ["n1", "n2", "n1", "n2"]


@pytest.mark.parametrize(("profile", "reaches_remote"), [("artemis-latest", True), ("artemis-2.11", False)])
def test_off_forwards_multicast_only_from_2_29(profile: str, reaches_remote: bool) -> None:
    """ARTEMIS-4196: OFF lets a MULTICAST message reach remote bindings; never an ANYCAST one (H)."""
    setup: list[BalancingCommand] = [AddNode("n2"), Configure("t", LbType.OFF), CreateQueue("n1", "t", "s", MULTI),
             CreateQueue("n2", "t", "s", MULTI), Attach("c2", "n2", "s")]
    _, outcomes = run([*setup, Send("n1", "t", MULTI), Send("n1", "t", MULTI), Send("n1", "t", ANY)], profile)
    nodes = [landings(o)[0][0] if landings(o) else None for o in outcomes[-3:]]
    assert ("n2" in nodes) is reaches_remote
    assert nodes[-1] is None  # an ANYCAST message does not match the MULTICAST queues at all


def test_off_never_sends_anycast_to_a_remote_node() -> None:
    _, outcomes = run([*cluster(2, LbType.OFF), Attach("c2", "n2", "a1"), *[Send("n1", "a1") for _ in range(3)]])
    assert {landings(o)[0][0] for o in outcomes[-3:]} == {"n1"}


def test_a_disconnected_remote_binding_is_only_a_fallback() -> None:
    """F6: with the bridge down, the remote queue with a consumer is passed over."""
    setup = [*cluster(2, LbType.ON_DEMAND), Attach("c2", "n2", "a1"), SetLink("n1", "n2", False)]
    _, outcomes = run([*setup, Send("n1", "a1"), SetLink("n1", "n2", True), Send("n1", "a1")])
    assert landings(outcomes[-3]) == [("n1", "a1", None)]
    assert landings(outcomes[-1]) == [("n2", "a1", "c2")]


def test_queue_filters_decide_eligibility_consumer_filters_only_preference() -> None:
    """F5: a queue filtering red never gets blue; a consumer filtering red does not stop routing."""
    _, outcomes = run([CreateQueue("n1", "a1", "reds", ANY, "red"), CreateQueue("n1", "a1", "all", ANY),
                       Attach("c1", "n1", "all", "red"), Send("n1", "a1", color="blue"),
                       Send("n1", "a1", color="red"), Send("n1", "a1", color="red")])
    assert landings(outcomes[-3]) == [("n1", "all", None)]
    assert [landings(o) for o in outcomes[-2:]] == [[("n1", "all", "c1")]] * 2


@pytest.mark.parametrize(("profile", "status"), [("artemis-latest", RoutingStatus.OK),
                                                 ("artemis-2.11", RoutingStatus.NO_BINDINGS)])
def test_unrouted_status_depends_on_the_version(profile: str, status: RoutingStatus) -> None:
    """F8: bindings that all refuse give OK in 2.28-2.44 (ARTEMIS-4089), NO_BINDINGS before."""
    _, outcomes = run([CreateQueue("n1", "a1", "reds", ANY, "red"), Send("n1", "a1", color="blue"),
                       Send("n1", "nowhere")], profile)
    first, second = outcomes[-2:]
    assert isinstance(first, Sent) and first.status is status and first.events == ()
    assert isinstance(second, Sent) and second.status is RoutingStatus.NO_BINDINGS


def test_fqqn_sends_follow_three_historical_rules() -> None:
    """G2-G4: local queue only, filter ignored (2.11); filter checked (2.35); balanced with remote (2.43)."""
    setup: list[BalancingCommand] = [AddNode("n2"), CreateQueue("n1", "a1", "q", ANY, "red"), CreateQueue("n2", "a1", "q", ANY),
             Attach("c2", "n2", "q")]
    sends: list[BalancingCommand] = [Send("n1", "a1", color="blue", fqqn_queue="q"), Send("n1", "a1", color="red", fqqn_queue="q")]
    _, old = run([*setup, *sends], "artemis-2.11")
    assert [landings(o) for o in old[-2:]] == [[("n1", "q", None)], [("n1", "q", None)]]
    state = initial_state(get_profile("artemis-2.11", (("balancing.fqqn_send", "LOCAL"),)))
    for command in [*setup, *sends[:1]]:
        state, outcome = apply(state, command)
    assert landings(outcome) == []
    _, latest = run([*setup, *sends])
    assert landings(latest[-2]) == [("n2", "q", "c2")]


def test_off_with_redistribution_does_not_exist_in_2_11() -> None:
    _, outcomes = run([Configure("a1", LbType.OFF_WITH_REDISTRIBUTION)], "artemis-2.11")
    assert outcomes == [Refused(Refusal.NOT_SUPPORTED)]


# --- redistribution ----------------------------------------------------------------


def redistribution_setup(lb_type: LbType, delay: int = 0) -> list[BalancingCommand]:
    """Three nodes; two messages wait on n1 (no consumers anywhere); then a consumer attaches on n3."""
    return [*cluster(3, lb_type, delay), Send("n1", "a1"), Send("n1", "a1"), Attach("c3", "n3", "a1")]


def test_a_remote_consumer_pulls_waiting_messages_as_copies_with_new_ids() -> None:
    """I1 (remote consumer created), I5, seed 003: copies with new IDs land on the consumer's node."""
    _, outcomes = run(redistribution_setup(LbType.ON_DEMAND))
    attach = outcomes[-1]
    assert isinstance(attach, Done)
    moves = [e for e in attach.events if isinstance(e, Redistributed)]
    assert [(m.message, m.copy, m.to_node) for m in moves] == [(1, 3, "n3"), (2, 4, "n3")]
    assert landings(attach) == [("n3", "a1", "c3"), ("n3", "a1", "c3")]


@pytest.mark.parametrize("lb_type", [LbType.OFF, LbType.STRICT])
def test_off_and_strict_never_redistribute(lb_type: LbType) -> None:
    """Seed 003: redistribute() returns false for STRICT and OFF; I7 (STRICT spreads the first routing)."""
    state, outcomes = run([*redistribution_setup(lb_type), Tick(1)])
    assert outcomes[-2] == Done() and outcomes[-1] == Done()
    waiting = {key: len(q.pending) for key, q in state.queues.items() if q.pending}
    assert waiting == ({("n1", "a1"): 2} if lb_type is LbType.OFF else {("n1", "a1"): 1, ("n2", "a1"): 1})


def test_off_with_redistribution_keeps_first_routing_local_but_redistributes() -> None:
    """ARTEMIS-1925 (testRedistributionOnlyWhenLocalRemovedLbOffWithRedistribution)."""
    _, outcomes = run(redistribution_setup(LbType.OFF_WITH_REDISTRIBUTION))
    assert [e.to_node for e in outcomes[-1].events if isinstance(e, Redistributed)] == ["n3", "n3"]  # type: ignore[union-attr]


def test_redistribution_waits_for_the_delay_on_the_logical_clock() -> None:
    """I2: delay 2 -> active two ticks after the trigger, not before."""
    state, outcomes = run([*redistribution_setup(LbType.ON_DEMAND, delay=2), Tick(1), Tick(1)])
    assert outcomes[-3] == Done() and outcomes[-2] == Done()
    assert [e.to_node for e in outcomes[-1].events if isinstance(e, Redistributed)] == ["n3", "n3"]  # type: ignore[union-attr]
    assert state.queues[("n1", "a1")].pending == ()


def test_delay_minus_one_never_redistributes() -> None:
    state, _ = run([*redistribution_setup(LbType.ON_DEMAND, delay=-1), Tick(5)])
    assert len(state.queues[("n1", "a1")].pending) == 2


def test_a_local_consumer_cancels_a_pending_redistributor() -> None:
    """I2: addConsumer cancels the redistributor (testDelayedRedistributionCancelled)."""
    state, outcomes = run([*redistribution_setup(LbType.ON_DEMAND, delay=2), Attach("c1", "n1", "a1", "red"),
                           Tick(3)])
    assert state.queues[("n1", "a1")].redistributor is None
    assert len(state.queues[("n1", "a1")].pending) == 2 and outcomes[-1] == Done()


def test_grouped_messages_are_never_redistributed() -> None:
    """I3: testRedistributionWithMessageGroups."""
    state, outcomes = run([*cluster(2, LbType.ON_DEMAND, 0), Send("n1", "a1", grouped=True), Send("n1", "a1"),
                           Attach("c2", "n2", "a1")])
    assert [e.message for e in outcomes[-1].events if isinstance(e, Redistributed)] == [2]  # type: ignore[union-attr]
    assert [m.id for m in state.queues[("n1", "a1")].pending] == [1]


def test_redistribution_skips_the_origin_even_where_a_paused_consumer_matches() -> None:
    """Seed 003 (getBindable() != originatingQueue): a red message waiting for a paused red consumer moves away,
    once a blue message that arrived while the consumer was started flagged the queue (hasUnMatchedPending)."""
    script: list[BalancingCommand] = [*cluster(2, LbType.ON_DEMAND, 0), Attach("c1", "n1", "a1", "red"),
                                      Send("n1", "a1", color="blue"), Pause("c1"), Send("n1", "a1", color="red"),
                                      Attach("c2", "n2", "a1")]
    state, outcomes = run(script)
    assert state.queues[("n1", "a1")].redistributor is not None
    assert landings(outcomes[-2]) == [("n1", "a1", None)]  # preferred for c1, which is paused: it waits
    moves = [e for e in outcomes[-1].events if isinstance(e, Redistributed)]  # type: ignore[union-attr]
    assert [(m.message, m.to_node) for m in moves] == [(1, "n2"), (2, "n2")]
    assert state.queues[("n1", "a1")].pending == ()


def test_a_message_waiting_for_a_paused_consumer_flags_nothing() -> None:
    """ServerConsumerImpl.handle answers BUSY while stopped, before its filter: the blue message sent after the
    pause never sets hasUnMatchedPending, so the queue with a consumer gets no redistributor (Artemis 2.40.0)."""
    script: list[BalancingCommand] = [*cluster(2, LbType.ON_DEMAND, 0), Attach("c1", "n1", "a1", "red"),
                                      Pause("c1"), Send("n1", "a1", color="blue"), Attach("c2", "n2", "a1")]
    state, outcomes = run(script)
    assert not state.queues[("n1", "a1")].unmatched and state.queues[("n1", "a1")].redistributor is None
    assert outcomes[-1] == Done() and [m.id for m in state.queues[("n1", "a1")].pending] == [1]


def test_a_delay_below_minus_one_redistributes_at_once() -> None:
    """QueueImpl.addRedistributor schedules only a positive delay; Artemis takes -2 without complaint."""
    state, outcomes = run([*cluster(2, LbType.ON_DEMAND, -2), Send("n1", "a1"), Attach("c2", "n2", "a1")])
    moves = [e for e in outcomes[-1].events if isinstance(e, Redistributed)]  # type: ignore[union-attr]
    assert outcomes[1] == Done() and [(m.message, m.to_node) for m in moves] == [(1, "n2")]


def test_a_resumed_consumer_takes_what_waited_for_it() -> None:
    _, outcomes = run([Attach("c", "n1", "x"), CreateQueue("n1", "a1", "x", ANY), Attach("c", "n1", "x"), Pause("c"),
                       Send("n1", "a1"), Resume("c"), Pause("nobody")])
    assert outcomes[0] == Refused(Refusal.QUEUE_NOT_FOUND)
    assert landings(outcomes[-3]) == [("n1", "x", None)] and landings(outcomes[-2]) == [("n1", "x", "c")]
    assert outcomes[-1] == Refused(Refusal.CONSUMER_NOT_FOUND)


def test_redistribution_alternates_between_two_remote_targets() -> None:
    """I6 (testRedistributionWhenConsumerIsClosed): targets take turns."""
    _, outcomes = run([*cluster(3, LbType.ON_DEMAND, -1), *[Send("n1", "a1") for _ in range(4)],
                       Attach("c2", "n2", "a1"), Attach("c3", "n3", "a1"), Configure("a1", LbType.ON_DEMAND, 0),
                       Attach("c9", "n2", "a1")])
    moves = [e for o in outcomes for e in getattr(o, "events", ()) if isinstance(e, Redistributed)]
    assert [m.to_node for m in moves] == ["n2", "n3", "n2", "n3"]


def test_one_filtered_remote_consumer_hides_an_unfiltered_one() -> None:
    """F4 and ARTEMIS-2473: only filters are recorded, so a blue filter beside no filter still refuses red."""
    _, outcomes = run([*cluster(2, LbType.ON_DEMAND, 0), Send("n1", "a1", color="red"),
                       Attach("c2", "n2", "a1", "blue"), Attach("c2b", "n2", "a1")])
    assert all(not isinstance(e, Redistributed) for o in outcomes for e in getattr(o, "events", ()))


def test_the_trigger_finds_the_local_queue_by_routing_name() -> None:
    """I1 note: an ANYCAST queue named unlike its address is not found, so it is not redistributed."""
    script: list[BalancingCommand] = [AddNode("n2"), Configure("a1", LbType.ON_DEMAND, 0),
                                      CreateQueue("n1", "a1", "q1", ANY), CreateQueue("n2", "a1", "q1", ANY),
                                      Send("n1", "a1"), Attach("c2", "n2", "q1")]
    state, outcomes = run(script)
    assert outcomes[-1] == Done()
    assert len(state.queues[("n1", "q1")].pending) == 1


def test_deleting_a_queue_drops_its_messages_and_forgets_the_empty_group() -> None:
    state, outcomes = run([CreateQueue("n1", "a1", "qa", ANY), Send("n1", "a1"), Attach("c", "n1", "qa"),
                           DeleteQueue("n1", "qa"), Close("c"), Send("n1", "a1"), DeleteQueue("n1", "qa")])
    assert outcomes[3] == Refused(Refusal.QUEUE_IN_USE)
    assert outcomes[-1] == Done((Dropped(2, "n1", "qa"),))
    assert len(state.positions) == 0 and len(state.queues) == 0


# --- the judge ---------------------------------------------------------------------


def test_permissive_mode_accepts_another_allowed_choice_that_strict_mode_rejects() -> None:
    state, _ = run([*cluster(3, LbType.ON_DEMAND), Attach("c1", "n1", "a1"), Attach("c2", "n2", "a1")])
    command = Send("n3", "a1")
    options = allowed_outcomes(state, command)
    assert len(options) == 2
    strict_state, strict = apply(state, command)
    other_state, other = next((s, o) for s, o in options if o != strict)
    assert landings(strict) == [("n1", "a1", "c1")] and landings(other) == [("n2", "a1", "c2")]
    assert not judge(state, command, other, Mode.STRICT).accepted
    verdict = judge(state, command, other, Mode.PERMISSIVE)
    assert verdict.accepted and verdict.state == other_state and verdict.allowed == 2
    assert verdict.state.positions != strict_state.positions


def test_permissive_mode_still_rejects_what_no_rule_allows() -> None:
    state, _ = run([*cluster(2, LbType.ON_DEMAND), Attach("c1", "n1", "a1"), Attach("c2", "n2", "a1")])
    wrong = Sent(3, RoutingStatus.OK, (Delivered(3, "n2", "a1", "c1"),))
    verdict = judge(state, Send("n1", "a1"), wrong, Mode.PERMISSIVE)
    assert not verdict.accepted and verdict.allowed == 2


def test_permissive_mode_follows_a_transacted_send_whose_binding_shows_only_at_the_commit() -> None:
    """Two queues of one group on n1: the send in t1 may take either. Its outcome shows neither, so the judge
    keeps both states (Beliefs) and the commit decides: q2 is allowed, and then a third place is not."""
    state, _ = run([CreateQueue("n1", "a1", "q1", ANY), CreateQueue("n1", "a1", "q2", ANY)])
    send = Send("n1", "a1", tx="t1")
    verdict = judge(state, send, apply(state, send)[1], Mode.PERMISSIVE)
    assert verdict.accepted and isinstance(verdict.state, Beliefs) and len(every_state(verdict.state)) == 2
    assert primary(verdict.state) == apply(state, send)[0]  # Artemis's own turn stands for both
    by_q2 = Done((Delivered(1, "n1", "q2", None),))
    assert not judge(primary(verdict.state), Commit("t1"), by_q2, Mode.PERMISSIVE).accepted
    committed = judge(verdict.state, Commit("t1"), by_q2, Mode.PERMISSIVE)
    assert committed.accepted and not isinstance(committed.state, Beliefs)
    assert committed.state.queues[("n1", "q2")].pending[0].id == 1
    nowhere = Done((Delivered(1, "n1", "q3", None),))
    assert not judge(verdict.state, Commit("t1"), nowhere, Mode.PERMISSIVE).accepted
    assert not judge(verdict.state, Commit("t1"), by_q2, Mode.STRICT).accepted


# --- whole-spec properties ---------------------------------------------------------

@settings(max_examples=150, deadline=None)
@given(st.lists(commands, max_size=25), st.sampled_from(["seed", "artemis-2.11", "artemis-latest"]))
def test_every_step_keeps_the_invariants_and_names_a_known_rule(script: list[BalancingCommand],
                                                                profile: str) -> None:
    state = initial_state(get_profile(profile))
    for command in script:
        options = allowed_outcomes(state, command)
        state, outcome = apply(state, command)
        assert invariant_violations(state) == []
        assert outcome.rule in RULES and outcome.rule not in STRUCTURAL
        assert outcome in [o for _, o in options]
        for other_state, _ in options:
            assert invariant_violations(other_state) == []


def test_every_outcome_rule_is_used() -> None:
    """Each non-structural rule decides some outcome in a short script (so none is dead)."""
    used: Counter[str] = Counter()
    for profile in ("artemis-2.11", "artemis-latest"):
        _, outcomes = run([
            AddNode("n2"), AddNode("n2"), CreateQueue("n1", "a1", "a1", ANY, "red"), CreateQueue("n1", "a1", "a1", ANY),
            Configure("a1", LbType.ON_DEMAND, 0), Configure("a1", LbType.ON_DEMAND, -3), Attach("c", "n1", "a1"),
            DeleteQueue("n1", "a1"), Send("n1", "a1", color="red"), Send("n1", "a1", color="blue"),
            Send("n1", "zz"), Send("n1", "zz.#"), Send("n1", "a1", fqqn_queue="a1"), SetLink("n1", "n2", False), Tick(1), Close("c"),
            QueryQueue("n1", "a1"), UpdateQueue("n1", "a1", enabled=False), UpdateQueue("n1", "a1", None, True),
            SetPrefix("p:", ANY), Send("n2", "a1", ANY), CreateQueue("n2", "a2", "a2", ANY),
            Attach("m", "n2", "a2", manual_ack=True, pull=True),
            Send("n2", "a2"), Receive("m"), Ack("m"), Send("n2", "a2"), Receive("m"), Close("m"),
            Send("n2", "a2", tx="t"), Commit("t"), Attach("x", "n2", "a2", transacted=True), Ack("x"),
            *[step for _ in range(MAX_DELIVERY_ATTEMPTS) for step in (Rollback("x"),)], Resend("n1", "n2"),
        ], profile)
        used.update(o.rule for o in outcomes)
    assert set(RULES) - STRUCTURAL <= set(used), set(RULES) - STRUCTURAL - set(used)


@pytest.mark.parametrize("build", [lambda: CreateQueue("n1", "a1", "q", ANY, ""), lambda: Attach("c", "n1", "q", "")])
def test_an_empty_filter_is_refused_when_the_command_is_built(build: Callable[[], BalancingCommand]) -> None:
    with pytest.raises(InvalidCommand, match="filter") as caught:
        build()
    assert caught.value.field == "filter"


def test_before_2_29_a_failed_redistribution_uses_up_a_message_id() -> None:
    """Seed 003 / ARTEMIS-4207: the copy (and its ID) was made before a target was looked for."""
    script: list[BalancingCommand] = [*cluster(2, LbType.ON_DEMAND, 0), Send("n1", "a1", color="blue"),
                                      Attach("c2", "n2", "a1", "red"), Send("n1", "a1")]
    _, old = run(script, "artemis-2.11")
    _, new = run(script)
    assert isinstance(old[-1], Sent) and isinstance(new[-1], Sent)
    assert new[-1].message == 2 and old[-1].message > 2


def test_before_2_19_a_queue_with_consumers_gets_no_redistributor_for_unmatched_messages() -> None:
    """ARTEMIS-2007: a blue message waiting beside a red consumer was stuck before 2.19.0."""
    script: list[BalancingCommand] = [*cluster(2, LbType.ON_DEMAND, 0), Attach("c1", "n1", "a1", "red"),
                                      Send("n1", "a1", color="blue"), Attach("c2", "n2", "a1")]
    old_state, _ = run(script, "artemis-2.11")
    new_state, new = run(script)
    assert [m.id for m in old_state.queues[("n1", "a1")].pending] == [1]
    assert new_state.queues[("n1", "a1")].pending == ()
    assert [e.to_node for e in new[-1].events if isinstance(e, Redistributed)] == ["n2"]  # type: ignore[union-attr]


def test_a_busy_redistributor_tries_again_only_when_prompted() -> None:
    """QueueImpl.deliver runs on deliverAsync: a remote consumer closing prompts nothing (found against 2.40.0)."""
    script: list[BalancingCommand] = [*cluster(2, LbType.ON_DEMAND, 0), Send("n1", "a1", color="blue"),
                                      Attach("red", "n2", "a1", "red"), Attach("any", "n2", "a1"), Close("red")]
    state, outcomes = run(script)
    assert outcomes[-1] == Done() and [m.id for m in state.queues[("n1", "a1")].pending] == [1]
    state, outcomes = run([*script, Tick()])
    assert outcomes[-1] == Done()  # a tick prompts only a redistributor its delay makes active
    _, outcomes = run([*script, Send("n1", "a1", color="blue")])  # lands on n2, where the consumer is
    assert [e for e in outcomes[-1].events if isinstance(e, Redistributed)] == []  # type: ignore[union-attr]
    _, outcomes = run([*script, Attach("late", "n2", "a1")])
    moves = [e for e in outcomes[-1].events if isinstance(e, Redistributed)]  # type: ignore[union-attr]
    assert [(m.message, m.to_node) for m in moves] == [(1, "n2")]
