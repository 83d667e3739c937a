"""A runnable STOMP 1.2 broker over the brokerspec semantics."""
