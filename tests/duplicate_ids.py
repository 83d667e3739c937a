"""The duplicate IDs the duplicate-detection tests share: a tiny alphabet in which IDs collide.

``X``, ``X_BYTES`` (the SimpleString bytes of "x") are one ID; ``X_UTF8`` (the
UTF-8 byte of "x") is another; ``LONG`` cannot be converted (R3).
"""

from __future__ import annotations

from brokerspec.spec.duplicates import DuplicateId, IdKind

X = DuplicateId(IdKind.STRING, "x")
Y = DuplicateId(IdKind.STRING, "y")
Z = DuplicateId(IdKind.STRING, "z")
X_BYTES = DuplicateId(IdKind.BYTES, "7800")
X_UTF8 = DuplicateId(IdKind.BYTES, "78")
LONG = DuplicateId(IdKind.LONG, "5")
