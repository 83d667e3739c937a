"""The XA side of the Artemis duplicates adapter, without a broker: which XA calls each spec operation makes.

A fake driver records every call and answers as a broker would, or refuses a chosen call the way Artemis
does (``XAException`` with a cause), so each test can fail on a plausible mistake: a prepared transaction
committed in one phase, a refused prepare left known to the broker, work sent into a prepared branch, a
bridge duplicate's refused ``end`` taken for a prepared branch, or someone else's in-doubt branch rolled
back at a reset.
"""

from __future__ import annotations

from typing import Any

import pytest

from brokerspec.artemis.driver import CallFailed, Cause
from brokerspec.artemis.duplicates import DuplicatesAdapter
from brokerspec.artemis.outcomes import UnexpectedRefusal
from brokerspec.artemis.xa import XAER_NOTA, XAER_PROTO, XID_FORMAT, Branches, Xid, new_xid
from brokerspec.spec.duplicates import (
    Begin,
    Commit,
    CommitFailed,
    Committed,
    Done,
    DoomReason,
    NoTransaction,
    Prepare,
    PrepareFailed,
    Receive,
    RolledBack,
    Rollback,
    Send,
    TransactionOpen,
    TransactionPrepared,
)

XA_EXCEPTION = "javax.transaction.xa.XAException"


def xa_refusal(command: str, code: int, cause_type: str | None = None) -> CallFailed:
    causes = [Cause(XA_EXCEPTION, "null", None, code)]
    if cause_type is not None:
        causes.append(Cause("org.apache.activemq.artemis.api.core.ActiveMQException", "refused", cause_type))
    return CallFailed(command, tuple(causes))


