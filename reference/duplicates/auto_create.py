"""Auto-creation on send: ``ServerSessionImpl.checkAutoCreate`` as the post office calls it (DUP-AUTO-CREATE).

Introduction
------------
From 2.28.0 (ARTEMIS-4089) ``PostOfficeImpl.route``, once the duplicate
check has passed, calls ``checkAddress`` and then ``simpleRoute``; when the
address has no local binding, ``simpleRoute`` asks the sending session's
``checkAutoCreate`` for a queue named like the address. For an ANYCAST
message whose address settings have ``auto-create-queues`` on it answers:

* ``EXISTED`` when the address already has a queue (no call is made then);
* ``CREATED`` after ``createQueue`` made a durable queue called like the
  address, outside any transaction (``setAutoCreated(true)``);
* ``NOT_FOUND`` when a queue of that name exists but is bound elsewhere
  and is not ANYCAST (``server.locateQueue`` looks names up broker-wide; the
  spec's queues are MULTICAST): the post office throws AMQ229203.

The routing context carries ``auto_create_queues`` only for a client
session's ANYCAST send with the setting on, under a profile whose broker
makes the call; the move paths have no session and never auto-create.
"""

from __future__ import annotations

from enum import Enum

from .journal import StorageManager
from .queues import Bindings, Queue


class AutoCreateResult(Enum):
    """``ServerSession.AutoCreateResult``."""

    EXISTED = "EXISTED"
    CREATED = "CREATED"
    NOT_FOUND = "NOT_FOUND"


def check_auto_create(bindings: Bindings, storage: StorageManager, address: str) -> AutoCreateResult:
    """Find or make the queue an ANYCAST send to ``address`` needs (``ServerSessionImpl.checkAutoCreate``).

    >>> bindings, storage = Bindings(), StorageManager()
    >>> check_auto_create(bindings, storage, "orders"), bindings.get_queue("orders").address
    (<AutoCreateResult.CREATED: 'CREATED'>, 'orders')
    >>> _ = bindings.add_binding(Queue("invoices", "orders", storage.generate_id()))
    >>> check_auto_create(bindings, storage, "invoices")
    <AutoCreateResult.NOT_FOUND: 'NOT_FOUND'>
    """
    if bindings.has_bindings(address):
        return AutoCreateResult.EXISTED
    if bindings.get_queue(address) is not None:
        return AutoCreateResult.NOT_FOUND
    bindings.add_binding(Queue(address, address, storage.generate_id()))
    return AutoCreateResult.CREATED
