"""Crash consistency of the fast duplicate-detection broker's store, checked by killing it.

Introduction
------------
The spec says what a crash keeps: ``process_restart`` applied to the state
after the last operation that completed (``PersistentDuplicateIDCache``,
``PostOfficeJournalLoader.handleDuplicateIds``). This module checks that
the fast broker's SQLite store keeps exactly that when the process really
dies, with SIGKILL, at a random moment:

1. A *child* process (``python -m brokerspec.crash child ...``) builds a
   deterministic workload from a seed (:func:`generate_workload`: plain and
   transactional sends over a few addresses and sessions, IDs from a tiny
   alphabet so duplicates are common, bridge IDs, commits, rollbacks,
   receives, queue creates and deletes, XA prepares and second phases;
   never a restart or a crash), runs it
   step by step on a :class:`~brokerspec.impl.duplicates.FastDuplicatesBroker`
   whose store is a file, and after each step has returned (so its store
   transaction is durable) writes ``done <n>`` to stdout and flushes.
2. The parent kills the child by its PID with SIGKILL, either after reading
   a random number of ``done`` lines or after a random delay, then reads
   what the pipe still holds: ``k`` lines in all.
3. The parent opens the store in-process with a fresh broker, which reloads
   it, and compares that broker's state with the spec's state after
   ``crash`` applied to the spec state after the first ``k`` steps, or the
   first ``k + 1`` (the step in flight may have committed before its line
   was written). One of the two must match exactly. Otherwise the trial
   reports *lost* IDs and messages (in the spec's reloaded state, missing
   from the store's) and *phantom* ones (in the store's, not in the
   spec's) against the nearer prefix: IDs per cache and per prepared
   transaction, messages per queue and per prepared transaction; and any
   other difference (counters, settings).

Random kills rarely land inside one chosen step, so ``points`` kills at
every *write point* of the steps that matter most for XA: every
``prepare`` and every second phase (the commit or rollback of a prepared
transaction), in a few workloads per profile. A step's write points are
the moments before each of its store actions (each SQL write, then the
store commit) and the moment after it returns (:class:`StoreActions`,
counted first in-process). The child kills itself with SIGKILL at the
point it is given, and the reloaded store must hold exactly the steps
before that step, or that step too when the point is after its commit: a
prepare, and a second phase, is durable all or nothing. ``--every-step``
tries the write points of every step; a ``--broker`` put through them must
keep its :class:`~brokerspec.impl.duplicates.SqliteStore` in ``_store``, as
the fast broker does.

:func:`run_crash_trials` runs many trials and returns a :class:`CrashReport`;
each failing trial's seed is printed with the command that replays it::

    brokerspec crash run --trials 200 --seed 1
    brokerspec crash points --workloads 3 --seed 1
    brokerspec crash trial --seed 12345 --profile artemis-latest --set duplicates.id_cache_size=3
    brokerspec crash trial --seed 12345 --profile artemis-latest --kill-at 31:4
    brokerspec crash prefix --seed 12345 --profile artemis-latest --durable 17

The package's modules: :mod:`.workload` (the scripts), :mod:`.points`
(write points), :mod:`.checks` (the store against the spec), :mod:`.trials`
(children, kills, reports) and :mod:`.cli`.

``--no-prepare`` runs the workloads without XA steps, exactly as they were
drawn before prepares existed.

``trial`` repeats one trial's workload and kill plan (where a delay lands
depends on timing, so a delay trial is repeated in spirit, not to the
microsecond; a write-point trial exactly); ``prefix`` runs the first ``--durable`` steps in-process,
abandons the store without closing it, and checks the reload: the
deterministic half of a trial. Every trial uses its own temporary folder,
removed afterwards, and a child still running when its trial ends for any
reason is killed.

``--broker MODULE:CLASS`` (default
``brokerspec.impl.duplicates:FastDuplicatesBroker``) names the broker the
children run: a class built as ``CLASS(profile, store_path)`` that keeps its
durable state in a store at ``store_path``, takes duplicates-domain commands
through ``execute(command)``, and has ``close()``; the parent reloads the
store with the same class and compares its ``snapshot()`` with the spec's
state. It is how a planted-bug store (``brokerspec.planted.duplicates_bugs``)
or a store of your own is put through the same trials. The module is
imported as the children import it, with the working folder first on the
path.

The options are checked before anything runs: a profile, a ``--set`` or a
``--broker`` that does not exist, or a count below one, is a usage error
(exit code 2, one line).
"""

from __future__ import annotations

from .checks import TrialResult, check_prefix, check_store, compare_ids, spec_after_crash, state_differences
from .cli import broker_name, build_parser, kill_point, main
from .points import StoreActions, count_store_actions, kill_quietly, write_points, xa_steps
from .trials import (
    CHILD_TIME_LIMIT,
    CrashReport,
    KillPlan,
    measure_step_seconds,
    plan_kill,
    run_child,
    run_crash_trials,
    run_trial,
    run_write_point_trials,
    trial_seeds,
)
from .workload import (
    ADDRESSES,
    BRIDGE_IDS,
    DEFAULT_BROKER,
    DEFAULT_STEPS,
    IDS,
    LONG_ID,
    QUEUES,
    SESSIONS,
    XA_SHARE,
    generate_workload,
    load_broker_class,
)

__all__ = [
    "TrialResult", "check_prefix", "check_store", "compare_ids", "spec_after_crash", "state_differences",
    "broker_name", "build_parser", "kill_point", "main",
    "StoreActions", "count_store_actions", "kill_quietly", "write_points", "xa_steps",
    "CHILD_TIME_LIMIT", "CrashReport", "KillPlan", "measure_step_seconds", "plan_kill", "run_child",
    "run_crash_trials", "run_trial", "run_write_point_trials", "trial_seeds",
    "ADDRESSES", "BRIDGE_IDS", "DEFAULT_BROKER", "DEFAULT_STEPS", "IDS", "LONG_ID", "QUEUES", "SESSIONS", "XA_SHARE",
    "generate_workload", "load_broker_class",
]
