"""Trace files: one operation and its observed outcome per JSON line.

Introduction
------------
A trace is how brokerspec writes down a history: a failure the checker
found, a recorded run of a real broker, or (later) a conformance case. It is
a JSON-lines file. The first line is a header naming the schema version, the
domain and the profile (with any option overrides); every further line is
one step: the operation, its arguments and, when it was observed, the
outcome. ``docs/trace-format.md`` describes the format and
``brokerspec/schemas/trace-v1.schema.json`` is its JSON Schema.

Reading is strict. Every problem (a line that is not JSON, an unknown
operation, a missing, extra or mistyped field, an unsupported schema
version, steps out of order) raises :class:`TraceError` naming the file,
the line and the field, so a person can go straight to it.

A trace that ``brokerspec diff`` writes records two sides: its header's
``diff`` field names both (a name, a profile with its overrides, and the git
commit of the spec when a side is a revision), each step's ``outcome`` is the
*from* side's and its ``to_outcome`` the *to* side's. Both fields are
optional, so every older trace still reads; ``to_outcome`` without a
``diff`` header is an error.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from brokerspec.spec import BrokerspecError, Outcome, Profile, get_profile

from . import jsonin
from .codec import CodecError, decode_command, decode_outcome, encode_command, encode_outcome

SCHEMA_VERSION = 1
DOMAINS = ("addressing", "duplicates", "balancing", "topologies")
HEADER_FIELDS = {"v", "type", "domain", "profile", "overrides", "note", "history"}
STEP_FIELDS = {"v", "type", "step", "op", "args", "outcome", "history"}
DIFF_HEADER_FIELD = "diff"
DIFF_STEP_FIELD = "to_outcome"
STEP_FIELDS_TWO_SIDES = STEP_FIELDS | {DIFF_STEP_FIELD}
SIDE_FIELDS = {"name", "profile", "overrides", "revision"}


class TraceError(BrokerspecError):
    """A trace file that cannot be read, located by file, line (0 for the file as a whole) and field."""

    def __init__(self, file: str, line: int, field: str, message: str) -> None:
        where = (f"{file}:{line}" if line > 0 else file) + (f": {field}" if field else "")
        super().__init__(f"{where}: {message}")
        self.file = file
        self.line = line
        self.field = field
        self.message = message


@dataclass(frozen=True)
class TraceStep:
    """One operation, with the outcome observed for it (None when not observed)."""

    command: Any
    outcome: Outcome | None = None
    to_outcome: Outcome | None = None
    """In a trace of two sides (:attr:`Trace.sides`), the *to* side's outcome; ``outcome`` is the *from* side's."""


@dataclass(frozen=True)
class DiffSide:
    """One side of a ``brokerspec diff`` trace: how it was named, its profile, and its spec's git commit.

    ``revision`` is None for a side that ran the spec of the brokerspec that
    wrote the trace (a profile side).
    """

    name: str
    profile: Profile
    revision: str | None = None


@dataclass(frozen=True)
class Trace:
    """A whole trace: its domain, its profile and its steps."""

    profile: Profile
    steps: tuple[TraceStep, ...]
    domain: str = "addressing"
    note: str = ""
    source: str = field(default="<memory>", compare=False)
    sides: tuple[DiffSide, DiffSide] | None = None
    """The *from* and *to* sides of a trace ``brokerspec diff`` wrote (the first runs under ``profile``)."""


def dump_trace(trace: Trace) -> str:
    """The trace as JSON-lines text."""
    header = header_record(trace.domain, trace.profile, trace.note)
    if trace.sides is not None:
        header[DIFF_HEADER_FIELD] = {"from": _side_record(trace.sides[0]), "to": _side_record(trace.sides[1])}
    lines = [json.dumps(header, ensure_ascii=False)]
    for number, step in enumerate(trace.steps, start=1):
        record = step_record(number, step.command, step.outcome)
        if step.to_outcome is not None:
            record[DIFF_STEP_FIELD] = encode_outcome(step.to_outcome)
        lines.append(json.dumps(record, ensure_ascii=False))
    return "\n".join(lines) + "\n"


def header_record(domain: str, profile: Profile, note: str = "") -> dict[str, Any]:
    """A trace's header line as a JSON object (for writers that write a step at a time)."""
    header: dict[str, Any] = {
        "v": SCHEMA_VERSION, "type": "header", "domain": domain, "profile": profile.name,
        "overrides": dict(profile.overrides),
    }
    if note:
        header["note"] = note
    return header


