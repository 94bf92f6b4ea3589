"""The trajectory: one canonical JSON line per event, hashed as it is written.

It carries no wall-clock time, so the same run writes the same bytes.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import IO, Any

from harness import canonical


class TrajectoryWriter:
    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handle: IO[bytes] = open(self.path, "wb")  # noqa: SIM115 - closed in close()
        self._hash = hashlib.sha256()
        self.events = 0

    def write(self, kind: str, **fields: Any) -> None:
        data = (canonical.line({"event": kind, "seq": self.events, **fields}) + "\n").encode()
        self._handle.write(data)
        self._hash.update(data)
        self.events += 1

    def close(self) -> str:
        """Close the file and return ``sha256:<hex>`` of everything written."""
        if not self._handle.closed:
            self._handle.close()
        return "sha256:" + self._hash.hexdigest()


def file_sha256(path: str | os.PathLike[str]) -> str:
    """``sha256:<hex>`` of a file, at OpenSSL's speed (hashlib reads in large blocks)."""
    with open(path, "rb") as handle:
        return "sha256:" + hashlib.file_digest(handle, "sha256").hexdigest()


def first_event(path: str | os.PathLike[str]) -> dict[str, Any]:
    import json

    with open(path, "rb") as handle:
        line = handle.readline()
    value = json.loads(line)
    if not isinstance(value, dict):
        raise ValueError("first trajectory line is not an object")
    return value
