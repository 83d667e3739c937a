"""Fast address resolution."""

from .broker import FastBroker, split_fqqn
from .lookup import lookup_after

__all__ = ["FastBroker", "lookup_after", "split_fqqn"]
