"""A smoke of the catalogue against a real Artemis broker (the fast tier's share of "real Artemis in the loop").

One single-node Artemis (the release ``artemis-latest`` stands for) serves
the whole module. Twenty-odd catalogue cases of address resolution and
duplicate detection run against it through the same SUT as
``brokerspec conform --sut artemis``, a restart and a crash among them, and
every one must agree with the spec; two more prepare XA branches, one across
a crash and a restart. The whole catalogue on every release is
the deep tier's (``make artemis``, ``docs/artemis-fidelity.md``).

Sixteen load-balancing cases, transactions and acknowledgements among them,
run on a three-node cluster of the same release, which the SUT starts for
the first of them.

That the comparison can fail is shown on the same broker: a case whose
outcomes the spec computes differently for 2.11 and for the latest release
is run once, and what the broker did must equal the latest profile's
outcomes and differ from 2.11's.

Without a fetched distribution (``brokerspec artemis fetch``) the module is
skipped, unless ``BROKERSPEC_REQUIRE_ARTEMIS=1`` (CI sets it), when it fails.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest

from brokerspec.artemis.releases import DEFAULT_RELEASE, RELEASES, distribution_home
from brokerspec.artemis.sut import ArtemisSut, release_profile
from brokerspec.conform.catalogue import Case, all_cases
from brokerspec.conform.runner import Verdict, run_conformance
from brokerspec.spec import Profile, get_profile
from brokerspec.spec.addressing import apply as apply_addressing
from brokerspec.spec.addressing import initial_state as addressing_state
from brokerspec.spec.addressing import AddressingCommand, CreateAddress, CreateQueue, RoutingType
from brokerspec.spec.addressing import Send as AddressingSend
from brokerspec.spec.balancing import Ack, Attach, Delivered, Failed, Refusal, Returned, Send
from brokerspec.spec.balancing import CreateQueue as MakeQueue
from brokerspec.spec.balancing import apply as apply_balancing
from brokerspec.spec.balancing import initial_state as balancing_state
from brokerspec.spec.duplicates import Crash, Restart

VERSION = DEFAULT_RELEASE
REQUIRED = os.environ.get("BROKERSPEC_REQUIRE_ARTEMIS", "") == "1"


def missing() -> list[str]:
    """What this machine lacks to run Artemis ``VERSION`` (empty when it can)."""
    lacking = [tool for tool in ("java", "javac", "jar") if shutil.which(tool) is None]
    if not (distribution_home(VERSION) / "bin" / "artemis").is_file():
        lacking.append(f"the Artemis {VERSION} distribution (run `brokerspec artemis fetch`)")
    return lacking


MISSING = missing()
pytestmark = [
    pytest.mark.artemis,
    pytest.mark.skipif(bool(MISSING) and not REQUIRED, reason="real Artemis cannot run here: " + "; ".join(MISSING)),
]

SMOKE = (
    "addressing/seed-fqqn-resolves-without-ambiguity-check",
    "addressing/queue-name-taken-on-same-address",
    "addressing/create-refuses-empty-and-separator-names",
    "addressing/delete-address-with-queues-needs-force",
    "addressing/fqqn-splits-at-first-separator",
    "addressing/fqqn-empty-parts",
    "addressing/fqqn-wrong-address-consumer",
    "addressing/lookalike-decomposed-accent-is-another-address",
    "addressing/consume-refused-when-queue-auto-creation-off",
    "addressing/core-send-creates-the-address-part-only",
    "addressing/fqqn-send-reaches-only-that-queue",
    "addressing/prefix-stripped-and-sets-routing-type",
    "addressing/prefix-removed-and-empty-refused",  # leaves an empty prefix: the next domain must not see it
    "duplicates/nontx-duplicate-dropped-but-client-told-ok",
    "duplicates/duplicate-in-transaction-makes-it-rollback-only",
    "duplicates/rollback-leaves-no-id-and-returns-messages",
    "duplicates/bridge-ids-have-their-own-cache",
    "duplicates/full-cache-evicts-the-oldest-id",
    "duplicates/each-address-has-its-own-cache",
    "duplicates/restart-reloads-persisted-ids",
    "duplicates/crash-loses-open-transaction",
    "duplicates/per-address-size-applies-to-one-address",
)
"""The smoke's cases, run in this order: each name must exist in the catalogue (checked below)."""


@pytest.fixture(scope="module")
def sut() -> Iterator[ArtemisSut]:
    assert not MISSING, "; ".join(MISSING)
    broker = ArtemisSut(VERSION)
    try:
        yield broker
    finally:
        broker.close()


