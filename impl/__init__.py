"""The fast implementation: indexed, incremental, checked against the spec."""
