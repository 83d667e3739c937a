"""The command output shown in the guides, made by running the commands, so it cannot go stale.

Why this module exists
----------------------
The guides show what ``brokerspec check``, ``replay`` and ``fuzz`` print. Pasted
by hand, such a block keeps showing the old table after the command changes
(a new column, a new title, a new legend) and nothing notices. Here every such
block is a :class:`Sample`: a name, the page it is on, and a function that runs
the command and returns what it printed. In the page the block sits between
marker comments that are invisible when the page is rendered::

    <!-- sample: check-passing -->

    ```
    $ brokerspec check ...
    ```

    <!-- end sample -->

``python -m brokerspec.docsamples --write`` (``make docs``) runs every sample
and writes its output into the page; without ``--write`` it only reports the
blocks that differ. ``tests/test_doc_samples.py`` runs them too and fails on
any difference. A file name with a time stamp shows the stamp as ``<time>``,
and a run whose counts and seconds change from run to run (a budgeted
``check``) is *volatile*: it is compared with every number masked and runs of
table padding collapsed, so that only its shape, words and columns count.

Python examples in the guides are doctests instead (``tests/test_doctests.py``).

>>> normalise("│ seed │    455 │ 5.0 │", volatile=True)
'│ seed │ N │ N │'
>>> stamp("brokerspec-failures/addressing-seed-sut-20261122-192910.jsonl")
'brokerspec-failures/addressing-seed-sut-<time>.jsonl'
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import io
import re
import shlex
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from brokerspec.check.lockstep import Divergence
from brokerspec.check.runner import check_for, divergence_trace, run_machine
from brokerspec.planted.addressing_bugs import DeleteTakesTwin, FqqnAddressIgnored
from brokerspec.render import check_table, make_console
from brokerspec.spec import get_profile
from brokerspec.trace import write_new_trace

START = re.compile(r"<!-- sample: ([a-z0-9-]+) -->")
END = "<!-- end sample -->"
TRACE_NAME = "brokerspec-failures/addressing-seed-impl-<time>.jsonl"
"""Where the samples' traces are written: the name a checker failure gets, its time stamp shown as ``<time>``."""


@dataclass(frozen=True)
class Sample:
    """One block of command output: its page, whether its numbers vary, and how to make it.

    ``produce(quick)`` returns the block's text; ``quick`` asks for a shorter budget where the command has one
    (the tests use it; the numbers it changes are masked anyway).
    """

    name: str
    page: str
    volatile: bool
    produce: Callable[[bool], str]


def stamp(text: str) -> str:
    """``text`` with every file-name time stamp (``20261122-192910``) written as ``<time>``."""
    return re.sub(r"\d{8}-\d{6}(?:-\d+)?", "<time>", text)


def normalise(text: str, volatile: bool) -> str:
    """What a comparison looks at: stamps as ``<time>``, line ends stripped; numbers masked when volatile."""
    text = stamp(text)
    if volatile:
        text = re.sub(r"\d+(?:\.\d+)?", "N", text)
        text = re.sub(r"([━─ ])\1+", r"\1", text)
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def run_cli(argv: Sequence[str], folder: Path, shown: Sequence[str] | None = None) -> str:
    """``brokerspec ARGV`` run in ``folder``: the command line (``shown`` if given) and what it printed.

    The command line is quoted for a shell, but for the ``<time>`` placeholder, which stands for a stamp.
    """
    from brokerspec.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(folder), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(argv))
        except SystemExit:  # a usage error from the argument parser: its message is on stderr
            pass
    line = " ".join(a if a == TRACE_NAME else shlex.quote(a) for a in (shown or argv))
    return f"$ brokerspec {line}\n{out.getvalue()}{err.getvalue()}".rstrip("\n")


@functools.cache
def planted_divergence(name: str) -> Divergence:
    """The divergence the checker finds in a planted addressing bug under ``seed`` (600 scenarios, seed 1)."""
    layer = {"DeleteTakesTwin": DeleteTakesTwin, "FqqnAddressIgnored": FqqnAddressIgnored}[name]
    found = run_machine(get_profile("seed"), {"impl": layer}, 600, 1)
    if found is None:
        raise RuntimeError(f"the checker no longer finds {name} within 600 scenarios (seed 1)")
    return found


def replay_sample(bug: str) -> Callable[[bool], str]:
    """``brokerspec replay`` of the trace the checker writes for a planted bug."""
    def produce(quick: bool) -> str:
        with tempfile.TemporaryDirectory() as folder:
            write_new_trace(Path(folder) / TRACE_NAME, divergence_trace(get_profile("seed"), planted_divergence(bug)))
            return run_cli(["replay", TRACE_NAME], Path(folder))
    return produce


def check_passing(quick: bool) -> str:
    """A passing ``brokerspec check`` of address resolution under the seed."""
    argv = ["check", "--budget", "{}", "--profile", "seed", "--domain", "addressing"]
    with tempfile.TemporaryDirectory() as folder:
        return run_cli([a.format("1s" if quick else "10s") for a in argv], Path(folder),
                       [a.format("10s") for a in argv])


def check_failing_row(quick: bool) -> str:
    """The row ``brokerspec check`` prints for DeleteTakesTwin (seed 1)."""
    with tempfile.TemporaryDirectory() as folder:
        result = check_for(get_profile("seed"), {"impl": DeleteTakesTwin}, 60, Path(folder), run_seed=1)
    result = dataclasses.replace(result, trace_path=Path(TRACE_NAME) if result.trace_path else None)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        make_console().print(check_table([result]))
    return out.getvalue().rstrip("\n")


