"""Shared pieces of the command line: argument types that refuse bad values at once, and outside text made safe.

Introduction
------------
Every command checks its options while they are parsed, before any work
starts, with the argument types here: :func:`parse_timeout` (a positive,
finite number of seconds), :func:`at_least` (counts), :func:`output_file`,
:func:`output_folder` and :func:`input_file` (paths that can be written or
read), :func:`spark_master`. A bad value is an argparse usage error: exit
code 2 and one line naming the option and the value.

Text that comes from outside (SUT output and stderr, trace notes, file
names, command lines, history names) is printed literally: never read as
Rich markup, and with terminal control characters shown as escapes
(``\\x1b``), so nothing a SUT writes can move the cursor or recolour the
terminal. :func:`clean` does the escaping, :func:`literal` makes a Rich
:class:`~rich.text.Text` of it (for cells, titles and lines), :func:`escaped`
makes it safe inside a markup string. :func:`xml_safe` does the same for XML
1.0, which forbids most control characters outright.
"""

from __future__ import annotations

import argparse
import math
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.text import Text

MAX_TIMEOUT = 86_400.0
"""The longest per-request timeout accepted: one day (a longer wait overflows the platform's clock)."""

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
"""Control characters but newline and tab, DEL, C1 controls, and lone surrogates (undecodable file names)."""

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
"""Characters XML 1.0 does not allow in a document."""


def escape_char(char: str) -> str:
    """One character as a Python-style escape: ``\\x1b``, ``\\u2028``, ``\\U000e0001``."""
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _escape_char(match: re.Match[str]) -> str:
    return escape_char(match.group())


def clean(text: object) -> str:
    """``text`` as a string with every control character (but newline and tab) written as an escape.

    >>> clean("bad\\x00 \\x1b[31mred [/]")
    'bad\\\\x00 \\\\x1b[31mred [/]'
    """
    return _UNSAFE.sub(_escape_char, str(text))


def printable(text: str) -> str:
    """``text`` as one line of plain text: every character Python does not count as printable escaped.

    Stricter than :func:`clean`: newlines, line separators, format characters
    and lone surrogates are escaped too, so a SUT's words quoted in a verdict
    stay on one line and show what was sent without acting on it.
    """
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else escape_char(char) for char in text)


def literal(text: object, style: str = "") -> Text:
    """Outside text as a Rich ``Text``: printed as written, never read as markup, controls escaped."""
    from rich.text import Text  # imported here: the crash harness's children parse options but print no tables

    return Text(clean(text), style=style)


def escaped(text: object) -> str:
    """Outside text to put inside a Rich markup string: markup escaped, controls escaped."""
    from rich.markup import escape

    return escape(clean(text))


def xml_safe(text: str) -> str:
    """``text`` with every character XML 1.0 forbids written as an escape, so the document stays well-formed."""
    return _NOT_XML.sub(_escape_char, text)


# --- argument types ----------------------------------------------------------------------------


def parse_duration(text: str) -> float:
    """Seconds from ``30``, ``30s``, ``2m`` or ``1.5m``."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(s|m)?\s*", text)
    if match is None:
        raise argparse.ArgumentTypeError(f"not a duration: {clean(text)!r} (try 30s or 2m)")
    value = float(match.group(1))
    return value * 60 if match.group(2) == "m" else value


def parse_setting(text: str) -> tuple[str, str]:
    """``domain.option=value`` as a pair."""
    name, sep, value = text.partition("=")
    if not sep or "." not in name:
        raise argparse.ArgumentTypeError(f"expected domain.option=value, got {clean(text)!r}")
    return name.strip(), value.strip()


def parse_timeout(text: str) -> float:
    """Seconds for a timeout: a positive finite number, at most :data:`MAX_TIMEOUT`."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 < value <= MAX_TIMEOUT):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds up to {MAX_TIMEOUT:g}, "
                                         f"got {clean(text)!r}")
    return value


def at_least(minimum: int) -> Callable[[str], int]:
    """An argument type for a whole number no smaller than ``minimum``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {clean(text)!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected a whole number of at least {minimum}, got {value}")
        return value

    parse.__name__ = f"at_least_{minimum}"
    return parse


def folder_problem(path: Path) -> str | None:
    """Why files can never be written in the folder ``path`` (None when they can; missing folders are created)."""
    if path.exists():
        if not path.is_dir():
            return f"{clean(path)} is not a folder"
        if not os.access(path, os.W_OK | os.X_OK):
            return f"the folder {clean(path)} is not writable"
        return None
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                return f"{clean(parent)} is a file, so {clean(path)} cannot be created"
            if not os.access(parent, os.W_OK | os.X_OK):
                return f"{clean(path)} cannot be created: {clean(parent)} is not writable"
            return None
    return None


def output_folder(text: str) -> Path:
    """An argument type for a folder a command writes into: it exists as a folder or can be created."""
    path = Path(text)
    problem = folder_problem(path)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"cannot write into {clean(text)!r}: {problem}")
    return path


def output_file(text: str) -> Path:
    """An argument type for a file a command writes: not a folder, writable, in a folder that can be made."""
    path = Path(text)
    problem: str | None = None
    if path.is_dir():
        problem = "it is a folder"
    elif path.exists() and not os.access(path, os.W_OK):
        problem = "it is not writable"
    else:
        problem = folder_problem(path.parent)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"cannot write {clean(text)!r}: {problem}")
    return path


def input_file(text: str) -> Path:
    """An argument type for a file a command reads: it exists, is a file and is readable."""
    path = Path(text)
    problem: str | None = None
    if not path.exists():
        problem = "no such file"
    elif path.is_dir():
        problem = "it is a folder"
    elif not os.access(path, os.R_OK):
        problem = "it is not readable"
    if problem is not None:
        raise argparse.ArgumentTypeError(f"cannot read {clean(text)!r}: {problem}")
    return path


_HOST_PORT = r"(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\]):\d{1,5}"
_COUNT = r"[1-9]\d*"
_MASTER = re.compile(rf"local|local\[(?:\*|{_COUNT})(?:,{_COUNT})?\]|local-cluster\[{_COUNT},{_COUNT},{_COUNT}\]"
                     rf"|spark://{_HOST_PORT}(?:,{_HOST_PORT})*")
MASTER_FORMS = "local, local[N], local[*], local[N,F], local-cluster[N,C,M], spark://HOST:PORT[,HOST:PORT...]"
"""The Spark master URLs ``audit --master`` accepts, in words."""


def spark_master(text: str) -> str:
    """An argument type for a Spark master URL of a form in :data:`MASTER_FORMS`."""
    if _MASTER.fullmatch(text) is None or any(int(port) > 65535 for port in re.findall(r":(\d+)(?=,|$)", text)):
        raise argparse.ArgumentTypeError(f"not a Spark master URL: {clean(text)!r} (accepted: {MASTER_FORMS})")
    return text


__all__ = ["MASTER_FORMS", "MAX_TIMEOUT", "at_least", "clean", "escaped", "folder_problem", "input_file", "literal",
           "output_file", "output_folder", "parse_duration", "parse_setting", "parse_timeout", "printable",
           "spark_master", "xml_safe"]
