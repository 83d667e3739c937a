"""``python -m brokerspec.crash``: the crash trials' command line, and how a trial starts its child."""

from __future__ import annotations

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
