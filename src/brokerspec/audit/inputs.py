"""Finding the audit's input files and checking, before any work starts, that brokerspec can read them.

Introduction
------------
``brokerspec audit INPUT`` takes a file or a folder. A folder is searched
recursively for ``*.jsonl`` and ``*.parquet`` files (Spark's part files
included); anything else in it is named in the error, since silently
skipping a file would leave rows unaudited. Every file is then opened just
far enough to learn its kind and format version: the first non-blank line
of a JSON-lines file, the schema and the ``v`` column statistics of a
Parquet file. An unknown version stops the audit with an error naming the
file, before Spark starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from brokerspec.spec import BrokerspecError

from .. import jsonin
from ..trace import SCHEMA_VERSION
from .streams import STREAM_FIELDS, STREAM_VERSION

HISTORIES = "histories"
STREAMS = "streams"
MODES = (HISTORIES, STREAMS)
SORTED_KEY = b"brokerspec.sorted_by"


class InputError(BrokerspecError):
    """An input the audit cannot start on, naming the file."""


@dataclass(frozen=True)
class AuditInput:
    """The files to audit, their format, their kind and how many rows Parquet files hold."""

    root: Path
    files: tuple[Path, ...]
    format: str  # "jsonl" or "parquet"
    mode: str  # HISTORIES or STREAMS
    parquet_rows: int = 0
    presorted: bool = False


def find_files(root: Path) -> tuple[tuple[Path, ...], str]:
    """The input files under ``root`` and their common format."""
    if not root.exists():
        raise InputError(f"{root}: no such file or folder")
    if root.is_file():
        files = [root]
    else:
        if (root / "data").is_dir() and (root / "faults.jsonl").is_file():
            raise InputError(f"{root}: this is a brokerspec generate output folder, not its data; audit "
                             f"{root / 'data'} (and give --expect {root / 'faults.jsonl'} to check the planted "
                             f"faults)")
        files = sorted(p for p in root.rglob("*") if p.is_file() and not _is_spark_marker(p))
        if not files:
            raise InputError(f"{root}: the folder holds no input files")
    formats = {_format_of(p) for p in files}
    if len(formats) > 1:
        raise InputError(f"{root}: mixes JSON-lines and Parquet files; audit one format at a time")
    return tuple(files), formats.pop()


def _is_spark_marker(path: Path) -> bool:
    return path.name.startswith((".", "_")) or path.suffix == ".crc"


def _format_of(path: Path) -> str:
    if path.suffix in (".jsonl", ".json", ".ndjson"):
        return "jsonl"
    if path.suffix == ".parquet":
        return "parquet"
    raise InputError(f"{path}: not an input file (expected *.jsonl or *.parquet)")


def inspect(root: Path, mode: str = "auto") -> AuditInput:
    """Find the files, tell their kind (histories or streams) and check every format version."""
    files, fmt = find_files(root)
    kinds: set[str] = set()
    rows = 0
    presorted = fmt == "parquet"
    for path in files:
        if fmt == "jsonl":
            kind = _inspect_jsonl(path)
        else:
            kind, count, is_sorted = _inspect_parquet(path)
            rows += count
            presorted = presorted and is_sorted
        if kind:
            kinds.add(kind)
    if mode == "auto":
        if len(kinds) > 1:
            raise InputError(f"{root}: holds both histories and duplicate-detection streams; audit them apart")
        mode = kinds.pop() if kinds else HISTORIES
    elif mode not in MODES:
        raise InputError(f"unknown mode {mode!r}; modes: auto, {', '.join(MODES)}")
    elif kinds and kinds != {mode}:
        raise InputError(f"{root}: --mode {mode} but the files hold {', '.join(sorted(kinds))}")
    return AuditInput(root, files, fmt, mode, rows, presorted and mode == STREAMS)


def _inspect_jsonl(path: Path) -> str:
    """The kind of a JSON-lines file from its first non-blank line ("" when it has none)."""
    try:
        with path.open(encoding="utf-8") as handle:
            for number, text in enumerate(handle, start=1):
                if text.strip():
                    return _kind_of_line(path, number, text)
    except UnicodeDecodeError as error:
        raise InputError(f"{path}: not UTF-8 text ({error.reason})") from None
    except OSError as error:
        raise InputError(f"{path}: cannot read it ({error.strerror or error})") from None
    return ""


def _kind_of_line(path: Path, number: int, text: str) -> str:
    try:
        record = jsonin.loads(text)
    except jsonin.JsonInputError as error:
        raise InputError(f"{path}:{number}: the first line cannot be read ({error}); cannot tell the "
                         f"format version") from None
    if not isinstance(record, dict):
        raise InputError(f"{path}:{number}: the first line is not a JSON object")
    version = record.get("v")
    if "type" in record:
        if version != SCHEMA_VERSION:
            raise InputError(f"{path}:{number}: v: unsupported trace format version {version!r}; this "
                             f"brokerspec reads version {SCHEMA_VERSION}")
        return HISTORIES
    if "address" in record and "op" in record:
        if version != STREAM_VERSION:
            raise InputError(f"{path}:{number}: v: unsupported stream format version {version!r}; this "
                             f"brokerspec reads version {STREAM_VERSION}")
        return STREAMS
    raise InputError(f"{path}:{number}: neither a trace line (no \"type\") nor a stream row (no \"address\" "
                     f"and \"op\")")


def _inspect_parquet(path: Path) -> tuple[str, int, bool]:
    import pyarrow.parquet as pq

    try:
        handle = pq.ParquetFile(path)
    except Exception as error:  # pyarrow raises several types for a file that is not Parquet
        raise InputError(f"{path}: cannot read it as Parquet ({error})") from None
    names = set(handle.schema_arrow.names)
    metadata = handle.schema_arrow.metadata or {}
    if {"address", "op", "observed"} <= names:
        kind, version, expected = STREAMS, STREAM_VERSION, set(STREAM_FIELDS)
    elif {"history", "type"} <= names:
        from .engine import HISTORY_PARQUET_COLUMNS

        kind, version, expected = HISTORIES, SCHEMA_VERSION, set(HISTORY_PARQUET_COLUMNS)
    else:
        raise InputError(f"{path}: columns {sorted(names)} are neither a history table nor a stream table")
    missing = sorted(expected - names)
    if missing:
        raise InputError(f"{path}: missing columns {', '.join(missing)}")
    _check_version_column(handle, path, version)
    is_sorted = metadata.get(SORTED_KEY) == b"address,seq"
    return kind, handle.metadata.num_rows, is_sorted


def _check_version_column(handle: object, path: Path, version: int) -> None:
    import pyarrow.parquet as pq

    assert isinstance(handle, pq.ParquetFile)
    index = handle.schema_arrow.names.index("v")
    for group in range(handle.metadata.num_row_groups):
        column = handle.metadata.row_group(group).column(index)
        stats = column.statistics
        if stats is not None and stats.has_min_max and stats.null_count == 0:
            if stats.min != version or stats.max != version:
                raise InputError(f"{path}: v: unsupported format version {stats.min!r}..{stats.max!r}; this "
                                 f"brokerspec reads version {version}")
            continue
        values = set(handle.read_row_group(group, columns=["v"]).column(0).to_pylist())
        if values - {version}:
            bad = sorted(values - {version}, key=repr)
            raise InputError(f"{path}: v: unsupported format version {bad[0]!r}; this brokerspec reads "
                             f"version {version}")
