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
