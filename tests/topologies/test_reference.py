"""The teaching reference for network topologies, checked against the spec and the notes' observations.

Three kinds of check:

* table-driven examples: the rows of the notes' section 2.4 (real ActiveMQ
  5.17.2 brokers) and seed 002's tree connector, each run through the spec
  and the reference step by step (equal outcomes, equal snapshots), with the
  observed facts asserted on the outcome: which brokers hold demand, with
  which brokerPath and priority, where each message ended;
* a few checks of the reference's parts on their own (wildcards, the
  advisory wire, the queue's round robin);
* a Hypothesis run of random command sequences over three to five brokers,
  comparing outcome by outcome and snapshot by snapshot.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from brokerspec.reference.topologies import (
    ActiveMQMessage,
    AdvisoryWire,
    ClientSubscription,
    ConsumerInfo,
    DestinationFilter,
    MessageStore,
    Queue,
    ReferenceTopologyBroker,
)
from brokerspec.spec.topologies import (
    AddBroker,
    AddProducer,
    Applied,
    BridgeConfig,
    Connect,
    Delivered,
    Disconnect,
    Dropped,
    Event,
    Move,
    Refusal,
    Refused,
    Registration,
    RemoveProducer,
    Role,
    Send,
    Sent,
    SetReplay,
    SetTtl,
    Subscribe,
    TopologyCommand,
    TopologyOutcome,
    TopologyState,
    TreeConnect,
    Unsubscribe,
    Waiting,
    apply,
    initial_state,
    matches_wildcard,
    retail_commands,
)
from brokerspec.spec.topologies.demand import destination_demand
from depth import scaled
from topology_cases import QUEUE as Q
from topology_cases import TOPIC as T
from topology_cases import brokers, eight_tree, four_tree


def run_both(commands: Sequence[TopologyCommand]) -> tuple[TopologyState, list[TopologyOutcome]]:
    """Run ``commands`` through the spec and the reference, step by step; the spec's final state and outcomes."""
    state = initial_state()
    reference = ReferenceTopologyBroker()
    outcomes: list[TopologyOutcome] = []
    for number, command in enumerate(commands, 1):
        state, expected = apply(state, command)
        actual = reference.execute(command)
        assert actual == expected, f"step {number} {command}: reference {actual}, spec {expected}"
        assert reference.snapshot() == state, f"step {number} {command}: snapshots differ"
        outcomes.append(expected)
    return state, outcomes


def demand_at(state: TopologyState, destination: str = Q) -> dict[str, list[tuple[tuple[str, ...], int]]]:
    """Demand subscriptions per broker: (brokerPath, priority) for each, by key."""
    found: dict[str, list[tuple[tuple[str, ...], int]]] = {}
    for reg in state.demand:
        if reg.network and reg.destination == destination:
            found.setdefault(reg.broker, []).append((reg.path, reg.priority))
    return found


def events_of(outcome: TopologyOutcome) -> tuple[object, ...]:
    assert isinstance(outcome, (Sent, Applied)), outcome
    return outcome.events


TTL2 = BridgeConfig(consumer_ttl=2, message_ttl=2)


# -- the notes' section 2.4, row by row ---------------------------------------------------


def test_four_tree_ttl1_only_the_neighbour_has_demand_and_the_others_keep_their_message() -> None:
    state, outcomes = run_both(four_tree(1) + [Subscribe("c3", "b3", Q), Send("b2", Q), Send("b1", Q), Send("b4", Q)])
    assert demand_at(state) == {"b2": [(("b3",), 0)]}
    assert events_of(outcomes[-3]) == (Delivered(1, "c3", "b3", ("b2",)),)
    assert events_of(outcomes[-2]) == (Waiting(2, "b1", ()),)
    assert events_of(outcomes[-1]) == (Waiting(3, "b4", ()),)


