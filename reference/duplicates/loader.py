"""Starting up: rebuilding the ID caches from the journal.

Introduction
------------
When Artemis starts, ``AbstractJournalStorageManager.loadMessageJournal``
reads the journal. Records written inside a transaction that never wrote its
commit record are ignored: an open transaction does not survive a restart,
whether the broker was stopped cleanly or killed, unless it wrote a prepare
record: a prepared transaction is rebuilt from its records
(``loadPreparedTransactions``, :mod:`.prepared`). The ``DUPLICATE_ID``
records that are live are grouped by cache name, oldest first, and handed
to ``PostOfficeJournalLoader.handleDuplicateIds`` (seed 001), which for
each name

1. gets the cache from the post office, creating it with the size the
   settings give *now* (the global ``id-cache-size`` may have changed
   across the restart, DUP-SIZE-FIXED), and
2. if ``persist-id-cache`` is on, calls ``DuplicateIDCache.load`` with the
   list, which drops the excess and deletes its records (DUP-RESTART-RELOAD).

With ``persist-id-cache`` off nothing was ever written, so every cache
starts empty (DUP-RESTART-NO-PERSIST).

Two details follow the spec: a cache is created only for a name that has
records (as in Artemis), and a cache whose size resolves to 0 is not
created at all; its records count as dropped, and they are deleted, unless
the profile's ``zero_size_cache`` is ``NO_OP`` (2.28 on): Artemis's no-op
cache loads nothing and deletes nothing, so a later restart with a size
above 0 finds them again.

:func:`restart_broker_state` is the whole start-up as this reference sees it:
the lost transactions' acknowledgements never happened, so their messages
are back in their queues, every queue in arrival order; a new post office over the same queues and
settings; the caches loaded; then the prepared transactions rebuilt, which
take the messages they hold out of their queues again (DUP-XA-PREPARED-RESTART).
"""

from __future__ import annotations

from brokerspec.spec import DuplicatesOptions, ZeroSizeCache
from brokerspec.spec.duplicates import CacheName

from .journal import StorageManager
from .post_office import Configuration, PostOffice
from .prepared import load_prepared_transactions
from .queues import Bindings
from .transaction import Transaction


class PostOfficeJournalLoader:
    """Hands the reloaded duplicate-ID records to the post office's caches."""

    def __init__(self, post_office: PostOffice, configuration: Configuration, options: DuplicatesOptions) -> None:
        self.post_office = post_office
        self.configuration = configuration
        self.options = options

    def handle_duplicate_ids(self, duplicate_id_map: dict[CacheName, list[tuple[bytes, int]]]) -> int:
        """Load each cache's records (oldest first); return how many IDs did not fit (DUP-RESTART-RELOAD).

        Three IDs were stored; the broker comes back with room for two, so
        the oldest is dropped and its record deleted:

        >>> from brokerspec.spec import get_profile
        >>> from brokerspec.spec.duplicates import CacheKind, CacheName, DuplicateId, IdKind, Restart, Send
        >>> from brokerspec.reference.duplicates import ReferenceDuplicatesBroker
        >>> broker = ReferenceDuplicatesBroker(get_profile("artemis-latest"))
        >>> for text in ("x", "y", "z"):
        ...     _ = broker.execute(Send("s1", "a1", DuplicateId(IdKind.STRING, text)))
        >>> broker.execute(Restart(id_cache_size=2))
        Restarted(lost_transactions=0, dropped_ids=1)
        >>> cache = broker.post_office.duplicate_id_caches[CacheName(CacheKind.NORMAL, "a1")]
        >>> [slot.key.decode("utf-16-le") for slot in cache.ids if slot.key], cache.pos
        (['y', 'z'], 0)
        >>> len(broker.storage.load_duplicate_ids()[cache.name])
        2
        """
        if not self.configuration.persist_id_cache:
            return 0
        dropped = 0
        for name in sorted(duplicate_id_map):
            stored = duplicate_id_map[name]
            if self.post_office.resolve_id_cache_size(name) == 0:
                if self.options.zero_size_cache is ZeroSizeCache.NO_OP:
                    dropped += len(stored)  # NoOpDuplicateIDCache.load: nothing loaded, nothing deleted
                    self.post_office.left_dormant = True
                else:
                    dropped += self.delete_records(stored)
                continue
            cache = self.post_office.get_duplicate_id_cache(name)
            dropped += cache.load(stored, self.options.reload_keeps)
        return dropped

    def delete_records(self, stored: list[tuple[bytes, int]]) -> int:
        """Delete the records of a cache that is disabled now; return how many there were."""
        storage = self.post_office.storage
        for _, record_id in stored:
            storage.delete_duplicate_id(record_id)
        return len(stored)


def reload_queues(bindings: Bindings) -> None:
    """Every queue waits again in sequence order, the lost transactions' references included: their
    acknowledgements never became durable."""
    for queue in bindings.queues.values():
        queue.reload()


def restart_broker_state(configuration: Configuration, options: DuplicatesOptions,
                         storage: StorageManager, address_settings: dict[str, int],
                         bindings: Bindings) -> tuple[PostOffice, int, list[tuple[str, Transaction]]]:
    """Start again after a stop or a crash: a fresh post office with its caches loaded, the IDs dropped, and
    the prepared transactions by xid."""
    reload_queues(bindings)
    post_office = PostOffice(configuration, options, storage, address_settings, bindings)
    loader = PostOfficeJournalLoader(post_office, configuration, options)
    dropped = loader.handle_duplicate_ids(storage.load_duplicate_ids())
    prepared = load_prepared_transactions(post_office, storage.load_prepared_transactions())
    return post_office, dropped, prepared
