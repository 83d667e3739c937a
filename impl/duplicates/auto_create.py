"""Auto-creation on send for the fast broker: the queue an auto-creating send makes, or its failure.

Introduction
------------
The spec's :mod:`brokerspec.spec.duplicates.auto_create` (DUP-AUTO-CREATE,
DUP-AUTO-CREATE-NAME-TAKEN): once a send's ID has passed the check, an
auto-creating send (``Send.auto_create`` under a profile with
``duplicates.send_auto_create``) to an address with no queue makes a queue
named like the address, as ``CreateQueue`` does: in memory and in the
store's queue table in the operation's store transaction, whatever becomes
of the client's transaction, so a restart or a crash finds it with its
messages. When that name is bound to another address the send fails
instead (``ServerSessionImpl.checkAutoCreate`` answers ``NOT_FOUND``); outside a
client transaction an ID the check added at once stays in memory as a
pending slot no session owns (:data:`~brokerspec.spec.duplicates.STRANDED`),
which the store never receives.

The broker calls :func:`auto_create_queue` at the start of its ``_route``,
the point where ``PostOfficeImpl.route`` reaches ``checkAddress``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from brokerspec.spec.duplicates import STRANDED, DoomReason, SendFailed, SendFailure, Send
from brokerspec.spec.outcome import Outcome

from .cache import IdCache
from .records import OpenTransaction, WaitingQueue

if TYPE_CHECKING:
    from .broker import FastDuplicatesBroker


def auto_create_queue(broker: FastDuplicatesBroker, command: Send, tx: OpenTransaction | None,
                      cache: IdCache | None, key: bytes, bridged: bool) -> Outcome | None:
    """Make the send's queue when it needs one (None: route on), or the outcome of a name taken elsewhere."""
    address = command.address
    if address in broker._bindings:
        return None
    if address in broker._queues:
        return _fail_name_taken(broker, tx, cache, key, bridged)
    broker._queues[address] = WaitingQueue(address)
    broker._bindings[address] = (address,)
    broker._store.create_queue(address, address)
    return None


def _fail_name_taken(broker: FastDuplicatesBroker, tx: OpenTransaction | None, cache: IdCache | None,
                     key: bytes, bridged: bool) -> Outcome:
    """AMQ229203 after the check: a doomed transaction, or an instant add left in memory only."""
    failure = SendFailure.ADDRESS_DOES_NOT_EXIST
    if tx is None:
        if cache is not None and (broker._failed_bridge_undoes if bridged else broker._failed_send_undoes):
            broker._record(cache, key, STRANDED)
        return SendFailed(failure)
    if cache is not None:
        broker._hold_id(tx, cache, key, broker._tx_bridge_moment if bridged else broker._tx_moment)
    broker._doom(tx, DoomReason.SEND_FAILED)
    return SendFailed(failure, rollback_only=True)
