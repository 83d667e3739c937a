"""The duplicate-detection fuzzer reaches caches larger than its tiny default ones (issue: "caches larger than the
handful of slots used now").

The mistake planted here is a ring cursor that wraps after four slots whatever the cache's size: it only shows
in a cache of five slots or more, which the tiny alphabet (sizes 0 to 3) never builds.
"""

from __future__ import annotations

from pathlib import Path

from brokerspec.check.domains import DUPLICATES
from brokerspec.check.runner import check_for, run_machine
from brokerspec.impl.duplicates import FastDuplicatesBroker
from brokerspec.impl.duplicates.cache import IdCache
from brokerspec.spec import get_profile
from brokerspec.spec.duplicates import DuplicateId, IdKind, Restart, Send, apply, initial_state


class CursorWrapsAtFour(FastDuplicatesBroker):
    """Writes each ID as the real ring does, then moves the cursor back to slot 0 after slot 3."""

    def _record(self, cache: IdCache, key: bytes, owner: str) -> None:
        super()._record(cache, key, owner)
        if cache.size > 4 and cache.position == 4:
            cache.position = 0


def last_outcome_types(size: int, broker_class: type[FastDuplicatesBroker]) -> tuple[str, str]:
    """Fill a cache of ``size`` slots one past full, resend the second ID: the spec's and the broker's outcome."""
    profile = get_profile("artemis-latest")
    ids = [DuplicateId(IdKind.STRING, f"n{number}") for number in range(size + 1)]
    script = [Restart(size)] + [Send("s1", "a1", i) for i in ids] + [Send("s1", "a1", ids[1])]
    state, broker = initial_state(profile), broker_class(profile)
    try:
        for command in script:
            state, expected = apply(state, command)
            observed = broker.execute(command)
    finally:
        broker.close()
    return repr(expected), repr(observed)


def test_the_planted_wrap_is_a_real_mistake_only_above_four_slots() -> None:
    for size in (2, 3, 4):
        spec, planted = last_outcome_types(size, CursorWrapsAtFour)
        assert spec == planted, f"the planted mistake shows at {size} slots, where the tiny alphabet reaches it"
    spec, planted = last_outcome_types(5, CursorWrapsAtFour)
    assert spec != planted, "at 5 slots the second ID is still held by a correct ring and evicted by this one"
    assert last_outcome_types(5, FastDuplicatesBroker) == (spec, spec)


def test_tiny_batches_cannot_see_it_and_the_wide_ones_do(tmp_path: Path) -> None:
    profile = get_profile("artemis-latest")
    layers = {"planted": CursorWrapsAtFour}
    assert run_machine(profile, layers, 150, 3, domain=DUPLICATES) is None, "a tiny cache showed the wrap"
    result = check_for(profile, layers, 60.0, tmp_path, 3, domain=DUPLICATES)
    assert result.divergence is not None, "no wide batch built a cache of five or more slots and wrapped it"
    sent = {c.duplicate_id for c in result.divergence.commands if isinstance(c, Send) and c.duplicate_id}
    assert len(sent) >= 4, "the cursor only parts from the ring's after four IDs"
