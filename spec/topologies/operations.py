"""The transitions of the topology domain: ``apply(state, command) -> (state, outcome)``.

Introduction
------------
Each operation checks its preconditions (refusals are outcomes, never
exceptions), changes the topology or the clients, and then brings the
network back to rest: demand is derived afresh (:mod:`.demand`), each
queue's dispatch list keeps its survivors in order and gains newcomers at
the end, and waiting messages that may now move do so (:mod:`.routing`).
Refusals name the first precondition that fails, in the order the
checks are listed in each function.
"""

from __future__ import annotations

from typing import Callable

from ..frozen import replace
from ..profiles import Profile
from .commands import (
    AddBroker,
    AddProducer,
    Connect,
    Disconnect,
    Move,
    QueryDemand,
    RemoveProducer,
    Send,
    SetReplay,
    SetTtl,
    Subscribe,
    TopologyCommand,
    TreeConnect,
    Unsubscribe,
)
from .demand import compute_demand
from .model import (
    Consumer,
    Message,
    NetworkConnector,
    Producer,
    Role,
    TopologyState,
    TreeConnector,
    get_children,
    get_design,
    get_parent,
    get_role,
)
from .outcomes import Applied, DemandQueried, Holding, Refusal, Refused, Sent, TopologyOutcome
from .routing import route, settle, update_dispatch

Result = tuple[TopologyState, TopologyOutcome]


def initial_state(profile: Profile | None = None) -> TopologyState:
    """An empty network: no brokers. Every profile starts the same (the domain has no profile options)."""
    return TopologyState()


def settle_network(state: TopologyState) -> tuple[TopologyState, Applied]:
    """Derive demand, update the dispatch lists, and move the waiting messages that now may move.

    Demand equal to the old leaves the dispatch lists as they are: each lists
    exactly its registrations (an invariant), so updating them would keep
    every list and its order.
    """
    demand = compute_demand(state)
    if demand != state.demand:
        state = replace(state, demand=demand, dispatch=update_dispatch(state.dispatch, demand))
    state, events = settle(state)
    return state, Applied(events, rule="TOPO-SETTLE")


def _refuse(state: TopologyState, reason: Refusal, rule: str) -> Result:
    return state, Refused(reason, rule=rule)


def _unknown(state: TopologyState, *brokers: str) -> bool:
    for broker in brokers:  # a loop, not any(): every command asks, and a generator costs twice as much
        if broker not in state.brokers:
            return True
    return False


def _linked(state: TopologyState, a: str, b: str) -> bool:
    return (a, b) in state.connectors or (b, a) in state.connectors


def _network_clash(state: TopologyState, command: Connect) -> bool:
    """Whether a new network connector would duplicate a bridge or join a tree link.

    Two brokers may have one connector, or two non-duplex ones in opposite
    directions (a chain of plain connectors, one each way); anything more would make a
    second bridge in the same direction.
    """
    if (command.source, command.target) in state.connectors:
        return True
    reverse = state.connectors.get((command.target, command.source))
    return reverse is not None and (command.duplex or not isinstance(reverse, NetworkConnector) or reverse.duplex)


def add_broker(state: TopologyState, command: AddBroker) -> Result:
    """A new broker joins with no connectors (refused if the name is taken)."""
    if command.broker in state.brokers:
        return _refuse(state, Refusal.BROKER_EXISTS, "TOPO-BROKERS")
    return replace(state, brokers=state.brokers + (command.broker,)), Applied(rule="TOPO-BROKERS")


def connect(state: TopologyState, command: Connect) -> Result:
    """``source`` declares a network connector to ``target`` (duplex: ``TransportConnection.processBrokerInfo``)."""
    if _unknown(state, command.source, command.target):
        return _refuse(state, Refusal.UNKNOWN_BROKER, "TOPO-BROKERS")
    if command.source == command.target:
        return _refuse(state, Refusal.SELF_LINK, "TOPO-CONNECTORS")
    if _network_clash(state, command):
        return _refuse(state, Refusal.ALREADY_CONNECTED, "TOPO-CONNECTORS")
    if "tree" in (get_design(state, command.source), get_design(state, command.target)):
        return _refuse(state, Refusal.MIXED_DESIGNS, "TOPO-ONE-DESIGN")
    connector = NetworkConnector(command.source, command.target, command.duplex, command.config)
    return _settled(replace(state, connectors=state.connectors.set((command.source, command.target), connector)))