def test_four_tree_ttl2_spills_to_the_sibling_and_everything_arrives_through_b2() -> None:
    state, outcomes = run_both(four_tree(2) + [Subscribe("c3", "b3", Q), Send("b2", Q), Send("b1", Q), Send("b4", Q)])
    assert demand_at(state) == {"b1": [(("b3", "b2"), 0)], "b2": [(("b3",), 0)], "b4": [(("b3", "b2"), 0)]}
    assert [events_of(o) for o in outcomes[-3:]] == [
        (Delivered(1, "c3", "b3", ("b2",)),), (Delivered(2, "c3", "b3", ("b1", "b2")),),
        (Delivered(3, "c3", "b3", ("b4", "b2")),)]


def test_four_tree_ttl2_two_leaf_consumers_get_separate_queue_subscriptions_and_share_round_robin() -> None:
    state, outcomes = run_both(four_tree(2) + [Subscribe("c3", "b3", Q), Subscribe("c4", "b4", Q)]
                               + [Send("b1", Q)] * 4)
    keys = {reg.key for reg in state.demand if reg.broker == "b1"}
    assert keys == {"b1<b2:b2<b3:*", "b1<b2:b2<b4:*"}, "queue network subscriptions are not conduited"
    assert demand_at(state)["b3"] == [(("b4", "b2"), 0)]
    assert demand_at(state)["b4"] == [(("b3", "b2"), 0)]
    consumers = [e.consumer for o in outcomes[-4:] for e in events_of(o) if isinstance(e, Delivered)]
    assert sorted(consumers) == ["c3", "c3", "c4", "c4"]
    assert consumers[0] != consumers[1] and consumers[2] != consumers[3]


def test_decreased_priority_with_message_ttl_1_strands_far_messages_at_b2() -> None:
    state, outcomes = run_both(four_tree(2, 1, decrease_priority=True) + [
        Subscribe("c3", "b3", Q), Send("b2", Q), Send("b1", Q), Send("b4", Q)])
    assert demand_at(state) == {"b1": [(("b3", "b2"), -8)], "b2": [(("b3",), -5)], "b4": [(("b3", "b2"), -8)]}
    assert events_of(outcomes[-3]) == (Delivered(1, "c3", "b3", ("b2",)),)
    assert events_of(outcomes[-2]) == (Waiting(2, "b2", ("b1",)),)
    assert events_of(outcomes[-1]) == (Waiting(3, "b2", ("b4",)),)
    assert [m.id for m in state.waiting["b2"]] == [2, 3]


EACH_WAY = [Connect("b1", "b2", False, TTL2), Connect("b2", "b1", False, TTL2), Connect("b2", "b3", False, TTL2),
            Connect("b3", "b2", False, TTL2)]
DUPLEX_CHAIN = [Connect("b2", "b1", True, TTL2), Connect("b3", "b2", True, TTL2)]


@pytest.mark.parametrize("links", [EACH_WAY, DUPLEX_CHAIN], ids=["each-way", "duplex"])
def test_three_chain_ttl2_reaches_the_far_end(links: list[TopologyCommand]) -> None:
    """The notes' non-duplex chain, a connector each way; duplex connectors carry the same demand."""
    commands = brokers("b1", "b2", "b3") + links + [Subscribe("c1", "b1", Q), Send("b3", Q), Send("b2", Q)]
    state, outcomes = run_both(commands)
    assert demand_at(state) == {"b2": [(("b1",), 0)], "b3": [(("b1", "b2"), 0)]}
    assert events_of(outcomes[-2]) == (Delivered(1, "c1", "b1", ("b3", "b2")),)
    assert events_of(outcomes[-1]) == (Delivered(2, "c1", "b1", ("b2",)),)


def test_eight_tree_ttl2_demand_is_the_ball_of_radius_two() -> None:
    state, outcomes = run_both(eight_tree(2) + [Subscribe("c4", "b4", Q)] + [
        Send(b, Q) for b in ("b1", "b5", "b3", "b7")])
    assert set(demand_at(state)) == {"b1", "b2", "b5", "b6"}
    assert events_of(outcomes[-4]) == (Delivered(1, "c4", "b4", ("b1", "b2")),)
    assert events_of(outcomes[-3]) == (Delivered(2, "c4", "b4", ("b5", "b2")),)
    assert events_of(outcomes[-2]) == (Waiting(3, "b3", ()),)
    assert events_of(outcomes[-1]) == (Waiting(4, "b7", ()),)


