"""Address resolution over STOMP: each spec operation as a frame or a management request.

Introduction
------------
Like the Artemis adapter (:mod:`brokerspec.artemis.addressing`), this one
performs an operation as a client or an administrator would and reads
what the broker did from the broker, never from the spec:

=========================  =========================================================================
spec operation             over STOMP, and what the outcome is read from
=========================  =========================================================================
``create_address``         management ``createAddress``; the address that appeared
``delete_address``         management ``deleteAddress``; the address and the queues that went
``create_queue``           management ``createQueue``; the queue that appeared
``delete_queue``           management ``destroyQueue``; the queue that went
``lookup``                 management ``lookup`` (the broker's own resolution, as a core client's
                           ``queueQuery`` is Artemis's)
``query_address``          management ``queryAddress``
``send``                   a ``SEND`` with ``destination-type`` from the routing type and a
                           ``_BS_TAG`` header; the queues it reached are the broker's record of the
                           send (management ``getRouting``, as the Artemis adapter reads its probe);
                           what it created is what appeared
``consume``                a ``SUBSCRIBE`` with ``subscription-type``; the queue whose consumer count
                           grew; the subscription stays open until the next reset
``set_prefix``             management ``setPrefix``
``set_address_settings``   management ``setAddressSettings``
=========================  =========================================================================

A refusal is the ``ERROR`` frame's or the failed reply's ``brokerspec-reason``
header, the name model's refusal in the JSON of a trace outcome. The
outcome fields the broker does not name are derived as the Artemis adapter
derives them: ``copies`` are the MULTICAST queues reached (every queue, for
an FQQN send), ``anycast_candidates`` the address's ANYCAST group when one of
it was reached.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from brokerspec.spec import Outcome, Profile
from brokerspec.spec.addressing import (
    AddressCreated, AddressDeleted, Attached, Configured, Consume, CreateAddress, CreateQueue, DeleteAddress,
    DeleteQueue, Lookup, QueryAddress, QueueCreated, QueueDeleted, Rejected, Routed, Send,
    SetAddressSettings, SetPrefix,
)

from ..artemis.outcomes import UnexpectedRefusal, new_tag
from ..codec import CodecError, decode_outcome, encode_command
from .client import REPLY_PREFIX, Refusal, WireClient

SEPARATOR = "::"

Queues = dict[tuple[str, str], dict[str, Any]]
"""(address, name) -> address, name, routing_type, consumers, messages (management ``getQueues``). Not keyed by
FQQN: the queues (``a:``, ``r``) and (``a``, ``:r``) are both ``a:::r``."""


def fqqn(key: tuple[str, str]) -> str:
    """``address::name``."""
    return f"{key[0]}{SEPARATOR}{key[1]}"


def decoded(data: object, what: str) -> Outcome:
    """An outcome the broker sent as trace JSON."""
    try:
        return decode_outcome(data)
    except CodecError as error:
        raise UnexpectedRefusal(f"{what}: the broker's answer is not an outcome: {error}") from None


class StompAddressing:
    """The address-resolution domain on one STOMP broker."""

    def __init__(self, connect: Callable[[], WireClient]) -> None:
        self.connect = connect
        self.admin = connect()
        self.clients: list[WireClient] = []
        """The subscribing connections, kept open until the reset."""

    def reset(self, profile: Profile) -> None:
        """Nothing to undo: the SUT starts a new broker for each case."""
        del profile

    def close(self) -> None:
        for client in (*self.clients, self.admin):
            client.close()

    def execute(self, command: Any) -> Outcome:
        handlers: dict[type[Any], Callable[[Any], Outcome]] = {
            CreateAddress: self.create_address, DeleteAddress: self.delete_address, CreateQueue: self.create_queue,
            DeleteQueue: self.delete_queue, Lookup: self.query, QueryAddress: self.query, Send: self.send,
            Consume: self.consume, SetPrefix: self.configure, SetAddressSettings: self.configure}
        return handlers[type(command)](command)

    # -- reading the broker ---------------------------------------------------------------------

    def manage(self, operation: str, *params: Any) -> Any:
        """A management request whose refusal is raised as a Rejected outcome's JSON."""
        if self.admin.closed:
            self.admin = self.connect()
        ok, result, reason = self.admin.manage(operation, *params)
        if not ok:
            if reason is None:
                raise UnexpectedRefusal(f"management {operation} failed: {result}")
            raise _Refused(decoded(reason, operation))
        return result

    def addresses(self) -> set[str]:
        return {a for a in self.manage("getAddressNames") if not a.startswith(REPLY_PREFIX)}

    def queues(self) -> Queues:
        return {(info["address"], info["name"]): info for info in self.manage("getQueues")
                if not info["address"].startswith(REPLY_PREFIX)}

    # -- operations -----------------------------------------------------------------------------

    def create_address(self, command: CreateAddress) -> Outcome:
        before = self.addresses()
        types = ",".join(sorted(t.value for t in command.routing_types))
        try:
            self.manage("createAddress", command.address, types)
        except _Refused as refused:
            return refused.outcome
        made = sorted(self.addresses() - before)
        if len(made) != 1:
            raise UnexpectedRefusal(f"createAddress succeeded and {len(made)} addresses appeared: {made}")
        return AddressCreated(made[0])

    def delete_address(self, command: DeleteAddress) -> Outcome:
        before, before_queues = self.addresses(), self.queues()
        try:
            self.manage("deleteAddress", command.address, command.force)
        except _Refused as refused:
            return refused.outcome
        gone = sorted(before - self.addresses())
        after = self.queues()
        if len(gone) != 1:
            raise UnexpectedRefusal(f"deleteAddress succeeded and {len(gone)} addresses went: {gone}")
        return AddressDeleted(gone[0], tuple(sorted(fqqn(q) for q in before_queues if q not in after)))

    def create_queue(self, command: CreateQueue) -> Outcome:
        before = self.queues()
        try:
            self.manage("createQueue", command.address, command.routing_type.value, command.queue)
        except _Refused as refused:
            return refused.outcome
        made = [info for key, info in self.queues().items() if key not in before]
        if len(made) != 1:
            raise UnexpectedRefusal(f"createQueue succeeded and {len(made)} queues appeared")
        return QueueCreated(made[0]["address"], made[0]["name"])

    def delete_queue(self, command: DeleteQueue) -> Outcome:
        before = self.queues()
        try:
            self.manage("destroyQueue", command.name)
        except _Refused as refused:
            return refused.outcome
        after = self.queues()
        gone = [info for key, info in before.items() if key not in after]
        if len(gone) != 1:
            raise UnexpectedRefusal(f"destroyQueue succeeded and {len(gone)} queues went")
        return QueueDeleted(gone[0]["address"], gone[0]["name"])

    def query(self, command: Lookup | QueryAddress) -> Outcome:
        if isinstance(command, Lookup):
            return decoded(self.manage("lookup", command.name), "lookup")
        return decoded(self.manage("queryAddress", command.address), "queryAddress")

    def configure(self, command: SetPrefix | SetAddressSettings) -> Outcome:
        operation = "setPrefix" if isinstance(command, SetPrefix) else "setAddressSettings"
        try:
            self.manage(operation, encode_command(command))
        except _Refused as refused:
            return refused.outcome
        return Configured()

    def send(self, command: Send) -> Outcome:
        addresses, queues = self.addresses(), self.queues()
        tag = new_tag(self)
        headers = {"_BS_TAG": tag}
        if command.routing_type is not None:
            headers["destination-type"] = command.routing_type.value
        client = self.connect()
        try:
            client.request("send", destination=command.name, body="", headers=headers)
        except Refusal as refusal:
            if refusal.reason is None:
                raise UnexpectedRefusal(f"the send was refused: {refusal}") from None
            return decoded(refusal.reason, "send")
        finally:
            client.close()
        routing = self.manage("getRouting", tag)
        after = self.queues()
        made_addresses = sorted(self.addresses() - addresses)
        made_queues = sorted(fqqn(key) for key in after if key not in queues)
        if len(made_addresses) > 1 or len(made_queues) > 1:
            raise UnexpectedRefusal(f"one send created {made_addresses} and {made_queues}")
        address = routing["address"]
        reached = [key for key in map(tuple, routing["queues"]) if key in after]
        created = (made_addresses[0] if made_addresses else None, made_queues[0] if made_queues else None)
        if SEPARATOR in command.name:
            return Routed(address, tuple(sorted(map(fqqn, reached))), (), *created)
        joined = command.routing_type is None and any(
            info["address"] == address and info["routing_type"] == "ANYCAST" for info in after.values())

        def grouped(key: tuple[str, str]) -> bool:
            info = after[key]
            return info["routing_type"] == "ANYCAST" or (joined and info["name"] == address)

        copies = sorted(fqqn(q) for q in reached if not grouped(q))
        anycast = sorted(fqqn(q) for q in reached if grouped(q))
        if len(anycast) == 1:
            anycast = sorted(fqqn(q) for q, info in after.items() if info["address"] == address and grouped(q))
        return Routed(address, tuple(copies), tuple(anycast), *created)

    def consume(self, command: Consume) -> Outcome:
        addresses, before = self.addresses(), self.queues()
        client = self.connect()
        headers = {} if command.routing_type is None else {"subscription-type": command.routing_type.value}
        try:
            client.request("subscribe", destination=command.name, id="consumer", ack="client-individual",
                           headers=headers)
        except Refusal as refusal:
            client.close()
            if refusal.reason is None:
                raise UnexpectedRefusal(f"the subscription was refused: {refusal}") from None
            return decoded(refusal.reason, "consume")
        self.clients.append(client)
        after = self.queues()
        grew = [key for key, info in after.items()
                if info["consumers"] > before.get(key, {"consumers": 0})["consumers"]]
        if len(grew) != 1:
            raise UnexpectedRefusal(f"the subscription opened and {len(grew)} queues gained a consumer: {grew}")
        key = grew[0]
        made = sorted(self.addresses() - addresses)
        return Attached(key[0], key[1], made[0] if made else None, fqqn(key) if key not in before else None)


class _Refused(Exception):
    """A management request the name model refused: the outcome to report."""

    def __init__(self, outcome: Outcome) -> None:
        super().__init__(str(outcome))
        if not isinstance(outcome, Rejected):
            raise UnexpectedRefusal(f"a refusal that is not a rejection: {outcome}")
        self.outcome = outcome

