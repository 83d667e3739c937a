"""The two sides of ``brokerspec diff``: a profile of this spec, or a git revision of the spec run beside it.

Introduction
------------
A profile side runs this brokerspec's own spec in process. A revision side
is the ``spec/`` folder of a git commit, extracted next to a copy of this
brokerspec's code (its checker, codec, reference and fast layers) and served
in a child process with ``python -m brokerspec.conform.serve --layer spec``.

So a revision can be run only when its ``spec/`` provides every name this
code imports from the spec: at an older commit, where some domain, option or
outcome did not exist yet, the copy fails to import. :func:`make_side` tries
that at once, in a child process that also reads the options of the profile
at that revision, and refuses such a revision with a usage error naming it
and what is missing. A revision that is not a commit of the repository, or
has no ``spec/`` folder, is refused the same way. Which is the oldest that
runs moves as this code comes to import more from the spec, so it is
computed, not written down: :func:`oldest_runnable` bisects the commits that
changed ``spec/`` (``brokerspec diff --oldest``).

:func:`option_differences` lists every option whose value differs between
the two sides' profiles (``domain.option``, one value each).
"""

from __future__ import annotations

import importlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import brokerspec
from brokerspec.spec import PROFILES, BrokerspecError, Profile, get_profile

from .sut import InProcessSut, SubprocessSut, Sut

PROBE = (
    "import json, sys\n"
    "import brokerspec.conform.serve\n"
    "from brokerspec.spec import get_profile\n"
    "overrides = tuple(tuple(pair) for pair in json.loads(sys.argv[2]))\n"
    "print(json.dumps(get_profile(sys.argv[1], overrides).options()))\n"
)
"""Run in a revision's folder: imports what the server needs, then prints the profile's options as JSON."""

Options = dict[str, dict[str, Any]]


class DiffUsageError(BrokerspecError):
    """A side that is neither a profile nor a revision of the spec that can be run."""


@dataclass
class Side:
    """One side of a diff: a SUT, the profile it runs under, how it was named and what it is."""

    name: str
    sut: Sut
    profile: Profile
    revision: str | None = None
    """The full git commit of a revision side; None for a profile of this spec."""
    options: Options = field(default_factory=dict)
    """The options of the profile as this side's spec defines them."""


def make_side(text: str, profile: Profile, repo: Path, workdir: Path) -> Side:
    """``text`` as a side: a profile name, else a git revision of the spec in ``repo`` run under ``profile``."""
    if text in PROFILES:
        chosen = get_profile(text, profile.overrides)
        return Side(text, InProcessSut("spec"), chosen, None, chosen.options())
    commit = resolve_revision(text, repo)
    folder = extract_revision(text, commit, repo, workdir)
    options = probe_revision(text, commit, folder, profile)
    argv = [sys.executable, "-m", "brokerspec.conform.serve", "--layer", "spec"]
    return Side(text, SubprocessSut(argv, timeout=30.0, cwd=folder, env=_environment(folder)), profile, commit,
                options)


def _environment(folder: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(folder)}


def resolve_revision(revision: str, repo: Path) -> str:
    """The full commit ``revision`` names in ``repo``; DiffUsageError when it names none."""
    check = subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}"],
                           capture_output=True, text=True, check=False)
    if check.returncode != 0:
        raise DiffUsageError(f"{revision!r} is neither a profile ({', '.join(PROFILES)}) nor a git revision "
                             f"of {repo}")
    return check.stdout.strip()


