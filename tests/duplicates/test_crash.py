"""Crash consistency of the fast broker's store: real children, killed with SIGKILL, reloaded, compared.

The fast tier runs 200 trials (the deep tier 1000) across the profiles with
a three-slot cache, so eviction, holes and reload truncation all reach the
store; the workloads prepare XA transactions and end them, so prepared
transactions are in the store at many kills. Then every write point of every
prepare and second phase of a few workloads is a kill of its own
(``brokerspec crash points``): 2 workloads per profile in the fast tier, 8
in the deep one. Planted stores that write ID records one operation late,
split a prepare, or split a second phase must be caught: the harness has to
be able to fail.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from brokerspec.crash import (
    CrashReport,
    TrialResult,
    check_prefix,
    generate_workload,
    main,
    plan_kill,
    run_crash_trials,
    run_write_point_trials,
    spec_after_crash,
    trial_seeds,
    write_points,
    xa_steps,
)
from brokerspec.impl.duplicates import FastDuplicatesBroker
from brokerspec.spec import PROFILES, Profile, get_profile
from brokerspec.spec.duplicates import Commit, Crash, Prepare, Restart, Rollback, Send, TxState, apply, initial_state
from depth import scaled

TESTS = Path(__file__).resolve().parents[1]
PLANTED = "duplicates.crash_planted:LaggingIdStore"
SMALL = ("duplicates.id_cache_size", "3")
CHECKED: list[Profile] = [get_profile(name, (SMALL,)) for name in PROFILES] + [
    get_profile("artemis-latest", (SMALL, ("duplicates.reload_keeps", "OLDEST"))),
    get_profile("artemis-2.11", (SMALL, ("duplicates.persist_id_cache", "false"))),
]


def test_store_keeps_exactly_a_durable_prefix_under_sigkill() -> None:
    trials = scaled(200, 1000)
    seen: list[TrialResult] = []
    started = time.perf_counter()
    report = run_crash_trials(trials, seed=2026, profiles=CHECKED, on_trial=seen.append)
    assert report.ok, report.summary()
    assert report.trials == trials == len(seen)
    assert (report.lost, report.phantom, report.mismatches, report.errors) == (0, 0, 0, 0)
    assert {result.style for result in seen} == {"lines", "delay"}
    assert any(0 < result.done < result.steps for result in seen), "some kills land inside the workload"
    print(report.summary(), f"\nwall time {time.perf_counter() - started:.1f} s")


def test_harness_catches_a_store_that_writes_ids_late() -> None:
    report = run_crash_trials(30, seed=7, profiles=[get_profile("artemis-latest", (SMALL,))],
                              broker=PLANTED, python_path=[str(TESTS)])
    assert report.lost > 0, report.summary()
    assert not report.ok
    failure = report.failures[0]
    assert f"--seed {failure.seed}" in failure.replay_command()
    assert "lost IDs" in report.summary()


@pytest.mark.parametrize("durable", [0, 1, 7, 23, 60])
def test_prefix_reload_matches_the_spec(durable: int, tmp_path: Path) -> None:
    result = check_prefix(get_profile("artemis-latest", (SMALL,)), seed=11, steps=60, durable=durable,
                          folder=tmp_path)
    assert result.ok, result.describe()
    assert result.matched == durable


def test_prefix_check_catches_the_late_store_without_a_kill(tmp_path: Path) -> None:
    profile = get_profile("artemis-latest", (SMALL,))
    results = []
    for durable in range(1, 31):
        folder = tmp_path / str(durable)
        folder.mkdir()
        results.append(check_prefix(profile, seed=11, steps=30, durable=durable, folder=folder, broker=PLANTED))
    assert any(result.lost for result in results), "\n".join(result.describe() for result in results)
    assert all(result.matched is None for result in results if result.lost)


@pytest.mark.parametrize("planted", ["SplitPrepareStore", "SplitSecondPhaseStore"])
def test_write_points_catch_an_xa_step_split_over_two_store_transactions(planted: str) -> None:
    report = run_write_point_trials(1, seed=1, profiles=[get_profile("artemis-latest", (SMALL,))],
                                    broker=f"duplicates.crash_planted:{planted}", python_path=[str(TESTS)])
    assert not report.ok and report.mismatches > 0, report.summary()
    assert report.lost + report.phantom > 0, report.summary()
    failure = report.failures[0]
    assert failure.kill_at is not None and f"--kill-at {failure.kill_at[0]}:{failure.kill_at[1]}" in \
        failure.replay_command()


def test_every_write_point_of_prepare_and_second_phase_keeps_all_or_nothing() -> None:
    seen: list[TrialResult] = []
    profiles = [get_profile("artemis-latest", (SMALL,)), get_profile("artemis-2.11", (SMALL,)),
                get_profile("artemis-2.11", (SMALL, ("duplicates.persist_id_cache", "false")))]
    report = run_write_point_trials(scaled(1, 8), seed=2026, profiles=profiles, on_trial=seen.append)
    assert report.ok, report.summary()
    assert (report.lost, report.phantom, report.mismatches, report.errors) == (0, 0, 0, 0)
    assert report.trials == len(seen) > 50
    assert all(result.style == "write" and result.kill_at is not None for result in seen)
    after = [result for result in seen if result.matched == result.done + 1]
    before = [result for result in seen if result.matched == result.done]
    assert after and len(before) > len(after), "each XA step is killed before its commit and after it"
    print(report.summary())


def test_the_points_are_every_action_of_the_xa_steps_and_the_moment_after() -> None:
    profile = get_profile("artemis-latest", (SMALL,))
    seed = 2444712010
    workload = generate_workload(seed, 60)
    points = write_points(profile, seed, 60)
    steps = sorted({step for step, _ in points})
    assert steps and set(steps) <= set(xa_steps(profile, workload))
    kinds = {type(workload[step - 1]) for step in steps}
    assert Prepare in kinds and kinds & {Commit, Rollback}, kinds
    for step in steps:
        assert sorted(point for s, point in points if s == step) == list(range(len(
            [point for s, point in points if s == step])))
    everything = write_points(profile, seed, 60, every_step=True)
    assert set(points) < set(everything)


def test_a_prepared_transaction_outlives_an_abandoned_store(tmp_path: Path) -> None:
    """A prefix that ends with a prepared transaction holding messages reloads it from the store."""
    profile = get_profile("artemis-latest", (SMALL,))
    for seed in range(40):
        workload = generate_workload(seed, 60)
        state = initial_state(profile)
        for durable, command in enumerate(workload, start=1):
            state = apply(state, command)[0]
            if any(tx.status is TxState.PREPARED and tx.messages for tx in state.transactions.values()):
                break
        else:
            continue
        result = check_prefix(profile, seed, 60, durable, tmp_path)
        assert result.ok, result.describe()
        with FastDuplicatesBroker(profile, tmp_path / "store.sqlite") as reopened:
            prepared = {s: tx for s, tx in reopened.snapshot().transactions.items() if tx.status is TxState.PREPARED}
        assert prepared and prepared == {s: tx for s, tx in spec_after_crash(profile, workload, durable)
                                         .transactions.items()}
        return
    pytest.fail("no workload of the first 40 leaves a prepared transaction with messages")


def test_workloads_prepare_and_end_transactions_and_can_leave_them_out() -> None:
    profile = get_profile("artemis-latest", (SMALL,))
    with_xa = generate_workload(8, 200)
    without = generate_workload(8, 200, prepare=False)
    assert with_xa == generate_workload(8, 200) and without == generate_workload(8, 200, prepare=False)
    assert not any(isinstance(command, Prepare) for command in without)
    outcomes = []
    state = initial_state(profile)
    for command in with_xa:
        state, outcome = apply(state, command)
        outcomes.append(outcome.rule)
    assert outcomes.count("DUP-XA-PREPARE") >= 5 and outcomes.count("DUP-XA-SECOND-PHASE") >= 3, outcomes


def test_workloads_are_deterministic_and_never_restart() -> None:
    first = generate_workload(5, 200)
    assert first == generate_workload(5, 200)
    assert first != generate_workload(6, 200)
    assert not any(isinstance(command, (Restart, Crash)) for command in first)
    sends = [command for command in first if isinstance(command, Send)]
    assert len(sends) > 60
    assert any(command.bridge_id for command in sends)
    ids = [command.duplicate_id for command in sends if command.duplicate_id is not None]
    assert len(set(ids)) < len(ids) / 5, "IDs come from a tiny alphabet, so duplicates are common"


def test_kill_plans_use_both_styles() -> None:
    plans = [plan_kill(seed, 60, 0.001) for seed in trial_seeds(40, 1)]
    assert {plan.style for plan in plans} == {"lines", "delay"}
    assert all(0 <= plan.lines <= 60 and 0.0 <= plan.delay <= 0.06 for plan in plans)


def test_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    small = ["--set", "duplicates.id_cache_size=3"]
    assert main(["child", "--store", str(tmp_path / "child.sqlite"), "--seed", "3", "--steps", "12", *small]) == 0
    lines = capsys.readouterr().out.split()
    assert lines[0] == "ready" and lines[-1] == "finished" and lines.count("done") == 12
    assert main(["prefix", "--seed", "3", "--steps", "12", "--durable", "12", *small]) == 0
    assert main(["trial", "--seed", "3", "--steps", "12", "--profile", "seed", *small]) == 0
    assert main(["run", "--trials", "3", "--seed", "3", "--steps", "12", "--profile", "seed",
                 "--profile", "artemis-latest", *small]) == 0
    out = capsys.readouterr().out
    assert "prefix kill after 12 of 12 steps): ok" in out and "crash trials: 3 in" in out
    assert main(["run", "--trials", "2", "--seed", "3", "--steps", "12", "--no-prepare", *small]) == 0
    assert main(["points", "--workloads", "1", "--seed", "3", "--steps", "30", "--profile", "artemis-latest",
                 *small]) == 0
    point = write_points(get_profile("artemis-latest", (SMALL,)), 3, 30)[0]
    assert main(["trial", "--seed", "3", "--steps", "30", "--kill-at", f"{point[0]}:{point[1]}", *small]) == 0
    out = capsys.readouterr().out
    assert f"write point {point[0]}:{point[1]}, write kill after {point[0] - 1} of 30 steps): ok" in out
    for wrong in ("0:1", "x", "3"):
        with pytest.raises(SystemExit) as exit_info:
            main(["trial", "--kill-at", wrong])
        assert exit_info.value.code == 2
    assert main(["child", "--store", str(tmp_path / "never.sqlite"), "--kill-at", "99:0"]) == 2
    assert "beyond --steps 60" in capsys.readouterr().err


def test_report_counts_failures() -> None:
    profile = get_profile("seed")
    report = CrashReport()
    report.add(TrialResult(1, profile, 10, "lines", 4, 5))
    report.add(TrialResult(2, profile, 10, "delay", 3, None, lost=("a1:'x'",)))
    report.add(TrialResult(3, profile, 10, "delay", 10, None, error="child exited with 1"))
    assert (report.trials, report.lost, report.phantom, report.mismatches, report.errors) == (3, 1, 0, 1, 1)
    assert report.failed_seeds == [2, 3] and report.in_flight_durable == 1 and report.finished == 1
    text = report.summary()
    assert "seed 2" in text and "brokerspec crash trial --seed 2 --profile seed" in text