def test_eight_tree_topic_conduits_at_the_root_and_every_consumer_gets_one_copy() -> None:
    state, outcomes = run_both(eight_tree(2) + [Subscribe("c4", "b4", T), Subscribe("c5", "b5", T),
                                                   Send("b1", T), Send("b6", T), Send("b7", T)])
    counts = {broker: len(subs) for broker, subs in demand_at(state, T).items()}
    assert counts == {"b1": 1, "b2": 2, "b4": 1, "b5": 1, "b6": 1}
    root = next(r for r in state.demand if r.broker == "b1")
    assert root.origins == frozenset({"c4", "c5"}) and root.conduit
    for outcome in outcomes[-3:-1]:
        assert sorted(e.consumer for e in events_of(outcome) if isinstance(e, Delivered)) == ["c4", "c5"]
    assert events_of(outcomes[-1]) == (Dropped(3, "b7", ()),)


def test_replay_when_no_consumers_sends_a_stranded_message_back() -> None:
    config = BridgeConfig(consumer_ttl=2, message_ttl=1)
    commands = brokers("b2", "b3", "b5") + [
        Connect("b3", "b2", True, config), Connect("b5", "b3", True, config), Subscribe("c5", "b5", Q),
        Send("b2", Q), Unsubscribe("c5"), Subscribe("c2", "b2", Q), SetReplay("b3", True)]
    state, outcomes = run_both(commands)
    assert events_of(outcomes[6]) == (Waiting(1, "b3", ("b2",)),)
    assert events_of(outcomes[8]) == (), "the default filter keeps it: its path holds b2"
    assert events_of(outcomes[9]) == (Delivered(1, "c2", "b2", ("b2", "b3")),)
    assert not state.waiting


# -- seed 002's tree connector --------------------------------------------------------------

TREE = retail_commands(2, 2, "tree")
"""hq; branches r1, r2; leaves r1-s1, r1-s2, r2-s1, r2-s2."""


def test_tree_leaf_consumer_goes_up_to_the_root_and_never_to_siblings() -> None:
    state, outcomes = run_both(TREE + [Subscribe("c", "r1-s1", Q), Send("hq", Q), Send("r1-s2", Q)])
    assert demand_at(state) == {"hq": [(("r1-s1", "r1"), 0)], "r1": [(("r1-s1",), 0)]}
    assert events_of(outcomes[-2]) == (Delivered(1, "c", "r1-s1", ("hq", "r1")),)
    assert events_of(outcomes[-1]) == (Waiting(2, "r1-s2", ()),)


def test_tree_branch_consumer_goes_up_and_down_its_own_subtree() -> None:
    state, _ = run_both(TREE + [Subscribe("c", "r1", Q)])
    assert set(demand_at(state)) == {"hq", "r1-s1", "r1-s2"}


def test_tree_root_consumer_reaches_every_broker() -> None:
    state, outcomes = run_both(TREE + [Subscribe("c", "hq", Q), Send("r2-s2", Q)])
    assert set(demand_at(state)) == {"r1", "r2", "r1-s1", "r1-s2", "r2-s1", "r2-s2"}
    assert demand_at(state)["r2-s2"] == [(("hq", "r2"), 0)]
    assert events_of(outcomes[-1]) == (Delivered(1, "c", "hq", ("r2-s2", "r2")),)


def test_tree_move_of_a_leaf_brings_its_demand_and_frees_a_waiting_message() -> None:
    state, outcomes = run_both(TREE + [Subscribe("c", "r1-s1", Q), Send("r2", Q), Move("r1-s1", "r2")])
    assert events_of(outcomes[-2]) == (Waiting(1, "r2", ()),)
    assert events_of(outcomes[-1]) == (Delivered(1, "c", "r1-s1", ("r2",)),)
    assert set(demand_at(state)) == {"hq", "r2"}


