"""``brokerspec diff``: the shortest scripts on which two versions of the semantics give different outcomes.

Introduction
------------
A *side* is a profile of the spec in this process (``seed``,
``artemis-latest``, ...) or a git revision of the spec, served in a child
process: the revision's ``spec/`` is extracted next to this brokerspec's own
code and served with ``python -m brokerspec.conform.serve --layer spec``
(under ``--profile``). Both sides become one subject, a :class:`Pair`,
which runs every command on both and raises :class:`Distinguished` when
their outcomes differ. The checker's state machine for each domain drives
the pair, so Hypothesis searches for a distinguishing script and shrinks it
to the shortest one it can find; each is written as a trace of the *from*
side's outcomes. A domain with no difference within its share of the budget
says so, with the budget.
"""

from __future__ import annotations

import importlib
import io
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import brokerspec
from brokerspec.spec import PROFILES, BrokerspecError, Outcome, Profile, get_profile

from ..check.domains import get_domain
from ..check.lockstep import Divergence
from ..check.machine import RunStats
from ..check.runner import check_for
from .sut import InProcessSut, SubprocessSut, Sut


class DiffUsageError(BrokerspecError):
    """A side that is neither a profile nor a revision of the spec."""


class Distinguished(Exception):
    """The two sides gave different outcomes for one command."""

    def __init__(self, source: Outcome, target: Outcome) -> None:
        super().__init__(f"from gives {source!r}, to gives {target!r}")
        self.source = source
        self.target = target


class Pair:
    """Two SUTs reset together; a command whose outcomes differ raises :class:`Distinguished`."""

    judges_itself = True

    def __init__(self, source: Sut, target: Sut, domain: str, source_profile: Profile,
                 target_profile: Profile) -> None:
        self.source = source
        self.target = target
        source.reset(domain, source_profile)
        target.reset(domain, target_profile)

    def execute(self, command: Any) -> Outcome:
        """Run on both; the *from* side's outcome when they agree."""
        first = self.source.execute(command)
        second = self.target.execute(command)
        if first != second:
            raise Distinguished(first, second)
        return first


@dataclass
class Side:
    """One side of a diff: a SUT, the profile it runs under, and how it was named."""

    name: str
    sut: Sut
    profile: Profile


def make_side(text: str, profile: Profile, repo: Path, workdir: Path) -> Side:
    """``text`` as a side: a profile name, else a git revision of the spec in ``repo``."""
    if text in PROFILES:
        return Side(text, InProcessSut("spec"), get_profile(text, profile.overrides))
    folder = extract_revision(text, repo, workdir)
    argv = [sys.executable, "-m", "brokerspec.conform.serve", "--layer", "spec"]
    env = {**_environment(), "PYTHONPATH": str(folder)}
    return Side(text, SubprocessSut(argv, timeout=30.0, cwd=folder, env=env), profile)


def _environment() -> dict[str, str]:
    import os

    return dict(os.environ)


def extract_revision(revision: str, repo: Path, workdir: Path) -> Path:
    """A folder holding an importable ``brokerspec`` whose ``spec`` is the one at ``revision``."""
    check = subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}"],
                           capture_output=True, text=True, check=False)
    if check.returncode != 0:
        raise DiffUsageError(f"{revision!r} is neither a profile ({', '.join(PROFILES)}) nor a git revision "
                             f"of {repo}")
    archive = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", check.stdout.strip(), "spec"],
                             capture_output=True, check=False)
    if archive.returncode != 0:
        raise DiffUsageError(f"revision {revision} has no spec/ folder: {archive.stderr.decode().strip()}")
    folder = workdir / revision.replace("/", "_")
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


@dataclass(frozen=True)
class DomainDiff:
    """What the search found in one domain: a distinguishing divergence, or none within its budget."""

    domain: str
    seconds: float
    examples: int
    divergence: Divergence | None
    trace: Path | None

    def outcomes(self) -> tuple[str, str] | None:
        """The two outcomes at the distinguishing step, as the exception recorded them."""
        if self.divergence is None:
            return None
        text = " ".join(self.divergence.details)
        source, _, target = text.partition(", to gives ")
        return source.split("from gives ", 1)[-1], target


def diff(source: Side, target: Side, domains: tuple[str, ...], seconds: float, out_dir: Path,
         run_seed: int | None = None, on_batch: Callable[[str, RunStats], None] | None = None) -> list[DomainDiff]:
    """Search each domain for a script the two sides disagree on, for a share of ``seconds`` each."""
    results = []
    for name in domains:
        domain = get_domain(name)

        def pair(profile: Profile, name: str = name) -> Pair:
            return Pair(source.sut, target.sut, name, source.profile, target.profile)

        def show(stats: RunStats, name: str = name) -> None:
            if on_batch is not None:
                on_batch(name, stats)

        result = check_for(source.profile, {"difference": pair}, seconds / len(domains), out_dir, run_seed, show,
                           domain)
        results.append(DomainDiff(name, result.seconds, result.examples, result.divergence, result.trace_path))
    return results


def make_workdir() -> Path:
    """A temporary folder for extracted revisions (the caller removes it)."""
    return Path(tempfile.mkdtemp(prefix="brokerspec-diff-"))
