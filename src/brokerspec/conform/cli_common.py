"""What the conformance commands share: building the SUT, the options that name it, the checked catalogue.

``--sut`` takes either a command line, run as a child process that speaks
the SUT protocol (``--sut "node examples/node-sut/sut.js"``), ``artemis[:VERSION]``
for a real Artemis release, or ``inproc:LAYER`` for one of brokerspec's own
layers in this process (``inproc:impl``, ``inproc:reference``, ``inproc:spec``,
``inproc:planted:NAME``).
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Callable

from rich.console import Console

from brokerspec.spec import PROFILES, BrokerspecError, Profile

from ..clitools import clean, literal, parse_timeout
from .catalogue import Case, all_cases, check_catalogue
from .runner import CaseResult
from .sut import DEFAULT_TIMEOUT, InProcessSut, SubprocessSut, Sut


class ConformUsageError(BrokerspecError):
    """A conformance command line that cannot be carried out."""


def make_sut(text: str, timeout: float) -> Sut:
    """``inproc:LAYER``, ``artemis[:VERSION]``, ``brokerspec-broker`` or a command line, as a SUT."""
    if text == "brokerspec-broker":
        from ..stomp.sut import BrokerProcessSut

        return BrokerProcessSut(timeout=max(timeout, 10.0))
    if text == "artemis" or text.startswith("artemis:"):
        from ..artemis.releases import DEFAULT_RELEASE, RELEASES
        from ..artemis.sut import ArtemisSut

        version = text.partition(":")[2] or DEFAULT_RELEASE
        if version not in RELEASES:
            raise ConformUsageError(f"--sut {clean(text)}: no Artemis release {clean(version)!r}; "
                                    f"known: {', '.join(RELEASES)}")
        return ArtemisSut(version, timeout=max(timeout, 30.0))
    if text.startswith("inproc:"):
        try:
            return InProcessSut(text.removeprefix("inproc:"))
        except ValueError as problem:
            raise ConformUsageError(f"--sut {clean(text)}: {problem}") from None
    try:
        argv = shlex.split(text)
    except ValueError as problem:
        raise ConformUsageError(f"--sut {clean(text)}: not a command line ({problem})") from None
    if not argv:
        raise ConformUsageError("--sut is empty: give a command line or inproc:LAYER")
    return SubprocessSut(argv, timeout)


def profile_for_sut(sut: Sut, profile: Profile, console: Console) -> Profile:
    """For a real Artemis release, ``profile`` with the release's own differences from it (said on the console)."""
    from ..artemis.sut import ArtemisSut, judged_profile

    if not isinstance(sut, ArtemisSut):
        return profile
    judged = judged_profile(sut.version, profile)
    if judged != profile:
        console.print(literal(f"Artemis {sut.version} is judged under {judged.label}: the profile describes a "
                              "later release, and these options are where this one differs"))
    return judged


def recheck_for_sut(sut: Sut, profile: Profile) -> Callable[[CaseResult], CaseResult] | None:
    """For a real Artemis release, what turns a case that differs only where no client can see into a case
    that is not expressible (:func:`brokerspec.artemis.fidelity.recheck_unseen`); None for any other SUT."""
    from ..artemis.fidelity import recheck_unseen
    from ..artemis.sut import ArtemisSut

    return recheck_unseen(sut, profile) if isinstance(sut, ArtemisSut) else None


def add_sut_options(parser: argparse.ArgumentParser, parse_setting: Callable[[str], tuple[str, str]]) -> None:
    """``--sut``, ``--profile``, ``--set`` and ``--timeout``, shared by the commands that talk to a SUT."""
    parser.add_argument("--sut", required=True, metavar="CMD",
                        help='the SUT: a command line ("node sut.js") or inproc:impl|reference|spec|planted:NAME')
    parser.add_argument("--profile", default="seed", choices=sorted(PROFILES), help="profile (default seed)")
    parser.add_argument("--set", action="append", type=parse_setting, default=[], metavar="DOMAIN.OPTION=VALUE",
                        help="override a profile option (repeatable)")
    parser.add_argument("--timeout", type=parse_timeout, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                        help=f"per-request timeout for a subprocess SUT, a positive number "
                             f"(default {DEFAULT_TIMEOUT:g})")


def checked_catalogue() -> list[Case]:
    """All cases, refusing to run a catalogue that breaks its own rules."""
    cases = all_cases()
    problems = check_catalogue(cases)
    if problems:
        raise ConformUsageError("the catalogue is broken: " + "; ".join(problems))
    return cases


__all__ = ["ConformUsageError", "add_sut_options", "checked_catalogue", "make_sut", "profile_for_sut",
           "recheck_for_sut"]
