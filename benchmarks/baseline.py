"""The "before" of a before-vs-after figure: an older commit of brokerspec, importable beside this one.

Introduction
------------
A speed-up is only a figure when the old code is timed in the same run, on
the same machine, with the same workload. :func:`baseline_package` checks a
commit out into a temporary git worktree and lays out a package tree the way
``pyproject.toml`` installs one (``brokerspec`` from ``src/brokerspec``, with
``spec/``, ``reference/`` and ``impl/`` linked in as its subpackages), so a
benchmark can run its timing function in a child process whose
``PYTHONPATH`` puts that tree first (:func:`run_with`). The child reports its
figures as one JSON line on standard output.

The default commit is :data:`BEFORE_THROUGHPUT`, the last commit before the
throughput work, so every "before" column is measured against the same code.
Without the git history (a source archive, a shallow clone) there is no
before: :func:`baseline_package` raises :class:`NoBaseline` and a benchmark
prints that the column is unavailable rather than inventing it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

BEFORE_THROUGHPUT = "e013741"
"""The last commit before the throughput work (history replay, the audit at scale, fuzzing over the pipe)."""

ROOT = Path(__file__).resolve().parent.parent
_SUBPACKAGES = {"spec": "spec", "reference": "reference", "impl": "impl"}


class NoBaseline(RuntimeError):
    """The older commit cannot be checked out here (no git, no history, unknown commit)."""


@contextlib.contextmanager
def baseline_package(rev: str = BEFORE_THROUGHPUT) -> Iterator[Path]:
    """Yield a folder to put first on ``PYTHONPATH`` so that ``import brokerspec`` loads commit ``rev``."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        raise NoBaseline("no git checkout of brokerspec here, so there is no older commit to time")
    folder = Path(tempfile.mkdtemp(prefix="brokerspec-before-"))
    tree = folder / "tree"
    found = subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(tree), rev],
                           capture_output=True, text=True)
    if found.returncode != 0:
        shutil.rmtree(folder, ignore_errors=True)
        raise NoBaseline(f"git cannot check out {rev}: {found.stderr.strip()}")
    try:
        package = folder / "path" / "brokerspec"
        package.mkdir(parents=True)
        for entry in (tree / "src" / "brokerspec").iterdir():
            (package / entry.name).symlink_to(entry)
        for name, source in _SUBPACKAGES.items():
            (package / name).symlink_to(tree / source)
        yield folder / "path"
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


def run_with(path: Path | None, module: str, function: str, arguments: dict[str, Any],
             timeout: float = 3600.0) -> Any:
    """Call ``module.function(**arguments)`` in a child process importing brokerspec from ``path``.

    ``path`` None means this checkout. The module is found on this checkout's
    ``benchmarks/`` folder; the function must return JSON data, which is what
    this returns. A child that fails raises :class:`RuntimeError` with its
    standard error, so a broken baseline never reads as a figure.
    """
    env = dict(os.environ)
    parts = [str(ROOT / "benchmarks")]
    if path is not None:
        parts.insert(0, str(path))
    env["PYTHONPATH"] = os.pathsep.join(parts + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    code = ("import json, sys, importlib; "
            f"m = importlib.import_module({module!r}); "
            f"r = getattr(m, {function!r})(**json.loads(sys.argv[1])); "
            "print(json.dumps(r))")
    done = subprocess.run([sys.executable, "-c", code, json.dumps(arguments)], capture_output=True, text=True,
                          env=env, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{module}.{function} failed ({'before' if path else 'after'}):\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def peak_rss_kb() -> int:
    """This process's peak resident memory in KB: ``VmHWM`` of ``/proc/self/status``.

    Not ``getrusage``'s ``ru_maxrss``: Linux carries that across ``fork`` and
    ``execve``, so a child started by :func:`run_with` would report its
    parent's peak whenever the parent had been larger (the audit benchmark's
    parent builds its inputs in memory, and its children reported 850 MB for
    an audit that peaked at 330). ``ru_maxrss`` only where there is no ``/proc``.
    """
    import resource

    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
