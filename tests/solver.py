"""Running CrossHair from the tests, always with an explicit budget."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def crosshair(*args: str, budget: int, patience: int = 10) -> subprocess.CompletedProcess[str]:
    """Run CrossHair with a per-condition budget in seconds; the planted fixtures are importable.

    The process is stopped after ``budget * patience`` seconds plus start-up time.
    """
    env = dict(os.environ, PYTHONPATH=str(TESTS))
    return subprocess.run([sys.executable, "-m", "crosshair", *args, f"--per_condition_timeout={budget}"],
                          capture_output=True, text=True, env=env, timeout=budget * patience + 120, check=False)


def assert_diff_found(name: str, correct: str, planted: str, *, budget: int, extra: tuple[str, ...] = ()) -> str:
    """``crosshair diffbehavior`` must show an input where ``planted`` parts from ``correct``; its report.

    ``name`` labels the failure message (the planted bug's name).
    """
    result = crosshair("diffbehavior", correct, planted, *extra, budget=budget)
    assert result.returncode == 1, f"{name}: no counterexample\n{result.stdout}{result.stderr}"
    assert "Given:" in result.stdout and "returns" in result.stdout, f"{name}: no example shown\n{result.stdout}"
    return result.stdout
