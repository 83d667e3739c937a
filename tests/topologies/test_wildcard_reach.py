"""The topology fuzzer's alphabet reaches dotted destinations, so a ``*`` that matches across a dot is caught."""

from __future__ import annotations

from pathlib import Path

import pytest

import brokerspec.impl.topologies.demand as demand
from brokerspec.check.domains import get_domain
from brokerspec.check.runner import check_for
from brokerspec.spec import get_profile
from brokerspec.spec.topologies import BridgeConfig, is_permitted


def star_crosses_dots(pattern: str, destination: str) -> bool:
    """The mistake: ``*`` matches the whole rest of the name, dots included (as a shell glob would)."""
    pattern_kind, _, pattern_name = pattern.partition("://")
    kind, _, name = destination.partition("://")
    if pattern_kind != kind:
        return False
    if pattern_name.endswith((".>", ".*")) or pattern_name in (">", "*"):
        stem = pattern_name[:-1]
        return name.startswith(stem) and len(name) > len(stem)
    return pattern_name == name


def permitted_with_the_mistake(config: BridgeConfig, destination: str) -> bool:
    if any(star_crosses_dots(p, destination) for p in config.exclude):
        return False
    return not config.include or any(star_crosses_dots(p, destination) for p in config.include)


def test_the_mistake_only_shows_on_a_dotted_name() -> None:
    config = BridgeConfig(include=("queue://Q.*",))
    assert is_permitted(config, "queue://Q.A") == permitted_with_the_mistake(config, "queue://Q.A")
    assert not is_permitted(config, "queue://Q.A.B") and permitted_with_the_mistake(config, "queue://Q.A.B")


def test_the_lockstep_fuzzer_finds_a_star_that_crosses_dots(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(demand, "is_permitted", permitted_with_the_mistake)
    domain = get_domain("topologies")
    result = check_for(get_profile("artemis-latest"), {"impl": domain.layers["impl"]}, 60.0, tmp_path, 1,
                       domain=domain)
    assert result.divergence is not None, "the fuzzer never drew a dotted name under a wildcard filter"
    assert any("." in str(getattr(c, "destination", "")).partition("://")[2] for c in result.divergence.commands)
