"""The load-balancing and topology fuzzers' wide alphabets reach sizes their narrow ones never build.

The equivalence check of the mutation score (``brokerspec.conform.equivalence``) and ``brokerspec check``'s
every other batch draw from the wide alphabet, so that a claim like "a queue never has more than a few
consumers" is tested where it could fail. Each planted mistake here shows only past the narrow alphabet's
sizes (four consumer names in both domains): the narrow machine never finds it, the wide one does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from brokerspec.check.domains import BALANCING, TOPOLOGIES, Domain
from brokerspec.check.runner import run_machine
from brokerspec.impl.balancing import FastBalancingBroker
from brokerspec.impl.topologies import FastTopologyBroker
from brokerspec.spec import get_profile
from brokerspec.spec.balancing import Attach
from brokerspec.spec.topologies import Applied, Subscribe

SCRIPTS = 150


class FirstFourConsumersOnly(FastBalancingBroker):
    """Round robin over at most a queue's first four consumers (a fixed-size table of turns)."""

    def _pick_consumer(self, consumers: Sequence[Any], position: int, color: str | None) -> int:
        return super()._pick_consumer(consumers[:4], position if position < 4 else 0, color)


class AtMostFourConsumers(FastTopologyBroker):
    """A network that registers at most four client consumers; a fifth is acknowledged and forgotten."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.open: set[str] = set()

    def execute(self, command: Any) -> Any:
        if isinstance(command, Subscribe) and command.consumer not in self.open and len(self.open) >= 4:
            return Applied(())
        if isinstance(command, Subscribe):
            self.open.add(command.consumer)
        return super().execute(command)


def _consumers_named(commands: tuple[Any, ...], kind: type[Any]) -> int:
    return len({command.consumer for command in commands if isinstance(command, kind)})


@pytest.mark.parametrize(("domain", "profile", "planted", "kind"), [
    (BALANCING, "artemis-latest", FirstFourConsumersOnly, Attach),
    (TOPOLOGIES, "seed", AtMostFourConsumers, Subscribe),
], ids=["balancing: a fifth consumer on one queue", "topologies: a fifth consumer in the network"])
def test_a_fifth_consumer_is_reached_only_by_the_wide_alphabet(domain: Domain, profile: str, planted: type[Any],
                                                              kind: type[Any]) -> None:
    subjects = {"planted": planted}
    assert run_machine(get_profile(profile), subjects, SCRIPTS, 5, domain=domain) is None, \
        "four consumer names made five"
    found = run_machine(get_profile(profile), subjects, SCRIPTS, 5, domain=domain, wide=True, shrink=False)
    assert found is not None, "no wide script opened five consumers and showed the fifth's difference"
    assert _consumers_named(found.commands, kind) >= 5
