"""brokerspec's executable specification: the single source of truth.

Pure functions over immutable values, written to be read. Imports nothing
from the reference or the fast implementation. One subpackage per semantic
domain; :mod:`.profiles` bundles every domain's options under one name.
"""

from .errors import BrokerspecError, InvalidCommand, InvalidOption, InvariantBroken, UnknownProfile
from .frozen import FrozenMap
from .outcome import Outcome, Reason, is_query
from .profiles import (
    PROFILES,
    AddressingOptions,
    BalancingOptions,
    ConsumerModel,
    FqqnSend,
    UnroutedStatus,
    DuplicatesOptions,
    InstantAdd,
    NameParsing,
    PrefixMatch,
    Profile,
    QueueNameScope,
    ReloadKeeps,
    ReturnOrder,
    ZeroSizeCache,
    SendCreation,
    get_profile,
)

__all__ = [
    "BrokerspecError", "InvalidCommand", "InvalidOption", "InvariantBroken", "UnknownProfile", "FrozenMap",
    "Outcome", "Reason", "is_query", "PROFILES", "AddressingOptions", "BalancingOptions", "ConsumerModel", "FqqnSend",
    "UnroutedStatus", "DuplicatesOptions", "InstantAdd", "NameParsing", "PrefixMatch", "Profile", "QueueNameScope",
    "ReloadKeeps", "ReturnOrder", "SendCreation", "ZeroSizeCache", "get_profile",
]
