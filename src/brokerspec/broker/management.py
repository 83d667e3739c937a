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
``listDuplicateIds``   address (a brokerspec operation, not Artemis's)     ``query_id``
=====================  ==================================================  =====================

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

from .frames import Frame

if TYPE_CHECKING:
    from .model import Model

MANAGEMENT_ADDRESS = "activemq.management"
RESOURCE_HEADER = "_AMQ_ResourceName"
OPERATION_HEADER = "_AMQ_OperationName"
SUCCEEDED_HEADER = "_AMQ_OperationSucceeded"


class BadRequest(Exception):
    """A management request that cannot be carried out as written."""


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
        raise BadRequest(f"{reason.kind}: {fields}")
    return None


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
                                      for key in m.ids.ids(_text(p, 0, "address"))],
}


def run_operation(model: Model, frame: Frame) -> tuple[bool, Any]:
    """Carry out one management request; (succeeded, result or error text)."""
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
        return True, OPERATIONS[operation](model, params)
    except BadRequest as error:
        return False, f"{operation}: {error}"


def handle_management(model: Model, frame: Frame) -> None:
    """Run a management request and send the reply to its ``reply-to``, if it has one."""
    succeeded, result = run_operation(model, frame)
    reply_to = frame.header("reply-to")
    if reply_to is None:
        return
    headers = ((SUCCEEDED_HEADER, "true" if succeeded else "false"), ("content-type", "application/json"))
    model.send(reply_to, None, headers, json.dumps([result]).encode("utf-8"), False)