def smoke_cases(profile: Profile) -> list[Case]:
    by_name = {case.name: case for case in all_cases()}
    unknown = [name for name in SMOKE if name not in by_name]
    assert not unknown, f"the smoke names cases the catalogue does not have: {unknown}"
    return [by_name[name] for name in SMOKE if by_name[name].applies_to(profile)]


def test_the_smoke_agrees_with_real_artemis(sut: ArtemisSut) -> None:
    profile = release_profile(RELEASES[VERSION])
    cases = smoke_cases(profile)
    restarts = {type(c).__name__ for case in cases for c in case.commands if isinstance(c, (Restart, Crash))}
    assert len(cases) >= 20 and restarts == {"Restart", "Crash"}
    report = run_conformance(sut, cases, profile)
    assert not report.stopped, report.stopped
    disagreements = [f"{r.case.name}: {r.message.splitlines()[0] if r.message else r.verdict.value}"
                     for r in report.results if r.verdict is not Verdict.PASSED]
    assert not disagreements, "\n".join(disagreements)
    assert len(report.results) == len(cases)


def test_the_broker_is_told_apart_from_a_profile_it_does_not_have(sut: ArtemisSut) -> None:
    """The same script under the two Artemis profiles: the broker must match one and so differ from the other."""
    case = next(c for c in all_cases() if c.name == "addressing/core-send-creates-the-address-part-only")
    latest = release_profile(RELEASES[VERSION])
    sut.reset("addressing", latest)
    observed = [sut.execute(command) for command in case.commands]
    expected = {}
    for profile in (latest, get_profile("artemis-2.11")):
        state, outcomes = addressing_state(profile), []
        for command in case.commands:
            state, outcome = apply_addressing(state, command)
            outcomes.append(outcome)
        expected[profile.name] = outcomes
    assert observed == expected["artemis-latest"]
    assert observed != expected["artemis-2.11"]


XA_SMOKE = (
    "duplicates/xa-duplicate-fails-the-prepare-and-rolls-back",
    "duplicates/xa-prepared-transaction-survives-a-crash",
)
"""XA two-phase commit on the same broker: a prepare a duplicate fails, and a prepared branch across a crash and a
restart, ended by its xid from a new session."""


def test_prepared_transactions_on_real_artemis_agree(sut: ArtemisSut) -> None:
    profile = release_profile(RELEASES[VERSION])
    by_name = {case.name: case for case in all_cases()}
    report = run_conformance(sut, [by_name[name] for name in XA_SMOKE], profile)
    assert report.hello is not None and report.hello.version == 3, "the adapter speaks protocol version 3"
    disagreements = [f"{r.case.name}: {r.message.splitlines()[0] if r.message else r.verdict.value}"
                     for r in report.results if r.verdict is not Verdict.PASSED]
    assert not disagreements and len(report.results) == len(XA_SMOKE), "\n".join(disagreements)


def test_a_prepared_bridge_id_is_told_apart_from_2_11(sut: ArtemisSut) -> None:
    """A bridge ID sent in a branch is visible while the branch is prepared from 2.18 on (an instant add), not in
    2.11; after a restart it waits for the second phase in both."""
    case = next(c for c in all_cases() if c.name == "duplicates/xa-prepared-bridge-id-after-a-restart")
    latest = release_profile(RELEASES[VERSION])
    sut.reset("duplicates", latest)
    observed = [sut.execute(command) for command in case.commands]
    assert observed == case.expected(latest)
    assert observed != case.expected(get_profile("artemis-2.11"))


CLUSTER_SMOKE = (
    "balancing/consumers-take-turns-and-a-paused-one-takes-nothing",
    "balancing/on-demand-sends-every-message-where-the-consumer-is",
    "balancing/each-multicast-queue-gets-a-copy-and-same-named-ones-balance",
    "balancing/on-demand-redistributes-waiting-messages-as-copies",
    "balancing/redistribution-skips-the-originating-queue",
    "balancing/last-consumer-closing-starts-redistribution",
    "balancing/a-new-queue-starts-redistribution",
    "balancing/pull-consumer-draws-messages-to-its-node",
    "balancing/acknowledgement-is-cumulative",
    "balancing/close-return-order-2.11-head-latest-arrival",
    "balancing/returned-messages-redistribute-when-no-consumer-is-left",
    "balancing/acknowledging-a-message-not-held-gives-back-what-is-held",
    "balancing/transacted-send-crosses-the-cluster-at-the-commit",
    "balancing/rollback-returns-what-was-acknowledged-then-what-is-held",
    "balancing/failed-acknowledgement-makes-the-transaction-rollback-only",
    "balancing/rolled-back-messages-redistribute-when-the-consumer-closes",
)
"""Load-balancing cases for the three-node cluster the same SUT starts on the first of them."""


