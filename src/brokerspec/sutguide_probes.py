"""Which check wins when a command breaks two at once, found by running the spec.

Why this module exists
----------------------
A broker that refuses a command has to give the *same* refusal as the spec
when several would apply: a queue that already exists on an address that
does not allow its routing type is ``queue_exists``, not
``routing_type_not_allowed``, and a conformance case fails on the wrong one.
The spec holds that order only as the order of ``if`` statements, so the SUT
author guide (:mod:`brokerspec.sutguide`) *measures* it.

A :class:`Probe` names two conditions and builds, for each of the four
combinations, a short script whose last command is the one probed (the
conditions sit in the set-up or in the command itself). Under a profile the
probe applies when the script with neither condition, with only the first and
with only the second all end in different outcomes (so each condition on its
own decides something); the script with both then shows which one wins. The
probes are hand-made; what they show is computed, so the guide cannot claim an
order the spec does not have. A probe that does not apply under a profile is
reported as such, with the reason, never silently dropped.

>>> result = run_probe(PROBES[0], get_profile("seed"))
>>> result.winner, result.outcome.kind, result.outcome.rule
('first', 'rejected', 'ADDR-NAME-EMPTY')
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from brokerspec.check.domains import get_domain
from brokerspec.spec import Outcome, Profile, get_profile
from brokerspec.spec import addressing as ad
from brokerspec.spec import balancing as lb
from brokerspec.spec import duplicates as dup
from brokerspec.spec import topologies as topo

A, M = ad.RoutingType.ANYCAST, ad.RoutingType.MULTICAST
BOTH = frozenset({A, M})

Script = tuple[Any, ...]


@dataclass(frozen=True)
class Probe:
    """Two conditions that can hold at once, and a maker of the script for each combination."""

    domain: str
    first: str
    first_rule: str
    second: str
    second_rule: str
    make: Callable[[bool, bool], Script]

    @property
    def op(self) -> str:
        """The operation probed: the last command's."""
        return str(self.make(True, True)[-1].op)


@dataclass(frozen=True)
class ProbeResult:
    """What a probe showed under one profile: the winner (``first``/``second``) and its outcome, or why not."""

    probe: Probe
    profile: str
    winner: str | None
    outcome: Outcome | None
    why_not: str = ""


def outcome_key(outcome: Outcome) -> tuple[str, str, str]:
    """What tells two outcomes apart for the guide: the type, the reason (type or value) or status, and the rule."""
    reason = getattr(outcome, "reason", getattr(outcome, "status", None))
    token = reason.value if isinstance(reason, Enum) else str(getattr(reason, "kind", ""))
    return outcome.kind, token, outcome.rule


def play(domain: str, profile: Profile, script: Script) -> Outcome:
    """The spec's outcome of the script's last command under ``profile``."""
    spec = get_domain(domain)
    state = spec.initial_state(profile)
    outcome: Outcome | None = None
    for command in script:
        state, outcome = spec.apply(state, command)
    assert outcome is not None, "a probe script has at least one command"
    return outcome


def run_probe(probe: Probe, profile: Profile) -> ProbeResult:
    """Run the four scripts of ``probe`` under ``profile`` and say which condition wins, or why none is found."""
    neither, first, second, both = (play(probe.domain, profile, probe.make(a, b))
                                    for a, b in ((False, False), (True, False), (False, True), (True, True)))
    keys = {name: outcome_key(o) for name, o in (("neither", neither), ("first", first), ("second", second))}
    for name, condition, rule in (("first", probe.first, probe.first_rule),
                                  ("second", probe.second, probe.second_rule)):
        if keys[name] == keys["neither"] or keys[name][2] != rule:
            return ProbeResult(probe, profile.name, None, None, f"\"{condition}\" alone is not refused by {rule}")
    for name, outcome in (("first", first), ("second", second)):
        if outcome_key(both) == keys[name]:
            return ProbeResult(probe, profile.name, name, both)
    return ProbeResult(probe, profile.name, None, None, "together they give a third outcome")


def run_all(profiles: tuple[str, ...]) -> list[ProbeResult]:
    """Every probe under every profile named."""
    return [run_probe(probe, get_profile(name)) for probe in PROBES for name in profiles]


def probe_scripts() -> list[tuple[str, Script]]:
    """Every probe's and example's script with its domain: what the guide observes besides the catalogue."""
    made = [(p.domain, p.make(a, b)) for p in PROBES for a in (False, True) for b in (False, True)]
    return made + list(EXAMPLES)


