"""``python -m brokerspec.broker``: the broker alone, without loading the rest of the command line."""

from __future__ import annotations

import sys

from .cli import main

if __name__ == "__main__":  # pragma: no cover - the tests start it through the same main()
    sys.exit(main())