@pytest.mark.parametrize("command, reason", [
    (TreeConnect("z", "r1-s1", Role.LEAF), Refusal.PARENT_IS_LEAF),
    (TreeConnect("r1-s1", "r2", Role.LEAF), Refusal.HAS_PARENT),
    (TreeConnect("hq", "r1-s1", Role.BRANCH), Refusal.PARENT_IS_LEAF),
    (TreeConnect("hq", "r1", Role.BRANCH), Refusal.ALREADY_CONNECTED),
    (TreeConnect("hq", "r2-s1", Role.BRANCH), Refusal.PARENT_IS_LEAF),
    (TreeConnect("hq", "hq", Role.BRANCH), Refusal.SELF_LINK),
    (TreeConnect("hq", "nowhere", Role.BRANCH), Refusal.UNKNOWN_BROKER),
    (TreeConnect("x", "y", Role.LEAF), Refusal.ALREADY_CONNECTED),
    (TreeConnect("z", "x", Role.LEAF), Refusal.MIXED_DESIGNS),
    (Connect("x", "hq"), Refusal.MIXED_DESIGNS),
    (Connect("x", "x"), Refusal.SELF_LINK),
    (Connect("x", "y"), Refusal.ALREADY_CONNECTED),
    (Connect("y", "x", False), Refusal.ALREADY_CONNECTED),
    (Move("hq", "r1"), Refusal.NOT_IN_TREE),
    (Move("r1", "r1-s1"), Refusal.ALREADY_CONNECTED),
    (Move("r2", "r1-s1"), Refusal.PARENT_IS_LEAF),
    (Move("r1-s1", "r1-s2"), Refusal.PARENT_IS_LEAF),
    (Move("r1-s1", "x"), Refusal.MIXED_DESIGNS),
    (Move("r1-s1", "r1-s1"), Refusal.SELF_LINK),
    (Disconnect("hq", "r1"), Refusal.NOT_CONNECTED),
    (Disconnect("y", "x"), Refusal.NOT_CONNECTED),
    (SetTtl("r1", "hq", 2, 2), Refusal.NOT_CONNECTED),
    (SetReplay("nowhere", True), Refusal.UNKNOWN_BROKER),
    (Subscribe("c", "hq", Q), Refusal.CONSUMER_EXISTS),
    (Unsubscribe("nobody"), Refusal.CONSUMER_NOT_FOUND),
    (AddProducer("p", "hq", Q), Refusal.PRODUCER_EXISTS),
    (RemoveProducer("nobody"), Refusal.PRODUCER_NOT_FOUND),
    (AddBroker("hq"), Refusal.BROKER_EXISTS),
    (Send("nowhere", Q), Refusal.UNKNOWN_BROKER),
])
def test_refusals_change_nothing(command: TopologyCommand, reason: Refusal) -> None:
    setup = TREE + brokers("x", "y", "z") + [Connect("x", "y"), Subscribe("c", "hq", Q), AddProducer("p", "hq", Q)]
    before, _ = run_both(setup)
    after, outcomes = run_both(setup + [command])
    assert outcomes[-1] == Refused(reason)
    assert after == before


def test_a_cycle_of_parents_is_refused() -> None:
    commands = brokers("a", "b", "c", "d") + [
        TreeConnect("b", "a", Role.BRANCH), TreeConnect("c", "b", Role.BRANCH), TreeConnect("d", "c", Role.BRANCH),
        TreeConnect("a", "d", Role.BRANCH), Move("b", "d")]
    _, outcomes = run_both(commands)
    assert outcomes[-2:] == [Refused(Refusal.CYCLE), Refused(Refusal.CYCLE)]