# --- address resolution -------------------------------------------------------------


def _queue_empty_vs_no_address(empty: bool, missing: bool) -> Script:
    setup = () if missing else (ad.CreateAddress("a", BOTH),)
    return (*setup, ad.CreateQueue("a", "" if empty else "q", A))


def _queue_taken_vs_no_address(taken: bool, missing: bool) -> Script:
    other = (ad.CreateAddress("x", BOTH), ad.CreateQueue("x", "q", A)) if taken else ()
    own = () if missing else (ad.CreateAddress("a", BOTH),)
    return (*other, *own, ad.CreateQueue("a", "q", A))


def _queue_exists_vs_routing_type(exists: bool, wrong_type: bool) -> Script:
    existing = (ad.CreateQueue("a", "q", A),) if exists else ()
    return (ad.CreateAddress("a", frozenset({A})), *existing, ad.CreateQueue("a", "q", M if wrong_type else A))


def _queue_empty_vs_routing_type(empty: bool, wrong_type: bool) -> Script:
    return (ad.CreateAddress("a", frozenset({A})), ad.CreateQueue("a", "" if empty else "q", M if wrong_type else A))


def _no_auto_create(address: bool, queues: bool) -> ad.SetAddressSettings:
    return ad.SetAddressSettings("#", auto_create_addresses=address, auto_create_queues=queues)


def _send_empty_vs_no_address(empty: bool, no_auto: bool) -> Script:
    return (_no_auto_create(not no_auto, True), ad.Send("" if empty else "a", A))


def _send_empty_vs_routing_type(empty: bool, wrong_type: bool) -> Script:
    return (ad.CreateAddress("a", frozenset({M}) if wrong_type else BOTH), _no_auto_create(False, True),
            ad.Send("a::" if empty else "a", A))


def _consume_empty_vs_no_queue(empty: bool, no_auto: bool) -> Script:
    return (_no_auto_create(True, not no_auto), ad.Consume("a::" if empty else "a::q", A))


def _consume_ambiguous_vs_no_queue(ambiguous: bool, no_auto: bool) -> Script:
    twins = (ad.CreateAddress("a", BOTH), ad.CreateAddress("b", BOTH), ad.CreateQueue("a", "q", A),
             ad.CreateQueue("b", "q", A)) if ambiguous else ()
    return (*twins, _no_auto_create(True, not no_auto), ad.Consume("q", A))


# --- duplicate detection --------------------------------------------------------------


def _id(value: str, kind: dup.IdKind = dup.IdKind.STRING) -> dup.DuplicateId:
    return dup.DuplicateId(kind, value)


def _send_duplicate_vs_full(in_tx: bool) -> Callable[[bool, bool], Script]:
    def make(seen: bool, full: bool) -> Script:
        earlier = (dup.Send("s0", "orders", _id("x")),) if seen else ()
        begin = (dup.Begin("s"),) if in_tx else ()
        return (dup.CreateQueue("orders", "q"), *earlier, *begin,
                dup.Send("s", "orders", _id("x"), address_full=full))
    return make


def _send_not_bytes_vs_full(long_id: bool, full: bool) -> Script:
    value = _id("7", dup.IdKind.LONG) if long_id else _id("7")
    return dup.CreateQueue("orders", "q"), dup.Send("s", "orders", value, address_full=full)


def _prepared(prepared: bool) -> Script:
    """A session ``s`` with a transaction open, prepared when asked."""
    return (dup.CreateQueue("orders", "q"), dup.Begin("s"), *((dup.Prepare("s"),) if prepared else ()))


def _receive_prepared_vs_no_queue(prepared: bool, missing: bool) -> Script:
    return *_prepared(prepared), dup.Receive("s", "missing" if missing else "q")


def _send_prepared_vs_not_bytes(prepared: bool, long_id: bool) -> Script:
    return *_prepared(prepared), dup.Send("s", "orders", _id("7", dup.IdKind.LONG if long_id else dup.IdKind.STRING))


# --- load balancing ---------------------------------------------------------------------


def _attach_unknown_node_vs_consumer(unknown: bool, taken: bool) -> Script:
    earlier = (lb.Attach("c1", "n1", "q"),) if taken else ()
    return (lb.CreateQueue("n1", "orders", "q", A), lb.CreateQueue("n1", "orders", "r", A), *earlier,
            lb.Attach("c1", "n9" if unknown else "n1", "r"))


