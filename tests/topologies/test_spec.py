"""The topology spec on brokerspec's real-broker measurements, seed 002's rules and the decided gaps.

Every example states a fact from a source (what brokerspec measured on real ActiveMQ
5.17.2 brokers, seed 002's rules 1-5) or a documented decision, so each assertion can fail
when the spec drifts from it.
"""

from __future__ import annotations

import pytest

from brokerspec.spec import InvalidCommand
from brokerspec.spec.topologies import (
    RULES,
    AddProducer,
    Applied,
    BridgeConfig,
    Connect,
    Delivered,
    Disconnect,
    Dropped,
    Move,
    Refusal,
    Refused,
    Role,
    Send,
    Sent,
    SetReplay,
    SetTtl,
    Subscribe,
    TopologyCommand,
    TreeConnect,
    Unsubscribe,
    Waiting,
    apply,
    compute_metrics,
    get_hops,
    get_roots,
    invariant_violations,
    is_permitted,
    matches_wildcard,
    retail_commands,
    run,
)
from topology_cases import QUEUE, TOPIC, brokers, demand_paths, eight_tree, four_tree, small_tree


def where(outcome: object) -> list[tuple[str, str]]:
    """Where each message of a send ended: ("delivered", consumer) or ("waiting", broker)."""
    assert isinstance(outcome, Sent)
    return [("delivered", e.consumer) if isinstance(e, Delivered) else (e.kind, e.broker) for e in outcome.events]


# --- brokerspec's measurements of real ActiveMQ 5.17.2 brokers, one by one ---------------------------------


def test_ttl_1_demand_stays_one_hop_and_far_sends_wait() -> None:
    state, _ = run(four_tree(1) + [Subscribe("c", "b3", QUEUE)])
    assert demand_paths(state) == {"b2": [("b3",)]}
    for sender, expected in (("b2", [("delivered", "c")]), ("b1", [("waiting", "b1")]), ("b4", [("waiting", "b4")])):
        state, outcome = apply(state, Send(sender, QUEUE))
        assert where(outcome) == expected, sender
    assert sorted(state.waiting) == ["b1", "b4"]


def test_ttl_2_spills_to_the_sibling_and_every_send_arrives() -> None:
    state, _ = run(four_tree(2) + [Subscribe("c", "b3", QUEUE)])
    assert demand_paths(state) == {"b2": [("b3",)], "b1": [("b3", "b2")], "b4": [("b3", "b2")]}
    for sender in ("b2", "b1", "b4"):
        state, outcome = apply(state, Send(sender, QUEUE))
        assert where(outcome) == [("delivered", "c")]
    assert not state.waiting


def test_two_leaf_consumers_get_separate_queue_subscriptions_and_take_turns() -> None:
    state, _ = run(four_tree(2) + [Subscribe("c3", "b3", QUEUE), Subscribe("c4", "b4", QUEUE)])
    paths = demand_paths(state)
    assert sorted(paths["b2"]) == [("b3",), ("b4",)]
    assert sorted(paths["b1"]) == [("b3", "b2"), ("b4", "b2")], "queue network subscriptions are not conduited"
    assert paths["b3"] == [("b4", "b2")] and paths["b4"] == [("b3", "b2")]
    turns = []
    for _ in range(4):
        state, outcome = apply(state, Send("b1", QUEUE))
        turns.extend(where(outcome))
    assert turns == [("delivered", "c3"), ("delivered", "c4"), ("delivered", "c3"), ("delivered", "c4")]


def test_decreased_priority_and_message_ttl_1_strand_forwarded_messages_one_hop_on() -> None:
    state, _ = run(four_tree(2, 1, decrease_priority=True) + [Subscribe("c", "b3", QUEUE)])
    priorities = {reg.broker: reg.priority for reg in state.demand if reg.network}
    assert priorities == {"b2": -5, "b1": -8, "b4": -8}
    state, outcome = apply(state, Send("b2", QUEUE))
    assert where(outcome) == [("delivered", "c")]
    for sender in ("b1", "b4"):
        state, outcome = apply(state, Send(sender, QUEUE))
        assert where(outcome) == [("waiting", "b2")]
    assert len(state.waiting["b2"]) == 2


def test_non_duplex_chain_with_ttl_2() -> None:
    config = BridgeConfig(consumer_ttl=2, message_ttl=2)
    commands = brokers("b1", "b2", "b3") + [Connect("b1", "b2", False, config), Connect("b2", "b1", False, config),
                                            Connect("b2", "b3", False, config), Connect("b3", "b2", False, config)]
    state, _ = run(commands + [Subscribe("c", "b1", QUEUE)])
    assert demand_paths(state) == {"b2": [("b1",)], "b3": [("b1", "b2")]}
    for sender, hops in (("b3", 2), ("b2", 1)):
        state, outcome = apply(state, Send(sender, QUEUE))
        assert isinstance(outcome, Sent) and get_hops(outcome.events) == (hops,)