def test_retail_hierarchy_agrees_for_both_designs() -> None:
    for design in ("network", "tree"):
        commands = retail_commands(2, 12, design, 2) + [Subscribe("c", "r1-s3", Q), AddProducer("p", "hq", Q)]
        state, outcomes = run_both(commands + [Send("hq", Q)] * 3 + [Send("r2-s1", Q)])
        assert all(isinstance(e, Delivered) for o in outcomes[-4:-1] for e in events_of(o))
        spilled = {r.broker for r in state.demand if r.network and r.broker.startswith("r1-s")}
        assert spilled == (set() if design == "tree" else {f"r1-s{n}" for n in range(1, 13)} - {"r1-s3"})


# -- the parts on their own -----------------------------------------------------------------


@pytest.mark.parametrize("pattern", ["queue://>", "queue://A.>", "queue://A.*", "queue://*.B", "topic://A.>",
                                     "queue://A", "queue://A.>.C", "queue://*"])
@pytest.mark.parametrize("destination", ["queue://A", "queue://A.B", "queue://A.B.C", "topic://A.B", "queue://B",
                                         "queue://A..B"])
def test_destination_filter_reads_wildcards_as_the_spec_does(pattern: str, destination: str) -> None:
    assert DestinationFilter(pattern).matches(destination) == matches_wildcard(pattern, destination)


def test_advisory_wire_hands_out_generations_in_fifo_order() -> None:
    class Watcher:
        local_name = "w"

    wire: AdvisoryWire[Watcher] = AdvisoryWire()
    first, second = Watcher(), Watcher()
    info = ConsumerInfo("c", "b", Q, (), 0, frozenset({"c"}), False)
    wire.post(first, info)
    wire.post(second, info)
    seen = []
    for generation in wire.generations():
        seen.append([w for w, _ in generation])
        if len(seen) == 1:
            wire.post(second, info)
    assert seen == [[first, second], [second]]


def test_queue_round_robin_takes_the_best_priority_first_in_the_list_and_moves_it_last() -> None:
    queue = Queue("b", Q, MessageStore())
    for key, priority in (("a", 0), ("b", 5), ("c", 5)):
        queue.add_subscription(ClientSubscription(key, "b", Q, priority))
    queue.refresh_consumer_list()
    events: list[Event] = []
    for number in range(3):
        queue.dispatch(ActiveMQMessage(number, Q), events)
    assert [e.consumer for e in events if isinstance(e, Delivered)] == ["b", "c", "b"]
    assert queue.consumers == ["a", "c", "b"]


def test_a_queue_with_no_consumer_keeps_the_message_in_the_brokers_store() -> None:
    store = MessageStore()
    queue = Queue("b", Q, store)
    events: list[Event] = []
    queue.dispatch(ActiveMQMessage(7, Q, ("a",)), events)
    assert events == [Waiting(7, "b", ("a",))]
    assert [m.message_id for _, m in store.get_messages()] == [7]


# -- random sequences against the spec ------------------------------------------------------

NAMES = ("b1", "b2", "b3", "b4", "b5")
DESTINATIONS = ("queue://A", "queue://A.B", "topic://T", "topic://T.X")
PATTERNS = ("queue://>", "queue://A.*", "queue://A", "topic://>", "topic://T.*")
TTLS = st.sampled_from((-1, 1, 1, 2, 2, 3))

configs = st.builds(
    BridgeConfig,
    consumer_ttl=TTLS, message_ttl=TTLS, conduit=st.booleans(), conduit_network_queues=st.booleans(),
    decrease_priority=st.booleans(), suppress_duplicate_queues=st.booleans(),
    suppress_duplicate_topics=st.booleans(),
    include=st.lists(st.sampled_from(PATTERNS), max_size=2).map(tuple),
    exclude=st.lists(st.sampled_from(PATTERNS), max_size=1).map(tuple),
)


