"""Management over messaging: the operations the spec has, sent to ``activemq.management`` as Artemis takes them.

Introduction
------------
Artemis lets a client manage the broker by sending a message to its
management address, ``activemq.management``: the header
``_AMQ_ResourceName`` names the resource (``broker``), ``_AMQ_OperationName``
the operation, and the body is a JSON array of the parameters. The reply
goes to the message's ``reply-to`` destination with ``_AMQ_OperationSucceeded``
set and, as its body, a JSON array holding the result or the error text
(Artemis ``ManagementHelper``, ``ManagementServiceImpl.handleMessage``; the
"Management" chapter of the Artemis manual). This broker takes the same
messages for the operations its spec has, so a client that manages Artemis
this way manages it too. Artemis's own operations (parameters in order):

``createAddress``
    name, routing types (``"ANYCAST,MULTICAST"``): the spec's ``create_address``.
``deleteAddress``
    name, force (optional, default false): ``delete_address``.
``createQueue``
    address, routing type, name (further ones ignored): ``create_queue``.
``destroyQueue``
    name (further ones ignored): ``delete_queue``.
``getAddressNames``, ``getQueueNames``
    no parameters: the names, sorted.

brokerspec's own, for what Artemis answers through its core client
(``queueQuery``, ``addressQuery``), in ``broker.xml``, or only to a broker
plugin (where a message went, what a cache holds):

``lookup``, ``queryAddress``
    name: the spec's ``lookup`` and ``query_address``, answered as the JSON
    of a trace outcome (``docs/trace-format.md``).
``getRouting``
    the ``_BS_TAG`` header value of an earlier send: the routing status
    Artemis's ``PostOfficeImpl.route`` returns (``OK``, ``NO_BINDINGS``,
    ``DUPLICATED_ID``), the address, the queues reached as (address, name)
    pairs, and whether the send's transaction is now rollback-only.
``getQueues``
    no parameters: every queue's address, name, routing type, consumer
    count and waiting messages (a list: two queues may share an FQQN string).
``listDuplicateIds``
    address, slots (optional): the IDs the address's duplicate check finds
    (``query_id``), oldest first; with slots, every ID a slot holds.
``listStoredDuplicateIds``
    address: the IDs the store holds for it, oldest first, dormant ones too
    (what the next start reloads).
``setPrefix``, ``setAddressSettings``
    the spec command's arguments as a JSON object: ``set_prefix`` and
    ``set_address_settings`` (an acceptor's prefixes and an
    ``address-setting`` in Artemis); they last until the broker restarts.

A refused operation replies with ``_AMQ_OperationSucceeded: false`` and the
spec's reason (``address_exists: address='orders'`` ...), and carries the
refusal as a trace outcome's JSON in a ``brokerspec-reason`` header; a malformed
request (unknown operation, wrong parameters, a body that is not a JSON
array) likewise, naming what is wrong. A request without ``reply-to`` is
carried out and nothing is replied. A reply goes straight into the queue
its ``reply-to`` names exactly (``address::queue``, or the queue named like
its address), so no acceptor prefix or address setting can divert it; a
``reply-to`` that names no queue is routed like any send.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from brokerspec.spec import Outcome
from brokerspec.spec.addressing import Rejected, RoutingType

from ..codec import CodecError, decode_command, encode_outcome
from .frames import Frame

if TYPE_CHECKING:
    from .model import Model

MANAGEMENT_ADDRESS = "activemq.management"
RESOURCE_HEADER = "_AMQ_ResourceName"
OPERATION_HEADER = "_AMQ_OperationName"
SUCCEEDED_HEADER = "_AMQ_OperationSucceeded"
REASON_HEADER = "brokerspec-reason"
"""A failed reply's header holding the name model's refusal as the JSON of a trace outcome."""


class BadRequest(Exception):
    """A management request that cannot be carried out as written, or that the name model refused."""

    def __init__(self, text: str, rejected: Rejected | None = None) -> None:
        super().__init__(text)
        self.rejected = rejected


def _text(params: list[Any], index: int, what: str) -> str:
    value = params[index] if index < len(params) else None
    if not isinstance(value, str):
        raise BadRequest(f"parameter {index + 1} ({what}) must be a string")
    return value


def _flag(params: list[Any], index: int, what: str) -> bool:
    if index >= len(params):
        return False
    value = params[index]
    if not isinstance(value, bool):
        raise BadRequest(f"parameter {index + 1} ({what}) must be true or false")
    return value


def _types(text: str) -> frozenset[RoutingType]:
    try:
        return frozenset(RoutingType(part.strip().upper()) for part in text.split(",") if part.strip())
    except ValueError:
        raise BadRequest(f"routing types must be ANYCAST and/or MULTICAST, not {text!r}") from None


def describe_refusal(outcome: Rejected) -> str:
    """A rejection as text: the reason's kind and its fields (``address_exists: address='orders'``)."""
    reason = outcome.reason
    fields = ", ".join(f"{k}={v!r}" for k, v in vars(reason).items())
    return f"{reason.kind}: {fields}"


def _outcome(outcome: Outcome) -> Any:
    if isinstance(outcome, Rejected):
        raise BadRequest(describe_refusal(outcome), outcome)
    return None