def test_eight_tree_ttl_2_reaches_distance_two_only() -> None:
    state, _ = run(eight_tree(2) + [Subscribe("c", "b4", QUEUE)])
    assert sorted(demand_paths(state)) == ["b1", "b2", "b5", "b6"]
    for sender, expected in (("b1", "delivered"), ("b5", "delivered"), ("b3", "waiting"), ("b7", "waiting")):
        state, outcome = apply(state, Send(sender, QUEUE))
        assert where(outcome)[0][0] == expected, sender


def test_topic_conduit_merges_and_each_consumer_gets_one_copy() -> None:
    state, _ = run(eight_tree(2) + [Subscribe("c4", "b4", TOPIC), Subscribe("c5", "b5", TOPIC)])
    counts = {broker: len(paths) for broker, paths in demand_paths(state, TOPIC).items()}
    assert counts == {"b1": 1, "b2": 2, "b4": 1, "b5": 1, "b6": 1}
    for sender in ("b1", "b6"):
        state, outcome = apply(state, Send(sender, TOPIC))
        assert sorted(where(outcome)) == [("delivered", "c4"), ("delivered", "c5")]
    state, outcome = apply(state, Send("b7", TOPIC))
    assert isinstance(outcome, Sent) and outcome.events == (Dropped(outcome.message, "b7", ()),)


def test_replay_sends_a_stranded_message_back_only_when_enabled() -> None:
    stranded = four_tree(2, 1) + [Subscribe("far", "b3", QUEUE), Send("b1", QUEUE)]
    state, outcomes = run(stranded)
    assert where(outcomes[-1]) == [("waiting", "b2")], "messageTTL 1 stops it on b2"
    state, outcomes = run(stranded + [Subscribe("near", "b1", QUEUE)])
    assert list(state.waiting) == ["b2"], "default filter: b1 is on the message's path"
    state, outcomes = run(stranded + [SetReplay("b2", True), Subscribe("near", "b1", QUEUE)])
    assert not state.waiting
    assert outcomes[-1] == Applied((Delivered(1, "near", "b1", ("b1", "b2")),))


# --- seed 002: the tree connector -----------------------------------------------------------------------


def test_leaf_consumer_goes_up_to_the_root_and_never_to_siblings() -> None:
    state, _ = run(small_tree() + [Subscribe("c", "s1", QUEUE)])
    assert sorted(demand_paths(state)) == ["hq", "r1"]


def test_branch_consumer_also_goes_down_its_own_subtree() -> None:
    state, _ = run(small_tree() + [Subscribe("c", "r1", QUEUE)])
    assert sorted(demand_paths(state)) == ["hq", "s1", "s2"]


def test_root_consumer_goes_down_to_everyone() -> None:
    state, _ = run(small_tree() + [Subscribe("c", "hq", QUEUE)])
    assert sorted(demand_paths(state)) == ["r1", "r2", "s1", "s2", "s3"]


def test_tree_messages_follow_the_tree_path_and_a_sibling_store_has_no_demand() -> None:
    state, _ = run(small_tree() + [Subscribe("c", "s1", QUEUE)])
    state, outcome = apply(state, Send("s3", QUEUE))
    assert where(outcome) == [("waiting", "s3")], "decided: the seed sends no demand sideways, so s3 has none"
    state, outcome = apply(state, Send("hq", QUEUE))
    assert isinstance(outcome, Sent) and outcome.events == (Delivered(outcome.message, "c", "s1", ("hq", "r1")),)


def test_moving_a_leaf_needs_no_retuning() -> None:
    state, _ = run(small_tree() + [Subscribe("c", "s1", QUEUE), Move("s1", "r2")])
    assert sorted(demand_paths(state)) == ["hq", "r2"]
    state, outcome = apply(state, Send("hq", QUEUE))
    assert isinstance(outcome, Sent) and get_hops(outcome.events) == (2,)


def test_adding_a_level_needs_no_retuning() -> None:
    commands = small_tree() + brokers("mid") + [TreeConnect("mid", "hq", Role.BRANCH), Move("r1", "mid"),
                                                Subscribe("c", "s1", QUEUE)]
    state, _ = run(commands)
    assert sorted(demand_paths(state)) == ["hq", "mid", "r1"]
    state, outcome = apply(state, Send("hq", QUEUE))
    assert isinstance(outcome, Sent) and get_hops(outcome.events) == (3,)


def test_two_roots_make_a_forest_not_a_crash() -> None:
    state, outcomes = run(small_tree() + brokers("x", "y") + [TreeConnect("y", "x"), Subscribe("c", "y", QUEUE)])
    assert get_roots(state) == ("hq", "x")
    assert all(not isinstance(o, Refused) for o in outcomes)
    state, outcome = apply(state, Send("hq", QUEUE))
    assert where(outcome) == [("waiting", "hq")]
    assert invariant_violations(state) == []


