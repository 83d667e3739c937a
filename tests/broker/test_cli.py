"""``brokerspec broker`` on bad input: an error naming the option and the path, exit code 2, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from brokerspec.broker.cli import main


def test_a_data_folder_that_is_a_file_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    taken = tmp_path / "taken"
    taken.write_text("not a folder")
    assert main(["--data", str(taken), "--port", "0"]) == 2
    assert f"--data {taken}: cannot make the store's folder" in capsys.readouterr().err


def test_a_store_that_is_not_one_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "broker.db").write_bytes(b"garbage, not SQLite")
    assert main(["--data", str(tmp_path), "--port", "0"]) == 2
    assert "broker.db is not a store this broker reads" in capsys.readouterr().err


def test_a_trace_that_cannot_be_written_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("")
    assert main(["--trace", str(blocked / "trace.jsonl"), "--port", "0"]) == 2
    assert f"--trace {blocked / 'trace.jsonl'}: cannot write it" in capsys.readouterr().err


def test_a_port_out_of_range_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--port", "70000"]) == 2
    assert "--port must be between 0 and 65535, not 70000" in capsys.readouterr().err
