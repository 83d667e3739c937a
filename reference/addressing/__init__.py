"""Reference address resolution: the address manager and the broker around it."""

from .address_manager import AddressInfo, AddressManager, Binding, BindingKey
from .broker import ReferenceBroker
from .lookup import lookup_two
from .names import split_fqqn

__all__ = ["AddressInfo", "AddressManager", "Binding", "BindingKey", "ReferenceBroker", "lookup_two", "split_fqqn"]