@st.composite
def scripts(draw: st.DrawFn) -> list[TopologyCommand]:
    """A few brokers, then a mix of topology, client and message commands over small alphabets.

    Each script favours network connectors, tree connectors, or both (then mostly refused as mixed designs).
    """
    names = NAMES[:draw(st.integers(3, 5))]
    broker = st.sampled_from(names)
    destination = st.sampled_from(DESTINATIONS)
    consumer = st.sampled_from(("c1", "c2", "c3", "c4"))
    producer = st.sampled_from(("p1", "p2"))
    network_link = st.builds(Connect, broker, broker, st.booleans(), configs)
    tree_link = st.builds(TreeConnect, broker, broker, st.sampled_from(Role))
    link = draw(st.sampled_from((network_link, tree_link, st.one_of(network_link, tree_link))))
    command = st.one_of(
        link,
        link,
        st.builds(Disconnect, broker, broker),
        st.builds(Move, broker, broker),
        st.builds(SetTtl, broker, broker, TTLS, TTLS),
        st.builds(SetReplay, broker, st.booleans()),
        st.builds(Subscribe, consumer, broker, destination, st.sampled_from((0, 0, 1, -1, 4))),
        st.builds(Subscribe, consumer, broker, destination, st.just(0)),
        st.builds(Unsubscribe, consumer),
        st.builds(AddProducer, producer, broker, destination),
        st.builds(RemoveProducer, producer),
        st.builds(Send, broker, destination),
        st.builds(Send, broker, destination),
        st.builds(AddBroker, st.sampled_from(NAMES)),
    )
    return [AddBroker(name) for name in names] + draw(st.lists(command, max_size=30))


@settings(max_examples=scaled(100, 2000), deadline=None)
@given(scripts())
def test_reference_agrees_with_the_spec_step_by_step(commands: list[TopologyCommand]) -> None:
    state = initial_state()
    reference = ReferenceTopologyBroker()
    for number, command in enumerate(commands, 1):
        state, expected = apply(state, command)
        actual = reference.execute(command)
        assert actual == expected, f"step {number} {command}"
        snapshot = reference.snapshot()
        if snapshot != state:
            parts = [name for name in ("brokers", "connectors", "replay", "consumers", "producers", "demand",
                                       "dispatch", "waiting", "next_message")
                     if getattr(snapshot, name) != getattr(state, name)]
            raise AssertionError(f"step {number} {command}: snapshots differ in {parts}")


MERGED = BridgeConfig(consumer_ttl=3, message_ttl=3, suppress_duplicate_topics=False)


@settings(max_examples=scaled(100, 1000), deadline=None)
@given(scripts())
@example(brokers("a", "b", "c") + [Connect("a", "b", False, MERGED), Connect("b", "c", False, MERGED),
                                   Subscribe("c1", "b", T), Subscribe("c2", "c", T)])  # one conduit, two brokers
@example(brokers("a", "b", "c", "d") + [Connect("a", "b"), Connect("c", "d"), Subscribe("c1", "b", "queue://A"),
                                        Subscribe("c2", "d", "queue://A"), Send("a", "queue://A"), Connect("b", "c"),
                                        Send("a", "queue://A"), Disconnect("a", "b"), Connect("d", "a")])
def test_demand_per_destination_is_one_pass_over_every_consumer(commands: list[TopologyCommand]) -> None:
    """The spec derives demand destination by destination (and keeps each); one breadth-first pass over every
    consumer of every destination at once, in arrival order, must settle into the very same registrations, and
    each destination's is computed over the parts of the network its consumers are in (the example: two parts, one
    consumer in each, then joined and split again), where this takes all the connectors."""
    state = initial_state()
    for command in commands:
        state, _ = apply(state, command)
        whole = destination_demand.__wrapped__(state.connectors, tuple(state.consumers.values()))
        assert state.demand == whole, f"after {command}"


def test_registration_rendering_matches_the_spec_for_a_conduit_subscription() -> None:
    state, _ = run_both(brokers("a", "b") + [Connect("a", "b"), Subscribe("c1", "b", T), Subscribe("c2", "b", T)])
    assert Registration("a", T, "a<b:*", "b", ("b",), frozenset({"c1", "c2"}), 0, True, True) in state.demand
