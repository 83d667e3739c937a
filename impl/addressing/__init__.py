"""Fast address resolution."""

from .broker import FastBroker, split_fqqn
from .lookup import lookup_two

__all__ = ["FastBroker", "lookup_two", "split_fqqn"]
