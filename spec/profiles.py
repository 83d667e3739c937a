"""Profiles: named bundles of every domain's semantic options.

Introduction
------------
A broker's semantics are not one thing: the seed documents describe designs
that were never released, and released Artemis changed its behaviour between
versions. A *profile* names one consistent choice for every option of every
domain, so that a run, a trace or a conformance report says exactly which
semantics it checked. Each domain contributes one frozen options dataclass;
later domains add theirs as further fields of :class:`Profile`.

The bundled profiles:

``seed``
    The designs the seed documents describe. For addressing that is seed 000:
    queue names unique per address, one bare name may be bound on several
    addresses, and a per-name address count makes such a name ambiguous.
    For duplicate detection it is seed 001, a walk through Artemis 2.11.0;
    for load balancing seed 003, also 2.11.0.
    Where the seeds are silent the profile behaves as ``artemis-2.11``.
``artemis-2.11``
    Apache ActiveMQ Artemis 2.11.0 as released.
``artemis-latest``
    Apache ActiveMQ Artemis as released most recently (2.44.0).

Older behaviours are options rather than bundles: for example
``--set duplicates.reload_keeps=OLDEST`` gives the reload of Artemis before
1.3.0 (ARTEMIS-332), and ``--set duplicates.nontx_add=AFTER_STORE`` the
visibility of non-transactional IDs before 2.8.0 (ARTEMIS-2324).

A profile can be varied one option at a time with :meth:`Profile.with_option`
(the command line's ``--set domain.option=value``); the variant keeps the base
name and records its overrides, and its :attr:`Profile.label` shows both, so
reports stay honest about what ran.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from .errors import InvalidOption, UnknownProfile


class QueueNameScope(Enum):
    """Where a queue name must be unique.

    ADDRESS: seed 000 (names unique per address; the same bare name may be
    bound on several addresses). BROKER: released Artemis (one queue of a
    given name in the whole broker; ``address-model`` manual, ARTEMIS-3657).
    """

    ADDRESS = "ADDRESS"
    BROKER = "BROKER"


class NameParsing(Enum):
    """How the management create operations read the names they are given (rules ADDR-NAME-*, ADDR-CREATE-FQQN)."""

    STRICT = "STRICT"
    """Seed 000: an empty name or one holding ``::`` is refused."""
    SPLIT = "SPLIT"
    """Artemis 2.11: the address argument keeps its address part, the queue argument its queue part
    (``AddressInfo``'s constructor, ``ActiveMQServerImpl.createQueue``); an empty address is accepted."""
    QUEUE_CONFIGURATION = "QUEUE_CONFIGURATION"
    """Artemis 2.12 on (``QueueConfiguration``, ARTEMIS-2692): as SPLIT, but an FQQN given as the
    address names the queue too (``setAddress`` after ``setName``)."""


class SendCreation(Enum):
    """What a send may create on the way (rules ADDR-SEND-*, ADDR-AUTO-*)."""

    ON_SEND = "ON_SEND"
    """The seed model: a typed send runs ``checkAutoCreate`` for what it names, FQQN queue included."""
    NEVER = "NEVER"
    """A core producer before 2.28.0: nothing is created and nothing refused; the message is routed to what
    exists (``ServerSessionImpl.doSend`` has no auto-creation)."""
    ROUTING_TIME = "ROUTING_TIME"
    """A core producer from 2.28.0 (ARTEMIS-4089): ``PostOfficeImpl.checkAddress`` and ``simpleRoute`` run
    ``checkAutoCreate`` for the address (never for an FQQN's queue part) when it is missing or has no queue."""


class ConsumerModel(Enum):
    """Which client a consume is (rules ADDR-CONSUME-*)."""

    RESOLVE = "RESOLVE"
    """The seed model: the name resolves as a lookup does; a missing queue is auto-created."""
    JMS = "JMS"
    """Artemis's core JMS client: an address query decides whether to create the queue, then the core
    consumer attaches by ``getBinding`` (``ActiveMQSession.createConsumer``, ``AutoCreateUtil``)."""
    CORE = "CORE"
    """Artemis's core client (``ClientSession.createConsumer``): ``ServerSessionImpl.createConsumer`` attaches
    by ``getBinding``, which reads an FQQN's queue part only, and creates nothing (rule ADDR-CONSUME-CORE)."""


class PrefixMatch(Enum):
    """Which acceptor prefix is stripped when several match (rule ADDR-PREFIX-STRIP)."""

    LONGEST = "LONGEST"
    """A brokerspec decision: the longest matching prefix; an empty prefix is refused."""
    HASH_MAP = "HASH_MAP"
    """Artemis: the first match in the acceptor's ``HashMap`` iteration order (``PrefixUtil.getAddress``);
    an empty prefix is accepted and matches every name."""


@dataclass(frozen=True)
class AddressingOptions:
    """The semantic options of the address-resolution domain.

    ``name_scope``
        Where queue names are unique (rule ADDR-QUEUE-EXISTS).
    ``fqqn_checks_address``
        Whether a lookup or delete by FQQN checks the address part, and so
        the seed's resolving consumer (rule ADDR-LOOKUP-FQQN). True: seed
        000's binding key. False: Artemis, whose ``queueQuery`` and
        ``getBinding`` discard the address part (``SimpleAddressManager.getBinding``).
    ``lookup_reports_query_name``
        Whether a lookup reports the name it looked up (the query's queue
        part) rather than the queue's own name, and a miss that part rather
        than the one ``getBinding`` looked for: they differ only for names
        with two ``::`` (2.11's ``queueQuery``; 2.40.0 builds its answer from
        ``QueueConfiguration``, which parses the name again, ARTEMIS-5302).
    ``name_parsing``
        How the management create operations read names (:class:`NameParsing`).
    ``send_creation``
        What a send may auto-create (:class:`SendCreation`).
    ``consumer``
        Which client a consume is (:class:`ConsumerModel`).
    ``prefix_match``
        Which prefix wins when several match (:class:`PrefixMatch`).
    ``anycast_consume_rejects_multicast_queue``
        Whether a non-FQQN ANYCAST consumer is refused on an existing
        MULTICAST queue of the same name (ARTEMIS-4512, fixed in 2.32.0).
    ``send_reuses_existing_queue``
        Whether an ANYCAST send to an address that already has a queue
        reuses it instead of auto-creating a queue named like the address
        (ARTEMIS-2966, fixed in 2.16.0).
    ``delete_queue_removes_auto_created_address``
        Whether deleting the last queue of an auto-created address deletes
        the address too, whatever ``auto-delete-addresses`` says: a core
        session's ``deleteQueue`` forces it from 2.20.0 (ARTEMIS-3541,
        ``ServerSessionImpl.deleteQueue`` passes ``forceAutoDeleteAddress``).
    """

    name_scope: QueueNameScope = QueueNameScope.BROKER
    fqqn_checks_address: bool = False
    lookup_reports_query_name: bool = False
    name_parsing: NameParsing = NameParsing.QUEUE_CONFIGURATION
    send_creation: SendCreation = SendCreation.ROUTING_TIME
    consumer: ConsumerModel = ConsumerModel.JMS
    prefix_match: PrefixMatch = PrefixMatch.HASH_MAP
    anycast_consume_rejects_multicast_queue: bool = True
    send_reuses_existing_queue: bool = True
    delete_queue_removes_auto_created_address: bool = True


class InstantAdd(Enum):
    """When an ID recorded by an *instant add* enters the cache (DUP-NONTX-VISIBILITY, DUP-BRIDGE-DUPLICATE).

    Instant adds are the broker's own transactions (a non-transactional
    send, DUP-NONTX-VISIBILITY) and bridge IDs (DUP-BRIDGE-DUPLICATE).
    """

    AFTER_STORE = "AFTER_STORE"
    """Once the transaction's commit is stored (non-transactional sends up to 2.7)."""
    BEFORE_COMMIT = "BEFORE_COMMIT"
    """In the transaction's beforeCommit (2.8.0-2.17.x, ARTEMIS-2324; 2.11.0)."""
    IMMEDIATE = "IMMEDIATE"
    """During the check, and removed again if the transaction rolls back (2.18.0 on, ARTEMIS-3384)."""


class ReloadKeeps(Enum):
    """Which IDs survive a reload into a cache smaller than the stored list (DUP-RESTART-RELOAD)."""

    NEWEST = "NEWEST"
    """Drop the oldest: Artemis 1.3.0 and later (ARTEMIS-332)."""
    OLDEST = "OLDEST"
    """Keep the first ``size`` IDs and delete the newer ones: before Artemis 1.3.0."""


class ZeroSizeCache(Enum):
    """What a cache of ``id-cache-size`` 0 does (DUP-SIZE-ZERO)."""

    DISABLED = "DISABLED"
    """Detection is off for it: nothing found, nothing recorded, and a reload into it deletes the stored IDs.
    The spec's choice for releases before 2.28.0, where a cache of size 0 failed with an
    ArrayIndexOutOfBoundsException (ARTEMIS-4115)."""
    NO_OP = "NO_OP"
    """2.28.0 on (ARTEMIS-4115): ``NoOpDuplicateIDCache``. A normal ID is never found or recorded; a bridge ID is
    always reported as a duplicate (its ``atomicVerify`` answers false), so every bridged message is dropped; and
    a reload into it loads nothing and deletes nothing, so the stored IDs come back at a later restart with a
    size above 0."""


class ReturnOrder(Enum):
    """Where a message a transaction received goes back to when it rolls back (or is lost at a restart).

    Queues deliver in arrival order either way: a message reaches a queue
    when it is sent, or when its transaction commits, and waits behind every
    message that reached the queue before it (``QueueImpl.addTail``).
    """

    HEAD = "HEAD"
    """Back at the head of the queue, in the order they were taken: 2.11 (``RefsOperation.afterRollback``
    builds each queue's list with ``addFirst`` and ``QueueImpl.addHead`` puts each at the head)."""
    ARRIVAL = "ARRIVAL"
    """Back in their place in the queue's arrival order: 2.32.0 on (ARTEMIS-4517, ``QueueImpl.addSorted`` with
    ``MessageReferenceImpl.getSequenceComparator``, a per-queue sequence). Between 2.18.0 (ARTEMIS-3093) and
    2.31 the place was chosen by message ID instead, which no bundled profile models."""


@dataclass(frozen=True)
class DuplicatesOptions:
    """The semantic options of the duplicate-detection domain.

    ``id_cache_size``
        The global ``id-cache-size``: slots per cache (DUP-SIZE-FIXED, default 20000).
        0 disables detection (DUP-SIZE-ZERO). At most 2,147,483,647 (:data:`INT_OPTION_MAX`).
    ``persist_id_cache``
        Whether accepted IDs are written to the store and reloaded at a
        restart (DUP-RESTART-NO-PERSIST, default true).
    ``nontx_add``
        When a non-transactional send's ID enters the cache (DUP-NONTX-VISIBILITY).
    ``bridge_add``
        When a bridge ID enters the bridge cache (DUP-BRIDGE-DUPLICATE).
    ``reload_keeps``
        Which IDs a reload keeps when more are stored than the cache holds (DUP-RESTART-RELOAD).
    ``per_address_size``
        Whether ``address-settings/id-cache-size`` exists (2.31.0 on,
        ARTEMIS-4159); without it ``set_id_cache_size`` is not supported.
    ``return_order``
        Where a rolled-back receive's message goes back to (:class:`ReturnOrder`).
    ``zero_size_cache``
        What a cache of size 0 does (:class:`ZeroSizeCache`).
    ``send_auto_create``
        Whether an auto-creating send (an ANYCAST core send to an address whose
        settings have ``auto-create-queues`` on) makes a queue named like its
        address when the address has none, after the duplicate check
        (DUP-AUTO-CREATE: ``PostOfficeImpl.simpleRoute`` runs
        ``ServerSessionImpl.checkAutoCreate`` from 2.28.0, ARTEMIS-4089; before,
        such a send is NO_BINDINGS). On one broker the later change of
        ARTEMIS-4450 (remote bindings no longer count) makes no difference.
    """

    id_cache_size: int = 20000
    persist_id_cache: bool = True
    nontx_add: InstantAdd = InstantAdd.IMMEDIATE
    bridge_add: InstantAdd = InstantAdd.IMMEDIATE
    reload_keeps: ReloadKeeps = ReloadKeeps.NEWEST
    per_address_size: bool = True
    return_order: ReturnOrder = ReturnOrder.ARRIVAL
    zero_size_cache: ZeroSizeCache = ZeroSizeCache.NO_OP
    send_auto_create: bool = True


class FqqnSend(Enum):
    """How a message sent to ``address::queue`` is routed (no seed speaks of it; ``BindingsImpl.route``)."""

    LOCAL_UNFILTERED = "LOCAL_UNFILTERED"
    """Straight to the local queue of that name, its filter not checked, no load balancing (2.7.0-2.34.x, ARTEMIS-1867)."""
    LOCAL = "LOCAL"
    """As LOCAL_UNFILTERED, but the queue's filter must match (2.35.0-2.42.x, ARTEMIS-4795)."""
    BALANCED = "BALANCED"
    """Ordinary load balancing among the local and remote queues of that name (2.43.0 on, ARTEMIS-5597)."""


class WildcardMatching(Enum):
    """How a wildcard address is matched against a plain one (rule LB-WILDCARD-MATCH).

    Both read an any-words wildcard as zero or more words and a single-word
    wildcard as exactly one, each only as a whole word.
    """

    TREE = "TREE"
    """Every way of filling the any-words wildcards is tried (``AddressMap``/``AddressPartNode``, 2.17.0 on,
    ARTEMIS-3033): ``#.b`` matches ``b.b``."""
    LINKED = "LINKED"
    """An any-words wildcard followed by more words jumps to the *first* later word equal to the next pattern
    word and never reconsiders (``AddressImpl.matches`` before 2.17.0): ``#.b`` does not match ``b.b``."""


class SendAutoCreate(Enum):
    """When a core send of an ANYCAST message makes the sending node a queue named like the address (LB-AUTO-CREATE).

    The check is ``ServerSessionImpl.checkAutoCreate``, run by ``PostOfficeImpl.simpleRoute``; an address
    setting ``auto-create-queues`` off turns the creation into a refusal (AMQ229203).
    """

    NEVER = "NEVER"
    """Before 2.28.0: a core send routes to what exists and never creates or refuses (``ServerSessionImpl.doSend``)."""
    WITHOUT_BINDINGS = "WITHOUT_BINDINGS"
    """2.28.0-2.31.0 (ARTEMIS-4089): only when the address has no bindings at all on that node, remote ones
    included."""
    WITHOUT_LOCAL_BINDING = "WITHOUT_LOCAL_BINDING"
    """2.31.1 on (ARTEMIS-4450): whenever the node has no local queue of the address, so a send is never balanced
    onto remote queues alone."""


class UnroutedStatus(Enum):
    """The send status when the address has bindings but none accepted the message (LB-UNROUTED-STATUS)."""

    NO_BINDINGS = "NO_BINDINGS"
    """Up to 2.27.x, and again after 2.44.0 (ARTEMIS-4911)."""
    OK = "OK"
    """2.28.0-2.44.0 (ARTEMIS-4089): bindings exist, so the send counts as routed."""


@dataclass(frozen=True)
class BalancingOptions:
    """The semantic options of the load-balancing and redistribution domain.

    ``off_with_redistribution``
        Whether the type OFF_WITH_REDISTRIBUTION exists (2.19.0 on,
        ARTEMIS-1925, with the 2.20.0 fix that makes its first routing
        behave like OFF).
    ``off_forwards_multicast``
        Whether OFF lets a message whose routing type is MULTICAST reach
        remote bindings (2.29.0 on, ARTEMIS-4196). OFF_WITH_REDISTRIBUTION
        always does (2.21.0, ARTEMIS-3608).
    ``fqqn_send``
        How a send to ``address::queue`` is routed (LB-FQQN-LOCAL, LB-ELIGIBLE; ARTEMIS-1867,
        ARTEMIS-4795, ARTEMIS-5597).
    ``fqqn_redistribution_group``
        Whether a message sent to an FQQN and held by an ANYCAST queue is
        redistributed within the group of the FQQN's address rather than
        the queue's name (2.25.0 on, ARTEMIS-3918).
    ``unrouted_status``
        The status of a send that no queue accepted although the address
        has bindings (LB-UNROUTED-STATUS).
    ``redistribute_unmatched``
        Whether a queue that has consumers gets a redistributor when it
        holds a message none of their filters matches (2.19.0 on,
        ARTEMIS-2007; before, only a queue without consumers gets one).
    ``copy_before_target``
        Whether the redistributed copy, and so its new message ID, is made
        before a target is looked for, so a failed attempt uses up an ID
        (before 2.29.0; seed 003's ``PostOfficeImpl.redistribute``); from
        2.29.0 only once a target is found (ARTEMIS-4207).
    ``new_queue_redistributes``
        Whether a queue created while a connected remote queue of its
        address has consumers gets a redistributor (the ``BINDING_ADDED``
        trigger of ``PostOfficeImpl.onNotification``, 2.20.0 on: commit
        7d129b36e9 with the follow-up of ARTEMIS-1925, tested by
        ``MessageRedistributionTest.testRedistributionToRemoteConsumerFromNewQueueLbOffWithRedistribution``).
        2.11.0 only records the queue; found against Artemis 2.11.0.
    ``queue_enabled``
        Whether a queue has the ``enabled`` attribute (2.14.0 on; ``QueueImpl.route`` then drops what a
        disabled queue is chosen for, rule LB-QUEUE-ENABLED). Without it a queue cannot be made or
        updated disabled: such an operation is refused ``NOT_SUPPORTED``.
    ``wildcard_routing``
        Whether queues bound to a wildcard address receive what is sent to every plain address it matches
        (``wildcard-addresses/routing-enabled``, default true: ``PostOfficeImpl`` then uses the
        ``WildcardAddressManager``; rule LB-WILDCARD-BINDINGS).
    ``wildcard_delimiter``, ``wildcard_any_words``, ``wildcard_single_word``
        The wildcard syntax, one character each (``wildcard-addresses/delimiter``, ``any-words``,
        ``single-word``; defaults ``.``, ``#``, ``*``; ``WildcardConfiguration``).
    ``wildcard_matching``
        How a wildcard address matches a plain one (:class:`WildcardMatching`).
    ``fqqn_consumer_redistributes``
        Whether a consumer attached by ``address::queue`` makes every other node look its queue up by the
        FQQN's queue part, rather than by the routing name, when it hears of the consumer, and so give its
        own queue of that name a redistributor (2.25.0 on, ARTEMIS-3918: the FQQN is the notification's
        ``HDR_ADDRESS``; ``PostOfficeImpl.onNotification``; rule RD-TRIGGER-FQQN-CONSUMER).
    ``update_clears_filter``
        Whether ``update_queue`` clears the queue's filter: from 2.14.0 the management ``updateQueue`` takes a
        whole queue configuration, and one that gives no filter replaces the queue's with none
        (``PostOfficeImpl.updateQueue``, ARTEMIS-2797; the other nodes' bindings follow from 2.32.0,
        ARTEMIS-4570, which the bundled profiles both have). Before, the filter stays. Found fuzzing Artemis
        2.40.0 (rule LB-UPDATE-FILTER).
    ``prefix_keeps_fqqn``
        Whether a send to ``<prefix>address::queue`` still goes to the FQQN's queue (before 2.19.0: the
        routing context takes the address without the prefix, the message keeps its FQQN). From 2.19.0
        the prefix is stripped from the message's address itself, by way of an ``AddressInfo`` that has
        already dropped the queue part, so the message is routed to the address like any other
        (ARTEMIS-1612; ``ServerSessionImpl.doSend``; rule LB-PREFIX).
    ``redistribute_by_message_address``
        Whether a redistributor looks for targets among the bindings of the message's address (2.19.0 on,
        ARTEMIS-3223) rather than of its queue's address, which for a queue on a wildcard address is the
        wildcard itself (rule RD-WILDCARD).
    ``send_auto_create``
        When an ANYCAST send makes, or is refused for want of, a local queue (:class:`SendAutoCreate`,
        rule LB-AUTO-CREATE).
    ``close_return_order``
        Where the messages a closing consumer held unacknowledged go back to in its queue
        (:class:`ReturnOrder`, rule LB-CLOSE-RETURNS): before every waiting message, in delivery order (2.11:
        ``addHead``; the consumer is removed and the queue purged before they return, and
        ``QueueImpl.postRollback`` purges them too), or among the waiting ones in arrival order (2.32.0 on,
        ARTEMIS-4517; the consumer is removed after they return from 2.31.0, ARTEMIS-4410). A rollback, and a
        failed acknowledgement, give messages back in the same order (LB-TX-ROLLBACK, LB-ACK). In this domain a message reaches a queue in the order of
        its ID, so the message-ID order of 2.18.0-2.31.x (ARTEMIS-3093) is the same as arrival order here.
    """

    off_with_redistribution: bool = True
    off_forwards_multicast: bool = True
    fqqn_send: FqqnSend = FqqnSend.BALANCED
    fqqn_redistribution_group: bool = True
    unrouted_status: UnroutedStatus = UnroutedStatus.OK
    redistribute_unmatched: bool = True
    copy_before_target: bool = False
    new_queue_redistributes: bool = True
    queue_enabled: bool = True
    wildcard_routing: bool = True
    wildcard_delimiter: str = "."
    wildcard_any_words: str = "#"
    wildcard_single_word: str = "*"
    wildcard_matching: WildcardMatching = WildcardMatching.TREE
    redistribute_by_message_address: bool = True
    fqqn_consumer_redistributes: bool = True
    prefix_keeps_fqqn: bool = False
    update_clears_filter: bool = True
    send_auto_create: SendAutoCreate = SendAutoCreate.WITHOUT_LOCAL_BINDING
    close_return_order: ReturnOrder = ReturnOrder.ARRIVAL

    def __post_init__(self) -> None:
        syntax = (self.wildcard_delimiter, self.wildcard_any_words, self.wildcard_single_word)
        if len(set(syntax)) != 3:
            raise InvalidOption("balancing.wildcard_delimiter, wildcard_any_words and wildcard_single_word must be "
                                f"three different characters, not {syntax!r}")


@dataclass(frozen=True)
class Profile:
    """One named bundle of semantic options for every domain."""

    name: str
    description: str
    addressing: AddressingOptions = field(default_factory=AddressingOptions)
    duplicates: DuplicatesOptions = field(default_factory=DuplicatesOptions)
    balancing: BalancingOptions = field(default_factory=BalancingOptions)
    overrides: tuple[tuple[str, str], ...] = ()

    @property
    def label(self) -> str:
        """The name with any overrides appended, e.g. ``artemis-latest+addressing.fqqn_checks_address=true``."""
        return self.name + "".join(f"+{dotted}={value}" for dotted, value in self.overrides)

    def options(self) -> dict[str, dict[str, Any]]:
        """Every option as plain data, keyed by domain then option name."""
        return {
            domain.name: {
                option.name: _plain(getattr(getattr(self, domain.name), option.name))
                for option in dataclasses.fields(getattr(self, domain.name))
            }
            for domain in _domains()
        }

    def with_option(self, dotted: str, value: str) -> Profile:
        """Return this profile with one option changed, e.g. ``addressing.name_scope=ADDRESS``.

        Raises :class:`InvalidOption` naming the option or value when either is unknown.
        """
        domain_name, _, option_name = dotted.partition(".")
        domain_fields = {f.name: f for f in _domains()}
        if domain_name not in domain_fields:
            raise InvalidOption(
                f"unknown option domain {domain_name!r} in {dotted!r}; domains: {', '.join(domain_fields)}"
            )
        options = getattr(self, domain_name)
        option_fields = {f.name: f for f in dataclasses.fields(options)}
        if option_name not in option_fields:
            raise InvalidOption(
                f"unknown option {option_name!r} in {dotted!r}; {domain_name} options: {', '.join(option_fields)}"
            )
        current = getattr(options, option_name)
        parsed = _parse_option_value(dotted, value, current)
        changed = dataclasses.replace(options, **{option_name: parsed})
        overrides = (*self.overrides, (dotted, value))
        return dataclasses.replace(self, overrides=overrides, **{domain_name: changed})


def _domains() -> tuple[dataclasses.Field[Any], ...]:
    return tuple(f for f in dataclasses.fields(Profile) if f.name not in ("name", "description", "overrides"))


def _plain(value: object) -> object:
    return value.value if isinstance(value, Enum) else value


INT_OPTION_MAX = 2**31 - 1
"""The largest value of a whole-number option: Artemis reads them as Java ``int`` (``id-cache-size`` is an
``xsd:int`` in ``artemis-configuration.xsd``), so a larger one is no configuration a broker can have."""


def _parse_option_value(dotted: str, text: str, current: object) -> object:
    if isinstance(current, bool):
        lowered = text.strip().lower()
        if lowered in ("true", "1", "yes", "on"):
            return True
        if lowered in ("false", "0", "no", "off"):
            return False
        raise InvalidOption(f"option {dotted} takes true or false, not {text!r}")
    if isinstance(current, Enum):
        enum_type = type(current)
        for member in enum_type:
            if member.value == text or member.name == text.upper():
                return member
        choices = ", ".join(m.value for m in enum_type)
        raise InvalidOption(f"option {dotted} takes one of {choices}, not {text!r}")
    if isinstance(current, int):
        digits = text.strip()
        if digits.startswith("-") and digits[1:].isascii() and digits[1:].isdigit():
            raise InvalidOption(f"option {dotted} takes a number of 0 or more, not {text!r}")
        # ASCII digits only: int() would also take "1_0" and other scripts' digits.
        if not (digits.isascii() and digits.isdigit()):
            raise InvalidOption(f"option {dotted} takes a whole number written in the digits 0-9, not {text!r}")
        if len(digits) > len(str(INT_OPTION_MAX)) or int(digits) > INT_OPTION_MAX:
            raise InvalidOption(f"option {dotted} takes a number of at most {INT_OPTION_MAX:,}, not {text!r}")
        return int(digits)
    if isinstance(current, str):
        if len(text) != 1 or text.isspace() or text == ":":
            raise InvalidOption(f"option {dotted} takes one character other than a space or ':', not {text!r}")
        return text
    raise InvalidOption(f"option {dotted} cannot be set from text")  # pragma: no cover - every option is bool, Enum, int or str


SEED = Profile(
    name="seed",
    description="the designs the seed documents describe (seed 000: per-address queue names, ambiguity detection; "
                "seed 001: duplicate detection as in 2.11; seed 003: load balancing as in 2.11)",
    addressing=AddressingOptions(
        name_scope=QueueNameScope.ADDRESS,
        fqqn_checks_address=True,
        name_parsing=NameParsing.STRICT,
        send_creation=SendCreation.ON_SEND,
        consumer=ConsumerModel.RESOLVE,
        prefix_match=PrefixMatch.LONGEST,
        anycast_consume_rejects_multicast_queue=False,
        send_reuses_existing_queue=False,
        delete_queue_removes_auto_created_address=False,
    ),
    duplicates=DuplicatesOptions(
        nontx_add=InstantAdd.BEFORE_COMMIT,
        bridge_add=InstantAdd.BEFORE_COMMIT,
        per_address_size=False,
        return_order=ReturnOrder.HEAD,
        zero_size_cache=ZeroSizeCache.DISABLED,
        send_auto_create=False,
    ),
    balancing=BalancingOptions(
        off_with_redistribution=False,
        off_forwards_multicast=False,
        fqqn_send=FqqnSend.LOCAL_UNFILTERED,
        fqqn_redistribution_group=False,
        unrouted_status=UnroutedStatus.NO_BINDINGS,
        redistribute_unmatched=False,
        copy_before_target=True,
        new_queue_redistributes=False,
        queue_enabled=False,
        wildcard_matching=WildcardMatching.LINKED,
        redistribute_by_message_address=False,
        fqqn_consumer_redistributes=False,
        prefix_keeps_fqqn=True,
        update_clears_filter=False,
        send_auto_create=SendAutoCreate.NEVER,
        close_return_order=ReturnOrder.HEAD,
    ),
)

ARTEMIS_2_11 = Profile(
    name="artemis-2.11",
    description="Apache ActiveMQ Artemis 2.11.0 as released",
    addressing=AddressingOptions(
        name_scope=QueueNameScope.BROKER,
        fqqn_checks_address=False,
        lookup_reports_query_name=True,
        name_parsing=NameParsing.SPLIT,
        send_creation=SendCreation.NEVER,
        consumer=ConsumerModel.JMS,
        prefix_match=PrefixMatch.HASH_MAP,
        anycast_consume_rejects_multicast_queue=False,
        send_reuses_existing_queue=False,
        delete_queue_removes_auto_created_address=False,
    ),
    duplicates=DuplicatesOptions(
        nontx_add=InstantAdd.BEFORE_COMMIT,
        bridge_add=InstantAdd.BEFORE_COMMIT,
        per_address_size=False,
        return_order=ReturnOrder.HEAD,
        zero_size_cache=ZeroSizeCache.DISABLED,
        send_auto_create=False,
    ),
    balancing=BalancingOptions(
        off_with_redistribution=False,
        off_forwards_multicast=False,
        fqqn_send=FqqnSend.LOCAL_UNFILTERED,
        fqqn_redistribution_group=False,
        unrouted_status=UnroutedStatus.NO_BINDINGS,
        redistribute_unmatched=False,
        copy_before_target=True,
        new_queue_redistributes=False,
        queue_enabled=False,
        wildcard_matching=WildcardMatching.LINKED,
        redistribute_by_message_address=False,
        fqqn_consumer_redistributes=False,
        prefix_keeps_fqqn=True,
        update_clears_filter=False,
        send_auto_create=SendAutoCreate.NEVER,
        close_return_order=ReturnOrder.HEAD,
    ),
)

ARTEMIS_LATEST = Profile(
    name="artemis-latest",
    description="Apache ActiveMQ Artemis as most recently released (2.44.0)",
    addressing=AddressingOptions(),
    duplicates=DuplicatesOptions(
        nontx_add=InstantAdd.IMMEDIATE,
        bridge_add=InstantAdd.IMMEDIATE,
        per_address_size=True,
    ),
    balancing=BalancingOptions(),
)

PROFILES: dict[str, Profile] = {p.name: p for p in (SEED, ARTEMIS_2_11, ARTEMIS_LATEST)}


def get_profile(name: str, overrides: tuple[tuple[str, str], ...] = ()) -> Profile:
    """Return the registered profile ``name`` with ``overrides`` (option, value) applied.

    >>> get_profile("seed").addressing.name_scope
    <QueueNameScope.ADDRESS: 'ADDRESS'>
    >>> get_profile("artemis-latest", (("addressing.fqqn_checks_address", "true"),)).label
    'artemis-latest+addressing.fqqn_checks_address=true'
    """
    if name not in PROFILES:
        raise UnknownProfile(name, tuple(PROFILES))
    profile = PROFILES[name]
    for dotted, value in overrides:
        profile = profile.with_option(dotted, value)
    return profile
