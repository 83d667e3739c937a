"""The post office: where every message is checked for duplicates and routed.

Introduction
------------
This follows Artemis's ``PostOfficeImpl.route`` and ``checkDuplicateID``
(seed 001; 2.11.0, with the later versions' timing chosen by the profile).
A send reaches :meth:`PostOffice.route` with a :class:`RoutingContext`
holding the client's transaction, if it has one. Routing then:

1. checks the duplicate ID, *before* looking at the address's bindings,
   so an address with no queues still records the ID (DUP-ROUTED);
2. stops with ``DUPLICATED_ID`` when the check says so;
3. for an auto-creating send to an address without queues, makes its queue
   or fails, the broker's own transaction left as it is (``checkAddress``,
   ``simpleRoute``, :mod:`.auto_create`, DUP-AUTO-CREATE);
4. fails if the address is full (the paging store's FAIL policy, DUP-NONTX-VISIBILITY);
5. routes the message to every queue bound to its address, at once or,
   inside a transaction, at the commit;
6. commits the transaction it started itself, if it did.

The check (:meth:`PostOffice.check_duplicate_id`):

* A message carrying a bridge ID (``_AMQ_BRIDGE_DUP``) is checked against
  the cache ``BRIDGE.<address>`` only, with ``atomic_verify``; its normal
  ID is neither checked nor recorded on this hop (DUP-BRIDGE-FIRST, DUP-BRIDGE-DUPLICATE). A bridge
  duplicate rolls the transaction back at once and the message is dropped
  without a word.
* Otherwise the normal ID (``_AMQ_DUPL_ID``) is turned into bytes (DUP-ID-KEY; a
  value that is not a string or bytes makes the cast, and the send, fail)
  and looked up in the address's cache (DUP-CACHE-PER-ADDRESS). A duplicate is not routed;
  inside a transaction it dooms the transaction (DUP-NONTX-DUPLICATE, DUP-TX-DUPLICATE). With
  ``reject_duplicates`` false (the broker's own move paths) a duplicate is
  routed and its ID not recorded again (DUP-NO-REJECT).
* A new ID is added to the cache as part of the transaction. When there is
  none, the post office starts one so that the ID's record and the message
  are written together (DUP-NONTX-VISIBILITY, DUP-RESTART-NO-PERSIST), and asks for an *instant add*.

Caches are created by the first check on their address, sized by the
address's ``id-cache-size`` setting or the global one (DUP-SIZE-FIXED). A bridge
cache always gets the global size: the address's own setting does not match
the name ``BRIDGE.<address>``.
Removing an address's last binding forgets both of its caches (DUP-FORGET-ON-LAST-QUEUE).

Artemis keys its cache map by the name string, so a normal ID sent to an
address literally called ``BRIDGE.a1`` would share the bridge cache of
``a1``, and a size setting for ``BRIDGE.a1`` would size that bridge cache.
The spec names caches by kind and address, and so does this reference
(with :class:`CacheName`): the two never meet.
"""

from __future__ import annotations

from dataclasses import dataclass

from brokerspec.spec import DuplicatesOptions, ZeroSizeCache
from brokerspec.spec.duplicates import (
    CacheKind,
    CacheName,
    DoomReason,
    DuplicateId,
    IdKind,
    RoutingStatus,
    SendFailure,
)

from .auto_create import AutoCreateResult, check_auto_create
from .cache import DuplicateIDCache, NoOpDuplicateIDCache
from .journal import StorageManager
from .queues import Bindings, DeliverOperation
from .transaction import Transaction


@dataclass
class Configuration:
    """The broker-wide settings duplicate detection reads (``id-cache-size``, ``persist-id-cache``)."""

    id_cache_size: int
    persist_id_cache: bool


