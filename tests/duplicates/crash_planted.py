"""A broker whose store loses IDs at a crash, kept to prove the crash harness can fail.

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
(R25). ``tests/duplicates/test_crash.py`` runs the crash harness's children
on this class (``--broker duplicates.crash_planted:LaggingIdStore``) and
expects lost IDs.
"""

from __future__ import annotations

from pathlib import Path

from brokerspec.impl.duplicates import FastDuplicatesBroker, IdCache
from brokerspec.spec import Profile


class LaggingIdStore(FastDuplicatesBroker):
    """Each operation's ID records reach the store one slot-changing operation late."""

    def __init__(self, profile: Profile, store_path: Path | None = None) -> None:
        super().__init__(profile, store_path)
        self._late: list[tuple[IdCache, int]] = []

    def _persist_ids(self, touched: list[tuple[IdCache, int]]) -> None:
        late, self._late = self._late, list(touched)
        super()._persist_ids(late)