def _tree_refusal(state: TopologyState, broker: str, parent: str, role: Role) -> Refused | None:
    """Why ``broker`` may not hang under ``parent`` as ``role``, or None (seed 002 rules 1-2)."""
    if broker == parent:
        return Refused(Refusal.SELF_LINK, rule="TOPO-CONNECTORS")
    if "network" in (get_design(state, broker), get_design(state, parent)):
        return Refused(Refusal.MIXED_DESIGNS, rule="TOPO-ONE-DESIGN")
    if get_role(state, parent) is Role.LEAF or (role is Role.LEAF and get_children(state, broker)):
        return Refused(Refusal.PARENT_IS_LEAF, rule="TOPO-TREE-ROLES")
    ancestor: str | None = parent
    while ancestor is not None:
        if ancestor == broker:
            return Refused(Refusal.CYCLE, rule="TOPO-TREE-ROLES")
        ancestor = get_parent(state, ancestor)
    return None


def tree_connect(state: TopologyState, command: TreeConnect) -> Result:
    """``source`` declares itself a leaf or branch under ``target`` (seed 002 rules 1-2)."""
    if _unknown(state, command.source, command.target):
        return _refuse(state, Refusal.UNKNOWN_BROKER, "TOPO-BROKERS")
    if get_parent(state, command.source) is not None:
        return _refuse(state, Refusal.HAS_PARENT, "TOPO-TREE-ROLES")
    if command.source != command.target and _linked(state, command.source, command.target):
        return _refuse(state, Refusal.ALREADY_CONNECTED, "TOPO-CONNECTORS")
    refusal = _tree_refusal(state, command.source, command.target, command.role)
    if refusal is not None:
        return state, refusal
    connector = TreeConnector(command.source, command.target, command.role)
    return _settled(replace(state, connectors=state.connectors.set((command.source, command.target), connector)))


def disconnect(state: TopologyState, command: Disconnect) -> Result:
    """``source`` drops the connector it declared to ``target``; demand over it goes (cascading)."""
    if _unknown(state, command.source, command.target):
        return _refuse(state, Refusal.UNKNOWN_BROKER, "TOPO-BROKERS")
    if (command.source, command.target) not in state.connectors:
        return _refuse(state, Refusal.NOT_CONNECTED, "TOPO-CONNECTORS")
    return _settled(replace(state, connectors=state.connectors.remove((command.source, command.target))))


def move(state: TopologyState, command: Move) -> Result:
    """A tree broker re-points its tree connector at a new parent, keeping its role (seed 002: no retuning)."""
    if _unknown(state, command.broker, command.parent):
        return _refuse(state, Refusal.UNKNOWN_BROKER, "TOPO-BROKERS")
    old_parent = get_parent(state, command.broker)
    role = get_role(state, command.broker)
    if old_parent is None or role is None:
        return _refuse(state, Refusal.NOT_IN_TREE, "TOPO-TREE-ROLES")
    if command.parent != old_parent and _linked(state, command.broker, command.parent):
        return _refuse(state, Refusal.ALREADY_CONNECTED, "TOPO-CONNECTORS")
    without = replace(state, connectors=state.connectors.remove((command.broker, old_parent)))
    refusal = _tree_refusal(without, command.broker, command.parent, role)
    if refusal is not None:
        return state, refusal
    connector = TreeConnector(command.broker, command.parent, role)
    return _settled(replace(without, connectors=without.connectors.set((command.broker, command.parent), connector)))


def set_ttl(state: TopologyState, command: SetTtl) -> Result:
    """Change a network connector's consumerTTL and messageTTL; its bridges restart with them."""
    if _unknown(state, command.source, command.target):
        return _refuse(state, Refusal.UNKNOWN_BROKER, "TOPO-BROKERS")
    connector = state.connectors.get((command.source, command.target))
    if not isinstance(connector, NetworkConnector):
        return _refuse(state, Refusal.NOT_CONNECTED, "TOPO-CONNECTORS")
    config = replace(connector.config, consumer_ttl=command.consumer_ttl, message_ttl=command.message_ttl)
    updated = replace(connector, config=config)
    return _settled(replace(state, connectors=state.connectors.set((command.source, command.target), updated)))


def set_replay(state: TopologyState, command: SetReplay) -> Result:
    """Turn ``replayWhenNoConsumers`` on or off for ``broker``'s queues (AMQ-2324)."""
    if _unknown(state, command.broker):
        return _refuse(state, Refusal.UNKNOWN_BROKER, "TOPO-BROKERS")
    replay = state.replay | {command.broker} if command.enabled else state.replay - {command.broker}
    return _settled(replace(state, replay=replay))


def subscribe(state: TopologyState, command: Subscribe) -> Result:
    """A client consumer opens; its advisory spreads and waiting messages may reach it."""
    if _unknown(state, command.broker):
        return _refuse(state, Refusal.UNKNOWN_BROKER, "TOPO-BROKERS")
    if command.consumer in state.consumers:
        return _refuse(state, Refusal.CONSUMER_EXISTS, "TOPO-CLIENTS")
    consumer = Consumer(command.consumer, command.broker, command.destination, command.priority)
    return _settled(replace(state, consumers=state.consumers.set(command.consumer, consumer)))