class FakeDriver:
    """Records calls; ``refuse`` maps a command to the failure it raises (once)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.refuse: dict[str, CallFailed] = {}
        self.in_doubt: list[dict[str, Any]] = []

    def call(self, command: str, **fields: Any) -> dict[str, Any]:
        self.calls.append((command, fields))
        if command in self.refuse:
            raise self.refuse.pop(command)
        if command == "xa_recover":
            return {"ok": True, "xids": self.in_doubt}
        return {"ok": True}

    def xa(self) -> list[str]:
        return [command for command, _ in self.calls if command.startswith("xa_")]


class FakeNode:
    def __init__(self) -> None:
        self.driver = FakeDriver()

    def call(self, command: str, **fields: Any) -> dict[str, Any]:
        return self.driver.call(command, node="n1", **fields)


def adapter() -> tuple[DuplicatesAdapter, FakeDriver]:
    node = FakeNode()
    made = DuplicatesAdapter(node)  # type: ignore[arg-type]
    return made, node.driver


def test_xids_are_brokerspecs_own_and_never_repeat() -> None:
    xids = {new_xid("r1_", "t", n) for n in range(5)} | {new_xid("r2_", "t", 1), new_xid("r1_", "u", 1)}
    assert len(xids) == 7 and {x.format_id for x in xids} == {XID_FORMAT}
    first = new_xid("r1_", "t", 1)
    assert Xid.from_wire(first.wire()) == first and first.wire()["format"] == XID_FORMAT


def test_begin_starts_a_branch_on_the_sessions_xa_session() -> None:
    made, driver = adapter()
    assert made.execute(Begin("t")) == Done()
    assert made.execute(Begin("t")) == TransactionOpen("t")
    sessions = [fields for command, fields in driver.calls if command == "session"]
    assert sessions == [{"node": "n1", "id": "dup-t-xa", "xa": True}]
    assert driver.xa() == ["xa_start"]
    assert driver.calls[-1][1]["xid"] == made.session("t").xid.wire()  # type: ignore[union-attr]


def test_prepare_ends_and_prepares_then_the_commit_is_the_second_phase() -> None:
    made, driver = adapter()
    made.execute(Begin("t"))
    made.session("t").numbers = [4, 5]
    assert made.execute(Prepare("t")) == Done()
    assert driver.xa() == ["xa_start", "xa_end", "xa_prepare"]
    assert made.execute(Prepare("t")) == Done(), "prepared again: prepare alone, which Artemis ignores"
    assert driver.xa()[3:] == ["xa_prepare"]
    assert made.execute(Commit("t")) == Committed((4, 5))
    command, fields = driver.calls[-1]
    assert command == "xa_commit" and fields["one_phase"] is False
    assert made.execute(Commit("t")) == NoTransaction("t") and made.execute(Prepare("t")) == NoTransaction("t")


def test_an_open_transaction_commits_in_one_phase() -> None:
    made, driver = adapter()
    made.execute(Begin("t"))
    assert made.execute(Commit("t")) == Committed(())
    assert driver.xa() == ["xa_start", "xa_end", "xa_commit"]
    assert driver.calls[-1][1]["one_phase"] is True


def test_a_prepared_session_takes_no_work_and_asks_the_broker_nothing() -> None:
    made, driver = adapter()
    made.execute(Begin("t"))
    made.execute(Prepare("t"))
    before = len(driver.calls)
    assert made.execute(Send("t", "orders")) == TransactionPrepared("t")
    assert made.execute(Send("t", "orders", reject_duplicates=False)) == TransactionPrepared("t")
    assert made.execute(Receive("t", "missing")) == TransactionPrepared("t")
    assert made.execute(Begin("t")) == TransactionOpen("t")
    assert len(driver.calls) == before


def test_a_duplicate_fails_the_prepare_and_the_branch_is_forgotten() -> None:
    made, driver = adapter()
    made.execute(Begin("t"))
    driver.refuse["xa_prepare"] = xa_refusal("xa_prepare", -7, "DUPLICATE_ID_REJECTED")
    assert made.execute(Prepare("t")) == PrepareFailed(DoomReason.DUPLICATE_ID)
    assert driver.xa() == ["xa_start", "xa_end", "xa_prepare", "xa_rollback"]
    assert made.execute(Rollback("t")) == NoTransaction("t")


def test_a_branch_a_bridge_duplicate_rolled_back_fails_at_its_end() -> None:
    made, driver = adapter()
    made.execute(Begin("t"))
    made.session("t").doom = DoomReason.BRIDGE_DUPLICATE
    driver.refuse["xa_end"] = xa_refusal("xa_end", XAER_PROTO)
    assert made.execute(Prepare("t")) == PrepareFailed(DoomReason.BRIDGE_DUPLICATE)
    assert driver.xa() == ["xa_start", "xa_end", "xa_rollback"], "no prepare of a branch already rolled back"


def test_a_refused_prepare_the_client_cannot_explain_is_a_difference() -> None:
    made, driver = adapter()
    made.execute(Begin("t"))
    driver.refuse["xa_prepare"] = xa_refusal("xa_prepare", -7)
    with pytest.raises(UnexpectedRefusal, match="the prepare failed"):
        made.execute(Prepare("t"))


def test_a_doomed_one_phase_commit_fails_with_its_reason() -> None:
    made, driver = adapter()
    made.execute(Begin("t"))
    driver.refuse["xa_commit"] = xa_refusal("xa_commit", -7, "DUPLICATE_ID_REJECTED")
    assert made.execute(Commit("t")) == CommitFailed(DoomReason.DUPLICATE_ID)


def test_a_second_phase_that_fails_is_a_difference_never_a_commit_failure() -> None:
    made, driver = adapter()
    made.execute(Begin("t"))
    made.execute(Prepare("t"))
    made.session("t").doom = DoomReason.DUPLICATE_ID
    driver.refuse["xa_commit"] = xa_refusal("xa_commit", XAER_NOTA)
    with pytest.raises(UnexpectedRefusal, match="second phase"):
        made.execute(Commit("t"))


def test_rollback_of_an_open_and_of_a_prepared_branch() -> None:
    made, driver = adapter()
    made.execute(Begin("t"))
    assert made.execute(Rollback("t")) == RolledBack()
    assert driver.xa() == ["xa_start", "xa_end", "xa_rollback"]
    made.execute(Begin("t"))
    made.execute(Prepare("t"))
    assert made.execute(Rollback("t")) == RolledBack()
    assert driver.xa()[3:] == ["xa_start", "xa_end", "xa_prepare", "xa_rollback"]


def test_forget_ignores_an_unknown_xid_only() -> None:
    driver = FakeDriver()
    branches = Branches(driver)  # type: ignore[arg-type]
    xid = new_xid("r1_", "t", 1)
    driver.refuse["xa_rollback"] = xa_refusal("xa_rollback", XAER_NOTA)
    branches.forget("core", xid)
    driver.refuse["xa_rollback"] = xa_refusal("xa_rollback", XAER_PROTO)
    with pytest.raises(CallFailed):
        branches.forget("core", xid)


def test_closing_the_sessions_rolls_back_every_branch_unless_prepared_ones_are_kept() -> None:
    made, driver = adapter()
    for name in ("open", "ready"):
        made.execute(Begin(name))
    made.execute(Prepare("ready"))
    made.close_sessions(keep_prepared=True)
    assert set(made.sessions) == {"ready"} and made.sessions["ready"].opened == set()
    assert "xa_rollback" not in driver.xa(), "a crash or restart follows: nothing is rolled back"
    made.close_sessions()
    assert made.sessions == {} and driver.xa()[-1] == "xa_rollback"
    rolled = [fields["xid"]["gtrid"] for command, fields in driver.calls if command == "xa_rollback"]
    assert rolled == [new_xid(made.prefix, "ready", 2).gtrid]


def test_a_reset_rolls_back_brokerspecs_branches_in_doubt_and_no_one_elses() -> None:
    made, driver = adapter()
    mine, theirs = new_xid("r0_", "t", 1), Xid(1234, "0a", "0b")
    driver.in_doubt = [mine.wire(), theirs.wire()]
    made.roll_back_in_doubt()
    rolled = [fields["xid"] for command, fields in driver.calls if command == "xa_rollback"]
    assert rolled == [mine.wire()]
    assert driver.calls[-1] == ("close_session", {"id": "dup-recovery"})
