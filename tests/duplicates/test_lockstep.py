"""Reference and fast implementation run in lockstep with the duplicate-detection spec, per profile."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from brokerspec.check.domains import DUPLICATES
from brokerspec.check.runner import run_machine
from brokerspec.impl.duplicates import FastDuplicatesBroker
from brokerspec.spec import PROFILES, Outcome, Profile, get_profile
from brokerspec.spec.duplicates import Commit, Crash, Prepare, Restart, Rollback, TxState
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


def test_the_machine_takes_prepared_transactions_through_restarts_crashes_and_second_phases() -> None:
    """Prepared transactions are common enough to meet every event the lifecycle gives them."""
    seen: Counter[str] = Counter()

    class Watched(FastDuplicatesBroker):
        def execute(self, command: Any) -> Outcome:
            prepared = {session for session, tx in self._txs.items() if tx.status is TxState.PREPARED}
            outcome = super().execute(command)
            seen[outcome.kind] += 1
            if isinstance(command, (Restart, Crash)) and prepared:
                seen[f"{command.op} with a prepared transaction"] += 1
            if isinstance(command, (Commit, Rollback)) and command.session in prepared:
                seen[f"second phase: {command.op}"] += 1
            if isinstance(command, Prepare) and command.session in prepared:
                seen["prepared again"] += 1
            return outcome

    divergence = run_machine(get_profile("artemis-latest"), {"impl": Watched}, max_examples=scaled(80, 400),
                             run_seed=7, domain=DUPLICATES)
    assert divergence is None, divergence.explain()
    for event in ("restart with a prepared transaction", "crash with a prepared transaction",
                  "second phase: commit", "second phase: rollback", "prepared again", "transaction_prepared",
                  "prepare_failed", "no_transaction"):
        assert seen[event] >= 5, (event, seen)
