"""Sorting more rows than memory should hold: sorted runs spilled to a temporary file, then merged.

Introduction
------------
The one-process audit (:mod:`.single`) needs its rows in an order: a
history's lines together in step order, an address's rows in ``seq``
order, the tables sorted as Spark sorts them. :class:`ExternalSort` takes
rows (tuples) one at a time and gives them back sorted by a key. It holds
at most ``limit`` rows; when it has that many it sorts them and appends
them, as a *run*, to one temporary file (in the system's temporary folder,
``TMPDIR``), in blocks of :data:`BLOCK_ROWS` rows. Reading back merges the
runs (``heapq.merge``), holding one block per run. Whenever :data:`FAN_IN`
runs of one generation pile up they are merged into one run of the next,
so the final merge reads fewer than ``FAN_IN`` runs of each generation
(three generations for a billion rows at the default limit), and what is
held stays within ``limit`` rows plus a block per run read. An input
of at most ``limit`` rows never touches the disk.

The merge is stable: rows with equal keys come back in the order they were
added, exactly as one ``sorted`` of everything would give them.
"""

from __future__ import annotations

import heapq
import itertools
import pickle
import tempfile
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

SPILL_ROWS = 100_000
"""Rows an :class:`ExternalSort` holds before it spills a sorted run."""

BLOCK_ROWS = 256
"""Rows per pickled block of a run: the merge holds one block per run."""

FAN_IN = 64
"""Most runs merged at once; more are first merged, FAN_IN at a time, into longer runs."""

Row = tuple[Any, ...]


class ExternalSort:
    """Rows in, the same rows out sorted by ``key``, with at most ``limit`` rows held while adding."""

    def __init__(self, key: Callable[[Row], Any], limit: int = SPILL_ROWS) -> None:
        self.key = key
        self.limit = max(1, limit)
        self.held: list[Row] = []
        self.file: IO[bytes] | None = None
        self.runs: list[list[int]] = []  # the offsets of each run's blocks, oldest run first
        self.levels: list[int] = []  # how many merges made each run
        self.count = 0

    def add(self, row: Row) -> None:
        """Take one row."""
        self.held.append(row)
        self.count += 1
        if len(self.held) >= self.limit:
            self._spill()

    def extend(self, rows: Iterable[Row]) -> None:
        """Take every row of ``rows``."""
        rows = iter(rows)
        while True:
            room = self.limit - len(self.held)
            taken = len(self.held)
            self.held.extend(itertools.islice(rows, room))
            self.count += len(self.held) - taken
            if len(self.held) < self.limit:
                return
            self._spill()

    @property
    def spilled(self) -> int:
        """How many sorted runs the temporary file holds now."""
        return len(self.runs)

    def _spill(self) -> None:
        self.held.sort(key=self.key)
        self.runs.append(self._write_run(self.held))
        self.levels.append(0)
        self.held = []
        # FAN_IN runs of one level, always the newest, become one run of the next level in their place, so the
        # runs stay in the order their rows came (the merge's stability) and each row is rewritten once a level.
        while len(self.levels) >= FAN_IN and len(set(self.levels[-FAN_IN:])) == 1:
            newest = self.runs[-FAN_IN:]
            merged = self._write_run(heapq.merge(*(self._run(offsets) for offsets in newest), key=self.key))
            level = self.levels[-1] + 1
            del self.runs[-FAN_IN:], self.levels[-FAN_IN:]
            self.runs.append(merged)
            self.levels.append(level)

    def _write_run(self, rows: Iterable[Row]) -> list[int]:
        """Append ``rows`` (sorted) to the temporary file in blocks; the blocks' offsets."""
        if self.file is None:
            self.file = tempfile.TemporaryFile(prefix="brokerspec-audit-")
        rows = iter(rows)
        offsets = []
        while block := list(itertools.islice(rows, BLOCK_ROWS)):
            self.file.seek(0, 2)
            offsets.append(self.file.tell())
            pickle.dump(block, self.file, protocol=pickle.HIGHEST_PROTOCOL)
        return offsets

    def _run(self, offsets: list[int]) -> Iterator[Row]:
        assert self.file is not None
        for offset in offsets:
            self.file.seek(offset)
            block: list[Row] = pickle.load(self.file)
            yield from block

    def __iter__(self) -> Iterator[Row]:
        """Every row taken so far, sorted; may be read more than once until :meth:`close`."""
        self.held.sort(key=self.key)
        if not self.runs:
            return iter(self.held)
        return heapq.merge(*(self._run(offsets) for offsets in self.runs), iter(self.held), key=self.key)

    def close(self) -> None:
        """Drop the rows and the temporary file."""
        self.held = []
        self.runs = []
        self.levels = []
        if self.file is not None:
            self.file.close()
            self.file = None

    def __enter__(self) -> ExternalSort:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
