"""Wrong load-balancing implementations of the cluster bridge's duplicate IDs and of transactions.

Introduction
------------
Like :mod:`brokerspec.planted.balancing_bugs`, whose ``PLANTED`` lists these
too, each class is the fast broker with one plausible mistake, made by
overriding one method of the part of it that keeps bridges
(``brokerspec.impl.balancing.bridges``) or sessions
(``brokerspec.impl.balancing.sessions``):

* ``message-doubled-on-back-and-forth``: the receiving node records each
  bridge duplicate ID but never checks it, so a bridge that reconnects and
  resends what it forwarded last, after a message went from one node to
  the other and back, lands it a second time (against LB-BRIDGE-DUP,
  ``PostOfficeImpl.checkBridgeDuplicateID``).
* ``transacted-send-lands-at-once``: a transacted send is delivered as it
  is routed, not at the commit, and a rollback cannot take it back
  (against LB-TX-SEND and LB-TX-COMMIT, ``PostOfficeImpl.processRoute``
  with a transaction, ``AddOperation.afterCommit``).
* ``rollback-spends-no-delivery``: a rollback gives acknowledged messages
  back without counting the delivery they used, so none ever reaches
  max-delivery-attempts and is dropped (against LB-TX-MAX-DELIVERY,
  ``RefsOperation.afterRollback`` keeps the delivery count,
  ``QueueImpl.checkRedelivery``).

None of them touches the binding choice, so CrossHair's ``diffbehavior`` of
``choose_from_bits`` cannot see them; each entry says so.
"""

from __future__ import annotations

from brokerspec.impl.balancing import FastBalancingBroker, Group, QueueRecord, Waiting
from brokerspec.impl.balancing.sessions import SessionRecord
from brokerspec.planted.registry import ALL, PlantedBug
from brokerspec.spec.balancing import Event, RoutingStatus


class BridgeIdNotChecked(FastBalancingBroker):
    """The receiving node files every bridge duplicate ID it is sent but never looks one up first, so a resent
    message is taken in again (against LB-BRIDGE-DUP).

    What crosses once is unchanged, and so are the caches (an ID already there stays where it is): only a
    ``Resend`` of a crossing whose target queues still live shows it, a copy that went back and forth among them.
    """

    def _admit(self, node: str, address: str, bridge_id: tuple[str, int]) -> bool:
        super()._admit(node, address, bridge_id)
        return True


class TransactedSendLandsAtOnce(FastBalancingBroker):
    """A transacted send reaches its queues when it is sent, as a plain send does; its session opens but keeps
    nothing, so the commit brings nothing and a rollback takes nothing back (against LB-TX-SEND, LB-TX-COMMIT)."""

    def _route(self, node: str, groups: dict[str, dict[str, Group]], message: Waiting,
               events: list[Event], session: SessionRecord | None = None) -> RoutingStatus:
        return super()._route(node, groups, message, events, None)


class RollbackSpendsNoDelivery(FastBalancingBroker):
    """A rollback (a failed acknowledgement's own too) gives acknowledged messages back as if they had only been
    held: no delivery is counted, so none is ever dropped at max-delivery-attempts (against LB-TX-MAX-DELIVERY)."""

    def _give_back(self, queue: QueueRecord, acked: list[Waiting], held: list[Waiting],
                   events: list[Event]) -> None:
        super()._give_back(queue, [], [*acked, *held], events)


NOT_A_CHOICE = "; choose_from_bits covers only first routing's choice"

PLANTED: tuple[PlantedBug, ...] = (
    PlantedBug("message-doubled-on-back-and-forth", BridgeIdNotChecked, ALL, None,
               "the mistake is in what a node does with a message arriving over the bridge" + NOT_A_CHOICE),
    PlantedBug("transacted-send-lands-at-once", TransactedSendLandsAtOnce, ALL, None,
               "the mistake is in when a routed message reaches its queues, after the choice" + NOT_A_CHOICE),
    PlantedBug("rollback-spends-no-delivery", RollbackSpendsNoDelivery, ALL, None,
               "the mistake is in what a rollback does with the messages it gives back" + NOT_A_CHOICE),
)
