"""Running the catalogue against a SUT: one verdict per case, a rule coverage table, JSON and JUnit reports.

Introduction
------------
:func:`run_conformance` shakes hands with the SUT, then runs every case of
the catalogue that applies to the profile and to a domain the SUT offers.
Each case starts with a reset and goes through the lockstep driver
(:class:`~brokerspec.check.lockstep.Lockstep`), which compares the SUT's
outcome with the spec's at every step. Where the spec allows several
outcomes (load balancing), any allowed one passes unless ``strict`` is set.

A case ends in one of four verdicts: ``passed``; ``failed`` (a well-formed
outcome the spec does not allow: the step, the outcomes and the rule that
decided the expected one are kept); ``sut-failure`` (the SUT crashed, hung,
wrote garbage or an ``error`` reply; see :mod:`.protocol`); ``skipped`` (the
SUT does not offer the domain or profile, or its protocol version lacks an
operation the case needs, :func:`~.protocol.first_unasked`). After ``max_sut_failures`` SUT
failures in a row the run stops and the remaining cases are ``not-run``: a
SUT that hangs on everything costs a few timeouts, not one per case. The
report keeps whatever was run, and :meth:`ConformReport.exit_code` tells the
three kinds of result apart.

A failure is worded with the outcomes as the SUT's protocol writes them
(:func:`~.failures.failure_text`). Given an output folder, every ``failed``
or ``sut-failure`` case is written as a trace file (the case's script with
the outcomes the SUT gave, its profile and a note naming the case and the
step) that is never overwritten by a later run, and the report names the
file with the ``brokerspec replay`` and ``brokerspec explain`` commands for
it (:meth:`ConformReport.commands_for`).

The reports hold what the SUT wrote, whatever it was: the JSON report
escapes control characters as JSON does, and the JUnit XML writes every
character XML 1.0 forbids (NUL, ESC and the other controls) as an escape
such as ``\x1b`` (:func:`~brokerspec.clitools.xml_safe`), so both files
stay well-formed.
"""

from __future__ import annotations

import dataclasses
import json
import shlex
import time
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from brokerspec.spec import Profile

from ..check.domains import get_domain
from ..check.lockstep import DivergenceError, Lockstep, format_command
from ..clitools import xml_safe
from ..trace import Trace, write_new_trace
from .catalogue import RULE_TABLES, Case
from .failures import case_trace, failure_text, trace_path_for
from .protocol import FailureKind, Hello, SutFailure, first_unasked
from .sut import Sut, subject_factory

EXIT_PASS = 0
EXIT_CONFORMANCE_FAILURE = 1
EXIT_USAGE = 2
EXIT_SUT_FAILURE = 3
EXIT_NOTHING_CHECKED = 4
"""No case or scenario ran: a verdict of success would claim what was never checked."""


class Verdict(Enum):
    """How one case ended."""

    PASSED = "passed"
    FAILED = "failed"
    SUT_FAILURE = "sut-failure"
    SKIPPED = "skipped"
    NOT_RUN = "not-run"


@dataclass(frozen=True)
class CaseResult:
    """One case's verdict, with what a reader needs to see why."""

    case: Case
    verdict: Verdict
    seconds: float = 0.0
    step: int | None = None
    message: str = ""
    rule: str | None = None
    """For a failure: the rule that decided the expected outcome at the failing step."""
    rules: tuple[str, ...] = ()
    """The rules the case exercises under the run's profile."""
    trace: Trace | None = field(default=None, compare=False, repr=False)
    """For a failure or a SUT failure: the case's script with the SUT's outcomes, as a trace."""
    trace_path: Path | None = None
    """Where that trace was written (None when it was not)."""


