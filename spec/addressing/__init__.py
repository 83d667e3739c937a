"""Address resolution: addresses, queues, FQQNs, lookup and ambiguity.

The public surface of the domain: its state and invariants (:mod:`.model`),
commands (:mod:`.commands`), outcomes (:mod:`.outcomes`), operations
(:mod:`.operations`), name parsing (:mod:`.names`) and rules (:mod:`.rules`).
"""

from .commands import (
    COMMAND_TYPES,
    AddressingCommand,
    Consume,
    CreateAddress,
    CreateQueue,
    DeleteAddress,
    DeleteQueue,
    Lookup,
    QueryAddress,
    Send,
    SetAddressSettings,
    SetPrefix,
)
from .model import (
    CATCH_ALL,
    Address,
    AddressingState,
    AddressSettings,
    Queue,
    QueueKey,
    compute_name_count,
    get_queues_named,
    get_queues_of,
    get_settings,
    initial_state,
    invariant_violations,
    is_valid_state,
)
from .names import (
    FQQN_SEPARATOR,
    ParsedName,
    RoutingType,
    is_fully_qualified,
    name_problem,
    parse_name,
    strip_prefix,
    to_fully_qualified,
)
from .operations import TRANSITIONS, apply, resolve
from .outcomes import (
    OUTCOME_TYPES,
    REASON_TYPES,
    AddressCreated,
    AddressDeleted,
    AddressExists,
    AddressHasQueues,
    AddressNotFound,
    AddressQueried,
    Ambiguous,
    AmbiguousName,
    Attached,
    Configured,
    InvalidName,
    LookupOutcome,
    NotFound,
    Outcome,
    QueueCreated,
    QueueDeleted,
    QueueExists,
    QueueNotFound,
    QueueRoutingTypeMismatch,
    Reason,
    Rejected,
    Resolved,
    Routed,
    RoutingTypeNotAllowed,
)
from .rules import RULES, Rule, get_rule

__all__ = [
    "COMMAND_TYPES", "AddressingCommand", "Consume", "CreateAddress", "CreateQueue", "DeleteAddress", "DeleteQueue",
    "Lookup", "QueryAddress", "Send", "SetAddressSettings", "SetPrefix",
    "CATCH_ALL", "Address", "AddressingState", "AddressSettings", "Queue", "QueueKey", "compute_name_count",
    "get_queues_named", "get_queues_of", "get_settings", "initial_state", "invariant_violations", "is_valid_state",
    "FQQN_SEPARATOR", "ParsedName", "RoutingType", "is_fully_qualified", "name_problem", "parse_name",
    "strip_prefix", "to_fully_qualified",
    "TRANSITIONS", "apply", "resolve",
    "OUTCOME_TYPES", "REASON_TYPES", "AddressCreated", "AddressDeleted", "AddressExists", "AddressHasQueues",
    "AddressNotFound", "AddressQueried", "Ambiguous", "AmbiguousName", "Attached", "Configured", "InvalidName", "LookupOutcome",
    "NotFound", "Outcome", "QueueCreated", "QueueDeleted", "QueueExists", "QueueNotFound",
    "QueueRoutingTypeMismatch", "Reason", "Rejected", "Resolved", "Routed", "RoutingTypeNotAllowed",
    "RULES", "Rule", "get_rule",
]
