"""Fast load balancing and redistribution: each node's groups kept and changed in place, checked against the spec.

Introduction
------------
:class:`FastBalancingBroker` executes the commands of
:mod:`brokerspec.spec.balancing` with the outcomes of the spec's ``apply``;
:meth:`~FastBalancingBroker.snapshot` renders its state as the spec's and
:meth:`~FastBalancingBroker.check_valid` checks its private indexes. The
records its seams take (:class:`QueueRecord`, :class:`ConsumerRecord`,
:class:`Binding`, :class:`Group`, :class:`Waiting`) and
:class:`BindingChoice`, the scans and rules it chooses with, are exported
for subclasses that override a seam (see :mod:`.broker` and
:mod:`.choice`); :func:`choose_from_bits` is the closed entry point
CrossHair compares with the spec's, and :func:`choose_from_bits_on` the
same through another broker class.
"""

from .broker import FastBalancingBroker
from .choice import BindingChoice, choose_from_bits, choose_from_bits_on
from .records import Binding, ConsumerRecord, Group, QueueRecord, Waiting

__all__ = ["Binding", "BindingChoice", "ConsumerRecord", "FastBalancingBroker", "Group", "QueueRecord", "Waiting",
           "choose_from_bits", "choose_from_bits_on"]
