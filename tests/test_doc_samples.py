"""The command output shown in the guides is what the commands print now.

Each sample block of docs/addressing.md and docs/conformance.md is made by running its command
(``brokerspec.docsamples``); here every sample runs again and is compared with its block, numbers masked
where a budgeted run changes them. A change to a table's columns, a title, a message or a legend fails
here until ``make docs`` rewrites the block.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from brokerspec.docsamples import SAMPLES, Sample, main, normalise, read_samples, replace_samples

DOCS = Path(__file__).resolve().parents[1] / "docs"
FIX = "run `make docs` (python -m brokerspec.docsamples --write) and commit the result"

#: The block "A passing run" showed before it was generated: the table of a release whose check had no
#: domain column and counted "profile runs". Today's check must not match it, numbers masked or not.
OLD_PASSING_RUN = """\
$ brokerspec check --budget 10s --profile seed
              brokerspec check: address resolution, spec vs reference vs impl
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━┳━━━━━━━┳━━━━━━━━━┳━━━━━━━━┳━━━━━━━┓
┃ profile                                   ┃ scenarios ┃ steps ┃ seconds ┃ result ┃ trace ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━╇━━━━━━━╇━━━━━━━━━╇━━━━━━━━╇━━━━━━━┩
│ seed                                      │       455 │ 18048 │     5.0 │ agree  │       │
│ seed+addressing.fqqn_checks_address=false │       461 │ 18094 │     5.1 │ agree  │       │
└───────────────────────────────────────────┴───────────┴───────┴─────────┴────────┴───────┘
2 profile runs, 36142 lockstep steps, 0 divergences"""


def block(sample: Sample) -> str:
    blocks = read_samples((DOCS / sample.page).read_text(encoding="utf-8"))
    if sample.name not in blocks:
        pytest.fail(f"docs/{sample.page} has no <!-- sample: {sample.name} --> block")
    return blocks[sample.name]


@pytest.mark.parametrize("sample", SAMPLES, ids=[s.name for s in SAMPLES])
def test_the_block_shows_what_the_command_prints(sample: Sample) -> None:
    produced = normalise(sample.produce(True), sample.volatile)
    shown = normalise(block(sample), sample.volatile)
    assert produced == shown, f"docs/{sample.page}, sample {sample.name}: {FIX}"


def test_the_old_passing_run_would_be_found_stale() -> None:
    passing = next(s for s in SAMPLES if s.name == "check-passing")
    assert normalise(OLD_PASSING_RUN, True) != normalise(block(passing), True)
    assert "│ addressing │ seed │ N │ N │ N │ agree │ │" in normalise(block(passing), True)


def test_volatile_blocks_mask_numbers_only() -> None:
    run_a = "│ seed │    455 │ 18048 │     5.0 │ agree  │\n2 domain and profile runs"
    run_b = "│ seed │  1 │ 2 │  0.1 │ agree  │\n2 domain and profile runs"
    assert normalise(run_a, True) == normalise(run_b, True)
    assert normalise(run_a, False) != normalise(run_b, False)
    assert normalise(run_a, True) != normalise(run_a.replace("agree", "parted"), True)


def test_blocks_are_found_and_replaced() -> None:
    text = "intro\n\n<!-- sample: a -->\n\n```\nold\n```\n\n<!-- end sample -->\n\nrest\n"
    assert read_samples(text) == {"a": "old"}
    replaced = replace_samples(text, {"a": "new\nlines"})
    assert read_samples(replaced) == {"a": "new\nlines"}
    assert replaced.startswith("intro\n") and replaced.endswith("\nrest\n")
    assert replace_samples(text, {}) == text


@pytest.mark.parametrize("broken, message", [
    ("<!-- sample: a -->\n```\nx\n```\n", "has no"),
    ("<!-- sample: a -->\nno fence\n<!-- end sample -->", "one code block"),
    ("<!-- sample: a -->\n```\nx\n```\n<!-- end sample -->\n" * 2, "twice"),
])
def test_broken_markers_are_reported(broken: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        read_samples(broken)


def test_pages_without_markers_are_refused(tmp_path: Path) -> None:
    for page in {s.page for s in SAMPLES}:
        (tmp_path / page).write_text("no samples here\n", encoding="utf-8")
    assert main([str(tmp_path)]) == 1
    assert main(["--write", str(tmp_path)]) == 1
    for page in {s.page for s in SAMPLES}:
        assert (tmp_path / page).read_text(encoding="utf-8") == "no samples here\n"