BAD_TRACES = {
    "bad-op.jsonl": ['{"v": 1, "type": "step", "step": 1, "op": "lookup", "args": {"name": "q1"}}',
                     '{"v": 1, "type": "step", "step": 2, "op": "drop_queue", "args": {"name": "q1"}}'],
    "bad-arg.jsonl": ['{"v": 1, "type": "step", "step": 1, "op": "lookup", "args": {"name": 5}}'],
    "bad-profile.jsonl": [],
}
"""Step lines of the broken traces the error sample reads, after a header line (``sead`` for bad-profile)."""


def errors(quick: bool) -> str:
    """One line on standard error for each kind of bad input."""
    with tempfile.TemporaryDirectory() as folder:
        for name, steps in BAD_TRACES.items():
            profile = "sead" if name == "bad-profile.jsonl" else "seed"
            header = f'{{"v": 1, "type": "header", "domain": "addressing", "profile": "{profile}", "overrides": {{}}}}'
            (Path(folder) / name).write_text("\n".join([header, *steps]) + "\n", encoding="utf-8")
        runs = [["replay", name] for name in (*BAD_TRACES, "missing.jsonl")]
        runs.append(["check", "--set", "addressing.nope=1"])
        return "\n".join(run_cli(argv, Path(folder)) for argv in runs)


def fuzz_failure(quick: bool) -> str:
    """The end of a ``brokerspec fuzz`` run that found a planted bug: where the script went, how to replay it."""
    argv = ["fuzz", "--sut", "inproc:planted:count-not-decremented-on-delete", "--profile", "seed",
            "--domain", "addressing", "--budget", "60s", "--seed", "7"]
    with tempfile.TemporaryDirectory() as folder:
        text = stamp(run_cli(argv, Path(folder)))
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("shrunk script")), None)
    if start is None:
        raise RuntimeError(f"fuzz found nothing in the planted bug:\n{text}")
    return "\n".join([lines[0], "...", *lines[start:]])


SAMPLES: tuple[Sample, ...] = (
    Sample("check-passing", "addressing.md", True, check_passing),
    Sample("check-failing-row", "addressing.md", True, check_failing_row),
    Sample("replay-outcomes-differ", "addressing.md", False, replay_sample("FqqnAddressIgnored")),
    Sample("replay-states-differ", "addressing.md", False, replay_sample("DeleteTakesTwin")),
    Sample("bad-input", "addressing.md", False, errors),
    Sample("fuzz-failure", "conformance.md", False, fuzz_failure),
)


def read_samples(text: str) -> dict[str, str]:
    """The sample blocks of a page, by name: the text inside each block's code fence.

    Raises ValueError for a block without an end marker, without a code fence, or named twice.
    """
    found: dict[str, str] = {}
    for start in START.finditer(text):
        name = start.group(1)
        end = text.find(END, start.end())
        if end < 0:
            raise ValueError(f"sample {name!r} has no {END!r}")
        body = text[start.end():end].strip("\n")
        if not (body.startswith("```\n") and body.endswith("\n```")):
            raise ValueError(f"sample {name!r} is not one code block")
        if name in found:
            raise ValueError(f"sample {name!r} appears twice")
        found[name] = body[4:-4]
    return found


def replace_samples(text: str, outputs: dict[str, str]) -> str:
    """``text`` with the block of every sample named in ``outputs`` replaced by its output."""
    read_samples(text)  # validates the markers

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in outputs:
            return match.group(0)
        return f"<!-- sample: {name} -->\n\n```\n{outputs[name]}\n```\n\n{END}"
    return re.sub(START.pattern + r".*?" + re.escape(END), fill, text, flags=re.DOTALL)


def main(argv: Sequence[str] | None = None) -> int:
    """Check (default) or rewrite (``--write``) the sample blocks of the pages in DOCS (default ``docs``).

    Exit code 0 when every block is current or was written, 1 when one is stale or has no markers.
    """
    parser = argparse.ArgumentParser(prog="python -m brokerspec.docsamples",
                                     description="Run the guides' sample commands and check or rewrite their output.")
    parser.add_argument("--write", action="store_true", help="rewrite the blocks (default: only check them)")
    parser.add_argument("docs", nargs="?", type=Path, default=Path("docs"), help="default: %(default)s")
    args = parser.parse_args(argv)
    status = 0
    for page in sorted({s.page for s in SAMPLES}):
        path: Path = args.docs / page
        text = path.read_text(encoding="utf-8")
        blocks = read_samples(text)
        outputs: dict[str, str] = {}
        for sample in (s for s in SAMPLES if s.page == page):
            if sample.name not in blocks:
                print(f"{path}: no markers for the sample {sample.name}", file=sys.stderr)
                status = 1
                continue
            output = "\n".join(line.rstrip() for line in sample.produce(False).splitlines())
            if normalise(output, sample.volatile) != normalise(blocks[sample.name], sample.volatile):
                outputs[sample.name] = output
        if not outputs:
            continue
        if args.write:
            path.write_text(replace_samples(text, outputs), encoding="utf-8")
            print(f"{path}: rewrote {', '.join(outputs)}")
        else:
            print(f"{path}: stale samples {', '.join(outputs)}; run `make docs`", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    raise SystemExit(main())