def step_record(number: int, command: Any, outcome: Outcome | None) -> dict[str, Any]:
    """Step ``number`` of a trace as a JSON object."""
    record: dict[str, Any] = {
        "v": SCHEMA_VERSION, "type": "step", "step": number, "op": command.op, "args": encode_command(command),
    }
    if outcome is not None:
        record["outcome"] = encode_outcome(outcome)
    return record


def _side_record(side: DiffSide) -> dict[str, Any]:
    record: dict[str, Any] = {"name": side.name, "profile": side.profile.name,
                              "overrides": dict(side.profile.overrides)}
    if side.revision is not None:
        record["revision"] = side.revision
    return record


def write_trace(path: Path, trace: Trace) -> Path:
    """Write ``trace`` to ``path`` (creating its folder) and return the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump_trace(trace), encoding="utf-8")
    return path


def write_new_trace(path: Path, trace: Trace) -> Path:
    """Write ``trace`` to ``path``, or to ``STEM-2.jsonl``, ``STEM-3.jsonl``... if it exists; return where.

    Failure traces are evidence: the next run must never overwrite the last
    one's. The file is created exclusively (``open(..., "x")``), so two runs
    writing at once still get a file each.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    text = dump_trace(trace)
    candidate, counter = path, 1
    while True:
        try:
            with candidate.open("x", encoding="utf-8") as out:
                out.write(text)
            return candidate
        except FileExistsError:
            counter += 1
            candidate = path.with_name(f"{path.stem}-{counter}{path.suffix}")


def read_trace(path: Path) -> Trace:
    """Read and validate a trace file."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise TraceError(str(path), 0, "", f"cannot read the file: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise TraceError(str(path), 0, "", f"the file is not UTF-8 text ({error.reason})") from None
    # Split on "\n" only: JSON escapes it inside strings, but str.splitlines() would also break
    # at U+2028, U+2029 and U+0085, which json.dumps writes unescaped.
    return parse_trace(text.split("\n"), str(path))


def parse_trace(lines: Iterable[str], source: str) -> Trace:
    """Parse trace lines; ``source`` names them in errors."""
    profile: Profile | None = None
    domain = ""
    note = ""
    sides: tuple[DiffSide, DiffSide] | None = None
    steps: list[TraceStep] = []
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        record = load_line(text, source, number)
        if profile is None:
            profile, domain, note = read_header(record, source, number, two_sides=True)
            sides = read_sides(record, source, number, profile)
            continue
        steps.append(read_step(record, source, number, len(steps) + 1, domain, two_sides=sides is not None))
    if profile is None:
        raise TraceError(source, 1, "", "the trace is empty: expected a header line")
    return Trace(profile, tuple(steps), domain, note, source, sides)


def load_line(text: str, source: str, number: int) -> dict[str, Any]:
    """One line as a JSON object of a supported schema version; TraceError otherwise."""
    try:
        record = jsonin.loads(text)
    except jsonin.JsonInputError as error:
        raise TraceError(source, number, "", str(error)) from None
    if not isinstance(record, dict):
        raise TraceError(source, number, "", f"expected a JSON object, got {type(record).__name__}")
    version = record.get("v")
    if type(version) is not int or version != SCHEMA_VERSION:
        raise TraceError(source, number, "v", f"unsupported schema version {version!r}; this brokerspec reads "
                                              f"version {SCHEMA_VERSION}")
    return record


def read_header(record: dict[str, Any], source: str, number: int,
                two_sides: bool = False) -> tuple[Profile, str, str]:
    """A header record's profile (overrides applied), domain and note; TraceError names the bad field.

    ``two_sides`` allows the ``diff`` field (read by :func:`read_sides`); a
    reader of histories leaves it False, so such a header is an error there.
    """
    if record.get("type") != "header":
        raise TraceError(source, number, "type", f"the first line must be the header, got type {record.get('type')!r}")
    _reject_unknown(record, HEADER_FIELDS | ({DIFF_HEADER_FIELD} if two_sides else set()), source, number)
    domain = record.get("domain")
    if domain not in DOMAINS:
        raise TraceError(source, number, "domain", f"expected one of {', '.join(DOMAINS)}, got {domain!r}")
    name = record.get("profile")
    if not isinstance(name, str):
        raise TraceError(source, number, "profile", f"expected a profile name, got {name!r}")
    if "overrides" not in record:
        raise TraceError(source, number, "overrides", "missing field (use {} for none)")
    overrides = record["overrides"]
    if not isinstance(overrides, dict) or not all(isinstance(v, str) for v in overrides.values()):
        raise TraceError(source, number, "overrides", "expected an object of option name to value (strings)")
    note = record.get("note", "")
    if not isinstance(note, str):
        raise TraceError(source, number, "note", "expected a string")
    return _profile(name, overrides, source, number, ""), str(domain), note


def _profile(name: str, overrides: dict[str, str], source: str, number: int, where: str) -> Profile:
    try:
        profile = get_profile(name)
    except BrokerspecError as error:
        raise TraceError(source, number, f"{where}profile", str(error)) from None
    for dotted, value in overrides.items():
        try:
            profile = profile.with_option(dotted, value)
        except BrokerspecError as error:
            raise TraceError(source, number, f"{where}overrides.{dotted}", str(error)) from None
    return profile


def read_sides(record: dict[str, Any], source: str, number: int,
               profile: Profile) -> tuple[DiffSide, DiffSide] | None:
    """The two sides a header's ``diff`` field names (None without one); the *from* side runs under ``profile``."""
    if DIFF_HEADER_FIELD not in record:
        return None
    sides = record[DIFF_HEADER_FIELD]
    if not isinstance(sides, dict) or set(sides) != {"from", "to"}:
        raise TraceError(source, number, DIFF_HEADER_FIELD, 'expected an object with exactly "from" and "to"')
    read = tuple(_read_side(sides[key], source, number, f"{DIFF_HEADER_FIELD}.{key}") for key in ("from", "to"))
    first = read[0]
    if first.profile.name != profile.name or first.profile.overrides != profile.overrides:
        raise TraceError(source, number, f"{DIFF_HEADER_FIELD}.from", f"the from side runs under {first.profile.label}"
                                                                      f" but the header's profile is {profile.label}")
    return read[0], read[1]