def unsubscribe(state: TopologyState, command: Unsubscribe) -> Result:
    """A client consumer closes; every subscription that stood only for it goes (removal cascades)."""
    if command.consumer not in state.consumers:
        return _refuse(state, Refusal.CONSUMER_NOT_FOUND, "TOPO-CLIENTS")
    return _settled(replace(state, consumers=state.consumers.remove(command.consumer)))


def add_producer(state: TopologyState, command: AddProducer) -> Result:
    """A producer opens (it only shapes the spillage metric)."""
    if _unknown(state, command.broker):
        return _refuse(state, Refusal.UNKNOWN_BROKER, "TOPO-BROKERS")
    if command.producer in state.producers:
        return _refuse(state, Refusal.PRODUCER_EXISTS, "TOPO-CLIENTS")
    producer = Producer(command.producer, command.broker, command.destination)
    return replace(state, producers=state.producers.set(command.producer, producer)), Applied(rule="TOPO-CLIENTS")


def remove_producer(state: TopologyState, command: RemoveProducer) -> Result:
    """A producer closes."""
    if command.producer not in state.producers:
        return _refuse(state, Refusal.PRODUCER_NOT_FOUND, "TOPO-CLIENTS")
    return replace(state, producers=state.producers.remove(command.producer)), Applied(rule="TOPO-CLIENTS")


def send(state: TopologyState, command: Send) -> Result:
    """A client sends one message at ``broker``; it is routed hop by hop until it is delivered or waits."""
    if _unknown(state, command.broker):
        return _refuse(state, Refusal.UNKNOWN_BROKER, "TOPO-BROKERS")
    message = Message(state.next_message, command.destination)
    state = replace(state, next_message=state.next_message + 1)
    state, events = route(state, command.broker, message)
    return state, Sent(message.id, events, rule="TOPO-MSG-ROUTE")


def _settled(state: TopologyState) -> Result:
    return settle_network(state)


def query_demand(state: TopologyState, command: QueryDemand) -> Result:
    """Which brokers hold a registration for the destination (a client consumer or a demand subscription), and
    each registration's broker, brokerPath and priority.

    Rule TOPO-QUERY-DEMAND: a query changes nothing. On ActiveMQ it is what the destination's consumer
    advisories show (``AdvisoryBroker.addConsumer`` advises every consumer, a demand subscription too, with its
    ``ConsumerInfo``: broker, brokerPath, priority).

    post: __return__[0] == state
    """
    held = [r for r in state.demand if r.destination == command.destination]
    holdings = sorted((Holding(r.broker, r.path, r.priority) for r in held),
                      key=lambda h: (h.broker, h.path, h.priority))
    return state, DemandQueried(command.destination, tuple(sorted({r.broker for r in held})), tuple(holdings),
                                rule="TOPO-QUERY-DEMAND")


_HANDLERS: dict[type, Callable[[TopologyState, TopologyCommand], Result]] = {
    AddBroker: add_broker,  # type: ignore[dict-item]
    Connect: connect,  # type: ignore[dict-item]
    TreeConnect: tree_connect,  # type: ignore[dict-item]
    Disconnect: disconnect,  # type: ignore[dict-item]
    Move: move,  # type: ignore[dict-item]
    SetTtl: set_ttl,  # type: ignore[dict-item]
    SetReplay: set_replay,  # type: ignore[dict-item]
    Subscribe: subscribe,  # type: ignore[dict-item]
    Unsubscribe: unsubscribe,  # type: ignore[dict-item]
    AddProducer: add_producer,  # type: ignore[dict-item]
    RemoveProducer: remove_producer,  # type: ignore[dict-item]
    Send: send,  # type: ignore[dict-item]
    QueryDemand: query_demand,  # type: ignore[dict-item]
}


def apply(state: TopologyState, command: TopologyCommand) -> Result:
    """Apply one command; the new state and the outcome. TypeError names an unknown command type."""
    handler = _HANDLERS.get(type(command))
    if handler is None:
        raise TypeError(f"not a topology command: {command!r}")
    return handler(state, command)


def run(commands: list[TopologyCommand], state: TopologyState | None = None) -> tuple[TopologyState, list[TopologyOutcome]]:
    """Apply ``commands`` in order from ``state`` (default: empty); the final state and every outcome."""
    current = state if state is not None else initial_state()
    outcomes = []
    for command in commands:
        current, outcome = apply(current, command)
        outcomes.append(outcome)
    return current, outcomes
