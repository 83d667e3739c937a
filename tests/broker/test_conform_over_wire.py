"""The conformance catalogue over the wire: brokerspec's broker driven through its STOMP port only.

The fast tier runs a smoke of both domains (restart and crash among them), shows that a case STOMP cannot
express is reported as such, and that the check can fail: the same smoke against a broker started under
another profile parts from the spec. The deep tier runs the whole catalogue (``docs/broker.md`` has the
figures).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from brokerspec.conform.catalogue import Case, all_cases
from brokerspec.conform.runner import ConformReport, Verdict, run_conformance
from brokerspec.spec import Profile, get_profile
from brokerspec.spec.duplicates import Crash, Restart
from brokerspec.stomp.sut import BrokerProcessSut

from depth import DEEP_ONLY

pytestmark = pytest.mark.xdist_group("stomp-conform")

LATEST = get_profile("artemis-latest")

SMOKE = (
    "addressing/fqqn-splits-at-first-separator",
    "addressing/fqqn-send-reaches-only-that-queue",
    "addressing/colon-ending-address-unreachable-by-fqqn",
    "addressing/consume-refused-when-queue-auto-creation-off",
    "addressing/prefix-stripped-and-sets-routing-type",
    "addressing/anycast-send-next-to-existing-queue",
    "duplicates/nontx-duplicate-dropped-but-client-told-ok",
    "duplicates/duplicate-in-transaction-makes-it-rollback-only",
    "duplicates/rollback-returns-to-the-head-or-to-arrival-order",
    "duplicates/forgetting-drops-open-transaction-ids",
    "duplicates/restart-reloads-persisted-ids",
    "duplicates/crash-loses-open-transaction",
    "duplicates/reload-into-size-zero-keeps-the-stored-ids-for-later",
)


@pytest.fixture(scope="module")
def sut() -> Iterator[BrokerProcessSut]:
    broker = BrokerProcessSut()
    try:
        yield broker
    finally:
        broker.close()


def cases(names: tuple[str, ...], profile: Profile) -> list[Case]:
    by_name = {case.name: case for case in all_cases()}
    unknown = [name for name in names if name not in by_name]
    assert not unknown, f"not in the catalogue: {unknown}"
    return [by_name[name] for name in names if by_name[name].applies_to(profile)]


def not_passed(report: ConformReport) -> list[str]:
    return [f"{r.case.name}: {r.verdict.value}: {r.message.splitlines()[0] if r.message else ''}"
            for r in report.results if r.verdict is not Verdict.PASSED]


def test_the_smoke_passes_over_the_wire(sut: BrokerProcessSut) -> None:
    chosen = cases(SMOKE, LATEST)
    restarts = {type(c).__name__ for case in chosen for c in case.commands if isinstance(c, (Restart, Crash))}
    assert len(chosen) == len(SMOKE) and restarts == {"Restart", "Crash"}
    report = run_conformance(sut, chosen, LATEST, max_sut_failures=len(chosen))
    assert not report.stopped, report.stopped
    assert not not_passed(report), "\n".join(not_passed(report))


def test_what_stomp_cannot_express_is_reported_as_such(sut: BrokerProcessSut) -> None:
    chosen = cases(("duplicates/bridge-ids-have-their-own-cache", "duplicates/long-id-fails-the-send-and-records-nothing"),
                   LATEST)
    report = run_conformance(sut, chosen, LATEST, max_sut_failures=len(chosen))
    assert [r.verdict for r in report.results] == [Verdict.SUT_FAILURE] * len(chosen)
    assert all("not expressible over the wire" in r.message for r in report.results)


class OtherProfile(BrokerProcessSut):
    """A broker started under artemis-2.11 whatever the case asks for: a planted difference."""

    def reset(self, domain: str, profile: Profile) -> None:
        super().reset(domain, get_profile("artemis-2.11"))


def test_a_broker_under_another_profile_parts_from_the_spec() -> None:
    wrong = OtherProfile()
    try:
        chosen = cases(("duplicates/rollback-returns-to-the-head-or-to-arrival-order",
                        "addressing/anycast-send-auto-creates-queue-named-like-address"), LATEST)
        report = run_conformance(wrong, chosen, LATEST, max_sut_failures=len(chosen))
    finally:
        wrong.close()
    assert [r.verdict for r in report.results] == [Verdict.FAILED, Verdict.FAILED], not_passed(report)


@pytest.mark.parametrize("domain", ["addressing", "duplicates"])
@DEEP_ONLY[0]
@DEEP_ONLY[1]
def test_the_whole_catalogue_passes_or_is_not_expressible(sut: BrokerProcessSut, domain: str) -> None:
    chosen = [case for case in all_cases() if case.domain == domain and case.applies_to(LATEST)]
    report = run_conformance(sut, chosen, LATEST, max_sut_failures=len(chosen))
    wrong = [line for line, r in zip(not_passed(report), [r for r in report.results
                                                          if r.verdict is not Verdict.PASSED])
             if r.verdict is Verdict.FAILED or (r.verdict is Verdict.SUT_FAILURE
                                                and "not expressible" not in r.message)]
    assert not wrong, "\n".join(wrong)
    assert sum(r.verdict is Verdict.PASSED for r in report.results) >= (56 if domain == "addressing" else 34)
