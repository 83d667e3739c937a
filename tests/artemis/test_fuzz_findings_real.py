"""What fuzzing real Artemis found, replayed on a real broker (the release ``artemis-latest`` stands for).

Each script is one a fuzzing run shrank to (or its shape), played through
the same SUT as ``brokerspec fuzz --sut artemis``: every outcome must be
the spec's, and an input the broker cannot be faithfully asked must be
refused as not expressible rather than reported as a difference.

Skipped without a fetched distribution, unless ``BROKERSPEC_REQUIRE_ARTEMIS=1``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from brokerspec.artemis.outcomes import NotExpressible
from brokerspec.artemis.releases import DEFAULT_RELEASE, RELEASES, distribution_home
from brokerspec.artemis.sut import ArtemisSut, release_profile
from brokerspec.spec import Profile
from brokerspec.spec.addressing import (
    Consume,
    CreateAddress,
    CreateQueue,
    DeleteAddress,
    DeleteQueue,
    Lookup,
    RoutingType,
    SetAddressSettings,
    SetPrefix,
)
from brokerspec.spec.addressing import apply as apply_addressing
from brokerspec.spec.addressing import initial_state as addressing_state

VERSION = DEFAULT_RELEASE
REQUIRED = os.environ.get("BROKERSPEC_REQUIRE_ARTEMIS", "") == "1"
LACKING = [tool for tool in ("java", "javac", "jar") if shutil.which(tool) is None]
if not (distribution_home(VERSION) / "bin" / "artemis").is_file():
    LACKING.append(f"the Artemis {VERSION} distribution (run `brokerspec artemis fetch`)")

pytestmark = [
    pytest.mark.artemis,
    pytest.mark.skipif(bool(LACKING) and not REQUIRED, reason="real Artemis cannot run here: " + "; ".join(LACKING)),
]

ANY = RoutingType.ANYCAST
MULTI = RoutingType.MULTICAST
BOTH = frozenset(RoutingType)


@pytest.fixture(scope="module")
def sut() -> Iterator[ArtemisSut]:
    assert not LACKING, "; ".join(LACKING)
    broker = ArtemisSut(VERSION)
    try:
        broker.hello(release_profile(RELEASES[VERSION]), ("addressing",))
        yield broker
    finally:
        broker.close()


def spec_outcomes(profile: Profile, commands: list[Any]) -> list[Any]:
    state, outcomes = addressing_state(profile), []
    for command in commands:
        state, outcome = apply_addressing(state, command)
        outcomes.append(outcome)
    return outcomes


def test_a_queue_named_with_the_separator_is_seen_and_refused_again(sut: ArtemisSut) -> None:
    """createQueue on ``a1::q1::y`` makes ``q1::y``, which a queue query cannot reach by name."""
    profile = release_profile(RELEASES[VERSION])
    commands = [
        CreateAddress("a1", BOTH),
        CreateQueue("a1::q1::y", "q2", ANY),
        CreateQueue("a1::q1::y", "a1:", MULTI),  # AMQ229018, the name map's guard
        CreateQueue("a1", "x", ANY),
        CreateQueue("a1::q1::x", "q2", ANY),  # AMQ229019 names q1::x, blocked by x
        Lookup("q1::y"),
    ]
    sut.reset("addressing", profile)
    assert [sut.execute(c) for c in commands] == spec_outcomes(profile, commands)


def test_deleting_a_queue_named_with_the_separator_is_not_expressible(sut: ArtemisSut) -> None:
    """Artemis half-removes such a queue and throws; the adapter does not ask, and the next reset still empties."""
    profile = release_profile(RELEASES[VERSION])
    for deletion in (DeleteQueue("a1::q1::y"), DeleteAddress("a1", True)):
        sut.reset("addressing", profile)
        sut.execute(CreateAddress("a1", BOTH))
        sut.execute(CreateQueue("a1::q1::y", "q2", ANY))
        with pytest.raises(NotExpressible, match="holds '::'"):
            sut.execute(deletion)
    sut.reset("addressing", profile)
    assert sut.node is not None and not sut.node.queues() and not sut.node.addresses()


def test_a_subscription_queue_outlives_the_consumers_the_adapter_closes(sut: ArtemisSut) -> None:
    """A JMS topic consumer on ``a1::q1`` deletes ``q1`` when it closes; the spec's queue stays until deleted."""
    profile = release_profile(RELEASES[VERSION])
    commands = [
        Consume("a1::q1", MULTI),  # creates a1 and q1
        CreateQueue("a1", "q2", MULTI),
        DeleteQueue("q2"),  # the adapter closes its consumers first
        Lookup("q1"),
        Consume("a1::q1", MULTI),
        SetPrefix("multicast://", MULTI),  # a restart, consumers closed first
        Lookup("q1"),
        Consume("a1::q1", MULTI),
        DeleteQueue("q1"),
        Lookup("q1"),
    ]
    sut.reset("addressing", profile)
    assert [sut.execute(c) for c in commands] == spec_outcomes(profile, commands)


def test_the_jms_clients_fallback_to_its_1x_name_is_not_expressible(sut: ArtemisSut) -> None:
    """No queue ``a1`` and none may be made there, but ``jms.queue.a1`` may be: the JMS client attaches to that."""
    profile = release_profile(RELEASES[VERSION])
    sut.reset("addressing", profile)
    sut.execute(SetAddressSettings("a1", auto_create_queues=False))
    with pytest.raises(NotExpressible, match="jms.queue.a1"):
        sut.execute(Consume("a1"))
    sut.reset("addressing", profile)
    sut.execute(SetAddressSettings("a1", auto_create_queues=False))
    with pytest.raises(NotExpressible, match="jms.queue.a1::a1"):  # an FQQN falls back as well
        sut.execute(Consume("a1::a1"))
    sut.reset("addressing", profile)
    assert sut.node is not None and not sut.node.queues() and not sut.node.addresses()


def test_the_last_queue_of_an_auto_created_address_takes_the_address_along(sut: ArtemisSut) -> None:
    """ARTEMIS-3541: a core session's deleteQueue forces an auto-created address's deletion once it is unbound."""
    profile = release_profile(RELEASES[VERSION])
    commands = [
        Consume("a1::q1", MULTI),
        CreateQueue("a1", "q2", MULTI),
        DeleteQueue("q1"),
        CreateAddress("a1", BOTH),
        DeleteQueue("q2"),
        CreateAddress("a1", BOTH),
        CreateQueue("a1", "q3", ANY),
        DeleteQueue("q3"),
        CreateAddress("a1", BOTH),
    ]
    sut.reset("addressing", profile)
    assert [sut.execute(c) for c in commands] == spec_outcomes(profile, commands)