@dataclass
class ConformReport:
    """Everything one conformance run found, in catalogue order."""

    sut: str
    profile: Profile
    strict: bool
    hello: Hello | None = None
    results: list[CaseResult] = field(default_factory=list)
    seconds: float = 0.0
    stopped: str = ""
    """Why the run stopped early ("" when it ran to the end)."""
    sut_command: str = ""
    """The ``--sut`` text as given, for the replay commands the report prints ("": the SUT's label)."""

    def commands_for(self, result: CaseResult) -> tuple[str, str] | None:
        """The ``brokerspec replay`` and ``brokerspec explain`` commands for a case's trace (None: no trace)."""
        if result.trace_path is None:
            return None
        path = shlex.quote(str(result.trace_path))
        return (f"brokerspec replay {path} --sut {shlex.quote(self.sut_command or self.sut)}",
                f"brokerspec explain {path}")

    def count(self, verdict: Verdict) -> int:
        """How many cases ended with ``verdict``."""
        return sum(1 for r in self.results if r.verdict is verdict)

    def exit_code(self) -> int:
        """0 all run cases passed; 1 a conformance failure; 3 a SUT failure and no conformance failure;
        4 nothing was checked (every case skipped: the SUT offers none of the domains under the profile)."""
        if self.count(Verdict.FAILED):
            return EXIT_CONFORMANCE_FAILURE
        if self.count(Verdict.SUT_FAILURE) or self.stopped or self.hello is None:
            return EXIT_SUT_FAILURE
        if not self.count(Verdict.PASSED):
            return EXIT_NOTHING_CHECKED
        return EXIT_PASS

    def nothing_checked(self) -> str | None:
        """Why no case was checked, in one line (None when some case passed or failed)."""
        if self.exit_code() != EXIT_NOTHING_CHECKED:
            return None
        offered = "no domain" if self.hello is None or not self.hello.domains else ", ".join(self.hello.domains)
        profiles = "" if self.hello is None or self.hello.profiles is None else \
            f" under profiles {', '.join(self.hello.profiles)}"
        wanted = ", ".join(dict.fromkeys(r.case.domain for r in self.results))
        return (f"nothing was checked: every case was skipped; the cases are in {wanted or 'no domain'} under "
                f"{self.profile.name}, and the SUT offers {offered}{profiles}")

    def rule_rows(self) -> list[tuple[str, str, int, int, int]]:
        """(rule, domain, cases exercising it, passed, failed) for every rule of every domain that ran.

        A rule counts as failed in a case that failed at a step it decided, or
        that was written for it and failed anywhere.
        """
        ran = (Verdict.PASSED, Verdict.FAILED)
        domains = [d for d in RULE_TABLES if any(r.case.domain == d and r.verdict in ran for r in self.results)]
        rows = []
        for domain in domains:
            for rule in RULE_TABLES[domain]:
                cases = [r for r in self.results if r.case.domain == domain and rule in r.rules and r.verdict in ran]
                failed = [r for r in cases if r.verdict is Verdict.FAILED and (r.rule == rule or rule in r.case.rules)]
                rows.append((rule, domain, len(cases), len(cases) - len(failed), len(failed)))
        return rows

    def to_json(self) -> dict[str, Any]:
        """The report as JSON data (``--json``)."""
        return {
            "sut": self.sut,
            "sut_name": None if self.hello is None else self.hello.name,
            "profile": self.profile.label,
            "strict": self.strict,
            "seconds": round(self.seconds, 3),
            "stopped": self.stopped,
            "exit_code": self.exit_code(),
            "totals": {v.value: self.count(v) for v in Verdict},
            "cases": [self._case_json(r) for r in self.results],
            "rules": [{"rule": rule, "domain": domain, "cases": cases, "passed": passed, "failed": failed}
                      for rule, domain, cases, passed, failed in self.rule_rows()],
        }

    def _case_json(self, result: CaseResult) -> dict[str, Any]:
        commands = self.commands_for(result)
        return {"name": result.case.name, "domain": result.case.domain, "verdict": result.verdict.value,
                "seconds": round(result.seconds, 4), "step": result.step, "message": result.message,
                "rule": result.rule, "rules": list(result.rules),
                "trace": None if result.trace_path is None else str(result.trace_path),
                "replay": None if commands is None else commands[0],
                "explain": None if commands is None else commands[1]}

    def write_json(self, path: Path) -> None:
        """Write :meth:`to_json` to ``path``."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_json(), indent=2) + "\n", encoding="utf-8")

    def write_junit(self, path: Path) -> None:
        """A JUnit XML file: one test suite per domain, one test case per case; well-formed whatever the SUT wrote."""
        root = ElementTree.Element("testsuites", name=xml_safe(f"brokerspec conform {self.profile.label}"))
        for domain in dict.fromkeys(r.case.domain for r in self.results):
            results = [r for r in self.results if r.case.domain == domain]
            suite = ElementTree.SubElement(
                root, "testsuite", name=f"brokerspec.{domain}", tests=str(len(results)),
                failures=str(sum(r.verdict is Verdict.FAILED for r in results)),
                errors=str(sum(r.verdict is Verdict.SUT_FAILURE for r in results)),
                skipped=str(sum(r.verdict in (Verdict.SKIPPED, Verdict.NOT_RUN) for r in results)),
                time=f"{sum(r.seconds for r in results):.3f}")
            for result in results:
                item = ElementTree.SubElement(suite, "testcase", classname=f"brokerspec.{domain}",
                                              name=xml_safe(result.case.name), time=f"{result.seconds:.4f}")
                tag = {Verdict.FAILED: "failure", Verdict.SUT_FAILURE: "error", Verdict.SKIPPED: "skipped",
                       Verdict.NOT_RUN: "skipped"}.get(result.verdict)
                if tag is not None:
                    commands = self.commands_for(result)
                    written = "" if commands is None else (f"\n\ntrace: {result.trace_path}\nreplay with: "
                                                           f"{commands[0]}\nexplain with: {commands[1]}")
                    message = xml_safe(result.message + written)
                    ElementTree.SubElement(item, tag, message=message.splitlines()[0] if message
                                           else result.verdict.value).text = message
        path.parent.mkdir(parents=True, exist_ok=True)
        ElementTree.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


def run_case(sut: Sut, case: Case, profile: Profile, strict: bool = False) -> CaseResult:
    """Reset ``sut`` and run one case; its verdict (SutFailure is caught and becomes one)."""
    domain = get_domain(case.domain)
    permissive = domain.judge is not None and not strict
    started = time.monotonic()
    rules = case.rules_exercised(profile)
    profile = case.profile_for(profile)
    lockstep: Lockstep | None = None
    try:
        lockstep = Lockstep(profile, {"sut": subject_factory(sut, case.domain)}, domain, permissive)
        for command in case.commands:
            lockstep.step(command)
    except DivergenceError as error:
        divergence = error.divergence
        assert lockstep is not None
        expected = lockstep.outcomes[divergence.step - 1]
        text = failure_text(lockstep, divergence)
        trace = case_trace(case.name, case.domain, profile, case.commands, divergence.observed, divergence.step,
                           text)
        return CaseResult(case, Verdict.FAILED, time.monotonic() - started, divergence.step,
                          text, expected.rule or None, rules, trace)
    except SutFailure as failure:
        step = None if lockstep is None else len(lockstep.commands)
        where = f" at step {step}: {format_command(case.commands[step - 1])}" if step else ""
        text = f"{failure}{where}"
        observed = () if lockstep is None else lockstep.observed["sut"]
        trace = case_trace(case.name, case.domain, profile, case.commands, observed, step, text)
        return CaseResult(case, Verdict.SUT_FAILURE, time.monotonic() - started, step, text, None, rules, trace)
    return CaseResult(case, Verdict.PASSED, time.monotonic() - started, None, "", None, rules)


def run_conformance(sut: Sut, cases: Sequence[Case], profile: Profile, strict: bool = False,
                    max_sut_failures: int = 5,
                    on_result: Callable[[CaseResult], None] | None = None,
                    out_dir: Path | None = None,
                    recheck: Callable[[CaseResult], CaseResult] | None = None) -> ConformReport:
    """Run every case of ``cases`` for ``profile`` against ``sut``; never raises for what the SUT does.

    With ``out_dir``, each failed or SUT-failed case's trace is written there (never over an existing file).
    ``recheck`` may turn a case's result into another before it is reported (a real release whose difference
    from the profile no client can see says so, rather than failing).
    """
    started = time.monotonic()
    report = ConformReport(sut.label, profile, strict)
    domains = tuple(dict.fromkeys(c.domain for c in cases))
    try:
        report.hello = sut.hello(profile, domains)
    except SutFailure as failure:
        report.stopped = f"the handshake failed: {failure}"
        report.results = [CaseResult(c, Verdict.NOT_RUN) for c in cases]
        report.seconds = time.monotonic() - started
        return report
    in_a_row = 0
    for index, case in enumerate(cases):
        if not report.hello.offers(case.domain, profile.name):
            result = CaseResult(case, Verdict.SKIPPED, message=f"the SUT does not offer {case.domain} under "
                                                               f"{profile.name}")
        elif (unasked := first_unasked(case.commands, report.hello.version)) is not None:
            result = CaseResult(case, Verdict.SKIPPED, message=unasked[1])
        else:
            result = run_case(sut, case, profile, strict)
            if recheck is not None:
                result = recheck(result)
        if out_dir is not None and result.trace is not None:
            path = write_new_trace(trace_path_for(out_dir, case.name, result.trace.profile), result.trace)
            result = dataclasses.replace(result, trace_path=path)
        report.results.append(result)
        if on_result is not None:
            on_result(result)
        in_a_row = in_a_row + 1 if result.verdict is Verdict.SUT_FAILURE else 0
        if in_a_row >= max_sut_failures:
            report.stopped = (f"{in_a_row} SUT failures in a row; the last: {result.message.splitlines()[0]}")
            report.results.extend(CaseResult(c, Verdict.NOT_RUN) for c in cases[index + 1:])
            break
    report.seconds = time.monotonic() - started
    return report


def failure_kind(result: CaseResult) -> FailureKind | None:
    """For a SUT failure, its kind as the message names it (None otherwise)."""
    if result.verdict is not Verdict.SUT_FAILURE:
        return None
    return next((kind for kind in FailureKind if result.message.startswith(kind.value + " ")), None)
