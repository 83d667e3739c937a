"""Reference and fast implementation run in lockstep with the duplicate-detection spec, per profile."""

from __future__ import annotations

import pytest

from brokerspec.check.domains import DUPLICATES
from brokerspec.check.runner import run_machine
from brokerspec.spec import PROFILES, Profile, get_profile
from depth import scaled

VARIANTS = (
    (),
    (("duplicates.persist_id_cache", "false"),),
    (("duplicates.reload_keeps", "OLDEST"), ("duplicates.nontx_add", "AFTER_STORE")),
)
CHECKED: list[Profile] = [get_profile(n) for n in PROFILES] + [
    get_profile("artemis-2.11", variant) for variant in VARIANTS[1:]]


@pytest.mark.parametrize("profile", CHECKED, ids=lambda p: p.label)
def test_reference_and_impl_agree_with_spec(profile: Profile) -> None:
    divergence = run_machine(profile, DUPLICATES.layers, max_examples=scaled(80, 2000), run_seed=2026,
                             domain=DUPLICATES)
    assert divergence is None, divergence.explain()
