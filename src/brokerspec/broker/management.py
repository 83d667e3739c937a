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
this way manages it too:

=====================  ==================================================  =====================
operation              parameters                                          spec command
=====================  ==================================================  =====================
``createAddress``      name, routing types (``"ANYCAST,MULTICAST"``)       ``create_address``
``deleteAddress``      name, force (optional, default false)               ``delete_address``
``createQueue``        address, routing type, name, further ones ignored   ``create_queue``
``destroyQueue``       name, further ones ignored                          ``delete_queue``
``getAddressNames``    none                                                (a query)
``getQueueNames``      none                                                (a query)
``listDuplicateIds``   address, slots (optional: every slot's ID, not      ``query_id``
                       only those the duplicate check finds)
``lookup``             name                                                ``lookup``
``queryAddress``       name                                                ``query_address``
``getRouting``         the ``_BS_TAG`` header value of an earlier send     (what the send became)
``getQueues``          none                                                (a query)
``setPrefix``          the command's arguments as a JSON object            ``set_prefix``
``setAddressSettings`` the command's arguments as a JSON object            ``set_address_settings``
=====================  ==================================================  =====================

The last seven are brokerspec's own (the last two are ``broker.xml``
settings in Artemis: an acceptor's prefixes, an ``address-setting``; here
they last until the broker restarts): Artemis answers the same questions
through its core client (``queueQuery``, ``addressQuery``) or, for where a
message went and which IDs a cache holds, only to a broker plugin.
``getRouting`` gives the routing status Artemis's ``PostOfficeImpl.route``
returns (``OK``, ``NO_BINDINGS``, ``DUPLICATED_ID``), the queues reached
and whether the send's transaction is now rollback-only. Query answers are
outcomes in the JSON of a trace (``docs/trace-format.md``), and a refusal's
reply carries the refusal the same way in a ``brokerspec-reason`` header.

A refused operation replies with ``_AMQ_OperationSucceeded: false`` and the
spec's reason (``address_exists: address='orders'`` ...); a malformed
request (unknown operation, wrong parameters, a body that is not a JSON
array) likewise, naming what is wrong. A request without ``reply-to`` is
carried out and nothing is replied.
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


def _outcome(outcome: Outcome) -> Any:
    if isinstance(outcome, Rejected):
        reason = outcome.reason
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(reason).items())
        raise BadRequest(f"{reason.kind}: {fields}", outcome)
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
    model.send(reply_to, None, headers, json.dumps([result]).encode("utf-8"), False)