@dataclass
class Message:
    """A message on its way in: its address, its two ID properties, and whether its address is full."""

    address: str
    duplicate_property: DuplicateId | None = None
    bridge_duplicate_property: bytes | None = None
    address_full: bool = False
    message_id: int | None = None

    def remove_bridge_duplicate_property(self) -> bytes | None:
        """Take the bridge ID off the message (consumers never see it, ``BridgeImpl.getDuplicateBytes``)."""
        value, self.bridge_duplicate_property = self.bridge_duplicate_property, None
        return value

    def get_duplicate_id_bytes(self) -> bytes | None | SendFailure:
        """The normal ID as the bytes the cache compares (DUP-ID-KEY), None without one, or the cast's failure."""
        return None if self.duplicate_property is None else get_duplicate_id_bytes(self.duplicate_property)


def get_duplicate_id_bytes(value: DuplicateId) -> bytes | SendFailure:
    """An ID property's value as bytes (``Message.getDuplicateIDBytes``, DUP-ID-KEY), or the failure of the cast.

    A string becomes a ``SimpleString``, whose bytes are its UTF-16 code
    units, low byte first; bytes stay as they are; anything else (a long)
    cannot be cast to bytes.
    """
    if value.kind in (IdKind.STRING, IdKind.SIMPLE_STRING):
        return value.value.encode("utf-16-le", "surrogatepass")
    if value.kind is IdKind.BYTES:
        return bytes.fromhex(value.value)
    return SendFailure.ID_NOT_BYTES


@dataclass
class RoutingContext:
    """One routing: the transaction it runs in, and what routing learnt.

    ``started_tx`` says the post office started the transaction itself
    (Artemis's ``AtomicBoolean startedTX``); ``routed_to`` names the queues
    the message went to, or will go to at the commit.
    """

    transaction: Transaction | None = None
    duplicate_detection: bool = True
    started_tx: bool = False
    routed_to: tuple[str, ...] = ()
    auto_create_queues: bool = False
    """A client session's ANYCAST send to an address with ``auto-create-queues`` on, on a broker that checks
    (``context.getServerSession() != null``, 2.28.0 on)."""


def bridge_cache_name(address: str) -> CacheName:
    """The cache for bridge IDs sent to ``address``: ``BRIDGE.`` + the address (DUP-CACHE-PER-ADDRESS)."""
    return CacheName(CacheKind.BRIDGE, address)


