"""The transaction lifecycle, as a transition table.

Introduction
------------
A session's transaction moves through four states: none open, ``ACTIVE``,
``ROLLBACK_ONLY`` and ``PREPARED`` (the first phase of an XA two-phase
commit has made it durable). The table :data:`TRANSACTION_LIFECYCLE` maps
(state, event) to the next state and what happens, in words; a missing key is
a move the broker refuses (``begin`` with a transaction open, ``commit``,
``prepare`` or ``rollback`` with none, work on a prepared transaction), which
the spec answers with an outcome (``TransactionOpen``, ``NoTransaction``,
``TransactionPrepared``). The operations consult this table
for every status change, the tests walk the whole state x event product, and
the state diagram in ``docs/duplicate-detection.md`` is drawn from it.

Rules: DUP-TX-DUPLICATE (a duplicate marks the transaction rollback-only; the commit
then fails and rolls everything back), DUP-TX-HELD (IDs become visible at commit),
DUP-BRIDGE-DUPLICATE (a bridge duplicate rolls the work back at once), the XA
rules DUP-XA-PREPARE, DUP-XA-PREPARE-ROLLBACK-ONLY, DUP-XA-PREPARED-BUSY and
DUP-XA-PREPARED-RESTART (``TransactionImpl.prepare``, ``ServerSessionImpl.xaPrepare``), and
``OpenWireConnection.CommandProcessor.processMessage`` (a failed send marks the
transaction rollback-only).
"""

from __future__ import annotations

from enum import Enum


class TxState(Enum):
    """A session's transaction state."""

    NONE = "none"
    ACTIVE = "active"
    ROLLBACK_ONLY = "rollback-only"
    PREPARED = "prepared"


class TxEvent(Enum):
    """What can happen to a session's transaction."""

    BEGIN = "begin"
    SEND = "send accepted"
    DUPLICATE = "duplicate sent"
    FAILED_SEND = "send failed"
    RECEIVE = "receive"
    PREPARE = "prepare"
    COMMIT = "commit"
    ROLLBACK = "rollback"
    RESTART = "restart or crash"


TRANSACTION_LIFECYCLE: dict[tuple[TxState, TxEvent], tuple[TxState, str]] = {
    (TxState.NONE, TxEvent.BEGIN): (TxState.ACTIVE, "transaction opened"),
    (TxState.NONE, TxEvent.SEND): (
        TxState.NONE, "routed at once; its ID recorded as the profile says (DUP-NONTX-VISIBILITY)"),
    (TxState.NONE, TxEvent.DUPLICATE): (
        TxState.NONE, "not routed; the client is told it succeeded (DUP-NONTX-DUPLICATE)"),
    (TxState.NONE, TxEvent.FAILED_SEND): (TxState.NONE, "the client sees the failure"),
    (TxState.NONE, TxEvent.RECEIVE): (TxState.NONE, "acknowledged at once"),
    (TxState.NONE, TxEvent.RESTART): (TxState.NONE, "nothing to lose"),
    (TxState.ACTIVE, TxEvent.SEND): (TxState.ACTIVE, "held; its ID recorded at commit (DUP-TX-HELD)"),
    (TxState.ACTIVE, TxEvent.DUPLICATE): (
        TxState.ROLLBACK_ONLY, "not routed; the transaction is doomed (DUP-TX-DUPLICATE)"),
    (TxState.ACTIVE, TxEvent.FAILED_SEND): (TxState.ROLLBACK_ONLY, "the transaction is doomed"),
    (TxState.ACTIVE, TxEvent.RECEIVE): (TxState.ACTIVE, "acknowledgement held until commit"),
    (TxState.ACTIVE, TxEvent.COMMIT): (TxState.NONE, "messages routed, IDs recorded, acknowledgements final"),
    (TxState.ACTIVE, TxEvent.ROLLBACK): (TxState.NONE, "messages discarded, acknowledged messages back"),
    (TxState.ACTIVE, TxEvent.RESTART): (TxState.NONE, "lost: rolled back"),
    (TxState.ROLLBACK_ONLY, TxEvent.SEND): (TxState.ROLLBACK_ONLY, "held, to be discarded"),
    (TxState.ROLLBACK_ONLY, TxEvent.DUPLICATE): (TxState.ROLLBACK_ONLY, "not routed"),
    (TxState.ROLLBACK_ONLY, TxEvent.FAILED_SEND): (TxState.ROLLBACK_ONLY, "the client sees the failure"),
    (TxState.ROLLBACK_ONLY, TxEvent.RECEIVE): (TxState.ROLLBACK_ONLY, "acknowledgement held, to be undone"),
    (TxState.ROLLBACK_ONLY, TxEvent.COMMIT): (TxState.NONE, "commit fails; everything rolled back (DUP-TX-DUPLICATE)"),
    (TxState.ROLLBACK_ONLY, TxEvent.ROLLBACK): (TxState.NONE, "messages discarded, acknowledged messages back"),
    (TxState.ROLLBACK_ONLY, TxEvent.RESTART): (TxState.NONE, "lost: rolled back"),
    (TxState.ACTIVE, TxEvent.PREPARE): (
        TxState.PREPARED, "made durable; messages still held, IDs still not visible (DUP-XA-PREPARE)"),
    (TxState.ROLLBACK_ONLY, TxEvent.PREPARE): (
        TxState.NONE, "prepare fails; everything rolled back (DUP-XA-PREPARE-ROLLBACK-ONLY)"),
    (TxState.PREPARED, TxEvent.PREPARE): (TxState.PREPARED, "ignored: already prepared (DUP-XA-PREPARE-AGAIN)"),
    (TxState.PREPARED, TxEvent.COMMIT): (
        TxState.NONE, "second phase: messages routed, IDs recorded, acknowledgements final (DUP-XA-SECOND-PHASE)"),
    (TxState.PREPARED, TxEvent.ROLLBACK): (
        TxState.NONE, "messages discarded, acknowledged messages back, no ID recorded (DUP-XA-SECOND-PHASE)"),
    (TxState.PREPARED, TxEvent.RESTART): (
        TxState.PREPARED, "kept with its messages, acknowledgements and IDs (DUP-XA-PREPARED-RESTART)"),
}


def compute_next_tx_state(state: TxState, event: TxEvent) -> TxState | None:
    """The state after ``event``, or None when the broker refuses the move.

    post: __return__ is None or (state, event) in TRANSACTION_LIFECYCLE

    >>> compute_next_tx_state(TxState.ACTIVE, TxEvent.DUPLICATE)
    <TxState.ROLLBACK_ONLY: 'rollback-only'>
    >>> compute_next_tx_state(TxState.NONE, TxEvent.COMMIT) is None
    True
    """
    entry = TRANSACTION_LIFECYCLE.get((state, event))
    return None if entry is None else entry[0]
