"""Profiles: the bundles, their options as data, and overrides with clear errors."""

from __future__ import annotations

import pytest

from brokerspec.spec import PROFILES, InvalidOption, QueueNameScope, UnknownProfile, get_profile


def test_three_bundled_profiles() -> None:
    assert set(PROFILES) == {"seed", "artemis-2.11", "artemis-latest"}
    assert get_profile("seed").addressing.name_scope is QueueNameScope.ADDRESS
    assert get_profile("artemis-latest").addressing.name_scope is QueueNameScope.BROKER


def test_options_as_plain_data() -> None:
    options = get_profile("artemis-2.11").options()
    assert options["addressing"]["name_scope"] == "BROKER"
    assert options["addressing"]["anycast_consume_rejects_multicast_queue"] is False


@pytest.mark.parametrize(("dotted", "value", "expected"), [
    ("addressing.fqqn_checks_address", "false", False),
    ("addressing.fqqn_checks_address", "ON", True),
    ("addressing.name_scope", "address", QueueNameScope.ADDRESS),
    ("addressing.name_scope", "BROKER", QueueNameScope.BROKER),
])
def test_overrides(dotted: str, value: str, expected: object) -> None:
    profile = get_profile("artemis-latest", ((dotted, value),))
    assert getattr(profile.addressing, dotted.split(".")[1]) == expected
    assert profile.label == f"artemis-latest+{dotted}={value}"
    assert profile.overrides == ((dotted, value),)


@pytest.mark.parametrize(("dotted", "value", "fragment"), [
    ("nowhere.x", "1", "unknown option domain 'nowhere'"),
    ("addressing.nope", "1", "unknown option 'nope'"),
    ("addressing.fqqn_checks_address", "maybe", "takes true or false, not 'maybe'"),
    ("addressing.name_scope", "GALAXY", "takes one of ADDRESS, BROKER"),
])
def test_bad_overrides_name_the_problem(dotted: str, value: str, fragment: str) -> None:
    with pytest.raises(InvalidOption, match=fragment):
        get_profile("seed", ((dotted, value),))


def test_unknown_profile_lists_the_known_ones() -> None:
    with pytest.raises(UnknownProfile, match="known profiles: seed, artemis-2.11, artemis-latest"):
        get_profile("artemis-1.0")