def _attach_no_queue_vs_consumer(missing: bool, taken: bool) -> Script:
    earlier = (lb.Attach("c1", "n1", "q"),) if taken else ()
    return (lb.CreateQueue("n1", "orders", "q", A), lb.CreateQueue("n1", "orders", "r", A), *earlier,
            lb.Attach("c1", "n1", "nope" if missing else "r"))


def _link_unknown_vs_self(unknown: bool, itself: bool) -> Script:
    node = "n9" if unknown else "n1"
    return lb.AddNode("n2"), lb.SetLink(node, node if itself else "n2", False)


# --- topologies -----------------------------------------------------------------------------


def _brokers(*names: str) -> Script:
    return tuple(topo.AddBroker(name) for name in names)


def _connect_unknown_vs_self(unknown: bool, itself: bool) -> Script:
    source = "z" if unknown else "a"
    return (*_brokers("a", "b"), topo.Connect(source, source if itself else "b"))


def _connect_self_vs_mixed(itself: bool, tree: bool) -> Script:
    setup = (topo.TreeConnect("a", "c"),) if tree else ()
    return (*_brokers("a", "b", "c"), *setup, topo.Connect("a", "a" if itself else "b"))


def _tree_has_parent_vs_self(has_parent: bool, itself: bool) -> Script:
    setup = (topo.TreeConnect("a", "b"),) if has_parent else ()
    return (*_brokers("a", "b", "c"), *setup, topo.TreeConnect("a", "a" if itself else "c"))


def _tree_self_vs_mixed(itself: bool, network: bool) -> Script:
    setup = (topo.Connect("a", "b"),) if network else ()
    return (*_brokers("a", "b", "c"), *setup, topo.TreeConnect("a", "a" if itself else "c"))


def _tree_mixed_vs_leaf(network: bool, leaf_parent: bool) -> Script:
    setup = (topo.Connect("a", "b"),) if network else ()
    return (*_brokers("a", "b", "c", "d"), topo.TreeConnect("c", "d", topo.Role.LEAF), *setup,
            topo.TreeConnect("a", "c" if leaf_parent else "d"))


def _move_not_in_tree_vs_self(not_in_tree: bool, itself: bool) -> Script:
    setup = () if not_in_tree else (topo.TreeConnect("a", "b"),)
    return (*_brokers("a", "b", "c"), *setup, topo.Move("a", "a" if itself else "c"))


def _move_unknown_vs_not_in_tree(unknown: bool, not_in_tree: bool) -> Script:
    setup = () if not_in_tree else (topo.TreeConnect("a", "b"),)
    return (*_brokers("a", "b", "c"), *setup, topo.Move("a", "z" if unknown else "c"))


def _subscribe_unknown_vs_taken(unknown: bool, taken: bool) -> Script:
    earlier = (topo.Subscribe("c1", "a", "queue://q"),) if taken else ()
    return (*_brokers("a"), *earlier, topo.Subscribe("c1", "z" if unknown else "a", "queue://q"))


def _producer_unknown_vs_taken(unknown: bool, taken: bool) -> Script:
    earlier = (topo.AddProducer("p1", "a", "queue://q"),) if taken else ()
    return (*_brokers("a"), *earlier, topo.AddProducer("p1", "z" if unknown else "a", "queue://q"))


