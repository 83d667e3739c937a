"""Reference and fast implementation run in lockstep with the spec, per profile."""

from __future__ import annotations

import pytest

from brokerspec.check.lockstep import LAYERS
from brokerspec.check.runner import run_machine
from brokerspec.cli import CORE_VARIANT
from brokerspec.spec import PROFILES, Profile, get_profile
from depth import scaled

CHECKED: list[Profile] = [get_profile(n) for n in PROFILES] + [get_profile(n, (CORE_VARIANT,)) for n in PROFILES]


@pytest.mark.parametrize("profile", CHECKED, ids=lambda p: p.label)
def test_reference_and_impl_agree_with_spec(profile: Profile) -> None:
    divergence = run_machine(profile, LAYERS, max_examples=scaled(120, 3000), run_seed=2026)
    assert divergence is None, divergence.explain()
