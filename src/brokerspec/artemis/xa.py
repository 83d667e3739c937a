"""XA branches on a real Artemis broker: how the duplicates adapter runs a spec transaction as one.

Introduction
------------
A spec transaction is one XA branch of a core XA session
(``ClientSessionFactory.createSession`` with ``xa`` true, no auto-commit,
every acknowledgement sent at once). The branch is named by an :class:`Xid`
brokerspec makes and keeps, so that it can be ended from any session, also
after the broker restarted: a prepared branch survives a restart in the
journal (``AbstractJournalStorageManager.loadPreparedTransactions``), and the
XA protocol lets any session commit or roll it back by its xid
(``ServerSessionImpl.xaCommit`` and ``xaRollback`` look it up in the resource
manager). :func:`in_doubt` lists the prepared branches the broker knows of
(``XAResource.recover``), which a reset rolls back so that no branch of an
earlier case outlives it.

The calls follow the XA protocol as a transaction manager makes them:

==================  ====================================================================
spec                XA calls
==================  ====================================================================
``begin``           ``start(xid, TMNOFLAGS)``
``prepare``         ``end(xid, TMSUCCESS)``, ``prepare(xid)``; again on a prepared branch,
                    ``prepare(xid)`` alone (``ServerSessionImpl.xaPrepare`` ignores it,
                    AMQ221079)
``commit``          open: ``end``, ``commit(xid, true)`` (one phase); prepared:
                    ``commit(xid, false)`` (the second phase)
``rollback``        open: ``end``, ``rollback(xid)``; prepared: ``rollback(xid)``
==================  ====================================================================

``end`` fails on a branch the broker has already rolled back
(``ServerSessionImpl.xaEnd``: "Cannot end, transaction is rolled back",
``XAER_PROTO``), which a bridge duplicate does at once
(``PostOfficeImpl.checkBridgeDuplicateID`` rolls the transaction back); the
branch then stays known to the resource manager until ``rollback(xid)``, as
it does after a failed ``prepare`` (``TransactionImpl.prepare`` rolls a
rollback-only branch back and throws, and
``DuplicateDetectionTest.testXADuplicateDetection4`` ends it with
``rollback(xid)``). :func:`forget` is that last call, made whatever happens.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from .driver import CallFailed, Driver

XID_FORMAT = 0x62730001
"""The format ID of every xid brokerspec makes: how :func:`in_doubt` tells its own branches from others'."""

XAER_NOTA = -4
"""``XAException.XAER_NOTA``: the xid is not known to the resource manager."""

XAER_PROTO = -6
"""``XAException.XAER_PROTO``: the call came at the wrong moment of the branch's life."""


@dataclass(frozen=True)
class Xid:
    """An XA branch identifier: format ID, global transaction ID and branch qualifier (as lower-case hex)."""

    format_id: int
    gtrid: str
    bqual: str

    def wire(self) -> dict[str, Any]:
        """The xid as the driver reads it."""
        return {"format": self.format_id, "gtrid": self.gtrid, "bqual": self.bqual}

    @classmethod
    def from_wire(cls, fields: dict[str, Any]) -> Xid:
        """An xid as the driver reports it (``xa_recover``)."""
        return cls(int(fields["format"]), str(fields["gtrid"]), str(fields["bqual"]))


def new_xid(prefix: str, session: str, number: int) -> Xid:
    """A fresh xid for ``session``'s ``number``-th transaction in the reset that names things with ``prefix``.

    The process ID keeps two brokerspec runs against one broker apart.

    >>> xid = new_xid("r3_", "t1", 2)
    >>> xid.format_id == XID_FORMAT, bytes.fromhex(xid.gtrid).decode().endswith("-r3_-t1-2"), xid.bqual
    (True, True, '01')
    """
    return Xid(XID_FORMAT, f"bs-{os.getpid()}-{prefix}-{session}-{number}".encode().hex(), "01")


class Branches:
    """The XA calls on one driver, each naming its core session and xid."""

    def __init__(self, driver: Driver) -> None:
        self.driver = driver

    def start(self, core: str, xid: Xid) -> None:
        """Associate a new branch with the core session: its sends and acknowledgements go into it."""
        self.driver.call("xa_start", session=core, xid=xid.wire())

    def end(self, core: str, xid: Xid) -> CallFailed | None:
        """End the session's work on the branch (``TMSUCCESS``); the refusal, when the broker refused it."""
        try:
            self.driver.call("xa_end", session=core, xid=xid.wire())
        except CallFailed as failure:
            return failure
        return None

    def prepare(self, core: str, xid: Xid) -> None:
        """The first phase; CallFailed when the broker refused it (a rollback-only branch, an unknown xid)."""
        self.driver.call("xa_prepare", session=core, xid=xid.wire())

    def commit(self, core: str, xid: Xid, one_phase: bool) -> None:
        """Commit in one phase (an ended, unprepared branch) or as the second phase (a prepared one)."""
        self.driver.call("xa_commit", session=core, xid=xid.wire(), one_phase=one_phase)

    def rollback(self, core: str, xid: Xid) -> None:
        """Roll the branch back, prepared or not."""
        self.driver.call("xa_rollback", session=core, xid=xid.wire())

    def forget(self, core: str, xid: Xid) -> None:
        """Roll the branch back if the broker still knows it; an unknown xid is no failure."""
        try:
            self.rollback(core, xid)
        except CallFailed as failure:
            if not failure.has_xa_code(XAER_NOTA):
                raise

    def in_doubt(self, core: str) -> list[Xid]:
        """The prepared branches brokerspec made that the broker holds (``XAResource.recover``)."""
        found = self.driver.call("xa_recover", session=core)["xids"]
        return [xid for xid in (Xid.from_wire(item) for item in found) if xid.format_id == XID_FORMAT]