def extract_revision(revision: str, commit: str, repo: Path, workdir: Path) -> Path:
    """A folder holding this brokerspec's code with the ``spec`` of ``commit`` as its ``brokerspec.spec``."""
    archive = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", commit, "spec"],
                             capture_output=True, check=False)
    if archive.returncode != 0:
        raise DiffUsageError(f"revision {revision} ({commit[:12]}) has no spec/ folder, so diff cannot run it: "
                             f"{archive.stderr.decode(errors='replace').strip()}")
    folder = workdir / commit
    if folder.exists():  # both sides name the same commit
        return folder
    package = folder / "brokerspec"
    here = Path(brokerspec.__file__).resolve().parent
    shutil.copytree(here, package, ignore=shutil.ignore_patterns("__pycache__", "spec", "reference", "impl"))
    for layer in ("reference", "impl"):  # this brokerspec's own layers: the checker imports them
        shutil.copytree(Path(importlib.import_module(f"brokerspec.{layer}").__file__ or "").resolve().parent,
                        package / layer, ignore=shutil.ignore_patterns("__pycache__"))
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(folder, filter="data")
    shutil.rmtree(package / "spec", ignore_errors=True)
    (folder / "spec").rename(package / "spec")
    return folder


def probe_revision(revision: str, commit: str, folder: Path, profile: Profile) -> Options:
    """The options of ``profile`` at the extracted revision; DiffUsageError saying why when it cannot run."""
    done = subprocess.run([sys.executable, "-c", PROBE, profile.name, json.dumps(list(profile.overrides))],
                          capture_output=True, text=True, cwd=folder, env=_environment(folder), timeout=120,
                          check=False)
    if done.returncode != 0:
        lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
        last = lines[-1].strip() if lines else f"exit code {done.returncode}"
        raise DiffUsageError(
            f"revision {revision} ({commit[:12]}) cannot be run: its spec/ does not provide what this brokerspec's "
            f"code imports from the spec ({last}); diff runs revisions whose spec/ has every domain, option and "
            f"outcome this brokerspec knows (see the diff section of docs/conformance.md)")
    options: Options = json.loads(done.stdout)
    return options


def runs(commit: str, repo: Path, workdir: Path, profile: Profile) -> str | None:
    """None when ``commit``'s spec runs beside this code; else why not (the usage error's text)."""
    try:
        probe_revision(commit[:12], commit, extract_revision(commit[:12], commit, repo, workdir), profile)
    except DiffUsageError as error:
        return str(error)
    return None


def oldest_runnable(repo: Path, workdir: Path, profile: Profile, start: str = "HEAD") -> tuple[str, int]:
    """The oldest commit that changed ``spec/`` (first parents from ``start``) whose spec runs, and the probes made.

    Bisection: it assumes that once a commit's spec runs, every later one
    does (the spec gains names; this code imports more of them over time).
    DiffUsageError when not even ``start``'s spec runs.
    """
    listed = subprocess.run(["git", "-C", str(repo), "rev-list", "--first-parent", resolve_revision(start, repo),
                             "--", "spec"], capture_output=True, text=True, check=False)
    commits = list(reversed(listed.stdout.split()))  # oldest first
    if listed.returncode != 0 or not commits:
        raise DiffUsageError(f"{repo}: no commit before {start} changed spec/")
    problem = runs(commits[-1], repo, workdir, profile)
    if problem is not None:
        raise DiffUsageError(f"not even the newest commit that changed spec/ can be run: {problem}")
    low, high, probes = 0, len(commits) - 1, 1  # commits[high] runs
    while low < high:
        middle = (low + high) // 2
        probes += 1
        if runs(commits[middle], repo, workdir, profile) is None:
            high = middle
        else:
            low = middle + 1
    return commits[high], probes


def option_differences(source: Side, target: Side) -> list[tuple[str, Any, Any]]:
    """Every ``domain.option`` whose value differs between the sides' profiles, with both values.

    An option only one side has is listed with ``None`` (shown as absent) on the other.
    """
    rows: list[tuple[str, Any, Any]] = []
    for domain in dict.fromkeys([*source.options, *target.options]):
        mine, theirs = source.options.get(domain, {}), target.options.get(domain, {})
        for option in dict.fromkeys([*mine, *theirs]):
            if mine.get(option) != theirs.get(option) or (option in mine) != (option in theirs):
                rows.append((f"{domain}.{option}", mine.get(option), theirs.get(option)))
    return rows


__all__ = ["DiffUsageError", "Options", "Side", "extract_revision", "make_side", "oldest_runnable",
           "option_differences", "probe_revision", "resolve_revision", "runs"]