def _read_side(data: object, source: str, number: int, where: str) -> DiffSide:
    if not isinstance(data, dict):
        raise TraceError(source, number, where, "expected an object with name, profile and overrides")
    _reject_unknown(data, SIDE_FIELDS, source, number, f"{where}.")
    for key in ("name", "profile"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise TraceError(source, number, f"{where}.{key}", f"expected a non-empty string, got {data.get(key)!r}")
    overrides = data.get("overrides")
    if not isinstance(overrides, dict) or not all(isinstance(v, str) for v in overrides.values()):
        raise TraceError(source, number, f"{where}.overrides", "expected an object of option name to value (strings)")
    revision = data.get("revision")
    if revision is not None and (not isinstance(revision, str) or len(revision) != 40
                                 or any(ch not in "0123456789abcdef" for ch in revision)):
        raise TraceError(source, number, f"{where}.revision", f"expected a 40-digit git commit, got {revision!r}")
    return DiffSide(data["name"], _profile(data["profile"], overrides, source, number, f"{where}."), revision)


def read_step(record: dict[str, Any], source: str, number: int, expected_step: int, domain: str,
              two_sides: bool = False) -> TraceStep:
    """A step record decoded in ``domain``; TraceError names the bad field or a step out of order.

    ``two_sides`` (a header with ``diff``) allows the *to* side's ``to_outcome``.
    """
    if record.get("type") != "step":
        raise TraceError(source, number, "type", f"expected a step line, got type {record.get('type')!r}")
    if DIFF_STEP_FIELD in record and not two_sides:
        raise TraceError(source, number, DIFF_STEP_FIELD, "only a trace whose header has a diff field records the "
                                                          "to side's outcome")
    _reject_unknown(record, STEP_FIELDS_TWO_SIDES if two_sides else STEP_FIELDS, source, number)
    step = record.get("step")
    if type(step) is not int or step != expected_step:
        raise TraceError(source, number, "step", f"expected step number {expected_step}, got {step!r}")
    try:
        command = decode_command(record.get("op"), record.get("args"), domain=domain)
        outcome = decode_outcome(record["outcome"], domain=domain) if "outcome" in record else None
        other = (decode_outcome(record[DIFF_STEP_FIELD], DIFF_STEP_FIELD, domain=domain)
                 if DIFF_STEP_FIELD in record else None)
    except CodecError as error:
        raise TraceError(source, number, error.path, error.message) from None
    return TraceStep(command, outcome, other)


def _reject_unknown(record: dict[str, Any], allowed: set[str], source: str, number: int, where: str = "") -> None:
    if allowed.issuperset(record):  # the usual case, without building the difference
        return
    unknown = sorted(set(record) - allowed)
    if unknown:
        raise TraceError(source, number, f"{where}{unknown[0]}",
                         f"unknown field; allowed: {', '.join(sorted(allowed))}")
