"""Differential checking: drive spec, reference and implementation in lockstep."""