PROBES: tuple[Probe, ...] = (
    Probe("addressing", "the queue name is empty", "ADDR-NAME-EMPTY",
          "the address does not exist", "ADDR-QUEUE-NO-ADDRESS", _queue_empty_vs_no_address),
    Probe("addressing", "a queue of that name is on another address", "ADDR-QUEUE-EXISTS",
          "the address does not exist", "ADDR-QUEUE-NO-ADDRESS", _queue_taken_vs_no_address),
    Probe("addressing", "the queue exists on that address", "ADDR-QUEUE-EXISTS",
          "the address does not allow the routing type", "ADDR-QUEUE-ROUTING-TYPE", _queue_exists_vs_routing_type),
    Probe("addressing", "the queue name is empty", "ADDR-NAME-EMPTY",
          "the address does not allow the routing type", "ADDR-QUEUE-ROUTING-TYPE", _queue_empty_vs_routing_type),
    Probe("addressing", "the name is empty", "ADDR-NAME-EMPTY",
          "the address is missing and may not be auto-created", "ADDR-AUTO-NO-ADDRESS", _send_empty_vs_no_address),
    Probe("addressing", "the FQQN's queue part is empty", "ADDR-NAME-EMPTY",
          "the address lacks the routing type and may not be widened", "ADDR-AUTO-ROUTING-TYPE",
          _send_empty_vs_routing_type),
    Probe("addressing", "the FQQN's queue part is empty", "ADDR-NAME-EMPTY",
          "queues may not be auto-created", "ADDR-CONSUME-NO-QUEUE", _consume_empty_vs_no_queue),
    Probe("addressing", "the bare name is bound on two addresses", "ADDR-CONSUME-AMBIGUOUS",
          "queues may not be auto-created", "ADDR-CONSUME-NO-QUEUE", _consume_ambiguous_vs_no_queue),
    Probe("duplicates", "the ID is in the address's cache", "DUP-NONTX-DUPLICATE",
          "the address is full (no transaction)", "DUP-SEND-FAILED", _send_duplicate_vs_full(False)),
    Probe("duplicates", "the ID is in the address's cache", "DUP-TX-DUPLICATE",
          "the address is full (in a transaction)", "DUP-SEND-FAILED-IN-TX", _send_duplicate_vs_full(True)),
    Probe("duplicates", "the ID is a long (no byte form)", "DUP-ID-NOT-BYTES",
          "the address is full", "DUP-SEND-FAILED", _send_not_bytes_vs_full),
    Probe("duplicates", "the session's transaction is prepared", "DUP-XA-PREPARED-BUSY",
          "the queue does not exist", "DUP-QUEUE-NOT-FOUND", _receive_prepared_vs_no_queue),
    Probe("duplicates", "the session's transaction is prepared", "DUP-XA-PREPARED-BUSY",
          "the ID is a long (no byte form)", "DUP-ID-NOT-BYTES", _send_prepared_vs_not_bytes),
    Probe("balancing", "the node is unknown", "LB-NODES",
          "the consumer name is taken", "LB-CONSUMERS", _attach_unknown_node_vs_consumer),
    Probe("balancing", "the queue is not on the node", "LB-QUEUE-PER-NODE",
          "the consumer name is taken", "LB-CONSUMERS", _attach_no_queue_vs_consumer),
    Probe("balancing", "a node is unknown", "LB-NODES",
          "the link goes from a node to itself", "LB-DISCONNECTED", _link_unknown_vs_self),
    Probe("topologies", "a broker is unknown", "TOPO-BROKERS",
          "the connector goes from a broker to itself", "TOPO-CONNECTORS", _connect_unknown_vs_self),
    Probe("topologies", "the connector goes from a broker to itself", "TOPO-CONNECTORS",
          "the broker uses tree connectors", "TOPO-ONE-DESIGN", _connect_self_vs_mixed),
    Probe("topologies", "the broker already has a parent", "TOPO-TREE-ROLES",
          "the connector goes from a broker to itself", "TOPO-CONNECTORS", _tree_has_parent_vs_self),
    Probe("topologies", "the connector goes from a broker to itself", "TOPO-CONNECTORS",
          "the broker uses network connectors", "TOPO-ONE-DESIGN", _tree_self_vs_mixed),
    Probe("topologies", "the broker uses network connectors", "TOPO-ONE-DESIGN",
          "the parent is a leaf", "TOPO-TREE-ROLES", _tree_mixed_vs_leaf),
    Probe("topologies", "the broker is in no tree", "TOPO-TREE-ROLES",
          "the new parent is the broker itself", "TOPO-CONNECTORS", _move_not_in_tree_vs_self),
    Probe("topologies", "the new parent is unknown", "TOPO-BROKERS",
          "the broker is in no tree", "TOPO-TREE-ROLES", _move_unknown_vs_not_in_tree),
    Probe("topologies", "the broker is unknown", "TOPO-BROKERS",
          "the consumer name is taken", "TOPO-CLIENTS", _subscribe_unknown_vs_taken),
    Probe("topologies", "the broker is unknown", "TOPO-BROKERS",
          "the producer name is taken", "TOPO-CLIENTS", _producer_unknown_vs_taken),
)
"""The probes, by domain; each is run under every profile."""

EXAMPLES: tuple[tuple[str, Script], ...] = (
    ("addressing", (ad.CreateAddress("a", BOTH), ad.CreateQueue("a", "q2", A), ad.CreateQueue("a", "q1", M),
                    ad.DeleteAddress("a"))),
)
"""Scripts whose outcomes the guide observes besides the catalogue's and the probes': a refusal with a list of
two queues, so that its order is checked (``address_has_queues.queues``)."""