def _answer(outcome: Outcome) -> Any:
    """A query's outcome as the JSON of a trace outcome (``docs/trace-format.md``)."""
    return encode_outcome(outcome)


def _routing(model: Model, tag: str) -> Any:
    result = model.tagged.get(tag)
    if result is None:
        raise BadRequest(f"no send carried the tag {tag!r} (or it is too old to be remembered)")
    return {"status": result.status, "address": result.address, "queues": [list(pair) for pair in result.reached],
            "rollback_only": result.rollback_only,
            "refused": None if result.refused is None else encode_outcome(result.refused)}


def _configure(model: Model, op: str, params: list[Any]) -> Any:
    """``setPrefix`` / ``setAddressSettings``: the one parameter is the spec command's arguments as a trace
    writes them (``{"prefix": "/q/", "routing_type": "ANYCAST"}``)."""
    if len(params) != 1 or not isinstance(params[0], dict):
        raise BadRequest(f"one parameter: the {op} command's arguments as a JSON object")
    try:
        command = decode_command(op, params[0])
    except CodecError as error:
        raise BadRequest(str(error)) from None
    return _outcome(model.configure(command))


def _queues(model: Model) -> Any:
    """Every queue: a list, since two queues may share an FQQN string (``a:``/``r`` and ``a``/``:r``)."""
    return [{"address": queue.address, "name": queue.name, "routing_type": queue.routing_type,
             "consumers": len(queue.subscriptions), "messages": len(queue.waiting)}
            for queue in model.queues.values()]


def _queue_names(model: Model) -> list[str]:
    return sorted(queue.name for queue in model.queues.values())


OPERATIONS: dict[str, Callable[[Model, list[Any]], Any]] = {
    "createAddress": lambda m, p: _outcome(m.create_address(_text(p, 0, "name"), _types(_text(p, 1, "routing types")))),
    "deleteAddress": lambda m, p: _outcome(m.delete_address(_text(p, 0, "name"), _flag(p, 1, "force"))),
    "createQueue": lambda m, p: _outcome(m.create_queue(_text(p, 0, "address"), _text(p, 2, "name"),
                                                        next(iter(_types(_text(p, 1, "routing type"))),
                                                             RoutingType.ANYCAST))),
    "destroyQueue": lambda m, p: _outcome(m.delete_queue(_text(p, 0, "name"))),
    "getAddressNames": lambda m, p: sorted(m.names.snapshot().addresses),
    "getQueueNames": lambda m, p: _queue_names(m),
    "listDuplicateIds": lambda m, p: [key.decode("utf-16-le", "surrogatepass")
                                      for key in m.ids.ids(_text(p, 0, "address"), _flag(p, 1, "slots"))],
    "listStoredDuplicateIds": lambda m, p: [key.decode("utf-16-le", "surrogatepass") for _, key in
                                            m.store.read_ids().get((False, _text(p, 0, "address")), [])],
    "lookup": lambda m, p: _answer(m.lookup(_text(p, 0, "name"))),
    "queryAddress": lambda m, p: _answer(m.query_address(_text(p, 0, "name"))),
    "getRouting": lambda m, p: _routing(m, _text(p, 0, "tag")),
    "getQueues": lambda m, p: _queues(m),
    "setPrefix": lambda m, p: _configure(m, "set_prefix", p),
    "setAddressSettings": lambda m, p: _configure(m, "set_address_settings", p),
}


def run_operation(model: Model, frame: Frame) -> tuple[bool, Any, Rejected | None]:
    """Carry out one management request; (succeeded, result or error text, the name model's refusal if any)."""
    resource = frame.header(RESOURCE_HEADER) or "broker"
    operation = frame.header(OPERATION_HEADER)
    try:
        if resource != "broker":
            raise BadRequest(f"unknown resource {resource!r}: this broker manages 'broker' only")
        if operation is None or operation not in OPERATIONS:
            raise BadRequest(f"unknown operation {operation!r}; known: {', '.join(sorted(OPERATIONS))}")
        try:
            params = json.loads(frame.body.decode("utf-8")) if frame.body.strip() else []
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise BadRequest(f"the body must be a JSON array of parameters: {error}") from None
        if not isinstance(params, list):
            raise BadRequest(f"the body must be a JSON array of parameters, not {type(params).__name__}")
        return True, OPERATIONS[operation](model, params), None
    except BadRequest as error:
        return False, f"{operation}: {error}", error.rejected


def handle_management(model: Model, frame: Frame) -> None:
    """Run a management request and send the reply to its ``reply-to``, if it has one."""
    succeeded, result, rejected = run_operation(model, frame)
    reply_to = frame.header("reply-to")
    if reply_to is None:
        return
    headers: tuple[tuple[str, str], ...] = ((SUCCEEDED_HEADER, "true" if succeeded else "false"),
                                            ("content-type", "application/json"))
    if rejected is not None:
        headers += ((REASON_HEADER, json.dumps(encode_outcome(rejected))),)
    body = json.dumps([result]).encode("utf-8")
    if not model.deliver_reply(reply_to, headers, body):
        model.send(reply_to, None, headers, body, False)
