"""One local Spark session per test process (the run, or each `pytest -n` worker): one costs several seconds to start."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    from brokerspec.audit.engine import start_session

    session = start_session(partitions=3, quick_start=True, app="brokerspec tests")
    yield session
    session.stop()
