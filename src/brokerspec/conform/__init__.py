"""Pointing brokerspec at any broker: the SUT protocol, its adapters, the conformance catalogue and the fuzzer.

Introduction
------------
A *system under test* (SUT) is any program that speaks the line protocol of
:mod:`.protocol` (``docs/sut-protocol.md``): one JSON request per line on its
standard input, one JSON reply per line on its standard output. :mod:`.sut`
holds the adapters: in process (the reference, the fast implementation, the
spec itself, a planted-bug broker) and subprocess (a program in any language),
each one a checker *subject*, so the lockstep driver that checks brokerspec's
own layers checks a SUT the same way, outcome by outcome.
"""
