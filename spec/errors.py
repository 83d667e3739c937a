"""The one small tree of exceptions.

Introduction
------------
Semantic results (a missing queue, an ambiguous name, a rejected create) are
ordinary outcome *values*, never exceptions. Exceptions are for misuse only:
a command built from bad input, an unknown profile or option. Every message
names the offending value so the caller can find it.
"""

from __future__ import annotations


class BrokerspecError(Exception):
    """Root of every exception brokerspec raises on purpose."""


class UnknownProfile(BrokerspecError):
    """A profile name that is not registered."""

    def __init__(self, name: str, known: tuple[str, ...]) -> None:
        super().__init__(f"unknown profile {name!r}; known profiles: {', '.join(known)}")
        self.name = name
        self.known = known


class InvalidOption(BrokerspecError):
    """A profile option override that names no option or has a bad value."""


class InvalidCommand(BrokerspecError):
    """A command or trace step that cannot be built from the input given; ``field`` names the bad field if known."""

    def __init__(self, message: str, field: str = "") -> None:
        super().__init__(message)
        self.field = field


class InvariantBroken(BrokerspecError):
    """An implementation's private invariant does not hold (raised by ``check_valid``)."""
