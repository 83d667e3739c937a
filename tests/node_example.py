"""The Node example SUT (``examples/node-sut``), for the tests that run it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

NODE_SUT = Path(__file__).resolve().parents[1] / "examples" / "node-sut" / "sut.js"


def node_or_skip() -> str:
    """The ``node`` executable; without one the test is skipped, or fails when BROKERSPEC_REQUIRE_NODE=1 (CI)."""
    node = shutil.which("node")
    if node is None:
        if os.environ.get("BROKERSPEC_REQUIRE_NODE") == "1":
            pytest.fail("node is not installed, and BROKERSPEC_REQUIRE_NODE=1 says the example must run")
        pytest.skip("node is not installed")
    return node
