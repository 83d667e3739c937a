"""The spec operations' PEP 316 contracts hold on every state Hypothesis reaches.

CrossHair cannot build symbolic broker states (maps of dataclasses keyed by
tuples, and the union-typed command alias stops its type resolution), so the
``pre:``/``post:`` lines of the transition functions are evaluated here, at
run time, after every step of random command sequences.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from brokerspec.check.strategies import commands
from brokerspec.spec import PROFILES, get_profile
from brokerspec.spec.addressing import TRANSITIONS, AddressingCommand, initial_state, invariant_violations
from brokerspec.spec.addressing import operations
from depth import scaled


def contract_lines(function: Callable[..., Any], keyword: str) -> list[str]:
    """The expressions after ``keyword:`` in a docstring."""
    doc = inspect.getdoc(function) or ""
    return [line.strip()[len(keyword) + 1:].strip() for line in doc.splitlines()
            if line.strip().startswith(keyword + ":")]


def test_every_transition_is_covered_and_some_have_postconditions() -> None:
    with_posts = [f for f in TRANSITIONS.values() if contract_lines(f, "post")]
    assert len(with_posts) >= 5


@settings(max_examples=scaled(150, 2000), deadline=None)
@given(profile=st.sampled_from(sorted(PROFILES)), script=st.lists(commands(), max_size=30))
def test_postconditions_hold_after_every_step(profile: str, script: list[AddressingCommand]) -> None:
    state = initial_state(get_profile(profile))
    for command in script:
        function = TRANSITIONS[type(command)]
        parameter = list(inspect.signature(function).parameters)[1]
        scope: dict[str, Any] = dict(vars(operations), state=state, **{parameter: command})
        for pre in contract_lines(function, "pre"):
            assert eval(pre, scope), f"precondition {pre!r} failed for {command!r}"  # noqa: S307
        result = function(state, command)
        scope["__return__"] = result
        for post in contract_lines(function, "post"):
            assert eval(post, scope), f"postcondition {post!r} failed for {command!r} on {state!r}"  # noqa: S307
        state = result[0]
        assert invariant_violations(state) == []
