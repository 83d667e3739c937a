"""A checker run can leave operations out: its rules stop drawing them, and a run with nothing left ends.

``brokerspec fuzz`` relies on this to drop an operation a SUT answers with an ``error`` reply
(``docs/sut-protocol.md``) and for ``--exclude-op``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from brokerspec.check.domains import get_domain
from brokerspec.check.machine import RunStats
from brokerspec.check.runner import check_for
from brokerspec.codec import COMMANDS
from brokerspec.spec import get_profile

SEED = get_profile("seed")


@pytest.mark.parametrize("domain", ["addressing", "duplicates", "balancing", "topologies"])
def test_a_checker_run_never_draws_an_excluded_operation(domain: str, tmp_path: Path) -> None:
    stats = RunStats()
    left_out = {"send", "create_queue"}
    result = check_for(SEED, {"impl": get_domain(domain).layers["impl"]}, 0.5, tmp_path, 1, None,
                       get_domain(domain), stats=stats, excluded=left_out)
    drawn_ops = {op for op, _ in result.drawn}
    assert result.steps > 0 and drawn_ops, "the other operations still ran"
    assert not drawn_ops & left_out


def test_a_run_with_every_operation_excluded_takes_no_step_and_ends_after_one_batch(tmp_path: Path) -> None:
    domain = get_domain("balancing")
    result = check_for(SEED, {"impl": domain.layers["impl"]}, 30.0, tmp_path, 1, None, domain,
                       excluded=set(COMMANDS["balancing"]))
    assert result.steps == 0 and result.seconds < 15, "idle batches do not spin until the budget is spent"


def test_a_machine_whose_rules_are_all_excluded_still_runs_what_its_start_issues(tmp_path: Path) -> None:
    """add_node is issued only while the cluster forms, by no rule: with everything else left out, no rule can be
    drawn, and the machine idles instead of failing (Hypothesis needs a rule it may run)."""
    domain = get_domain("balancing")
    result = check_for(SEED, {"impl": domain.layers["impl"]}, 0.5, tmp_path, 1, None, domain,
                       excluded=set(COMMANDS["balancing"]) - {"add_node"})
    assert result.divergence is None and result.steps > 0
    assert {op for op, _ in result.drawn} == {"add_node"}