def test_load_balancing_on_a_real_cluster_agrees(sut: ArtemisSut) -> None:
    profile = release_profile(RELEASES[VERSION])
    by_name = {case.name: case for case in all_cases()}
    cases = [by_name[name] for name in CLUSTER_SMOKE]
    report = run_conformance(sut, cases, profile)
    disagreements = [f"{r.case.name}: {r.message.splitlines()[0] if r.message else r.verdict.value}"
                     for r in report.results if r.verdict is not Verdict.PASSED]
    assert not disagreements and len(report.results) == len(cases), "\n".join(disagreements)
    assert sut.cluster is not None and len(sut.cluster.nodes) == 3


def test_the_cluster_is_told_apart_from_a_release_without_the_new_queue_trigger(sut: ArtemisSut) -> None:
    """A queue created beside a remote consumer moves waiting messages from 2.20.0 on, never in 2.11.0."""
    case = next(c for c in all_cases() if c.name == "balancing/a-new-queue-starts-redistribution")
    latest = release_profile(RELEASES[VERSION])
    sut.reset("balancing", latest)
    observed = [sut.execute(command) for command in case.commands]
    expected = {}
    for profile in (latest, get_profile("artemis-2.11")):
        state, outcomes = balancing_state(profile), []
        for command in case.commands:
            state, outcome = apply_balancing(state, command)
            outcomes.append(outcome)
        expected[profile.name] = outcomes
    assert observed == expected["artemis-latest"]
    assert observed != expected["artemis-2.11"]


def test_a_typed_send_to_an_address_without_queues_finds_no_bindings_on_the_cluster(sut: ArtemisSut) -> None:
    """The adapter makes every address of a case exist on every node, as a symmetric cluster has it; with
    auto-creation off Artemis would otherwise refuse a typed send (AMQ229203, found fuzzing 2.40.0)."""
    profile = release_profile(RELEASES[VERSION])
    sut.reset("balancing", profile)
    command = Send("n1", "lonely", routing_type=RoutingType.MULTICAST)
    _, expected = apply_balancing(balancing_state(profile), command)
    assert sut.execute(command) == expected


def test_a_multicast_queue_named_like_its_address_joins_the_anycast_group(sut: ArtemisSut) -> None:
    """BindingsImpl groups by routing name; an untyped send reaches one member of the merged group (fuzzing find)."""
    both = frozenset(RoutingType)
    script: list[AddressingCommand] = [CreateAddress("a1", both), CreateQueue("a1", "q1", RoutingType.ANYCAST),
              CreateQueue("a1", "a1", RoutingType.MULTICAST), CreateQueue("a1", "m", RoutingType.MULTICAST),
              AddressingSend("a1"), AddressingSend("a1", RoutingType.MULTICAST)]
    profile = release_profile(RELEASES[VERSION])
    sut.reset("addressing", profile)
    state, expected = addressing_state(profile), []
    for command in script:
        state, outcome = apply_addressing(state, command)
        expected.append(outcome)
    assert [sut.execute(command) for command in script] == expected


def test_an_acknowledgement_of_a_message_not_held_gives_back_what_the_consumer_held(sut: ArtemisSut) -> None:
    """An acknowledgement of a message the consumer does not hold fails, and the broker puts every message the consumer
    held back in the queue with a delivery spent (``ServerConsumerImpl.acknowledge`` rolls back the transaction it
    acknowledged them in, ``RefsOperation.afterRollback``), where the consumer takes them again: what the spec says
    (LB-ACK), outcome for outcome."""
    profile = release_profile(RELEASES[VERSION])
    sut.reset("balancing", profile)
    script = (MakeQueue("n1", "orders", "orders", RoutingType.ANYCAST), Attach("c1", "n1", "orders", manual_ack=True),
              Send("n1", "orders"), Send("n1", "orders"), Ack("c1", 1), Ack("c1", 1))
    state, expected = balancing_state(profile), []
    for command in script:
        state, outcome = apply_balancing(state, command)
        expected.append(outcome)
    observed = [sut.execute(command) for command in script]
    assert observed == expected
    assert observed[-1] == Failed(Refusal.NOT_DELIVERED, (Returned(2, "n1", "orders"),
                                                          Delivered(2, "n1", "orders", "c1")))
