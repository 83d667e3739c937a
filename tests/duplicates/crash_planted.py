"""Brokers whose stores lose or split work at a crash, kept to prove the crash harness can fail.

Introduction
------------
:class:`LaggingIdStore` is the fast broker with one mistake, made by
overriding one seam (``_persist_ids``): it writes an operation's ID records
in the store transaction of the next operation that changes a slot, instead
of its own. Memory is right, every state snapshot agrees with the spec, and
a clean close loses nothing that a later write did not carry; but a kill
after a send has returned loses that send's ID, while its message, written
in the send's own store transaction, survives. Artemis avoids exactly this
by writing the ``DUPLICATE_ID`` record in the message's journal transaction
(DUP-RESTART-NO-PERSIST, ``PostOfficeImpl.storeDuplicateIDTransactional``).
``tests/duplicates/test_crash.py`` runs the crash harness's children on this
class (``--broker duplicates.crash_planted:LaggingIdStore``) and expects
lost IDs.

:class:`SplitPrepareStore` and :class:`SplitSecondPhaseStore` break the
atomicity of XA steps instead: the first commits a prepare's row and
messages in one store transaction and its IDs in a second
(against DUP-XA-PREPARE: ``TransactionImpl.prepare`` writes one prepare
record), the second forgets a prepared transaction in a store transaction
of its own before its commit writes the rest (against DUP-XA-SECOND-PHASE).
Only a kill between the two store commits shows either; the harness's
write points (``brokerspec crash points``) put one exactly there.
"""

from __future__ import annotations

from pathlib import Path

from brokerspec.impl.duplicates import FastDuplicatesBroker, IdCache, OpenTransaction
from brokerspec.spec import Profile
from brokerspec.spec.duplicates import Commit, TxState
from brokerspec.spec.outcome import Outcome


class LaggingIdStore(FastDuplicatesBroker):
    """Each operation's ID records reach the store one slot-changing operation late."""

    def __init__(self, profile: Profile, store_path: Path | None = None) -> None:
        super().__init__(profile, store_path)
        self._late: list[tuple[IdCache, int]] = []

    def _persist_ids(self, touched: list[tuple[IdCache, int]]) -> None:
        late, self._late = self._late, list(touched)
        super()._persist_ids(late)


class SplitPrepareStore(FastDuplicatesBroker):
    """A prepare's row and messages are committed before its IDs are written."""

    def _store_prepared(self, tx: OpenTransaction) -> None:
        self._store.put_prepared(tx.session, tx.messages, [])
        self._store.commit()
        if self._persist:
            self._store.put_prepared_ids(tx.session, tx.held_ids())


class SplitSecondPhaseStore(FastDuplicatesBroker):
    """The commit of a prepared transaction forgets it durably before writing its messages and IDs."""

    def _commit(self, command: Commit) -> Outcome:
        tx = self._txs.get(command.session)
        if tx is not None and tx.status is TxState.PREPARED:
            self._store.forget_prepared(command.session)
            self._store.commit()
        return super()._commit(command)