@pytest.mark.parametrize(("command", "reason"), [
    (TreeConnect("s1", "r2"), Refusal.HAS_PARENT),
    (TreeConnect("hq", "s1"), Refusal.PARENT_IS_LEAF),
    (TreeConnect("hq", "r1", Role.BRANCH), Refusal.ALREADY_CONNECTED),
    (Move("r2", "s1"), Refusal.PARENT_IS_LEAF),
    (Move("hq", "r1"), Refusal.NOT_IN_TREE),
    (Connect("s1", "s3"), Refusal.MIXED_DESIGNS),
    (Disconnect("hq", "r1"), Refusal.NOT_CONNECTED),
    (SetTtl("r1", "hq", 2, 2), Refusal.NOT_CONNECTED),
    (Subscribe("c", "nowhere", QUEUE), Refusal.UNKNOWN_BROKER),
    (Unsubscribe("ghost"), Refusal.CONSUMER_NOT_FOUND),
])
def test_misconfigurations_are_refused_outcomes(command: object, reason: Refusal) -> None:
    state, _ = run(small_tree())
    after, outcome = apply(state, command)  # type: ignore[arg-type]
    assert outcome == Refused(reason)
    assert after == state


def test_a_cycle_of_parents_is_refused() -> None:
    state, _ = run(small_tree() + brokers("x") + [TreeConnect("x", "hq", Role.BRANCH)])
    state, outcome = apply(state, Move("x", "x"))
    assert outcome == Refused(Refusal.SELF_LINK)
    state, _ = run(brokers("a", "b", "c") + [TreeConnect("b", "a", Role.BRANCH), TreeConnect("c", "b", Role.BRANCH)])
    _, outcome = apply(state, TreeConnect("a", "c", Role.BRANCH))
    assert outcome == Refused(Refusal.CYCLE)


# --- metrics and the retail generator --------------------------------------------------------------------


def test_metrics_count_spill_to_sibling_stores_under_ttl_2_and_none_under_the_tree() -> None:
    consumer: list[TopologyCommand] = [AddProducer("p", "hq", QUEUE), Subscribe("c", "r1-s1", QUEUE)]
    network, _ = run(retail_commands(2, 5, "network", 2) + consumer)
    tree, _ = run(retail_commands(2, 5, "tree") + consumer)
    net = compute_metrics(network)
    assert net.subscriptions_total == 6 and net.spilled == 4, "region, HQ, and the 4 sibling stores"
    assert net.advisories_sent == 6
    t = compute_metrics(tree)
    assert (t.subscriptions_total, t.spilled, t.advisories_sent) == (2, 0, 2)


def test_stranded_counts_waiting_messages() -> None:
    state, _ = run(four_tree(1) + [Subscribe("c", "b3", QUEUE), Send("b1", QUEUE), Send("b4", QUEUE)])
    assert compute_metrics(state).stranded == 2


def test_retail_generator_names_a_bad_argument() -> None:
    with pytest.raises(InvalidCommand, match="regions 11"):
        retail_commands(11, 1)
    with pytest.raises(InvalidCommand, match="design 'mesh'"):
        retail_commands(1, 1, "mesh")
    assert len(retail_commands(10, 1000)) == 1 + 10 * 1001 + 10 * 1001


# --- pure rules and command validation ------------------------------------------------------------------


@pytest.mark.parametrize(("pattern", "destination", "expected"), [
    ("queue://A.B", "queue://A.B", True), ("queue://A.*", "queue://A.B", True), ("queue://A.*", "queue://A.B.C", False),
    ("queue://A.>", "queue://A.B.C", True), ("queue://>", "queue://X", True), ("topic://A.B", "queue://A.B", False),
    ("queue://A", "queue://A.B", False),
])
def test_wildcards(pattern: str, destination: str, expected: bool) -> None:
    assert matches_wildcard(pattern, destination) is expected


def test_excludes_win_over_includes() -> None:
    config = BridgeConfig(include=("queue://>",), exclude=("queue://SECRET",))
    assert is_permitted(config, "queue://OPEN") and not is_permitted(config, "queue://SECRET")
    assert not is_permitted(BridgeConfig(include=("queue://A",)), "topic://A")


@pytest.mark.parametrize("build", [
    lambda: BridgeConfig(consumer_ttl=0), lambda: SetTtl("a", "b", 1, -2), lambda: Subscribe("c", "b", "TEST"),
    lambda: Subscribe("bad name", "b", QUEUE), lambda: BridgeConfig(include=("nothing",)),
])
def test_bad_input_is_refused_with_a_named_field(build: object) -> None:
    with pytest.raises(InvalidCommand) as error:
        build()  # type: ignore[operator]
    assert error.value.field


def test_every_outcome_rule_is_in_the_rule_index() -> None:
    commands = small_tree() + [Subscribe("c", "s1", QUEUE), Send("hq", QUEUE), Move("s1", "s1"),
                               Subscribe("c", "s1", QUEUE), SetReplay("hq", True)]
    _, outcomes = run(commands)
    assert {o.rule for o in outcomes} <= set(RULES)
    assert all(o.rule for o in outcomes)
