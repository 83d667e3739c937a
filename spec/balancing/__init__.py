"""Load balancing and redistribution across a cluster: the executable specification.

Introduction
------------
A cluster of nodes, each with its own post office. A queue lives on one node
and every other node holds a remote binding for it. A message sent on a node
is routed through that node's bindings of its address: in each routing-name
group at most one binding takes it, by round robin with a preference for
bindings that have matching consumers, shaped by the address's
load-balancing type (OFF, STRICT, ON_DEMAND, OFF_WITH_REDISTRIBUTION).
Messages no consumer matches wait, and may later be *redistributed* to a
queue of the same group that has a matching consumer.

The broker's tie-breaking is made explicit: :mod:`.choice` states both the
strict choice (Artemis's exact round robin) and the set of allowed choices;
:mod:`.judge` accepts an observed outcome strictly or permissively.

Modules: :mod:`.model` (state), :mod:`.commands`, :mod:`.outcomes`,
:mod:`.choice` (the pure choice functions), :mod:`.operations` (the
transitions), :mod:`.judge` (strict and permissive), :mod:`.rules`. Sources:
seed 003 (``MessageLoadBalancingType`` and redistribution in 2.11.0) and
the Artemis classes it walks through, read at 2.11.0 and after 2.44.0
(``BindingsImpl``, ``PostOfficeImpl``, ``QueueImpl``, ``Redistributor``,
``RemoteQueueBindingImpl``); :mod:`.rules` names the class, test or JIRA
key behind each rule.
"""

from .choice import (
    ChoicePoint,
    Member,
    Target,
    allowed_bindings,
    allowed_consumers,
    allowed_targets,
    check_bits_domain,
    choose_binding,
    choose_consumer,
    choose_from_bits,
    choose_target,
    member_from_bits,
    scan_order,
)
from .commands import (
    COMMAND_TYPES,
    Ack,
    AddNode,
    Attach,
    BalancingCommand,
    Close,
    Commit,
    Configure,
    CreateQueue,
    DeleteQueue,
    Pause,
    QueryQueue,
    Receive,
    Resend,
    Resume,
    Rollback,
    Send,
    SetLink,
    SetPrefix,
    Tick,
    UpdateQueue,
)
from .judge import (
    MAX_BRANCHES,
    Beliefs,
    Mode,
    Verdict,
    allowed_choices,
    allowed_outcomes,
    every_state,
    judge,
    primary,
)
from .model import (
    FIRST_NODE,
    MAX_DELIVERY_ATTEMPTS,
    Forward,
    REDISTRIBUTING,
    AddressBalancing,
    BalancingState,
    Consumer,
    LbType,
    Message,
    PendingSend,
    QueueState,
    Session,
    get_bindings,
    get_group,
    get_routing_names,
    get_settings,
    initial_state,
    invariant_violations,
)
from .operations import TRANSITIONS, apply, apply_choosing, apply_recording
from .step import STRICT, Chooser
from .outcomes import (
    EVENT_TYPES,
    OUTCOME_TYPES,
    BalancingOutcome,
    Delivered,
    Done,
    Dropped,
    Failed,
    Returned,
    Event,
    QueueQueried,
    Redistributed,
    Refusal,
    Refused,
    RoutingStatus,
    Sent,
)
from .rules import RULES, STRUCTURAL

REASON_TYPES: tuple[type, ...] = ()

__all__ = [
    "ChoicePoint", "Member", "Target", "allowed_bindings", "allowed_consumers", "allowed_targets", "check_bits_domain", "choose_binding",
    "choose_consumer", "choose_from_bits", "choose_target", "member_from_bits", "scan_order",
    "COMMAND_TYPES", "AddNode", "Attach", "BalancingCommand", "Close", "Configure", "CreateQueue", "DeleteQueue",
    "Ack", "Commit", "Pause", "QueryQueue", "Receive", "Resend", "Resume", "Rollback", "Send", "SetLink", "SetPrefix", "Tick", "UpdateQueue",
    "MAX_BRANCHES", "Beliefs", "Mode", "Verdict", "allowed_choices", "allowed_outcomes", "judge", "primary", "every_state",
    "FIRST_NODE", "MAX_DELIVERY_ATTEMPTS", "Forward", "REDISTRIBUTING", "AddressBalancing", "BalancingState", "Consumer",
    "LbType", "Message", "PendingSend", "QueueState", "Session", "get_bindings", "get_group", "get_routing_names", "get_settings", "initial_state",
    "invariant_violations",
    "STRICT", "Chooser", "TRANSITIONS", "apply", "apply_choosing", "apply_recording",
    "EVENT_TYPES", "OUTCOME_TYPES", "BalancingOutcome", "Delivered", "Done", "Dropped", "Event", "Failed", "Redistributed", "Returned",
    "QueueQueried", "Refusal", "Refused", "RoutingStatus", "Sent",
    "RULES", "STRUCTURAL", "REASON_TYPES",
]
