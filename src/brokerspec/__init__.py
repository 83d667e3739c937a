"""brokerspec: an executable specification of message-broker semantics."""

__version__ = "0.1.0"
