"""Visibility: the moment an accepted ID enters its cache.

Introduction
------------
An ID that passes the check is not always visible at once. Where it waits
depends on who started the transaction it travels in and on the broker
version (DUP-TX-HELD, DUP-NONTX-VISIBILITY, DUP-BRIDGE-DUPLICATE):

* a client transaction's ID waits for the commit to be stored
  (``tx.afterStore``), in every version: a client that fails and re-sends
  its transaction must not be rejected (DUP-TX-HELD, ARTEMIS-552);
* a non-transactional send runs in a transaction the broker starts, and a
  bridge ID is an *instant add*; when an instant add enters the cache is the
  profile's choice: after the store (before 2.8), in ``beforeCommit``
  (2.8-2.17) or at once, deleted again on rollback (2.18 on).

Outside a client transaction the spec runs a send atomically, so every
moment collapses into "with the send"; the moments still differ when
routing fails after the check, which :func:`is_undone_on_failure` answers.
"""

from __future__ import annotations

from enum import Enum

from ..profiles import InstantAdd


class AddMoment(Enum):
    """When an accepted ID enters its cache."""

    WITH_SEND = "with the send"
    AT_ONCE = "at once, inside the open transaction"
    BEFORE_COMMIT = "in beforeCommit"
    AFTER_STORE = "once the commit is stored"


def compute_add_moment(in_transaction: bool, bridged: bool, timing: InstantAdd) -> AddMoment:
    """When an ID accepted now enters its cache (DUP-TX-HELD, DUP-NONTX-VISIBILITY, DUP-BRIDGE-DUPLICATE).

    post: in_transaction or __return__ == AddMoment.WITH_SEND
    post: not in_transaction or bridged or __return__ == AddMoment.AFTER_STORE
    post: __return__ != AddMoment.AT_ONCE or timing == InstantAdd.IMMEDIATE

    >>> compute_add_moment(True, False, InstantAdd.IMMEDIATE)
    <AddMoment.AFTER_STORE: 'once the commit is stored'>
    >>> compute_add_moment(True, True, InstantAdd.IMMEDIATE)
    <AddMoment.AT_ONCE: 'at once, inside the open transaction'>
    """
    if not in_transaction:
        return AddMoment.WITH_SEND
    if not bridged or timing is InstantAdd.AFTER_STORE:
        return AddMoment.AFTER_STORE
    if timing is InstantAdd.BEFORE_COMMIT:
        return AddMoment.BEFORE_COMMIT
    return AddMoment.AT_ONCE


def is_undone_on_failure(timing: InstantAdd) -> bool:
    """Whether a non-transactional send whose routing fails after the check leaves a hole.

    Rules DUP-NONTX-VISIBILITY and DUP-DELETE-ID.

    From 2.18 the ID entered the cache during the check (evicting the
    oldest) and the rollback deletes it again; earlier versions had not
    added it yet, so nothing changes.

    post: __return__ == (timing == InstantAdd.IMMEDIATE)
    """
    return timing is InstantAdd.IMMEDIATE