class PostOffice:
    """The post office: ID caches by name, the bindings, and routing."""

    def __init__(self, configuration: Configuration, options: DuplicatesOptions, storage: StorageManager,
                 address_settings: dict[str, int], bindings: Bindings) -> None:
        self.configuration = configuration
        self.options = options
        self.storage = storage
        self.address_settings = address_settings
        self.bindings = bindings
        self.duplicate_id_caches: dict[CacheName, DuplicateIDCache] = {}
        self.left_dormant = False
        """Whether the reload that made this post office left stored IDs unloaded (``ZeroSizeCache.NO_OP``)."""

    # -- caches ------------------------------------------------------------------------

    def resolve_id_cache_size(self, name: CacheName) -> int:
        """The size a cache called ``name`` gets now: its address's setting, else the global one (DUP-SIZE-FIXED)."""
        if name.kind is CacheKind.NORMAL and name.address in self.address_settings:
            return self.address_settings[name.address]
        return self.configuration.id_cache_size

    def get_duplicate_id_cache(self, name: CacheName) -> DuplicateIDCache:
        """The cache called ``name``, created (and sized, for good) on first use.

        See DUP-CACHE-PER-ADDRESS, DUP-SIZE-FIXED.
        """
        cache = self.duplicate_id_caches.get(name)
        if cache is None:
            timing = self.options.bridge_add if name.kind is CacheKind.BRIDGE else self.options.nontx_add
            size = self.resolve_id_cache_size(name)
            kind = NoOpDuplicateIDCache if size == 0 and self.options.zero_size_cache is ZeroSizeCache.NO_OP \
                else DuplicateIDCache
            cache = kind(name, size, self.storage, self.configuration.persist_id_cache, timing)
            self.duplicate_id_caches[name] = cache
        return cache

    def delete_duplicate_cache(self, address: str) -> None:
        """Forget both caches of ``address`` and their journal records (DUP-FORGET-ON-LAST-QUEUE)."""
        for name in (CacheName(CacheKind.NORMAL, address), bridge_cache_name(address)):
            cache = self.duplicate_id_caches.pop(name, None)
            if cache is not None:
                cache.discard()

    def remove_binding(self, queue_name: str) -> bool | None:
        """Unbind a queue; None if there is none, else whether its address's caches were forgotten.

        See DUP-FORGET-ON-LAST-QUEUE.
        """
        queue = self.bindings.remove_binding(queue_name)
        if queue is None:
            return None
        if self.bindings.has_bindings(queue.address):
            return False
        self.delete_duplicate_cache(queue.address)
        return True

    # -- routing -----------------------------------------------------------------------

    def route(self, message: Message, context: RoutingContext, reject_duplicates: bool = True
              ) -> RoutingStatus | SendFailure:
        """Check, then route ``message``; the routing status, or why routing failed."""
        if context.duplicate_detection:
            checked = self.check_duplicate_id(message, context, reject_duplicates)
            if isinstance(checked, SendFailure):
                return checked
            if not checked:
                return RoutingStatus.DUPLICATED_ID
        tx = context.transaction
        if context.auto_create_queues and \
                check_auto_create(self.bindings, self.storage, message.address) is AutoCreateResult.NOT_FOUND:
            return SendFailure.ADDRESS_DOES_NOT_EXIST  # thrown: the transaction route started is never ended
        bound = self.bindings.get_bindings_for_routing_address(message.address)
        if message.address_full and bound:  # processRoute, where paging throws, runs only with queues routed to
            if tx is not None and context.started_tx:
                tx.rollback()
                context.started_tx = False
            return SendFailure.ADDRESS_FULL
        targets = tuple(queue.name for queue in bound)
        message.message_id = self.storage.generate_message_number()
        context.routed_to = targets
        if tx is None:
            self.bindings.deliver(message.message_id, targets)
        else:
            tx.add_operation(DeliverOperation(self.bindings, message.message_id, bound))
        if tx is not None and context.started_tx:
            tx.commit()
        return RoutingStatus.OK if targets else RoutingStatus.NO_BINDINGS

    def check_duplicate_id(self, message: Message, context: RoutingContext, reject_duplicates: bool
                           ) -> bool | SendFailure:
        """True to go on routing, False for a duplicate, or the failure of the ID's cast.

        See DUP-ID-KEY, the sending rules DUP-ROUTED to DUP-BRIDGE-DUPLICATE.
        """
        bridge_key = message.remove_bridge_duplicate_property()
        if bridge_key is not None:
            return self.check_bridge_duplicate_id(message, context, bridge_key)
        key = message.get_duplicate_id_bytes()
        if isinstance(key, SendFailure):
            return key
        if key is None:
            return True
        cache = self.get_duplicate_id_cache(CacheName(CacheKind.NORMAL, message.address))
        is_duplicate = cache.contains(key)
        if is_duplicate and reject_duplicates:
            if context.transaction is not None:
                context.transaction.mark_as_rollback_only(DoomReason.DUPLICATE_ID)
            return False
        if not is_duplicate:
            tx = self.ensure_transaction(context)
            cache.add_to_cache(key, tx, instant_add=context.started_tx)
        return True

    def check_bridge_duplicate_id(self, message: Message, context: RoutingContext, key: bytes) -> bool:
        """The bridge path: ``atomic_verify`` against ``BRIDGE.<address>``; a duplicate rolls back at once.

        See DUP-BRIDGE-DUPLICATE.
        """
        cache = self.get_duplicate_id_cache(bridge_cache_name(message.address))
        tx = self.ensure_transaction(context)
        if not cache.atomic_verify(key, tx):
            tx.rollback()
            context.started_tx = False
            return False
        return True

    def ensure_transaction(self, context: RoutingContext) -> Transaction:
        """The context's transaction, started by the post office when the send has none (DUP-NONTX-VISIBILITY)."""
        if context.transaction is None:
            context.transaction = Transaction(self.storage)
            context.started_tx = True
        return context.transaction
