"""Auto-creation on send: an auto-creating send to an address without queues makes one (DUP-AUTO-CREATE).

Introduction
------------
A core client sending an ANYCAST message to an address whose settings have
``auto-create-queues`` on (``Send(..., auto_create=True)``) gets, from
2.28.0 (ARTEMIS-4089), a queue named like the address when the address has
no queue (``PostOfficeImpl.simpleRoute`` calls
``ServerSessionImpl.checkAutoCreate``; ``checkAddress`` makes the address
first). The profile option ``duplicates.send_auto_create`` says whether the
broker does it; before 2.28.0 such a send is NO_BINDINGS like any other
(``ServerSessionImpl.doSend`` routes to what exists). Read from
``PostOfficeImpl.route`` at 2.40.0 (and 2.28.0 to 2.44.0, which agree):

* ``checkDuplicateID`` runs FIRST. A duplicate (normal or bridged, or every
  bridged ID of a size-0 bridge cache under ``ZeroSizeCache.NO_OP``) returns
  ``DUPLICATED_ID`` before ``checkAddress`` and ``simpleRoute`` are reached,
  so it makes no queue; so does a send whose ID is not bytes (the cast
  throws inside the check) and a send of a prepared session.
* After the check, the queue is made at once and outside any transaction
  (``ServerSessionImpl.createQueue``): it stays when the client's
  transaction rolls back, is rollback-only or fails to commit. It is
  durable (``QueueConfiguration`` defaults), so it survives a restart or a
  crash with the messages routed to it, as every queue does here. The
  message is then routed to it, with the address's other queues (none).
* A full address fails the send in ``processRoute``, after ``simpleRoute``:
  the queue is made all the same (DUP-SEND-FAILED).
* When a queue named like the address exists but is bound to another
  address, ``checkAutoCreate`` finds it (``server.locateQueue`` looks names
  up broker-wide) and, the spec's queues being MULTICAST, answers
  ``NOT_FOUND``: the send fails with AMQ229203 (``addressDoesNotExist``),
  and inside a transaction the transaction becomes rollback-only
  (DUP-AUTO-CREATE-NAME-TAKEN). Outside one, the transaction the post office
  started for the send is neither committed nor rolled back: an ID its
  check added at once stays in memory but is never durable
  (:data:`~.ring.STRANDED`), and under the older add timings it never enters.
* The duplicates domain does not model auto-deletion (``auto-delete-queues``):
  an auto-created queue stays until it is deleted, and deleting it, when it
  is its address's last, forgets the address's IDs as for any queue
  (DUP-FORGET-ON-LAST-QUEUE, ``PostOfficeImpl.removeBinding`` ->
  ``deleteDuplicateCache``).
"""

from __future__ import annotations

from enum import Enum

from ..frozen import replace
from .commands import Send
from .model import DuplicatesState, QueueState, get_queues_of


class AutoCreation(Enum):
    """What an accepted send does about its address's queues before routing."""

    NONE = "NONE"
    """Not an auto-creating send, a profile that never creates, or the address has a queue."""
    CREATE = "CREATE"
    """A queue named like the address is made (``AutoCreateResult.CREATED``)."""
    NAME_TAKEN = "NAME_TAKEN"
    """A queue of that name is bound to another address: the send fails (``AutoCreateResult.NOT_FOUND``)."""


def compute_auto_creation(state: DuplicatesState, command: Send) -> AutoCreation:
    """What ``command``, once past the duplicate check, does about its address's queues (DUP-AUTO-CREATE).

    >>> from brokerspec.spec import get_profile
    >>> from .model import initial_state
    >>> state = initial_state(get_profile("artemis-latest"))
    >>> compute_auto_creation(state, Send("s1", "orders", auto_create=True))
    <AutoCreation.CREATE: 'CREATE'>
    >>> compute_auto_creation(initial_state(get_profile("artemis-2.11")), Send("s1", "orders", auto_create=True))
    <AutoCreation.NONE: 'NONE'>
    """
    if not command.auto_create or not state.options.send_auto_create:
        return AutoCreation.NONE
    if get_queues_of(state, command.address):
        return AutoCreation.NONE
    if command.address in state.queues:
        return AutoCreation.NAME_TAKEN
    return AutoCreation.CREATE


def create_queue_named_like(state: DuplicatesState, address: str) -> DuplicatesState:
    """The state with an empty queue called ``address`` bound to ``address`` (DUP-AUTO-CREATE).

    pre: address not in state.queues
    post: __return__.queues[address].address == address
    """
    return replace(state, queues=state.queues.set(address, QueueState(address)))
